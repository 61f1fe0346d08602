"""Findings: the per-series verdicts of one curve gathered into one statement a person reads.

A *curve* is a test's identity without the message size: every series key except the variable
(``latency_8``, ``latency_1024``, ``min_latency`` ...) and its unit.  A regression that hits 23
message sizes of ``osu_latency inter_node`` is 23 series verdicts but one finding: this curve,
these sizes, +6% to +15%, since this job on this date, and what changed between the baseline
runs and the first bad one (``changes``).  Regressions come first, the largest change first;
improvements follow.  The per-series verdicts stay in ``verdicts`` (drill-down), and in the
gate's JSON under ``series``, where each finding names its series.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from omb_review.judge.result import SeriesResult
from omb_review.judge.run_changes import Change, what_changed
from omb_review.read.series import SERIES_KEYS, curve_label
from omb_suite.mpi import families

#: Series keys that do not belong to the curve: the variable carries the size.
PER_SIZE_KEYS = ("perf_var", "unit")
CURVE_KEYS = tuple(k for k in SERIES_KEYS if k not in PER_SIZE_KEYS)
STATUS_ORDER = {"regression": 0, "watch": 1, "shared": 2, "improvement": 3}
_UNITS = ((2**20, "MiB"), (2**10, "KiB"))


@dataclass
class SizeDetail:
    """One message size (or curve figure such as ``min_latency``) of a finding."""

    series: str  # the series' name, as in the gate's per-series verdicts
    perf_var: str
    size: int | None  # bytes; None for a figure of the whole curve (min_latency ...)
    unit: str
    change: float  # relative change of medians, positive = worse
    confidence: float
    baseline_median: float
    latest_median: float


@dataclass
class Finding:
    """One curve's regression (or improvement), all affected sizes together."""

    curve: str  # e.g. "alpha:cpu gnu-ompi mpi=openmpi buffers=H H osu_latency inter_node ..."
    keys: dict  # the curve's series keys (CURVE_KEYS)
    status: str  # regression | improvement
    sizes: list[int]  # affected message sizes in bytes, ascending (any metric of the curve)
    judged_sizes: list[int]  # sizes of this curve the gate judged (affected or not)
    figures: list[str]  # affected variables without a size (min_latency, peak_bandwidth)
    change_min: float  # smallest and largest relative change, positive = worse
    change_max: float
    value_change: str  # the change as the values moved, e.g. "+6% to +15%" or "-9%"
    confidence: float  # the lowest confidence of the affected series (each holds at least it)
    first_bad: dict | None  # earliest first bad run: time, jobid, session_tag, value
    baseline_window: dict | None  # union of the affected series' baseline windows
    detail: list[SizeDetail] = field(default_factory=list)
    verdicts: list[SeriesResult] = field(default_factory=list, repr=False)
    changes: list[Change] = field(default_factory=list)  # what changed (see ``what_changed``)
    software: str = ""  # the versions judged: "Open MPI 4.1.5 -> 4.1.6, OSU 7.4 -> 7.4"

    @property
    def series(self) -> list[str]:
        return [d.series for d in self.detail]

    @property
    def sizes_text(self) -> str:
        """``1 B-4 MiB (23 of 23 sizes)``: runs of consecutive judged sizes as ranges, then
        the figures of the whole curve (``min_latency``) that moved too."""
        figures = ", ".join(self.figures)
        if not self.sizes:
            return figures
        text = _ranges(self.sizes, self.judged_sizes)
        return f"{text} ({len(self.sizes)} of {len(self.judged_sizes)} sizes)" + (
            f" and {figures}" if figures else "")

    def summary(self, changes: bool = True) -> str:
        """One line: status, curve, sizes, change, confidence, first bad run, what changed
        (unless ``changes`` is False)."""
        bad = self.first_bad or {}
        changed = "; ".join(
            f"{c.field} {'/'.join(c.baseline) or '?'} -> {c.first_bad}" for c in self.changes
        ) if changes else ""
        return (f"{self.status.upper()} {self.curve}: {self.sizes_text}, {self.value_change}, "
                f"confidence >= {self.confidence:.3f}, since job {bad.get('jobid')} "
                f"({bad.get('time')}, tag {bad.get('session_tag')}); {self.software}"
                + (f"; changed: {changed}" if changed else ""))

    def to_json(self) -> dict:
        return {
            "curve": self.curve, **{k: _plain(self.keys.get(k)) for k in CURVE_KEYS},
            "status": self.status, "sizes": self.sizes, "sizes_text": self.sizes_text,
            "judged_sizes": self.judged_sizes, "figures": self.figures,
            "change_min": self.change_min, "change_max": self.change_max,
            "value_change": self.value_change, "confidence": self.confidence,
            "software": self.software, "first_bad_run": self.first_bad,
            "baseline_window": self.baseline_window,
            "what_changed": [c.to_json() for c in self.changes], "series": self.series,
            "detail": [d.__dict__ for d in self.detail],
        }


def _plain(value):
    return value if value is None or isinstance(value, (int, float, str)) else str(value)


def size_text(size: int) -> str:
    """``8 B``, ``64 KiB``, ``4 MiB``."""
    for factor, unit in _UNITS:
        if size >= factor and size % factor == 0:
            return f"{size // factor} {unit}"
    return f"{size} B"


def _ranges(hit: list[int], judged: list[int]) -> str:
    """Affected sizes as ranges of consecutive judged sizes: ``1 B-64 B, 1 MiB``."""
    chosen, runs, current = set(hit), [], []
    for size in judged:
        if size in chosen:
            current.append(size)
        elif current:
            runs.append(current)
            current = []
    runs += [current] if current else []
    return ", ".join(size_text(r[0]) if len(r) == 1 else f"{size_text(r[0])}-{size_text(r[-1])}"
                     for r in runs)


def _size(perf_var: str) -> int | None:
    head, _, tail = perf_var.rpartition("_")
    return int(tail) if head and tail.isdigit() else None


def _percent(values: list[float]) -> str:
    lo, hi = min(values), max(values)
    a, b = f"{100 * lo:+.0f}%", f"{100 * hi:+.0f}%"
    return a if a == b else f"{a} to {b}"


def _detail(r: SeriesResult) -> SizeDetail:
    v = r.verdict
    return SizeDetail(r.series, str(r.keys["perf_var"]), _size(str(r.keys["perf_var"])), r.unit,
                      v.change, v.confidence, v.baseline_median, v.latest_median)


def _earliest(results: list[SeriesResult]) -> dict | None:
    bad = [r.first_bad for r in results if r.first_bad]
    return min(bad, key=lambda b: b["time"]) if bad else None


def _union(windows: list[dict | None]) -> dict | None:
    found = [w for w in windows if w]
    if not found:
        return None
    return {"start": min(w["start"] for w in found), "end": max(w["end"] for w in found),
            "runs": max(w["runs"] for w in found)}


def library_name(family: str | None) -> str:
    """``Open MPI`` for ``openmpi``: the library's name from the family's record."""
    if family and families.known(str(family)):
        return str(families.get(str(family))["library"])
    return str(family or "MPI")


def _versions(results: list[SeriesResult], window: str, name: str) -> str:
    """The distinct values of ``name`` in the verdicts' ``window`` ('?' where none logged)."""
    values = (v for r in results for v in r.software.get(window, {}).get(name, []))
    return "/".join(dict.fromkeys(values)) or "?"


def software_text(family: str | None, results: list[SeriesResult]) -> str:
    """The versions the verdicts compared: ``Open MPI 4.1.5 -> 4.1.6, OSU 7.4 -> 7.4`` (the
    baseline windows' versions, then the latest windows')."""
    def change(name: str) -> str:
        return f"{_versions(results, 'baseline', name)} -> {_versions(results, 'latest', name)}"

    return f"{library_name(family)} {change('mpi_version')}, OSU {change('osu_version')}"


def latest_software(family: str | None, results: list[SeriesResult]) -> str:
    """The versions of the verdicts' latest windows: ``Open MPI 4.1.6, OSU 7.4``."""
    return (f"{library_name(family)} {_versions(results, 'latest', 'mpi_version')}, "
            f"OSU {_versions(results, 'latest', 'osu_version')}")


def _finding(keys: dict, status: str, hit: list[SeriesResult], judged: list[int]) -> Finding:
    detail = sorted((_detail(r) for r in hit), key=lambda d: (d.size is None, d.size or 0))
    moved = [d.latest_median / d.baseline_median - 1 for d in detail if d.baseline_median]
    return Finding(
        curve=curve_label(keys), keys=keys, status=status,
        sizes=sorted({d.size for d in detail if d.size is not None}), judged_sizes=judged,
        figures=[d.perf_var for d in detail if d.size is None],
        change_min=min(d.change for d in detail), change_max=max(d.change for d in detail),
        value_change=_percent(moved) if moved else "", confidence=min(d.confidence for d in detail),
        first_bad=_earliest(hit), baseline_window=_union([r.baseline_window for r in hit]),
        detail=detail, verdicts=hit, software=software_text(keys.get("mpi_family"), hit),
    )


def findings(results: list[SeriesResult], frame: pl.DataFrame | None = None) -> list[Finding]:
    """One finding per curve and direction from the per-series verdicts, worst first; with the
    records (``frame``), each says what changed between its baseline and its first bad run."""
    curves: dict[tuple, list[SeriesResult]] = {}
    for r in results:
        curves.setdefault(tuple(_plain(r.keys.get(k)) for k in CURVE_KEYS), []).append(r)
    found = []
    for members in curves.values():
        judged = sorted({s for r in members if r.verdict.status != "insufficient"
                         and (s := _size(str(r.keys["perf_var"]))) is not None})
        for status in STATUS_ORDER:
            hit = [r for r in members if r.verdict.status == status]
            if hit:
                keys = {k: members[0].keys.get(k) for k in CURVE_KEYS}
                found.append(_finding(keys, status, hit, judged))
    found.sort(key=lambda f: (STATUS_ORDER[f.status], -f.change_max, -f.confidence, f.curve))
    if frame is not None and found:
        for f, changes in zip(found, what_changed(
                [(f.keys, f.baseline_window, f.first_bad) for f in found], frame), strict=True):
            f.changes = changes
    return found
