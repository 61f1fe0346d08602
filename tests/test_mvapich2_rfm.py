"""MVAPICH2 through ReFrame: the generated job scripts with a stand-in MVAPICH2 (its real
``mpiname -a`` replayed, tests/data/mvapich2), and, where a real MVAPICH2 and an OSU built on
it are named, the verdict and a forced algorithm end to end."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from rfm_helpers import (
    fake_osu_tree,
    job_scripts,
    launch_line,
    perflog,
    run_reframe,
    write_registry,
)
from setup_helpers import script
from testdata import DATA

from omb_suite.mpi import mpit, mvapich2
from omb_suite.rfm import mv2

COLLECTIVES = ('explore/osu_collectives.py',)


def standin_mvapich2(tmp: Path, recorded: str = 'mpiname_a_ch3_mrail.txt') -> Path:
    """A bin/ with MVAPICH2's tool names; ``mpiname -a`` replays a real one."""
    bindir = tmp / 'mvapich2' / 'bin'
    script(bindir / 'mpiname', f'case "$1" in -a) tail -n +2 {DATA}/mvapich2/{recorded};; '
           '*) echo MVAPICH2;; esac')
    for name in ('mpicc', 'mpirun', 'mpiexec'):
        script(bindir / name, 'exit 0')
    return bindir


def mv2_registry(tmp: Path, recorded: str = 'mpiname_a_ch3_mrail.txt') -> Path:
    return write_registry(tmp / 'environments.json', [
        {'name': 'test-mvapich2', 'mpi_family': 'mvapich2', 'mpi_version': '2.3.7',
         'osu_root': str(fake_osu_tree(tmp / 'osu')), 'osu_version': '7.4',
         'path': [str(standin_mvapich2(tmp, recorded))], 'source': 'prefix'}])


def _dry_run(tmp: Path, *select: str, registry: Path, checks=COLLECTIVES):
    out = run_reframe(tmp, '--system', 'local', '--mode', 'explore', '--dry-run', *select,
                      '-S', 'max_size=4096', registry=registry, checks=checks)
    assert out.returncode == 0, out.stdout + out.stderr
    return out, job_scripts(tmp)


def test_forced_algorithm_builds_and_preloads_the_reader_and_binds_by_mv2(tmp_path):
    _, scripts = _dry_run(tmp_path, '-n', 'OsuCollectiveSweep%case=osu_bcast/knomial_inter_node',
                          '-E', 'scale == 2 and mapping == "core"', registry=mv2_registry(tmp_path))
    (key, job), = scripts.items()
    stage = tmp_path / 'rfm' / 'stage' / key
    assert f'mpicc -O2 -shared -fPIC -o {mv2.READER_LIB} {mpit.READER_SOURCE}' in job
    assert (stage / mpit.READER_SOURCE).is_file()
    launch = launch_line(job, 'osu_bcast')
    # our collective check first (its MPI_Init calls the reader's, the next one), then the reader
    assert re.search(rf'\./omb_rank\.sh --preload \S+/libcollective_check\.so --preload '
                     rf'{re.escape(str(stage / mv2.READER_LIB))} /', launch), launch
    for var, value in {'MV2_INTER_BCAST_TUNING': '8', 'OMB_MPIT_MATCH': '^mv2_coll_',
                       'MV2_CPU_BINDING_POLICY': 'bunch', 'MV2_CPU_BINDING_LEVEL': 'core',
                       'MV2_SHOW_CPU_BINDING': '2'}.items():
        assert re.search(rf'^export {var}="?{re.escape(value)}"?$', job, re.M), var
    assert job.index(mv2.READER_LIB) < job.index(launch)  # built before the measured launch


def test_oversubscribed_mvapich2_leaves_binding_to_the_launcher(tmp_path):
    _, scripts = _dry_run(tmp_path, '-n', 'OsuCollectiveSweep%case=osu_bcast/default',
                          '-E', 'scale == 4', '-S', 'oversubscribe=2',
                          registry=mv2_registry(tmp_path))
    (job,) = scripts.values()
    assert re.search(r'^export MV2_ENABLE_AFFINITY="?0"?$', job, re.M)
    assert 'MV2_SHOW_CPU_BINDING' not in job and 'MV2_CPU_BINDING_POLICY' not in job
    assert '--preload' in launch_line(job, 'osu_bcast')  # default: counters recorded too


def test_sock_build_skips_forced_algorithms_with_the_reason(tmp_path):
    out, scripts = _dry_run(tmp_path, '-n', 'OsuCollectiveSweep%case=osu_scatter/', '-E',
                            'scale == 2 and mapping == "core"',
                            registry=mv2_registry(tmp_path, 'mpiname_a_ch3_sock.txt'))
    assert 'built for ch3:sock' in out.stdout and 'MV2_*_TUNING variable is ignored' in out.stdout
    (job,) = scripts.values()  # only default ran; no binding of its own on ch3:sock
    assert 'osu_scatter' in job and 'MV2_SHOW_CPU_BINDING' not in job


def test_unmet_needs_skip_with_the_tables_reason(tmp_path):
    out, scripts = _dry_run(tmp_path, '-n', 'OsuCollectiveSweep%case=osu_scatter/mcast',
                            '-E', 'scale == 2 and mapping == "core"',
                            registry=mv2_registry(tmp_path))
    assert 'needs what this build or run lacks (mcast:' in out.stdout
    assert not scripts


def test_pt2pt_binds_by_mvapich2s_variables(tmp_path):
    _, scripts = _dry_run(tmp_path, '-n', 'OsuPt2Pt%benchmark=osu_latency%placement=intra_socket',
                          registry=mv2_registry(tmp_path), checks=('osu_pt2pt.py',))
    (job,) = scripts.values()
    assert re.search(r'^export MV2_SHOW_CPU_BINDING="?2"?$', job, re.M)
    assert '--preload' not in job


# ---------------------------------------------------------------- end to end (real MVAPICH2)

MV2_ROOT = os.environ.get('MV2_ROOT')
OSU_ROOT_MVAPICH2 = os.environ.get('OSU_ROOT_MVAPICH2')
needs_mvapich2 = pytest.mark.skipif(
    not (MV2_ROOT and OSU_ROOT_MVAPICH2 and Path(MV2_ROOT, 'bin', 'mpiname').is_file()
         and Path(OSU_ROOT_MVAPICH2).is_dir()),
    reason='needs MV2_ROOT=<MVAPICH2 2.3 prefix, ch3:mrail, --enable-mpit-pvars=mv2> and '
           'OSU_ROOT_MVAPICH2=<OSU 7.x prefix built with it> (docs/collectives.md); skipped: '
           'MVAPICH2 end-to-end runs')


@pytest.mark.launches
@needs_mvapich2
def test_mvapich2_forced_bcast_proven_and_placement_from_its_table(tmp_path):
    registry = write_registry(tmp_path / 'environments.json', [
        {'name': 'mvapich2', 'mpi_family': 'mvapich2',
         'mpi_version': mvapich2.installed_build(f'{MV2_ROOT}/bin').version,
         'osu_root': OSU_ROOT_MVAPICH2, 'path': [f'{MV2_ROOT}/bin'], 'source': 'prefix'}])
    out = run_reframe(tmp_path, '--system', 'local', '--mode', 'explore', '-r', '-n',
                      'OsuCollectiveSweep%case=osu_bcast/(knomial_inter_node|pipelined)'
                      '%scale=2%mapping=core', '-S', 'max_size=4096',
                      '-S', 'iterations=20', '-S', 'warmup=2', registry=registry,
                      checks=COLLECTIVES)
    assert out.returncode == 0, out.stdout + out.stderr
    assert re.search(r'Ran 2/2 test case', out.stdout), out.stdout
    rows = {r['algorithm']: r for r in perflog(tmp_path, 'OsuCollectiveSweep')
            if r['perf_var'] == 'avg_latency_8'}
    assert rows['knomial_inter_node']['algorithm_evidence'] == \
        'mpit:bcast:knomial_inter_node:mv2_coll_bcast_knomial_internode'
    assert rows['pipelined']['algorithm_evidence'] == \
        'mpit:bcast:pipelined:mv2_coll_bcast_pipelined'
    assert all(r['result'] == 'pass' for r in rows.values())
