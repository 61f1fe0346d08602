"""Schema drift: records whose source lacked some series columns join the series they belong to.

A perflog header changes over the years (ReFrame rotates the old file to ``.log.h0``): an older
file may lack ``placement``, a ReFrame 3 perflog has no benchmark columns at all. A missing
column is unknown, not a different value: such records (``unknown`` lists the columns) join the
series they match on every column they do have, when that series is unique; among several,
the one whose records carry the same check name (``name``) wins. Otherwise they stay a series
of their own and a note says which series they could have been.

Records are resolved fewest unknown columns first, so a chain of header changes (ReFrame 3,
then a ReFrame 4 header without ``placement``, then the current one) ends in one series.
"""

from __future__ import annotations

import polars as pl

from omb_review.read.series import SERIES_KEYS

_SHOWN = 3  # candidate series named in a note


def join_unknown(frame: pl.DataFrame) -> tuple[pl.DataFrame, list[str]]:
    """The frame with unknown series columns filled where one series matches; notes on the
    records that could not be placed."""
    notes: list[str] = []
    for unknown in _unknown_sets(frame):
        if _fuller(frame, unknown):
            frame, more = _resolve(frame, unknown)
            notes += more
    return frame, notes


def _unknown_sets(frame: pl.DataFrame) -> list[str]:
    values = frame["unknown"].cast(pl.String).drop_nulls().unique().to_list()
    return sorted(values, key=lambda u: (len(u.split(",")), u))


def _fuller(frame: pl.DataFrame, unknown: str) -> list[str | None]:
    """Unknown sets (None: all known) of records that could take these in: strict subsets.
    Cheap (distinct values only), so a tree of one header costs no join at all."""
    cols = set(unknown.split(","))
    values = frame["unknown"].cast(pl.String).unique().to_list()
    return [u for u in values if u is None or set(u.split(",")) < cols]


def _resolve(frame: pl.DataFrame, unknown: str) -> tuple[pl.DataFrame, list[str]]:
    cols = unknown.split(",")
    known = [k for k in SERIES_KEYS if k not in cols]
    is_part = (pl.col("unknown").cast(pl.String) == unknown).fill_null(False)
    part, rest = frame.filter(is_part), frame.filter(~is_part)
    smaller = [u for u in _fuller(rest, unknown) if u is not None]
    targets = rest.filter(
        pl.col("unknown").is_null() | pl.col("unknown").cast(pl.String).is_in(smaller)
    ).select(*SERIES_KEYS, "name", "unknown").unique()
    groups = part.select(*known, "name").unique()
    cand = groups.join(
        targets.rename({"name": "target_name", "unknown": "target_unknown"}),
        on=known, how="inner", nulls_equal=True,
    )
    chosen, notes = _choose(cand, known, cols, part)
    if chosen.height == 0:
        return frame, notes
    joined = part.join(chosen, on=[*known, "name"], how="left", nulls_equal=True, suffix="_to")
    hit = pl.col("matched").fill_null(False)
    joined = joined.with_columns(
        *(pl.when(hit).then(pl.col(f"{c}_to")).otherwise(pl.col(c)).alias(c) for c in cols),
        pl.when(hit).then(pl.col("target_unknown")).otherwise(pl.col("unknown")).alias("unknown"),
    ).select(frame.columns)
    return pl.concat([rest, joined], how="vertical_relaxed"), notes


def _choose(
    cand: pl.DataFrame, known: list[str], cols: list[str], part: pl.DataFrame
) -> tuple[pl.DataFrame, list[str]]:
    """One target series per group of unknown records (by series count, then by name)."""
    group = [*known, "name"]
    per_series = cand.group_by(*group, *cols).agg(
        same_name=(pl.col("target_name") == pl.col("name")).any(),
        target_unknown=pl.col("target_unknown").sort(nulls_last=False).first(),
    )
    counts = per_series.group_by(group).agg(
        n=pl.len(), n_named=pl.col("same_name").sum()
    )
    per_series = per_series.join(counts, on=group, nulls_equal=True)
    unique = pl.col("n") == 1
    by_name = (pl.col("n_named") == 1) & pl.col("same_name")
    chosen = per_series.filter(unique | by_name).select(
        *group, *cols, "target_unknown", matched=pl.lit(True)
    )
    ambiguous = per_series.filter(~unique & (pl.col("n_named") != 1))
    return chosen, _notes(ambiguous, cols, part)


def _notes(ambiguous: pl.DataFrame, cols: list[str], part: pl.DataFrame) -> list[str]:
    """One note per check name: how many records, and the series values they could take."""
    notes = []
    for (name,), rows in ambiguous.group_by("name", maintain_order=True):
        variables = rows["perf_var"].cast(pl.String).unique()
        n = part.filter(
            (pl.col("name") == name) & pl.col("perf_var").cast(pl.String).is_in(variables.implode())
        ).height
        options = rows.select(cols).unique(maintain_order=True)
        differ = [c for c in cols if options[c].n_unique() > 1] or cols
        also = [c for c in cols if c not in differ]
        # sorted: the note names the same series in the same order on every run
        options = options.select(differ).unique().sort(differ, nulls_last=True)
        shown = " | ".join(
            ", ".join(f"{c}={v}" for c, v in r.items()) for r in options.head(_SHOWN).to_dicts()
        )
        more = f" and {options.height - _SHOWN} more" if options.height > _SHOWN else ""
        nor = f" (nor {', '.join(also)})" if also else ""
        notes.append(
            f"{n} records of {name!r} have no column {', '.join(differ)}{nor} and match "
            f"{options.height} series ({shown}{more}): kept as a series of their own"
        )
    return notes
