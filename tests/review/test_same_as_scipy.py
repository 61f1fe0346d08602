"""Statistics computed without SciPy's per-call overhead or scipy.stats' import are SciPy's:
the one-sided Mann-Whitney U p-value (exact, normal approximation, ties) and BH q-values."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from omb_review.judge.detect import bh_adjust
from omb_review.judge.mannwhitney import p_value


@pytest.mark.parametrize("n1,n2", [(1, 3), (1, 30), (3, 30), (5, 8), (8, 8), (9, 9), (10, 40),
                                   (30, 3), (2, 2)])
@pytest.mark.parametrize("decimals", [6, 1])  # 6: no ties (exact branch); 1: ties
def test_same_p_as_scipy(n1, n2, decimals):
    rng = np.random.default_rng(n1 * 100 + n2 + decimals)
    for shift in (0.0, 0.3, 1.5, -0.7):
        x = np.round(rng.normal(shift, 1, n1), decimals)
        y = np.round(rng.normal(0, 1, n2), decimals)
        for side in ("greater", "less"):
            ours = p_value(x, y, side)
            theirs = float(stats.mannwhitneyu(x, y, alternative=side).pvalue)
            assert ours == pytest.approx(theirs, rel=1e-9, abs=1e-15), (x, y, side)


def test_all_values_equal_is_no_evidence():
    assert p_value(np.ones(3), np.ones(10), "greater") == 1.0


@pytest.mark.parametrize("n", [1, 2, 7, 200])
def test_benjamini_hochberg_as_scipy(n):
    rng = np.random.default_rng(n)
    p = np.concatenate([rng.uniform(0, 1, n), rng.uniform(0, 1e-3, n // 3)])
    p[::5] = p[0]  # ties
    expected = stats.false_discovery_control(p, method="bh")
    assert np.allclose(bh_adjust(list(p)), expected, rtol=1e-12, atol=0)
