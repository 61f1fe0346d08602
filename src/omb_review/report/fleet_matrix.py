"""The report's fleet section: each fleet run node by node (plain HTML, no script).

One matrix per (job, benchmark): a cell is the pair's figure across two nodes, the diagonal
each node's figure within itself, coloured by how many times worse than the fleet's baseline
it is (white at the baseline, full red at the run's tolerance and beyond); the named nodes,
links and groups above it, with the drain lines a site would run. Above ``MAX_NODES`` nodes
the matrix is left out (a thousand-node table helps nobody): the verdict lists the slow pairs.
"""

from __future__ import annotations

import html
import math

from omb_review.judge.fleet import Run
from omb_suite.fleet import culprit

#: Largest fleet drawn as a matrix.
MAX_NODES = 48


def _esc(x: object) -> str:
    return html.escape(str(x))


def ratio(run: Run, value: float, base: float | None) -> float | None:
    """How many times worse than ``base`` the figure is (above 1: worse; ``None`` without a
    base)."""
    if not base or not value:
        return None
    return culprit.worse(value, base, run.higher_is_worse)


def shade(r: float | None, tolerance: float) -> str:
    """The cell's background: white up to x1, red growing on a log scale to the tolerance."""
    if r is None or r <= 1:
        return '#ffffff'
    strength = min(1.0, math.log(r) / math.log(tolerance))
    other = round(255 - 165 * strength)
    return f'#ff{other:02x}{other:02x}'


def _cell(run: Run, label: str, value: float | None, base: float | None, own: bool) -> str:
    if value is None:
        return "<td class='fleet-none' title='not measured'>-</td>"
    r = ratio(run, value, base)
    slow = r is not None and r > run.tolerance
    title = f"{label}: {value:.4g} {run.unit}" + (f" (x{r:.1f})" if r is not None else "")
    cls = ' '.join(c for c in ('fleet-own' if own else '', 'fleet-slow' if slow else '') if c)
    return (f"<td class='{cls}' style='background:{shade(r, run.tolerance)}' "
            f"title='{_esc(title)}'>{value:.3g}</td>")


def matrix(run: Run) -> str:
    """The node-by-node table of one run (or why there is none)."""
    nodes = run.nodes
    if len(nodes) > MAX_NODES:
        return (f"<p class='muted'>{len(nodes)} nodes: the matrix is drawn up to {MAX_NODES}; "
                f"the verdict above lists the slow pairs (omb-review fleet prints them).</p>")
    own_base = run.verdict.intra_baseline
    head = "".join(f"<th>{_esc(n)}</th>" for n in nodes)
    rows = []
    for a in nodes:
        cells = []
        for b in nodes:
            if a == b:
                cells.append(_cell(run, f"{a} within itself", run.intra.get(a), own_base, True))
            else:
                key = (a, b) if a <= b else (b, a)
                cells.append(_cell(run, f"{key[0]}-{key[1]}", run.pairs.get(key),
                                   run.verdict.baseline, False))
        rows.append(f"<tr><th>{_esc(a)}</th>{''.join(cells)}</tr>")
    return f"<table class='fleet-matrix'><tr><th></th>{head}</tr>{''.join(rows)}</table>"


def headline(run: Run) -> str:
    """One line naming what the run found, for the top of the report ('' when nothing)."""
    named = [f"{f.kind} {f.name}" for f in run.verdict.findings]
    named += [f"failed {n}" for n in run.verdict.failed]
    if not named:
        return ""
    return (f"Fleet: {', '.join(named)} ({run.benchmark}, job {run.job} on {run.where}, "
            f"{run.environ}): see 'Fleet: node by node'.")


def section(runs: list[Run]) -> str:
    """The fleet section's body: per run, what it named, the drain lines, the matrix."""
    if not runs:
        return ("<p class='muted'>No fleet run here (OsuFleet.log): reframe ... --mode fleet "
                "-r (docs/howto-fleet.md).</p>")
    parts = ["<p class='muted'>Each cell: the figure across two nodes (row, column); the "
             "diagonal: each node within itself. White is the fleet's baseline, red the "
             "run's tolerance and beyond (bold: slow). Hover a cell for its figure and "
             "ratio.</p>"]
    for run in sorted(runs, key=lambda r: (not r.verdict.findings, r.where, r.benchmark)):
        v = run.verdict
        base = f"{v.baseline:.4g} {run.unit}" if v.baseline is not None else "none"
        parts.append(f"<h3>{_esc(run.benchmark)} on {_esc(run.where)} ({_esc(run.environ)}), "
                     f"job {_esc(run.job)}: baseline {_esc(base)}, tolerance "
                     f"x{run.tolerance:g}</h3>")
        lines = v.lines()[1:len(v.lines()) - len(v.notes)] or ["  nothing slow"]
        lines += [*v.notes, *(f"  to drain: {d}" for d in v.drain_commands())]
        parts.append(f"<pre class='fleet-verdict'>{_esc(chr(10).join(lines))}</pre>")
        parts.append(matrix(run))
    return "".join(parts)
