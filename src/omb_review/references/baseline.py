"""Derive ReFrame reference values from a stable window of history and write them as YAML.

Output format: ReFrame 4.10 external references (``reframe/references/<system>.yaml``):
top-level key = test class, ``$index`` naming the test attributes of each level, then nested
dictionaries down to ``perf_var: [ref, lower, upper, unit]`` with *relative* bounds.

Per series the window is the explicit ``window`` or the last stable segment (runs after the last
change point).  ``ref`` is the window median.  The bound on the bad side is tight: the larger of
``floor`` and 1.5 x the relative distance from the median to the 95th (times) or 5th (rates)
percentile.  The bound on the good side is generous (``generous``): getting faster is not a
failure.  The evidence (n, percentiles, date range) is written as a comment on each entry.

A series with fewer runs than the gate needs (``Settings.min_baseline``: one or two sessions)
gets a *provisional* reference (``provisional`` set): the median of its runs, the bad side the
largest of ``floor``, the spread OSU itself reported in those runs (``max_latency_<size>`` over
``avg_latency_<size>``, ``init_max`` over ``init_avg``), 1.5 x the spread of the runs, and
else the stated ``tolerance``; its comment says ``PROVISIONAL``.  Deriving again once the
series has enough runs replaces it.  Without provisional references such series are listed
(``short``) with the runs they have and need.

Keys cannot collide: the ``$index`` of a test class is ``$partition``, ``$environ`` (the
series' latest environment: the one the checks run now) and every column of
:data:`INDEX_COLUMNS` its records carry, in that order; an existing file's ``$index`` is kept
when it tells the test's series apart, else replaced (a note says which columns it lacked).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import numpy as np
import polars as pl
import yaml

from omb_review.judge.detect import Settings, change_points, hampel
from omb_review.read.series import SERIES_KEYS, counts, grouped, label, worse_when
from omb_suite import perflog_schema

#: Perflog columns (and check attributes) that distinguish a test's measurements, in the
#: order they are indexed: what runs, where, with which buffers, on how many nodes and ranks,
#: with which algorithm and knobs (osu_mbw_mr window, osu_latency_mp processes, one-sided
#: window creation and synchronisation).
INDEX_COLUMNS = perflog_schema.measurement_columns()
#: Per metric, the variables of the same run in which OSU reports its own spread (min, max).
OSU_SPREAD = {"avg_latency": ("min_latency", "max_latency"), "init_avg": ("init_min", "init_max")}


@dataclass
class Entry:
    """One reference value with the evidence it rests on."""

    keys: tuple
    perf_var: str
    ref: float
    lower: float
    upper: float
    unit: str
    evidence: str
    last_time: datetime
    provisional: bool = False


@dataclass
class Limits:
    """How bounds are set: ``floor`` (tightest), ``generous`` (good side), ``tolerance``
    (a provisional reference's bad side without a spread to go by), ``provisional`` (allowed)."""

    floor: float = 0.05
    generous: float = 0.5
    tolerance: float = 0.25
    provisional: bool = True


@dataclass
class References:
    """What ``derive`` found: per test class its ``$index`` and entries, and what it said."""

    indexes: dict[str, list[str]] = field(default_factory=dict)
    entries: dict[str, list[Entry]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # indexes replaced, keys shared
    short: list[str] = field(default_factory=list)  # series with too few runs, none written
    collisions: int = 0  # series that share a key with another (the most recent is kept)

    @property
    def written(self) -> int:
        return sum(map(len, self.entries.values()))

    @property
    def provisional(self) -> int:
        return sum(e.provisional for es in self.entries.values() for e in es)


def _round(x: float, digits: int = 4) -> float:
    return float(f"{x:.{digits}g}")


def _stable(times: list, values: np.ndarray, sign: int, window, s: Settings) -> np.ndarray:
    if window is not None:
        return np.array([i for i, t in enumerate(times) if window[0] <= t <= window[1]], int)
    cps = change_points(hampel(sign * values), s)
    start = cps[-1][0] if cps else 0
    return np.arange(max(start, len(values) - s.baseline_runs * 2), len(values))


def _osu_spread(row: dict, times: list, sign: int, spreads: dict) -> float | None:
    """The bad-side spread OSU reported in these runs (max over avg for times), if it did."""
    metric, _, size = str(row["perf_var"]).rpartition("_")
    metric, size = (metric, f"_{size}") if size.isdigit() else (str(row["perf_var"]), "")
    pair = OSU_SPREAD.get(metric)
    if pair is None:
        return None
    curve = tuple(str(row[k]) for k in SERIES_KEYS if k not in ("perf_var", "unit"))
    found = []
    for t in times:
        low, high = (spreads.get((curve, t, f"{v}{size}")) for v in pair)
        avg = row["value"][row["time"].index(t)]
        bound = high if sign > 0 else low
        if bound is not None and avg:
            found.append(abs(bound - avg) / avg)
    return max(found) if found else None


def _same_counts(row: dict, ok: list[int]) -> tuple[list[int], str]:
    """The runs with the OSU counts (``-i``/``-x``: what a mode sets) of the series' newest
    run, and what was left out: a reference holds for the mode that will be checked against
    it, and runs of another mode measure something else (as ``check`` compares)."""
    none = [None] * (max(ok) + 1)
    ran = [counts((row.get("iterations") or none)[i], (row.get("warmup") or none)[i])
           for i in ok]
    kept = [i for i, c in zip(ok, ran, strict=True) if c == ran[-1]]
    if len(kept) == len(ok):
        return ok, ""
    seen = sorted(set(ran) - {ran[-1]})
    return kept, (f"({len(ok) - len(kept)} runs of other OSU counts -i/-x {', '.join(seen)} "
                  f"left out; these ran {ran[-1]})")


def _entry(row: dict, keys: tuple, window, s: Settings, limits: Limits, spreads: dict):
    """The series' reference, or a string saying why there is none."""
    sign = worse_when(row["unit"])
    ok = [i for i, v in enumerate(row["value"]) if v is not None]
    if sign == 0:
        return f"unit {row['unit']!r}: not known whether higher or lower is worse"
    if not ok:
        return "every run failed"
    ok, other = _same_counts(row, ok)
    times = [row["time"][i] for i in ok]
    values = np.array([row["value"][i] for i in ok], float)
    pick = _stable(times, values, sign, window, s)
    if not len(pick):
        return "no run in the window"
    v = values[pick]
    med, p05, p95 = (float(x) for x in np.percentile(v, [50, 5, 95]))
    if med == 0:
        return "median 0: no relative bound"
    provisional = len(pick) < s.min_baseline
    if provisional and not limits.provisional:
        return f"{len(pick)} runs, {s.min_baseline} needed"
    spread = (p95 - med) / med if sign > 0 else (med - p05) / med
    tight = max(limits.floor, 1.5 * spread)
    how = ""
    if provisional:
        osu = _osu_spread(row, [times[i] for i in pick], sign, spreads)
        runs = 1.5 * float(np.ptp(v)) / abs(med)
        tight = max(limits.floor, runs, osu if osu is not None else limits.tolerance)
        how = (f"PROVISIONAL ({len(v)} of {s.min_baseline} runs; bound from "
               + (f"OSU's own min/max spread {osu:.3g}" if osu is not None else
                  f"the stated tolerance {limits.tolerance}") + ") ")
    if other:
        how += f"{other} "
    tight = _round(tight, 3)
    if sign < 0 and tight > 1:  # ReFrame refuses a lower bound below -1 (a value below 0)
        how += f"bound -{tight} clamped to -1 (ReFrame's least: the spread exceeds the value) "
        tight = 1.0
    lower, upper = (-limits.generous, tight) if sign > 0 else (-tight, limits.generous)
    evidence = (
        f"{how}n={len(v)} p05={_round(p05)} median={_round(med)} p95={_round(p95)} "
        f"{times[pick[0]]:%Y-%m-%d}..{times[pick[-1]]:%Y-%m-%d}"
    )
    return Entry(keys, row["perf_var"], _round(med), lower, upper, row["unit"], evidence,
                 times[pick[-1]], provisional)


def derived_index(rows: pl.DataFrame) -> list[str]:
    """``$partition``, ``$environ`` and every :data:`INDEX_COLUMNS` column the records carry."""
    return ["$partition", "$environ",
            *(c for c in INDEX_COLUMNS if rows[c].drop_nulls().len() > 0)]


def _key(index_entry: str, row: dict):
    if index_entry == "$partition":
        return f"{row['system']}:{row['partition']}"
    if index_entry == "$environ":  # the series' latest environment: the one the checks run
        return row["environ"][-1]
    if index_entry not in row:
        raise KeyError(index_entry)
    return row[index_entry]


def _keys(index: list[str], rows: list[dict]) -> list[tuple] | str:
    """Each series' key under ``index``, or why the index cannot tell them apart."""
    try:
        keys = [(r["test"], *(_key(e, r) for e in index), r["perf_var"]) for r in rows]
    except KeyError as err:
        return f"its entry {err.args[0]!r} is not a perflog column"
    if len(set(keys)) < len(keys):
        return "it gives two series one key"
    return keys


def _index(test: str, rows: list[dict], frame: pl.DataFrame, known: dict[str, list[str]],
           notes: list[str]) -> list[str]:
    """The test's ``$index``: the known one where it tells the series apart, else derived."""
    derived = derived_index(frame.filter(pl.col("test") == test))
    if test not in known:
        return derived
    why = _keys(known[test], rows)
    if isinstance(why, list):
        return known[test]
    missing = [c for c in derived if c not in known[test]]
    notes.append(f"{test}: the existing $index [{', '.join(known[test])}] is replaced by "
                 f"[{', '.join(derived)}]: {why}"
                 + (f" (it lacks {', '.join(missing)})" if missing else ""))
    return derived


def _spreads(frame: pl.DataFrame) -> dict:
    """(curve keys, time, variable) -> value of the variables in which OSU reports spread."""
    names = "|".join(v for pair in OSU_SPREAD.values() for v in pair)
    rows = frame.filter(pl.col("perf_var").cast(pl.String).str.contains(f"^({names})(_\\d+)?$"))
    curve = [k for k in SERIES_KEYS if k not in ("perf_var", "unit")]
    return {(tuple(str(r[k]) for k in curve), r["time"], str(r["perf_var"])): r["value"]
            for r in rows.iter_rows(named=True) if r["value"] is not None}


def derive(
    frame: pl.DataFrame,
    system: str,
    known_index: dict[str, list[str]],
    window: tuple[datetime, datetime] | None = None,
    s: Settings | None = None,
    limits: Limits | None = None,
) -> References:
    """Indexes and entries per test class, and what could not be written and why."""
    s, limits = s or Settings(), limits or Limits()
    frame = frame.filter((pl.col("system") == system) & pl.col("result").ne_missing("fail"))
    if frame.height == 0:
        raise ValueError(f"no passing records for system {system!r}; check --system")
    out = References()
    chosen: dict[tuple, Entry] = {}
    spreads = _spreads(frame)
    by_test: dict[str, list[dict]] = {}
    for row in grouped(frame).iter_rows(named=True):
        by_test.setdefault(row["test"], []).append(row)
    for test, rows in by_test.items():
        index = out.indexes[test] = _index(test, rows, frame, known_index, out.notes)
        for row in rows:
            keys = (test, *(_key(e, row) for e in index))
            entry = _entry(row, keys, window, s, limits, spreads)
            name = label({k: row[k] for k in SERIES_KEYS})
            if isinstance(entry, str):
                out.short.append(f"{name}: {entry}")
                continue
            slot = (*keys, entry.perf_var)
            if slot in chosen:
                out.collisions += 1
                out.notes.append(f"{name}: shares a reference key with another series; the "
                                 "most recent one is kept")
                if chosen[slot].last_time >= entry.last_time:
                    continue
            chosen[slot] = entry
    for entry in chosen.values():
        out.entries.setdefault(entry.keys[0], []).append(entry)
    return out


def known_indexes(path: Path | None) -> dict[str, list[str]]:
    """``$index`` per test class of an existing reference file (empty if none)."""
    if path is None or not path.is_file():
        return {}
    data = yaml.safe_load(path.read_text()) or {}
    return {t: list(v["$index"]) for t, v in data.items() if isinstance(v, dict) and "$index" in v}


def _scalar(value) -> str:
    """A YAML scalar as it would appear inside a flow sequence."""
    return yaml.safe_dump([value], default_flow_style=True, width=10**6).strip()[1:-1]


def render(indexes, entries: dict[str, list[Entry]], header: list[str]) -> str:
    """The reference file text: nested mappings, one flow list per variable, evidence comments."""
    lines = [f"# {h}" for h in header]
    for test in sorted(entries):
        lines += ["", f"{_scalar(test)}:", f"  $index: [{', '.join(indexes[test])}]"]
        previous: tuple = ()
        for e in sorted(entries[test], key=lambda e: (tuple(map(str, e.keys)), e.perf_var)):
            path = e.keys[1:]
            pairs = enumerate(zip(path, previous, strict=False))
            common = next((i for i, (a, b) in pairs if a != b), min(len(path), len(previous)))
            for depth in range(common, len(path)):
                lines.append(f"{'  ' * (depth + 1)}{_scalar(path[depth])}:")
            previous = path
            ref = f"[{e.ref!r}, {e.lower!r}, {e.upper!r}, {_scalar(e.unit)}]"
            lines.append(f"{'  ' * (len(path) + 1)}{_scalar(e.perf_var)}: {ref}  # {e.evidence}")
    return "\n".join(lines) + "\n"
