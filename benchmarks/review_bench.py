"""Speed of omb-review on a realistic perflog tree, against a naive pandas reader.

    python benchmarks/review_bench.py [--dir /tmp/omb-bench] [--nights 620] [--keep] [--repeat 3]

Generates (synthetic, seeded) years of nightly perflogs in the decided format: several systems
and partitions, point-to-point and collective test classes, header changes that rotate files to
``.hN`` (the oldest segment with zone-less stamps), failed runs, a few corrupted lines and one
injected 20% latency step.  Then times, each stage in a fresh process (peak RSS is per process):

- ``naive``: pandas ``read_csv`` per file, then ``concat`` (what post-processing does today);
- ``ingest``: omb-review reading everything and writing its cache;
- ``reingest``: the same with the cache warm;
- ``check``: the cached read plus the regression gate over every series.

Each round runs the four stages in turn (the cache is removed first); the summary prints the
median seconds of the rounds, the ratio to the naive reader of the same run and the targets.

The check stage also reports what the gate says of the injected regression: it must be one
finding (the curve, its 23 sizes, the change) naming what changed in the generated records
(MPI version, Spack lock, MPI spec, node list); the script exits 1 otherwise.

Needs pandas for the naive baseline only (``pip install -e '.[bench]'``); without it that
stage is skipped, said so, and the ratios are left out.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path

COLUMNS = (
    "job_completion_time|result|system|partition|environ|name|display_name|jobid|job_nodelist|"
    "num_nodes|num_tasks|num_tasks_per_node|benchmark|placement|mapping|algorithm|buffers|"
    "mpi_family|mpi_version|osu_version|osu_spec|mpi_spec|spack_lock|placement_observed|"
    "algorithm_evidence|session_tag|perf_var|perf_value|perf_unit|perf_ref|perf_lower_thres|"
    "perf_upper_thres|perf_result"
).split("|")
STAGES = ("naive", "ingest", "reingest", "check")
#: The issue's targets on 2 cores: 1M records ingested < 10 s, re-ingested from cache < 1 s.
TARGETS = {"ingest": 10.0, "reingest": 1.0}
TARGET_PEAK_MIB = 2048
#: Header generations: columns dropped before each rotation date (fraction of the history).
GENERATIONS = [(0.0, {"algorithm_evidence", "session_tag"}), (0.35, {"session_tag"}), (0.7, set())]
SYSTEMS = {"alpha": ["cpu", "gpu"], "beta": ["cpu", "gpu"], "gamma": ["cpu", "gpu"]}
ENVIRONS = {"gnu-ompi": ("openmpi", "4.1.4"), "gnu-mpich": ("mpich", "4.0.2")}
PT2PT_SIZES = [0] + [2**i for i in range(22)]
#: The injected regression (last 3 nights): one curve, all 23 sizes, so one finding.
INJECTED = {"system": "alpha", "partition": "cpu", "lineage": "gnu-ompi",
            "benchmark": "osu_latency", "placement": "inter_node"}
CHANGED = {"mpi_version", "spack_lock", "mpi_spec", "job_nodelist"}  # what it must name
COLL_SIZES = [2**i for i in range(0, 22, 3)]


def _latency(size: int, inter: bool) -> float:
    return (1.6 if inter else 0.25) + size / (12000.0 if inter else 9000.0)


def _records(rng: random.Random, night: int, system: str, part: str, inject: bool):
    """(test class, field dict) for one nightly session of one partition.  ``inject``: the
    Open MPI environment was upgraded (4.1.6, new Spack lock and spec hash) and runs on other
    nodes, and its inter-node latency is 20% slower at every size (what a finding must say)."""
    for env, (family, version) in ENVIRONS.items():
        upgraded = inject and env == INJECTED["lineage"]
        version = "4.1.6" if upgraded else version
        common = {"system": system, "partition": part, "environ": env, "mpi_family": family,
                  "mpi_version": version, "osu_version": "7.4", "buffers": "H H",
                  "osu_spec": "osu-micro-benchmarks@7.4",
                  "mpi_spec": f"{family}@{version}/{'k3v2' if upgraded else 'a7x1'}",
                  "spack_lock": "4ab7d0" if upgraded else "9f2c1e",
                  "session_tag": f"night-{night}"}
        for placement in ("intra_socket", "inter_node"):
            inter = placement == "inter_node"
            nodes = 2 if inter else 1
            first = 2 if upgraded else 0
            base = {**common, "placement": placement, "num_nodes": nodes, "num_tasks": 2,
                    "job_nodelist": str([f"{system}{i:03d}" for i in range(first, first + nodes)])}
            slow = 1.2 if upgraded and inter else 1.0
            for test, metric, unit in (("OSULatency", "latency", "us"),
                                       ("OSUBandwidth", "bandwidth", "MB/s")):
                name = f"{test} %benchmark=osu_{metric[:3] if unit == 'MB/s' else metric}"
                for size in PT2PT_SIZES:
                    lat = _latency(size, inter) * rng.lognormvariate(0, 0.02)
                    value = lat * slow if unit == "us" else max(size, 1) / lat
                    yield test, {**base, "name": f"{name} %placement={placement}",
                                 "benchmark": f"osu_{metric}" if unit == "us" else "osu_bw",
                                 "perf_var": f"{metric}_{size}", "perf_value": f"{value:.2f}",
                                 "perf_unit": unit}
        for alg in ("binomial", "knomial", "scatter_ring_allgather"):
            for tasks in (4, 8, 16):
                for size in COLL_SIZES:
                    value = (2 + tasks * 0.3 * (1 + len(alg) / 10) + size / 2000) * \
                        rng.lognormvariate(0, 0.03)
                    yield "OSUBcast", {
                        **common, "name": f"OSUBcast %algorithm={alg} %num_tasks={tasks}",
                        "benchmark": "osu_bcast", "placement": "packed", "algorithm": alg,
                        "mapping": "core", "num_tasks": tasks, "num_nodes": 2,
                        "job_nodelist": f"['{system}000', '{system}001']",
                        "perf_var": f"avg_latency_{size}", "perf_value": f"{value:.2f}",
                        "perf_unit": "us"}


def _line(fields: dict, when: datetime, zoned: bool, cols: list[str], jobid: int) -> str:
    stamp = when.strftime("%Y-%m-%dT%H:%M:%S") + ("+00:00" if zoned else "")
    row = {**fields, "job_completion_time": stamp, "result": "pass", "jobid": str(jobid),
           "display_name": fields["name"], "perf_ref": "0", "perf_result": "pass"}
    if fields.get("perf_value") is None:
        row["result"] = "fail"
    return "|".join(str(row.get(c, "None")) for c in cols)


def generate(root: Path, nights: int, seed: int = 7) -> int:
    """Write the tree; returns the number of records written."""
    rng = random.Random(seed)
    start = datetime(2024, 1, 1, 2, 0, tzinfo=timezone.utc)
    count, jobid = 0, 1000
    for system, parts in SYSTEMS.items():
        for part in parts:
            files: dict[tuple[str, int], list[str]] = {}
            for night in range(nights):
                frac = night / nights
                gen = max(i for i, (f, _) in enumerate(GENERATIONS) if frac >= f)
                cols = [c for c in COLUMNS if c not in GENERATIONS[gen][1]]
                when = start + timedelta(days=night, minutes=rng.randint(0, 90))
                inject = (system, part) == (INJECTED["system"], INJECTED["partition"]) and \
                    night >= nights - 3
                for test, fields in _records(rng, night, system, part, inject):
                    jobid += 1
                    if rng.random() < 0.0005:
                        fields = {**fields, "perf_value": None}
                    lines = files.setdefault((test, gen), ["|".join(cols)])
                    lines.append(_line(fields, when, gen > 0, cols, jobid))
                    if rng.random() < 0.00002:
                        lines.append(lines[-1] + "|stray")
                    count += 1
            _write(root / system / part, files)
    return count


def _write(folder: Path, files: dict[tuple[str, int], list[str]]) -> None:
    """The newest generation is ``<Test>.log``; older ones were rotated to ``.h0``, ``.h1``."""
    folder.mkdir(parents=True, exist_ok=True)
    for test in {t for t, _ in files}:
        gens = sorted(g for t, g in files if t == test)
        for n, gen in enumerate(gens):
            name = f"{test}.log" if gen == gens[-1] else f"{test}.log.h{n}"
            (folder / name).write_text("\n".join(files[(test, gen)]) + "\n")


def stage(name: str, root: Path, cache: Path) -> dict:
    """Run one stage in this process; report seconds, records and peak RSS."""
    t0 = time.perf_counter()
    if name == "naive":
        import pandas as pd

        files = sorted(p for p in root.rglob("*.log*"))
        frame = pd.concat([pd.read_csv(f, sep="|", on_bad_lines="skip") for f in files])
        rows = len(frame)
    else:
        if name == "check":
            from omb_review import cli

            out = cache.parent / "check.json"
            code = cli.main(["check", str(root), "--cache-dir", str(cache), "--json", str(out)])
            verdicts = json.loads(out.read_text())
            rows = verdicts["counts"] | {"exit": code, "injected": injected(verdicts)}
        else:
            from omb_review.read.ingest import load

            rows = load(root, cache_dir=cache).frame.height
    seconds = time.perf_counter() - t0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"stage": name, "seconds": round(seconds, 2), "rows": rows, "peak_mib": round(peak)}


def injected(verdicts: dict) -> dict:
    """What the gate's JSON says about the injected regression: its findings and series."""
    def match(entry: dict) -> bool:
        return all(entry.get(k) == v for k, v in INJECTED.items()) and \
            entry["status"] == "regression"

    found = [f for f in verdicts["findings"] if match(f)]
    return {"series": sum(map(match, verdicts["series"])), "findings": [
        {"sizes": len(f["sizes"]), "sizes_text": f["sizes_text"], "change": f["value_change"],
         "first_bad_job": (f["first_bad_run"] or {}).get("jobid"),
         "what_changed": sorted(c["field"] for c in f["what_changed"])} for f in found]}


def injected_ok(result: dict) -> bool:
    """One finding, naming all 23 sizes and exactly the fields the generator changed."""
    found = result["findings"]
    return len(found) == 1 and found[0]["sizes"] == len(PT2PT_SIZES) and \
        set(found[0]["what_changed"]) == CHANGED


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/omb-review-bench"))
    parser.add_argument("--nights", type=int, default=620)
    parser.add_argument("--keep", action="store_true", help="reuse an existing tree")
    parser.add_argument("--repeat", type=int, default=3, help="rounds; the summary shows medians")
    parser.add_argument("--stage", help=argparse.SUPPRESS)
    args = parser.parse_args()
    root, cache = args.dir / "perflogs", args.dir / "cache"
    if args.stage:
        print(json.dumps(stage(args.stage, root, cache)))
        return
    if not (args.keep and root.is_dir()):
        shutil.rmtree(args.dir, ignore_errors=True)
        t0 = time.perf_counter()
        n = generate(root, args.nights)
        size = sum(p.stat().st_size for p in root.rglob("*")) / 2**20
        files = sum(1 for _ in root.rglob("*.log*"))
        print(f"generated {n} records, {files} files, {size:.0f} MiB "
              f"in {time.perf_counter() - t0:.1f} s")
    stages = STAGES
    if importlib.util.find_spec("pandas") is None:
        stages = STAGES[1:]
        print("pandas is not installed (pip install -e '.[bench]'): the naive baseline is "
              "skipped, so no ratios to it")
    results: dict[str, list[dict]] = {}
    failed = False
    for _ in range(args.repeat):
        shutil.rmtree(cache, ignore_errors=True)  # ingest starts cold every round
        for name in stages:
            cmd = [sys.executable, __file__, "--dir", str(args.dir), "--stage", name]
            done = subprocess.run(cmd, capture_output=True, text=True)
            if done.returncode:
                print(f"{name}: failed\n{done.stderr[-2000:]}")
                failed = True
                continue
            line = done.stdout.strip().splitlines()[-1]
            print(line)
            results.setdefault(name, []).append(json.loads(line))
    summary(results)
    found = "check" in results and finding_summary(results["check"][-1]["rows"]["injected"])
    sys.exit(1 if failed or not found else 0)


def finding_summary(result: dict) -> bool:
    """Print what the gate found of the injected regression; True when it is one finding."""
    ok = injected_ok(result)
    print(f"\ninjected regression ({', '.join(INJECTED.values())}): {result['series']} series "
          f"verdicts -> {len(result['findings'])} finding(s): {result['findings']}; "
          f"target 1 finding of {len(PT2PT_SIZES)} sizes naming {sorted(CHANGED)}: "
          f"{'met' if ok else 'MISSED'}")
    return ok


def summary(results: dict[str, list[dict]]) -> None:
    """Median of the rounds per stage, its ratio to the naive reader (when measured) and the
    target."""
    naive = statistics.median(r["seconds"] for r in results.get("naive", [{"seconds": 0}]))
    print(f"\n{'stage':<9} {'median s':>9} {'x naive':>8} {'peak MiB':>9}  target")
    for name in STAGES:
        if name not in results:
            continue
        secs = statistics.median(r["seconds"] for r in results[name])
        peak = max(r["peak_mib"] for r in results[name])
        limit = TARGETS.get(name)
        verdict = ""
        if limit is not None:
            met = secs < limit and peak < TARGET_PEAK_MIB
            verdict = f"< {limit:g} s, < {TARGET_PEAK_MIB} MiB: {'met' if met else 'MISSED'}"
        ratio = f"{secs / naive:>8.2f}" if naive else f"{'-':>8}"
        print(f"{name:<9} {secs:>9.2f} {ratio} {peak:>9}  {verdict}")

if __name__ == "__main__":
    main()
