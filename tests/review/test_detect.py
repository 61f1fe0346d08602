"""Detection on synthetic series (controlled properties: injected steps, pure noise, spikes)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import polars as pl

from omb_review import gate
from omb_review.detect import Settings

KEYS = {"system": "sim", "partition": "cpu", "lineage": "gnu-ompi", "environ": "gnu-ompi",
        "mpi_family": "openmpi", "mpi_version": "4.1.4", "osu_version": "7.4", "buffers": "H H",
        "test": "OSULatency", "benchmark": "osu_latency",
        "placement": "inter_node", "algorithm": None, "window_size": None, "processes": None,
        "rma_window": None, "rma_sync": None, "mapping": None, "num_nodes": 2, "num_tasks": 2}


def _run(values: np.ndarray, unit: str = "us", var: str = "latency_8") -> gate.Run:
    start = datetime(2025, 1, 1, tzinfo=timezone.utc).timestamp() * 1e6
    times = start + np.arange(len(values)) * 86400e6  # nightly
    return gate.Run({**KEYS, "perf_var": var, "unit": unit}, times, values,
                    lambda i: {"jobid": str(i), "session_tag": f"night-{i}"})


def _noise(rng, n: int, sd: float = 0.02, spikes: float = 0.01) -> np.ndarray:
    y = 2.0 * rng.lognormal(0, sd, n)
    hit = rng.random(n) < spikes
    y[hit] *= 1.5
    return y


def test_synthetic_step_10pct_latency_flagged_with_first_bad_run():
    rng = np.random.default_rng(1)
    y = _noise(rng, 60, spikes=0)
    y[-4:] *= 1.10
    res = gate.judge(_run(y), gate.Windows(), Settings(), [])
    assert res.verdict.status == "regression"
    assert 0.07 < res.verdict.change < 0.13
    assert res.first_bad["session_tag"] == "night-56"
    assert res.verdict.method == "mann-whitney" and res.verdict.confidence > 0.99


def test_direction_comes_from_the_unit():
    rng = np.random.default_rng(2)
    y = _noise(rng, 60, spikes=0)
    y[-4:] *= 0.9
    assert gate.judge(_run(y, "MB/s", "bandwidth_8"), gate.Windows(), Settings(), []
                      ).verdict.status == "regression"
    assert gate.judge(_run(y), gate.Windows(), Settings(), []).verdict.status == "improvement"


def test_single_spike_in_history_makes_no_change_point():
    rng = np.random.default_rng(3)
    y = _noise(rng, 80, spikes=0)
    y[40] *= 2
    res = gate.judge(_run(y), gate.Windows(), Settings(), [])
    assert res.change_points == [] and res.verdict.status == "ok"


def test_threshold_override_by_pattern():
    rng = np.random.default_rng(4)
    y = _noise(rng, 60, spikes=0)
    y[-4:] *= 1.10
    loose = [("*osu_latency*latency_8 *", 0.2)]
    assert gate.judge(_run(y), gate.Windows(), Settings(), loose).verdict.status == "ok"


def _rate(flagged: int, total: int) -> float:
    print(f"{flagged}/{total} = {flagged / total:.4f}")
    return flagged / total


def test_synthetic_pure_noise_false_alarm_rate_below_half_percent():
    rng = np.random.default_rng(5)
    verdicts = [gate.judge(_run(_noise(rng, 120)), gate.Windows(), Settings(), [])
                for _ in range(2000)]
    assert _rate(sum(v.verdict.status == "regression" for v in verdicts), 2000) < 0.005


def test_synthetic_10pct_step_detection_power_above_95_percent():
    rng = np.random.default_rng(6)
    hits = 0
    for _ in range(500):
        y = _noise(rng, 120)
        y[-3:] *= 1.10
        hits += gate.judge(_run(y), gate.Windows(), Settings(), []).verdict.status == "regression"
    assert _rate(hits, 500) > 0.95


def test_gate_over_a_frame_orders_regressions_first():
    rng = np.random.default_rng(7)
    rows = []
    t0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
    for var, step in (("latency_8", 1.0), ("latency_16", 1.2)):
        y = _noise(rng, 40, spikes=0)
        y[-4:] *= step
        rows += [{**KEYS, "perf_var": var, "unit": "us", "time": t0 + timedelta(days=i),
                  "value": v, "jobid": str(i), "session_tag": None} for i, v in enumerate(y)]
    res = gate.run(pl.DataFrame(rows), gate.Windows(), Settings(), [])
    assert [r.verdict.status for r in res] == ["regression", "ok"]
    assert "latency_16" in res[0].series


def test_fdr_control_keeps_strong_regressions_and_drops_what_noise_explains():
    from omb_review.detect import Verdict

    def result(p: float) -> gate.SeriesResult:
        status = "regression" if p <= 0.01 else "ok"
        return gate.SeriesResult("s", {}, "us", 0.05, Verdict(status, 0.1, p, "mann-whitney"))

    noise = [result(p) for p in np.linspace(0.005, 1, 100)]  # one "regression" by chance
    strong = [result(1e-6) for _ in range(3)]
    few_runs = gate.SeriesResult("f", {}, "us", 0.05, Verdict("regression", 0.2, 0.05,
                                                              "range+z (few runs)"))
    results = noise + strong + [few_runs]
    assert sum(r.verdict.status == "regression" for r in noise) == 1
    gate.control_fdr(results, 0.01)
    assert [r.verdict.status for r in strong] == ["regression"] * 3
    assert all(r.verdict.status == "ok" for r in noise)
    assert few_runs.verdict.status == "regression" and few_runs.verdict.q_value is None
    assert strong[0].verdict.confidence == 1 - strong[0].verdict.q_value > 0.9999


def test_a_baseline_cut_short_by_a_change_point_is_not_a_new_series():
    """Synthetic: 40 nights, 10% faster from night 37, judged --since night 39: the baseline
    is the 2 runs of the new level (too few to judge), but the series has a history: it is
    insufficient, not new. The same two runs with no history before them are new."""
    rng = np.random.default_rng(5)
    y = _noise(rng, 40, spikes=0)
    y[37:] *= 0.9
    since = datetime(2025, 1, 1, tzinfo=timezone.utc) + timedelta(days=39)
    res = gate.judge(_run(y), gate.Windows(since=since), Settings(), [])
    assert res.verdict.status == "insufficient" and res.verdict.n_baseline == 2
    assert not res.new
    assert gate.judge(_run(y[-3:]), gate.Windows(latest=1), Settings(), []).new
