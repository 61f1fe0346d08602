"""Record faults that once passed load and failed far away, each now refused when its record
is read, naming the file and the key, with the other records still loading (synthetic: each
writes the faulty record into a copy of data/ in a temporary directory).

A derives_from loop (was: found building the recognition order, ~20 tests of every family),
an algorithm number that is a name (was: OMPI_MCA_coll_tuned_bcast_algorithm=six in the job),
an unknown tuning.kind (was: found writing a tuning file), a second family record for one
library (was: passed unless one text matched both). The fifth, a second launcher dialect
record naming one launcher: tests/mpi/test_dialects.py.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from testdata import DATA, REPO

from omb_suite.mpi import algorithms as alg
from omb_suite.mpi import families, forcing, tables
from omb_suite.tuning import files as tuning_files

RECORDS = REPO / "src" / "omb_suite" / "data" / "families"
TABLES = REPO / "src" / "omb_suite" / "data" / "algorithms"
MPI5 = DATA / "mpi5"
CACHED = (families.names, families.get, families._raw, families.usable, families.precedence,
          alg.with_tables, alg.load_table, alg.offered_by)
Edit = Callable[[Path, Path], None]


@pytest.fixture
def data_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Edit], None]]:
    """Copies of the family records and algorithm tables, loaded in place of the real ones;
    calling it applies an edit ``(records, tables)`` to the copies."""
    records, copied = tmp_path / "families", tmp_path / "algorithms"
    shutil.copytree(RECORDS, records)
    shutil.copytree(TABLES, copied)
    monkeypatch.setattr(families, "_directory", lambda: records)
    monkeypatch.setattr(alg, "_folder", lambda: copied)

    def edit(change: Edit) -> None:
        change(records, copied)
        for function in CACHED:
            function.cache_clear()
    yield edit
    for function in CACHED:
        function.cache_clear()


def _replace(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


def _others_still_load(left_out: set[str]) -> None:
    """Every family but ``left_out`` loads; recognition, forcing and tables still work."""
    assert set(families.usable()) == set(families.names()) - left_out
    assert families.precedence()
    text = (MPI5 / "mpich5_libver.txt").read_text()
    if "mpich" not in left_out:
        assert families.from_library_version(text) == ("mpich", "5.0.2")
        assert alg.choose("mpich", "5.0.2", "bcast", "binomial").env_vars


def test_a_derives_from_loop_fails_the_records_of_the_loop_only(data_copy):
    """MPICH made to derive from MVAPICH, which derives from MPICH: the two records of the
    loop are refused naming the chain; Intel MPI, Cray MPICH and MVAPICH2, which derive from
    MPICH without being in the loop, still load (they used to fail with it)."""
    data_copy(lambda records, _: _replace(records / "mpich.yaml", "derives_from: null",
                                          "derives_from: mvapich"))
    with pytest.warns(UserWarning) as caught:
        usable = families.usable()
    said = "\n".join(str(w.message) for w in caught)
    assert "data/families/mpich.yaml: derives_from: a cycle, mpich -> mvapich -> mpich" in said
    assert "data/families/mvapich.yaml: derives_from: a cycle, mvapich -> mpich -> mvapich" \
        in said
    assert {"intel-mpi", "cray-mpich", "mvapich2", "openmpi"} <= set(usable)
    _others_still_load({"mpich", "mvapich"})
    assert families.based_on("intel-mpi") == ("mpich",)
    assert families.from_library_version((MPI5 / "impi_libver.txt").read_text())[0] == "intel-mpi"
    with pytest.raises(families.FamilyError, match=r"^data/families/mpich\.yaml: derives_from: "
                                                   r"a cycle"):
        families.get("mpich")


def test_an_algorithm_number_that_is_a_name_fails_its_own_table_only(data_copy):
    """Open MPI's ``binomial: 6`` written ``binomial: six``: refused when the table is read
    (it reached the job as OMPI_MCA_coll_tuned_bcast_algorithm=six, and the tuning writer's
    bare ValueError); the table is left out of what looks across families, MPICH's forces."""
    data_copy(lambda _, copied: _replace(copied / "openmpi.yaml", "binomial: 6,", "binomial: six,"))
    message = (r"data/algorithms/openmpi\.yaml: blocks\[0\]\.collectives\.bcast\.algorithms"
               r"\.binomial: expected a whole number >= 0, got 'six'")
    with pytest.warns(UserWarning, match=message + r".*table of openmpi is left out"):
        assert "openmpi" not in alg.with_tables() and "mpich" in alg.with_tables()
    with pytest.raises(alg.AlgorithmError, match=message):
        alg.choose("openmpi", "4.1.4", "bcast", "binomial")
    # the tuning writer reads the same table (it met a bare ValueError of int('six'))
    assert re.search(message, tuning_files.unwritable("openmpi", "4.1.4", "bcast", "binomial"))
    _others_still_load(set())
    assert "openmpi" not in alg.offered_by("bcast")["binomial"]


@pytest.mark.parametrize(("old", "new", "key"), [
    ("bcast: [binomial,", "bcast: [3, binomial,", r"bcast\[0\]: expected a non-empty string"),
    ('versions: ">=4.0,<4.1"', 'versions: "=>4.0"', r"versions: "),
])
def test_a_malformed_mpich_table_is_refused_naming_file_and_key(data_copy, old, new, key):
    data_copy(lambda _, copied: _replace(copied / "mpich.yaml", old, new))
    with pytest.raises(alg.AlgorithmError, match=rf"^data/algorithms/mpich\.yaml: blocks\[\d\]"
                                                 rf"\.(collectives\.)?{key}"):
        alg.load_table("mpich")
    with pytest.warns(UserWarning, match=r"mpich\.yaml.*table of mpich is left out"):
        assert set(alg.with_tables()) == {"intel-mpi", "mvapich", "mvapich2", "openmpi"}


def test_every_forcing_kind_has_a_table_layout():
    assert set(tables.ENTRIES) == set(forcing.KINDS)


def test_an_unknown_tuning_kind_fails_its_own_family_only(data_copy):
    """Open MPI's ``tuning.kind: ompi_rulez``: refused when the record is read (it was found
    only writing a tuning file); MPICH's tuning file is still written."""
    data_copy(lambda records, _: _replace(records / "openmpi.yaml", "kind: ompi_rules",
                                          "kind: ompi_rulez"))
    with pytest.warns(UserWarning, match=r"data/families/openmpi\.yaml: tuning\.kind: expected "
                                         r"one of 'ompi_rules', 'mpich_json', 'impi_adjust' or "
                                         r"null, got 'ompi_rulez'"):
        usable = families.usable()
    assert "openmpi" not in usable and "spectrum-mpi" in usable
    _others_still_load({"openmpi"})
    assert tuning_files.support("mpich", "4.1.2") is None
    with pytest.raises(families.FamilyError, match=r"openmpi\.yaml: tuning\.kind"):
        tuning_files.support("openmpi", "4.1.4")


def _fork(records: Path, name: str, base: str, **changes: tuple[str, str]) -> None:
    """A new record ``name``: a copy of ``base``'s with its own names and ``changes``."""
    text = (records / f"{base}.yaml").read_text().replace(f"family: {base}", f"family: {name}")
    for old, new in changes.values():
        assert old in text, old
        text = text.replace(old, new)
    (records / f"{name}.yaml").write_text(text)


def test_one_library_under_a_second_family_name_is_refused_naming_both(data_copy):
    """A new record ``ompi-fork`` copied from Open MPI's, with its own module and Spack
    names: the same library and patterns (it passed unless one text matched both). It is
    refused; Open MPI, named after the library, keeps it and is still recognised."""
    data_copy(lambda records, _: _fork(
        records, "ompi-fork", "openmpi",
        modules=("modules: [openmpi, ompi]", "modules: [ompi-fork]"),
        spack=("spack: [openmpi]", "spack: [ompi-fork]")))
    with pytest.warns(UserWarning, match=r"data/families/ompi-fork\.yaml: library: 'Open MPI' "
                                         r"also in data/families/openmpi\.yaml: one library, "
                                         r"one family record"):
        usable = families.usable()
    assert "ompi-fork" not in usable and "openmpi" in usable
    _others_still_load({"ompi-fork"})
    text = (MPI5 / "ompi5_libver.txt").read_text()
    assert families.from_library_version(text)[0] == "openmpi"


def test_a_recognition_pattern_copied_from_another_family_is_refused_in_the_copy(data_copy):
    """MVAPICH2's record given MPICH's ``tool_output``: MVAPICH2 is refused (the pattern names
    MPICH), MPICH is not."""
    data_copy(lambda records, _: _replace(records / "mvapich2.yaml", "tool_output: 'MVAPICH2'",
                                          "tool_output: '^MPICH Version:'"))
    with pytest.warns(UserWarning, match=r"data/families/mvapich2\.yaml: recognise\.tool_output: "
                                         r"'\^MPICH Version:' also in data/families/mpich\.yaml"):
        families.usable()
    _others_still_load({"mvapich2"})
