"""What ``omb-review check`` prints and writes: findings first (one per curve), then the series
of the judged session that had no baseline (new), why other series were not judged, what
software was judged, the counts, and the JSON (per-series verdicts plus findings)."""

from __future__ import annotations

import json
from pathlib import Path

from omb_review.judge.detect import Settings
from omb_review.judge.findings import Finding, latest_software, size_text, software_text
from omb_review.judge.result import SeriesResult
from omb_suite.perflogs.problem import Problem

EXAMPLES = 3  # series named per reason a series was not judged
STATUSES = ("regression", "watch", "shared", "improvement", "ok", "insufficient")


def finding_lines(f: Finding) -> list[str]:
    """The finding's summary, what changed, and its sizes with their change (worse = +)."""
    lines = [f.summary(changes=False)]
    for c in f.changes:
        varied = f" (baseline had {c.baseline_distinct} values)" if c.baseline_distinct > 1 else ""
        lines.append(f"  changed {c.field}: {' / '.join(c.baseline)} -> {c.first_bad}{varied}")
    per_size = ", ".join(
        f"{size_text(d.size) if d.size is not None else d.perf_var} {100 * d.change:+.1f}%"
        for d in f.detail)
    lines.append(f"  per size (worse by): {per_size}")
    return lines


def not_judged(results: list[SeriesResult]) -> list[str]:
    """Why series were not judged: one line per reason, with a few of them named."""
    by_reason: dict[str, list[str]] = {}
    for r in results:
        if r.verdict.status == "insufficient":
            by_reason.setdefault(r.verdict.reason, []).append(r.series)
    lines = []
    for reason, names in sorted(by_reason.items(), key=lambda kv: -len(kv[1])):
        more = f" and {len(names) - EXAMPLES} more" if len(names) > EXAMPLES else ""
        lines.append(f"NOT JUDGED {len(names)} series, {reason}: "
                     + "; ".join(names[:EXAMPLES]) + more)
    return lines


def _named(names: list[str]) -> str:
    more = f" and {len(names) - EXAMPLES} more" if len(names) > EXAMPLES else ""
    return "; ".join(names[:EXAMPLES]) + more


def _span(numbers: list[int]) -> str:
    lo, hi = min(numbers), max(numbers)
    return str(lo) if lo == hi else f"{lo}-{hi}"


def new_series(results: list[SeriesResult], s: Settings) -> list[str]:
    """The series of the judged session with no baseline, per lineage and environment: how
    many, their baseline sessions and the sessions needed, and what to do."""
    groups: dict[tuple, list[SeriesResult]] = {}
    for r in results:
        if r.new:
            latest = r.software.get("latest", {})
            what = (str(r.keys["lineage"]), "/".join(latest.get("environ", [])),
                    r.keys.get("mpi_family"))
            groups.setdefault(what, []).append(r)
    lines = []
    for (lineage, environ, family), rs in groups.items():
        runs = _span([r.verdict.n_baseline for r in rs])
        lines.append(f"NEW {len(rs)} series of {lineage} (environment {environ}, "
                     f"{latest_software(family, rs)}) have no baseline: {runs} baseline sessions, "
                     f"{s.min_baseline} needed: " + _named([r.series for r in rs]))
    if lines:
        lines.append(
            "NEW series are not judged, so this is not a pass. If the library replaces one "
            "measured before under another environment name, declare the same series for both "
            "(ReFrame environment extras: {series: NAME}; omb-setup --module ... --series NAME) "
            f"and check again; if the series are new on purpose, run {s.min_baseline} sessions "
            "(omb-review baseline writes provisional references meanwhile) and pass --allow-new "
            "until then")
    return lines


def judged(results: list[SeriesResult]) -> str:
    """The libraries and versions judged in the session: ``openmpi: Open MPI 4.1.5 -> 4.1.6,
    OSU 7.4 -> 7.4 (14 series)``."""
    groups: dict[tuple, list[SeriesResult]] = {}
    for r in results:
        if r.in_session and r.verdict.status != "insufficient":
            groups.setdefault((str(r.keys["lineage"]), r.keys.get("mpi_family")), []).append(r)
    return "; ".join(f"{lineage}: {software_text(family, rs)} ({len(rs)} series)"
                     for (lineage, family), rs in sorted(groups.items(), key=str)) or "nothing"


def counts(results: list[SeriesResult]) -> dict[str, int]:
    return {s: sum(r.verdict.status == s for r in results) for s in STATUSES} | {
        "new": sum(r.new for r in results)}


def report(results: list[SeriesResult], found: list[Finding], show: int,
           s: Settings) -> list[str]:
    """The printed verdict: regression findings (at most ``show``), the new series, then what
    was not judged."""
    lines = []
    for f in [f for f in found if f.status == "regression"][:show]:
        lines += finding_lines(f)
    watch = [f for f in found if f.status == "watch"]
    for f in watch[:show]:
        lines += finding_lines(f)
    if watch:
        lines.append(f"WATCH {len(watch)} curves are worse in their last session only ({s.confirm} "
                     "sessions confirm a regression): not a failure yet; the next session "
                     "confirms or clears them")
    shared = [f for f in found if f.status == "shared"]
    for f in shared[:show]:
        lines += finding_lines(f)
    if shared:
        lineages = sorted({str(f.keys.get("lineage")) for f in shared})
        lines.append(f"SHARED {len(shared)} curves ({', '.join(lineages)}) moved with the other "
                     "libraries measured in the same sessions: the machine or the system "
                     "changed (kernel, firmware, a shared library, a neighbour), not one MPI "
                     "library. Not a library's regression and not a pass: find what changed "
                     "on the nodes, or run the sessions again")
    return lines + new_series(results, s) + not_judged(results)


def write_json(path: Path, results: list[SeriesResult], found: list[Finding],
               problems: list[Problem], notes: list[str]) -> None:
    """``counts``, ``findings`` (one per curve, worst first; each names its ``series``),
    ``series`` (every per-series verdict), ``problems`` and ``notes``."""
    path.write_text(json.dumps({
        "counts": counts(results) | {"findings": len(found)},
        "problems": [p.__dict__ for p in problems], "notes": notes,
        "findings": [f.to_json() for f in found],
        "series": [r.to_json() for r in results],
    }, indent=1, default=str))
