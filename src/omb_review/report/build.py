"""``omb-review report``: from judged records to the page, stage by stage (each one timed).

findings (one per curve), chart data for every curve, comparison views, Hockney fits, then
the page.  ``OMB_REVIEW_TIMINGS=1`` prints each stage's seconds to stderr (the benchmark
reads them).
"""

from __future__ import annotations

import os
import sys
import time
from datetime import timedelta
from pathlib import Path

import polars as pl

from omb_review.judge import detect, fleet
from omb_review.judge.findings import findings
from omb_review.judge.result import SeriesResult
from omb_review.read import curves
from omb_review.read.ingest import Dataset
from omb_review.read.series import with_size
from omb_review.report import fleet_matrix, page, plots, views
from omb_review.report.hockney import fit_curves
from omb_review.tuning import tune


def split_of(args, frame: pl.DataFrame) -> plots.Split:
    """Before/after for curves without a finding: ``--split``, ``--split-tag`` or the latest
    session (runs within ``--session-gap`` of the last) vs before."""
    if args.split:
        return plots.Split(args.split, f"split {args.split:%Y-%m-%d}")
    if args.split_tag:
        tagged = frame.filter(pl.col("session_tag").cast(pl.String) == args.split_tag)
        if tagged.height == 0:
            raise ValueError(f"no records with session tag {args.split_tag!r}")
        return plots.Split(tagged["time"].min(), f"tag {args.split_tag}")
    last = frame["time"].max() - timedelta(hours=args.session_gap)
    return plots.Split(last, "latest session vs before")


def _tuning(args, frame: pl.DataFrame) -> tuple[list[tune.Study], list[str]]:
    """The recommendation of the sweeps in the frame (mapping core), with the gate's
    threshold and alpha; none when the frame holds no sweep."""
    settings = detect.Settings(threshold=args.threshold, alpha=args.alpha)
    try:
        return tune.studies(frame, "core", args.threshold, settings)
    except tune.NothingToRecommend:
        return [], []


class _Clock:
    def __init__(self) -> None:
        self.show = os.environ.get("OMB_REVIEW_TIMINGS") == "1"
        self.last = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        if self.show:
            print(f"omb-review report: {stage} {now - self.last:.2f} s", file=sys.stderr)
        self.last = now


def build(args, ds: Dataset, results: list[SeriesResult], peaks: dict[str, float],
          tolerances: dict[str, float] | None = None) -> Path:
    """Write ``args.out/report.html`` and return its path.  ``tolerances``: the fleet
    tolerance of each partition that declares one (``-C``)."""
    clock = _Clock()
    if curves.discover(args.perflog_dir):  # every size OSU measured, from the curve logs
        frame, unreadable = curves.report_frame(args.perflog_dir, ds.frame)
        ds.problems += unreadable
    else:  # none (older runs): joining nothing to the records costs a second per 400,000
        frame = with_size(ds.frame)
    clock.lap("whole curves")
    split = split_of(args, frame)
    found = findings(results, ds.frame)
    clock.lap("findings")
    charts, infos = plots.charts(frame, results)
    clock.lap("charts")
    compared = views.all_views(frame)
    clock.lap("views")
    fits = fit_curves(frame, peaks)
    clock.lap("hockney")
    tuning = page.tuning_table(*_tuning(args, frame))
    clock.lap("tuning")
    fleets = fleet.runs(args.perflog_dir, tolerances=tolerances)
    clock.lap("fleet")
    data = page.payload(ds, found, charts, infos, compared, fits, split)
    named = [line for line in map(fleet_matrix.headline, fleets) if line]
    notes = [*named, f"Curves without a finding: before/after split at "
             f"{split.when:%Y-%m-%d %H:%M} UTC ({split.caption}).", *ds.notes]
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.out / "report.html"
    size = page.write(path, ds, results, data, fits, notes, args.perflog_dir, tuning,
                        fleet_matrix.section(fleets) if fleets else "")
    clock.lap(f"page ({size / 2**20:.1f} MiB)")
    return path
