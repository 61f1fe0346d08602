"""Old and new library measured in the same session, launch by launch: the upgrade judged
side by side (``omb-review compare``, ``scripts/upgrade.sh side-by-side``).

ReFrame's serial policy runs the environments of a test case one after the other, so with
``-p '^(OLD|NEW)$' --exec-policy serial --reruns N`` each case is launched as OLD, NEW, OLD,
NEW... seconds apart: each rerun adds a *pair* of launches that shared the machine's moment.
The comparison uses the pairs only, never one side's history, so a machine that is slower
tonight than last week moves both sides of every pair and fails nothing.

The rule, per curve (one benchmark configuration's variable over its message sizes): for each
run of ``min_sizes`` adjacent sizes (every size, when the curve has fewer; a variable without
sizes is its own run), one value per pair: the mean over the run's sizes of
``log(after / before)``, oriented so that larger is worse (latency up, bandwidth down); a pair
with a launch on a busy node (``node_state``) is left out, as the gate leaves such runs, and so
is a pair whose two launches ran OSU with different counts (the perflog's ``warmup``,
``iterations``, ``warmup_large``, ``iterations_large``: counts chosen from each library's own
history differ, and fewer iterations read differently). The run
is a **regression** when the median of those values is at least ``log(1 + threshold)``, every
size of the run moved the same way (its own median above 0) and the one-sided exact Wilcoxon
signed-rank test gives ``p <= alpha``; an **improvement** the same way round. Fewer than
``min_pairs`` pairs: **insufficient** (say how many reruns to add).

**A figure beside its headline**: a program's secondary figures (a collective's min and max
latency, the extremes over its ranks; a peak; a non-blocking collective's compute time and
overlap) stand only beside a change, the same way, of a headline figure of the same curve
(``headline`` in the OSU catalogue: the average latency, the bandwidth...), as ``check`` judges
a curve figure only beside its sizes, unless it moved by ``alone_factor`` times the threshold
(Open MPI's eager limit at 1 KiB: ``osu_bcast`` max_latency +164 %, its average under the
threshold). Otherwise the figure is kept as ``ok`` and counted as *moved alone* (on real A/A
sessions two of the three false alarms were a collective's ``min_latency`` or
``max_latency`` alone, +15 % and -10 %, docs/dev/gate.md).

**Launch modes**: at a size whose launches fall in two modes, the pairs split between them
are left out (:mod:`omb_review.judge.launch_modes`).

**Both orders** (a crossover): the launch that comes second can be faster (measured on `local`,
docs/dev/gate.md), so ``scripts/upgrade.sh side-by-side`` runs half its pairs with the
environments in the configured order and half reversed (``reframe/config/reversed_environs.py``);
an order effect then adds spread to the pairs, not a bias. The pairs are judged as pairs (12
pairs reach p 1/4096; at ``alpha`` 0.02 a run needs 6 of them at least); a curve whose order
moved it (:func:`order_effect`) is said. With ``by_couples`` (``compare --couples``), where a
curve has ``min_couples`` pairs launched in each order, the k-th pair of one order and the
k-th of the other are averaged into a *couple*, in which an order effect cancels, and the rule
is applied to the couples (6 couples reach p 1/64 only).
Measured on real sessions, with the false alarms and the power per number of pairs:
``benchmarks/interleaved_gate.py``, docs/dev/gate.md.
"""

from __future__ import annotations

import math
import warnings
from collections import defaultdict
from dataclasses import dataclass, field, replace
from typing import NamedTuple

import numpy as np
import polars as pl
from scipy.stats import mannwhitneyu, wilcoxon

from omb_review.judge.findings import size_text
from omb_review.read.series import counts, curve_label, with_size, worse_when
from omb_suite import perflog_schema

#: What one curve is, on both sides (the environment is the side, not the curve).
CURVE_KEYS = ("system", "partition", "test", *perflog_schema.measurement_columns(), "metric",
              "unit")
REGRESSION, IMPROVEMENT, OK, INSUFFICIENT = "regression", "improvement", "ok", "insufficient"


class Launch(NamedTuple):
    """One launch of one side at one size: its oriented log value and what pairing needs."""

    value: float
    busy: bool
    time: object
    counts: tuple[str, str]     # OSU's -i/-x as logged (series.counts), small and large sizes


@dataclass(frozen=True)
class Rule:
    """The side-by-side rule's settings (see module)."""

    threshold: float = 0.10
    #: For variables larger-is-better (bandwidth, message rate); None: ``threshold``.
    bandwidth_threshold: float | None = None
    alpha: float = 0.02
    min_sizes: int = 2
    min_pairs: int = 6
    #: Judge couples of pairs launched in both orders (an order effect cancels), not pairs.
    by_couples: bool = False
    #: A curve whose pairs of one order differ from the other's at this p is said (not judged
    #: otherwise: see :func:`order_effect`).
    order_alpha: float = 0.01
    #: Couples of pairs launched in both orders (2**-5 = 0.031 is the smallest p of 5).
    min_couples: int = 5
    #: A secondary figure (not the catalogue's headline) stands alone only when it moved by
    #: this many times the threshold; else only beside its headline figure.
    alone_factor: float = 2.0
    #: An ``ok`` curve is *blind* when the rule would not have found a change of this many
    #: thresholds over all its sizes at its pairs (its noise): worth more pairs.
    blind_factor: float = 2.0
    #: ... over any run of this many adjacent sizes (a regression of a range of sizes).
    blind_sizes: int = 3
    #: Launch modes (:mod:`omb_review.judge.launch_modes`); ``mode_gap`` None: no mode rule.
    mode_gap: float | None = 1.5
    mode_share: float = 0.1
    mode_separation: float = 0.8
    mode_alpha: float = 0.01

    def limit(self, unit: str) -> float:
        """The threshold for a variable of ``unit``."""
        if self.bandwidth_threshold is not None and worse_when(unit) < 0:
            return self.bandwidth_threshold
        return self.threshold


@dataclass
class Curve:
    """One curve's pairs: per size, the oriented log ratios of its pairs (larger is worse),
    sessions kept apart only in how the pairs were formed."""

    keys: dict
    sizes: list[int | None]
    pairs: dict[int | None, list[float]] = field(default_factory=dict)
    #: Per size, whether the new library (``after``) was launched first in each pair.
    after_first: dict[int | None, list[bool]] = field(default_factory=dict)
    status: str = OK
    sizes_moved: list[int | None] = field(default_factory=list)
    change: float = 0.0          # after/before over the run found (or the largest run), >1 worse
    p: float = 1.0
    busy_pairs: int = 0          # left out: a launch of the pair on a busy node (node_state)
    mixed_pairs: int = 0         # left out: the two launches ran OSU with different counts
    couples: int = 0             # judged as couples of both orders (judge() sets it)
    #: A secondary figure that moved while its headline figure did not: kept as ``ok``.
    alone: str = ""
    #: ``ok``, but its pairs could not have shown a change of ``blind_factor`` thresholds.
    blind: bool = False
    #: The ReFrame test cases (display names) whose launches the curve pairs.
    names: set[str] = field(default_factory=set)
    #: Per size, each pair's two launches (before, after), oriented logs: the launch modes.
    launches: dict[int | None, list[tuple[float, float]]] = field(default_factory=dict)
    #: Per size, whether each pair's launches landed in different modes (judge() sets it).
    split: dict[int | None, list[bool]] = field(default_factory=dict)
    #: Sizes found bimodal, and the pairs left out there (launches in different modes).
    bimodal: list[int | None] = field(default_factory=list)
    split_pairs: int = 0
    #: The pairs of one order differ from the other's (:func:`order_effect`): said, and what
    #: ``by_couples`` is for.
    order_moved: bool = False

    @property
    def label(self) -> str:
        return f"{curve_label({**self.keys, 'lineage': None})} {self.keys['metric']}"

    @property
    def n_pairs(self) -> int:
        return min((len(v) for v in self.pairs.values()), default=0)

    def orders(self) -> tuple[int, int]:
        """(pairs with the old library launched first, with the new launched first)."""
        n = self.n_pairs
        first = (self.after_first.get(self.sizes[0], []) if self.sizes else [])[:n]
        return (n - sum(first), sum(first)) if len(first) == n else (n, 0)


def pair_curves(frame: pl.DataFrame, before: str, after: str) -> list[Curve]:
    """Curves measured by both environments, each launch of ``before`` paired with the launch of
    ``after`` of the same rank in the same session (the i-th of each, in time order; the
    perflog's order where its times, to the second, are equal). A session's order (which side
    was launched first) is the one most of its pairs show: a retried launch shifts the pairs
    of its case, not the session's order."""
    frame = with_size(frame.filter(pl.col("value").is_not_null() & (pl.col("value") > 0)
                                   & pl.col("environ").cast(pl.String).is_in([before, after])))
    launches: dict[tuple, dict[str, list[Launch]]] = defaultdict(
        lambda: defaultdict(list))
    keys_of: dict[tuple, dict] = {}
    names: dict[tuple, set[str]] = defaultdict(set)
    for row in frame.sort("time", maintain_order=True).iter_rows(named=True):
        sign = worse_when(row["unit"])
        if not sign:
            continue
        curve = tuple(str(row[k]) for k in CURVE_KEYS)
        keys_of[curve] = {k: row[k] for k in CURVE_KEYS}
        busy = str(row.get("node_state") or "").startswith("busy")
        ran = (counts(row.get("iterations"), row.get("warmup")),
               counts(row.get("iterations_large"), row.get("warmup_large")))
        launches[(curve, row["size"], row["session_id"])][str(row["environ"])].append(
            Launch(math.log(row["value"]) * sign, busy, row["time"], ran))
        if row.get("display_name"):
            names[(curve, row["size"], row["session_id"])].add(str(row["display_name"]))
    votes: dict[str, int] = defaultdict(int)   # > 0: the after side launched first
    for (_curve, _size, session), sides in launches.items():
        for b, a in zip(sides[before], sides[after], strict=False):
            votes[session] += (a.time < b.time) - (b.time < a.time)
    curves: dict[tuple, Curve] = {}
    for (curve, size, session), sides in launches.items():
        n = min(len(sides[before]), len(sides[after]))
        if n == 0:
            continue
        c = curves.setdefault(curve, Curve(keys_of[curve], []))
        c.names.update(names[(curve, size, session)])
        pairs = list(zip(sides[before][:n], sides[after][:n], strict=True))
        like = [(b, a) for b, a in pairs if b.counts == a.counts]
        kept = [(b.value, a.value) for b, a in like if not (b.busy or a.busy)]
        quiet = [a - b for b, a in kept]
        c.pairs.setdefault(size, []).extend(quiet)
        c.launches.setdefault(size, []).extend(kept)
        c.after_first.setdefault(size, []).extend([votes[session] > 0] * len(quiet))
        c.busy_pairs = max(c.busy_pairs, len(like) - len(quiet))
        c.mixed_pairs = max(c.mixed_pairs, len(pairs) - len(like))
    for c in curves.values():
        c.sizes = sorted(c.pairs, key=lambda s: -1 if s is None else s)
    return sorted(curves.values(), key=lambda c: c.label)


def _p(values: np.ndarray, alternative: str) -> float:
    if not np.any(values):
        return 1.0
    return float(wilcoxon(values, alternative=alternative, method="exact").pvalue)


def _judge_run(c: Curve, sizes: list, rule: Rule) -> tuple[str, float, float]:
    """(status, after/before, p) of one run of adjacent sizes."""
    n = min(len(c.pairs[s]) for s in sizes)
    rows = np.array([c.pairs[s][:n] for s in sizes])
    for i, s in enumerate(sizes):         # a pair split between launch modes: left out
        split = c.split.get(s, [])[:n]
        rows[i, [k for k, gone in enumerate(split) if gone]] = np.nan
    with warnings.catch_warnings():        # a pair or couple all split: NaN, left out below
        warnings.simplefilter("ignore", RuntimeWarning)
        if c.couples:
            # a crossover: the k-th pair of each order averaged (an order effect cancels)
            first = np.array(c.after_first[sizes[0]][:n], dtype=bool)
            rows = np.nanmean(np.stack([rows[:, ~first][:, :c.couples],
                                        rows[:, first][:, :c.couples]]), axis=0)
        per_pair = np.nanmean(rows, axis=0) if rows.size else np.array([])
        medians = [float(np.nanmedian(r)) if not np.isnan(r).all() else 0.0 for r in rows]
    per_pair = per_pair[~np.isnan(per_pair)]
    if 0.5 ** len(per_pair) > rule.alpha:
        return OK, 1.0, 1.0      # too few pairs in one mode left for the test to reach alpha
    middle = float(np.median(per_pair))
    limit = math.log1p(rule.limit(c.keys["unit"]))
    if middle >= limit and all(m > 0 for m in medians):
        p = _p(per_pair, "greater")
        if p <= rule.alpha:
            return REGRESSION, math.exp(middle), p
    if middle <= -limit and all(m < 0 for m in medians):
        p = _p(per_pair, "less")
        if p <= rule.alpha:
            return IMPROVEMENT, math.exp(middle), p
    return OK, math.exp(middle), 1.0


def _judge_one(c: Curve, rule: Rule) -> None:
    """One curve's status by the rule, alone (no headline rule), in place."""
    if c.n_pairs < rule.min_pairs:
        c.status = INSUFFICIENT
        return
    c.couples = min(c.orders())
    c.order_moved = c.couples >= rule.min_couples and order_effect(c, rule)
    if c.couples < rule.min_couples or not rule.by_couples:
        c.couples = 0
    modes(c, rule)
    need = min(rule.min_sizes, len(c.sizes))
    found: dict[str, tuple] = {}
    for start in range(len(c.sizes) - need + 1):
        sizes = c.sizes[start:start + need]
        status, change, p = _judge_run(c, sizes, rule)
        best = found.get(status)
        if best is None or abs(math.log(change)) > abs(math.log(best[1])):
            found[status] = (sizes, change, p)
    for status in (REGRESSION, IMPROVEMENT, OK):
        if status in found:
            c.status = status
            c.sizes_moved, c.change, c.p = found[status]
            break


def order_effect(c: Curve, rule: Rule) -> bool:
    """Whether the pairs with the new library launched first differ from those with it
    launched second (two-sided Mann-Whitney over each pair's mean over the sizes, at
    ``rule.order_alpha``): the order moves the figure, which couples (``by_couples``) cancel.
    Said, not acted on: chosen per curve, couples let 6 couples one way through on real A/A
    sessions whose launch modes had made an order look real (docs/dev/gate.md)."""
    n = c.n_pairs
    first = np.array((c.after_first.get(c.sizes[0], []) if c.sizes else [])[:n], dtype=bool)
    if len(first) != n or first.all() or not first.any():
        return False
    per_pair = np.array([c.pairs[s][:n] for s in c.sizes]).mean(axis=0)
    return bool(mannwhitneyu(per_pair[first], per_pair[~first]).pvalue <= rule.order_alpha)


def stepped(c: Curve, step: float, sizes: set) -> Curve:
    """The curve, unjudged, with ``step`` (oriented log) added to the pairs of ``sizes``: a
    change of the new library at those sizes."""
    return replace(c, pairs={s: [v + step * (s in sizes) for v in values]
                             for s, values in c.pairs.items()},
                   launches={s: [(b, a + step * (s in sizes)) for b, a in values]
                             for s, values in c.launches.items()},
                   status=OK, sizes_moved=[], change=1.0, p=1.0, couples=0, alone="",
                   blind=False)


def sees(c: Curve, rule: Rule) -> bool:
    """Whether the rule, at this curve's pairs, would have found a change of ``blind_factor``
    times the threshold over any ``blind_sizes`` adjacent sizes (added to the new side's
    launches of those sizes; all sizes where the curve has fewer)."""
    step = math.log1p(rule.blind_factor * rule.limit(c.keys["unit"]))
    width = min(rule.blind_sizes, len(c.sizes))
    for start in range(len(c.sizes) - width + 1):
        moved = stepped(c, step, set(c.sizes[start:start + width]))
        _judge_one(moved, rule)
        if moved.status != REGRESSION:
            return False
    return True


def judge(curves: list[Curve], rule: Rule = Rule()) -> list[Curve]:
    """Each curve's status by the rule (see module); the curves, judged in place."""
    for c in curves:
        _judge_one(c, rule)
    beside_headline(curves, rule)
    for c in curves:
        c.blind = c.status == OK and not c.alone and stands_alone(c) and not sees(c, rule)
    return curves


def _size(size: int | None) -> str:
    return "-" if size is None else size_text(size)


def describe(c: Curve) -> str:
    """One line: the curve, the sizes, after/before and the evidence."""
    sizes = c.sizes_moved
    where = (_size(sizes[0]) if len(sizes) == 1 or sizes[0] is None
             else f"{_size(sizes[0])} to {_size(sizes[-1])}")
    ratio = c.change if worse_when(c.keys["unit"]) > 0 else 1 / c.change
    units = (f"{c.couples} couples of pairs launched in both orders" if c.couples
             else f"{c.n_pairs} pairs")
    said = (f"ALONE {c.label} [{c.keys['unit']}]" if c.alone
            else f"{c.status.upper()} {c.label} [{c.keys['unit']}]")
    return (f"{said} {where}: after/before {(ratio - 1) * 100:+.0f} % (median of {units}, p "
            f"{c.p:.3g}){'; ' + c.alone + ': not a finding' if c.alone else ''}")


from omb_review.judge.headline import beside_headline, stands_alone  # noqa: E402
from omb_review.judge.launch_modes import mode_cut, modes  # noqa: E402, F401

