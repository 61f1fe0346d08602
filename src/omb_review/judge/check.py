"""``omb-review check`` as a function: the verdicts, the findings and the exit status of one
perflog frame, so the command and the gate's own benchmark (benchmarks/gate_operating.py) run
the very same decision."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import polars as pl

from omb_review.judge import gate, gate_output, osu_releases
from omb_review.judge.detect import Settings
from omb_review.judge.findings import Finding, findings

EXIT_REGRESSION = 1
EXIT_USAGE = 2
EXIT_NOTHING_JUDGED = 3  # every series insufficient: the gate could say nothing
EXIT_NEW_SERIES = 4  # series of the judged session without a baseline: not judged, not a pass
EXIT_SHARED = 5  # worse with every other library of its sessions: the machine's (canary.py)


@dataclass
class Outcome:
    """What the gate decided: per-series verdicts, findings (curves), the exit status and the
    lines that say why it is not a pass (empty for a pass or a regression)."""

    results: list[gate.SeriesResult]
    found: list[Finding]
    code: int
    why: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def regressions(self) -> list[Finding]:
        return [f for f in self.found if f.status == "regression"]


def _not_a_pass(what: str, flag: str, allowed: bool, code: int, when: str) -> tuple[int, str]:
    """Why the verdict is not a pass; exit 0 where ``flag`` allows it, else ``code``."""
    return (0 if allowed else code), (
        f"omb-review check: {what}: this is not a pass"
        + (f"; {flag}: exit 0" if allowed else f"; exit {code} ({flag} {when})"))


def verdict_code(results: list[gate.SeriesResult], allow_empty: bool,
                 allow_new: bool) -> tuple[int, list[str]]:
    """The exit status: a regression, nothing judged, series without a baseline, or a pass."""
    counts = gate_output.counts(results)
    if counts["regression"]:
        return EXIT_REGRESSION, []
    if counts["shared"]:
        return EXIT_SHARED, [
            f"omb-review check: {counts['shared']} series moved with the other libraries of "
            f"their sessions (SHARED above): the machine or the system, not a library; this is "
            f"not a pass; exit {EXIT_SHARED}"]
    if counts["insufficient"] == len(results):
        busy = sum(r.busy_latest > 0 for r in results)
        what = (f"no series judged ({len(results)} series, none with a baseline and latest "
                "runs to compare" + (f"; {busy} of them measured only on a busy node" if busy
                                     else "") + ")")
        code, line = _not_a_pass(what, "--allow-empty", allow_empty, EXIT_NOTHING_JUDGED,
                                 "for a site's first runs")
        return code, [line]
    if counts["new"]:
        code, line = _not_a_pass(f"{counts['new']} series of the judged session have no "
                                 "baseline (see NEW above)", "--allow-new", allow_new,
                                 EXIT_NEW_SERIES, "when they are new on purpose")
        return code, [line]
    return 0, []


def check(frame: pl.DataFrame, windows: gate.Windows, settings: Settings,
          overrides: list[tuple[str, float]], allow_empty: bool = False,
          allow_new: bool = False, quiet: bool = False) -> Outcome:
    """Judge ``frame`` as ``omb-review check`` does (OSU's own changes split off first)."""
    frame, splits, notes = osu_releases.split(frame)  # OSU changed the benchmark
    if not quiet:
        for note in notes:
            print(f"omb-review: {note}", file=sys.stderr)
    results = gate.run(frame, windows, settings, overrides)
    osu_releases.mark(results, splits)
    found = findings(results, frame)
    code, why = verdict_code(results, allow_empty, allow_new)
    return Outcome(results, found, code, why, notes)
