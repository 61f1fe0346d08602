"""Real ReFrame runs on the `local` system with Debian's MPI libraries.

The placement probe runs where no OSU is installed (it needs only MPI); the OSU checks run
when OSU is present ($OSU_ROOT for the Open MPI build, $OSU_ROOT_MPICH for the MPICH one)
and are skipped with the reason printed otherwise.
"""

from __future__ import annotations

import json
import re
import subprocess
from functools import partial

import polars as pl
import pytest
import rfm_helpers
from rfm_helpers import (
    MPICH,
    OPENMPI,
    REPO,
    local_registry,
    needs_osu,
    osu_root,
    perflog,
)

from omb_review.read.curves import load_curves
from omb_review.read.ingest import load

run_reframe = partial(rfm_helpers.run_reframe, checks=('placement_probe.py', 'osu_pt2pt.py'))
TRAP = {'OMB_SYSTEMS_PATH': str(REPO / 'tests/data/systems')}
SHORT = ('-S', 'iterations=100', '-S', 'warmup=10')

pytestmark = pytest.mark.e2e


@pytest.mark.skipif(not (OPENMPI or MPICH), reason='no Debian MPI installed')
def test_placement_probe_runs_and_holds_without_osu(tmp_path):
    out = run_reframe(tmp_path, '--system', 'local', '-n', 'PlacementProbe', '-r',
                      registry=local_registry(tmp_path))
    assert out.returncode == 0, out.stdout + out.stderr
    assert '[       OK ]' in out.stdout
    rows = [r for r in perflog(tmp_path, 'PlacementProbe') if r['placement'] == 'intra_socket']
    assert {r['environ'] for r in rows} == ({'system-openmpi'} if OPENMPI else set()) | (
        {'system-mpich'} if MPICH else set())
    for row in rows:
        assert row['result'] == 'pass'
        first, second = row['placement_observed'].split(';')
        assert first.split(':')[0] == second.split(':')[0]      # same host
        assert first != second                                     # different cores


@pytest.mark.skipif(not (OPENMPI or MPICH), reason='no Debian MPI installed')
def test_a_rank_that_crashes_fails_the_probe_naming_the_crash(tmp_path):
    """Ranks that die of SIGSEGV after MPI_Init (stand-in: tests/data/defects/crash_gather.c,
    preloaded through each environment) fail the probe with the crash from the job's stderr,
    in each MPI's own words (Open MPI's signal handler; MPICH: UCX's, then hydra's)."""
    lib = tmp_path / 'libcrash_gather.so'
    subprocess.run(['cc', '-shared', '-fPIC', '-o', str(lib),
                    str(REPO / 'tests/data/defects/crash_gather.c')], check=True)
    registry = local_registry(tmp_path)
    entries = json.loads(registry.read_text())
    for entry in entries['environments']:
        entry['env_vars'] = {'LD_PRELOAD': str(lib)}
    registry.write_text(json.dumps(entries))
    out = run_reframe(tmp_path, '--system', 'local', '-n', 'PlacementProbe%placement=intra',
                      '-r', registry=registry)
    assert out.returncode != 0
    reasons = [line for line in out.stdout.splitlines() if '* Reason: sanity error' in line]
    assert len(reasons) == len(entries['environments']), out.stdout
    for reason in reasons:
        assert 'no PROBE lines: the ranks did not start, or died before rank 0 printed' in reason
        # the rank's own report, else its launcher's (a dying rank's last lines can be lost)
        assert re.search(r'\[job: rank (crashed|died): .*(Segmentation fault|signal 11)',
                         reason), reason


@pytest.mark.skipif(not (OPENMPI or MPICH), reason='no Debian MPI installed')
def test_wrong_binding_is_caught_by_the_probe_with_both_placements_shown(tmp_path):
    out = run_reframe(tmp_path, '--system', 'trap', '-n', 'PlacementProbe', '-r',
                      registry=local_registry(tmp_path), extra_env=TRAP)
    assert out.returncode != 0
    assert "placement 'intra_socket' does not hold: both ranks are bound to the same " \
           "single CPU 0" in out.stdout
    assert 'rank 0: host=' in out.stdout and 'rank 1: host=' in out.stdout
    # the old setting name still works, and says what it is called now
    assert "trap:default: extras['placement_options'] is deprecated: rename it to " \
           "'launcher_overrides'" in out.stdout + out.stderr


@needs_osu()
def test_wrong_binding_fails_the_osu_run_itself(tmp_path):
    """One launch: the rank wrapper sees the binding OSU runs with, and the check fails."""
    out = run_reframe(tmp_path, '--system', 'trap', '-n',
                      'OsuPt2Pt%benchmark=osu_latency%placement=intra_socket', '-p',
                      'system-openmpi', *SHORT, '-S', 'max_size=8', '-r', extra_env=TRAP,
                      registry=local_registry(tmp_path, osu_openmpi=osu_root('OSU_ROOT')))
    assert out.returncode != 0
    assert "placement 'intra_socket' does not hold: both ranks are bound to the same " \
           "single CPU 0 (observed: rank 0: host=" in out.stdout
    (row, *_) = perflog(tmp_path, 'OsuPt2Pt', system='trap/default')
    assert row['result'] == 'fail'


@needs_osu()
def test_osu_pt2pt_intra_socket_openmpi(tmp_path):
    out = run_reframe(tmp_path, '--system', 'local', '-n', 'OsuPt2Pt', '-E',
                      "placement=='intra_socket' and benchmark in ('osu_latency', 'osu_bw')",
                      '-p', 'system-openmpi', *SHORT, '-r',
                      registry=local_registry(tmp_path, osu_openmpi=osu_root('OSU_ROOT')))
    assert out.returncode == 0, out.stdout + out.stderr
    by_var = {(r['benchmark'], r['perf_var']): r for r in perflog(tmp_path, 'OsuPt2Pt')}
    lat8 = by_var[('osu_latency', 'latency_8')]
    assert lat8['perf_unit'] == 'us' and 0 < float(lat8['perf_value']) < 1000
    assert lat8['perf_ref'] == '0.15'            # from reframe/references/local.yaml
    assert lat8['mpi_family'] == 'openmpi' and lat8['osu_version'].startswith(('5.', '6.', '7.'))
    first, second = lat8['placement_observed'].split(';')      # from the wrapper: 2 cores
    assert first.split(':')[0] == second.split(':')[0] and first != second
    peak = by_var[('osu_bw', 'peak_bandwidth')]
    assert peak['perf_unit'] == 'MB/s' and float(peak['perf_value']) > 0
    assert lat8['job_completion_time'][-6] in '+-'
    # the whole curve beside the perflog: every size OSU measured, joined to its records
    results = tmp_path / 'results'
    points, problems = load_curves(results, load(results, use_cache=False).frame)
    assert problems == [] and (results / 'local/default/OsuPt2Pt.curves.jsonl').is_file()
    lat = points.filter(pl.col('benchmark') == 'osu_latency')
    assert lat['size'].to_list() == [2**i for i in range(23)]         # the perflog has 6
    assert lat.filter(pl.col('size') == 8)['value'].item() == float(lat8['perf_value'])
    assert lat['jobid'].unique().to_list() == [lat8['jobid']]


@needs_osu('OSU_ROOT_MPICH', 'mpich')
def test_osu_latency_intra_socket_mpich(tmp_path):
    out = run_reframe(tmp_path, '--system', 'local', '-n', 'OsuPt2Pt', '-E',
                      "placement=='intra_socket' and benchmark=='osu_latency'",
                      '-p', 'system-mpich', *SHORT, '-r',
                      registry=local_registry(tmp_path, osu_mpich=osu_root('OSU_ROOT_MPICH')))
    assert out.returncode == 0, out.stdout + out.stderr
    rows = perflog(tmp_path, 'OsuPt2Pt')
    assert {r['mpi_family'] for r in rows} == {'mpich'}
    assert all(r['placement_observed'].count(';') == 1 for r in rows)


@needs_osu()
def test_a_reference_missed_on_a_busy_node_says_the_node_was_busy(tmp_path):
    """Two busy loops beside a 2-rank osu_latency, and a reference no MPI meets on any machine
    (latency_8 at most 15 ns; a CI runner with more cores than this one met 0.3 us even with the
    loops): the failure names the busy node, the perflog keeps the values with node_state
    'busy ...', and omb-review leaves the run out."""
    refs = tmp_path / 'refs'
    refs.mkdir()
    text = (REPO / 'reframe/references/local.yaml').read_text()
    (refs / 'local.yaml').write_text(text.replace('latency_8: [0.15, -1.0, 20.0, us]',
                                                  'latency_8: [0.01, -1.0, 0.5, us]'))
    loops = [subprocess.Popen(['sh', '-c', 'while :; do :; done']) for _ in range(2)]
    try:
        out = run_reframe(tmp_path, '--system', 'local', '-n', 'OsuPt2Pt', '-E',
                          "placement=='intra_socket' and benchmark=='osu_latency'",
                          '-p', 'system-openmpi', *SHORT, '-r',
                          registry=local_registry(tmp_path, osu_openmpi=osu_root('OSU_ROOT')),
                          extra_env={'RFM_REFERENCE_PREFIX': str(refs)})
    finally:
        for loop in loops:
            loop.kill()
    rows = perflog(tmp_path, 'OsuPt2Pt')
    assert all(r['node_state'].startswith('busy other=') for r in rows), rows[0]
    assert float(rows[0]['perf_value']) > 0 and rows[0]['session_id'] != 'null'
    assert out.returncode != 0  # no 8-byte latency is 15 ns
    assert 'performance error: the node was busy: other work took' in (
        out.stdout), out.stdout
    assert 'this run does not measure the MPI, run it again on a quiet node' in out.stdout
    from omb_review.judge.runs import runs
    (run, *_) = runs(load(tmp_path / 'results', use_cache=False).frame)
    assert run.busy.all()
