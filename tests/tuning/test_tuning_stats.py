"""The ratio tuned/default with its 95 % interval (omb_suite.tuning.stats): the Hodges-Lehmann
interval of the Mann-Whitney test, checked against the test's published critical values and a
brute-force count; the outcome that fails the proving check or lets a rule be written."""

from __future__ import annotations

import itertools
import math

import pytest

from omb_suite.tuning import stats as tuning_stats
from omb_suite.tuning.rules import TuningError
from omb_suite.tuning.stats import FASTER, SAME, SLOWER, compare_runs, ratio_interval


@pytest.mark.parametrize(('m', 'n', 'critical'), [(5, 5, 2), (8, 8, 13), (10, 10, 23),
                                                  (5, 8, 6), (6, 7, 6)])
def test_the_interval_ends_follow_the_mann_whitney_critical_values(m, n, critical):
    """Two-sided 5 % critical values of U (published tables): the interval runs from the
    (critical + 1)-th smallest to the (critical + 1)-th largest difference."""
    k, coverage = tuning_stats._rank(m, n, 0.95)
    assert k == critical + 1
    assert coverage >= 0.95


def test_the_distribution_is_the_count_of_orderings():
    """P(U <= u) by enumerating every way 5 x- and 4 y-values can interleave."""
    counts = tuning_stats.orderings(4, 5)
    brute = [0] * 21
    for xs in itertools.combinations(range(9), 4):
        ys = [i for i in range(9) if i not in xs]
        brute[sum(x > y for x in xs for y in ys)] += 1
    assert list(counts) == brute and sum(brute) == math.comb(9, 4)


def test_three_runs_each_cannot_reach_95_percent_and_say_so():
    iv = ratio_interval([10, 10.2, 9.9], [8, 8.1, 7.9])
    assert iv.coverage == pytest.approx(0.9)
    assert iv.low == pytest.approx(7.9 / 10.2) and iv.high == pytest.approx(8.1 / 9.9)


def test_synthetic_halved_latencies_give_ratio_one_half_inside_its_interval():
    default = [1.0, 1.1, 1.05, 0.98, 1.02]
    iv = ratio_interval(default, [v / 2 for v in default])
    assert iv.ratio == pytest.approx(0.5)
    assert iv.low < 0.5 < iv.high < 0.6 and iv.coverage == pytest.approx(1 - 8 / 252)


def test_a_latency_printed_as_zero_has_a_finite_ratio():
    iv = ratio_interval([0.0] * 5, [0.01] * 5)
    assert iv.ratio == pytest.approx(2.0)


def test_no_runs_is_an_error():
    with pytest.raises(TuningError, match='no runs'):
        ratio_interval([], [1.0])


@pytest.mark.parametrize(('default', 'tuned', 'outcome'), [
    ([10, 10.2, 9.9, 10.1, 10.05], [12, 12.5, 11.5, 12.2, 11.9], SLOWER),
    ([10, 10.2, 9.9, 10.1, 10.05], [8, 8.1, 7.9, 8.05, 7.95], FASTER),
    ([10, 10.2, 9.9, 10.1, 10.05], [10.1, 12, 9.95, 9.0, 11], SAME),  # overlapping
    ([10, 10.2, 9.9, 10.1, 10.05], [10.3, 10.35, 10.4, 10.45, 10.5], SAME),  # above 1, < 5 %
    # 6 % faster by the estimate, but the interval reaches above 0.95: not a rule
    ([10, 10.2, 9.9, 10.1, 10.05], [9.4, 9.7, 9.3, 9.45, 9.2], SAME),
    # 95 % interval above 1, but one loaded run below a default one: not slower (99 %)
    ([10, 10.2, 9.9, 10.1, 11.7], [12, 12.5, 11.5, 12.2, 11.9], SAME),
])
def test_synthetic_outcomes_of_tuned_against_default(default, tuned, outcome):
    got, iv, wide = compare_runs(default, tuned, 0.05)
    assert got == outcome, (iv, wide)


def test_slower_needs_every_loaded_run_slower_with_five_runs_each():
    """The slower verdict's interval at 99 %: with five runs each, the whole range (99.2 %)."""
    _, iv, wide = compare_runs([10, 10.2, 9.9, 10.1, 11.7], [12, 12.5, 11.5, 12.2, 11.9], 0.05)
    assert iv.low > 1 and wide.low < 1
    assert wide.coverage == pytest.approx(1 - 2 / 252)
    assert wide.low == pytest.approx(11.5 / 11.7) and wide.high == pytest.approx(12.5 / 9.9)
