"""Whole OSU curves kept beside the perflog by the checks, read back and joined to their runs
(data: three real sessions of our checks, tests/review/data/curves, see data/README.md)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest
from conftest import DATA

from omb_review.cli import main
from omb_review.read.curves import load_curves, report_frame
from omb_review.read.ingest import load
from omb_review.read.series import with_size
from omb_review.report.page import read_payload

CURVES = DATA / "curves"
PT2PT_SIZES = [2**i for i in range(23)]  # OSU 7.3's default sweep, 1 B to 4 MiB


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    return Path(shutil.copytree(CURVES, tmp_path / "perflogs"))


def _curves(root: Path):
    records = load(root, use_cache=False).frame
    points, problems = load_curves(root, records)
    return records, points, problems


def test_every_size_osu_measured_joins_its_runs_perflog_records():
    records, points, problems = _curves(CURVES)
    assert problems == []
    lat = points.filter(pl.col("benchmark") == "osu_latency")
    assert lat["session_tag"].unique().sort().to_list() == ["curves-1", "curves-2", "curves-3"]
    for (_job,), run in lat.group_by("jobid"):
        assert run["size"].to_list() == PT2PT_SIZES  # 23 sizes; the perflog has 6
        assert run["placement"].unique().to_list() == ["intra_socket"]
    # the sizes the perflog logged are the same numbers in the curve: the join is right
    logged = records.filter(pl.col("perf_var").cast(pl.String).str.contains(r"_\d+$")).select(
        pl.col("jobid").cast(pl.String), pl.col("perf_var").cast(pl.String), "value")
    both = logged.join(points.select("jobid", "perf_var", curve="value"),
                       on=["jobid", "perf_var"], how="inner")
    assert both.height == logged.height > 0
    assert (both["value"] == both["curve"]).all()


def test_collective_curves_keep_their_scale_and_algorithm():
    _records, points, _problems = _curves(CURVES)
    bcast = points.filter(pl.col("benchmark") == "osu_bcast")
    assert set(bcast["metric"]) == {"avg_latency", "min_latency", "max_latency"}
    assert bcast["size"].unique().sort().to_list() == [2**i for i in range(21)]  # to 1 MiB
    assert set(bcast["num_tasks"]) == {2} and set(bcast["algorithm"]) == {"default"}
    assert set(bcast["mapping"]) == {"core"} and set(bcast["session_tag"]) == {"curves-4"}


def test_report_curves_and_hockney_get_every_size():
    records = load(CURVES, use_cache=False).frame
    frame, problems = report_frame(CURVES, records)
    latency = frame.filter(pl.col("metric") == "latency")
    assert problems == [] and latency["size"].unique().sort().to_list() == PT2PT_SIZES
    logged = with_size(records).filter(pl.col("metric") == "latency")["size"].unique()
    assert len(logged) == 6  # what the perflog alone would give the curves and fits
    assert latency.group_by("jobid", "size").len()["len"].max() == 1  # no point twice


def test_unreadable_curve_lines_and_runs_no_perflog_has_are_reported(tree):
    log = next(tree.rglob("OsuPt2Pt.curves.jsonl"))
    good = json.loads(log.read_text().splitlines()[0])
    with log.open("a") as fp:
        fp.write("{not json\n")
        fp.write(json.dumps({**good, "format": 99}) + "\n")
        fp.write(json.dumps({k: v for k, v in good.items() if k != "jobid"}) + "\n")
        fp.write(json.dumps({**good, "jobid": "999999999"}) + "\n")  # constructed orphan
    _records, points, problems = _curves(tree)
    reasons = {p.line: p.reason for p in problems}
    n = len(log.read_text().splitlines())
    assert sorted(reasons) == [n - 3, n - 2, n - 1, n]
    assert reasons[n - 3].startswith("unreadable curve record")
    assert "unknown curve log format 99" in reasons[n - 2]
    assert reasons[n - 1] == "missing jobid"
    assert "no perflog record" in reasons[n]
    assert "999999999" not in points["jobid"].to_list()


def test_report_reads_the_curve_logs(tree, tmp_path):
    log = next(tree.rglob("OsuPt2Pt.curves.jsonl"))
    log.write_text(log.read_text() + "{not json\n")
    out = tmp_path / "report"
    assert main(["report", str(tree), "-o", str(out), "--no-cache", "--latest", "1",
                 "--link-peak", "local:default=25000"]) == 0
    assert "unreadable curve record" in (out / "report.html").read_text()
    charts = read_payload(out / "report.html")["charts"]
    sizes = max(len(c["series"]) for c in charts if c["keys"]["benchmark"] == "osu_latency")
    assert sizes > 6, "the report's charts have only the sizes the perflog records carry"
