"""One test's plan from its facts (omb_suite.cost.planner): the counts, the prediction and the
limit, without ReFrame (the layer, rfm/job_cost.py, gathers the facts and applies these)."""

from __future__ import annotations

import dataclasses

import pytest

from omb_suite.cost import model as costmodel
from omb_suite.cost.planner import Limit, Planner, RunFacts, counts_problem
from omb_suite.osu.counts import Counts

ONE_NODE = costmodel.Shape(2, 1, 2, 2, 'intra_socket')
DEFAULT = costmodel.model_for({})
DECLARED = dataclasses.replace(DEFAULT, source='declared')
SIZES = [1, 8, 1024, 65536, 1048576]


def facts(**changes) -> RunFacts:
    base = RunFacts('osu_latency', '7.4', SIZES, ONE_NODE, 1, DEFAULT, DEFAULT,
                    name='OsuPt2Pt', where='OsuPt2Pt on vm:default+env')
    return dataclasses.replace(base, **changes)


def never() -> list:
    raise AssertionError('history read although the counts do not come from it')


def test_counts_set_by_hand_are_kept_and_history_is_not_read():
    planner = Planner(facts(counts=Counts(iterations=5)))
    assert not planner.needs_history()
    assert planner.choose_counts(never) == (None, 'OsuPt2Pt: -x/-i as set')


def test_history_off_keeps_osus_defaults():
    planner = Planner(facts(from_history=False))
    assert planner.choose_counts(never) == (
        Counts(), "OsuPt2Pt: OSU's defaults (iterations_from_history off)")


def test_a_program_of_ours_keeps_its_counts_without_a_reason():
    assert Planner(facts(osu_program=False)).choose_counts(never) == (None, '')


def test_no_history_keeps_osus_defaults_saying_why():
    planner = Planner(facts())
    assert planner.needs_history()
    counts, reason = planner.choose_counts(list)
    assert counts == Counts()
    assert reason.startswith("OsuPt2Pt on vm:default+env: OSU's defaults")


def test_counts_per_size_range_need_an_osu_with_buckets():
    large = Counts(iterations_large=100)
    assert 'OSU 7.5.1 or later' in counts_problem(large, False, '7.4')
    assert counts_problem(large, True, '8.0') is None
    assert counts_problem(Counts(iterations=5), False, '7.4') is None


def test_the_prediction_is_the_models_with_the_counts():
    planner = Planner(facts())
    got = planner.prediction(Counts(iterations=5))
    assert got == costmodel.predict('osu_latency', SIZES, ONE_NODE, DEFAULT, iterations=5,
                                    osu_version='7.4')
    assert planner.sweep_cost(Counts(iterations=5)) == got.seconds
    assert got.seconds < planner.prediction(Counts()).seconds


def test_earlier_wall_times_scale_the_declared_prediction():
    planner = Planner(facts())
    assert planner.wall_prediction(Counts(), {}) == planner.prediction(Counts())
    walls = {('osu_latency', 2): 2.0}
    assert planner.wall_prediction(Counts(), walls).seconds == pytest.approx(
        2 * planner.base_prediction(Counts()).seconds)


def test_a_program_never_run_borrows_the_partitions_factor_but_not_for_a_shorter_limit():
    planner = Planner(facts())
    base = planner.base_prediction(Counts()).seconds
    slow = {('osu_bw', 2): 3.0, ('osu_bibw', 2): 3.4, ('osu_alltoall', 8): 0.5}
    assert planner.wall_prediction(Counts(), slow).seconds == pytest.approx(3.2 * base)
    assert planner.limit_prediction(Counts(), slow).seconds == pytest.approx(3.2 * base)
    fast = {('osu_bw', 2): 0.5}                   # local's model over-predicts: 0.56-0.69
    assert planner.wall_prediction(Counts(), fast).seconds == pytest.approx(0.5 * base)
    assert planner.limit_prediction(Counts(), fast) == planner.prediction(Counts())
    own = {('osu_latency', 2): 0.5}               # its own runs: the limit follows them
    assert planner.limit_prediction(Counts(), own).seconds == pytest.approx(0.5 * base)
    corrected = dataclasses.replace(
        DECLARED, corrections={('osu_latency', 2, 'intra_socket'): [(1, 1.0)]}, fitted=True)
    fitted = Planner(facts(model=corrected))      # its perflogs corrected the model already
    assert fitted.wall_prediction(Counts(), slow) == fitted.prediction(Counts())


def test_no_limit_from_the_built_in_defaults_unless_asked():
    planner = Planner(facts())
    pred = planner.prediction(Counts())
    asked = []
    assert planner.limit(pred, None, None, asked=False, hang=lambda: asked.append(1) or False,
                         reframe_limit_s=lambda: 600.0) == Limit()
    assert asked == [1]
    limit = planner.limit(pred, 2.0, 30, asked=True, hang=never, reframe_limit_s=never)
    _, _, grace = costmodel.limit_rule()
    assert limit == Limit(30, f'{30 + grace}s', (2.0, 30))


def test_a_partitions_own_model_gives_the_limit():
    planner = Planner(facts(model=DECLARED))
    pred = planner.prediction(Counts())
    limit = planner.limit(pred, None, None, asked=False, hang=never, reframe_limit_s=never)
    assert limit.seconds == costmodel.time_limit(pred)
    assert limit.basis is None


def test_a_library_that_may_hang_gets_reframes_limit_less_the_grace():
    planner = Planner(facts(launches=2))
    pred = planner.prediction(Counts())
    _, _, grace = costmodel.limit_rule()
    limit = planner.limit(pred, None, None, asked=False, hang=lambda: True,
                          reframe_limit_s=lambda: 600.0)
    assert limit.seconds == 300 - grace
    assert limit.job is None
    assert limit.basis.startswith("ReFrame's 600 s less")


def test_a_program_the_fitted_model_never_measured_is_not_stopped_by_its_guess():
    """osu_partitioned_latency took 310 s (MPICH 4.0.2, OSU 8.0b2) where a model fitted from
    osu_latency and osu_bw said 5.5 s: 3 x 5.5 s, or the 60 s floor, would have stopped its
    first run, and with no run in the perflogs the fit could never learn it."""
    fitted = costmodel.with_corrections(
        DEFAULT, {('osu_latency', 2, 'intra_socket'): [(8, 1.0)]}, 'fitted from 40 records')
    args = dict(asked=False, hang=lambda: False, reframe_limit_s=never)
    new = Planner(facts(benchmark='osu_partitioned_latency', model=fitted))
    limit = new.limit(new.prediction(Counts()), None, None, **args)
    assert limit.seconds == 0 and 'no run of osu_partitioned_latency' in limit.basis
    known = Planner(facts(model=fitted))
    assert known.limit(known.prediction(Counts()), None, None, **args).seconds > 0
    learnt = dataclasses.replace(fitted, corrections={
        **fitted.corrections, ('osu_partitioned_latency', 2, 'intra_socket'): [(8, 90.0)]})
    again = Planner(facts(benchmark='osu_partitioned_latency', model=learnt))
    assert again.limit(again.prediction(Counts()), None, None, **args).seconds > 0
    asked = new.limit(new.prediction(Counts()), 3.0, 60, asked=True, hang=never,
                      reframe_limit_s=never)
    assert asked.seconds >= 60
