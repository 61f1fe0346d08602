"""Hockney model fit T(n) = alpha + n / beta for point-to-point latency and bandwidth curves.

The fit minimises *relative* error (rows weighted by 1/T): latencies span four decades and an
unweighted fit would ignore the small messages that define alpha (SchedMD's perftest warns about
exactly this).  alpha is in microseconds, beta in bytes/us = MB/s, so it compares directly with a
link peak given in MB/s.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import polars as pl

from omb_review.read.series import curve_label
from omb_review.report.plots import CHART_KEYS, plain


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
    sizes: list[float] = field(default_factory=list, repr=False)  # bytes
    times: list[float] = field(default_factory=list, repr=False)  # us, median per size
    keys: dict = field(default_factory=dict, repr=False)  # the curve's identity

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


def _points(frame: pl.DataFrame) -> pl.DataFrame:
    """Median time per size and curve: latency curves as measured, bandwidth curves as the
    time one message takes at that rate (T = size / bandwidth), as the seeds fit them."""
    ok = (pl.col("value").is_not_null() & (pl.col("value") > 0) & pl.col("size").is_not_null()
          & pl.col("algorithm").is_null())
    unit = pl.col("unit").cast(pl.String)
    lat = frame.filter(ok & (pl.col("metric") == "latency") & (unit == "us"))
    bw = frame.filter(ok & (pl.col("metric") == "bandwidth") & (unit == "MB/s") & (
        pl.col("size") > 0)).with_columns(value=pl.col("size") / pl.col("value"))
    keys = [k for k in CHART_KEYS if k in frame.columns]
    return (pl.concat([lat, bw]).group_by([*keys, "size"]).agg(pl.col("value").median())
            .sort("size"))


def fit_curves(frame: pl.DataFrame, peaks: dict[str, float]) -> list[Fit]:
    """Fit every point-to-point latency and bandwidth curve (median per size)."""
    keys = [k for k in CHART_KEYS if k in frame.columns]
    fits = []
    for key, d in _points(frame).partition_by(keys, as_dict=True, maintain_order=True).items():
        if d.height < 3:
            continue
        names = dict(zip(keys, key, strict=True))
        sizes, times = d["size"].to_numpy().astype(float), d["value"].to_numpy()
        alpha, beta, r2 = fit(sizes, times)
        part = f"{names['system']}:{names['partition']}"
        fits.append(Fit(f"{curve_label(names)} {names['metric']}", part, alpha, beta, r2,
                        d.height, peaks.get(part), sizes.tolist(), times.tolist(),
                        {k: plain(v) for k, v in names.items()}))
    return fits
