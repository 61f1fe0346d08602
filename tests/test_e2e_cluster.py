"""ReFrame on the two-node Slurm mini-cluster (tests/cluster/up): the placement probe
across both nodes through Slurm always; the OSU point-to-point checks when OSU is present.

Skipped with the reason printed unless the cluster is up (`.ci/run` brings it up and sets
OMB_CLUSTER_UP=1; then a cluster that does not answer is a failure, not a skip).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
from functools import partial
from pathlib import Path

import pytest
import rfm_helpers
from rfm_helpers import CHECKS, REFRAME, REPO, SETTINGS, perflog, write_registry

#: Only the check files these tests need (loading all of them takes much longer).
run_reframe = partial(rfm_helpers.run_reframe, checks=('placement_probe.py', 'osu_pt2pt.py'))


pytestmark = [pytest.mark.cluster, pytest.mark.e2e]

def _registry(work: Path, osu: str | None) -> Path:
    return write_registry(work / 'environments.json', [
        {'name': 'system-openmpi', 'mpi_family': 'openmpi', 'osu_root': osu,
         'source': 'system'}])


def _perflog(work: Path, partition: str, test: str) -> list[dict[str, str]]:
    return perflog(work, test, system=f'minicluster/{partition}')


@pytest.mark.skipif(not shutil.which('ompi_info'), reason='Debian Open MPI not installed')
def test_probe_puts_inter_node_ranks_on_two_nodes(cluster, work):
    # Re-run a failed case once, as sites run the suite (quickstart.sh, cluster-ci.sh): CI
    # saw rank 0 of an srun --mpi=pmix launch (Debian's Open MPI 4.1.4, Slurm 22.05's pmix
    # plugin) die of SIGSEGV at a null address before it printed, once (2026-11-26); 1000
    # launches and 80 runs of this test in a loop did not repeat it (docs/minicluster.md).
    out = run_reframe(work, '--system', 'minicluster', '-n', 'PlacementProbe',
                      '-p', 'system-openmpi', '--max-retries', '1', '-r',
                      registry=_registry(work, None), extra_env=cluster)
    assert out.returncode == 0, out.stdout + out.stderr
    for partition in ('compute', 'compute-mpirun'):
        rows = {r['placement']: r for r in _perflog(work, partition, 'PlacementProbe')}
        inter = rows['inter_node']['placement_observed'].split(';')
        assert [p.split(':')[0] for p in inter] == ['node1', 'node2'], inter
        assert rows['inter_node']['jobid'].isdigit()          # a real Slurm job
        intra = rows['intra_socket']['placement_observed'].split(';')
        assert len({p.split(':')[0] for p in intra}) == 1, intra


@pytest.mark.skipif(not shutil.which('ompi_info'), reason='Debian Open MPI not installed')
def test_osu_latency_inter_node_is_tcp_intra_node_is_shared_memory(cluster, work):
    osu = os.environ.get('OSU_ROOT')
    if not osu:
        pytest.skip('OSU not present: set OSU_ROOT=<OSU 7.x prefix built with Open MPI> to '
                    'measure intra- vs inter-node latency through Slurm')
    out = run_reframe(work, '--system', 'minicluster:compute', '-n', 'OsuPt2Pt', '-E',
                      "benchmark=='osu_latency' and placement!='inter_socket'",
                      '-p', 'system-openmpi', '-S', 'iterations=2000', '-S', 'warmup=200',
                      '-S', 'max_size=1024', '--max-retries', '1', '-r',  # as above
                      registry=_registry(work, osu),
                      extra_env=cluster)
    assert out.returncode == 0, out.stdout + out.stderr
    lat = {r['placement']: float(r['perf_value'])
           for r in _perflog(work, 'compute', 'OsuPt2Pt') if r['perf_var'] == 'min_latency'}
    # shared memory is well under a microsecond, TCP over the veth several microseconds
    assert lat['intra_socket'] < 2.0, lat
    assert lat['inter_node'] > 3 * lat['intra_socket'], lat


@pytest.mark.skipif(not shutil.which('ompi_info'), reason='Debian Open MPI not installed')
def test_cluster_ci_script_runs_suite_and_gate_on_minicluster(cluster, work, slurm_job_ids):
    """The command of .gitlab-ci.yml's suite-and-gate job, on the mini-cluster, in one
    allocation (OMB_ALLOC) as .gitlab-ci.yml runs it."""
    env = dict(os.environ, **cluster, OMB_RESULTS_DIR=str(work / 'results'),
               OMB_ENVIRONMENTS_FILE=str(_registry(work, None)),
               OMB_SETUP_ARGS='--no-build', OMB_JUNIT_DIR=str(work / 'junit'),
               OMB_ALLOC='salloc -N 2 --exclusive -p compute')
    env.pop('OSU_ROOT', None)
    before = slurm_job_ids()
    cmd = [str(REPO / 'scripts/cluster-ci.sh'), 'minicluster:alloc', 'upgrade=post',
           '-n', 'PlacementProbe', '-p', 'system-openmpi', '--prefix', str(work / 'rfm')]
    out = subprocess.run(cmd, cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "session tag 'upgrade=post', in one allocation" in out.stdout
    assert 'gate exit 0' in out.stdout
    assert len(slurm_job_ids() - before) == 1
    rows = _perflog(work, 'alloc', 'PlacementProbe')
    assert {r['session_tag'] for r in rows} == {'upgrade=post'}
    assert list((work / 'junit').glob('*.xml')) and list((work / 'results').glob('gate-*.json'))


@pytest.mark.skipif(not shutil.which('ompi_info'), reason='Debian Open MPI not installed')
def test_whole_run_in_one_allocation_is_one_slurm_job(cluster, work, slurm_job_ids):
    """ReFrame started inside `salloc -N 2 --exclusive` on the alloc partition: every test is
    a step of that one job (1 Slurm job instead of one per test), steps one at a time. With
    OSU (OSU_ROOT, OSU_ROOT_MPICH: CI's Spack builds) the point-to-point checks of the verdict
    set with both MPIs across both nodes (6 cases: the partition has one core a node); without,
    the placement probe. (CI runs
    the whole verdict set in one allocation of the mini-cluster too: tests/modules-ci.sh, and
    inside one Flux instance across its nodes: tests/flux-ci.sh.)"""
    osu, osu_mpich = rfm_helpers.osu_root('OSU_ROOT'), rfm_helpers.osu_root('OSU_ROOT_MPICH')
    registry = rfm_helpers.local_registry(work, osu, osu_mpich)
    select = ['-n', 'OsuPt2Pt' if osu else 'PlacementProbe']
    before = slurm_job_ids()
    start = time.time()
    out = subprocess.run(
        ['salloc', '-N', '2', '--exclusive', '-p', 'compute', REFRAME, '--nocolor', '-C',
         SETTINGS, '-c', f'{CHECKS}/placement_probe.py', '-c', f'{CHECKS}/osu_pt2pt.py',
         '--prefix', str(work / 'rfm'), '--system', 'minicluster:alloc',
         # as quickstart.sh and cluster-ci.sh run it: Debian's MPICH 4.0.2 (ch4:ucx) can hang
         # in MPI_Finalize after printing its result (data/known_hangs.yaml); seen once in 5
         # verdict runs with osu_barrier, stopped at its 60 s limit: re-measured once
         '--exec-policy', 'serial', '--max-retries', '1', *select, '-r'],
        cwd=work, capture_output=True, text=True, timeout=1500,
        env=dict(os.environ, **cluster, OMB_ENVIRONMENTS_FILE=str(registry),
                 OMB_RESULTS_DIR=str(work / 'results')))
    wall = time.time() - start
    assert out.returncode == 0, out.stdout[-6000:] + out.stderr
    jobs = slurm_job_ids() - before
    ran = int(re.search(r'Ran (\d+)/', out.stdout).group(1))
    print(f'one allocation: {ran} test cases, {len(jobs)} Slurm job(s), {wall:.0f} s')
    # without OSU the probe's placements on the partition (2) are the tests that share the job
    assert len(jobs) == 1 and ran >= (6 if osu else 2), (jobs, ran)
    rows = _perflog(work, 'alloc', 'OsuPt2Pt' if osu else 'PlacementProbe')
    cases = {(r['name'], r['environ']) for r in rows}
    assert len({r['jobid'] for r in rows}) >= len(cases)   # a step (local pid) per attempt
    inter = next(r for r in rows if r['placement'] == 'inter_node')
    assert [p.split(':')[0] for p in inter['placement_observed'].split(';')] == ['node1',
                                                                              'node2']
    if osu_mpich:   # (MPICH 4.0.2's osu_init hang on 2 nodes: tests/mpi/test_known_hangs.py)
        assert {r['environ'] for r in rows} == {'system-openmpi', 'system-mpich'}


def test_node_failure_fails_the_check_naming_the_node_and_retry_passes(cluster, work):
    """Kill node2 under a running two-node job: that check fails within its time limit
    naming node2, the one-node check still passes, and ReFrame's retry passes once
    node2 is back."""
    registry = _registry(work, None)
    env = dict(os.environ, **cluster)
    proc = subprocess.Popen(
        [REFRAME, '--nocolor', '-C', SETTINGS, '-c',
         str(REPO / 'tests/data/checks/fault_pair.py'), '--prefix', str(work / 'rfm'),
         '--system', 'minicluster:compute', '--max-retries', '2', '-r'],
        cwd=work, env=dict(env, OMB_ENVIRONMENTS_FILE=str(registry),
                           OMB_RESULTS_DIR=str(work / 'results')),
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        _wait_for_running_job(env, nodes=2)
        # the job is RUNNING once allocated, before srun has its task on node2: killed then
        # (slurmd alone), srun retried the launch after node2 came back and the job passed
        _wait_for_job_processes(env, 'node2')
        subprocess.run([str(REPO / 'tests/cluster/kill-node'), 'node2', '--wait'],
                       check=True, timeout=120)
        _wait_for_no_running_job(env)          # the first attempt has failed
        subprocess.run([str(REPO / 'tests/cluster/revive-node'), 'node2'], check=True,
                       timeout=120)
        out, _ = proc.communicate(timeout=400)
    finally:
        if proc.poll() is None:
            proc.kill()
        subprocess.run([str(REPO / 'tests/cluster/revive-node'), 'node2'], timeout=120)
    assert proc.returncode == 0, out                     # the retry passed
    first_try = out.split('Retrying')[0] if 'Retrying' in out else out
    assert 'FAIL' in first_try and 'slow_inter_node' in first_try, out
    # the failure names the node (in the first attempt's sanity message, in the report)
    reasons = _fail_reasons(work / 'results' / 'reports')
    assert any('Node failure on node2' in r for r in reasons), reasons
    assert 'quick_one_node' in out and out.count('[       OK ]') >= 2, out


def _fail_reasons(reports: Path) -> list[str]:
    return [tc.get('fail_reason') or '' for f in reports.glob('*.json')
            for run in json.loads(f.read_text())['runs'] for tc in run['testcases']]


def _squeue(env) -> list[str]:
    res = subprocess.run(['squeue', '-h', '-o', '%T %D'], env=env, capture_output=True,
                         text=True, timeout=30)
    return res.stdout.splitlines()


def _wait_for_running_job(env, nodes: int, timeout: float = 120) -> None:
    end = time.time() + timeout
    while time.time() < end:
        if f'RUNNING {nodes}' in _squeue(env):
            return
        time.sleep(1)
    raise AssertionError(f'no {nodes}-node job started within {timeout}s')


def _wait_for_job_processes(env, node: str, timeout: float = 60) -> None:
    """Wait until ``node`` runs more than its slurmd (the job's step and task)."""
    count = (f'source {REPO}/tests/cluster/common.sh; node_pids {node} | wc -w')
    end = time.time() + timeout
    while time.time() < end:
        res = subprocess.run(['bash', '-c', count], env=env, capture_output=True, text=True,
                             timeout=30)
        if res.stdout.strip().isdigit() and int(res.stdout) > 1:
            return
        time.sleep(1)
    raise AssertionError(f'no job process on {node} within {timeout}s: {res.stderr[-500:]}')


def _wait_for_no_running_job(env, timeout: float = 150) -> None:
    end = time.time() + timeout
    while time.time() < end:
        if not any(line.startswith(('RUNNING', 'COMPLETING')) for line in _squeue(env)):
            return
        time.sleep(1)
    raise AssertionError(f'the job on the dead node did not end within {timeout}s')
