"""Launch modes in side-by-side pairs (``omb-review compare``): on some days a launch lands,
whole, in a fast or a slow mode (this VM's mornings: ``osu_reduce`` 64 KiB 33 or 83 us, launch
by launch, on one library), and a pair's ratio is then which mode each launch drew. A size
whose launches (both sides pooled) split in two modes ``mode_gap`` times apart or more
(:func:`mode_cut`) leaves out the pairs whose two launches landed in different modes, unless
the two sides' shares of the slow mode differ (Fisher's exact test at ``mode_alpha``: the
library moved between the modes, and every pair counts). Measured: docs/dev/gate.md.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from scipy.stats import fisher_exact

if TYPE_CHECKING:
    from omb_review.judge.side_by_side import Curve, Rule


def mode_cut(values: list[float], rule: Rule) -> float | None:
    """Where launches (oriented logs) split in two modes, or None when they are one mode (or
    no mode rule): cut in two where the groups differ most (Otsu: the largest between-group
    variance), they are two modes when that variance is ``rule.mode_separation`` of the whole
    or more (a normal noise cut in two gives 0.64), their medians ``rule.mode_gap`` times apart
    or more, and the smaller group holds ``rule.mode_share`` of the launches or more."""
    if rule.mode_gap is None or len(values) < 4:
        return None
    x = np.sort(np.asarray(values, dtype=float))
    n = len(x)
    total = float(x.var())
    if total <= 0:
        return None
    k = np.arange(1, n)
    sums = np.cumsum(x)[:-1]
    low_mean, high_mean = sums / k, (x.sum() - sums) / (n - k)
    between = (k / n) * (1 - k / n) * (high_mean - low_mean) ** 2
    below = int(np.argmax(between)) + 1
    low, high = x[:below], x[below:]
    if (between[below - 1] / total < rule.mode_separation
            or float(np.median(high) - np.median(low)) < math.log(rule.mode_gap)
            or min(below, n - below) < rule.mode_share * n):
        return None
    return float(x[below - 1] + x[below]) / 2


def modes(c: Curve, rule: Rule) -> None:
    """Each bimodal size's pairs split between launch modes (``Curve.split``), in place: the
    launches of both sides pooled, cut at the widest gap of their sorted values (see
    :class:`Rule`); a size whose sides differ in their share of the slow mode keeps every
    pair (the library moved between modes)."""
    c.split, c.bimodal, c.split_pairs = {}, [], 0
    if rule.mode_gap is None:
        return
    for size, pairs in c.launches.items():
        if len(pairs) < rule.min_pairs:
            continue
        cut = mode_cut([v for pair in pairs for v in pair], rule)
        if cut is None:
            continue
        slow = [(b > cut, a > cut) for b, a in pairs]
        before_slow, after_slow = sum(x for x, _ in slow), sum(y for _, y in slow)
        table = [[before_slow, len(slow) - before_slow], [after_slow, len(slow) - after_slow]]
        if fisher_exact(table).pvalue <= rule.mode_alpha:
            continue
        c.bimodal.append(size)
        c.split[size] = [x != y for x, y in slow]
        c.split_pairs = max(c.split_pairs, sum(c.split[size]))
