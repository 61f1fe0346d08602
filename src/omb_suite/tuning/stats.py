"""The ratio tuned/default of one cell (collective, scale, message size) with its confidence
interval: the Hodges-Lehmann interval of the Mann-Whitney test that the gate uses
(:mod:`omb_review.judge.mannwhitney`), on log latencies, so that the shift it estimates is a ratio.

From ``m`` default and ``n`` tuned latencies: the ``m * n`` differences
``log(tuned_j) - log(default_i)``, sorted; the estimate is their median, the interval runs from
the ``k``-th smallest to the ``k``-th largest, ``k`` the largest with ``P(U < k) <= (1 -
confidence) / 2`` under the exact distribution of the Mann-Whitney U (no difference). Five runs
each give ``k = 3`` and a coverage of 96.8 %; three each cannot reach 95 % (the whole range of
differences covers 90 %): :attr:`Interval.coverage` is the coverage the runs allow, not the one
asked for. Exact for any sample sizes (the distribution is counted, not approximated).

OSU prints latencies with two decimals: a latency printed as ``0.00`` is taken as 0.005 us
(the largest value it can be), so that its logarithm is finite.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

from omb_suite.tuning.rules import TuningError

#: A printed 0.00 us, at most this (OSU's two decimals).
SMALLEST_US = 0.005


@dataclass(frozen=True)
class Interval:
    """Tuned/default: the estimate, its interval and the interval's exact coverage."""

    ratio: float
    low: float
    high: float
    coverage: float

    def text(self) -> str:
        return f'{self.ratio:.2f} [{self.low:.2f}, {self.high:.2f}]'


def orderings(m: int, n: int) -> tuple[float, ...]:
    """Orderings of ``m`` x- and ``n`` y-values per U = 0 .. m*n (U: pairs with x > y): the
    exact null distribution of the Mann-Whitney U, the same for (n, m). The one place it is
    counted: the gate's test (:mod:`omb_review.judge.mannwhitney`) reads it too."""
    return _orderings(min(m, n), max(m, n))


@lru_cache(maxsize=256)
def _orderings(m: int, n: int) -> tuple[float, ...]:
    """:func:`orderings` for ``m <= n``, cached."""
    if m == 0 or n == 0:
        return (1.0,)
    out = [0.0] * (m * n + 1)
    # the largest value is an x (n pairs more) or a y (none)
    for u, count in enumerate(_orderings(min(m - 1, n), max(m - 1, n))):
        out[u + n] += count
    for u, count in enumerate(_orderings(min(m, n - 1), max(m, n - 1))):
        out[u] += count
    return tuple(out)


def _rank(m: int, n: int, confidence: float) -> tuple[int, float]:
    """``k`` (the interval's ends are the k-th smallest and largest difference) and the
    coverage ``1 - 2 P(U <= k - 1)``: the largest k with P(U <= k - 1) <= (1 - confidence) / 2,
    at least 1 (too few runs: the whole range)."""
    counts = orderings(m, n)
    total = sum(counts)
    below, k = counts[0] / total, 1
    while k < len(counts) and below + counts[k] / total <= (1 - confidence) / 2:
        below += counts[k] / total
        k += 1
    return k, 1 - 2 * below


def ratio_interval(default: list[float], tuned: list[float],
                   confidence: float = 0.95) -> Interval:
    """Tuned/default latency at one size, from runs of each (see module)."""
    if not default or not tuned:
        raise TuningError('no runs to compare')
    logs_d = [math.log(max(v, SMALLEST_US)) for v in default]
    diffs = sorted(math.log(max(t, SMALLEST_US)) - d for t in tuned for d in logs_d)
    half = len(diffs) // 2
    middle = diffs[half] if len(diffs) % 2 else (diffs[half - 1] + diffs[half]) / 2
    k, coverage = _rank(len(default), len(tuned), confidence)
    return Interval(math.exp(middle), math.exp(diffs[k - 1]), math.exp(diffs[-k]), coverage)


#: Outcomes of :func:`compare_runs`.
FASTER, SLOWER, SAME = 'faster', 'slower', 'same'

#: The confidence of the interval that fails a load as slower. A proving check compares many
#: cells (every size of every collective the load touches, at every scale: hundreds), so a
#: 95 % interval would call some of them slower by chance alone (measured: 2 of the first 18
#: jobs of Open MPI 4.1.4's load, on collectives the load leaves at the library's own choice,
#: on the loaded machine). At 99 % with five runs each the interval is the whole range of
#: ratios (99.2 %: every loaded run slower than every default run), a false alarm once in
#: 252 cells, and a failed job is re-measured once.
SLOWER_CONFIDENCE = 0.99


def outcome(interval: Interval, wide: Interval, threshold: float) -> str:
    """``faster``: the whole 95 % ``interval`` of tuned/default below ``1 - threshold`` (what a
    rule needs); ``slower``: the whole :data:`SLOWER_CONFIDENCE` interval (``wide``) above 1
    (beyond the noise) and the estimate at least ``1 + threshold`` (the gate's criterion:
    significant and large enough); else ``same``."""
    if interval.high < 1 - threshold:
        return FASTER
    if wide.low > 1 and interval.ratio >= 1 + threshold:
        return SLOWER
    return SAME


def compare_runs(default: list[float], tuned: list[float], threshold: float
                 ) -> tuple[str, Interval, Interval]:
    """Tuned against default at one size, from runs of each in one job (latencies): the
    :func:`outcome`, the ratio's 95 % interval and its :data:`SLOWER_CONFIDENCE` interval."""
    interval = ratio_interval(default, tuned)
    wide = ratio_interval(default, tuned, SLOWER_CONFIDENCE)
    return outcome(interval, wide, threshold), interval, wide
