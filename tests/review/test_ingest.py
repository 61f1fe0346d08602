"""Ingest of real ReFrame perflogs, reports and results DB; rotation, corruption, cache."""

from __future__ import annotations

import os
import shutil
from datetime import datetime, timezone
from pathlib import Path

import polars as pl
import pytest

from omb_review.read.ingest import load

DATA = Path(__file__).parent / "data"


def _log(root: Path) -> Path:
    return root / "testsys" / "cpu" / "FakeOSUPt2pt.log"


def test_rotated_files_with_different_headers_are_unioned(multiline, cache):
    ds = load(multiline, cache_dir=cache, auto_sources=False)
    sources = ds.frame.group_by(pl.col("source").cast(pl.String)).len().sort("source")
    assert sources.rows() == [("testsys/cpu/FakeOSUPt2pt.log", 86),
                              ("testsys/cpu/FakeOSUPt2pt.log.h0", 28)]
    old = ds.frame.filter(pl.col("source").cast(pl.String).str.ends_with(".h0"))
    assert old["algorithm_evidence"].null_count() == old.height  # column absent in old header
    assert ds.problems == []


def test_failures_kept_thresholds_absolute_times_utc(multiline, cache):
    f = load(multiline, cache_dir=cache, auto_sources=False).frame
    failed = f.filter(pl.col("result") == "fail")
    assert failed.height == 16 and failed["value"].null_count() == 16  # 2 envs x 8 vars
    lat8 = f.filter(pl.col("perf_var") == "latency_8").row(0, named=True)
    assert (lat8["ref"], lat8["lower"], lat8["upper"]) == pytest.approx((0.2, 0.18, 0.22))
    lat0 = f.filter((pl.col("perf_var") == "latency_0") & pl.col("upper").is_not_null())
    assert lat0["upper"].unique().to_list() == [0.5]  # reference 0: threshold is absolute
    assert f["time"].dtype == pl.Datetime("us", "UTC")
    assert f["time"].min() > datetime(2020, 1, 1, tzinfo=timezone.utc)


def test_reports_and_database_add_nothing_twice(multiline, cache):
    only_logs = load(multiline, cache_dir=cache, auto_sources=False).frame
    everything = load(multiline, use_cache=False).frame
    assert everything.height == only_logs.height == 114
    shutil.copy(_log(multiline), multiline / "copy-of.log")
    assert load(multiline, use_cache=False).frame.height == 114


def test_reports_and_database_alone_give_the_records(tmp_path):
    root = tmp_path / "noperflogs"
    root.mkdir()
    shutil.copy(DATA / "rfm_multiline" / "results.db", root)
    f = load(root, use_cache=False).frame
    assert f.height == 114  # the DB holds all four sessions
    assert f.filter(pl.col("result") == "fail").height == 16


def test_corrupted_lines_are_reported_with_file_and_line(multiline, cache):
    log = _log(multiline)
    lines = log.read_text().splitlines()
    fields = lines[5].split("|")
    lines[5] = lines[5] + "|extra"  # line 6: a '|' inside a value
    lines[10] = "|".join(fields[:12])  # line 11: truncated
    lines[20] = "yesterday|" + "|".join(lines[20].split("|")[1:])  # line 21: bad time
    v = lines[30].split("|")
    v[27] = "fast"  # line 31: value not a number
    lines[30] = "|".join(v)
    log.write_text("\n".join(lines) + "\n")
    ds = load(multiline, cache_dir=cache, auto_sources=False)
    where = sorted((p.source, p.line) for p in ds.problems)
    name = "testsys/cpu/FakeOSUPt2pt.log"
    assert where == [(name, 6), (name, 11), (name, 21), (name, 31)]
    assert ds.frame.height == 114 - 4
    reasons = " ".join(p.reason for p in ds.problems)
    assert "34 fields, header has 33" in reasons and "not a number" in reasons


def test_oneline_records_unpivoted_and_mismatched_lines_reported():
    ds = load(DATA / "rfm_oneline", use_cache=False)
    assert sorted(p.line for p in ds.problems) == [4, 5, 6, 7, 8, 9]
    assert all("25 fields, header has 30" in p.reason for p in ds.problems if p.line > 5)
    # inter_node lines have as many fields, but the header was written for intra_socket
    assert all("under the header ReFrame wrote for" in p.reason
               for p in ds.problems if p.line <= 5)
    assert ds.frame.height == 8
    assert set(ds.frame["name"].cast(pl.String)) == {
        "FakeOSUPt2pt %benchmark=osu_latency %placement=intra_socket"}
    assert set(ds.frame["perf_var"].cast(pl.String)) == {f"latency_{s}" for s in (1, 2, 4, 8)}


def test_site_oneline_values_without_names_are_never_read_under_another_tests_header():
    """A real site perflog (format_perfvars value|unit, no variable names): ReFrame appends
    osu_bw records under the header written for osu_latency with as many fields."""
    ds = load(DATA / "rfm_site_oneline", use_cache=False)
    rows = ds.frame.with_columns(pl.col("name", "perf_var", "unit").cast(pl.String))
    latency = rows.filter(pl.col("name").str.contains("osu_latency"))
    bandwidth = rows.filter(pl.col("name").str.contains("osu_bw"))
    assert set(latency["perf_var"]) == {*(f"latency_{s}" for s in (1, 8, 1024, 65536)),
                                        "min_latency"}
    assert set(bandwidth["perf_var"]) == {*(f"bandwidth_{s}" for s in (1, 8, 1024, 65536)),
                                          "peak_bandwidth"}
    assert set(latency["unit"]) == {"us"} and set(bandwidth["unit"]) == {"MB/s"}
    # read from its own header (the .h1 file ReFrame wrote for osu_bw), once
    assert set(bandwidth["source"].cast(pl.String)) == {"sitebox/login/OsuPt2Pt.log.h1"}
    assert bandwidth.filter(pl.col("perf_var") == "bandwidth_1024")["value"].to_list() == [
        137.65, None]
    # the osu_bw lines under osu_latency's header: reported with what to add, not read
    where = sorted((p.source, p.line) for p in ds.problems)
    assert where == [("sitebox/login/OsuPt2Pt.log", 4), ("sitebox/login/OsuPt2Pt.log", 5),
                     ("sitebox/login/OsuPt2Pt.log.h0", 4), ("sitebox/login/OsuPt2Pt.log.h0", 5)]
    assert all("osu_bw" in p.reason and "%(check_perf_var)s" in p.reason
               and "format_perfvars" in p.reason for p in ds.problems)


def test_naive_stamps_read_in_given_zone():
    utc = load(DATA / "rfm_oneline", use_cache=False).frame["time"].min()
    zurich = load(DATA / "rfm_oneline", use_cache=False, naive_tz="Europe/Zurich")
    assert (utc - zurich.frame["time"].min()).total_seconds() == 3600  # CET in November


def test_cache_serves_unchanged_files_and_rereads_changed_ones(multiline, cache):
    first = load(multiline, cache_dir=cache)
    again = load(multiline, cache_dir=cache)
    assert again.parsed == 0
    assert again.frame.sort("time", "name", "perf_var").equals(
        first.frame.sort("time", "name", "perf_var"))
    log = _log(multiline)
    extra = log.read_text().splitlines()[1].replace("|latency_1|", "|latency_1024|")
    with log.open("a") as fp:
        fp.write(extra + "\n")
    os.utime(log, ns=(log.stat().st_atime_ns, log.stat().st_mtime_ns + 10**9))
    third = load(multiline, cache_dir=cache)
    assert third.parsed == 1 and third.frame.height == first.frame.height + 1


def test_site_oneline_values_named_by_check_perf_var_are_read_under_their_own_names():
    """The same site format with %(check_perf_var)s added to format_perfvars (what the problem
    above tells a site to add): every line is read, each value under its own name."""
    ds = load(DATA / "rfm_site_oneline_named", use_cache=False)
    assert ds.problems == []
    rows = ds.frame.with_columns(pl.col("name", "perf_var").cast(pl.String))
    bandwidth = rows.filter(pl.col("name").str.contains("osu_bw"))
    assert set(bandwidth["perf_var"]) == {*(f"bandwidth_{s}" for s in (1, 8, 1024, 65536)),
                                          "peak_bandwidth"}
    assert set(bandwidth["unit"].cast(pl.String)) == {"MB/s"}
    assert rows.filter(pl.col("perf_var") == "latency_65536")["value"].to_list() == [3.97, None]
    assert rows.height == 20


def test_site_oneline_with_line_2_damaged_synthetic_reads_no_line_under_the_header(tmp_path):
    """Synthetic damage of the real file: the record the header was written for (line 2) lost a
    field, so which test the header names is unknown and no line is read under its names."""
    log = tmp_path / "sitebox" / "login" / "OsuPt2Pt.log"
    log.parent.mkdir(parents=True)
    lines = (DATA / "rfm_site_oneline" / "sitebox" / "login" / "OsuPt2Pt.log").read_text()
    head, second, *rest = lines.splitlines()
    log.write_text("\n".join([head, second.rsplit("|", 1)[0], *rest]) + "\n")
    ds = load(tmp_path, use_cache=False)
    assert ds.frame.height == 0
    reasons = {p.line: p.reason for p in ds.problems}
    assert sorted(reasons) == [2, 3, 4, 5]
    assert "12 fields, header has 13" in reasons[2]
    assert all("under the header ReFrame wrote for 'line 2 (unreadable)'" in reasons[n]
               for n in (3, 4, 5))


def test_a_record_in_a_perflog_and_a_report_keeps_what_either_knows(tmp_path, cache):
    # a site's perflog without -i/-x columns, its run reports with them: whichever is read
    # first (the cache serves unchanged sources before those read afresh), the record keeps
    # the counts, so a session is compared with its baseline by what it ran
    root = Path(shutil.copytree(DATA / "site-format" / "perflogs", tmp_path / "perflogs"))
    log = root / "sitemods" / "login" / "OsuPt2Pt.log"
    for use_cache in (False, True, True):
        frame = load(root, cache_dir=cache, use_cache=use_cache).frame
        assert frame.height == 20
        assert frame["iterations"].cast(pl.String).to_list() == ["200"] * 20
        log.touch()                                         # the perflog is read afresh
        os.utime(log, (log.stat().st_atime, log.stat().st_mtime + 10))


def test_dry_run_records_are_left_out_and_said():
    """``reframe --dry-run`` logs records that pass with no job and no value: nothing was
    measured, so no series (or 'every run failed') may come of them."""
    from omb_review.read.ingest import load

    ds = load(Path(__file__).parent / "data" / "dry-run", use_cache=False)
    assert ds.frame.height == 0
    assert any("4 records of 4 dry-run test case(s) left out" in n for n in ds.notes)
