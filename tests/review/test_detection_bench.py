"""benchmarks/review_detection.py agrees with `omb-review check` at the position it shares."""

from __future__ import annotations

import subprocess
import sys

from conftest import DATA

REPO = DATA.parents[2]


def test_detection_benchmark_today_is_what_check_says():
    out = subprocess.run(
        [sys.executable, str(REPO / "benchmarks/review_detection.py"), str(DATA / "trend"),
         "--only", "*osu_latency*"], capture_output=True, text=True, check=True).stdout
    rows = {line.split(" [")[0].split()[-1]: line.split()[-1] for line in out.splitlines()
            if "OsuPt2Pt." in line}
    # the same verdicts as tests/review/test_our_perflogs.py on the same real perflog
    assert len(rows) == 7 and all(v in ("ok", "regression") for v in rows.values())
    assert [k for k, v in rows.items() if v == "regression"] == ["OsuPt2Pt.min_latency"]
    assert "today: red as measured; every series named when made 10% worse" in out
    series_windows, gate_runs = out.split("series-windows: ")[1], out.split("gate runs: ")[1]
    assert series_windows.startswith("357;") and gate_runs.startswith("51;")
