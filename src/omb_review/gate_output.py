"""What ``omb-review check`` prints and writes: findings first (one per curve), then why
series were not judged, the counts, and the JSON (per-series verdicts plus findings)."""

from __future__ import annotations

import json
from pathlib import Path

from .findings import Finding, size_text
from .gate import SeriesResult
from .problem import Problem

EXAMPLES = 3  # series named per reason a series was not judged
STATUSES = ("regression", "improvement", "ok", "insufficient")


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


def counts(results: list[SeriesResult]) -> dict[str, int]:
    return {s: sum(r.verdict.status == s for r in results) for s in STATUSES}


def report(results: list[SeriesResult], found: list[Finding], show: int) -> list[str]:
    """The printed verdict: regression findings (at most ``show``), then what was not judged."""
    lines = []
    for f in [f for f in found if f.status == "regression"][:show]:
        lines += finding_lines(f)
    return lines + not_judged(results)


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
