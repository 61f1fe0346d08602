"""One-sided Mann-Whitney U test, as ``scipy.stats.mannwhitneyu`` computes it, without its
per-call overhead.

The gate runs one test per series: 1,968 on the bench tree.  SciPy's function spends most of
its 1.4 ms per call in argument handling (the ``axis``/``nan_policy`` wrapper), which was a
third of ``omb-review report``'s time.  This computes the same p-value for 1-D samples without
NaNs (the gate passes only measured values): ``method='auto'`` (exact distribution when a
sample has at most 8 values and there are no ties, else the normal approximation with tie and
continuity correction; the exact distribution is counted once, in
:func:`omb_suite.tuning.stats.orderings`).  ``tests/review/test_same_as_scipy.py`` checks it
against SciPy.
"""

from __future__ import annotations

import math

import numpy as np

from omb_suite.tuning import stats as tuning_stats

EXACT_MAX = 8  # SciPy's choice: exact when a sample has at most 8 values and nothing ties


def _exact_sf(u: float, m: int, n: int) -> float:
    """P(U >= u) under the null hypothesis, from the exact distribution."""
    counts = tuning_stats.orderings(m, n)
    return math.fsum(counts[int(u):]) / math.fsum(counts)


def p_value(x: np.ndarray, y: np.ndarray, alternative: str) -> float:
    """p of H1 'x is stochastically greater than y' (``greater``) or 'less' (``less``)."""
    n1, n2 = len(x), len(y)
    values, inverse, ties = np.unique(np.concatenate([x, y]), return_inverse=True,
                                      return_counts=True)
    ranks = (np.cumsum(ties) - (ties - 1) / 2)[inverse]
    u1 = float(ranks[:n1].sum()) - n1 * (n1 + 1) / 2
    u = u1 if alternative == "greater" else n1 * n2 - u1
    tied = values.size < n1 + n2
    if (n1 > EXACT_MAX and n2 > EXACT_MAX) or tied:
        n = n1 + n2
        spread = n1 * n2 / 12 * ((n + 1) - float((ties**3 - ties).sum()) / (n * (n - 1)))
        if spread <= 0:  # every value equal
            return 1.0
        z = (u - n1 * n2 / 2 - 0.5) / math.sqrt(spread)
        p = 0.5 * math.erfc(z / math.sqrt(2))
    else:
        p = _exact_sf(u, n1, n2)
    return min(max(p, 0.0), 1.0)
