"""Evidence that a forced collective algorithm was in effect, read from real runs.

Files under tests/data/evidence/ are real outputs (first line: the command) of OSU 7.4 runs
on Debian Open MPI 4.1.4 and MPICH 4.0.2.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from omb_suite.mpi import evidence as ev

EVIDENCE = Path(__file__).parents[1] / "data" / "evidence"


def evidence(name: str) -> str:
    return (EVIDENCE / name).read_text()


# ---------------------------------------------------------------- evidence


def test_openmpi_evidence_parser_on_forced_run():
    served = ev.parse_openmpi_coll_evidence(evidence("ompi_bcast_binary_tree.txt"))
    assert served["bcast"] == "tuned"
    assert served["gatherv"] == "basic"  # tuned has no gatherv
    assert served["ibcast"] == "libnbc"


def test_openmpi_evidence_forced_tuned_and_libnbc():
    assert ev.check_evidence("openmpi", "bcast", "binary_tree",
                              evidence("ompi_bcast_binary_tree.txt")) == "tuned:bcast:binary_tree"
    assert ev.check_evidence("openmpi", "ibcast", "binomial",
                              evidence("ompi_ibcast_libnbc_binomial.txt")) == (
        "libnbc:ibcast:binomial")
    assert ev.check_evidence("openmpi", "allgatherv", "basic_default",
                              evidence("ompi_allgatherv_basic_default.txt")) == (
        "tuned:allgatherv:basic_default")


def test_openmpi_evidence_default_records_the_serving_component():
    assert ev.check_evidence("openmpi", "bcast", "default",
                              evidence("ompi_bcast_default.txt")) == "tuned:bcast:default"


def test_openmpi_evidence_takeover_by_higher_priority_component_fails():
    with pytest.raises(ev.EvidenceError, match="served by coll component 'adapt', not 'tuned'"):
        ev.check_evidence("openmpi", "bcast", "binary_tree",
                           evidence("ompi_bcast_adapt_takeover.txt"))


def test_openmpi_evidence_rejected_value_fails():
    with pytest.raises(ev.EvidenceError, match="coll_tuned_bcast_algorithm=ignore, not binary"):
        ev.check_evidence("openmpi", "bcast", "binary_tree",
                           evidence("ompi_bcast_invalid_value.txt"))


def test_openmpi_evidence_missing_output_fails():
    osu_only = evidence("ompi_bcast_binary_tree.txt").split("\n# OSU", 1)[1]
    with pytest.raises(ev.EvidenceError, match="no coll selection"):
        ev.check_evidence("openmpi", "bcast", "binary_tree", osu_only)


def test_mpich_evidence():
    assert ev.check_evidence("mpich", "bcast", "binomial",
                              evidence("mpich_bcast_binomial.txt")) == "mpir:bcast:binomial"
    assert ev.check_evidence("mpich", "ibcast", "tsp_tree",
                              evidence("mpich_ibcast_tsp_tree.txt")) == "mpir:ibcast:tsp_tree"
    with pytest.raises(ev.EvidenceError, match="could not apply bcast algorithm 'smp'"):
        ev.check_evidence("mpich", "bcast", "smp", evidence("mpich_bcast_smp_not_applicable.txt"))
    with pytest.raises(ev.EvidenceError, match="rejected MPIR_CVAR_BCAST_INTRA_ALGORITHM"):
        ev.check_evidence("mpich", "bcast", "no_such_algorithm",
                           evidence("mpich_bcast_bogus.txt"))


def test_mpich_evidence_other_abort_fails():
    with pytest.raises(ev.EvidenceError, match="aborted in internal_Allreduce"):
        ev.check_evidence("mpich", "allreduce", "smp",
                           evidence("mpich_allreduce_smp_abort.txt"))


def test_a_verbose_proof_reads_the_familys_own_table_or_refuses():
    """Spectrum MPI's proof reads Open MPI-style verbose output, but its record names no table
    of its components: its own table is read, never Open MPI's."""
    with pytest.raises(ev.EvidenceError, match=r"spectrum-mpi: its proof \(coll_verbose\) .* "
                                               r"data/families/spectrum-mpi\.yaml names none"):
        ev.check_evidence("spectrum-mpi", "bcast", "default",
                          evidence("ompi_bcast_binary_tree.txt"))
