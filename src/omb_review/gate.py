"""The CI gate: judge every series' latest runs against its baseline window.

Windows per series (values only; failed runs have no value and are counted apart):

- latest: runs at or after ``since``; else the last ``latest`` runs; else the runs within
  ``session_gap`` of the series' last run (one nightly session, however many repetitions),
  extended back to a change point among the last ``recent`` runs (all runs of a new level);
- baseline: runs in the explicit ``baseline`` time range; else up to ``baseline_runs`` runs
  before the latest window, cut at the most recent change point inside that window (before a
  step that made things worse, so an older regression is still caught and dated; after a step
  that made things better, which is the new normal).  After ``baseline_runs`` runs at a new
  level, that level is the reference.

The judged session is the runs at or after ``since``, else the newest session of each system:
its runs within ``session_gap`` of its newest run (those with the newest run's session tag,
where it has one).  A series with a value in it and fewer than ``min_baseline`` runs before
its latest window (a new library, a renamed environment, too short a history) is ``new``:
the gate could not judge it, and ``omb-review check`` does not call that a pass.  Each verdict
keeps the software of its two windows (environment, MPI and OSU versions) to say what was
judged.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta, timezone

import numpy as np
import polars as pl
from tqdm import tqdm

from .detect import Settings, Verdict, bh_adjust, change_points, compare, hampel, noise
from .series import SERIES_KEYS, grouped, label, threshold_for, worse_when

#: Run attributes a verdict reports per window: what software was judged.
SOFTWARE = ("environ", "mpi_version", "osu_version")


@dataclass
class Windows:
    """How to choose the two windows (see module docstring)."""

    since: datetime | None = None
    latest: int | None = None
    session_gap: timedelta = timedelta(hours=12)
    baseline: tuple[datetime, datetime] | None = None


@dataclass
class SeriesResult:
    """One series' verdict, as printed and written to JSON."""

    series: str
    keys: dict
    unit: str
    threshold: float
    verdict: Verdict
    change_points: list[dict] = field(default_factory=list)
    first_bad: dict | None = None
    failed_latest: int = 0
    #: ``{"start", "end", "runs"}`` of the runs judged as baseline and as latest (ISO times)
    baseline_window: dict | None = None
    latest_window: dict | None = None
    #: ``{"baseline": {field: values}, "latest": {...}}`` of :data:`SOFTWARE`, in run order
    software: dict = field(default_factory=dict)
    in_session: bool = True  # measured in the judged session
    new: bool = False  # measured in the judged session, with no baseline to compare with

    def to_json(self) -> dict:
        v = asdict(self.verdict)
        v.pop("first_bad")
        return {
            "series": self.series, **{k: _plain(x) for k, x in self.keys.items()},
            "threshold": self.threshold, **v, "confidence": self.verdict.confidence,
            "first_bad_run": self.first_bad, "change_points": self.change_points,
            "failed_latest_runs": self.failed_latest,
            "baseline_window": self.baseline_window, "latest_window": self.latest_window,
            "software": self.software, "in_session": self.in_session, "new": self.new,
        }


def _plain(value):
    return value.isoformat() if isinstance(value, datetime) else value


def _stamp(us: int) -> str:
    return datetime.fromtimestamp(us / 1e6, timezone.utc).isoformat()


def _latest_start(times: np.ndarray, w: Windows) -> int:
    """Index of the first run of the latest window (``times`` in microseconds, sorted)."""
    if w.since is not None:
        return int(np.searchsorted(times, w.since.timestamp() * 1e6))
    if w.latest is not None:
        return max(len(times) - w.latest, 0)
    return int(np.searchsorted(times, times[-1] - w.session_gap.total_seconds() * 1e6))


def _baseline(times, cps, start: int, w: Windows, s: Settings) -> tuple[np.ndarray, int | None]:
    """Indices of the baseline runs and the change point that opened the bad level, if any."""
    if w.baseline is not None:
        lo, hi = (np.searchsorted(times[:start], t.timestamp() * 1e6, side) for t, side in
                  zip(w.baseline, ("left", "right"), strict=True))
        return np.arange(lo, hi), None
    first = max(start - s.baseline_runs, 0)
    recent = [(i, step) for i, step in cps if first < i <= start]
    if not recent:
        return np.arange(first, start), None
    i, step = recent[-1]
    if step > 0 or i == start:  # judge the new level against the one before it
        before = [j for j, _ in cps if j < i]
        return np.arange(max(first, before[-1] if before else 0), i), i if step > 0 else None
    return np.arange(i, start), None


@dataclass
class Run:
    """One series' runs: times (us), values (NaN for failures) and a lookup of run metadata."""

    keys: dict
    times: np.ndarray
    values: np.ndarray
    meta: Callable[[int], dict]
    software: dict[str, np.ndarray] = field(default_factory=dict)  # SOFTWARE per run (text)

    def versions(self, runs: np.ndarray) -> dict[str, list[str]]:
        """Distinct values of each :data:`SOFTWARE` field over ``runs``, in run order."""
        found = {f: dict.fromkeys(self.software[f][runs].tolist()) for f in self.software}
        return {f: [v for v in values if v is not None] for f, values in found.items()}


def judge(run: Run, w: Windows, s: Settings, overrides: list[tuple[str, float]]) -> SeriesResult:
    """Verdict for one series."""
    name = label(run.keys)
    unit = run.keys["unit"]
    sign = worse_when(unit)
    thr = threshold_for(name, s.threshold, overrides)
    ok = np.nonzero(~np.isnan(run.values))[0]
    result = SeriesResult(name, run.keys, unit, thr, Verdict("insufficient"))
    if not len(ok) or sign == 0:
        result.verdict.reason = (f"unit {unit!r}: not known whether higher or lower is worse"
                                 if len(ok) else "no value: every run failed")
        return result
    times, values = run.times[ok], run.values[ok]
    cps = change_points(hampel(sign * values), s)
    result.change_points = [
        {"time": _stamp(times[i]), "change": step, "jobid": run.meta(int(ok[i]))["jobid"]}
        for i, step in cps
    ]
    start = _latest_start(times, w)
    if w.since is None and w.latest is None and cps and 0 < len(values) - cps[-1][0] <= s.recent:
        start = min(start, cps[-1][0])  # the runs of a level that just began, not only the last
    all_start = ok[start] if start < len(ok) else len(run.values)
    result.failed_latest = int(np.isnan(run.values[all_start:]).sum())
    base, opened = _baseline(times, cps, start, w, s)
    sigma = noise(sign * values[:start] if start >= 3 else sign * values)  # reference noise
    result.verdict = compare(values[base], values[start:], sign, thr, s, sigma)
    result.software = {"baseline": run.versions(ok[base]), "latest": run.versions(ok[start:])}
    # new: too little history before the latest window (not a baseline cut at a change point)
    result.new = bool(result.verdict.status == "insufficient" and result.verdict.n_latest
                      and start < s.min_baseline)
    result.baseline_window = _window(times[base])
    result.latest_window = _window(times[start:])
    if result.verdict.status == "regression":
        bad = opened if opened is not None else _first_worse(sign * values, base, start, thr)
        meta = run.meta(int(ok[bad]))
        result.first_bad = {"time": _stamp(times[bad]), **meta, "value": float(values[bad])}
    return result


def _window(times: np.ndarray) -> dict | None:
    if not len(times):
        return None
    return {"start": _stamp(times[0]), "end": _stamp(times[-1]), "runs": len(times)}


def _first_worse(oriented: np.ndarray, base: np.ndarray, start: int, thr: float) -> int:
    mb = float(np.median(oriented[base]))
    worse = np.nonzero(oriented[start:] > mb + thr * abs(mb))[0]
    return start + int(worse[0]) if len(worse) else start


def runs(frame: pl.DataFrame) -> list[Run]:
    """Every series as numpy arrays (one pass over the frame, no per-row Python objects)."""
    g = grouped(frame)
    bounds = np.concatenate([[0], np.cumsum(g["value"].list.len().to_numpy(), dtype=np.int64)])
    times = g["time"].explode(empty_as_null=False).dt.epoch("us").to_numpy()
    values = g["value"].explode(empty_as_null=False).fill_null(np.nan).to_numpy()
    software = {f: g[f].explode(empty_as_null=False).cast(pl.String).to_numpy()
                for f in SOFTWARE}
    meta = g.select("jobid", "session_tag")

    def lookup(row: int) -> Callable[[int], dict]:
        def at(i: int) -> dict:
            return {"jobid": meta["jobid"][row][i], "session_tag": meta["session_tag"][row][i]}
        return at

    return [
        Run(keys, times[a:b], values[a:b], lookup(n), {f: v[a:b] for f, v in software.items()})
        for n, (keys, a, b) in enumerate(
            zip(g.select(SERIES_KEYS).iter_rows(named=True), bounds[:-1], bounds[1:], strict=True))
    ]


def run(
    frame: pl.DataFrame, w: Windows, s: Settings, overrides: list[tuple[str, float]]
) -> list[SeriesResult]:
    """Judge every series of ``frame``; regressions first, largest change first."""
    series = runs(frame)
    results = [judge(r, w, s, overrides) for r in tqdm(series, desc="judging", disable=None)]
    starts = _session_starts(frame, w)
    for r, result in zip(series, results, strict=True):
        result.in_session = _in_session(r, starts)
        result.new = result.new and result.in_session
    if s.fdr:
        control_fdr(results, s.alpha)
    order = {"regression": 0, "improvement": 1, "ok": 2, "insufficient": 3}
    return sorted(results, key=lambda r: (order[r.verdict.status], -r.verdict.change))


def _session_starts(frame: pl.DataFrame, w: Windows) -> dict[str, int]:
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


def _in_session(run: Run, starts: dict[str, int]) -> bool:
    """Whether the series has a value in the judged session (runs that only failed there are
    judged by ReFrame's own result, not here)."""
    start = starts.get(str(run.keys["system"]))
    measured = run.times[~np.isnan(run.values)]
    return start is not None and bool(len(measured)) and bool(measured[-1] >= start)


def control_fdr(results: list[SeriesResult], alpha: float) -> None:
    """Benjamini-Hochberg over every series judged by the U test: a verdict stands only if its
    adjusted p (q) is <= ``alpha``, so that of all series named at most a fraction ``alpha`` is
    expected to be noise, however many series the gate looks at.  Per-series p <= alpha instead
    names about alpha x (number of series) on pure noise.  Series judged with too few runs for
    the U test (range+z) have no comparable p and keep their verdict."""
    tested = [r for r in results if r.verdict.method == "mann-whitney"]
    if not tested:
        return
    q = bh_adjust([r.verdict.p_value for r in tested])
    for r, qv in zip(tested, q, strict=True):
        r.verdict.q_value = float(qv)
        if qv > alpha and r.verdict.status in ("regression", "improvement"):
            r.verdict.status, r.first_bad = "ok", None
