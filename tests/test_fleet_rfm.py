"""The fleet run's ReFrame side without a cluster: the job's rounds are the schedule's, the
launches' outputs are read into figures (a real OSU 7.3 output copied per launch, one edited
as a delayed node's), the plan is printed before it runs and a 1-node partition is skipped
saying why. On the mini-cluster for real: tests/test_e2e_fleet.py."""

from __future__ import annotations

import re
import subprocess
from importlib import resources

import pytest
from rfm_helpers import fake_osu_tree, job_scripts, run_reframe, write_registry
from testdata import DATA

from omb_suite.fleet import schedule
from omb_suite.rfm.fleet_job import read_figures

DRIVER = resources.files('omb_suite') / 'job_sources' / 'omb_fleet.sh'
LATENCY = DATA / 'osu' / 'cap73_ompi_osu_latency_m1-1024.txt'


@pytest.mark.parametrize('n', [2, 3, 4, 5, 7])
@pytest.mark.parametrize('k', [0, 2])
def test_the_jobs_rounds_are_the_schedules(n, k):
    nodes = [f'nid{i:03d}' for i in range(n)]
    body = re.search(r'^rounds\(\) \{.*?^\}', DRIVER.read_text(), re.M | re.S)[0]
    out = subprocess.run(['bash', '-c', f'{body}\nmax={k}\nrounds {" ".join(nodes)}'],
                         capture_output=True, text=True, check=True).stdout
    got = [sorted(tuple(sorted(p.split(':'))) for p in line.split()) for line in
           out.splitlines()]
    assert got == schedule.rounds(nodes, k or None)


def _stage(tmp_path, slow: str = '', dead: str = '', cut: tuple[str, str] = ('', '')):
    text = LATENCY.read_text()
    nodes = ['node1', 'node2', 'node3', 'node4']
    for a, b in schedule.every_pair(nodes):
        out = text
        if slow in (a, b):   # synthetic: every size 10x slower
            out = re.sub(r'^(\d+)\s+([\d.]+)$', lambda m: f'{m[1]} {float(m[2]) * 10:.2f}',
                         text, flags=re.M)
        if dead in (a, b):
            out = 'srun: error: Nodes node4 are DOWN\nexit 1\n'
        if (a, b) == cut:
            out = 'srun: error: Task launch for StepId=7.3 failed on node node2\nexit 1\n'
        (tmp_path / f'pair+{a}+{b}.out').write_text(out)
    for n in nodes:
        for rep in (1, 2):
            (tmp_path / f'intra+{n}+{rep}.out').write_text(text if n != dead else 'exit 1\n')
    return tmp_path


def test_the_launches_are_read_into_pair_and_node_figures(tmp_path):
    got = read_figures(_stage(tmp_path, slow='node3'), 'osu_latency', 8)
    pairs, intra, failed = got.pairs, got.intra, got.failed
    assert got.failed_pairs == []
    assert len(pairs) == 6 and set(intra) == {'node1', 'node2', 'node3', 'node4'}
    assert pairs[('node1', 'node3')] == pytest.approx(10 * pairs[('node1', 'node2')], rel=0.01)
    assert failed == []


def test_a_nodes_figure_within_itself_is_the_better_of_its_two_launches(tmp_path):
    stage = _stage(tmp_path)
    one = read_figures(stage, 'osu_latency', 8).intra['node1']
    slow = re.sub(r'^(\d+)\s+([\d.]+)$', lambda m: f'{m[1]} {float(m[2]) * 10:.2f}',
                  LATENCY.read_text(), flags=re.M)
    (stage / 'intra+node1+2.out').write_text(slow)   # synthetic: the second launch disturbed
    assert read_figures(stage, 'osu_latency', 8).intra['node1'] == one


def test_a_node_whose_launches_printed_no_table_is_failed(tmp_path):
    got = read_figures(_stage(tmp_path, dead='node4'), 'osu_latency', 8)
    assert got.failed == ['node4'] and len(got.pairs) == 3 and 'node4' not in got.intra
    assert got.failed_pairs == []  # node4's pairs are the node's failure, not links'


def test_a_pair_that_printed_no_table_while_both_nodes_ran_is_a_failed_link(tmp_path):
    got = read_figures(_stage(tmp_path, cut=('node1', 'node2')), 'osu_latency', 8)
    assert got.failed == [] and got.failed_pairs == [('node1', 'node2')]
    assert len(got.pairs) == 5 and len(got.intra) == 4


def _registry(tmp_path):
    """One Open MPI environment with a stand-in OSU tree (dry runs only)."""
    osu = str(fake_osu_tree(tmp_path / 'osu'))
    return write_registry(tmp_path / 'environments.json', [
        {'name': 'test-openmpi', 'mpi_family': 'openmpi', 'mpi_version': '4.1.4',
         'osu_root': osu, 'osu_version': '7.4', 'source': 'system'}])


def test_the_plan_is_said_before_the_run_and_one_node_is_refused(tmp_path):
    registry = _registry(tmp_path)
    out = run_reframe(tmp_path, '--system', 'example-epyc-xl', '--mode', 'fleet',
                      '-S', 'fleet_rounds=3', '--dry-run', registry=registry)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert ('fleet of 1024 nodes: 3 round(s) of up to 512 pair(s) at once, 1536 pair(s) in '
            'all; predicted') in out.stdout
    script = next(v for k, v in job_scripts(tmp_path).items() if 'OsuFleet' in k)
    assert "export OMB_FLEET_PAIR='srun --exact --nodelist={nodes} --mpi=pmix --nodes=2" in \
        script and 'bash omb_fleet.sh ' in script
    one = run_reframe(tmp_path, '--system', 'example-epyc-xl', '--mode', 'fleet',
                      '-S', 'fleet_nodes=1', '--dry-run', registry=registry)
    assert 'a fleet run needs 2 nodes or more to pair them' in one.stdout


def test_a_budget_buys_the_rounds_that_fit_or_says_the_least_it_needs(tmp_path):
    """1,024 nodes at 20 s a launch: one round 341 node-minutes, within each node 683."""
    registry = _registry(tmp_path)
    out = run_reframe(tmp_path, '--system', 'example-epyc-xl', '--mode', 'fleet',
                      '-n', 'osu_latency', '-S', 'budget=2000', '--dry-run', registry=registry)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert 'budget 2000 node-minutes buys 3 of 1023 round(s)' in out.stdout
    assert 'fleet of 1024 nodes: 3 round(s) of up to 512 pair(s) at once' in out.stdout
    script = next(v for k, v in job_scripts(tmp_path).items() if 'OsuFleet' in k)
    assert 'export OMB_FLEET_ROUNDS=3' in script
    small = run_reframe(tmp_path, '--system', 'example-epyc-xl', '--mode', 'fleet',
                        '-n', 'osu_latency', '-S', 'budget=10node-h', '--dry-run',
                        registry=registry)
    assert 'budget 600 node-minutes: one round of the fleet of 1024 nodes needs 1024' in \
        small.stdout


def test_the_fleet_tests_of_a_session_share_its_budget(tmp_path):
    """Both benchmarks' fleets hold every node: a budget of 4000 is 2000 for each (3 rounds
    each, as one fleet at 2000), not 4000 each."""
    registry = _registry(tmp_path)
    out = run_reframe(tmp_path, '--system', 'example-epyc-xl', '--mode', 'fleet',
                      '-S', 'budget=4000', '--dry-run', registry=registry)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
    assert out.stdout.count("budget 2000 node-minutes, its share of 4000 among the session's "
                            "2 fleet tests") == 2
    assert out.stdout.count('budget 2000 node-minutes buys 3 of 1023 round(s)') == 2
