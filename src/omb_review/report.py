"""The self-contained HTML report: figures embedded as base64 PNGs, inline CSS, no server.

A three-line inline script records on ``<body data-figures-rendered=N>`` how many images the
browser actually decoded; the headless-browser test reads it back.
"""

from __future__ import annotations

import base64
import html
from collections.abc import Sequence
from pathlib import Path

from .gate import SeriesResult
from .hockney import Fit
from .ingest import Dataset
from .perflog import Problem

STYLE = """body{font-family:sans-serif;margin:1.5em;max-width:1200px}
table{border-collapse:collapse;font-size:12px}td,th{border:1px solid #ccc;padding:2px 6px}
.regression{background:#fdd}.improvement{background:#dfd}figure{display:inline-block;margin:6px}
figcaption{font-size:11px;max-width:640px}img{border:1px solid #eee}"""
SCRIPT = """window.addEventListener('load',()=>{const i=[...document.images];
document.body.dataset.figuresRendered=i.filter(x=>x.complete&&x.naturalWidth>0).length;
document.body.dataset.figures=i.length;});"""


def _esc(x: object) -> str:
    return html.escape(str(x))


def _table(header: Sequence[str], rows: list[Sequence[object]], classes: list[str] | None = None):
    head = "".join(f"<th>{_esc(h)}</th>" for h in header)
    body = "".join(
        f"<tr class='{(classes or [''] * len(rows))[i]}'>"
        + "".join(f"<td>{_esc(c)}</td>" for c in row) + "</tr>"
        for i, row in enumerate(rows)
    )
    return f"<table><tr>{head}</tr>{body}</table>"


def _figures(figs: list[tuple[str, Path]]) -> str:
    parts = []
    for caption, path in figs:
        data = base64.b64encode(path.read_bytes()).decode()
        parts.append(f"<figure><img alt='{_esc(caption)}' src='data:image/png;base64,{data}'>"
                     f"<figcaption>{_esc(caption)}</figcaption></figure>")
    return "".join(parts) or "<p>No data for this kind of figure.</p>"


def _verdicts(results: list[SeriesResult]) -> str:
    flagged = [r for r in results if r.verdict.status in ("regression", "improvement")]
    rows = [
        (r.verdict.status, r.series, f"{100 * r.verdict.change:+.1f}%",
         f"{r.verdict.confidence:.3f}", r.verdict.method,
         f"{r.verdict.n_baseline}/{r.verdict.n_latest}",
         (r.first_bad or {}).get("time", ""))
        for r in flagged
    ]
    counts = {s: sum(r.verdict.status == s for r in results)
              for s in ("regression", "improvement", "ok", "insufficient")}
    summary = ", ".join(f"{n} {s}" for s, n in counts.items())
    header = ("verdict", "series", "change (+ = worse)", "confidence", "test", "n base/latest",
              "first bad run")
    return f"<p>{summary}</p>" + (_table(header, rows, [r[0] for r in rows]) if rows else "")


def _hockney(fits: list[Fit]) -> str:
    rows = [
        (f.curve, f"{f.alpha_us:.3g}",
         f"{f.beta_mbps:.4g}" if f.resolved else "not resolved (sizes too small)",
         f"{f.r2:.3f}", f.points, "" if f.peak_percent is None else f"{f.peak_percent:.1f}%")
        for f in fits
    ]
    header = ("curve", "alpha (us)", "beta (MB/s)", "R^2 (log)", "sizes", "% of link peak")
    return _table(header, rows) if rows else "<p>No point-to-point latency curves.</p>"


def _problems(problems: list[Problem], limit: int = 200) -> str:
    if not problems:
        return "<p>None: every line was read.</p>"
    rows = [(p.source, p.line, p.reason, p.text[:160]) for p in problems[:limit]]
    more = f"<p>... and {len(problems) - limit} more.</p>" if len(problems) > limit else ""
    return f"<p>{len(problems)} lines not used.</p>" + _table(
        ("file", "line", "problem", "text"), rows) + more


def write(
    path: Path, ds: Dataset, results: list[SeriesResult], sections: dict[str, list],
    fits: list[Fit], notes: list[str],
) -> None:
    """Write the report; ``sections`` maps a heading to its ``(caption, png)`` figures."""
    f = ds.frame
    fmt = "%Y-%m-%d %H:%M"
    span = f"{f['time'].min():{fmt}} .. {f['time'].max():{fmt}} UTC" if f.height else "-"
    body = [
        "<h1>OMB perflog trend review</h1>",
        f"<p>{ds.files} input files, {f.height} records, {len(results)} series, {span}.</p>",
        *(f"<p>{_esc(n)}</p>" for n in notes),
        "<h2>Verdicts</h2>", _verdicts(results),
        *(f"<h2>{_esc(h)}</h2>{_figures(figs)}" for h, figs in sections.items()),
        "<h2>Hockney fits</h2>", _hockney(fits),
        "<h2>Input problems</h2>", _problems(ds.problems),
    ]
    path.write_text(
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>OMB trend review</title>"
        f"<style>{STYLE}</style><script>{SCRIPT}</script></head><body>"
        + "\n".join(body) + "</body></html>"
    )
