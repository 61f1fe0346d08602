"""Hockney model fit T(n) = alpha + n / beta for point-to-point latency curves.

The fit minimises *relative* error (rows weighted by 1/T): latencies span four decades and an
unweighted fit would ignore the small messages that define alpha (SchedMD's perftest warns about
exactly this).  alpha is in microseconds, beta in bytes/us = MB/s, so it compares directly with a
link peak given in MB/s.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
import polars as pl

from .plots import CURVE_KEYS, _curve_name, _save


@dataclass
class Fit:
    """Fitted model of one curve."""

    curve: str
    partition: str
    alpha_us: float
    beta_mbps: float
    r2: float
    points: int
    peak_mbps: float | None = None

    @property
    def resolved(self) -> bool:
        """False when the sizes are too small for any bandwidth term (a flat curve)."""
        return bool(np.isfinite(self.beta_mbps))

    @property
    def peak_percent(self) -> float | None:
        if not self.peak_mbps or not self.resolved:
            return None
        return 100 * self.beta_mbps / self.peak_mbps


def fit(sizes: np.ndarray, times: np.ndarray) -> tuple[float, float, float]:
    """(alpha, beta, R^2 of log T) by least squares on relative error."""
    w = 1 / times
    design = np.column_stack([np.ones_like(sizes), sizes]) * w[:, None]
    (alpha, inv_beta), *_ = np.linalg.lstsq(design, times * w, rcond=None)
    model = alpha + sizes * inv_beta
    if np.any(model <= 0) or inv_beta <= 0:
        return float(alpha), float("inf"), float("nan")
    resid = np.log(times) - np.log(model)
    total = np.log(times) - np.log(times).mean()
    return float(alpha), float(1 / inv_beta), float(1 - (resid @ resid) / (total @ total))


def fit_curves(frame: pl.DataFrame, peaks: dict[str, float], out: Path, limit: int):
    """Fit every pt2pt latency curve (median per size); plot up to ``limit`` of them."""
    data = frame.filter(
        (pl.col("metric") == "latency") & pl.col("algorithm").is_null()
        & pl.col("value").is_not_null() & (pl.col("value") > 0) & pl.col("size").is_not_null()
        & (pl.col("unit").cast(pl.String) == "us")
    )
    medians = data.group_by([*CURVE_KEYS, "size"]).agg(pl.col("value").median()).sort("size")
    fits, figs = [], []
    for key, d in medians.partition_by(CURVE_KEYS, as_dict=True, maintain_order=True).items():
        if d.height < 3:
            continue
        keys = dict(zip(CURVE_KEYS, key, strict=True))
        sizes, times = d["size"].to_numpy().astype(float), d["value"].to_numpy()
        alpha, beta, r2 = fit(sizes, times)
        part = f"{keys['system']}:{keys['partition']}"
        result = Fit(_curve_name(keys), part, alpha, beta, r2, d.height, peaks.get(part))
        fits.append(result)
        if len(figs) < limit:
            path = _plot(result, sizes, times, out, len(figs))
            figs.append((f"Hockney fit: {result.curve}", path))
    return fits, figs


def _plot(f: Fit, sizes: np.ndarray, times: np.ndarray, out: Path, n: int) -> Path:
    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    x = np.clip(sizes, 1, None)
    ax.plot(x, times, "o", ms=4, label="median per size")
    grid = np.geomspace(x.min(), x.max(), 100)
    ax.plot(grid, f.alpha_us + grid / f.beta_mbps, "-",
            label=f"alpha={f.alpha_us:.3g} us, beta={f.beta_mbps:.4g} MB/s")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("message size (bytes)")
    ax.set_ylabel("us")
    ax.set_title(f.curve, fontsize=7)
    ax.legend(fontsize=7)
    return _save(fig, out / f"hockney_{n:03d}.png")
