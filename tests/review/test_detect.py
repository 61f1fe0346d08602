"""Detection on synthetic series (controlled properties: injected steps, pure noise, spikes,
two-state launches, busy nodes)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import numpy as np
import polars as pl

from omb_review.judge import gate
from omb_review.judge.detect import Settings

KEYS = {"system": "sim", "partition": "cpu", "lineage": "gnu-ompi", "environ": "gnu-ompi",
        "mpi_family": "openmpi", "mpi_version": "4.1.4", "osu_version": "7.4", "buffers": "H H",
        "test": "OSULatency", "benchmark": "osu_latency",
        "placement": "inter_node", "algorithm": None, "window_size": None, "processes": None,
        "rma_window": None, "rma_sync": None, "mapping": None, "num_nodes": 2, "num_tasks": 2}
BUSY = "busy other=0.340 cpu_wait=0.480 steal=0.000 load=7.90 cpus=2 ranks=2"


def _run(values: np.ndarray, unit: str = "us", var: str = "latency_8", reruns: int = 1,
         busy: np.ndarray | None = None) -> gate.Run:
    """Nightly sessions of ``reruns`` runs each (``values`` in run order)."""
    start = datetime(2025, 1, 1, tzinfo=timezone.utc).timestamp() * 1e6
    n = np.arange(len(values))
    times = start + (n // reruns) * 86400e6 + (n % reruns) * 60e6
    states = [BUSY if busy is not None and busy[i] else None for i in n]
    return gate.Run({**KEYS, "perf_var": var, "unit": unit}, times, values,
                    lambda i: {"jobid": str(i), "session_tag": f"night-{i // reruns}",
                               "node_state": states[i]},
                    session=n // reruns, busy=None if busy is None else np.asarray(busy))


def _noise(rng, n: int, sd: float = 0.02, spikes: float = 0.01) -> np.ndarray:
    y = 2.0 * rng.lognormal(0, sd, n)
    hit = rng.random(n) < spikes
    y[hit] *= 1.5
    return y


def _two_state(rng, n: int, slow: float = 0.2) -> np.ndarray:
    """Launches fast (2.0 us, 2 % noise) or, one in five, slow (x2.2): osu_latency on a VM."""
    y = 2.0 * rng.lognormal(0, 0.02, n)
    y[rng.random(n) < slow] *= 2.2
    return y


def test_synthetic_step_20pct_latency_flagged_with_first_bad_run():
    rng = np.random.default_rng(1)
    y = _noise(rng, 60, spikes=0)
    y[-4:] *= 1.20
    res = gate.judge(_run(y), gate.Windows(), Settings(), [])
    assert res.verdict.status == "regression"
    assert 0.15 < res.verdict.change < 0.25
    assert res.first_bad["session_tag"] == "night-56"
    assert res.verdict.method == "sessions" and res.verdict.confidence > 0.99
    assert len(res.sessions) == 2 and all(s["z"] > s["z_needed"] for s in res.sessions)


def test_one_worse_session_is_a_watch_and_the_next_one_confirms_or_clears_it():
    rng = np.random.default_rng(11)
    y = _noise(rng, 41, spikes=0)
    y[-1] *= 1.3
    assert gate.judge(_run(y), gate.Windows(), Settings(), []).verdict.status == "ok"
    watch = gate.judge(_run(y), gate.Windows(latest=1), Settings(), [])
    assert watch.verdict.status == "watch"
    worse = np.append(y, y[-1])
    cleared = np.append(y, y[0])
    assert gate.judge(_run(worse), gate.Windows(), Settings(), []).verdict.status == "regression"
    assert gate.judge(_run(cleared), gate.Windows(), Settings(), []).verdict.status == "ok"
    assert gate.judge(_run(y), gate.Windows(latest=1), Settings(confirm=1), []
                      ).verdict.status == "regression"


def test_direction_comes_from_the_unit():
    rng = np.random.default_rng(2)
    y = _noise(rng, 60, spikes=0)
    y[-4:] *= 0.8
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
    y[-4:] *= 1.20
    loose = [("*osu_latency*latency_8 *", 0.3)]
    assert gate.judge(_run(y), gate.Windows(), Settings(), loose).verdict.status == "ok"


def _rate(flagged: int, total: int) -> float:
    print(f"{flagged}/{total} = {flagged / total:.4f}")
    return flagged / total


def test_synthetic_pure_noise_false_alarm_rate_below_half_percent():
    rng = np.random.default_rng(5)
    verdicts = [gate.judge(_run(_noise(rng, 120)), gate.Windows(), Settings(), [])
                for _ in range(2000)]
    assert _rate(sum(v.verdict.status == "regression" for v in verdicts), 2000) < 0.005


def test_synthetic_20pct_step_detection_power_above_95_percent():
    rng = np.random.default_rng(6)
    hits = 0
    for _ in range(500):
        y = _noise(rng, 120)
        y[-2:] *= 1.20
        hits += gate.judge(_run(y), gate.Windows(), Settings(), []).verdict.status == "regression"
    assert _rate(hits, 500) > 0.95


def test_two_state_launches_judged_by_the_best_of_three_raise_no_alarm_and_keep_power():
    """A launch in five at twice the latency: a session's median is slow one night in ten,
    two nights in a row one in a hundred; its best of three launches almost never."""
    rng = np.random.default_rng(12)
    alarms = hits = 0
    for _ in range(400):
        y = _two_state(rng, 3 * 30)
        alarms += gate.judge(_run(y, reruns=3), gate.Windows(), Settings(), []
                             ).verdict.status == "regression"
        y[-6:] *= 1.2
        hits += gate.judge(_run(y, reruns=3), gate.Windows(), Settings(), []
                           ).verdict.status == "regression"
    assert _rate(alarms, 400) < 0.01
    assert _rate(hits, 400) > 0.95


def test_a_session_measured_on_a_busy_node_is_not_judged_and_says_why():
    rng = np.random.default_rng(13)
    y = _noise(rng, 3 * 20, spikes=0)
    y[-3:] *= 3  # the node was busy: every run of the last session
    busy = np.zeros(len(y), bool)
    busy[-3:] = True
    res = gate.judge(_run(y, reruns=3, busy=busy), gate.Windows(), Settings(), [])
    assert res.verdict.status == "insufficient" and res.busy_latest == 3
    assert res.verdict.reason.startswith("the node was busy in the judged session (3 runs; "
                                         "other work took 34 % of its CPU time during the run")
    busy[-3:] = [True, False, False]  # one busy run: left out, the others judged
    res = gate.judge(_run(y, reruns=3, busy=busy), gate.Windows(), Settings(), [])
    assert res.verdict.status != "insufficient" and res.busy_latest == 1


def test_gate_over_a_frame_orders_regressions_first():
    rng = np.random.default_rng(7)
    rows = []
    t0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
    for var, step in (("latency_8", 1.0), ("latency_16", 1.2), ("latency_32", 1.2)):
        y = _noise(rng, 40, spikes=0)
        y[-4:] *= step
        rows += [{**KEYS, "perf_var": var, "unit": "us", "time": t0 + timedelta(days=i),
                  "value": v, "jobid": str(i), "session_tag": None} for i, v in enumerate(y)]
    res = gate.run(pl.DataFrame(rows), gate.Windows(), Settings(), [])
    assert [r.verdict.status for r in res] == ["regression", "regression", "ok"]
    assert "latency_16" in res[0].series or "latency_16" in res[1].series


def test_a_size_that_moved_alone_is_not_named():
    rng = np.random.default_rng(8)
    rows = []
    t0 = datetime(2025, 1, 1, tzinfo=timezone.utc)
    for var, step in (("latency_8", 1.0), ("latency_16", 1.3), ("latency_32", 1.0)):
        y = _noise(rng, 40, spikes=0)
        y[-4:] *= step
        rows += [{**KEYS, "perf_var": var, "unit": "us", "time": t0 + timedelta(days=i),
                  "value": v, "jobid": str(i), "session_tag": None} for i, v in enumerate(y)]
    res = gate.run(pl.DataFrame(rows), gate.Windows(), Settings(), [])
    assert [r.verdict.status for r in res] == ["ok"] * 3
    alone = next(r for r in res if "latency_16" in r.series)
    assert "alone: no adjacent size moved with it (2 needed)" in alone.verdict.method
    named = gate.run(pl.DataFrame(rows), gate.Windows(), Settings(min_sizes=1), [])
    assert named[0].verdict.status == "regression"


def test_fdr_control_keeps_strong_regressions_and_drops_what_noise_explains():
    from omb_review.judge.detect import Verdict

    def result(p: float) -> gate.SeriesResult:
        status = "regression" if p <= 0.01 else "ok"
        return gate.SeriesResult("s", {}, "us", 0.05, Verdict(status, 0.1, p, "sessions"))

    noise = [result(p) for p in np.linspace(0.005, 1, 100)]  # one "regression" by chance
    strong = [result(1e-6) for _ in range(3)]
    results = noise + strong
    assert sum(r.verdict.status == "regression" for r in noise) == 1
    gate.control_fdr(results, 0.01)
    assert [r.verdict.status for r in strong] == ["regression"] * 3
    assert all(r.verdict.status == "ok" for r in noise)
    assert strong[0].verdict.confidence == 1 - strong[0].verdict.q_value > 0.9999


def test_too_short_a_history_is_new_and_a_long_one_is_judged():
    rng = np.random.default_rng(5)
    y = _noise(rng, 40, spikes=0)
    assert gate.judge(_run(y[-4:]), gate.Windows(), Settings(), []).new
    res = gate.judge(_run(y), gate.Windows(), Settings(), [])
    assert not res.new and res.verdict.n_baseline == 30 and res.verdict.n_latest == 2
