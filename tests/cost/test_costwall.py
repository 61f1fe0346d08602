"""Wall-time corrections from run reports: measured / modelled per benchmark and scale, only
from passing runs of the same partition and environment that carry the model's prediction;
dry runs and unreadable reports left out (the latter reported)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from omb_suite.cost import model as costmodel
from omb_suite.cost import wall as costwall


def _case(benchmark: str, ranks: int, took: float | None, model: float, **over) -> dict:
    return {'result': 'pass', 'system': 'local', 'partition': 'default',
            'environ': 'spack-openmpi', 'benchmark': benchmark, 'num_tasks': ranks,
            'time_run': took, 'model_s': model, **over}


def _report(path: Path, cases: list[dict], cmdline: str = 'reframe -r') -> Path:
    path.write_text(json.dumps({'session_info': {'cmdline': cmdline},
                                'runs': [{'testcases': cases}]}))
    return path


def test_the_factor_is_the_median_ratio_of_matching_passing_runs(tmp_path):
    _report(tmp_path / 'a.json', [
        _case('osu_alltoall', 32, 11.0, 2.0), _case('osu_alltoall', 32, 10.0, 2.0),
        _case('osu_alltoall', 32, 9.0, 2.0),
        _case('osu_alltoall', 32, 99.0, 2.0, result='fail'),        # not a measurement
        _case('osu_alltoall', 32, 99.0, 2.0, environ='spack-mpich'),
        _case('osu_alltoall', 32, 99.0, 0.0),                        # no model_s (older)
        _case('osu_alltoall', 4, 1.2, 2.0)])
    _report(tmp_path / 'dry.json', [_case('osu_alltoall', 4, 0.001, 2.0)],
            cmdline='reframe --dry-run')
    (tmp_path / 'bad.json').write_text('{"runs": ')
    cases, problems = costwall.read_reports(tmp_path)
    assert len(problems) == 1 and 'bad.json: not a ReFrame run report' in problems[0]
    table = costwall.wall_factors(cases, 'local', 'default', 'spack-openmpi')
    assert table == {('osu_alltoall', 32): 5.0, ('osu_alltoall', 4): pytest.approx(0.6)}
    assert costwall.factor(table, 'osu_alltoall', 32) == 5.0
    # between 4 (0.6) and 32 (5.0): log(factor) linear in log2(ranks)
    assert costwall.factor(table, 'osu_alltoall', 8) == pytest.approx(0.6 * (5 / 0.6) ** (1 / 3))
    # beyond them, one doubling at most: 4096 ranks gets what 64 would
    assert costwall.factor(table, 'osu_alltoall', 4096) == pytest.approx(
        costwall.factor(table, 'osu_alltoall', 64))
    assert costwall.factor(table, 'osu_alltoall', 64) == pytest.approx(5.0 * (5 / 0.6) ** (1 / 3))
    assert costwall.factor({('osu_bcast', 8): 2.0}, 'osu_bcast', 1024) == 2.0   # one point
    assert costwall.factor(table, 'osu_bcast', 32) == 1.0        # never run


def test_a_scaled_prediction_scales_every_time():
    pred = costmodel.Prediction(3.0, 1.0, 2.0, [(1, 1.5), (2, 3.0)])
    big = costmodel.scaled(pred, 2.0)
    assert (big.seconds, big.startup_s, big.loop_s, big.ends) == (6.0, 2.0, 4.0,
                                                                  [(1, 3.0), (2, 6.0)])
    assert costmodel.scaled(pred, 1.0) is pred


def test_a_benchmark_never_run_borrows_the_partitions_median_factor():
    table = {('osu_latency', 2): 3.0, ('osu_bw', 2): 3.4, ('osu_bibw', 2): 2.6,
             ('osu_alltoall', 8): 9.0}
    assert costwall.borrowed(table, 2) == 3.0            # the same rank count's
    assert costwall.borrowed(table, 4) == pytest.approx(3.2)   # no 4: every rank count's
    assert costwall.borrowed({}, 2) is None              # no report: the model alone
