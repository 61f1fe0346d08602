"""Every title OSU 4.0 to 5.5 printed (tests/data/osu-titles, read from those releases'
sources) is read as a table title of the right kind, and omb-review import-osu knows the
program that prints it (issue 29: OSU 4.x one-sided titles were refused)."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
import yaml

from omb_review.cli import main
from omb_review.read.importer import title_entry
from omb_review.read.ingest import load
from omb_suite.osu.parsing import layout as L
from omb_suite.osu.parsing import parse_osu_output

DATA = Path(__file__).parents[1] / "data"
TITLES = yaml.safe_load((DATA / "osu-titles" / "titles-4.0-5.5.yaml").read_text())
CONSTRUCTED = DATA / "osu-world" / "constructed"
ACCELERATORS = ("", "-CUDA", "-OPENACC", "-CUDA MANAGED", "-MANAGED")
#: The table kind (omb_suite.osu.parsing) of each program's output.
KIND_OF_PROGRAM = {
    "osu_latency": "latency", "osu_bw": "bandwidth", "osu_bibw": "bibw",
    "osu_mbw_mr": "mbw_mr", "osu_multi_lat": "multi_lat", "osu_latency_mt": "latency_mt",
    "osu_init": "init", "osu_hello": "hello",
}


def _programs() -> dict[str, set[str]]:
    """Title (accelerator left out) -> the programs that print it."""
    programs: dict[str, set[str]] = {}
    for row in TITLES["titles"]:
        programs.setdefault(row["title"], set()).add(row["program"])
    return programs


def _kind(program: str) -> str:
    if program in KIND_OF_PROGRAM:
        return KIND_OF_PROGRAM[program]
    if program.startswith("osu_i"):
        return "nonblocking"
    one_sided = ("_put", "_get", "_acc", "_fop", "_cas", "_passive")
    if any(part in program for part in one_sided):
        return "one_sided"
    return "collective"


def test_every_listed_version_has_a_source():
    versions = {v for row in TITLES["titles"] for v in row["versions"]}
    assert versions == set(TITLES["sources"])
    assert {"4.0", "4.2", "5.5"} <= versions


@pytest.mark.parametrize(("printed", "title"), sorted(
    {(title.replace("%s", accel), title) for title in _programs() for accel in ACCELERATORS}))
def test_old_title_is_a_title_of_its_programs_kind(printed, title):
    (found,) = L.find_titles([f"# {printed} v4.2"])
    assert (found.version, L.kind_of(found.title)) == (
        "4.2", *{_kind(p) for p in _programs()[title]})


@pytest.mark.parametrize("title", sorted(_programs()))
def test_import_osu_knows_the_program_of_every_old_title(title):
    entry = title_entry(title.replace("%s", "-CUDA"))
    assert entry is not None, f"{title!r}: add it to src/omb_review/data/osu_import.yaml"
    assert entry.get("was", entry["benchmark"]) in _programs()[title]


def test_osu42_one_sided_get_latency_is_read_constructed():
    table = parse_osu_output(
        (CONSTRUCTED / "constructed_v4.2_get_latency_one_sided_title.txt").read_text())
    assert (table.kind, table.version, table.columns) == ("one_sided", "4.2", ("size", "latency"))


def test_osu44_bi_bandwidth_label_is_the_bandwidth_column_constructed():
    table = parse_osu_output(
        (CONSTRUCTED / "constructed_v4.4_bibw_bi_bandwidth_label.txt").read_text())
    assert (table.kind, table.columns, table.units["bandwidth"]) == (
        "bibw", ("size", "bandwidth"), "MB/s")


def test_import_osu_files_osu42_one_sided_runs_under_todays_program(tmp_path, capsys):
    """The issue's two OSU 4.2 runs: records of osu_get_latency and osu_get_bw with the
    window and synchronization their 4.2 source uses (MPI_Win_create, post/start/complete/
    wait), which the output itself does not say."""
    src = tmp_path / "old"
    src.mkdir()
    for name in ("get_latency", "get_bw"):
        text = (CONSTRUCTED / f"constructed_v4.2_{name}_one_sided_title.txt").read_text()
        (src / f"{name}.out").write_text(text)
    mapping = tmp_path / "mapping.yaml"
    mapping.write_text("rules:\n  - path: '.*\\.out'\n    date: 2013-11-20\n"
                       "    system: tutorial\n    partition: ib\n")
    assert main(["import-osu", str(src), "--map", str(mapping), "-o", str(tmp_path / "o"),
                 "--sizes", "8"]) == 0
    assert "imported 2 tables" in capsys.readouterr().out
    frame = load(tmp_path / "o", use_cache=False).frame
    rows = frame.filter(pl.col("perf_var").cast(pl.String).str.ends_with("_8")).sort("benchmark")
    assert rows.select("benchmark", "rma_window", "rma_sync", "osu_version").rows() == [
        ("osu_get_bw", "create", "pscw", "4.2"), ("osu_get_latency", "create", "pscw", "4.2")]
