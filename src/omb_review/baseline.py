"""Derive ReFrame reference values from a stable window of history and write them as YAML.

Output format: ReFrame 4.10 external references (``reframe/references/<system>.yaml``):
top-level key = test class, ``$index`` naming the test attributes of each level, then nested
dictionaries down to ``perf_var: [ref, lower, upper, unit]`` with *relative* bounds.

Per series the window is the explicit ``window`` or the last stable segment (runs after the last
change point).  ``ref`` is the window median.  The bound on the bad side is tight: the larger of
``floor`` and 1.5 x the relative distance from the median to the 95th (times) or 5th (rates)
percentile.  The bound on the good side is generous (``generous``): getting faster is not a
failure.  The evidence (n, percentiles, date range) is written as a comment on each entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import numpy as np
import polars as pl
import yaml

from .detect import Settings, change_points, hampel
from .series import SERIES_KEYS, grouped, label, worse_when

PT2PT_INDEX = ["$partition", "$environ", "benchmark", "placement"]
COLLECTIVE_EXTRA = ["algorithm", "num_tasks", "mapping"]
#: Knobs that split a test's measurements (osu_mbw_mr window, osu_latency_mp processes,
#: one-sided window creation and synchronisation): indexed when the test logs them.
KNOBS = ["window_size", "processes", "rma_window", "rma_sync"]


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


def _round(x: float, digits: int = 4) -> float:
    return float(f"{x:.{digits}g}")


def _stable(times: list, values: np.ndarray, sign: int, window, s: Settings) -> np.ndarray:
    if window is not None:
        return np.array([i for i, t in enumerate(times) if window[0] <= t <= window[1]], int)
    cps = change_points(hampel(sign * values), s)
    start = cps[-1][0] if cps else 0
    return np.arange(max(start, len(values) - s.baseline_runs * 2), len(values))


def _entry(row: dict, keys: tuple, window, s: Settings, floor: float, generous: float):
    sign = worse_when(row["unit"])
    ok = [i for i, v in enumerate(row["value"]) if v is not None]
    if sign == 0 or not ok:
        return None
    times = [row["time"][i] for i in ok]
    values = np.array([row["value"][i] for i in ok], float)
    pick = _stable(times, values, sign, window, s)
    if len(pick) < s.min_baseline:
        return None
    v = values[pick]
    med, p05, p95 = (float(x) for x in np.percentile(v, [50, 5, 95]))
    if med == 0:
        return None
    spread = (p95 - med) / med if sign > 0 else (med - p05) / med
    tight = _round(max(floor, 1.5 * spread), 3)
    lower, upper = (-generous, tight) if sign > 0 else (-tight, generous)
    evidence = (
        f"n={len(v)} p05={_round(p05)} median={_round(med)} p95={_round(p95)} "
        f"{times[pick[0]]:%Y-%m-%d}..{times[pick[-1]]:%Y-%m-%d}"
    )
    return Entry(keys, row["perf_var"], _round(med), lower, upper, row["unit"], evidence,
                 times[pick[-1]])


def index_for(test: str, frame: pl.DataFrame, known: dict[str, list[str]]) -> list[str]:
    """The ``$index`` of a test class: from an existing reference file, else by its kind."""
    if test in known:
        return known[test]
    rows = frame.filter(pl.col("test") == test)
    has_alg = rows["algorithm"].drop_nulls().len() > 0
    knobs = [k for k in KNOBS if rows[k].drop_nulls().len() > 0]
    return PT2PT_INDEX + (COLLECTIVE_EXTRA if has_alg else []) + knobs


def _key(index_entry: str, row: dict):
    if index_entry == "$partition":
        return f"{row['system']}:{row['partition']}"
    if index_entry == "$environ":  # the series' latest environment: the one the checks run
        return row["environ"][-1]
    if index_entry not in row:
        raise ValueError(
            f"reference index entry {index_entry!r} is not a perflog column; "
            "log it in the perflog format or use an index without it"
        )
    return row[index_entry]


def derive(
    frame: pl.DataFrame,
    system: str,
    known_index: dict[str, list[str]],
    window: tuple[datetime, datetime] | None = None,
    s: Settings | None = None,
    floor: float = 0.05,
    generous: float = 0.5,
) -> tuple[dict[str, list[str]], dict[str, list[Entry]], list[str]]:
    """Indexes and entries per test class, plus notes on series merged into one key."""
    s = s or Settings()
    frame = frame.filter((pl.col("system") == system) & (pl.col("result") != "fail"))
    if frame.height == 0:
        raise ValueError(f"no passing records for system {system!r}; check --system")
    indexes: dict[str, list[str]] = {}
    chosen: dict[tuple, Entry] = {}
    notes: list[str] = []
    for row in grouped(frame).iter_rows(named=True):
        test = row["test"]
        index = indexes.setdefault(test, index_for(test, frame, known_index))
        keys = (test, *(_key(e, row) for e in index))
        entry = _entry(row, keys, window, s, floor, generous)
        if entry is None:
            continue
        slot = (*keys, entry.perf_var)
        if slot in chosen:
            notes.append(f"{label({k: row[k] for k in SERIES_KEYS})}: shares a reference "
                         "key with another series; the most recent one is kept")
            if chosen[slot].last_time >= entry.last_time:
                continue
        chosen[slot] = entry
    entries: dict[str, list[Entry]] = {}
    for entry in chosen.values():
        entries.setdefault(entry.keys[0], []).append(entry)
    return indexes, entries, notes


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
