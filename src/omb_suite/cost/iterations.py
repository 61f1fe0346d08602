"""Warm-up (``-x``) and iterations (``-i``) per test from the partition's own history.

OSU's default counts are the same whatever the noise. Here each reported size's earlier runs
(same partition, environment and test: benchmark, placement, algorithm, scale) give the
run-to-run spread of its reported figure, and the counts (one ``-i`` for the whole sweep, or
one per size range) are the smallest with which the gate (``omb-review check``) still catches
``step`` at ``power`` at every size, or, where even OSU's defaults cannot, loses at most
``power_loss`` of the defaults' power.

- Spread: the gate's own estimator (``omb_review.judge.detect.noise``: successive differences, a
  two-state or drifting series barely moves it) relative to the median.
- How the spread shrinks with iterations: ``s(n) = s(n0) * (n0 / n) ** exponent``, the
  exponent per OSU loop and size band measured with real OSU runs (``data/iterations.yaml``,
  its provenance there); 0.5 would be independent iterations, less is what runs share.
- Power of the gate for a step at spread ``s``: its U test with ``latest`` and ``baseline``
  runs (efficiency 3/pi against a t test), or with too few runs for the U test to reach
  ``alpha``, its range+z rule (``z_min``), times the chance that the medians move past its
  ``threshold`` (one half for a step equal to it, whatever ``s``).
- Where the environment's OSU has iteration buckets (7.5.1 and later), each band of sizes
  (up to OSU's ``LARGE_MESSAGE_SIZE``, 8 KiB, and above) gets its own count in the one launch
  (:func:`omb_suite.osu.counts.options`); older OSU applies one ``-i``/``-x`` to every
  size (``set_num_iterations``), so the count is chosen for the whole sweep. Either is kept
  only if the cost model says it is cheaper than OSU's defaults.
- No counts below the measured range (``lowest_fraction`` of OSU's default at every size,
  and at least ``lowest_iterations``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from itertools import pairwise
from pathlib import Path
from statistics import NormalDist, fmean, median

from omb_suite import yamldata
from omb_suite.osu import limits as osu_limits
from omb_suite.osu.counts import Counts, bucket_edge

_DATA = Path(__file__).parents[1] / 'data' / 'iterations.yaml'
MAD_SIGMA = 1.4826


@dataclass(frozen=True)
class Goal:
    """What the chosen counts must achieve (``data/iterations.yaml``)."""

    step: float
    power: float
    power_loss: float
    alpha: float
    z_min: float
    threshold: float
    latest: int
    baseline: int
    min_history: int
    lowest_fraction: float
    lowest_iterations: int


@cache
def _data() -> dict:
    return yamldata.load(_DATA.read_text())


def goal() -> Goal:
    d = _data()
    return Goal(**d['target'], **d['gate'], **d['rules'])


def exponent(benchmark: str, size: int, declared: dict | None = None,
             osu_version: str | None = None) -> float:
    """How fast the spread of a run's figure shrinks with iterations, for this program's
    OSU loop at this size: the partition's declared ``iteration_shrink`` (extras, measured on
    it with ``benchmarks/verdict_power.py``), else ``data/iterations.yaml``'s default."""
    band = 'large' if osu_limits.is_large(size, benchmark, osu_version) else 'small'
    kind = osu_limits.loop_kind(benchmark)
    value = ((declared or {}).get(kind) or {}).get(band)
    return float(_data()['shrink_default'] if value is None else value)


def fit_exponents(cells: dict[tuple[str, str, int], dict[int, list[float]]]
                  ) -> dict[str, dict[str, tuple[float, float]]]:
    """``{loop kind: {band: (slope, exponent)}}`` from real runs at several counts:
    ``cells[(program, band, size)][iterations]`` = the figures of repeated runs. The slope of
    log spread on log iterations with each size its own level, and the exponent: its upper
    95 % bound clamped to [0, 0.5] (erring towards more iterations)."""
    pooled: dict[tuple[str, str], tuple[list[float], list[float]]] = {}
    for (program, band, _), by_count in cells.items():
        pts = [(math.log(n), math.log(s)) for n, v in by_count.items() if (s := spread(v)) > 0]
        if len(pts) < 2:
            continue
        px, py = [x for x, _ in pts], [y for _, y in pts]
        xs, ys = pooled.setdefault((osu_limits.loop_kind(program), band), ([], []))
        xs += [x - fmean(px) for x in px]
        ys += [y - fmean(py) for y in py]
    out: dict[str, dict[str, tuple[float, float]]] = {}
    for (kind, band), (xs, ys) in pooled.items():
        sxx = sum(x * x for x in xs)
        slope = sum(x * y for x, y in zip(xs, ys, strict=True)) / sxx
        groups = sum(1 for c in cells if osu_limits.loop_kind(c[0]) == kind and c[1] == band)
        resid = (sum((y - slope * x) ** 2 for x, y in zip(xs, ys, strict=True))
                 / max(len(xs) - groups - 1, 1))
        upper = -slope + 1.96 * math.sqrt(resid / sxx)
        out.setdefault(kind, {})[band] = (-slope, min(max(upper, 0.0), 0.5))
    return out


def spread(values: Iterable[float]) -> float:
    """Relative run-to-run spread: ``omb_review.judge.detect.noise`` over the median (the same
    estimator the gate uses; ``tests/test_iterations.py`` keeps them equal). Plain Python, not
    numpy: this module is imported at every ReFrame start, numpy's import took 0.14 s."""
    y = [float(v) for v in values]
    med = abs(median(y)) if y else 0.0
    if len(y) < 3 or not med:
        return 0.0
    diffs = [b - a for a, b in pairwise(y)]
    centre = median(diffs)
    d = [abs(x - centre) for x in diffs]
    sigma = MAD_SIGMA * median(d) / math.sqrt(2)
    return (sigma or math.sqrt(math.pi / 2) * fmean(d) / math.sqrt(2)) / med


def _test_of(g: Goal) -> tuple[float, float]:
    """(scale, critical z) of the gate's test: power = Phi(scale * step / s - z)."""
    if 1 / math.comb(g.latest + g.baseline, g.latest) <= g.alpha:
        scale = math.sqrt(3 / math.pi * g.latest * g.baseline / (g.latest + g.baseline))
        return scale, NormalDist().inv_cdf(1 - g.alpha)
    return 1.0, g.z_min


def power(rel_spread: float, g: Goal) -> float:
    """Probability that the gate names a ``g.step`` step at this relative spread: its test
    is significant, and the change of medians reaches its ``threshold`` (taken as
    independent; the medians' difference spreads by sqrt(pi/2) s sqrt(1/latest + 1/baseline)
    for normal noise). A step equal to the threshold reaches it half the time at any spread."""
    if rel_spread <= 0:
        return 1.0 if g.step >= g.threshold else 0.0
    scale, z = _test_of(g)
    medians = math.sqrt(math.pi / 2 * (1 / g.latest + 1 / g.baseline)) * rel_spread
    return NormalDist().cdf(scale * g.step / rel_spread - z) * \
        NormalDist().cdf((g.step - g.threshold) / medians)


def spread_needed(p: float, g: Goal) -> float:
    """The largest relative spread at which the gate's power is at least ``p`` (bisection
    on log spread: power falls as the spread grows); 0 if no spread reaches ``p``, infinite
    if every spread does (noise alone carries the test past its bound that often)."""
    lo, hi = 1e-6, 10.0
    if power(hi, g) >= p:
        return math.inf
    if power(lo, g) < p:
        return 0.0
    for _ in range(60):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if power(mid, g) >= p else (lo, mid)
    return lo


@dataclass(frozen=True)
class SizeHistory:
    """One reported size's earlier runs: their figures and the ``-i`` they ran with
    (``None``: OSU's default at that size)."""

    size: int
    values: list[float]
    iterations: int | None


@dataclass(frozen=True)
class Choice:
    """The counts for one test (``None``: OSU's defaults) and why; the ``_large`` pair:
    the sizes above 8 KiB where the OSU has buckets (:class:`~omb_suite.osu.counts.Counts`)."""

    warmup: int | None
    iterations: int | None
    reason: str
    warmup_large: int | None = None
    iterations_large: int | None = None

    @property
    def counts(self) -> Counts:
        return Counts(self.warmup, self.iterations, self.warmup_large, self.iterations_large)


def _need(benchmark: str, size: int, s_default: float, g: Goal, beta: float
          ) -> tuple[float, float]:
    """(smallest -i for this size, the gate's power at OSU's default) from the spread at
    OSU's default count."""
    default = osu_limits.loop(benchmark, [size])[0][2]
    p_default = power(s_default, g)
    wanted = min(g.power, p_default - g.power_loss)
    floor = max(g.lowest_iterations, g.lowest_fraction * default)
    needed = spread_needed(wanted, g)
    if wanted <= 0 or s_default == 0 or beta == 0 or needed == math.inf:
        return floor, p_default
    if needed == 0:  # out of reach at any count: OSU's
        return default, p_default
    return max(floor, default * (s_default / needed) ** (1 / beta)), p_default


def _round_up(n: float) -> int:
    """Two significant digits, rounded up (2000, 350, 12)."""
    digits = max(math.floor(math.log10(max(n, 1))) - 1, 0)
    return int(math.ceil(n / 10**digits) * 10**digits)


Cost = Callable[[Counts], float]


def choose(benchmark: str, label: str, history: list[SizeHistory], cost: Cost | None = None,
           shrink: dict | None = None, buckets: bool = False,
           osu_version: str | None = None) -> Choice:
    """The counts for one test from its reported sizes' ``history``; ``cost(counts)``
    (seconds; ``Counts()``: OSU's defaults) keeps them only when cheaper; ``shrink``: the
    partition's declared exponents (:func:`exponent`); ``buckets``: the OSU takes a count
    per size range (:mod:`omb_suite.osu.counts`); ``osu_version``: where its sizes switch to
    the large counts (:func:`osu_limits.is_large`)."""
    g = goal()
    if osu_limits.loop_kind(benchmark) is None or not history:
        return Choice(None, None, f'{label}: OSU\'s defaults (no size sweep or no size reported)')
    short = [h.size for h in history if len(h.values) < g.min_history]
    if short:
        return Choice(None, None, f'{label}: OSU\'s defaults (history: fewer than '
                      f'{g.min_history} runs at {_sizes(short)})')
    at_default = {}
    for h in history:
        default = osu_limits.loop(benchmark, [h.size], osu_version=osu_version)[0][2]
        at_default[h.size] = spread(h.values) * ((h.iterations or default) / default) ** \
            exponent(benchmark, h.size, shrink)
    runs = f'history: {min(len(h.values) for h in history)} runs'
    return _decide(benchmark, label, at_default, runs, cost, shrink, buckets, osu_version)


def choose_for_spread(benchmark: str, label: str, sizes: list[int], rel_spread: float,
                      cost: Cost | None = None, shrink: dict | None = None,
                      buckets: bool = False, osu_version: str | None = None) -> Choice:
    """The counts a history spreading by ``rel_spread`` at OSU's defaults at every size would
    choose (what a site can expect before it has one)."""
    if osu_limits.loop_kind(benchmark) is None or not sizes:
        return Choice(None, None, f'{label}: OSU\'s defaults (no size sweep or no size reported)')
    return _decide(benchmark, label, dict.fromkeys(sizes, rel_spread), 'assumed', cost, shrink,
                   buckets, osu_version)


def _decide(benchmark: str, label: str, at_default: dict[int, float], runs: str,
            cost: Cost | None, shrink: dict | None, buckets: bool,
            osu_version: str | None = None) -> Choice:
    """The counts (one -i for the sweep, or one per size range with ``buckets``) from each
    size's spread at OSU's default count."""
    g = goal()
    beta = {s: exponent(benchmark, s, shrink, osu_version) for s in at_default}
    needs = {s: _need(benchmark, s, sd, g, beta[s]) for s, sd in at_default.items()}
    counts = _bucket_counts(benchmark, needs, osu_version) if buckets \
        else _sweep_counts(benchmark, needs)
    default = {s: osu_limits.loop(benchmark, [s], osu_version=osu_version)[0][2] for s in needs}
    chosen = {s: power(at_default[s] * (default[s] / counts.at(benchmark, s, osu_version)[1])
                       ** beta[s], g)
              for s in needs}
    worst = min(chosen, key=chosen.get)
    why = (f'{runs}; weakest {_sizes([worst])}, spread {at_default[worst]:.1%} at OSU\'s '
           f'default -> a {g.step:.0%} step caught at {chosen[worst]:.0%} (OSU\'s defaults: '
           f'{needs[worst][1]:.0%})')
    if counts == Counts():
        return Choice(None, None, f'{label}: OSU\'s defaults ({why})')
    what = _counts_text(benchmark, counts)
    if cost is not None and cost(counts) >= cost(Counts()):
        return Choice(None, None, f'{label}: OSU\'s defaults ({what} would cost more; {why})')
    return Choice(counts.warmup, counts.iterations, f'{label}: {what} ({why})',
                  counts.warmup_large, counts.iterations_large)


def _sweep_counts(benchmark: str, needs: dict[int, tuple[float, float]]) -> Counts:
    """One -i for the whole sweep: the most any size needs (OSU's defaults where that is
    not below the largest default of the sizes)."""
    n = _round_up(max(need for need, _ in needs.values()))
    if n >= max(i for *_, i in osu_limits.loop(benchmark, sorted(needs))):
        return Counts()
    return Counts(_warmup(benchmark, n), n)


def _bucket_counts(benchmark: str, needs: dict[int, tuple[float, float]],
                   osu_version: str | None = None) -> Counts:
    """A count per size range (up to OSU's LARGE_MESSAGE_SIZE, above): the most its sizes
    need; OSU's default for a range whose sizes need it, or where none is reported."""
    out = []
    for large in (False, True):
        mine = [need for s, (need, _) in needs.items()
                if osu_limits.is_large(s, benchmark, osu_version) == large]
        skip, default = osu_limits.loop(benchmark, [2**30 if large else 1])[0][1:]
        n = _round_up(max(mine)) if mine else default
        if n >= default:
            out += [None, None]
        else:
            smallest = min(osu_limits.loop(benchmark, [s])[0][1] for s in (1, 2**30))
            out += [min(skip, max(smallest, math.ceil(n * skip / default))), n]
    if out[:2] == out[2:]:
        return Counts(*out[:2])  # one count for the whole sweep
    if out[2:] == [None, None]:
        out[2:] = osu_limits.loop(benchmark, [2**30])[0][1:]  # else the small ones reach them
    return Counts(*out)


def _counts_text(benchmark: str, counts: Counts) -> str:
    if not counts.bucketed:
        return f'-i {counts.iterations} -x {counts.warmup} for the whole sweep'
    (xs, i_s), (xl, il) = (counts.at(benchmark, s) for s in (1, 2**30))
    return (f'-i {i_s} -x {xs} up to {size_text(bucket_edge())}, -i {il} -x {xl} above, '
            'in one launch')


def _warmup(benchmark: str, n: int) -> int:
    """OSU's own warm-up per timed iteration (the larger of its two bands), at least its
    smaller default warm-up."""
    small, large = (osu_limits.loop(benchmark, [s])[0] for s in (1, 2**20))
    ratio = max(small[1] / small[2], large[1] / large[2])
    return max(min(small[1], large[1]), math.ceil(n * ratio))


def _sizes(sizes: list[int]) -> str:
    return ', '.join(size_text(s) for s in sizes)


def size_text(size: int) -> str:
    """``8 B``, ``64 KiB``, ``4 MiB``."""
    for unit, shift in (('MiB', 20), ('KiB', 10)):
        if size >= 1 << shift and size % (1 << shift) == 0:
            return f'{size >> shift} {unit}'
    return f'{size} B'
