"""benchmarks/review_detection.py agrees with `omb-review check` at the position it shares."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from conftest import DATA, REPO, worsen

from omb_review.cli import main


def _bench(*extra: str) -> str:
    return subprocess.run(
        [sys.executable, str(REPO / "benchmarks/review_detection.py"), str(DATA / "trend"),
         *extra], capture_output=True, text=True, check=True).stdout


def test_detection_benchmark_today_is_what_check_says():
    out = _bench("--only", "*osu_latency*")
    rows = {line.split(" [")[0].split()[-1]: line.split()[-1] for line in out.splitlines()
            if "OsuPt2Pt." in line}
    # the same verdicts as tests/review/test_our_perflogs.py on the same real perflog: green
    assert len(rows) == 7 and all(v == "ok" for v in rows.values())
    assert "today: green as measured; 2 of 7 series named when made 10% worse" in out
    series_windows, gate_runs = out.split("series-windows: ")[1], out.split("gate runs: ")[1]
    assert series_windows.startswith("357;") and gate_runs.startswith("51;")


def test_detection_benchmark_with_fdr_matches_check_with_fdr(tmp_path):
    out = _bench("--fdr")  # all 14 series, every one made 10% worse (bandwidth: lower)
    assert "today: green as measured; 2 of 14 series named when made 10% worse" in out
    tree = Path(shutil.copytree(DATA / "trend", tmp_path / "worse"))

    def ten_percent_worse_in_the_last_ten(record: dict[str, str]) -> float:
        if int(record["session_tag"].split("-")[1]) <= 70:
            return 1.0
        return 1.1 if record["benchmark"] == "osu_latency" else 1 / 1.1  # bandwidth: lower

    worsen(tree / "local/default/OsuPt2Pt.log", ten_percent_worse_in_the_last_ten)
    verdicts = tmp_path / "gate.json"
    assert main(["check", str(tree), "--latest", "10", "--fdr", "--no-cache",
                 "--json", str(verdicts)]) == 1
    assert json.loads(verdicts.read_text())["counts"]["regression"] == 2
