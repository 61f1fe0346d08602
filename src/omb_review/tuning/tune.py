"""``omb-review tune``: from proven algorithm sweeps to a tuning recommendation.

Input: perflogs (and curve logs) of the exploration ``OsuCollectiveSweep`` run with the library's
default measured by the same sweep (``-S measure_default=1``) and repeated (``--repeat N`` or
several sessions). Per environment, collective, scale (ranks, nodes) and mapping, at every
measured message size, each proven algorithm is compared with the default by the gate's own
statistics (:func:`omb_review.judge.detect.compare`: one-sided Mann-Whitney at ``alpha`` where the
runs allow it, else every run faster than every default run and a robust z, and a gain of at
least ``threshold``) AND the whole 95 % interval of its ratio to the default (the
Hodges-Lehmann interval of that Mann-Whitney test, :mod:`omb_suite.tuning.stats`) lies below
``1 - threshold``. A cell's winner is the fastest algorithm that beats the default there;
else ``default`` (the previous size's winner where it beats the default too and the fastest
does not beat it beyond the noise: ties do not alternate). Size boundaries are the measured
crossovers; every size above the largest measured and every scale not measured stay the
library's own choice.

Not used, and counted with the reason: failed runs (a failed proof fails the run), runs
whose algorithm ran unproven (``no-evidence``, ``forced-not-proven``: ``--allow-unproven``
takes the latter, Intel MPI), records without an algorithm.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from omb_review.judge import detect
from omb_suite.mpi import evidence
from omb_suite.tuning import stats as tuning_stats
from omb_suite.tuning.rules import DEFAULT, Rule, Step

#: The check whose records are studied, and the metric compared.
SWEEP_TEST = "OsuCollectiveSweep"
METRIC = "avg_latency"


class NothingToRecommend(ValueError):
    """No recommendation can be made from these records (the reason)."""


@dataclass(frozen=True)
class Cell:
    """One collective, scale, mapping and message size: the winner and its gain."""

    collective: str
    ranks: int
    nodes: int
    mapping: str
    size: int
    winner: str
    gain: float  # 1 - winner's median / default's median (0 for 'default')
    default_us: float
    winner_us: float
    runs: int  # of the default (the winner's may differ)
    method: str
    # the winner's latency / the default's, with its 95 % interval (None for 'default')
    ratio: float | None = None
    ratio_low: float | None = None
    ratio_high: float | None = None
    # why the sweep's winner was left out here (omb_review.tuning.narrow: slower in a proof)
    narrowed: str | None = None


@dataclass
class Study:
    """The recommendation for one environment (one MPI library)."""

    environ: str
    family: str
    version: str
    mapping: str
    cells: list[Cell] = field(default_factory=list)
    rules: list[Rule] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # slower in a proof where no rule of the file applies (omb_review.tuning.narrow): not written
    unexplained: list[str] = field(default_factory=list)


def _unproven(frame: pl.DataFrame, allow_unproven: bool) -> pl.Expr:
    prefixes = [evidence.NO_EVIDENCE, evidence.NO_TABLE]
    if not allow_unproven:
        prefixes.append(evidence.FORCED_NOT_PROVEN)
    said = pl.col("algorithm_evidence").cast(pl.String).fill_null("")
    return pl.any_horizontal(*(said.str.starts_with(p) for p in prefixes)) & (
        pl.col("algorithm").cast(pl.String) != DEFAULT)


def usable(frame: pl.DataFrame, allow_unproven: bool) -> tuple[pl.DataFrame, list[str]]:
    """The sweep's passed, proven points of the compared metric, and what was left out."""
    if "size" not in frame.columns or frame.height == 0:
        raise NothingToRecommend("no records")
    sweep = frame.filter(pl.col("test").cast(pl.String) == SWEEP_TEST,
                         pl.col("metric") == METRIC, pl.col("algorithm").is_not_null())
    if sweep.height == 0:
        ran = frame.filter(pl.col("test").cast(pl.String) == SWEEP_TEST, pl.col("metric") == METRIC)
        if ran.height:
            raise NothingToRecommend(
                f"{ran['name'].n_unique()} {SWEEP_TEST} case(s) in these records, but without "
                "the 'algorithm' column: the perflog handler that wrote them does not write "
                "the suite's columns; give the configuration "
                "omb_suite.perflog_schema.handler(DIR) (docs/perflogs.md) and sweep again")
        raise NothingToRecommend(
            f"no algorithm sweep in these records (no {SWEEP_TEST} run with an '{METRIC}'): "
            f"run reframe -c reframe/checks/explore -n {SWEEP_TEST} -S measure_default=1 "
            "--repeat 3 -r first (docs/algorithms.md, 'Tuning files')")
    notes = []
    failed = sweep.filter(pl.col("result").cast(pl.String) != "pass")
    if failed.height:
        notes.append(f"{failed['name'].n_unique()} sweep case(s) left out: the run failed "
                     "(its proof or its results)")
    passed = sweep.filter(pl.col("result").cast(pl.String) == "pass")
    unproven = passed.filter(_unproven(passed, allow_unproven))
    if unproven.height:
        said = Counter(str(e).split(":")[0] for e in unproven["algorithm_evidence"])
        notes.append(f"{unproven['name'].n_unique()} case(s) left out: algorithm not proven ("
                     + ", ".join(f"{k}: {n} points" for k, n in sorted(said.items())) + ")")
    kept = passed.filter(~_unproven(passed, allow_unproven), pl.col("value").is_not_null())
    if kept.height == 0:
        raise NothingToRecommend("no passed, proven sweep point: " + "; ".join(notes))
    return kept, notes


def _compare(default: np.ndarray, other: np.ndarray, threshold: float,
             settings: detect.Settings) -> detect.Verdict:
    """The gate's verdict of ``other`` against the default (latency: larger is worse)."""
    return detect.compare(default, other, 1, threshold, settings, detect.noise(default))


def cell(points: pl.DataFrame, threshold: float, settings: detect.Settings,
         previous: str = DEFAULT, left_out: frozenset[str] = frozenset()
         ) -> tuple[str, float, float, str, tuning_stats.Interval | None]:
    """(winner, winner's median, default's median, method, winner/default with its 95 %
    interval) of one size's points: the fastest algorithm that beats the default, by the
    gate's verdict and with the whole interval below ``1 - threshold``; the ``previous`` size's
    winner instead where it beats the default too and the fastest does not beat it beyond the
    noise (algorithms that tie would otherwise alternate from size to size by noise alone).
    Algorithms in ``left_out`` (the library's file cannot name them) never win."""
    by_alg = {str(a): d.sort("time")["value"].to_numpy()
              for (a,), d in points.partition_by(["algorithm"], as_dict=True).items()
              if str(a) not in left_out}
    default = by_alg.pop(DEFAULT)
    beats = {}
    for name, values in sorted(by_alg.items()):
        verdict = _compare(default, values, threshold, settings)
        interval = tuning_stats.ratio_interval(list(default), list(values))
        if verdict.status == "improvement" and interval.high < 1 - threshold:
            beats[name] = (verdict.latest_median, verdict.method, interval)
    d_us = float(np.median(default))
    if not beats:
        return DEFAULT, d_us, d_us, "", None
    best = min(beats, key=lambda n: beats[n][0])
    if previous in beats and _compare(by_alg[previous], by_alg[best], threshold,
                                      settings).status != "improvement":
        best = previous
    return best, beats[best][0], d_us, beats[best][1], beats[best][2]


def rule(collective: str, ranks: int, nodes: int, cells: list[Cell]) -> Rule:
    """Steps at the measured crossovers; measured up to the largest size."""
    steps: list[Step] = []
    for c in sorted(cells, key=lambda c: c.size):
        if not steps or steps[-1].algorithm != c.winner:
            steps.append(Step(0 if not steps else c.size, c.winner))
    return Rule(collective, ranks, nodes, tuple(steps), max(c.size for c in cells))


def _scale_groups(points: pl.DataFrame, mapping: str) -> dict[tuple, pl.DataFrame]:
    groups = points.partition_by(["benchmark", "num_tasks", "num_nodes"], as_dict=True)
    ranks = Counter((str(b), int(t)) for b, t, _ in groups)
    twice = [f"{b} at {t} ranks" for (b, t), n in ranks.items() if n > 1]
    if twice:
        raise NothingToRecommend(
            f"{', '.join(twice)} measured on several node counts (mapping {mapping}): a tuning "
            "file tells communicators apart by size only; give --nodes N")
    return groups


#: Why the library's tuning file cannot name an algorithm: (family, version, collective,
#: algorithm) -> the reason, or None.
Unwritable = Callable[[str, str, str, str], "str | None"]


def _left_out(s: Study, coll: str, names: set[str], unwritable: Unwritable | None
              ) -> frozenset[str]:
    if unwritable is None:
        return frozenset()
    out = set()
    for name in sorted(names - {DEFAULT}):
        why = unwritable(s.family, s.version, coll, name)
        note = f"{coll} {name} not recommended: {why}"
        if why:
            out.add(name)
            if note not in s.notes:
                s.notes.append(note)
    return frozenset(out)


def study(points: pl.DataFrame, environ: str, mapping: str, threshold: float,
          settings: detect.Settings, unwritable: Unwritable | None = None) -> Study:
    """The recommendation for one environment's usable points (:func:`usable`); algorithms
    the library's file cannot name (``unwritable``) are left out, with the reason."""
    mine = points.filter(pl.col("environ").cast(pl.String) == environ,
                         pl.col("mapping").cast(pl.String) == mapping)
    if mine.height == 0:
        raise NothingToRecommend(f"{environ}: no usable sweep point with mapping {mapping}")
    versions = mine.sort("time")["mpi_version"].cast(pl.String).unique(maintain_order=True)
    version = versions[-1]
    out = Study(environ, str(mine["mpi_family"][0]), str(version), mapping)
    if len(versions) > 1:
        out.notes.append(f"records of {', '.join(map(str, versions))}: only {version} (the "
                         "newest) is studied")
        mine = mine.filter(pl.col("mpi_version").cast(pl.String) == version)
    for (bench, ranks, nodes), group in sorted(_scale_groups(mine, mapping).items()):
        coll = str(bench).removeprefix("osu_")
        if DEFAULT not in set(group["algorithm"].cast(pl.String)):
            out.notes.append(f"{bench} at {ranks} ranks: the default was not measured by the "
                             "sweep (-S measure_default=1); not studied")
            continue
        cells: list[Cell] = []
        skip = _left_out(out, coll, set(group["algorithm"].cast(pl.String)), unwritable)
        for (size,), at in sorted(group.partition_by(["size"], as_dict=True).items()):
            if DEFAULT not in set(at["algorithm"].cast(pl.String)):
                continue
            winner, w_us, d_us, method, iv = cell(at, threshold, settings,
                                                  cells[-1].winner if cells else DEFAULT, skip)
            runs = at.filter(pl.col("algorithm").cast(pl.String) == DEFAULT).height
            cells.append(Cell(coll, int(ranks), int(nodes), mapping, int(size), winner,
                              1 - w_us / d_us if d_us else 0.0, d_us, w_us, runs, method,
                              *((iv.ratio, iv.low, iv.high) if iv else (None, None, None))))
        out.cells += cells
        if any(c.winner != DEFAULT for c in cells):
            out.rules.append(rule(coll, int(ranks), int(nodes), cells))
    return out


#: Columns of :func:`rows` (the table of ``omb-review tune`` and of the report).
COLUMNS = ("environment", "collective", "ranks", "nodes", "sizes (B)", "algorithm",
           "median gain", "ratio [95 % interval]", "cells")


def _ratio(cells: list[Cell]) -> str:
    """A step's ratio to the default: its cells' median, and the envelope of their 95 %
    intervals (the lowest low, the highest high)."""
    ruled = [c for c in cells if c.ratio is not None]
    if not ruled:
        return "1 (the library's own)"
    return (f"{float(np.median([c.ratio for c in ruled])):.2f} "
            f"[{min(c.ratio_low for c in ruled):.2f}, {max(c.ratio_high for c in ruled):.2f}]")


def rows(s: Study) -> list[tuple[str, ...]]:
    """One row per collective, scale and step of the recommendation."""
    out = []
    for r in s.rules:
        bounds = [st.start for st in r.steps[1:]] + [r.last_size + 1]
        for st, end in zip(r.steps, bounds, strict=True):
            mine = [c for c in s.cells if c.collective == r.collective and c.ranks == r.ranks
                    and st.start <= c.size < end]
            gain = float(np.median([c.gain for c in mine])) if mine else 0.0
            out.append((s.environ, r.collective, str(r.ranks), str(r.nodes),
                        f"{st.start}-{end - 1}", st.algorithm, f"{gain:.1%}", _ratio(mine),
                        str(len(mine))))
    return out


def table(s: Study) -> list[str]:
    """The recommendation as a Markdown table, with what it leaves to the library."""
    lines = [f"## {s.environ}: {s.family} {s.version} (mapping {s.mapping})", "",
             "| " + " | ".join(COLUMNS[1:]) + " |",
             "| --- | ---: | ---: | --- | --- | ---: | --- | ---: |",
             *("| " + " | ".join(row[1:]) + " |" for row in rows(s))]
    lines += ["", "A step's ratio: the winner's latency over the default's, the median of its "
              "cells with the envelope of their 95 % intervals (a rule needs every cell's whole "
              "interval below 1 - threshold). Above the largest measured size, at other "
              "communicator sizes and for other collectives: the library's own choice (nothing "
              "beyond the measured scales).",
              *(f"- {n}" for n in s.notes)]
    return lines


def studies(frame: pl.DataFrame, mapping: str, threshold: float, settings: detect.Settings,
            allow_unproven: bool = False, unwritable: Unwritable | None = None
            ) -> tuple[list[Study], list[str]]:
    """Every environment's study of a frame (with sizes), and what could not be studied."""
    points, notes = usable(frame, allow_unproven)
    out, said = [], list(notes)
    for environ in sorted(set(points["environ"].cast(pl.String))):
        try:
            s = study(points, environ, mapping, threshold, settings, unwritable)
        except NothingToRecommend as err:
            said.append(f"{environ}: nothing to recommend: {err}")
            continue
        s.notes = [*notes, *s.notes]
        out.append(s)
    return out, said
