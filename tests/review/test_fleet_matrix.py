"""The fleet matrix's colours and its limit (omb_review.report.fleet_matrix)."""

from __future__ import annotations

from omb_review.judge.fleet import Run
from omb_review.report import fleet_matrix
from omb_suite.fleet import culprit


def _run(n: int, slow: str = '') -> Run:
    nodes = [f'n{i:04d}' for i in range(n)]
    pairs = {(a, b): (50.0 if slow in (a, b) else 10.0) for i, a in enumerate(nodes)
             for b in nodes[i + 1:]}
    verdict = culprit.judge('osu_latency', pairs, unit='us', tolerance=2)
    return Run('s:p', 'env', '1', 'osu_latency', 'us', 2.0, pairs, {}, verdict)


def test_white_at_the_baseline_full_red_at_the_tolerance():
    assert fleet_matrix.shade(None, 2) == '#ffffff'
    assert fleet_matrix.shade(0.5, 2) == '#ffffff'
    assert fleet_matrix.shade(1.0, 2) == '#ffffff'
    assert fleet_matrix.shade(2.0, 2) == fleet_matrix.shade(30.0, 2) == '#ff5a5a'
    middle = fleet_matrix.shade(2 ** 0.5, 2)
    assert '#ff5a5a' < middle < '#ffffff'


def test_bandwidth_lower_is_worse():
    run = _run(3)
    run.unit = 'MB/s'
    assert fleet_matrix.ratio(run, 5.0, 10.0) == 2.0
    run.unit = 'us'
    assert fleet_matrix.ratio(run, 20.0, 10.0) == 2.0


def test_a_fleet_too_large_for_a_matrix_is_said_not_drawn():
    assert "<table" in fleet_matrix.matrix(_run(6, 'n0003'))
    big = fleet_matrix.matrix(_run(fleet_matrix.MAX_NODES + 1))
    assert '<table' not in big and f'{fleet_matrix.MAX_NODES + 1} nodes' in big


def test_the_headline_names_what_the_run_named():
    assert fleet_matrix.headline(_run(6)) == ''
    assert fleet_matrix.headline(_run(6, 'n0003')).startswith('Fleet: node n0003 (osu_latency')
