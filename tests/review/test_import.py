"""omb-review import-osu: raw OSU output files become records of the same history."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest
from conftest import DATA, REPO

from omb_review.cli import EXIT_USAGE, main
from omb_review.read.ingest import load
from omb_review.read.series import grouped

OSU = REPO / "tests" / "data" / "osu"  # real OSU 7.4 runs on the development VM
WORLD = REPO / "tests" / "data" / "osu-world"
HAND_RUNS = {  # a site's hand runs, filed by day (the days are made up, the outputs real)
    "2026-11-01": "ompi_osu_latency_default.txt",
    "2026-11-02": "ompi_osu_latency_m0-8.txt",
    "2026-11-03": "cap_ompi_osu_latency_c_m1-1024.txt",
    "2026-11-04": "cap_ompi_osu_latency_z_m1-1024.txt",
}
MAPPING = r"""
rules:
  - path: '(?P<date>\d{4}-\d\d-\d\d)/(?P<benchmark>osu_\w+)\.txt'
    date_format: '%Y-%m-%d'
    system: local
    partition: default
    environ: spack-openmpi
    mpi_family: openmpi
    placement: intra_socket
"""


def _mapping(tmp_path: Path, text: str = MAPPING) -> Path:
    path = tmp_path / "mapping.yaml"
    path.write_text(text)
    return path


@pytest.fixture
def hand_runs(tmp_path: Path) -> Path:
    root = tmp_path / "hand"
    for day, name in HAND_RUNS.items():
        (root / day).mkdir(parents=True)
        shutil.copy(OSU / name, root / day / "osu_latency.txt")
    return root


def test_hand_runs_become_the_baseline_of_the_suites_series(tmp_path, hand_runs, capsys):
    """Imported next to real perflogs of this suite's OsuPt2Pt (data/ours): the hand runs
    join the spack-openmpi series (the columns they lack are unknown, not different) and
    are the baseline the suite's latest session is judged against."""
    tree = Path(shutil.copytree(DATA / "ours", tmp_path / "perflogs"))
    assert main(["import-osu", str(hand_runs), "--map", str(_mapping(tmp_path)),
                 "-o", str(tree)]) == 0
    assert "imported 4 tables" in capsys.readouterr().out
    ds = load(tree, use_cache=False)
    runs = grouped(ds.frame.filter(pl.col("test") == "OsuPt2Pt")).with_columns(
        n=pl.col("value").list.len())
    latency_8 = runs.filter((pl.col("perf_var") == "latency_8")
                            & (pl.col("lineage") == "spack-openmpi"))
    assert latency_8.height == 1 and latency_8["n"][0] == 11 + 4  # 11 sessions + 4 hand runs
    assert latency_8["buffers"][0] == "H H" and latency_8["num_tasks"][0] == 2
    out = tmp_path / "gate.json"
    main(["check", str(tree), "--no-cache", "--json", str(out), "--baseline",
          "2026-11-01..2026-11-05", "--since", "2026-11-22T08:16:00"])
    verdicts = {v["series"]: v for v in json.loads(out.read_text())["series"]}
    judged = [v for name, v in verdicts.items()
              if "spack-openmpi" in name and name.endswith("OsuPt2Pt.latency_8 [us]")]
    assert [v["n_baseline"] for v in judged] == [4]


def test_several_runs_per_file_and_what_the_output_says(tmp_path, capsys):
    """A wrapper log of 22 benchmarks (OSU 5.8): one-sided window/sync, mbw_mr window and
    pairs, forked processes and startup task counts come from the outputs themselves."""
    src = tmp_path / "logs"
    src.mkdir()
    shutil.copy(WORLD / "metrics-operator-experiments" / "run1_size-4.log", src / "run1.log")
    mapping = _mapping(tmp_path, "rules:\n  - path: 'run1\\.log'\n    date: 2023-04-01\n"
                       "    system: gke\n    partition: n1\n")
    assert main(["import-osu", str(src), "--map", str(mapping), "-o", str(tmp_path / "out"),
                 "--sizes", "1,8"]) == 0
    out = capsys.readouterr().out
    assert "imported 21 tables" in out
    assert "SKIPPED run1.log:454: OSU MPI Hello World Test: the suite logs no figure of " \
           "osu_hello" in out
    frame = load(tmp_path / "out", use_cache=False).frame
    tests = set(frame["test"].cast(pl.String))
    # each program under the check that runs it (catalogue.check_of): verdict or exploration
    assert {"OsuOneSided", "OsuMbwMr", "OsuLatencyMp", "OsuStartup", "OsuCollective",
            "OsuPt2Pt", "OsuMultiLat"} <= tests
    assert tests <= {"OsuOneSided", "OsuMbwMr", "OsuLatencyMp", "OsuStartup", "OsuCollective",
                     "OsuCollectiveSweep", "OsuNonBlockingCollective", "OsuNonBlockingSweep",
                     "OsuPt2Pt", "OsuPt2PtMore", "OsuMultiLat"}
    cas = frame.filter(pl.col("benchmark") == "osu_cas_latency").row(0, named=True)
    assert (cas["rma_window"], cas["rma_sync"]) == ("allocate", "flush")
    mbw = frame.filter(pl.col("benchmark") == "osu_mbw_mr").row(0, named=True)
    assert (mbw["window_size"], mbw["num_tasks"]) == (64, 4)
    sizes = set(frame.filter(pl.col("test") == "OsuPt2Pt")["perf_var"].cast(pl.String))
    assert sizes == {"latency_1", "latency_8", "min_latency", "bandwidth_1", "bandwidth_8",
                     "peak_bandwidth"}


def test_refused_outputs_and_unmatched_files_are_listed(tmp_path, capsys):
    src = tmp_path / "old"
    src.mkdir()
    for name in ("latency-test-comet/osu_20151019_comet-21-01-18_lines1-54.out",
                 "github-threads/open-mpi-ompi-issue5946_osu_acc_latency_v5.3_internode_segfault.txt",
                 "constructed/constructed_v3.9_latency_title.txt"):
        shutil.copy(WORLD / name, src / f"{Path(name).stem}.out")
    (src / "notes.md").write_text("hand-run notes\n")
    mapping = _mapping(tmp_path, "rules:\n  - path: '.*\\.out'\n    date: file\n"
                       "    system: comet\n    partition: compute\n")
    # exit 0: something was imported (1 only when nothing was)
    assert main(["import-osu", str(src), "--map", str(mapping), "-o", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    assert "imported 2 tables" in out  # the two OSU 4.4.1 runs
    assert out.count("REFUSED") == 2
    assert "OSU 3.9 is older than the layouts this parser knows" in out
    assert "the run failed; last row: size 0" in out
    assert "NO RULE notes.md" in out
    (src / "osu_20151019_comet-21-01-18_lines1-54.out").unlink()  # only refused ones left: 1
    assert main(["import-osu", str(src), "--map", str(mapping), "-o", str(tmp_path / "n")]) == 1


@pytest.mark.parametrize(("text", "message"), [
    ("rules: []", "no 'rules:' list"),
    ("rules:\n  - path: '('\n    date: file\n    system: a\n    partition: b\n",
     "'path' must be a regular expression"),
    ("rules:\n  - path: 'x'\n    system: a\n    partition: b\n", "give 'date: file'"),
    ("rules:\n  - path: 'x'\n    date: file\n    system: a\n", "say which partition"),
    ("rules:\n  - path: 'x'\n    date: file\n    system: a\n    partition: b\n    host: c\n",
     "unknown keys ['host']"),
])
def test_mapping_errors_say_what_to_change(tmp_path, hand_runs, capsys, text, message):
    code = main(["import-osu", str(hand_runs), "--map", str(_mapping(tmp_path, text)),
                 "-o", str(tmp_path / "o")])
    assert code == EXIT_USAGE and message in capsys.readouterr().err


def test_osu_80_launcher_logs_are_imported_and_their_summary_lists_what_did_not_run(
        tmp_path, capsys):
    """Real OSU 8.0b2 logs: omb_coll (every collective, 4 ranks, Open MPI 4.1.4: the
    persistent ones not launched), omb_coll's persistent suite with MPICH 4.0.2, and a plain
    osu_latency; every table is filed under its program by 8.0's titles."""
    src = tmp_path / "logs"
    src.mkdir()
    for name in ("cap80_ompi_omb_coll_m1-64.txt", "cap80_mpich_omb_coll_persistent_np2.txt",
                 "cap80_ompi_osu_latency_m1-1024.txt"):
        shutil.copy(REPO / "tests" / "data" / "osu80" / name, src / name)
    mapping = _mapping(tmp_path, "rules:\n  - path: '.*\\.txt'\n    date: 2026-11-27\n"
                       "    system: local\n    partition: default\n")
    assert main(["import-osu", str(src), "--map", str(mapping), "-o", str(tmp_path / "o")]) == 0
    out = capsys.readouterr().out
    assert "names no program" not in out
    # the launchers pass -m to their barriers too, which then print one size-less row per
    # size (refused): 38 of omb_coll's 40 tables, 12 of the 13 persistent ones, osu_latency
    assert "imported 51 tables" in out and out.count("REFUSED") == 3
    assert out.count("not launched by OSU's launcher") == 13
    assert ("cap80_ompi_omb_coll_m1-64.txt:477: osu_allgather_persistent: not launched by "
            "OSU's launcher (All persistent tests require _ENABLE_MPI4_)") in out
    frame = load(tmp_path / "o", use_cache=False).frame
    assert set(frame["osu_version"].cast(pl.String)) == {"8.0b"}
    benchmarks = set(frame["benchmark"].cast(pl.String))
    assert {"osu_latency", "osu_ialltoall", "osu_neighbor_alltoallw", "osu_ineighbor_allgather",
            "osu_alltoall_persistent", "osu_scatterv_persistent"} <= benchmarks
