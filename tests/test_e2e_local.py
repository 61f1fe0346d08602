"""Real ReFrame runs on the `local` system with Debian's MPI libraries.

The placement probe always runs (it needs only MPI); the OSU checks run when OSU is
present ($OSU_ROOT, or OSU_ROOT_MPICH for the MPICH build) and are skipped with the
reason printed otherwise.
"""

from __future__ import annotations

from functools import partial

import pytest
import rfm_helpers
from rfm_helpers import MPICH, OPENMPI, REPO, osu_root_from, perflog, system_registry

#: Only the check files these tests need (loading all of them takes much longer).
run_reframe = partial(rfm_helpers.run_reframe, checks=('placement_probe.py', 'osu_pt2pt.py'))


pytestmark = pytest.mark.e2e


@pytest.mark.skipif(not (OPENMPI or MPICH), reason='no Debian MPI installed')
def test_placement_probe_runs_and_holds(tmp_path):
    out = run_reframe(tmp_path, '--system', 'local', '-n', 'PlacementProbe', '-r',
                      registry=system_registry(tmp_path))
    assert out.returncode == 0, out.stdout + out.stderr
    assert '[       OK ]' in out.stdout
    assert "needs 2 nodes but the partition has 1" in out.stdout
    rows = [r for r in perflog(tmp_path, 'PlacementProbe') if r['placement'] == 'intra_socket']
    assert {r['environ'] for r in rows} == ({'system-openmpi'} if OPENMPI else set()) | (
        {'system-mpich'} if MPICH else set())
    for row in rows:
        assert row['result'] == 'pass'
        first, second = row['placement_observed'].split(';')
        assert first.split(':')[0] == second.split(':')[0]      # same host
        assert first != second                                     # different cores


@pytest.mark.skipif(not (OPENMPI or MPICH), reason='no Debian MPI installed')
def test_wrong_binding_is_caught_with_both_placements_shown(tmp_path):
    out = run_reframe(tmp_path, '--system', 'trap', '-n', 'PlacementProbe', '-r',
                      registry=system_registry(tmp_path),
                      extra_env={'OMB_SYSTEMS_PATH': str(REPO / 'tests/data/systems')})
    assert out.returncode != 0
    assert "placement 'intra_socket' does not hold: both ranks are bound to the same " \
           "single CPU 0" in out.stdout
    assert 'rank 0: host=' in out.stdout and 'rank 1: host=' in out.stdout


@pytest.mark.skipif(not OPENMPI, reason='Debian Open MPI not installed')
def test_osu_pt2pt_intra_socket_openmpi(tmp_path):
    root = osu_root_from('OSU_ROOT')
    if not root:
        pytest.skip('OSU not present: set OSU_ROOT=<OSU 7.x prefix built with Open MPI> '
                    '(see docs/spack.md) to run the OSU point-to-point checks end to end')
    out = run_reframe(tmp_path, '--system', 'local', '-n', 'OsuPt2Pt', '-E',
                      "placement=='intra_socket' and benchmark in ('osu_latency', 'osu_bw')",
                      '-p', 'system-openmpi', '-S', 'iterations=100', '-S', 'warmup=10', '-r',
                      registry=system_registry(tmp_path, osu_openmpi=root))
    assert out.returncode == 0, out.stdout + out.stderr
    rows = perflog(tmp_path, 'OsuPt2Pt')
    by_var = {(r['benchmark'], r['perf_var']): r for r in rows}
    lat8 = by_var[('osu_latency', 'latency_8')]
    assert lat8['perf_unit'] == 'us' and 0 < float(lat8['perf_value']) < 1000
    assert lat8['perf_ref'] == '0.15'            # from reframe/references/local.yaml
    assert lat8['mpi_family'] == 'openmpi' and lat8['osu_version'].startswith(('5.', '6.', '7.'))
    assert lat8['placement_observed'].count(';') == 1
    peak = by_var[('osu_bw', 'peak_bandwidth')]
    assert peak['perf_unit'] == 'MB/s' and float(peak['perf_value']) > 0
    assert lat8['job_completion_time'][-6:] in ('+00:00',) or lat8['job_completion_time'][-6] \
        in '+-'


@pytest.mark.skipif(not MPICH, reason='Debian MPICH not installed')
def test_osu_latency_intra_socket_mpich(tmp_path):
    root = osu_root_from('OSU_ROOT_MPICH')
    if not root:
        pytest.skip('OSU for MPICH not present: set OSU_ROOT_MPICH=<OSU prefix built with '
                    'MPICH> to run it end to end')
    out = run_reframe(tmp_path, '--system', 'local', '-n', 'OsuPt2Pt', '-E',
                      "placement=='intra_socket' and benchmark=='osu_latency'",
                      '-p', 'system-mpich', '-S', 'iterations=100', '-S', 'warmup=10', '-r',
                      registry=system_registry(tmp_path, osu_mpich=root))
    assert out.returncode == 0, out.stdout + out.stderr
    rows = perflog(tmp_path, 'OsuPt2Pt')
    assert {r['mpi_family'] for r in rows} == {'mpich'}
