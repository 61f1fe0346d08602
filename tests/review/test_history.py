"""Years of history: ReFrame 3 perflogs, early ReFrame 4 formats and perflog headers that
changed over time read as one history (data/README.md says how each tree was written)."""

from __future__ import annotations

import json
import shutil
from datetime import datetime, timezone
from pathlib import Path

import polars as pl
import pytest
from conftest import DATA

from omb_review.cli import EXIT_NOTHING_JUDGED, main
from omb_review.read.ingest import load
from omb_review.read.series import grouped
from omb_review.report.page import read_payload
from omb_suite.perflogs.rfm3 import NO_VALUES


def _load(tree: Path):
    return load(tree, use_cache=False, auto_sources=False)


def _runs(frame: pl.DataFrame) -> pl.DataFrame:
    return grouped(frame).with_columns(runs=pl.col("value").list.len())


def test_reframe3_site_perflogs_are_read_with_zone_offsets():
    """StackHPC's ReFrame 3.0/3.2 perflogs: no header, unit before ref=, tags after it."""
    ds = _load(DATA / "rfm3-stackhpc")
    assert not ds.problems and ds.frame.height == 75
    lat = ds.frame.filter(
        (pl.col("test") == "Osu_latency") & (pl.col("jobid") == "4992")
    ).row(0, named=True)
    assert (lat["system"], lat["partition"], lat["environ"]) == (
        "alaska", "ib-gcc9-openmpi4-ucx", "omb")
    assert (lat["perf_var"], lat["value"], lat["unit"], lat["ref"]) == ("min_latency", 1.06,
                                                                          "us", 0.0)
    assert lat["lower"] is None and lat["upper"] is None
    # 2020-08-19T16:35:02+01:00
    assert lat["time"] == datetime(2020, 8, 19, 15, 35, 2, tzinfo=timezone.utc)
    units = set(ds.frame["unit"].cast(pl.String))
    assert units == {"us", "MB/s", "Messages/s"}


def test_reframe3_then_40_then_410_is_one_history(tmp_path):
    """One check run 4 times each under ReFrame 3.12 (header-less, `@sys:part+env`), 4.0.5
    (comma-separated default, rotated to .h1) and 4.10 (this suite's format): two series,
    12 runs each, the gate's baseline holds the 8 older runs."""
    tree = DATA / "history" / "perflogs"
    ds = _load(tree)
    assert not ds.problems and not ds.notes
    sources = set(ds.frame["source"].cast(pl.String))
    assert {Path(s).name for s in sources} == {
        "OsuLatencyHistory.log.h0", "OsuLatencyHistory.log.h1", "OsuLatencyHistory.log"}
    runs = _runs(ds.frame)
    assert runs["perf_var"].cast(pl.String).sort().to_list() == ["latency_1", "latency_8"]
    assert runs["runs"].to_list() == [12, 12]
    assert set(runs["placement"].cast(pl.String)) == {"intra_socket"}  # from the 4.10 runs
    out = tmp_path / "gate.json"
    assert main(["check", str(tree), "--latest", "4", "--no-cache", "--perflogs-only",
                 "--json", str(out)]) == 0
    verdicts = json.loads(out.read_text())["series"]
    assert [(v["n_baseline"], v["n_latest"]) for v in verdicts] == [(8, 4), (8, 4)]


def test_report_draws_the_history_as_one_series_per_variable(tmp_path):
    out = tmp_path / "report"
    assert main(["report", str(DATA / "history" / "perflogs"), "-o", str(out), "--no-cache",
                 "--latest", "4", "--perflogs-only"]) == 0
    charts = read_payload(out / "report.html")["charts"]
    assert sum(len(c["series"]) for c in charts) == 2


def test_reframe40_with_a_reframe3_format_says_its_values_are_missing(capsys):
    """ReFrame 4.0.5 writing with a ReFrame 3 format: `null=null|ref=null (l=null, u=null)`."""
    ds = _load(DATA / "rfm40-rfm3format")
    assert ds.frame.height == 0 and [p.reason for p in ds.problems] == [NO_VALUES]
    assert main(["check", str(DATA / "rfm40-rfm3format"), "--no-cache"]) == 2
    assert "performance fields are empty" in capsys.readouterr().err


def test_rotated_file_without_placement_joins_its_series(tmp_path):
    """Two sessions with a perflog format without `placement` (rotated to .h0), two with it:
    the old records join the series of the same check name, so every series has all four
    runs and the gate's baseline holds the older ones."""
    tree = DATA / "drift"
    ds = _load(tree)
    runs = _runs(ds.frame)
    assert not ds.notes and runs["placement"].null_count() == 0
    assert set(runs["runs"]) == {4}
    out = tmp_path / "gate.json"
    assert main(["check", str(tree), "--latest", "1", "--no-cache", "--json", str(out)]) == 0
    assert {(v["n_baseline"], v["n_latest"]) for v in json.loads(out.read_text())["series"]} == {
        (3, 1)}


def test_unplaceable_records_stay_apart_and_are_named_constructed(tmp_path):
    """The rotated file with the placement dropped from its check names as well (edited):
    each old record matches the intra_socket and the inter_node series, so the old records
    of both placements (2 sessions x 2) stay a series of their own, and a note says why."""
    tree = Path(shutil.copytree(DATA / "drift", tmp_path / "drift"))
    old = tree / "testsys" / "cpu" / "FakeOSUPt2pt.log.h0"
    text = old.read_text()
    for placement in (" %placement=intra_socket", " %placement=inter_node"):
        text = text.replace(placement, "")
    old.write_text(text)
    ds = _load(tree)
    runs = _runs(ds.frame)
    assert runs.filter(pl.col("placement").is_null())["runs"].unique().to_list() == [4]
    assert any("have no column placement (nor window_size, processes, rma_window, rma_sync) "
               "and match 2 series (placement=inter_node | placement=intra_socket)" in n
               for n in ds.notes), ds.notes
    out = tmp_path / "report"
    assert main(["report", str(tree), "-o", str(out), "--no-cache"]) == 0
    assert "kept as a series of their own" in (out / "report.html").read_text()


def test_nothing_judged_is_not_a_pass(tmp_path, capsys):
    """The 12 runs of the history, the last 11 judged: one session of baseline, 3 needed."""
    tree = DATA / "history" / "perflogs"
    out = tmp_path / "gate.json"
    args = ["check", str(tree), "--no-cache", "--json", str(out), "--latest", "11"]
    assert main(args) == EXIT_NOTHING_JUDGED
    printed = capsys.readouterr()
    assert "NOT JUDGED 2 series, too few baseline sessions (1, the gate needs 3)" in printed.out
    assert "this is not a pass" in printed.err
    assert main([*args, "--allow-empty"]) == 0
    reasons = {v["reason"] for v in json.loads(out.read_text())["series"]}
    assert reasons == {"too few baseline sessions (1, the gate needs 3)"}


def test_common_reframe3_formats_constructed(tmp_path):
    """ReFrame 3's documented default and CSCS's production format (`num_tasks=N` before the
    variable), one line each, written here after those formats; a line of neither is named."""
    log = tmp_path / "daint" / "gpu" / "OsuLatency.log"
    log.parent.mkdir(parents=True)
    log.write_text(
        "2021-03-04T10:00:00+01:00|reframe 3.5.0|OsuLatency on daint:gpu using PrgEnv-gnu|"
        "jobid=123|num_tasks=2|latency=1.23|ref=1.1 (l=-0.1, u=0.1)|us\n"
        "2021-03-05T10:00:00+01:00|reframe 3.5.0|OsuLatency on daint:gpu using PrgEnv-gnu|"
        "jobid=124|latency=1.25|ref=1.1 (l=None, u=None)|us\n"
        "2021-03-06T10:00:00+01:00|reframe 3.5.0|OsuLatency|jobid=125|latency=1.3|us\n"
    )
    ds = _load(tmp_path)
    first, second = ds.frame.sort("time").iter_rows(named=True)
    assert first["num_tasks"] == 2
    assert (first["lower"], first["upper"]) == pytest.approx((0.99, 1.21))
    assert (second["num_tasks"], second["value"], second["environ"]) == (None, 1.25, "PrgEnv-gnu")
    (problem,) = ds.problems
    assert problem.line == 3 and "not a ReFrame 3 perflog line" in problem.reason
