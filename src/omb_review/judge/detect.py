"""Regression detection on one series: despiking, change points and the two-sample gate.

Values are first *oriented* (multiplied by +1 or -1 from the unit) so that "larger = worse"
everywhere below.  Method, after the prior art (Otava/Hunter, benchstat, asv, conbench):

- despike with a Hampel filter (window 5): a single-run spike is replaced by the local median,
  so it can neither create a change point nor hide one; noise elsewhere is left untouched;
- change points by binary segmentation: the split with the largest two-sample t statistic is kept
  when its t-test p-value is below ``cp_p`` and the mean moves by at least ``min_step`` relative;
- the gate compares a baseline window with the latest runs: one-sided Mann-Whitney U on the raw
  values (p <= ``alpha``) and a relative change of medians >= the series threshold.  With too few
  runs for the U test to reach ``alpha`` (e.g. one latest run), it requires instead every latest
  run to be worse than every baseline run and a robust z >= ``z_min`` (noise estimated from
  successive differences of the whole series, so a short baseline cannot understate it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from omb_review.judge import mannwhitney

MAD_SIGMA = 1.4826  # MAD -> standard deviation for normal noise


@dataclass(frozen=True)
class Settings:
    """Detection knobs (CLI flags of ``omb-review check``)."""

    threshold: float = 0.05
    alpha: float = 0.01
    z_min: float = 5.0
    cp_p: float = 0.001
    min_step: float = 0.02
    min_segment: int = 3
    min_baseline: int = 3
    baseline_runs: int = 30  # the gate's baseline: sessions (gate.judge)
    recent: int = 6  # a level that began within this many runs is the latest window
    fdr: bool = False  # alpha bounds the false discovery rate over all series (gate.control_fdr)
    confirm: int = 2  # sessions that must each be worse for a regression (gate.judge)
    min_sizes: int = 2  # adjacent message sizes a verdict must hold over (coherence)
    z_session: float = 3.0  # a judged session is worse beyond this many noise sigmas (gate)
    short_baseline: float = 3.0  # z_session widened by sqrt(1 + this / baseline sessions)
    canary: bool = True  # the other libraries of a session as each one's canary (canary.py)


def noise(y: np.ndarray) -> float:
    """Robust run-to-run standard deviation from successive differences (level shifts and
    single spikes barely move it, unlike the standard deviation of the values).  OSU prints two
    decimals, so small latencies repeat exactly and the MAD of the differences can be 0 while
    the values still move: then the mean absolute difference is used."""
    if len(y) < 3:
        return 0.0
    d = np.abs(np.diff(y) - np.median(np.diff(y)))
    sigma = MAD_SIGMA * float(np.median(d)) / np.sqrt(2)
    return sigma or float(np.sqrt(np.pi / 2) * d.mean() / np.sqrt(2))


def hampel(y: np.ndarray, half: int = 2, k: float = 4.0) -> np.ndarray:
    """Replace points further than ``k`` robust sigmas from their rolling median by that median."""
    sigma = noise(y)
    if len(y) < 2 * half + 1 or sigma == 0:
        return y.copy()
    pad = np.pad(y, half, mode="edge")
    med = np.median(np.lib.stride_tricks.sliding_window_view(pad, 2 * half + 1), axis=1)
    return np.where(np.abs(y - med) > k * sigma, med, y)


def _best_split(y: np.ndarray, min_seg: int) -> tuple[int, float, float]:
    """Split index, two-sided t-test p-value and relative step of the strongest mean shift."""
    n = len(y)
    k = np.arange(min_seg, n - min_seg + 1)
    cs, cs2 = np.cumsum(y), np.cumsum(y * y)
    m1 = cs[k - 1] / k
    m2 = (cs[-1] - cs[k - 1]) / (n - k)
    within = cs2[-1] - k * m1**2 - (n - k) * m2**2
    scale = np.sqrt(np.maximum(within, 0) / (n - 2) * (1 / k + 1 / (n - k)))
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(scale > 0, (m2 - m1) / scale, np.where(m2 != m1, np.inf, 0.0))
    i = int(np.argmax(np.abs(t)))
    p = float(2 * special.stdtr(n - 2, -abs(t[i])))  # stats.t.sf, without its checks
    ref = abs(np.median(y)) or 1.0
    return int(k[i]), p, float((m2[i] - m1[i]) / ref)


def change_points(y: np.ndarray, s: Settings) -> list[tuple[int, float]]:
    """``(index where a new level starts, relative step)`` pairs, oldest first."""
    found: list[tuple[int, float]] = []
    todo = [(0, len(y))]
    while todo:
        a, b = todo.pop()
        if b - a < 2 * s.min_segment:
            continue
        k, p, step = _best_split(y[a:b], s.min_segment)
        if p < s.cp_p and abs(step) >= s.min_step:
            found.append((a + k, step))
            todo += [(a, a + k), (a + k, b)]
    return sorted(found)


@dataclass
class Verdict:
    """Outcome of the gate for one series (oriented: positive ``change`` = worse)."""

    status: str  # regression | watch | shared | improvement | ok | insufficient
    change: float = 0.0
    p_value: float = 1.0
    method: str = ""
    n_baseline: int = 0
    n_latest: int = 0
    baseline_median: float = float("nan")
    latest_median: float = float("nan")
    first_bad: int | None = None  # index into the series
    q_value: float | None = None  # Benjamini-Hochberg adjusted p, with --fdr
    reason: str = ""  # why a series is insufficient

    @property
    def confidence(self) -> float:
        return 1.0 - (self.p_value if self.q_value is None else self.q_value)


def _too_few(n_base: int, n_latest: int, s: Settings) -> str:
    if n_latest == 0:
        return "no run in the latest window"
    if n_base == 0:
        return "no baseline window: every run is in the latest window"
    return f"too few baseline runs ({n_base}, the gate needs {s.min_baseline})"


def _min_p(n1: int, n2: int) -> float:
    """Smallest one-sided p-value an exact U test can give for these sample sizes."""
    return 1 / math.comb(n1 + n2, n2)


def compare(
    base: np.ndarray, latest: np.ndarray, sign: int, threshold: float, s: Settings, sigma: float
) -> Verdict:
    """Gate one baseline window against the latest runs (raw values, ``sign`` from the unit;
    ``sigma``: the series' run-to-run noise, used when there are too few runs for the U test)."""
    b, lat = sign * base, sign * latest
    if len(b) < s.min_baseline or len(lat) == 0:
        return Verdict("insufficient", n_baseline=len(b), n_latest=len(lat),
                       reason=_too_few(len(b), len(lat), s))
    mb, ml = float(np.median(b)), float(np.median(lat))
    change = (ml - mb) / abs(mb) if mb else 0.0
    verdict = Verdict("ok", change, 1.0, "", len(b), len(lat), sign * mb, sign * ml)
    side = "greater" if ml >= mb else "less"
    p = mannwhitney.p_value(lat, b, side)  # = scipy.stats.mannwhitneyu(...).pvalue
    verdict.p_value = p
    if _min_p(len(b), len(lat)) <= s.alpha:
        verdict.method = "mann-whitney"
        significant = p <= s.alpha
    else:
        z = abs(ml - mb) / sigma if sigma else (np.inf if ml != mb else 0.0)
        separated = lat.min() > b.max() or lat.max() < b.min()
        verdict.method = "range+z (few runs)"
        significant = bool(separated and z >= s.z_min)
    if significant and abs(change) >= threshold:
        verdict.status = "regression" if change > 0 else "improvement"
    return verdict


def bh_adjust(p_values: list[float]) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (q), as ``scipy.stats.false_discovery_control``
    with ``method='bh'`` (importing scipy.stats costs a second or more per command)."""
    p = np.asarray(p_values, dtype=float)
    order = np.argsort(p)
    ranked = p[order] * p.size / np.arange(1, p.size + 1)
    q = np.empty_like(p)
    q[order] = np.minimum(np.minimum.accumulate(ranked[::-1])[::-1], 1.0)
    return q
