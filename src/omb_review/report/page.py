"""The report: one self-contained, interactive HTML file (no server, no network).

The page holds the data as one JSON document (:func:`payload`), the page script
(``data/report.js``), its style and Plotly's ``plotly.min.js`` from the ``plotly`` Python
package, embedded once.  The browser draws: a findings table that filters and sorts, a
finding's time series (hover: value, date, job, nodes, versions; change points; reference band)
and its size curve before vs after, and the comparison views (:mod:`omb_review.report.views`), each
chart only when it scrolls into view.  Tables that need no script (Hockney fits, procurement,
unreadable lines) are plain HTML.  Why Plotly: docs/review.md#report.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Sequence
from importlib import resources
from pathlib import Path

from omb_review.judge.findings import CURVE_KEYS, Finding
from omb_review.judge.result import SeriesResult
from omb_review.read.ingest import Dataset
from omb_review.report import procurement
from omb_review.report.hockney import Fit
from omb_review.report.plots import Raw, Split, plain
from omb_review.tuning import tune
from omb_suite.perflogs.reader import Problem

SECTIONS = (  # id, heading, what it answers
    ("libraries", "MPI library vs library",
     "The same benchmark, placement and scale with each MPI library (recent medians)."),
    ("placements", "Placement vs placement",
     "Intra-socket vs inter-node, map-by core vs socket: the same benchmark placed differently."),
    ("algorithms", "Collective algorithm vs the default, per scale",
     "Each algorithm's recent median relative to the library's default (blue: faster, red: "
     "slower), per number of processes; pick the message size."),
    ("scaling", "Scaling over ranks and nodes",
     "The value at each message size over process and node counts (legend: show more sizes)."),
    ("hockney", "Hockney fits T = L + M/B",
     "Latency curves as measured; bandwidth curves as the time per message M / bandwidth."),
)
DATA_TAG = "<script id='report-data' type='application/json'>"
EMPTY = {
    "libraries": "No curve was measured with more than one MPI library.",
    "placements": "No curve was measured with more than one placement or mapping.",
    "algorithms": "No collective was measured with more than one algorithm.",
    "scaling": "No curve was measured at more than one scale.",
    "hockney": "No point-to-point curve with 3 sizes or more.",
}


def _asset(name: str) -> str:
    return (resources.files("omb_review") / "data" / name).read_text()


def plotly_js() -> str:
    """Plotly's bundle as the ``plotly`` package ships it (offline, one copy per page)."""
    return (resources.files("plotly") / "package_data" / "plotly.min.js").read_text()


def _esc(x: object) -> str:
    return html.escape(str(x))


def _table(header: Sequence[str], rows: list[Sequence[object]], ident: str = "") -> str:
    head = "".join(f"<th>{_esc(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td>{_esc(c)}</td>" for c in row) + "</tr>"
                   for row in rows)
    return f"<table{f' id={ident!r}' if ident else ''}><tr>{head}</tr>{body}</table>"


def _finding(f: Finding, charts: dict[tuple, list[int]], variables: dict[int, set]) -> dict:
    """The finding as the page shows it, with its charts (the one of its sizes first)."""
    item = f.to_json()
    ident = tuple(str(plain(f.keys.get(k))) for k in CURVE_KEYS)
    hit = {d.perf_var for d in f.detail}
    item["charts"] = sorted(charts.get(ident, []), key=lambda c: -len(hit & variables[c]))
    item["keys"] = {k: plain(f.keys.get(k)) for k in CURVE_KEYS}
    return item


def _hockney_views(fits: list[Fit]) -> list[dict]:
    return [{"keys": f.keys,
             "title": f.curve, "unit": "us", "sizes": f.sizes, "times": f.times,
             "alpha": f.alpha_us, "beta": f.beta_mbps if f.resolved else None,
             "note": f"L = {f.alpha_us:.3g} us, B = "
                     + (f"{f.beta_mbps:,.0f} MB/s" if f.resolved else "not resolved")}
            for f in fits]


def payload(ds: Dataset, found: list[Finding], charts: list[dict], infos: list[str],
            views: dict[str, list], fits: list[Fit], split: Split) -> dict:
    """Everything the page script draws from."""
    index: dict[tuple, list[int]] = {}
    for c in charts:
        index.setdefault(tuple(str(c["keys"].get(k)) for k in CURVE_KEYS), []).append(c["id"])
    variables = {c["id"]: {s["var"] for s in c["series"]} for c in charts}
    return {
        "meta": {"split": split.when.timestamp(), "split_caption": split.caption},
        "findings": [_finding(f, index, variables) for f in found],
        "charts": charts, "infos": infos,
        "views": {**views, "hockney": _hockney_views(fits)}, "empty": EMPTY,
    }


def hockney_table(fits: list[Fit]) -> str:
    rows = [
        (f.curve, f"{f.alpha_us:.3g}",
         f"{f.beta_mbps:.4g}" if f.resolved else "not resolved (sizes too small)",
         f"{f.r2:.3f}", f.points, "" if f.peak_percent is None else f"{f.peak_percent:.1f}%")
        for f in fits
    ]
    header = ("curve", "L = alpha (us)", "B = beta (MB/s)", "R^2 (log)", "sizes",
              "% of link peak")
    return _table(header, rows, "hockney-table") if rows else ""


def tuning_table(studies: list[tune.Study], said: list[str]) -> str:
    """The tuning recommendation (``omb-review tune``'s table) of the algorithm sweeps, or why
    there is none."""
    rows = [row for s in studies for row in tune.rows(s)]
    notes = "".join(f"<p class='muted'>{_esc(n)}</p>" for n in said)
    if not rows:
        return notes + ("<p class='muted'>Tuning: nothing to recommend (no algorithm beats the "
                        "default beyond the noise in the sweeps here).</p>" if studies else "")
    return ("<h3>Tuning recommendation (omb-review tune)</h3>" + notes
            + _table(tune.COLUMNS, rows, "tuning-table"))


def procurement_table(root: Path) -> str:
    """The procurement result table of the tree's OsuProcurement runs, or why there is none."""
    try:
        rows = procurement.table(procurement.read_records(root))
    except procurement.ProcurementError as err:
        return f"<p class='muted'>{_esc(err)}</p>"
    cells = [[c.strip("`") for c in r.cells()] for r in rows]
    return _table(procurement.COLUMNS, cells, "procurement-table")


def _problems(problems: list[Problem], limit: int = 200) -> str:
    if not problems:
        return "<p>None: every line was read.</p>"
    rows = [(p.source, p.line, p.reason, p.text[:160]) for p in problems[:limit]]
    more = f"<p>... and {len(problems) - limit} more.</p>" if len(problems) > limit else ""
    return (f"<p>{len(problems)} lines not used.</p><div class='scroll'>"
            + _table(("file", "line", "problem", "text"), rows) + f"</div>{more}")


def to_json(data: dict) -> str:
    """JSON safe inside a <script> element.  :class:`~omb_review.report.plots.Raw` texts (arrays
    polars already wrote) go in as they are, which spares re-encoding 400,000 numbers."""
    raws: list[str] = []

    def marked(o):
        if isinstance(o, Raw):
            raws.append(o)
            return f"\0omb-raw:{len(raws) - 1}\0"
        if isinstance(o, dict):
            return {k: marked(v) for k, v in o.items()}
        if isinstance(o, list):
            return [marked(v) for v in o]
        return o

    text = json.dumps(marked(data), separators=(",", ":"), allow_nan=False)
    text = re.sub(r'"\\u0000omb-raw:(\d+)\\u0000"', lambda m: raws[int(m[1])], text)
    return text.replace("</", "<\\/")


def _body(ds: Dataset, results: list[SeriesResult], notes: list[str], tables: dict[str, str]):
    f = ds.frame
    fmt = "%Y-%m-%d %H:%M"
    span = f"{f['time'].min():{fmt}} .. {f['time'].max():{fmt}} UTC" if f.height else "-"
    counts = {s: sum(r.verdict.status == s for r in results)
              for s in ("regression", "improvement", "ok", "insufficient")}
    nav = "".join(f"<a href='#sec-{i}'>{_esc(h)}</a>" for i, h, _ in SECTIONS)
    fleet = (f"<h2 id='sec-fleet'>Fleet: node by node</h2>{tables['fleet']}"
             if tables.get("fleet") else "")
    nav += "<a href='#sec-fleet'>Fleet</a>" if fleet else ""
    views = "".join(
        f"<h2 id='sec-{i}'>{_esc(h)}</h2><p class='muted'>{_esc(why)}</p>"
        + tables.get(i, "") + f"<div class='cards' id='view-{i}'></div>" for i, h, why in SECTIONS)
    return f"""<h1>OMB perflog trend review</h1>
<p>{ds.files} input files, {f.height} records, {len(results)} series ({
        ", ".join(f"{n} {s}" for s, n in counts.items())}), {span}.</p>
{"".join(f"<p class='muted'>{_esc(n)}</p>" for n in notes)}
<nav><a href='#sec-findings'>Findings</a>{nav}<a href='#sec-procurement'>Procurement</a>
<a href='#sec-problems'>Input problems</a></nav>
<div id='filters'><input id='filter-text' placeholder='curve contains...' size='24'>
<label><input type='checkbox' id='filter-all'> curves without a finding</label> </div>
<h2 id='sec-findings'>Findings</h2>
<p class='muted'>One row per curve with a regression or improvement, worst first. Click a row
for its charts; click a heading to sort. <span id='findings-count'></span></p>
<div class='scroll'><table id='findings-table'></table></div>
<div id='detail' hidden><h3 id='detail-title'></h3><p id='detail-summary'></p>
<label>variable <select id='detail-size'></select></label>
<span class='muted'>orange dashes: change points; red dots: first bad run; green: reference
band (the axis follows the data, not the band); grey: baseline window; red x: failed runs.</span>
<div class='row'><div id='detail-ts' class='plot tall'></div>
<div id='detail-curve' class='plot tall'></div></div>
<table id='detail-changed'></table><br><table id='detail-sizes'></table></div>
{views}
{fleet}<h2 id='sec-procurement'>Procurement table</h2>{tables["procurement"]}
<h2 id='sec-problems'>Input problems</h2>{_problems(ds.problems)}"""


def read_payload(path: Path) -> dict:
    """The data a written page holds (for scripts and tests)."""
    text = path.read_text()
    start = text.index(DATA_TAG) + len(DATA_TAG)
    return json.loads(text[start:text.index("</script>", start)])


def write(path: Path, ds: Dataset, results: list[SeriesResult], data: dict, fits: list[Fit],
          notes: list[str], root: Path, tuning: str = "", fleet: str = "") -> int:
    """Write the page; returns its size in bytes.  ``fleet``: the fleet section's body
    (:func:`omb_review.report.fleet_matrix.section`), none when the tree holds no fleet run."""
    tables = {"hockney": hockney_table(fits), "procurement": procurement_table(root),
              "algorithms": tuning, "fleet": fleet}
    text = (
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>OMB trend review</title>"
        f"<style>{_asset('report.css')}</style></head><body>"
        + _body(ds, results, notes, tables)
        + f"{DATA_TAG}{to_json(data)}</script>"
        + f"<script>{_asset('report.js')}</script><script>{plotly_js()}</script></body></html>"
    )
    path.write_text(text)
    return len(text)

