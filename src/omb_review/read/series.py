"""Series identity (which records belong to one time series) and direction (which way is worse).

A series is one performance variable of one benchmark configuration on one system partition:
the HPC dimensions below, the variable (which carries the message size) and its unit.  The
environment enters as its ``lineage`` (:mod:`omb_review.read.lineage`), and the MPI and OSU versions
are not part of it: a library upgraded from one version to the next, whether or not its
environment's name carries the version, is the same series, so the gate judges the upgrade (and
a finding names the version change, ``changes``) instead of starting a new series with no
baseline.  The environment's name and the versions are attributes of each run (:data:`RUN_FIELDS`).
``algorithm`` is a collective algorithm; the osu_mbw_mr window, osu_latency_mp's forked
processes and the one-sided window creation and synchronisation have their own keys.  The unit
decides the direction: times are better when lower, rates and overlap when higher
(``data/units.yaml``).
"""

from __future__ import annotations

import fnmatch
import functools
from importlib import resources

import polars as pl
import yaml

from omb_suite import perflog_schema

SERIES_KEYS = (
    "system", "partition", "lineage", "mpi_family", "test",
    *perflog_schema.measurement_columns(), "perf_var", "unit",
)
#: What each run of a series keeps beside its value (lists per series in :func:`grouped`).
RUN_FIELDS = ("time", "value", "jobid", "session_tag", "session_id", "node_state", "environ",
              "mpi_version", "osu_version", "iterations", "warmup")
LABEL_PARTS = (
    ("lineage", ""), ("mpi_family", "mpi="), ("buffers", "buffers="),
    ("benchmark", ""), ("placement", ""), ("algorithm", "alg="), ("window_size", "window="),
    ("processes", "processes="), ("rma_window", "win="), ("rma_sync", "sync="),
    ("mapping", "map="), ("num_nodes", "nodes="), ("num_tasks", "tasks="),
)


@functools.cache
def _directions() -> tuple[dict[str, int], dict[str, int]]:
    """{unit: +1 (a larger value is worse) or -1 (a smaller one is)}, as written and folded."""
    data = yaml.safe_load(resources.files("omb_review").joinpath("data/units.yaml").read_text())
    exact = {unit: 1 for unit in data["higher_is_worse"]}
    exact |= {unit: -1 for unit in data["lower_is_worse"]}
    folded = {unit.casefold(): sign for unit, sign in exact.items()}
    return exact, folded


def worse_when(unit: str | None) -> int:
    """+1 if higher values are worse for this unit, -1 if lower are, 0 if unknown (the units
    and their spellings: ``data/units.yaml``; case is ignored when the exact one is not there)."""
    exact, folded = _directions()
    text = (unit or "").strip()
    return exact.get(text, folded.get(text.casefold(), 0))


def counts(iterations, warmup) -> str:
    """OSU's ``-i``/``-x`` of a run as logged, ``2000/200`` (``default`` where not set): what
    a mode sets, and runs of different counts measure different things."""
    return f"{iterations or 'default'}/{warmup or 'default'}"


def with_size(frame: pl.DataFrame) -> pl.DataFrame:
    """Add ``metric`` and ``size`` (bytes) split from variable names like ``latency_8``."""
    var = pl.col("perf_var").cast(pl.String)
    size = var.str.extract(r"_(\d+)$").cast(pl.Int64)
    metric = pl.when(size.is_null()).then(var).otherwise(var.str.replace(r"_\d+$", ""))
    return frame.with_columns(size=size, metric=metric)


def label(keys: dict) -> str:
    """Human-readable series name, also what ``--threshold`` patterns are matched against."""
    return f"{curve_label(keys)}.{keys['perf_var']} [{keys['unit']}]"


def curve_label(keys: dict) -> str:
    """Name of a curve: the series name without the variable (which carries the size)."""
    parts = [f"{keys['system']}:{keys['partition']}"]
    for name, prefix in LABEL_PARTS:
        value = keys.get(name)
        if value is None:
            continue
        parts.append(f"{prefix}{value}")
    parts.append(str(keys["test"]))
    return " ".join(parts)


def threshold_for(series_label: str, default: float, overrides: list[tuple[str, float]]) -> float:
    """Last matching ``(pattern, threshold)`` override wins; patterns are shell wildcards."""
    value = default
    for pattern, threshold in overrides:
        if fnmatch.fnmatchcase(series_label, pattern):
            value = threshold
    return value


def grouped(frame: pl.DataFrame) -> pl.DataFrame:
    """One row per series with its runs as lists, oldest first; failures have null values."""
    return (
        frame.filter(pl.col("perf_var").is_not_null())
        .sort("time")
        .group_by(list(SERIES_KEYS), maintain_order=True)
        .agg(*RUN_FIELDS)
    )
