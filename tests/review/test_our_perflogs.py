"""omb-review on real perflogs written by this suite's own checks (tests/review/data/ours)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import DATA, worsen

from omb_review.cli import main
from omb_review.report.page import read_payload

OURS = DATA / "ours"
BASELINE = "2026-11-22T08:15:19..2026-11-22T08:16:26"
LATEST = "2026-11-22T08:16:26"


def _gate(tree: Path, tmp_path: Path) -> tuple[int, dict]:
    out = tmp_path / "gate.json"
    rc = main(["check", str(tree), "--baseline", BASELINE, "--since", LATEST, "--no-cache",
               "--json", str(out)])
    return rc, json.loads(out.read_text())


def test_report_compares_libraries_and_algorithms_on_our_runs(tmp_path):
    assert main(["report", str(OURS), "-o", str(tmp_path / "out"), "--no-cache"]) == 0
    data = read_payload(tmp_path / "out/report.html")
    views = data["views"]
    # our runs: osu_latency with Open MPI and MPICH; osu_bcast with Open MPI's algorithms
    assert any({"spack-openmpi", "spack-mpich"} <= {line["name"].split()[0] for line in
               v["lines"]} for v in views["libraries"])
    heat = [v for v in views["algorithms"] if v["keys"]["benchmark"] == "osu_bcast"]
    assert heat and all(v["default"] == "default" and len(v["algs"]) > 2 for v in heat)
    assert views["hockney"] and views["scaling"]
    assert {c["keys"]["benchmark"] for c in data["charts"]} >= {"osu_latency", "osu_bcast"}


def test_check_passes_on_our_runs_and_fails_on_a_step_beyond_the_noise(tmp_path):
    rc, verdicts = _gate(OURS, tmp_path)
    assert rc == 0 and verdicts["counts"]["regression"] == 0
    # synthetic: MPICH's latest sessions made 50% slower (on this VM a 10% step is inside
    # the noise of small-message latency: 0.20-0.23 us printed with 0.01 us resolution);
    # Open MPI, measured in the same sessions, is its canary and did not move (slowing both
    # libraries is the machine's: SHARED, tests/review/test_cli.py)
    tree = Path(shutil.copytree(OURS, tmp_path / "injected"))
    worsen(tree / "local/default/OsuPt2Pt.log", lambda r: 1.5 if (
        r["job_completion_time"] >= LATEST and r["environ"] == "spack-mpich") else 1.0)
    rc, verdicts = _gate(tree, tmp_path)
    named = [s["series"] for s in verdicts["series"] if s["status"] == "regression"]
    assert rc == 1 and named
    assert all("osu_latency" in name and "intra_socket" in name and "spack-mpich" in name
               for name in named)


# --- 80 consecutive sessions (trend-1 .. trend-80, 5 minutes apart in all; data/README.md):
# osu_latency and osu_bw, intra-socket, Open MPI 4.1.4, default OSU iterations. The gate judges
# the last 10 sessions against the runs before them (``--latest 10``).
TREND = DATA / "trend"
LAST_TEN = {f"trend-{i}" for i in range(71, 81)}


def _trend_gate(tree: Path, tmp_path: Path, *extra: str) -> tuple[int, list[str]]:
    out = tmp_path / "gate.json"
    rc = main(["check", str(tree), "--latest", "10", "--no-cache", "--json", str(out), *extra])
    verdicts = json.loads(out.read_text())["series"]
    return rc, sorted(s["perf_var"] for s in verdicts if s["status"] == "regression")


def _slower(tree: Path, benchmark: str, factor: float) -> None:
    worsen(tree / "local/default/OsuPt2Pt.log", lambda r: factor if (
        r["session_tag"] in LAST_TEN and r["benchmark"] == benchmark) else 1.0)


def test_a_20pct_slower_latency_in_the_last_ten_sessions_names_every_latency_series(tmp_path):
    tree = Path(shutil.copytree(TREND, tmp_path / "injected"))
    _slower(tree, "osu_latency", 1.20)
    rc, named = _trend_gate(tree, tmp_path)
    assert rc == 1
    assert named == sorted(["latency_1", "latency_8", "latency_1024", "latency_65536",
                            "latency_1048576", "latency_4194304", "min_latency"])


def test_as_measured_the_gate_is_green(tmp_path):
    # In the last ten sessions 5 of 10 runs of this VM were in its slow state for small
    # messages (0.41-0.44 us instead of 0.15-0.22 us; the host moves the vCPUs): the old
    # per-run gate named min_latency (+21 %). Judged by sessions against the noise sessions
    # have shown here (one run each: 10-17 % between sessions), nothing is named.
    assert _trend_gate(TREND, tmp_path) == (0, [])


def test_with_fdr_control_the_same_perflog_passes_as_measured_and_fails_on_a_20pct_step(
        tmp_path):
    assert _trend_gate(TREND, tmp_path, "--fdr") == (0, [])
    tree = Path(shutil.copytree(TREND, tmp_path / "injected"))
    _slower(tree, "osu_latency", 1.20)
    rc, named = _trend_gate(tree, tmp_path, "--fdr")
    assert rc == 1 and "latency_8" in named and all("latency" in n for n in named)


def test_done_means_on_all_our_real_perflogs(tmp_path):
    """The issue's acceptance, on one tree holding every real perflog committed here: the
    report has every comparison view, the gate (--latest 10 --fdr) passes as measured, and
    fails naming osu_latency series once the last 10 sessions' latency is 20% slower."""
    tree = tmp_path / "perflogs"
    for name in ("ours", "trend"):
        shutil.copytree(DATA / name, tree / name)
    out = tmp_path / "out"
    assert main(["report", str(tree), "-o", str(out), "--no-cache", "--latest", "10",
                 "--fdr"]) == 0
    data = read_payload(out / "report.html")
    assert all(data["views"][v] for v in ("libraries", "algorithms", "scaling", "hockney"))
    assert {c["keys"]["metric"] for c in data["charts"]} >= {"latency", "bandwidth"}
    assert _trend_gate(tree, tmp_path, "--fdr") == (0, [])
    _slower(tree / "trend", "osu_latency", 1.20)
    rc, named = _trend_gate(tree, tmp_path, "--fdr")
    assert rc == 1 and named and all("latency" in n for n in named)
