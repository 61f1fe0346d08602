"""Chart data of the report: every curve's runs and values, compact, for the browser to draw.

A chart is one curve (a test's identity without the size, :data:`findings.CURVE_KEYS`) and one
metric (``latency``, ``bandwidth``, ``min_latency`` ...).  It holds its runs, oldest first (time,
job id, and an ``info`` line: nodes, MPI and OSU versions, Spack lock), and per variable (message
size) one value per run, ``null`` where that run has none (failed, or not measured).  The page's
script draws the time series (hover, zoom, change points, reference band) and the size curve
before vs after from it; nothing is rendered here, which is what makes the report fast: drawing
2,000 PNGs with matplotlib was 80% of the old report's time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime

import polars as pl

from omb_review.judge.findings import CURVE_KEYS
from omb_review.judge.result import SeriesResult
from omb_review.read.series import SERIES_KEYS, curve_label

CHART_KEYS = [*CURVE_KEYS, "metric", "unit"]
#: What a run's hover line says, in this order: (label, column).
INFO = (("nodes", "job_nodelist"), ("mpi", "mpi_spec"), ("osu", "osu_version"),
        ("lock", "spack_lock"), ("reframe", "reframe_version"))
SIG_FIGS = 6  # values are printed by OSU with 2 decimals: 6 significant digits lose nothing


class Raw(str):
    """JSON text put into the page as it is (see :func:`omb_review.report.page.to_json`)."""


@dataclass
class Split:
    """Before/after division for size curves of charts without a finding."""

    when: datetime
    caption: str


def plain(value):
    """A JSON-able, comparable form of a key value (categoricals and ints as they print)."""
    return value if value is None or isinstance(value, (int, float, str)) else str(value)


def _info(frame: pl.DataFrame) -> pl.Expr:
    parts = [pl.lit(f"{label} ") + pl.col(col).cast(pl.String)
             for label, col in INFO if col in frame.columns]
    return pl.concat_str(parts, separator="; ", ignore_nulls=True) if parts else pl.lit("")


def _verdicts(results: list[SeriesResult]) -> dict[tuple, SeriesResult]:
    return {tuple(str(plain(r.keys.get(k))) for k in SERIES_KEYS): r for r in results}


def _json_list(col: str) -> pl.Expr:
    """The column's values of one group as a JSON array text (null where missing)."""
    text = pl.col(col).cast(pl.String).fill_null("null")
    return pl.lit("[") + text.str.join(",") + pl.lit("]")


def _json_of_list(col: str) -> pl.Expr:
    """A list column as JSON array texts (null where missing)."""
    items = pl.col(col).list.eval(pl.element().cast(pl.String).fill_null("null"))
    return pl.lit("[") + items.list.join(",") + pl.lit("]")


def _series(row: dict, keys: dict, verdicts: dict[tuple, SeriesResult]) -> dict:
    """One variable of a chart: values per run, reference band, change points, verdict."""
    var = str(row["perf_var"])
    item = {"var": var, "size": row["size"], "v": Raw(row["v"])}
    if row["band"]:
        item |= {"lo": Raw(row["lo"]), "hi": Raw(row["hi"])}
    ident = tuple(str(plain({**keys, "perf_var": var}.get(k))) for k in SERIES_KEYS)
    result = verdicts.get(ident)
    if result is not None:
        item |= {"status": result.verdict.status, "series": result.series,
                 "cp": [c["time"] for c in result.change_points]}
    return item


def _dense(data: pl.DataFrame, runs: pl.DataFrame) -> pl.DataFrame:
    """Per chart and variable, its values over all the chart's runs as JSON array texts.
    Most variables have a value (or a failure) in every run of their chart: their lists are
    written as they are; the few with runs missing are filled with nulls here."""
    count = runs.group_by("chart").agg(n=pl.len())
    finite = [pl.when(pl.col(c).is_finite()).then(pl.col(c)).alias(c)
              for c in ("value", "lower", "upper")]
    per = (data.with_columns(finite).group_by("chart", "perf_var", "size")
           .agg(pl.col("run", "value", "lower", "upper").sort_by("run"),
                band=(pl.col("lower").is_not_null() | pl.col("upper").is_not_null()).any())
           .join(count, on="chart"))
    full = per.filter(pl.col("run").list.len() == pl.col("n")).select(
        "chart", "perf_var", "size", "band", v=_json_of_list("value"),
        lo=_json_of_list("lower"), hi=_json_of_list("upper"))
    gaps = [{**{k: row[k] for k in ("chart", "perf_var", "size", "band")},
             **{name: json.dumps(_filled(row["run"], row[col], row["n"]))
                for name, col in (("v", "value"), ("lo", "lower"), ("hi", "upper"))}}
            for row in per.filter(pl.col("run").list.len() != pl.col("n")).iter_rows(named=True)]
    if gaps:
        full = pl.concat([full, pl.DataFrame(gaps, schema=full.schema)])
    return full.sort("chart", "size", "perf_var", nulls_last=True)


def _filled(runs: list[int], values: list, n: int) -> list:
    out = [None] * n
    for r, v in zip(runs, values, strict=True):
        out[r] = v
    return out


def charts(frame: pl.DataFrame, results: list[SeriesResult]) -> tuple[list[dict], list[str]]:
    """Every chart of the frame (with ``size``/``metric`` columns) and the run info strings
    (runs refer to them by index: a nightly session's hundreds of records share one)."""
    keys = [k for k in CHART_KEYS if k in frame.columns]
    shown = [c for _, c in INFO if c in frame.columns]  # the hover line, built once per run
    band = [c for c in ("lower", "upper") if c in frame.columns]
    # one hash of ~20 key columns numbers the charts: joins on them cost seconds
    chart = pl.struct(keys).hash().rank("dense").cast(pl.Int64) - 1
    data = frame.filter(pl.col("perf_var").is_not_null()).select(
        *keys, "perf_var", "size", "jobid", *shown, *band, chart=chart,
        t=pl.col("time").dt.epoch("s"), value=pl.col("value").round_sig_figs(SIG_FIGS))
    if len(band) < 2:
        data = data.with_columns(pl.lit(None, pl.Float64).alias(c)
                                 for c in ("lower", "upper") if c not in band)
    ids = data.select("chart", *keys).unique("chart").sort("chart")
    runs = (data.group_by("chart", "t").agg(pl.col("jobid", *shown).first())
            .with_columns(info=_info(frame)).sort("chart", "t")
            .with_columns(run=pl.int_range(pl.len()).over("chart"),
                          i=pl.col("info").rank("dense") - 1))
    infos = runs.unique("i").sort("i")["info"]
    data = (data.select("chart", "t", "perf_var", "size", "value", "lower", "upper")
            .join(runs.select("chart", "t", "run"), on=["chart", "t"])
            .unique(["chart", "perf_var", "run"], keep="last"))
    per_var = _dense(data, runs)
    verdicts = _verdicts(results)
    by_chart = {c: d for (c,), d in per_var.partition_by("chart", as_dict=True).items()}
    job = pl.lit('"') + pl.col("jobid").cast(pl.String).str.replace_all(r'(["\\])', r"\$1") \
        + pl.lit('"')
    run_lists = {r["chart"]: r for r in runs.with_columns(job=job).group_by("chart").agg(
        t=_json_list("t"), job=_json_list("job"), info=_json_list("i")).iter_rows(named=True)}
    out = []
    for row in ids.iter_rows(named=True):
        chart_keys = {k: plain(row[k]) for k in keys}
        r = run_lists[row["chart"]]
        series = [_series(s, chart_keys, verdicts)
                  for s in by_chart[row["chart"]].iter_rows(named=True)]
        out.append({"id": row["chart"], "keys": chart_keys,
                    "title": f"{curve_label(chart_keys)} {chart_keys['metric']} "
                             f"[{chart_keys['unit']}]",
                    "t": Raw(r["t"]), "job": Raw(r["job"]), "info": Raw(r["info"]),
                    "series": series})
    return out, infos.to_list()
