"""Turn raw rows (strings, as read from any source) into the one typed frame the tool uses.

- ``None``/``null``/empty strings become nulls (ReFrame writes ``null``, old formats ``None``);
- completion times become UTC (zone-aware stamps converted, naive ones read in ``naive_tz``);
- relative thresholds become absolute bounds (ReFrame logs fractions unless the reference is 0);
- rows whose time or value cannot be read are returned as problems, not dropped silently;
- failures keep their row with a null value;
- records written before the perflog had columns for them carry the osu_mbw_mr window,
  osu_latency_mp's processes and the one-sided window/synchronisation in ``algorithm``
  (``window=64``, ``processes=2``, ``allocate/flush``): they are moved to their own columns
  and ``algorithm`` (collective algorithms only) is left null, so old and new records of
  one measurement are one series;
- ReFrame's version (``%(version)s``, a column ``version``) becomes ``reframe_version``;
- ``warmup`` and ``iterations`` (OSU's ``-x``/``-i``; null: OSU's defaults) are kept as text:
  attributes of a run that a finding names when they changed, not part of a series;
- ``unknown`` lists the series columns the source did not have (an older perflog header, a
  ReFrame 3 line): unknown, not null (``series.join_unknown`` resolves them).
"""

from __future__ import annotations

import polars as pl

from omb_suite import perflog_schema
from omb_suite.perflogs.reader import Problem

#: Perflog columns the normalised frame names otherwise.
RENAMED = {"version": "reframe_version", "perf_value": "value", "perf_unit": "unit",
           "perf_ref": "ref", "perf_lower_thres": "lower", "perf_upper_thres": "upper"}
#: Text columns with a value per run (kept as strings; every other text column is a
#: categorical: few distinct values, a smaller cache and a faster group-by).
ONE_PER_RUN = ("jobid", "session_id", "node_state")
#: The columns as every source's raw rows carry them (one definition: omb_suite.perflog_schema).
STRING_COLUMNS = tuple("reframe_version" if c == "version" else c
                       for c in perflog_schema.typed("text"))
INT_COLUMNS = perflog_schema.typed("int")
NUMBER_COLUMNS = perflog_schema.typed("number")
RAW_COLUMNS = (
    *STRING_COLUMNS, *INT_COLUMNS, *NUMBER_COLUMNS, *perflog_schema.typed("time"),
    "job_completion_time_unix", "source", "line",
)
NULL_WORDS = ("None", "null", "")
#: Columns of the normalised frame, in order: the record's, then what the review derives.
COLUMNS = (
    "time", "test",
    *(RENAMED.get(c, c) for c in perflog_schema.columns() if c not in perflog_schema.typed("time")),
    "unknown", "source", "line",
)
CATEGORICAL = (
    *(RENAMED.get(c, c) for c in perflog_schema.typed("text") if c not in ONE_PER_RUN),
    "test", "source", "unknown",
)
#: Columns that identify a series (series.SERIES_KEYS without the ones every source has).
IDENTITY_COLUMNS = ("mpi_family", *perflog_schema.measurement_columns())
#: What ``algorithm`` held before the perflog had these columns: pattern, {column: group}.
OLD_ALGORITHM = (
    (r"^window=(\d+)$", {"window_size": 1}),
    (r"^processes=(\d+)$", {"processes": 1}),
    (
        r"^(create|allocate|dynamic)/(lock|flush|flush_local|lock_all|pscw|fence)$",
        {"rma_window": 1, "rma_sync": 2},
    ),
)


def _with_all_columns(raw: pl.DataFrame) -> pl.DataFrame:
    if "version" in raw.columns and "reframe_version" not in raw.columns:
        raw = raw.rename({"version": "reframe_version"})  # ReFrame's own %(version)s
    missing = [c for c in RAW_COLUMNS if c not in raw.columns]
    raw = raw.with_columns(pl.lit(None, pl.String).alias(c) for c in missing)
    text = [c for c in RAW_COLUMNS if c not in ("line", "job_completion_time_unix")]
    return raw.select(
        *(
            pl.when(pl.col(c).cast(pl.String).is_in(NULL_WORDS))
            .then(None)
            .otherwise(pl.col(c).cast(pl.String))
            .alias(c)
            for c in text
        ),
        pl.col("job_completion_time_unix").cast(pl.Int64, strict=False),
        pl.col("line").cast(pl.Int32),
    )


def _migrate_algorithm(frame: pl.DataFrame) -> pl.DataFrame:
    """Move what old records logged in ``algorithm`` to its own column (see module doc)."""
    alg = pl.col("algorithm")
    moved = pl.lit(False)
    for pattern, columns in OLD_ALGORITHM:
        hit = alg.str.contains(pattern).fill_null(False)
        frame = frame.with_columns(
            pl.when(hit & pl.col(c).is_null()).then(alg.str.extract(pattern, g))
            .otherwise(pl.col(c)).alias(c)
            for c, g in columns.items()
        )
        moved = moved | hit
    return frame.with_columns(pl.when(moved).then(None).otherwise(alg).alias("algorithm"))


def _unknown(missing: list[str]) -> pl.Expr:
    """Comma-separated series columns the source lacked and no migration filled, or null."""
    if not missing:
        return pl.lit(None, pl.String)
    names = [pl.when(pl.col(c).is_null()).then(pl.lit(c)) for c in missing]
    joined = pl.concat_str(names, separator=",", ignore_nulls=True)
    return pl.when(joined == "").then(None).otherwise(joined)


def _time(naive_tz: str) -> pl.Expr:
    stamp = pl.col("job_completion_time")
    aware = stamp.str.to_datetime("%Y-%m-%dT%H:%M:%S%z", strict=False, time_zone="UTC")
    naive = (
        stamp.str.to_datetime("%Y-%m-%dT%H:%M:%S", strict=False, time_unit="us")
        .dt.replace_time_zone(naive_tz, ambiguous="earliest", non_existent="null")
        .dt.convert_time_zone("UTC")
    )
    unix = pl.from_epoch(pl.col("job_completion_time_unix"), time_unit="s").dt.replace_time_zone(
        "UTC"
    )
    return pl.coalesce(aware.dt.cast_time_unit("us"), naive, unix.dt.cast_time_unit("us"))


def _absolute(bound: str) -> pl.Expr:
    """ReFrame logs thresholds relative to the reference, except when the reference is 0."""
    ref, rel = pl.col("ref"), pl.col(bound)
    return pl.when(ref == 0).then(rel).otherwise(ref * (1 + rel))


def _problems(frame: pl.DataFrame, mask: pl.Expr, reason: str) -> list[Problem]:
    bad = frame.filter(mask)
    return [
        Problem(src, ln or 0, reason, f"{t} {var}={val}")
        for src, ln, t, var, val in bad.select(
            "source", "line", "job_completion_time", "perf_var", "perf_value"
        ).iter_rows()
    ]


def normalise(raw: pl.DataFrame, naive_tz: str = "UTC") -> tuple[pl.DataFrame, list[Problem]]:
    """Typed, UTC, absolute-threshold rows plus the rows that could not be read."""
    if raw.width == 0:
        return empty(), []
    missing = [c for c in IDENTITY_COLUMNS if c not in raw.columns]
    frame = _migrate_algorithm(_with_all_columns(raw))
    frame = frame.with_columns(
        unknown=_unknown(missing), had_value=pl.col("perf_value").is_not_null()
    )
    frame = frame.with_columns(
        time=_time(naive_tz),
        **{c: pl.col(c).cast(pl.Float64, strict=False) for c in NUMBER_COLUMNS},
        **{c: pl.col(c).cast(pl.Float64, strict=False).cast(pl.Int32) for c in INT_COLUMNS},
    )
    no_time = pl.col("time").is_null()
    bad_value = pl.col("perf_value").is_null() & pl.col("had_value")
    problems = _problems(frame, no_time, "unreadable completion time") + _problems(
        frame, bad_value & ~no_time, "performance value is not a number"
    )
    frame = frame.filter(~no_time & ~bad_value).rename(
        {"perf_value": "value", "perf_unit": "unit", "perf_ref": "ref"}
    )
    frame = frame.rename({"perf_lower_thres": "lower", "perf_upper_thres": "upper"})
    frame = frame.with_columns(
        lower=_absolute("lower"),
        upper=_absolute("upper"),
        test=pl.col("name").str.split(" ").list.first(),
        result=pl.col("result").str.to_lowercase(),
    )
    return frame.select(COLUMNS).with_columns(pl.col(CATEGORICAL).cast(pl.Categorical)), problems


def empty() -> pl.DataFrame:
    """A frame with the normalised schema and no rows."""
    frame, _ = normalise(pl.DataFrame({"name": ["x"]}))
    return frame.clear()
