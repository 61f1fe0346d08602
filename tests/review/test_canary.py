"""The other libraries of a session as each library's canary (omb_review.judge.canary): a move they
share is the machine's; a library's own move beyond them is still its regression."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

import numpy as np
import polars as pl

from omb_review.judge import gate
from omb_review.judge.check import EXIT_REGRESSION, EXIT_SHARED, check
from omb_review.judge.detect import Settings

KEYS = {"system": "sim", "partition": "cpu", "buffers": "H H", "test": "OSULatency",
        "benchmark": "osu_latency", "placement": "intra_node", "algorithm": None,
        "window_size": None, "processes": None, "rma_window": None, "rma_sync": None,
        "mapping": None, "num_nodes": 1, "num_tasks": 2, "osu_version": "7.3"}
LIBRARIES = {"spack-openmpi": ("openmpi", "4.1.4"), "spack-mpich": ("mpich", "4.0.2")}
SIZES = (1024, 2048, 4096, 8192)


def _frame(steps: dict[str, float], nights: int = 12, last: int = 2, seed: int = 3,
           libraries: dict = LIBRARIES) -> pl.DataFrame:
    """Nightly sessions of both libraries (3 runs each, a minute apart, in the same session);
    each library's ``steps`` factor on every size of its last ``last`` nights."""
    rng = np.random.default_rng(seed)
    t0 = datetime(2026, 1, 1, 2, tzinfo=timezone.utc)
    rows = []
    for night in range(nights):
        for k, (env, (family, version)) in enumerate(libraries.items()):
            for size in SIZES:
                for rerun in range(3):
                    value = 2.0 * (1 + size / 4096) * rng.lognormal(0, 0.02)
                    if night >= nights - last:
                        value *= steps.get(env, 1.0)
                    rows.append({
                        **KEYS, "lineage": env, "environ": env, "mpi_family": family,
                        "mpi_version": version, "perf_var": f"latency_{size}", "unit": "us",
                        "time": t0 + timedelta(days=night, minutes=10 * k + rerun),
                        "value": value, "jobid": f"{night}{k}{size}{rerun}",
                        "session_tag": f"night-{night}", "session_id": f"night-{night}"})
    return pl.DataFrame(rows)


def _statuses(results: list[gate.SeriesResult], env: str) -> set[str]:
    return {r.verdict.status for r in results if r.keys["lineage"] == env}


def test_a_move_of_every_library_in_the_same_sessions_is_shared_not_a_regression():
    frame = _frame({"spack-openmpi": 1.3, "spack-mpich": 1.3})
    alone = check(frame, gate.Windows(), Settings(canary=False), [], quiet=True)
    assert alone.code == EXIT_REGRESSION  # judged alone, each library "regressed"
    out = check(frame, gate.Windows(), Settings(), [], quiet=True)
    assert out.code == EXIT_SHARED and not out.regressions()
    assert _statuses(out.results, "spack-openmpi") == {"shared"}
    assert _statuses(out.results, "spack-mpich") == {"shared"}
    r = next(r for r in out.results if r.keys["lineage"] == "spack-openmpi")
    assert re.search(r"shared: spack-mpich moved \+3\d %, \+3\d % in the same sessions",
                     r.verdict.method)
    assert {f.status for f in out.found} == {"shared"}
    assert "the machine or the system" in out.why[0]


def test_a_library_that_moved_beyond_its_canary_is_still_its_regression():
    frame = _frame({"spack-openmpi": 1.8, "spack-mpich": 1.3})
    out = check(frame, gate.Windows(), Settings(), [], quiet=True)
    assert out.code == EXIT_REGRESSION
    assert _statuses(out.results, "spack-openmpi") == {"regression"}
    assert _statuses(out.results, "spack-mpich") == {"shared"}
    r = next(r for r in out.results if r.keys["lineage"] == "spack-openmpi")
    assert re.search(r"beyond its canaries \(spack-mpich: \+3\d %, \+3\d %; "
                     r"this library \+[3-4]\d %", r.verdict.method)


def test_a_library_regression_with_a_quiet_canary_is_found_as_before():
    frame = _frame({"spack-openmpi": 1.2})
    out = check(frame, gate.Windows(), Settings(), [], quiet=True)
    alone = check(frame, gate.Windows(), Settings(canary=False), [], quiet=True)
    assert out.code == alone.code == EXIT_REGRESSION
    assert _statuses(out.results, "spack-openmpi") == {"regression"}
    assert _statuses(out.results, "spack-mpich") == {"ok"}
    assert [r.verdict.method for r in out.results] == [r.verdict.method for r in alone.results]


def test_one_library_has_no_canary_and_is_judged_alone():
    one = {"spack-openmpi": LIBRARIES["spack-openmpi"]}
    out = check(_frame({"spack-openmpi": 1.3}, libraries=one), gate.Windows(), Settings(), [],
                quiet=True)
    assert out.code == EXIT_REGRESSION


def test_a_canary_measured_in_other_sessions_is_no_canary():
    frame = _frame({"spack-openmpi": 1.3, "spack-mpich": 1.3})
    # MPICH's judged nights measured two days later: not the same sessions
    late = pl.col("lineage") == "spack-mpich"
    frame = frame.with_columns(time=pl.when(late).then(pl.col("time") + timedelta(days=2))
                               .otherwise(pl.col("time")))
    out = check(frame, gate.Windows(session_gap=timedelta(hours=12)), Settings(), [], quiet=True)
    assert "shared" not in _statuses(out.results, "spack-openmpi")


def test_a_shared_watch_fails_nothing():
    frame = _frame({"spack-openmpi": 1.3, "spack-mpich": 1.3}, last=1)
    alone = check(frame, gate.Windows(latest=1), Settings(canary=False), [], quiet=True)
    assert {f.status for f in alone.found} == {"watch"}
    out = check(frame, gate.Windows(latest=1), Settings(), [], quiet=True)
    assert out.code == 0 and not out.found
    r = next(r for r in out.results if r.keys["lineage"] == "spack-openmpi")
    assert r.verdict.status == "ok" and "shared: spack-mpich moved" in r.verdict.method
