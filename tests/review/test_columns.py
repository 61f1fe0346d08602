"""`algorithm` holds collective algorithms only: what older perflogs logged there (the
osu_mbw_mr window, osu_latency_mp's processes, the one-sided window/synchronisation) moves to
its own series column when read, so old and new records of one measurement are one series."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import polars as pl
import pytest
from conftest import DATA

from omb_review.read.ingest import load
from omb_review.read.series import grouped, label

OLD = DATA / "oldcolumns"  # real runs of this suite's checks before the columns existed
NEW_COLUMNS = ("window_size", "processes", "rma_window", "rma_sync")
KNOBS = (
    (r"^window=(\d+)$", {"window_size": 1}),
    (r"^processes=(\d+)$", {"processes": 1}),
    (r"^(\w+)/(\w+)$", {"rma_window": 1, "rma_sync": 2}),
)


def _load(tree: Path):
    return load(tree, use_cache=False, auto_sources=False)


def _new_format(old: str, when: str) -> str:
    """The same records as the new perflog format writes them (constructed): the four
    columns after `algorithm`, `algorithm` null, a later completion time, and one-sided's
    `variant` parameter renamed `case` in the display name."""
    header, *rows = old.splitlines()
    cols = header.split("|")
    at = cols.index("algorithm") + 1
    out = ["|".join([*cols[:at], *NEW_COLUMNS, *cols[at:]])]
    for row in rows:
        fields = row.split("|")
        values = dict.fromkeys(NEW_COLUMNS, "null")
        for pattern, groups in KNOBS:
            if match := re.match(pattern, fields[at - 1]):
                values.update({c: match[g] for c, g in groups.items()})
        fields = [f.replace("%variant=", "%case=") for f in fields]
        fields[0], fields[at - 1] = when, "null"
        out.append("|".join([*fields[:at], *values.values(), *fields[at:]]))
    return "\n".join(out) + "\n"


def test_old_records_move_their_knob_out_of_algorithm():
    frame = _load(OLD).frame
    assert frame["algorithm"].null_count() == frame.height
    knobs = {
        test: frame.filter(pl.col("test") == test).select(*cols).unique().sort(cols).rows()
        for test, cols in (("OsuMbwMr", ["window_size"]), ("OsuLatencyMp", ["processes"]),
                           ("OsuOneSided", ["rma_window", "rma_sync"]))
    }
    assert knobs == {"OsuMbwMr": [(16,), (64,)], "OsuLatencyMp": [(1,), (2,)],
                     "OsuOneSided": [("allocate", "flush")]}
    labels = {label(k) for k in grouped(frame).iter_rows(named=True)}
    assert any("intra_socket window=64 " in x for x in labels)
    assert any("processes=2 " in x for x in labels)
    assert any("win=allocate sync=flush " in x for x in labels)


@pytest.mark.parametrize("test", ["OsuMbwMr", "OsuLatencyMp", "OsuOneSided"])
def test_old_and_new_records_of_one_measurement_are_one_series_constructed(tmp_path, test):
    """The real old perflog rotated to .h0 and the same records in the new format after it."""
    part = tmp_path / "local" / "default"
    part.mkdir(parents=True)
    old = OLD / "local" / "default" / f"{test}.log"
    shutil.copy(old, part / f"{test}.log.h0")
    (part / f"{test}.log").write_text(_new_format(old.read_text(), "2026-12-01T10:00:00+00:00"))
    ds = _load(tmp_path)
    runs = grouped(ds.frame).with_columns(n=pl.col("value").list.len())
    old_runs = _load(OLD).frame.filter(pl.col("test") == test)
    per_series = old_runs.group_by("name", "perf_var").len()["len"].unique().to_list()
    assert runs["n"].unique().to_list() == [2 * n for n in per_series]
    assert runs["algorithm"].null_count() == runs.height and not ds.notes


def test_our_perflogs_keep_collective_algorithms_and_gain_no_knobs():
    """Our committed perflogs of point-to-point, collective and procurement checks."""
    for tree in (DATA / "ours", DATA / "trend", DATA.parents[1] / "data" / "procurement"):
        frame = _load(tree).frame
        raw = pl.concat([
            pl.read_csv(p, separator="|", infer_schema=False, columns=["algorithm"])
            for p in tree.rglob("*.log")
        ])
        kept = set(raw["algorithm"].drop_nulls()) - {"null"}
        assert set(frame["algorithm"].cast(pl.String).drop_nulls()) == kept
        assert all(frame[c].null_count() == frame.height for c in NEW_COLUMNS)
    collective = _load(DATA / "ours").frame.filter(pl.col("test") == "OsuCollective")
    assert collective["algorithm"].null_count() == 0
