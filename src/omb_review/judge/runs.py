"""A frame's series as runs (:class:`Run`: numpy arrays, one pass over the frame), which runs
were measured on a busy node, and where each system's judged session begins."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import polars as pl

from omb_review.judge import sessions
from omb_review.judge.result import SOFTWARE, Windows, stamp
from omb_review.read.series import SERIES_KEYS, grouped
from omb_review.read.series import counts as run_counts


@dataclass
class Run:
    """One series' runs: times (us), values (NaN for failures), a lookup of run metadata, and
    per run its session index (``None``: every run its own session) and whether its node was
    busy (``None``: none was)."""

    keys: dict
    times: np.ndarray
    values: np.ndarray
    meta: Callable[[int], dict]
    software: dict[str, np.ndarray] = field(default_factory=dict)  # SOFTWARE per run (text)
    session: np.ndarray | None = None
    busy: np.ndarray | None = None
    counts: np.ndarray | None = None  # OSU's -i/-x of each run as logged ("2000/200")

    def versions(self, runs: np.ndarray) -> dict[str, list[str]]:
        """Distinct values of each :data:`SOFTWARE` field over ``runs``, in run order."""
        found = {f: dict.fromkeys(self.software[f][runs].tolist()) for f in self.software}
        return {f: [v for v in values if v is not None] for f, values in found.items()}


def window(times: np.ndarray, n_sessions: int) -> dict | None:
    if not len(times):
        return None
    return {"start": stamp(times.min()), "end": stamp(times.max()), "runs": len(times),
            "sessions": n_sessions}


def busy(states: np.ndarray) -> np.ndarray:
    """Per run: was its node busy (``node_state`` starting with ``busy``)."""
    return np.array([bool(x) and str(x).startswith("busy") for x in states], dtype=bool)


def runs(frame: pl.DataFrame) -> list[Run]:
    """Every series as numpy arrays (one pass over the frame, no per-row Python objects)."""
    absent = [c for c in ("session_id", "node_state", "iterations", "warmup")
              if c not in frame.columns]
    g = grouped(frame.with_columns(pl.lit(None, pl.String).alias(c) for c in absent))
    bounds = np.concatenate([[0], np.cumsum(g["value"].list.len().to_numpy(), dtype=np.int64)])
    times = g["time"].explode(empty_as_null=False).dt.epoch("us").to_numpy()
    values = g["value"].explode(empty_as_null=False).fill_null(np.nan).to_numpy()
    software = {f: g[f].explode(empty_as_null=False).cast(pl.String).to_numpy()
                for f in SOFTWARE}
    text = {f: g[f].explode(empty_as_null=False).cast(pl.String).to_numpy()
            for f in ("session_id", "node_state", "iterations", "warmup")}
    counts = np.array([run_counts(i, w)
                       for i, w in zip(text["iterations"], text["warmup"], strict=True)])
    meta = g.select("jobid", "session_tag", "node_state")

    def lookup(row: int) -> Callable[[int], dict]:
        def at(i: int) -> dict:
            return {"jobid": meta["jobid"][row][i], "session_tag": meta["session_tag"][row][i],
                    "node_state": meta["node_state"][row][i]}
        return at

    return [
        Run(keys, times[a:b], values[a:b], lookup(n), {f: v[a:b] for f, v in software.items()},
            sessions.keys(text["session_id"][a:b]),
            busy(text["node_state"][a:b]), counts[a:b])
        for n, (keys, a, b) in enumerate(
            zip(g.select(SERIES_KEYS).iter_rows(named=True), bounds[:-1], bounds[1:], strict=True))
    ]


def session_starts(frame: pl.DataFrame, w: Windows) -> dict[str, int]:
    """Per system, when its judged session began (us): ``since``; else its first run within
    ``session_gap`` of its newest run that carries the newest run's session tag (a tag names a
    session; untagged runs are one session by time alone)."""
    gap = w.session_gap.total_seconds() * 1e6
    starts = {}
    for (system,), runs in frame.select(pl.col("system").cast(pl.String), "time",
                                        pl.col("session_tag").cast(pl.String)).group_by("system"):
        if w.since is not None:
            starts[system] = int(w.since.timestamp() * 1e6)
            continue
        us = runs["time"].dt.epoch("us")
        newest = us.max()
        recent = runs.filter(us >= newest - gap)
        tag = recent.sort("time")["session_tag"][-1]
        tagged = recent.filter(pl.col("session_tag") == tag) if tag else recent
        starts[system] = int(tagged["time"].dt.epoch("us").min())
    return starts


def in_session(run: Run, starts: dict[str, int]) -> bool:
    """Whether the series has a value in the judged session (runs that only failed there are
    judged by ReFrame's own result, not here)."""
    start = starts.get(str(run.keys["system"]))
    measured = run.times[~np.isnan(run.values)]
    return start is not None and bool(len(measured)) and bool(measured[-1] >= start)
