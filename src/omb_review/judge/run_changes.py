"""What changed between a finding's baseline runs and its first bad run.

After an upgrade the first question is what is different: the perflog records of every run
carry the software (MPI and OSU versions, the concrete Spack specs and the ``spack.lock`` hash),
the nodes, where the ranks really ran and what the library said it used.  For each finding,
the runs of its curve in the baseline window and its first bad run are read back from the
records and every field below whose first-bad value is not among the baseline's is named
(the environment too: an upgrade that renamed it continues the series, ``lineage``).
A missing value (a column an older perflog did not have) is unknown, never a change; a field
that already varied inside the baseline (node lists on a batch system) is named only when the
first bad run's value is new, and says how many values the baseline had.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import polars as pl

from omb_review.read.series import SERIES_KEYS

#: Fields compared, in the order they are shown: software first, then nodes and placement.
FIELDS = (
    "environ", "mpi_version", "osu_version", "reframe_version", "mpi_spec", "osu_spec",
    "spack_lock", "iterations", "warmup", "job_nodelist", "placement_observed",
    "algorithm_evidence",
)
_SHOWN = 3  # baseline values listed per field


@dataclass
class Change:
    """One field whose value in the first bad run is not what the baseline runs had."""

    field: str
    baseline: list[str]  # distinct values in the baseline window, most frequent first (<= 3)
    first_bad: str  # value in the first bad run
    baseline_distinct: int = 1  # > 1: the field varied within the baseline already

    def to_json(self) -> dict:
        return {"field": self.field, "baseline": self.baseline, "first_bad": self.first_bad,
                "baseline_distinct": self.baseline_distinct}


#: One finding as what_changed needs it: curve keys, baseline window, first bad run.
Item = tuple[dict, dict | None, dict | None]


def _when(stamp: str) -> datetime:
    return datetime.fromisoformat(stamp)


def _wanted(items: list[Item], keys: list[str]) -> pl.DataFrame:
    rows = []
    for idx, (curve, window, bad) in enumerate(items):
        if window and bad:
            rows.append({**{k: None if curve.get(k) is None else str(curve[k]) for k in keys},
                         "idx": idx, "start": _when(window["start"]),
                         "end": _when(window["end"]), "bad": _when(bad["time"])})
    schema = {**dict.fromkeys(keys, pl.String), "idx": pl.Int64,
              **dict.fromkeys(("start", "end", "bad"), pl.Datetime("us", "UTC"))}
    return pl.DataFrame(rows, schema=schema)


def _runs(items: list[Item], frame: pl.DataFrame) -> pl.DataFrame:
    """One row per run (baseline or first bad) of each finding's curve, with the fields."""
    keys = [k for k in SERIES_KEYS if k in items[0][0]]
    fields = [f for f in FIELDS if f in frame.columns and f not in keys]  # keys cannot differ
    wanted = _wanted(items, keys)
    tests = wanted["test"].unique().to_list() if "test" in keys else []
    records = frame.filter(pl.col("test").cast(pl.String).is_in(tests)) if tests else frame
    records = records.select(
        *(pl.col(k).cast(pl.String) for k in keys), "time",
        *(pl.col(f).cast(pl.String) for f in fields),
    )
    joined = records.join(wanted, on=keys, how="inner", nulls_equal=True)
    is_bad = pl.col("time") == pl.col("bad")
    in_base = (pl.col("time") >= pl.col("start")) & (pl.col("time") <= pl.col("end"))
    return (joined.filter(is_bad | in_base).with_columns(first_bad=is_bad)
            .unique(subset=["idx", "time"], keep="first").select("idx", "first_bad", *fields))


def _compare(runs: pl.DataFrame, fields: list[str]) -> list[Change]:
    bad, base = runs.filter(pl.col("first_bad")), runs.filter(~pl.col("first_bad"))
    found = []
    for name in fields:
        now = bad[name].drop_nulls()
        before = base[name].drop_nulls()
        if not len(now) or not len(before) or now[0] in set(before.to_list()):
            continue  # unknown on one side (not logged), or one of the baseline's values
        counts = before.value_counts(sort=True)
        found.append(Change(name, counts[name].head(_SHOWN).to_list(), now[0], counts.height))
    return found


def what_changed(items: list[Item], frame: pl.DataFrame) -> list[list[Change]]:
    """For each (curve keys, baseline window, first bad run): the fields that differ."""
    if not items:
        return []
    runs = _runs(items, frame)
    fields = [f for f in FIELDS if f in runs.columns]
    by_idx = {idx: part for (idx,), part in runs.group_by("idx")}
    return [_compare(by_idx[i], fields) if i in by_idx else [] for i in range(len(items))]
