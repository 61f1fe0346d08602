"""omb-review on real perflogs written by this suite's own checks (tests/review/data/ours)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from conftest import DATA

from omb_review.cli import main

OURS = DATA / "ours"
BASELINE = "2026-11-22T08:15:19..2026-11-22T08:16:26"
LATEST = "2026-11-22T08:16:26"


def _gate(tree: Path, tmp_path: Path) -> tuple[int, dict]:
    out = tmp_path / "gate.json"
    rc = main(["check", str(tree), "--baseline", BASELINE, "--since", LATEST, "--no-cache",
               "--json", str(out)])
    return rc, json.loads(out.read_text())


def test_report_draws_heatmap_hockney_and_series(tmp_path):
    assert main(["report", str(OURS), "-o", str(tmp_path / "out"), "--no-cache"]) == 0
    figures = {p.name.rsplit("_", 1)[0] for p in (tmp_path / "out/figures").glob("*.png")}
    assert {"heatmap", "hockney", "ts", "curve_latency", "box_runs"} <= figures


def test_check_passes_on_our_runs_and_fails_on_a_step_beyond_the_noise(tmp_path):
    rc, verdicts = _gate(OURS, tmp_path)
    assert rc == 0 and verdicts["counts"]["regression"] == 0
    # synthetic: the latest session made 50% slower (on this VM a 10% step is inside the
    # noise of small-message latency: 0.20-0.23 us printed with 0.01 us resolution)
    tree = Path(shutil.copytree(OURS, tmp_path / "injected"))
    log = tree / "local/default/OsuPt2Pt.log"
    header, *rows = log.read_text().splitlines()
    cols = header.split("|")
    t, v = cols.index("job_completion_time"), cols.index("perf_value")
    slower = []
    for row in rows:
        f = row.split("|")
        if f[t] >= LATEST and f[v] != "null":
            f[v] = f"{float(f[v]) * 1.5:.4g}"
        slower.append("|".join(f))
    log.write_text("\n".join([header, *slower]) + "\n")
    rc, verdicts = _gate(tree, tmp_path)
    named = [s["series"] for s in verdicts["series"] if s["status"] == "regression"]
    assert rc != 0 and named
    assert all("osu_latency" in name and "intra_socket" in name for name in named)
