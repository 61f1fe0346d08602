"""Findings: one per curve, naming its sizes, its change and what changed since the baseline."""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

from conftest import DATA

from omb_review.cli import main
from omb_review.judge import gate
from omb_review.judge.detect import Settings
from omb_review.judge.findings import CURVE_KEYS, Finding, size_text
from omb_review.judge.run_changes import what_changed
from omb_review.read.ingest import load

COLUMNS = ("job_completion_time|result|system|partition|environ|name|jobid|job_nodelist|"
           "num_nodes|num_tasks|benchmark|placement|buffers|mpi_family|mpi_version|osu_version|"
           "mpi_spec|spack_lock|session_tag|perf_var|perf_value|perf_unit|perf_ref|"
           "perf_lower_thres|perf_upper_thres|perf_result").split("|")
SIZES = (1, 8, 64, 1024, 65536, 1048576)


def _tree(root: Path, nights: int = 30, slow_from: int = 27) -> Path:
    """Synthetic nightly osu_latency perflog (seeded noise): from night ``slow_from`` on, Open
    MPI is 4.1.6 (was 4.1.4) with a new Spack lock, the job runs on nodes n003/n004 and the
    inter_node curve is 10% slower at every size."""
    rng = random.Random(5)
    lines = ["|".join(COLUMNS)]
    start = datetime(2026, 1, 1, 2, tzinfo=timezone.utc)
    for night in range(nights):
        when = (start + timedelta(days=night)).isoformat()
        upgraded = night >= slow_from
        for placement, base in (("intra_socket", 0.3), ("inter_node", 1.6)):
            nodes = "['n003', 'n004']" if upgraded else "['n001', 'n002']"
            row = {"job_completion_time": when, "result": "pass", "system": "sim",
                   "partition": "cpu", "environ": "gnu-ompi", "jobid": str(1000 + 2 * night
                   + (placement == "inter_node")), "job_nodelist": nodes, "num_tasks": "2",
                   "name": f"OsuPt2Pt %benchmark=osu_latency %placement={placement}",
                   "num_nodes": "2" if placement == "inter_node" else "1",
                   "benchmark": "osu_latency", "placement": placement, "buffers": "H H",
                   "mpi_family": "openmpi", "mpi_version": "4.1.6" if upgraded else "4.1.4",
                   "osu_version": "7.3",
                   "mpi_spec": "openmpi@4.1.4/abc", "spack_lock": "d00d" if upgraded else "beef",
                   "session_tag": f"night-{night}", "perf_unit": "us", "perf_ref": "0",
                   "perf_lower_thres": "null", "perf_upper_thres": "null", "perf_result": "pass"}
            slow = 1.10 if upgraded and placement == "inter_node" else 1.0
            for size in SIZES:
                value = (base + size / 10000) * slow * rng.lognormvariate(0, 0.01)
                lines.append("|".join({**row, "perf_var": f"latency_{size}",
                                       "perf_value": f"{value:.3f}"}[c] for c in COLUMNS))
    log = root / "sim" / "cpu" / "OsuPt2Pt.log"
    log.parent.mkdir(parents=True)
    log.write_text("\n".join(lines) + "\n")
    return root


def _check(root: Path, tmp_path: Path, *extra: str) -> tuple[int, dict]:
    out = tmp_path / "check.json"
    code = main(["check", str(root), "--no-cache", "--json", str(out), *extra])
    return code, json.loads(out.read_text())


def test_synthetic_regression_at_six_sizes_is_one_finding_naming_sizes_and_what_changed(
        tmp_path, capsys):
    code, result = _check(_tree(tmp_path / "perflogs"), tmp_path)
    printed = capsys.readouterr().out
    assert code == 1
    flagged = [s for s in result["series"] if s["status"] == "regression"]
    assert len(flagged) == len(SIZES)  # the per-series verdicts stay, across the MPI upgrade
    (finding,) = result["findings"]
    assert finding["placement"] == "inter_node" and finding["status"] == "regression"
    assert finding["sizes"] == list(SIZES) and finding["sizes_text"] == "1 B-1 MiB (6 of 6 sizes)"
    assert finding["first_bad_run"]["session_tag"] == "night-27"
    assert 0.07 < finding["change_min"] <= finding["change_max"] < 0.13
    assert finding["value_change"].startswith("+") and finding["confidence"] > 0.99
    assert sorted(finding["series"]) == sorted(s["series"] for s in flagged)
    changed = {c["field"]: c for c in finding["what_changed"]}
    assert set(changed) == {"mpi_version", "spack_lock", "job_nodelist"}  # not osu_version
    assert (changed["mpi_version"]["baseline"], changed["mpi_version"]["first_bad"]) == (
        ["4.1.4"], "4.1.6")
    assert changed["spack_lock"]["baseline"] == ["beef"]
    assert changed["spack_lock"]["first_bad"] == "d00d"
    assert printed.count("REGRESSION ") == 1 and "changed spack_lock: beef -> d00d" in printed


def test_synthetic_sizes_not_all_affected_are_named_as_ranges(tmp_path):
    root = _tree(tmp_path / "perflogs")
    log = root / "sim" / "cpu" / "OsuPt2Pt.log"
    header, *rows = log.read_text().splitlines()
    # undo the slowdown at 64 B: the finding then covers 1-8 B and 1 KiB-1 MiB
    fixed = [_faster(r) if "|inter_node|" in r and "|latency_64|" in r else r for r in rows]
    log.write_text("\n".join([header, *fixed]) + "\n")
    _code, result = _check(root, tmp_path)
    (finding,) = result["findings"]
    assert finding["sizes_text"] == "1 B-8 B, 1 KiB-1 MiB (5 of 6 sizes)"


def _faster(row: str) -> str:
    fields = row.split("|")
    i = COLUMNS.index("perf_value")
    night = int(fields[COLUMNS.index("session_tag")].split("-")[1])
    if night >= 27:
        fields[i] = f"{float(fields[i]) / 1.10:.3f}"
    return "|".join(fields)


def test_size_text_uses_binary_units():
    assert [size_text(s) for s in (0, 8, 1000, 1024, 65536, 4194304)] == [
        "0 B", "8 B", "1000 B", "1 KiB", "64 KiB", "4 MiB"]


def test_what_changed_between_real_reframe3_and_reframe4_sessions_is_the_reframe_version():
    """Real history (tests/review/data/history): ReFrame 3.12.0, then 4.0.5, then 4.10.4 with
    a format that did not log the version. The version changed between the first two; against
    the third it is unknown, which is not a change."""
    frame = load(DATA / "history" / "perflogs", use_cache=False).frame
    (result, *_) = gate.run(frame, gate.Windows(latest=4), Settings(), [])
    keys = {k: result.keys[k] for k in CURVE_KEYS}
    times = sorted(frame["time"].unique())
    window = {"start": times[0].isoformat(), "end": times[3].isoformat(), "runs": 4}
    to_40, to_410 = ({"time": times[i].isoformat()} for i in (4, 8))
    changed, unknown = what_changed([(keys, window, to_40), (keys, window, to_410)], frame)
    assert [(c.field, c.baseline, c.first_bad) for c in changed] == [
        ("reframe_version", ["3.12.0"], "4.0.5")]
    assert unknown == []


def test_sizes_text_names_the_curve_figures_that_moved_too():
    finding = Finding(curve="c", keys={}, status="regression", sizes=[8, 16],
                      judged_sizes=[1, 8, 16, 64], figures=["min_latency"], change_min=0.1,
                      change_max=0.2, value_change="+10% to +20%", confidence=0.99,
                      first_bad=None, baseline_window=None)
    assert finding.sizes_text == "8 B-16 B (2 of 4 sizes) and min_latency"
    assert Finding(**{**finding.__dict__, "sizes": []}).sizes_text == "min_latency"
