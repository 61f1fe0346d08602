"""The report's page and data without a browser: one file, every record in the charts, each
finding pointing at the chart of its sizes, views built from the right curves."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path

import polars as pl
import pytest
from conftest import DATA, REPO

from omb_review.read.ingest import load
from omb_review.read.series import with_size
from omb_review.report import plots
from omb_review.report.page import procurement_table, read_payload, to_json
from omb_review.report.plots import Raw


@pytest.fixture(scope="module")
def bench(bench_page: Path) -> tuple[str, dict]:
    return bench_page.read_text(), read_payload(bench_page)


def test_page_is_one_file_with_plotly_once_and_nothing_to_fetch(bench):
    html, _ = bench
    assert html.count("* plotly.js v") == 1
    assert not re.search(r"<script[^>]+src=|<link|<img|<iframe", html)


def test_every_value_of_our_real_runs_is_in_the_chart_data():
    frame = with_size(load(DATA / "ours", use_cache=False).frame)
    charts, infos = plots.charts(frame, [])
    data = json.loads(to_json({"charts": charts}))["charts"]
    drawn = sum(v is not None for c in data for s in c["series"] for v in s["v"])
    assert drawn == frame.filter(pl.col("value").is_not_null()).height
    runs = {(c["keys"]["lineage"], t) for c in data for t in c["t"]}
    assert len(runs) >= 2 and all(info.startswith("nodes ") for info in infos)
    assert all(len(s["v"]) == len(c["t"]) for c in data for s in c["series"])


def test_the_injected_regression_is_one_finding_pointing_at_its_chart(bench):
    _, data = bench
    found = [f for f in data["findings"] if f["status"] == "regression"
             and f["keys"]["system"] == "alpha" and f["keys"]["placement"] == "inter_node"]
    assert len(found) == 1
    chart = next(c for c in data["charts"] if c["id"] == found[0]["charts"][0])
    assert chart["keys"]["benchmark"] == "osu_latency" and chart["keys"]["partition"] == "cpu"
    assert {d["perf_var"] for d in found[0]["detail"]} <= {s["var"] for s in chart["series"]}
    assert {c["field"] for c in found[0]["what_changed"]} >= {"spack_lock", "job_nodelist"}


def test_views_compare_what_differs_only_in_the_compared_field(bench):
    _, data = bench
    views = data["views"]
    for group in views["libraries"]:
        assert len({line["name"] for line in group["lines"]}) == len(group["lines"]) >= 2
        assert "lineage" not in group["keys"]
    heat = views["algorithms"]
    # the bench runs three algorithms at 4, 8 and 16 tasks, and no default: relative to the
    # fastest, said so by default=None
    assert heat and all(h["default"] is None and h["scales"] == [4, 8, 16] for h in heat)
    assert all(len(h["z"]) == len(h["sizes"]) and len(h["z"][0]) == len(h["algs"]) == 3
               for h in heat)
    assert views["hockney"] and all(h["beta"] and h["keys"]["lineage"] for h in views["hockney"])


def test_raw_json_goes_in_as_written_and_cannot_close_the_script():
    text = to_json({"a": Raw("[1.5,null]"), "b": ["</script>", Raw("[2]")]})
    assert json.loads(text) == {"a": [1.5, None], "b": ["</script>", [2]]}
    assert "</script>" not in text


def test_procurement_section_from_real_runs_or_what_to_run(tmp_path):
    html = procurement_table(REPO / "tests" / "data" / "procurement")
    rows = re.findall(r"<tr>(.*?)</tr>", html)
    assert "id='procurement-table'" in html and len(rows) > 2
    assert sum("<td>worst</td>" in r for r in rows) >= 2  # one per group (CPU intra/inter...)
    assert "run the procurement checks first" in procurement_table(tmp_path)


def test_synthetic_variable_missing_in_a_run_gets_null_there():
    """Synthetic: three runs of a curve, the 8 B size missing from the second one."""
    stamps = [datetime(2026, 1, d, tzinfo=timezone.utc) for d in (1, 2, 3)]
    rows = [(t, size, 1.0 + i) for i, t in enumerate(stamps) for size in (1, 8)
            if not (i == 1 and size == 8)]
    frame = pl.DataFrame({
        "system": "s", "partition": "p", "test": "T", "unit": "us", "jobid": "7",
        "time": [r[0] for r in rows], "size": [r[1] for r in rows],
        "perf_var": [f"latency_{r[1]}" for r in rows], "metric": "latency",
        "value": [r[2] for r in rows]})
    (chart,), _ = plots.charts(frame, [])
    values = {s["var"]: s["v"] for s in json.loads(to_json({"c": chart}))["c"]["series"]}
    assert values == {"latency_1": [1.0, 2.0, 3.0], "latency_8": [1.0, None, 3.0]}
