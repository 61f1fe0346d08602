"""Comparison views of the report: the questions our users ask, each answered side by side.

All views compare *recent* medians: per series, the median of its last :data:`RECENT` runs with
a value (one nightly session may be one run; a month of nights is enough to be stable).

- libraries: one curve per MPI library (lineage of environments), the rest of the identity
  equal;
- placements: one curve per placement and mapping (intra-socket vs inter-node, map-by core
  vs socket), the rest equal (node counts follow the placement);
- algorithms: collective algorithm x processes at each message size, relative to the library's
  default algorithm (or, where no default was run, to the fastest algorithm of that scale);
- scaling: the value at each size over process and node counts, per algorithm.

Each view is a list of groups: ``keys`` (what is equal, for the page's filters), ``title``,
``unit`` and the data its chart needs.
"""

from __future__ import annotations

import polars as pl

from omb_review.read.series import curve_label
from omb_review.report.plots import CHART_KEYS, plain

RECENT = 30
NAME = {"num_nodes": "{} node(s)", "mapping": "map={}", "mpi_version": "{}"}  # legend words
DEFAULT_ALGORITHMS = ("default", "auto", "tuned")  # how the checks name the library's choice


def recent_medians(frame: pl.DataFrame) -> pl.DataFrame:
    """Median of each series' last ``RECENT`` values, with its chart keys and size."""
    keys = [k for k in CHART_KEYS if k in frame.columns]
    return (frame.filter(pl.col("value").is_not_null() & pl.col("size").is_not_null())
            .group_by([*keys, "size"])
            .agg(pl.col("value").top_k_by("time", RECENT).median().round_sig_figs(5),
                 runs=pl.len()))


def _name(keys: dict, drop: tuple[str, ...]) -> str:
    shown = {**keys, **dict.fromkeys(drop)}
    return f"{curve_label(shown)} {keys['metric']} [{keys['unit']}]"


def _groups(med: pl.DataFrame, vary: tuple[str, ...]) -> list[tuple[dict, pl.DataFrame]]:
    """Groups of curves equal but for ``vary``, with at least two different curves."""
    fixed = [k for k in CHART_KEYS if k in med.columns and k not in vary]
    present = [k for k in vary if k in med.columns]
    out = []
    for key, d in med.partition_by(fixed, as_dict=True, maintain_order=True).items():
        if present and d.select(pl.struct(present).n_unique()).item() > 1:
            out.append(({k: plain(v) for k, v in zip(fixed, key, strict=True)}, d))
    return out


def _curves(d: pl.DataFrame, vary: tuple[str, ...]) -> list[dict]:
    present = [k for k in vary if k in d.columns]
    lines = []
    parts = d.partition_by(present, as_dict=True)
    for key, c in sorted(parts.items(), key=lambda kv: str(kv[0])):
        name = " ".join(NAME.get(k, "{}").format(plain(v))
                        for k, v in zip(present, key, strict=True) if v is not None)
        c = c.sort("size")
        lines.append({"name": name, "x": c["size"].to_list(), "y": c["value"].to_list()})
    return lines


def side_by_side(med: pl.DataFrame, vary: tuple[str, ...]) -> list[dict]:
    """Curves (value vs size) that differ only in ``vary``: one chart per group."""
    return [{"keys": keys, "title": _name({**keys, "metric": keys["metric"]}, vary),
             "unit": keys["unit"], "lines": _curves(d, vary)}
            for keys, d in _groups(med, vary)]


def algorithms(med: pl.DataFrame) -> list[dict]:
    """Per group: medians [size][algorithm][scale], the row the page divides by, per size."""
    coll = med.filter(pl.col("algorithm").is_not_null()) if "algorithm" in med.columns else None
    if coll is None or coll.height == 0:
        return []
    coll = coll.with_columns(scale=pl.col("num_tasks"))
    out = []
    for keys, d in _groups(coll, ("algorithm", "num_tasks", "num_nodes")):
        algs = sorted({str(a) for a in d["algorithm"]})
        scales = sorted({s for s in d["scale"] if s is not None})
        sizes = sorted(set(d["size"]))
        if len(algs) < 2 or not scales:
            continue
        grid = {(str(a), s, z): v for a, s, z, v in
                d.select(pl.col("algorithm").cast(pl.String), "scale", "size", "value").rows()}
        default = next((a for a in algs if a in DEFAULT_ALGORITHMS), None)
        out.append({"keys": keys, "unit": keys["unit"], "algs": algs, "scales": scales,
                    "sizes": sizes, "default": default,
                    "title": _name(keys, ("algorithm", "num_tasks", "num_nodes")),
                    "z": [[[grid.get((a, s, z)) for s in scales] for a in algs] for z in sizes]})
    return out


def scaling(med: pl.DataFrame) -> list[dict]:
    """Value at each size over scales (tasks, with nodes), per curve without the scale."""
    out = []
    for keys, d in _groups(med, ("num_tasks", "num_nodes")):
        scales = d.select("num_tasks", "num_nodes").unique().sort("num_tasks", "num_nodes",
                                                                   nulls_last=True)
        labels = [f"{t} ranks" + (f" / {n} nodes" if n is not None else "")
                  for t, n in scales.rows()]
        lines = []
        for (size,), s in sorted(d.partition_by(["size"], as_dict=True).items()):
            look = {(t, n): v for t, n, v in s.select("num_tasks", "num_nodes", "value").rows()}
            lines.append({"name": f"{size} B", "x": labels,
                          "y": [look.get(r) for r in scales.rows()]})
        out.append({"keys": keys, "unit": keys["unit"], "lines": lines,
                    "title": _name(keys, ("num_tasks", "num_nodes"))})
    return out


def all_views(frame: pl.DataFrame) -> dict[str, list[dict]]:
    """Every comparison view of the report from the frame (with ``size``/``metric``)."""
    med = recent_medians(frame)
    return {
        "libraries": side_by_side(med, ("lineage", "mpi_family", "mpi_version")),
        "placements": side_by_side(med, ("placement", "mapping", "num_nodes")),
        "algorithms": algorithms(med),
        "scaling": scaling(med),
    }
