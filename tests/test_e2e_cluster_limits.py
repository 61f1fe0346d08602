"""A test stopped at the time limit derived from its prediction says why: on the two-node
mini-cluster, with its link slowed down (a token-bucket `tc` qdisc on both nodes' `rig0`,
1 MB/s, set up and removed here: this machine's kernel has no `netem`), the inter-node
`osu_bw` runs under `timeout` at its limit and fails with predicted against elapsed, within
2x the limit, instead of a bare timeout.

Skipped unless the cluster is up and OSU_ROOT names an OSU built with Debian's Open MPI. The
cluster is shared: run it as `flock -o /tmp/omb-minicluster.lock ...` around up, the test, down
(`-o`: the daemons `up` starts must not inherit the lock, or it is never released).
"""

from __future__ import annotations

import json
import os
import subprocess
import time
from functools import partial

import pytest
import rfm_helpers
from rfm_helpers import REPO, write_registry

pytestmark = [pytest.mark.cluster, pytest.mark.e2e]

run_reframe = partial(rfm_helpers.run_reframe, checks=('placement_probe.py', 'osu_pt2pt.py'))

ON = str(REPO / 'tests' / 'cluster' / 'on')
#: each node's outgoing rate on the link (the queue it builds is the delay)
SHAPING = ['tbf', 'rate', '8mbit', 'burst', '32kbit', 'latency', '400ms']
FLOOR_S = 15


@pytest.fixture
def slow_link(cluster):
    for node in ('node1', 'node2'):
        subprocess.run([ON, node, 'tc', 'qdisc', 'add', 'dev', 'rig0', 'root', *SHAPING],
                       check=True)
    yield SHAPING
    for node in ('node1', 'node2'):
        subprocess.run([ON, node, 'tc', 'qdisc', 'del', 'dev', 'rig0', 'root'], check=False)


def test_a_delayed_link_is_stopped_at_the_derived_limit_and_says_why(cluster, work,
                                                                     slow_link):
    osu = os.environ.get('OSU_ROOT')
    if not osu:
        pytest.skip('OSU not present: set OSU_ROOT=<OSU 7.x prefix built with Open MPI>')
    start = time.monotonic()
    out = run_reframe(work, '--system', 'minicluster:compute', '-n',
                      'OsuPt2Pt%benchmark=osu_bw%placement=inter_node', '-p',
                      'system-openmpi', '-S', 'iterations=20', '-S', 'warmup=2',
                      '-S', 'max_size=65536', '-S', f'limit_floor_s={FLOOR_S}', '-r',
                      '--report-file', str(work / 'report.json'),
                      registry=write_registry(work / 'environments.json', [
                          {'name': 'system-openmpi', 'mpi_family': 'openmpi', 'osu_root': osu,
                           'source': 'system'}]), extra_env=cluster)
    took = time.monotonic() - start
    assert out.returncode != 0, out.stdout
    text = out.stdout + out.stderr
    assert 'stopped at its time limit of' in text and 'slower than this partition' in text, text
    (case,) = json.loads((work / 'report.json').read_text())['runs'][0]['testcases']
    limit = case['limit_s']
    assert limit >= FLOOR_S
    assert case['time_run'] <= 2 * limit, (case['time_run'], limit)
    print(f'\nlimit {limit} s (predicted {case["predicted_s"]} s), stopped after '
          f'{case["time_run"]:.1f} s of run time ({took:.0f} s in all): '
          f'{case["fail_reason"]}')
