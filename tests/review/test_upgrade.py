"""An upgrade is judged, whatever the environment is called: real mini-cluster records
re-labelled as a site's sessions (``upgrade_scenario``; labels, dates and, where the test's name
says so, the values of the upgraded session are synthetic)."""

from __future__ import annotations

import json

import polars as pl
import pytest
from upgrade_scenario import Session, write

from omb_review.cli import main
from omb_review.judge.check import EXIT_NEW_SERIES, EXIT_REGRESSION
from omb_review.read.ingest import load
from omb_review.read.lineage import without_version

OLD = Session("mod-openmpi-4_1_5")
SLOWER = {"us": 1.5, "MB/s": 0.6}  # synthetic: the upgraded library's latency x1.5, bw x0.6


def _check(tmp_path, *extra: str) -> tuple[int, dict, str]:
    out = tmp_path / "check.json"
    code = main(["check", str(tmp_path / "perflogs"), "--no-cache", "--json", str(out), *extra])
    return code, json.loads(out.read_text()), out.name


@pytest.mark.parametrize(("name", "lineage"), [
    ("mod-openmpi-4_1_5", "openmpi"), ("mod-openmpi-4_1_5-gnu", "openmpi-gnu"),
    ("openmpi-4.1.5", "openmpi"), ("PrgEnv-gnu-8.5", "PrgEnv-gnu"), ("openmpi@4.1.5", "openmpi"),
    ("openmpi_4.1.5", "openmpi"), ("spack-openmpi", "spack-openmpi"), ("gnu-ompi", "gnu-ompi"),
    ("spack-openmpi5", "spack-openmpi5"), ("4.1.5", ""),
])
def test_the_name_without_its_version(name, lineage):
    assert without_version(name) == lineage


def test_synthetic_slower_upgrade_of_a_versioned_module_fails_and_names_it(tmp_path, capsys):
    """Six sessions on mod-openmpi-4_1_5, two on mod-openmpi-4_1_6 with latency x1.5 and
    bandwidth x0.6: one lineage, so the upgrade is judged against the six."""
    write(tmp_path / "perflogs", [[OLD]] * 6 + [[Session("mod-openmpi-4_1_6", "4.1.6",
                                                         scale=SLOWER)]] * 2)
    code, result, _ = _check(tmp_path)
    printed = capsys.readouterr().out
    assert code == EXIT_REGRESSION
    found = {f["benchmark"]: f for f in result["findings"] if f["status"] == "regression"}
    assert set(found) == {"osu_latency", "osu_bw"}
    for f in found.values():
        assert f["lineage"] == "openmpi"
        assert f["software"] == "Open MPI 4.1.5 -> 4.1.6, OSU 7.3 -> 7.3"
        environ = next(c for c in f["what_changed"] if c["field"] == "environ")
        assert (environ["baseline"], environ["first_bad"]) == (["mod-openmpi-4_1_5"],
                                                               "mod-openmpi-4_1_6")
    assert "REGRESSION minicluster:alloc openmpi mpi=openmpi" in printed
    assert "Open MPI 4.1.5 -> 4.1.6, OSU 7.3 -> 7.3" in printed
    assert "changed environ: mod-openmpi-4_1_5 -> mod-openmpi-4_1_6" in printed
    assert result["counts"]["new"] == 0


def test_an_unchanged_upgrade_passes_and_says_what_was_judged(tmp_path, capsys):
    write(tmp_path / "perflogs", [[OLD]] * 6 + [[Session("mod-openmpi-4_1_6", "4.1.6")]] * 2)
    code, result, _ = _check(tmp_path)
    summary = capsys.readouterr().out.splitlines()[-1]
    assert code == 0 and result["counts"]["regression"] == 0
    assert "judged openmpi: Open MPI 4.1.5 -> 4.1.6, OSU 7.3 -> 7.3 (14 series)" in summary


def test_a_declared_series_joins_differently_named_environments(tmp_path, capsys):
    """``extras: {series: ompi}`` on both (names without a shared stem): one series."""
    write(tmp_path / "perflogs", [[Session("site-a", series="ompi")]] * 6
          + [[Session("site-b", "4.1.6", series="ompi", scale=SLOWER)]] * 2)
    code, result, _ = _check(tmp_path)
    assert code == EXIT_REGRESSION
    assert {f["lineage"] for f in result["findings"]} == {"ompi"}


def test_libraries_measured_side_by_side_stay_two_series(tmp_path, capsys):
    """openmpi-4.1.5 and openmpi-4.1.6 in the same sessions: compared, not one lineage."""
    write(tmp_path / "perflogs", [[Session("openmpi-4.1.5"), Session("openmpi-4.1.6", "4.1.6")]]
          * 4)
    ds = load(tmp_path / "perflogs", use_cache=False)
    assert set(ds.frame["lineage"].cast(pl.String)) == {"openmpi-4.1.5", "openmpi-4.1.6"}
    assert any("measured side by side" in n for n in ds.notes)


def test_a_new_library_in_the_judged_session_is_not_a_pass(tmp_path, capsys):
    """A library measured for the first time beside one with history: exit 4, the reason says
    which series, how many runs they have and need, and what to do; --allow-new accepts it."""
    mpich = Session("spack-mpich", "4.0.2", "mpich")
    write(tmp_path / "perflogs", [[OLD]] * 5 + [[OLD, mpich]])
    code, result, _ = _check(tmp_path)
    captured = capsys.readouterr()
    assert code == EXIT_NEW_SERIES and result["counts"]["new"] == 14
    assert ("NEW 14 series of spack-mpich (environment spack-mpich, MPICH 4.0.2, OSU 7.3) have no "
            "baseline: 0 baseline sessions, 3 needed") in captured.out
    assert "--series NAME" in captured.out and "--allow-new" in captured.err
    assert "judged openmpi: Open MPI 4.1.5 -> 4.1.5" in captured.out
    assert _check(tmp_path, "--allow-new")[0] == 0


def test_a_renamed_environment_is_said_and_not_a_pass(tmp_path, capsys):
    """The same library (family, MPI, OSU versions) under a new name: a note names the old one
    and how to declare the series; its series are new, so the gate does not pass."""
    write(tmp_path / "perflogs", [[Session("openmpi")]] * 6 + [[Session("ompi")]])
    code, result, _ = _check(tmp_path)
    err = capsys.readouterr().err
    assert code == EXIT_NEW_SERIES
    assert "environment 'ompi' (lineage 'ompi') began after 'openmpi'" in err
    assert "{series: openmpi}" in err
    assert any("'ompi'" in n for n in result["notes"])


def test_a_lineage_mixing_families_is_said_and_keeps_every_record(tmp_path, capsys):
    """A declared series that holds Open MPI and then MPICH, and a derived lineage that
    changes family (PrgEnv-gnu-8.5 on MPICH, PrgEnv-gnu-8.6 on Open MPI)."""
    write(tmp_path / "perflogs", [[Session("site-a", series="mpi"),
                                   Session("PrgEnv-gnu-8.5", "8.1.27", "mpich")]] * 5
          + [[Session("site-b", "4.0.2", "mpich", series="mpi"),
              Session("PrgEnv-gnu-8.6", "4.1.6", "openmpi")]])
    ds = load(tmp_path / "perflogs", use_cache=False)
    written = (tmp_path / "perflogs/minicluster/alloc/OsuPt2Pt.log").read_text().count("\n") - 1
    assert ds.frame.height == written == 6 * 2 * 3 * 14  # nothing dropped
    mixed = [n for n in ds.notes if "holds MPI families mpich and openmpi" in n]
    assert len(mixed) == 2 and any("lineage 'mpi'" in n for n in mixed)
    assert any("lineage 'PrgEnv-gnu'" in n for n in mixed)
    series = ds.frame.group_by("lineage", "mpi_family").len()
    assert series.height == 4  # each family its own series
    code, result, _ = _check(tmp_path)
    assert code == EXIT_NEW_SERIES and result["counts"]["new"] == 28


def test_environments_declared_one_series_but_run_side_by_side_are_said(tmp_path):
    write(tmp_path / "perflogs", [[Session("site-a", series="ompi"),
                                   Session("site-b", "4.1.6", series="ompi")]] * 2)
    notes = load(tmp_path / "perflogs", use_cache=False).notes
    assert any("environments declared as series 'ompi' were measured side by side" in n
               for n in notes)


def test_a_declaration_holds_for_the_environments_earlier_records(tmp_path, capsys):
    """site-a declared its series only in its last session: its five earlier records (no
    declaration, as an older perflog) are the same series, so site-b's slower upgrade is
    judged against all six sessions (synthetic x1.5/x0.6)."""
    write(tmp_path / "perflogs", [[Session("site-a")]] * 5 + [[Session("site-a", series="ompi")]]
          + [[Session("site-b", "4.1.6", series="ompi", scale=SLOWER)]] * 2)
    code, result, _ = _check(tmp_path)
    assert code == EXIT_REGRESSION
    assert {s["lineage"] for s in result["series"]} == {"ompi"}
    assert all(s["n_baseline"] >= 3 for s in result["series"])  # site-a's earlier sessions


def test_sessions_of_another_mode_are_not_compared_and_it_is_said(tmp_path, capsys):
    """Before logged -i 2000 (the nightly mode), after -i 10000 (the upgrade mode; synthetic
    labels): unlike runs are not compared, whatever their values, and the gate says which
    counts each side ran and what to run; exit 3, not a pass and not a regression."""
    write(tmp_path / "perflogs", [[Session("mod-openmpi-4_1_5", iterations="2000")]] * 6
          + [[Session("mod-openmpi-4_1_6", "4.1.6", scale=SLOWER, iterations="10000")]] * 2)
    code, result, _ = _check(tmp_path)
    assert code == 3 and result["counts"]["regression"] == 0
    out = capsys.readouterr().out
    assert ("the judged sessions ran OSU with -i/-x 10000/default and 0 baseline sessions did, "
            "3 needed (6 ran 2000/default): a session of another mode or count is not "
            "compared; run the judged mode 3 times, or judge with the mode of the history") in out
    write(tmp_path / "perflogs", [[Session("mod-openmpi-4_1_5", iterations="2000")]] * 6
          + [[Session("mod-openmpi-4_1_6", "4.1.6", scale=SLOWER, iterations="2000")]] * 2)
    assert _check(tmp_path)[0] == EXIT_REGRESSION


def test_successive_versions_stay_one_lineage_beside_two_compared_side_by_side(tmp_path):
    """4.1.4 then 4.1.5 (an upgrade), then 4.1.6 and 5.0.5 compared in the same sessions: the
    first two are openmpi, the two compared keep their names."""
    write(tmp_path / "perflogs", [[Session("openmpi-4.1.4", "4.1.4")]] * 2
          + [[Session("openmpi-4.1.5")]] * 2
          + [[Session("openmpi-4.1.6", "4.1.6"), Session("openmpi-5.0.5", "5.0.5")]] * 2,
          repeat=2)
    ds = load(tmp_path / "perflogs", use_cache=False)
    pairs = set(ds.frame.select(pl.col("environ", "lineage").cast(pl.String)).unique().rows())
    assert pairs == {("openmpi-4.1.4", "openmpi"), ("openmpi-4.1.5", "openmpi"),
                     ("openmpi-4.1.6", "openmpi-4.1.6"), ("openmpi-5.0.5", "openmpi-5.0.5")}
    assert any("environments openmpi-4.1.6, openmpi-5.0.5 were measured side by side" in n
               for n in ds.notes)
