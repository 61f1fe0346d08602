"""Upgrade scenarios built from real records: the mini-cluster's perflog
(``data/trend-minicluster``, 60 real runs of osu_latency and osu_bw inter-node, Open MPI
4.1.4) re-labelled as sessions of environments a site named by version. What is synthetic, and
controlled: the labels (environment, MPI version, declared series, iteration count), the dates
(one session a day) and, where a test says so, the values of one session (latency x1.5,
bandwidth x0.6)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

DATA = Path(__file__).parent / "data"
SOURCE = DATA / "trend-minicluster" / "minicluster" / "alloc" / "OsuPt2Pt.log"
DAY0 = datetime(2026, 11, 1, 2, 0, tzinfo=timezone.utc)


@dataclass
class Session:
    """One re-labelled session: which environment, library and series it claims, and by how
    much its values are scaled per unit (``{'us': 1.5, 'MB/s': 0.6}``; synthetic)."""

    environ: str
    mpi_version: str = "4.1.5"
    mpi_family: str = "openmpi"
    series: str | None = None
    scale: dict[str, float] = field(default_factory=dict)
    iterations: str = "null"  # OSU's -i as logged (null: OSU's default, as measured)


def _runs() -> tuple[list[str], list[list[dict[str, str]]]]:
    """The source's columns and its runs (records of one job), in order."""
    header, *lines = SOURCE.read_text().splitlines()
    cols = header.split("|")
    runs: dict[str, list[dict[str, str]]] = {}
    for line in lines:
        record = dict(zip(cols, line.split("|"), strict=True))
        runs.setdefault(record["jobid"], []).append(record)
    return cols, list(runs.values())


def write(root: Path, sessions: list[list[Session]], repeat: int = 3) -> Path:
    """A perflog tree at ``root``: day ``d`` holds ``sessions[d]``, one ReFrame session
    (``session_id`` ``day-d``) of ``repeat`` real osu_latency runs and as many osu_bw runs per
    environment (the source's next unused ones, in their order), re-labelled."""
    cols, runs = _runs()
    latency = [r for r in runs if r[0]["benchmark"] == "osu_latency"]
    bandwidth = [r for r in runs if r[0]["benchmark"] == "osu_bw"]
    out = ["|".join([*cols, "series", "session_id"])]
    n = 0
    for day, group in enumerate(sessions):
        for env in group:
            for _ in range(repeat):
                for run in (latency[n], bandwidth[n]):
                    out += [_relabelled(rec, env, DAY0 + timedelta(days=day), cols)
                            + f"|day-{day}" for rec in run]
                n += 1
    path = root / "minicluster" / "alloc" / "OsuPt2Pt.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(out) + "\n")
    return root


def _relabelled(rec: dict[str, str], env: Session, day: datetime, cols: list[str]) -> str:
    when = datetime.fromisoformat(rec["job_completion_time"])
    offset = when - when.replace(hour=0, minute=0, second=0)  # keep the order within a day
    new = {**rec, "job_completion_time": (day + offset - timedelta(hours=5)).isoformat(),
           "environ": env.environ, "mpi_version": env.mpi_version, "mpi_family": env.mpi_family,
           "environ_modules": f"{env.mpi_family}/{env.mpi_version}",
           "iterations": env.iterations}
    factor = env.scale.get(rec["perf_unit"])
    if factor is not None and rec["perf_value"] != "null":
        new["perf_value"] = f"{float(rec['perf_value']) * factor:.2f}"
    return "|".join([*(new[c] for c in cols), env.series or "null"])
