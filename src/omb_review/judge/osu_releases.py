"""Where the benchmark itself changed: a series split at an OSU release whose default datatype
differs for its benchmark, so that the gate never judges OSU's change as the MPI's.

A series keeps its runs across MPI and OSU upgrades (``series``), and the gate judges the
upgrade. That is right while the program measures the same thing; OSU 7.5 changed the
reductions' default datatype from ``MPI_CHAR`` to ``MPI_INT`` (the data:
``omb_suite/data/osu_versions.yaml``), so osu_allreduce at 8 B then reduces two integers
instead of eight characters and starts its sweep at 4 B. The runs made before the latest such
change get a ``test`` of their own (``OsuCollective [OSU 7.4: MPI_CHAR]``) and are not judged;
the series goes on from the first run of the release that changed it, and its verdict's
reason says so (``OSU 7.4 -> 7.5: osu_allreduce now MPI_INT (was MPI_CHAR)``). A record
without an OSU version, or of a benchmark the data does not name, is never a change.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from omb_review.judge.detect import Verdict
from omb_review.judge.result import SeriesResult
from omb_review.read.series import SERIES_KEYS
from omb_suite.osu import versions as osu_versions


@dataclass(frozen=True)
class Split:
    """What one series' part is: ``closed``, the runs before the change (not judged)."""

    note: str
    closed: bool


def _method(benchmark: str, version: str) -> str | None:
    try:
        return osu_versions.default_datatype(benchmark, version)
    except ValueError:  # not a release number: unknown, never a change
        return None


def split(frame: pl.DataFrame) -> tuple[pl.DataFrame, dict[tuple, Split], list[str]]:
    """The frame with each changed series' earlier runs under a ``test`` of their own, what
    each part of a split series is (by its series keys), and one line per change."""
    if "osu_version" not in frame.columns or frame.height == 0:
        return frame, {}, []
    pairs = frame.select(pl.col("benchmark").cast(pl.String).alias("_b"),
                         pl.col("osu_version").cast(pl.String).alias("_v")).unique().drop_nulls()
    methods = pl.DataFrame([(b, v, _method(b, v)) for b, v in pairs.iter_rows()],
                           schema={"_b": pl.String, "_v": pl.String, "_m": pl.String},
                           orient="row")
    keys = list(SERIES_KEYS)
    f = (frame.with_row_index("_row")
         .with_columns(pl.col("benchmark").cast(pl.String).alias("_b"),
                       pl.col("osu_version").cast(pl.String).alias("_v"))
         .join(methods, on=["_b", "_v"], how="left")
         .sort("time")
         .with_columns(_now=pl.col("_m").drop_nulls().last().over(keys)))
    old = pl.col("_m").is_not_null() & (pl.col("_m") != pl.col("_now"))
    if not f.select(old.any()).item():
        return frame, {}, []
    f = f.with_columns(
        _from=pl.col("_v").filter(pl.col("_m") == pl.col("_now")).first().over(keys),
        _until=pl.col("_v").filter(old).last().over(keys),
        _test=pl.when(old).then(pl.format("{} [OSU {}: {}]", pl.col("test").cast(pl.String),
                                          pl.col("_v"), pl.col("_m")))
        .otherwise(pl.col("test").cast(pl.String)))
    splits: dict[tuple, Split] = {}
    lines: dict[str, int] = {}
    changed = f.filter(pl.col("_until").is_not_null())
    for row in changed.unique(subset=[*keys, "_test"]).iter_rows(named=True):
        before = row["_m"] if row["_test"] != str(row["test"]) else None
        was = before or _method(row["_b"], row["_until"])
        note = f"OSU {row['_until']} -> {row['_from']}: {row['_b']} now {row['_now']} (was {was})"
        key = tuple(row["_test"] if k == "test" else row[k] for k in keys)
        splits[key] = Split(note, closed=before is not None)
        lines[note] = lines.get(note, 0) + (before is None)
    out = (f.sort("_row").with_columns(pl.col("_test").cast(frame.schema["test"]).alias("test"))
           .select(frame.columns))
    return out, splits, [f"{note}: {n} series split there; the runs before it are kept apart "
                         "and not judged" for note, n in lines.items()]


def mark(results: list[SeriesResult], splits: dict[tuple, Split]) -> None:
    """The runs before a change not judged, and the series after it saying why it begins
    there (its verdict stands: it compares runs of one datatype)."""
    for r in results:
        part = splits.get(tuple(r.keys.get(k) for k in SERIES_KEYS))
        if part is None:
            continue
        if part.closed:
            r.verdict = Verdict("insufficient", reason=f"{part.note}: runs before the change, "
                                "not judged")
            r.first_bad = None
        else:
            r.verdict.reason = f"{part.note}: judged from the change on" + (
                f"; {r.verdict.reason}" if r.verdict.reason else "")
