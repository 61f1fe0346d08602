"""The rounds of a fleet run: every pair once, disjoint pairs per round, K rounds for a
large allocation, what it costs; an allocation of 1 node refused."""

from __future__ import annotations

from collections import Counter

import pytest

from omb_suite.fleet import schedule


@pytest.mark.parametrize('n', [2, 3, 4, 5, 8, 17])
def test_every_pair_is_met_once_in_disjoint_rounds(n):
    nodes = [f'node{i + 1}' for i in range(n)]
    done = schedule.rounds(nodes)
    assert len(done) == (n - 1 if n % 2 == 0 else n)
    met = Counter(p for r in done for p in r)
    assert set(met) == schedule.every_pair(nodes) and set(met.values()) == {1}
    for r in done:
        used = [n for p in r for n in p]
        assert len(used) == len(set(used))          # each node in one pair at most
        assert len(r) == n // 2


def test_k_rounds_give_each_node_k_different_partners():
    nodes = [f'nid{i:04d}' for i in range(1000)]
    done = schedule.rounds(nodes, max_rounds=3)
    assert len(done) == 3 and all(len(r) == 500 for r in done)
    partners = Counter(n for r in done for p in r for n in p)
    assert set(partners.values()) == {3}
    assert len({p for r in done for p in r}) == 1500


def test_a_plan_says_its_rounds_wall_time_and_node_minutes():
    plan = schedule.plan(4, seconds_per_pair=30, intra_seconds=20)
    assert (plan.rounds, plan.pairs) == (3, 6)
    assert plan.wall_seconds == 110 and plan.node_minutes == pytest.approx(4 * 110 / 60)
    big = schedule.plan(1000, seconds_per_pair=30, max_rounds=3)
    assert 'fleet of 1000 nodes: 3 round(s) of up to 500 pair(s) at once, 1500 pair(s)' in \
        big.summary()
    assert big.node_minutes == pytest.approx(1000 * 90 / 60)


@pytest.mark.parametrize(('nodes', 'says'), [
    (['node1'], r'needs 2 nodes or more .* has 1 \(node1\)'),
    ([], r'has 0 \(none\)'),
    (['a', 'b', 'a'], r'nodes named twice'),
])
def test_an_allocation_that_cannot_be_paired_is_refused_saying_why(nodes, says):
    with pytest.raises(schedule.FleetError, match=says):
        schedule.rounds(nodes)


def test_pairs_across_switch_groups():
    groups = {'n1': 'leaf1', 'n2': 'leaf1', 'n3': 'leaf2'}
    assert not schedule.across(('n1', 'n2'), groups)
    assert schedule.across(('n1', 'n3'), groups) and schedule.across(('n1', 'n9'), groups)


def test_nodes_sharing_one_machine_launch_one_at_a_time():
    """The mini-cluster: 8 intra-node launches (each node twice) and 6 pairs, one after
    another."""
    plan = schedule.plan(4, seconds_per_pair=10, intra_seconds=10, at_once=1)
    assert plan.wall_seconds == 140
    assert 'round(s) of up to 1 pair(s) at once' in plan.summary()


def test_a_budget_buys_the_most_rounds_that_fit():
    """1,024 nodes, 20 s a launch, 40 s within each node: a round costs 1024 x 20 / 60 =
    341 node-minutes, the intra-node runs 683."""
    every = schedule.plan(1024, 20, 40)
    assert every.rounds == 1023
    fitted = schedule.within(1024, 2000, 20, 40)
    assert fitted.rounds == 3 and fitted.node_minutes <= 2000
    assert schedule.plan(1024, 20, 40, 4).node_minutes > 2000
    assert schedule.within(1024, 1000, 20, 40) is None       # not even one round
    assert schedule.within(4, 10_000, 20, 40).rounds == 3     # all of them fit
    assert schedule.within(1024, 10_000, 20, 40, max_rounds=2).rounds == 2
    assert schedule.within(4, 7, 10, 10, at_once=1).rounds == 1   # 8 + 2 launches: 100 s x 4
