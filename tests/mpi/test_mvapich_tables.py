"""The MVAPICH2 and MVAPICH algorithm tables against facts read from the libraries' sources.

tests/data/mvapich2/source_facts_2.3.7.yaml: per collective of MVAPICH2 2.3.7, the variable, the
values its MV2_*_is_define() switch knows and the function each runs, #if guards, the value of
the default branch, the indexed-path variable and the MPI_T call counters.
tests/data/mvapich/mpir_cvars_4.0_algorithms.yaml: the names each MPIR_CVAR_<COLL>_INTRA_ALGORITHM
of MVAPICH 4.0 accepts. Both headers say where each fact was read.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from omb_suite.mpi import algorithms as alg
from omb_suite.mpi import mpilib

DATA = Path(__file__).parents[1] / "data"
MV2_FACTS = yaml.safe_load((DATA / "mvapich2" / "source_facts_2.3.7.yaml").read_text())
MVAPICH_FACTS = yaml.safe_load((DATA / "mvapich" / "mpir_cvars_4.0_algorithms.yaml").read_text())
MV2_BLOCK = next(b for b in alg.load_table("mvapich2")["blocks"] if mpilib.version_in("2.3.7",
                                                                                   b["versions"]))
#: What a source #if guard around a switch case means in the table's `needs`.
GUARD_NEEDS = {"_MCST_SUPPORT_": "mcast", "CHANNEL_MRAIL_GEN2": "mrail"}


def _entry(collective: str) -> dict:
    return MV2_BLOCK["collectives"][collective]


def test_mvapich2_table_covers_every_collective_the_sources_tune():
    assert set(MV2_BLOCK["collectives"]) == set(MV2_FACTS)


@pytest.mark.parametrize("collective", sorted(MV2_FACTS))
def test_mvapich2_variable_and_indexed_companion(collective):
    facts, entry = MV2_FACTS[collective], _entry(collective)
    assert entry["variable"] == facts["variable"]
    indexed = facts["indexed_variable"]
    assert (entry["env"] == {indexed: 1}) if indexed else (entry["env"] == {})


@pytest.mark.parametrize("collective", sorted(MV2_FACTS))
def test_mvapich2_values_are_exactly_the_switch_cases(collective):
    """No value that silently falls back to the default, none of the switch left out unsaid."""
    facts, entry = MV2_FACTS[collective], _entry(collective)
    values = {spec["value"] for spec in entry["algorithms"].values()}
    assert values <= set(facts["cases"]), "a value the switch does not know runs the default"
    missing = set(facts["cases"]) - values - set(entry.get("omitted", {}))
    assert not missing, f"switch cases neither in the table nor omitted with a reason: {missing}"


@pytest.mark.parametrize("collective", sorted(MV2_FACTS))
def test_mvapich2_guarded_cases_are_marked_with_needs(collective):
    facts, entry = MV2_FACTS[collective], _entry(collective)
    for name, spec in entry["algorithms"].items():
        guard = facts["guards"].get(spec["value"])
        if guard:
            assert GUARD_NEEDS[guard] in spec.get("needs", []), (name, guard)


@pytest.mark.parametrize("collective", sorted(MV2_FACTS))
def test_mvapich2_fallback_is_the_switch_default(collective):
    facts, entry = MV2_FACTS[collective], _entry(collective)
    value = entry["algorithms"][entry["fallback"]]["value"]
    assert facts["cases"][value] == facts["default"]


@pytest.mark.parametrize("collective", sorted(MV2_FACTS))
def test_mvapich2_counters_are_the_registered_ones(collective):
    assert _entry(collective)["counters"] == MV2_FACTS[collective]["counters"]


def test_mvapich2_bcast_zero_copy_and_allreduce_ring_are_in_the_table():
    """What the documentation-based table missed (issue 15)."""
    assert "pipelined_zcpy" in alg.algorithms("mvapich2", "2.3.7", "bcast")
    choice = alg.choose("mvapich2", "2.3.7", "allreduce", "ring")
    assert choice.env_vars["MV2_USE_INDEXED_ALLREDUCE_TUNING"] == "1"


@pytest.mark.parametrize("collective", sorted(alg.load_table("mvapich")["blocks"][0]
                                              ["collectives"]))
def test_mvapich4_names_are_exactly_what_mpir_cvars_accepts(collective):
    assert alg.algorithms("mvapich", "4.0", collective)[1:] == MVAPICH_FACTS[collective]


def test_mvapich4_has_no_mvapich_plus_names():
    names = {n for c in alg.load_table("mvapich")["blocks"][0]["collectives"]
             for n in alg.algorithms("mvapich", "4.0", c)}
    assert not names & {"osu_gpu_compression", "osu_rd_compression", "osu_rsa_ring_compression",
                        "osu_ring_compression"}
    assert {"mvapich_tuned", "osu_mcast", "osu_sharp", "recursive_multiplying"} <= set(
        alg.algorithms("mvapich", "4.0", "allreduce"))
