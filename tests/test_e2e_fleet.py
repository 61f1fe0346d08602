"""The fleet mode for real on a mini-cluster of 4 nodes (``OMB_CLUSTER_NODES=4
tests/cluster/up``): OSU's latency between every pair of one allocation, with faults injected
by tests/cluster/fault: healthy names nothing; a slow node's network names that node and no
other; a slow link names the link and neither node; a CPU-starved node names that node; the pairs
across the cluster's two leaf switches slowed, with the groups read from Slurm's topology,
name the path between the groups and no node or link. Each
in one allocation (``salloc -N 4``). Skipped, saying how, on a cluster of fewer nodes (CI's
has two)."""

from __future__ import annotations

import os
import re
import subprocess
import time

import pytest
from rfm_helpers import REFRAME, REPO, SETTINGS, local_registry, osu_root

FAULT = str(REPO / 'tests' / 'cluster' / 'fault')
KILL = str(REPO / 'tests' / 'cluster' / 'kill-node')
REVIVE = str(REPO / 'tests' / 'cluster' / 'revive-node')
pytestmark = [pytest.mark.cluster, pytest.mark.e2e]


@pytest.fixture(scope='module')
def four(cluster):
    nodes = subprocess.run(['sinfo', '-h', '-N', '-p', 'compute', '-o', '%N'],
                           capture_output=True, text=True, env={**os.environ, **cluster})
    if len(set(nodes.stdout.split())) < 4:
        pytest.skip('the mini-cluster has fewer than 4 nodes: OMB_CLUSTER_NODES=4 '
                    'tests/cluster/up (after tests/cluster/down)')
    if not osu_root('OSU_ROOT'):
        pytest.skip('needs OSU_ROOT (OSU built with Debian Open MPI); skipped: fleet runs')
    yield cluster
    subprocess.run([FAULT, 'clear'], check=False)


def fleet(cluster: dict[str, str], work, *options: str, first: str = '') -> tuple[str, float]:
    """One fleet run in one allocation of 4 nodes; ``first``: a command run inside the
    allocation before ReFrame (the allocation is ``--no-kill``: it outlives a node)."""
    registry = local_registry(work, osu_root('OSU_ROOT'))
    start = time.time()
    inside = ['bash', '-c', f'{first} && exec "$@"', 'fleet'] if first else []
    out = subprocess.run(
        ['salloc', '-N', '4', '--exclusive', '--no-kill', '-p', 'compute', *inside, REFRAME,
         '--nocolor',
         '-C', SETTINGS, '--mode', 'fleet', '--system', 'minicluster:alloc',
         '-p', '^system-openmpi$', '-n', 'OsuFleet%benchmark=osu_latency',
         '--prefix', str(work / 'rfm'), *options, '-r'],
        cwd=work, capture_output=True, text=True, timeout=900,
        env={**os.environ, **cluster, 'OMB_ENVIRONMENTS_FILE': str(registry),
             'OMB_RESULTS_DIR': str(work / 'results')})
    wall = time.time() - start
    print(f'fleet run: {wall:.0f} s')
    return out.stdout + out.stderr, wall


def named(text: str) -> list[tuple[str, str]]:
    return re.findall(r'^\s+(node|link|group) (\S+): ', text, re.M)


@pytest.mark.parametrize(('fault', 'options', 'expected'), [
    ((), (), []),
    (('slow-node', 'node3', '1mbit'), (), [('node', 'node3')]),
    (('slow-link', 'node1', 'node2', '1mbit'), (), [('link', 'node1-node2')]),
    # 5 % of a core: its five launches took 47-240 s at OSU's 1000 iterations; 200 here, and
    # room beyond the plan's 300 s
    (('starve', 'node2', '5'), ('-S', 'iterations=200', '-S', 'warmup=20', '-S',
                                'time_limit=15m'), [('node', 'node2')]),
    # the groups are Slurm's leaf switches (tests/cluster/up: leaf1 node1,node2; leaf2 the rest)
    (('slow-uplink', '1mbit'), ('-S', 'groups_from=slurm'), [('group', 'leaf1-leaf2')]),
], ids=['healthy', 'slow-node', 'slow-link', 'starved', 'slow-uplink'])
def test_the_fleet_names_the_injected_fault_and_nothing_else(four, work, fault, options,
                                                             expected):
    subprocess.run([FAULT, 'clear'], check=True)
    if fault:
        subprocess.run([FAULT, *fault], check=True)
    try:
        text, _ = fleet(four, work, *options)
    finally:
        subprocess.run([FAULT, 'clear'], check=True)
    assert 'Ran 1/1 test case(s)' in text, text[-4000:]
    assert named(text) == expected, text[-4000:]
    if expected and expected[0][0] == 'node':
        assert f'scontrol update nodename={expected[0][1]} state=drain' in text
    if not expected:
        assert 'PASSED' in text, text[-4000:]


def test_a_node_that_dies_in_the_allocation_is_named_failed_and_the_rest_judged(four, work):
    try:
        text, _ = fleet(four, work, first=f'{KILL} node4 --wait')
    finally:
        subprocess.run([REVIVE, 'node4'], check=False)
    assert 'Ran 1/1 test case(s)' in text, text[-4000:]
    assert 'failed node4: did not launch (not judged as slow)' in text, text[-4000:]
    assert named(text) == [], text[-4000:]   # nothing slow among the three that ran
    assert 'scontrol update nodename=node4 state=drain' in text
