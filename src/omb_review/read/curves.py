"""Whole OSU curves (every size OSU measured) read back from the curve logs and joined to runs.

The checks append each run's whole OSU table to ``<TestClass>.curves.jsonl`` beside the
perflog (format: ``omb_suite.osu.curvelog``).  ``load_curves`` reads every such file below a
perflog directory and joins each curve to its run's perflog records (system, partition,
environment, test name, job id and completion time), so every row carries the run's identity
(placement, mapping, algorithm, nodes, tasks, MPI, session tag ...) and is shaped like the
records after ``series.with_size``: ``perf_var`` ``<metric>_<size>``, ``metric``, ``size``,
``value``, ``unit``.  Malformed lines and curves whose run no perflog has are reported as
problems (file and line), never dropped silently.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import polars as pl

from omb_review.read.series import with_size
from omb_suite import perflog_schema
from omb_suite.osu.curvelog import FORMAT, RUN_FIELDS, SUFFIX
from omb_suite.perflogs.problem import Problem

#: The perflog columns a curve is joined on (``time``: the completion time, to the second).
JOIN = ("system", "partition", "environ", "name", "jobid", "time")
#: Table columns that are not measurements of the curve.
NOT_MEASURED = {"size", "iterations", "validation", "transmit_size"}
#: Columns of the frame returned (identity from the perflog records, then the curve).
IDENTITY = (
    *JOIN, "test", "job_nodelist", *perflog_schema.measurement_columns(), "mpi_family",
    "mpi_version", "osu_version", "session_tag", "result",
)
_CURVE = {"run": pl.Int64, "metric": pl.String, "unit": pl.String,
          "size": pl.List(pl.Int64), "value": pl.List(pl.Float64)}


def discover(root: Path) -> list[Path]:
    """Every curve log below a perflog directory."""
    return sorted(p for p in root.rglob(f"*{SUFFIX}") if p.is_file())


def _run_row(line: dict) -> dict:
    stamp = datetime.fromtimestamp(int(float(line["job_completion_time_unix"])), timezone.utc)
    return {**{f: None if line.get(f) is None else str(line[f]) for f in JOIN[:-1]},
            "time": stamp, "curve_osu_version": line.get("osu_version")}


def _measured(line: dict, run: int) -> list[dict]:
    """One entry per numeric column of the table: its sizes and values as lists."""
    columns = line["columns"]
    by_column = dict(zip(columns, zip(*line["rows"], strict=True), strict=True)) \
        if line["rows"] else {}
    sizes = [int(s) for s in by_column["size"]] if "size" in by_column else None
    return [
        {"run": run, "metric": c, "unit": line["units"].get(c),
         "size": sizes or [None] * len(values), "value": [float(v) for v in values]}
        for c, values in by_column.items() if c not in NOT_MEASURED
    ]


def _check(line: object) -> str | None:
    """Why a decoded line is not a curve record, or None."""
    if not isinstance(line, dict):
        return "not a JSON object"
    if line.get("format") != FORMAT:
        return f"unknown curve log format {line.get('format')!r} (this omb-review reads {FORMAT})"
    missing = [f for f in (*RUN_FIELDS[:6], "columns", "units", "rows") if f not in line]
    return f"missing {', '.join(missing)}" if missing else None


def read_curves(root: Path) -> tuple[pl.DataFrame, pl.DataFrame, list[Problem]]:
    """Runs (one row each, with the ``JOIN`` columns), their curves (one row per run and
    measured column, sizes and values as lists) and the lines that could not be read."""
    runs, curves, problems = [], [], []
    for path in discover(root):
        label = str(path.relative_to(root))
        for number, text in enumerate(path.read_text().splitlines(), 1):
            if not text.strip():
                continue
            try:
                line = json.loads(text)
                why = _check(line)
                if why is None:
                    found = _measured(line, len(runs))
                    runs.append({**_run_row(line), "source": label, "line": number})
                    curves += found
            except (ValueError, TypeError, KeyError) as err:
                why = f"unreadable curve record: {err}"
            if why:
                problems.append(Problem(label, number, why, text[:200]))
    run_schema = {**dict.fromkeys(JOIN[:-1], pl.String), "time": pl.Datetime("us", "UTC"),
                  "curve_osu_version": pl.String, "source": pl.String, "line": pl.Int64}
    return (pl.DataFrame(runs, schema=run_schema), pl.DataFrame(curves, schema=_CURVE),
            problems)


def load_curves(root: Path, records: pl.DataFrame) -> tuple[pl.DataFrame, list[Problem]]:
    """Every size of every curve below ``root`` with its run's identity from ``records`` (the
    normalised perflog frame, e.g. ``ingest.load(root).frame``), oldest run first."""
    runs, curves, problems = read_curves(root)
    identity = [c for c in IDENTITY if c in records.columns]
    known = (records.select(identity)
             .with_columns(pl.col(c).cast(pl.String) for c in JOIN if c != "time")
             .unique(subset=list(JOIN), keep="first").with_columns(matched=pl.lit(True)))
    joined = runs.with_row_index("run").join(known, on=list(JOIN), how="left", nulls_equal=True)
    orphans = joined.filter(pl.col("matched").is_null())
    problems += [
        Problem(src, ln, "curve of a run that no perflog record has (system, partition, "
                "environ, name, jobid and completion time)", f"jobid {job} {name}")
        for src, ln, job, name in orphans.select("source", "line", "jobid", "name").iter_rows()
    ]
    joined = joined.filter(pl.col("matched").is_not_null()).with_columns(
        osu_version=pl.coalesce(pl.col("osu_version").cast(pl.String), "curve_osu_version"),
    ).drop("curve_osu_version", "source", "line", "matched")
    points = curves.explode("size", "value", empty_as_null=False).join(
        joined.with_columns(pl.col("run").cast(pl.Int64)), on="run", how="inner")
    perf_var = pl.when(pl.col("size").is_null()).then(pl.col("metric")).otherwise(
        pl.concat_str("metric", pl.lit("_"), pl.col("size").cast(pl.String)))
    return (points.with_columns(perf_var=perf_var)
            .select(*identity, "perf_var", "metric", "size", "value", "unit", "run")
            .sort("time", "run", "metric", "size")), problems


def with_whole_curves(frame: pl.DataFrame, points: pl.DataFrame) -> pl.DataFrame:
    """The records (after ``series.with_size``) plus every curve point they do not hold: the
    sizes OSU measured that the checks did not log as performance variables."""
    if points.height == 0:
        return frame
    logged = frame.select(*(pl.col(c).cast(pl.String) for c in ("name", "jobid", "perf_var")),
                          "time")
    extra = points.with_columns(pl.col(c).cast(pl.String) for c in ("name", "jobid")).join(
        logged, on=["name", "jobid", "time", "perf_var"], how="anti", nulls_equal=True)
    shared = [c for c in extra.columns if c in frame.columns]
    extra = extra.select(pl.col(c).cast(frame.schema[c]) for c in shared)
    return pl.concat([frame, extra], how="diagonal_relaxed")


def report_frame(root: Path, records: pl.DataFrame) -> tuple[pl.DataFrame, list[Problem]]:
    """What the report draws curves and fits from: the records (``series.with_size``) with
    every size of the curve logs below ``root``, and the curve lines that could not be used."""
    points, problems = load_curves(root, records)
    return with_whole_curves(with_size(records), points), problems
