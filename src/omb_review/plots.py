"""Figures of the report, one PNG each (matplotlib, Agg backend: no display needed).

Every function takes the normalised frame (with ``size``/``metric`` from
:func:`omb_review.series.with_size`), draws at most ``limit`` figures and returns
``(caption, path)`` pairs.  Curve keys are the series keys without the variable: one curve is one
sweep over message sizes.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import polars as pl
from matplotlib.colors import LogNorm

from .gate import SeriesResult
from .series import SERIES_KEYS, label

CURVE_KEYS = [k for k in SERIES_KEYS if k != "perf_var"] + ["metric"]
Figure = tuple[str, Path]


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)
    return path


def _curve_name(keys: dict) -> str:
    return label({**keys, "perf_var": keys["metric"]})


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text)[:80]


def timeseries(results: list[SeriesResult], frame: pl.DataFrame, out: Path, limit: int):
    """Value over time per series with change points and the logged reference band."""
    picked = [r for r in results if r.verdict.status == "regression"][:limit]
    picked += [r for r in results if r.change_points and r not in picked][: limit - len(picked)]
    picked += [r for r in results if r not in picked][: max(limit - len(picked), 0)]
    figs = []
    for n, res in enumerate(picked):
        cond = [pl.col(k).cast(pl.String) == str(v) if v is not None else pl.col(k).is_null()
                for k, v in res.keys.items()]
        data = frame.filter(*cond).sort("time")
        fig, ax = plt.subplots(figsize=(8, 2.8))
        good = data.filter(pl.col("value").is_not_null())
        ax.plot(good["time"], good["value"], ".", ms=4, color="C0", label="runs")
        band = good.filter(pl.col("lower").is_not_null() | pl.col("upper").is_not_null())
        if band.height:
            lo = band["lower"].fill_null(band["value"].min())
            hi = band["upper"].fill_null(band["value"].max())
            ax.fill_between(band["time"], lo, hi, step="mid", alpha=0.2, color="C2",
                            label="reference band")
        failed = data.filter(pl.col("value").is_null())
        if failed.height and good.height:
            ax.plot(failed["time"], [good["value"].min()] * failed.height, "x", color="C3",
                    label="failed run")
        for cp in res.change_points:
            ax.axvline(datetime.fromisoformat(cp["time"]), color="C1", ls="--", lw=1)
        ax.set_ylabel(res.unit)
        ax.set_title(f"{res.series} [{res.verdict.status}]", fontsize=8)
        ax.legend(fontsize=7, loc="best")
        figs.append((res.series, _save(fig, out / f"ts_{n:03d}.png")))
    return figs


@dataclass
class Split:
    """Before/after division for curve comparisons."""

    when: datetime
    caption: str


def _medians(frame: pl.DataFrame) -> pl.DataFrame:
    return (
        frame.filter(pl.col("value").is_not_null() & pl.col("size").is_not_null())
        .group_by([*CURVE_KEYS, "size"]).agg(pl.col("value").median())
    )


def curves(frame: pl.DataFrame, split: Split, out: Path, limit: int) -> list[Figure]:
    """Latency- and bandwidth-vs-size curves (log-log) before vs after the split."""
    before = _medians(frame.filter(pl.col("time") < split.when)).with_columns(when=pl.lit("before"))
    after = _medians(frame.filter(pl.col("time") >= split.when)).with_columns(when=pl.lit("after"))
    both = pl.concat([before, after]).filter(pl.col("unit").cast(pl.String).is_in(["us", "MB/s"]))
    figs: list[Figure] = []
    for unit in ("us", "MB/s"):
        part = both.filter(pl.col("unit").cast(pl.String) == unit)
        groups = part.partition_by(CURVE_KEYS, as_dict=True, maintain_order=True)
        ranked = sorted(groups.items(), key=lambda kv: -kv[1]["when"].n_unique())[:limit]
        for key, data in ranked:
            keys = dict(zip(CURVE_KEYS, key, strict=True))
            fig, ax = plt.subplots(figsize=(5.5, 3.6))
            for when, style in (("before", "o-"), ("after", "s--")):
                d = data.filter(pl.col("when") == when).sort("size")
                if d.height:
                    ax.plot(d["size"].clip(1), d["value"], style, ms=3, label=when)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("message size (bytes)")
            ax.set_ylabel(unit)
            ax.set_title(_curve_name(keys), fontsize=7)
            ax.legend(title=split.caption, fontsize=7, title_fontsize=7)
            kind = "latency" if unit == "us" else "bandwidth"
            figs.append((f"{kind} vs size: {_curve_name(keys)}",
                         _save(fig, out / f"curve_{kind}_{len(figs):03d}.png")))
    return figs


def boxes_runs(frame: pl.DataFrame, out: Path, limit: int) -> list[Figure]:
    """Distribution over repeated runs, one box per message size, per curve."""
    data = frame.filter(pl.col("value").is_not_null() & pl.col("size").is_not_null())
    groups = data.partition_by(CURVE_KEYS, as_dict=True, maintain_order=True)
    figs: list[Figure] = []
    for key, d in sorted(groups.items(), key=lambda kv: -kv[1].height)[:limit]:
        keys = dict(zip(CURVE_KEYS, key, strict=True))
        sizes = sorted(d["size"].unique())
        fig, ax = plt.subplots(figsize=(8, 3.2))
        ax.boxplot([d.filter(pl.col("size") == s)["value"].to_numpy() for s in sizes],
                   tick_labels=[str(s) for s in sizes], showfliers=True)
        ax.set_yscale("log")
        ax.set_xlabel("message size (bytes)")
        ax.set_ylabel(keys["unit"])
        ax.tick_params(axis="x", labelrotation=90, labelsize=6)
        ax.set_title(f"runs per size: {_curve_name(keys)}", fontsize=7)
        figs.append((f"repeated runs: {_curve_name(keys)}",
                     _save(fig, out / f"box_runs_{len(figs):03d}.png")))
    return figs


def fixed_size(frame: pl.DataFrame, size: int | None) -> pl.DataFrame:
    """Rows at ``size``, or per curve at its most frequently measured size."""
    data = frame.filter(pl.col("value").is_not_null() & pl.col("size").is_not_null())
    if size is not None:
        return data.filter(pl.col("size") == size)
    common = data.group_by("size").len().sort(["len", "size"], descending=True)
    return data.filter(pl.col("size") == common["size"][0]) if common.height else data


def boxes_scales(frame: pl.DataFrame, size: int | None, out: Path, limit: int) -> list[Figure]:
    """Distribution over runs per scale (tasks, nodes) at a fixed size, per benchmark."""
    data = fixed_size(frame, size)
    keys = [k for k in CURVE_KEYS if k not in ("num_nodes", "num_tasks")] + ["size"]
    groups = data.partition_by(keys, as_dict=True, maintain_order=True)
    scaled = [(k, d) for k, d in groups.items()
              if d.select(pl.struct("num_nodes", "num_tasks").n_unique()).item() > 1]
    figs: list[Figure] = []
    for key, d in sorted(scaled, key=lambda kv: -kv[1].height)[:limit]:
        names = dict(zip(keys, key, strict=True))
        scales = d.select("num_nodes", "num_tasks").unique().sort("num_tasks", "num_nodes")
        values, ticks = [], []
        for nodes, tasks in scales.iter_rows():
            sel = d.filter((pl.col("num_tasks") == tasks) & (pl.col("num_nodes").eq_missing(nodes)))
            values.append(sel["value"].to_numpy())
            ticks.append(f"{tasks}" if nodes is None else f"{tasks}@{nodes}n")
        fig, ax = plt.subplots(figsize=(6, 3.2))
        ax.boxplot(values, tick_labels=ticks)
        ax.set_xlabel("tasks (@nodes)")
        ax.set_ylabel(names["unit"])
        title = _curve_name({**names, "num_nodes": None, "num_tasks": None})
        ax.set_title(f"over scales at {names['size']} B: {title}", fontsize=7)
        figs.append((f"scales at {names['size']} B: {title}",
                     _save(fig, out / f"box_scales_{len(figs):03d}.png")))
    return figs


def heatmaps(frame: pl.DataFrame, size: int | None, out: Path, limit: int) -> list[Figure]:
    """Latency maps: collective algorithm x process count, median at a fixed size."""
    data = fixed_size(frame.filter(pl.col("algorithm").is_not_null()), size)
    # one map per mapping (core/socket/node): mixing them would hide what the seeds show,
    # that the best algorithm depends on the mapping
    keys = ["system", "partition", "environ", "mpi_family", "mpi_version", "test", "benchmark",
            "placement", "mapping", "metric", "unit", "size"]
    figs: list[Figure] = []
    for key, d in list(data.partition_by(keys, as_dict=True, maintain_order=True).items())[:limit]:
        names = dict(zip(keys, key, strict=True))
        med = d.group_by("algorithm", "num_tasks").agg(pl.col("value").median())
        algs = sorted(med["algorithm"].cast(pl.String).unique())
        tasks = sorted(med["num_tasks"].drop_nulls().unique())
        grid = np.full((len(algs), len(tasks)), np.nan)
        for alg, nt, v in med.iter_rows():
            if nt is not None:
                grid[algs.index(str(alg)), tasks.index(nt)] = v
        fig, ax = plt.subplots(figsize=(1.2 + 0.9 * len(tasks), 1.2 + 0.4 * len(algs)))
        positive = grid[np.isfinite(grid) & (grid > 0)]
        norm = LogNorm(positive.min(), positive.max()) if positive.size else None
        im = ax.imshow(grid, cmap="viridis", norm=norm, aspect="auto")
        for (i, j), v in np.ndenumerate(grid):
            if np.isfinite(v):
                ax.text(j, i, f"{v:.3g}", ha="center", va="center", fontsize=6, color="w")
        ax.set_xticks(range(len(tasks)), [str(t) for t in tasks])
        ax.set_yticks(range(len(algs)), algs, fontsize=7)
        ax.set_xlabel("processes")
        fig.colorbar(im, ax=ax, label=str(names["unit"]))
        title = f"{names['system']}:{names['partition']} {names['environ']} {names['benchmark']}"
        where = names["mapping"] or names["placement"]
        title += f" map={where}" if where else ""
        ax.set_title(f"{title}\nat {names['size']} B", fontsize=7)
        figs.append((f"latency map: {title} at {names['size']} B",
                     _save(fig, out / f"heatmap_{len(figs):03d}.png")))
    return figs
