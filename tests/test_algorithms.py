"""Tests of the collective algorithm tables, the forcing environment and the evidence checks.

Evidence files under tests/data/evidence/ are real outputs (first line: the command) of OSU 7.4
runs on Debian Open MPI 4.1.4 and MPICH 4.0.2, and of ompi_info / mpivars there.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from omb_suite import algorithms as alg
from omb_suite import evidence as evidence_mod

EVIDENCE = Path(__file__).parent / "data" / "evidence"
DATA = Path(alg.__file__).parent / "data" / "algorithms"
OSU_COLLECTIVES = ["allgather", "allgatherv", "allreduce", "alltoall", "alltoallv", "barrier",
                   "bcast", "gather", "gatherv", "reduce", "reduce_scatter", "scatter",
                   "scatterv", "iallgather", "iallreduce", "ialltoall", "ibarrier", "ibcast",
                   "igather", "ireduce", "iscatter"]


def evidence(name: str) -> str:
    return (EVIDENCE / name).read_text()


# ---------------------------------------------------------------- data files


@pytest.mark.parametrize("family", alg.FAMILIES)
def test_data_file_parses_and_validates(family):
    raw = yaml.safe_load((DATA / f"{family}.yaml").read_text())
    assert raw["family"] == family
    alg.load_table(family)  # schema check: raises on duplicates, bad ranges, 'default' names


@pytest.mark.parametrize(("family", "version"), [("openmpi", "4.1.4"), ("openmpi", "5.0.3"),
                                                 ("mpich", "4.0.2"), ("mpich", "4.3.0"),
                                                 ("mvapich", "4.0")])
def test_every_osu_collective_has_a_table_with_default_first(family, version):
    for collective in OSU_COLLECTIVES:
        names = alg.algorithms(family, version, collective)
        assert names[0] == "default"
        assert "default" not in names[1:]


def test_no_algorithm_is_a_bare_number():
    for family in alg.FAMILIES:
        for block in alg.load_table(family)["blocks"]:
            for collective in block["collectives"]:
                lowest = re.search(r">=([\d.]+)", block["versions"]).group(1)
                for name in alg.algorithms(family, lowest, collective)[1:]:
                    assert not name.isdigit(), (family, collective, name)


# ---------------------------------------------------------------- versions


@pytest.mark.parametrize(("version", "spec", "inside"), [
    ("4.1.4", ">=4.1,<5", True), ("5.0.0rc1", ">=4.1,<5", False), ("4.0.7", ">=4.1,<5", False),
    ("5", ">=5.0,<5.1", True), ("4.0", ">=4.0,<4.1", True), ("4.0.2-1", ">=4.0,<4.1", True),
])
def test_version_ranges(version, spec, inside):
    assert alg.version_in(version, spec) is inside


def test_unreadable_version_and_uncovered_version_are_clear_errors():
    with pytest.raises(alg.AlgorithmError, match="cannot read an MPI version"):
        alg.algorithms("openmpi", "trunk", "bcast")
    with pytest.raises(alg.AlgorithmError, match=r"no Open MPI algorithm table covers "
                                                 r"version 3\.1\.6 \(tables: >=4\.1,<5"):
        alg.algorithms("openmpi", "3.1.6", "bcast")


def test_version_blocks_differ_where_the_library_changed():
    assert "sparbit" not in alg.algorithms("openmpi", "4.1.4", "allgather")
    assert "sparbit" in alg.algorithms("openmpi", "5.0.3", "allgather")
    assert "k_brucks" not in alg.algorithms("mpich", "4.0.2", "allgather")
    assert "k_brucks" in alg.algorithms("mpich", "4.1.2", "allgather")


# ---------------------------------------------------------------- choose


def test_openmpi_bcast_binary_tree_env():
    choice = alg.choose("openmpi", "4.1.4", "bcast", "binary_tree")
    assert choice.env_vars == {
        "OMPI_MCA_coll": "^han,hcoll,ucc,xhc,acoll,adapt,sm,portals4,fca",
        "OMPI_MCA_coll_tuned_use_dynamic_rules": "1",
        "OMPI_MCA_coll_tuned_bcast_algorithm": "5",
    }
    assert choice.library_id == "5"
    assert choice.evidence_env == {"OMPI_MCA_coll_base_verbose": "9",
                                   "OMPI_MCA_mpi_show_mca_params": "enviro"}


def test_openmpi_nonblocking_uses_libnbc_without_dynamic_rules():
    choice = alg.choose("openmpi", "4.1.4", "ibcast", "knomial")
    assert choice.env_vars["OMPI_MCA_coll_libnbc_ibcast_algorithm"] == "4"
    assert "OMPI_MCA_coll_tuned_use_dynamic_rules" not in choice.env_vars


def test_openmpi_allgatherv_library_default_is_renamed():
    choice = alg.choose("openmpi", "4.1.4", "allgatherv", "basic_default")
    assert choice.env_vars["OMPI_MCA_coll_tuned_allgatherv_algorithm"] == "1"
    assert alg.library_name("openmpi", "allgatherv", "basic_default", "4.1.4") == "default"


def test_mpich_bcast_binomial_env():
    choice = alg.choose("mpich", "4.0.2", "bcast", "binomial")
    assert choice.env_vars == {"MPIR_CVAR_BCAST_INTRA_ALGORITHM": "binomial",
                               "MPIR_CVAR_DEVICE_COLLECTIVES": "none",
                               "MPIR_CVAR_COLLECTIVE_FALLBACK": "error"}
    assert choice.evidence_env == {}


def test_mvapich2_bcast_env_with_indexed_path_and_reader_pattern():
    choice = alg.choose("mvapich2", "2.3.7", "bcast", "knomial_inter_node")
    assert choice.env_vars == {"MV2_INTER_BCAST_TUNING": "8", "MV2_USE_INDEXED_BCAST_TUNING": "1"}
    assert choice.evidence_env == {"OMB_MPIT_MATCH": "^mv2_coll_"}


def test_mvapich2_companion_variables_of_one_algorithm():
    choice = alg.choose("mvapich2", "2.3.7", "allreduce", "two_level_p2p")
    assert choice.env_vars == {"MV2_INTER_ALLREDUCE_TUNING": "1",
                               "MV2_USE_INDEXED_ALLREDUCE_TUNING": "1",
                               "MV2_INTER_ALLREDUCE_TUNING_TWO_LEVEL": "1",
                               "MV2_INTRA_ALLREDUCE_TUNING": "6"}


def test_needs_filter_what_a_build_cannot_run():
    everything = alg.algorithms("mvapich2", "2.3.7", "scatter")
    mrail_only = alg.algorithms("mvapich2", "2.3.7", "scatter", features=frozenset({"mrail"}))
    assert set(everything) - set(mrail_only) == {"mcast"}
    reason = alg.unmet_needs("mvapich2", "2.3.7", "bcast", "pipelined_zcpy", frozenset())
    assert reason.startswith("MVAPICH2 2.3.7: bcast algorithm 'pipelined_zcpy' needs")
    assert "mrail: the ch3:mrail channel" in reason
    assert alg.unmet_needs("mvapich2", "2.3.7", "bcast", "pipelined_zcpy",
                           frozenset({"mrail"})) is None
    assert alg.unmet_needs("mvapich2", "2.3.7", "bcast", "default", frozenset()) is None


@pytest.mark.parametrize("family", ["openmpi", "mpich"])
def test_default_sets_nothing(family):
    assert alg.choose(family, "4.1.4" if family == "openmpi" else "4.0.2", "bcast",
                      "default").env_vars == {}


def test_unknown_algorithm_message_names_everything():
    with pytest.raises(alg.UnknownAlgorithmError) as err:
        alg.choose("openmpi", "4.1.4", "bcast", "5")
    text = str(err.value)
    assert "Open MPI 4.1.4 has no bcast algorithm '5'" in text
    assert "valid: default, basic_linear, chain" in text
    assert "data/algorithms/openmpi.yaml" in text


def test_unknown_collective_and_family():
    with pytest.raises(alg.AlgorithmError, match="unknown collective 'bcastt'"):
        alg.choose("mpich", "4.0.2", "bcastt", "binomial")
    with pytest.raises(alg.AlgorithmError, match="unknown MPI family 'intelmpi'"):
        alg.algorithms("intelmpi", "2021", "bcast")


# ---------------------------------------------------------------- installed library (parsers)


def _without_command(name: str) -> str:
    return evidence(name).split("\n", 1)[1]


def test_ompi_info_parser_on_captured_output():
    found = alg.parse_ompi_info(_without_command("ompi_info_coll_all_level9.txt"))
    assert found["bcast"][4] == "binary_tree"
    assert found["ibcast"] == ["linear", "binomial", "chain", "knomial"]
    assert "ignore" not in found["bcast"]


def test_mpivars_parser_separates_glued_names():
    found = alg.parse_mpivars(_without_command("mpich_mpivars.txt"))
    assert found["bcast"] == ["binomial", "nb", "smp", "scatter_recursive_doubling_allgather",
                              "scatter_ring_allgather"]
    assert "bcast_posix" not in found  # device-level knob, not an MPIR algorithm
    # iscan is not in our tables: its new name is reported, not swallowed
    assert found["iscan"][-1] == "?algorithmtsp_recursive_doubling"


def _assert_table_matches(family: str, version: str, installed: dict[str, list[str]]) -> None:
    assert installed, f"no {family} algorithms read from the installed library"
    for collective in alg.load_table(family)["blocks"][0]["collectives"]:
        ours = [alg.library_name(family, collective, n, version)
                for n in alg.algorithms(family, version, collective)[1:]]
        assert sorted(ours) == sorted(installed.get(collective, [])), collective


def test_captured_ompi_info_matches_openmpi_4_1_table():
    installed = alg.parse_ompi_info(_without_command("ompi_info_coll_all_level9.txt"))
    _assert_table_matches("openmpi", "4.1.4", installed)


def test_captured_mpivars_matches_mpich_4_0_table():
    _assert_table_matches("mpich", "4.0.2",
                          alg.parse_mpivars(_without_command("mpich_mpivars.txt")))


def test_unsupported_reason_names_library_and_version():
    installed = alg.parse_ompi_info(_without_command("ompi_info_coll_all_level9.txt"))
    assert alg.unsupported_reason("openmpi", "5.0.3", "bcast", "knomial", installed) is None
    reason = alg.unsupported_reason("openmpi", "5.0.3", "allgather", "sparbit", installed)
    assert reason.startswith("Open MPI 5.0.3 (installed) has no allgather algorithm 'sparbit'")


def test_mvapich2_has_no_listing_tool():
    with pytest.raises(alg.AlgorithmError, match="no tool that lists"):
        alg.installed_algorithms("mvapich2")


# ---------------------------------------------------------------- installed library (live)


def _installed_version(command: list[str], pattern: str) -> str:
    out = subprocess.run(command, capture_output=True, text=True, check=False).stdout
    return re.search(pattern, out).group(1)


def test_table_matches_installed_open_mpi():
    if shutil.which("ompi_info") is None:
        pytest.skip("ompi_info not on PATH: cannot check the Open MPI table")
    version = _installed_version(["ompi_info", "--version"], r"Open MPI v(\S+)")
    _assert_table_matches("openmpi", version, alg.installed_algorithms("openmpi"))


def test_table_matches_installed_mpich():
    if shutil.which("mpivars") is None or shutil.which("mpichversion") is None:
        pytest.skip("mpivars/mpichversion not on PATH: cannot check the MPICH table")
    version = _installed_version(["mpichversion"], r"MPICH Version:\s*(\S+)")
    _assert_table_matches("mpich", version, alg.installed_algorithms("mpich"))


# ---------------------------------------------------------------- evidence


def test_openmpi_evidence_parser_on_forced_run():
    served = evidence_mod.parse_openmpi_coll_evidence(evidence("ompi_bcast_binary_tree.txt"))
    assert served["bcast"] == "tuned"
    assert served["gatherv"] == "basic"  # tuned has no gatherv
    assert served["ibcast"] == "libnbc"


def test_openmpi_evidence_forced_tuned_and_libnbc():
    assert alg.check_evidence("openmpi", "bcast", "binary_tree",
                              evidence("ompi_bcast_binary_tree.txt")) == "tuned:bcast:binary_tree"
    assert alg.check_evidence("openmpi", "ibcast", "binomial",
                              evidence("ompi_ibcast_libnbc_binomial.txt")) == (
        "libnbc:ibcast:binomial")
    assert alg.check_evidence("openmpi", "allgatherv", "basic_default",
                              evidence("ompi_allgatherv_basic_default.txt")) == (
        "tuned:allgatherv:basic_default")


def test_openmpi_evidence_default_records_the_serving_component():
    assert alg.check_evidence("openmpi", "bcast", "default",
                              evidence("ompi_bcast_default.txt")) == "tuned:bcast:default"


def test_openmpi_evidence_takeover_by_higher_priority_component_fails():
    with pytest.raises(alg.EvidenceError, match="served by coll component 'adapt', not 'tuned'"):
        alg.check_evidence("openmpi", "bcast", "binary_tree",
                           evidence("ompi_bcast_adapt_takeover.txt"))


def test_openmpi_evidence_rejected_value_fails():
    with pytest.raises(alg.EvidenceError, match="coll_tuned_bcast_algorithm=ignore, not binary"):
        alg.check_evidence("openmpi", "bcast", "binary_tree",
                           evidence("ompi_bcast_invalid_value.txt"))


def test_openmpi_evidence_missing_output_fails():
    osu_only = evidence("ompi_bcast_binary_tree.txt").split("\n# OSU", 1)[1]
    with pytest.raises(alg.EvidenceError, match="no coll selection"):
        alg.check_evidence("openmpi", "bcast", "binary_tree", osu_only)


def test_mpich_evidence():
    assert alg.check_evidence("mpich", "bcast", "binomial",
                              evidence("mpich_bcast_binomial.txt")) == "mpir:bcast:binomial"
    assert alg.check_evidence("mpich", "ibcast", "tsp_tree",
                              evidence("mpich_ibcast_tsp_tree.txt")) == "mpir:ibcast:tsp_tree"
    with pytest.raises(alg.EvidenceError, match="could not apply bcast algorithm 'smp'"):
        alg.check_evidence("mpich", "bcast", "smp", evidence("mpich_bcast_smp_not_applicable.txt"))
    with pytest.raises(alg.EvidenceError, match="rejected MPIR_CVAR_BCAST_INTRA_ALGORITHM"):
        alg.check_evidence("mpich", "bcast", "no_such_algorithm",
                           evidence("mpich_bcast_bogus.txt"))


def test_mpich_evidence_other_abort_fails():
    with pytest.raises(alg.EvidenceError, match="aborted in internal_Allreduce"):
        alg.check_evidence("mpich", "allreduce", "smp",
                           evidence("mpich_allreduce_smp_abort.txt"))
