"""The MPI_T reader's output, the MVAPICH2 evidence judged from it, and ``mpiname -a``.

Files under tests/data/mvapich2/ are real outputs (first line: the command) of OSU 7.4 on
MVAPICH2 2.3.7 (ch3:mrail, one node) with our reader (src/omb_suite/job_sources/mpit_reader.c)
loaded, every variable set by ``algorithms.choose``; and of the reader on Debian MPICH 4.0.2 and
Open MPI 4.1.4, which expose no collective counters. See tests/data/mvapich2/README.md.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from omb_suite.machine import probe
from omb_suite.mpi import algorithms as alg
from omb_suite.mpi import evidence as ev
from omb_suite.mpi import mpit, mvapich2

DATA = Path(__file__).parents[1] / "data" / "mvapich2"


def run(name: str) -> str:
    return (DATA / name).read_text()


def evidence(collective: str, name: str, output: str) -> str:
    return ev.check_evidence("mvapich2", collective, name, output, version="2.3.7")


# ---------------------------------------------------------------- reading


def test_counters_are_summed_over_ranks():
    counters = mpit.parse_counters(run("bcast_pipelined_zcpy_np2.txt"))
    assert (counters.ranks, counters.pvars, counters.matched) == (2, 1042, 849)
    assert counters.totals["mv2_coll_bcast_pipelined_zcpy"] == 2 * 475  # 19 sizes x 25 calls
    assert counters.totals["mv2_coll_barrier_pairwise"] == 494  # rank 0 only


def test_no_reader_output_is_an_error_not_no_evidence():
    """A run that died in MPI_Init (here: the 2.3.7 reduce_scatter segfault) printed nothing."""
    with pytest.raises(alg.EvidenceError, match="the MPI_T reader printed nothing"):
        evidence("reduce_scatter", "basic",
                 run("reduce_scatter_basic_without_reduce_tuning_np2.txt"))


def test_synthetic_cut_output_names_the_missing_rank():
    text = run("bcast_pipelined_zcpy_np2.txt")
    cut = text[:text.index("MPIT done rank=1")]
    with pytest.raises(mpit.MpitError, match=r"no 'MPIT done' line for ranks \[1\] of 2"):
        mpit.parse_counters(cut)


# ---------------------------------------------------------------- judging (MVAPICH2)


def test_forced_algorithm_proven_by_its_counter():
    assert (evidence("bcast", "pipelined_zcpy", run("bcast_pipelined_zcpy_np2.txt"))
            == "mpit:bcast:pipelined_zcpy:mv2_coll_bcast_pipelined_zcpy")


def test_two_level_algorithm_needs_both_counters():
    assert (evidence("allreduce", "two_level_p2p", run("allreduce_two_level_p2p_np2.txt"))
            == "mpit:allreduce:two_level_p2p:mv2_coll_allreduce_2lvl+"
               "mv2_coll_allreduce_intra_p2p")
    with pytest.raises(alg.EvidenceError, match="mv2_coll_allreduce_shm_intra did not move"):
        evidence("allreduce", "two_level_shmem", run("allreduce_two_level_p2p_np2.txt"))


def test_companion_variable_makes_reduce_scatter_basic_run():
    assert alg.choose("mvapich2", "2.3.7", "reduce_scatter", "basic").env_vars[
        "MV2_INTER_REDUCE_TUNING"] == "1"
    assert evidence("reduce_scatter", "basic", run("reduce_scatter_basic_np2.txt")).startswith(
        "mpit:reduce_scatter:basic:")


def test_silent_fallback_fails_naming_what_ran_and_the_known_fallback():
    with pytest.raises(alg.EvidenceError) as err:
        evidence("allreduce", "sock_aware", run("allreduce_sock_aware_np2.txt"))
    text = str(err.value)
    assert "(MV2_INTER_ALLREDUCE_TUNING=11) not proven" in text
    assert "mv2_coll_allreduce_2lvl did not move" in text
    assert re.search(r"mv2_coll_allreduce_shm_rd=\d+", text)
    assert "known fallback: p2p_rd" in text


def test_multicast_value_without_a_multicast_build_ran_binomial():
    with pytest.raises(alg.EvidenceError, match=r"mv2_coll_scatter_binomial=950"):
        evidence("scatter", "mcast", run("scatter_mcast_np2.txt"))


def test_another_algorithms_run_is_not_taken_as_proof():
    with pytest.raises(alg.EvidenceError, match="mv2_coll_bcast_binomial did not move"):
        evidence("bcast", "binomial_flat", run("bcast_pipelined_zcpy_np2.txt"))


def test_a_second_algorithm_of_the_collective_moving_fails():
    """alltoall rd calls pairwise inside (allowed for rd); forcing pairwise must not see rd."""
    assert evidence("alltoall", "rd", run("alltoall_rd_np2.txt")).startswith("mpit:alltoall:rd:")
    with pytest.raises(alg.EvidenceError, match="mv2_coll_alltoall_rd moved as well"):
        evidence("alltoall", "pairwise", run("alltoall_rd_np2.txt"))


def test_uncounted_collective_is_not_proven():
    """One node: MVAPICH2 runs MPICH's gather whatever is forced, and counts nothing."""
    with pytest.raises(alg.EvidenceError, match=r"no mv2_coll_gather_\* counter moved"):
        evidence("gather", "direct", run("gather_direct_np2.txt"))


def test_default_records_which_counters_moved():
    assert evidence("bcast", "default", run("bcast_default_np2.txt")).startswith(
        "mpit:bcast:default:mv2_coll_bcast_knomial_internode+")


@pytest.mark.parametrize("name", ["mpich_osu_bcast_reader_no_pvars.txt",
                                  "ompi_osu_bcast_reader_no_pvars.txt"])
def test_library_without_counters_gives_no_evidence_not_a_pass(name):
    """Debian MPICH / Open MPI stand in for an MVAPICH2 built without MPI_T pvars."""
    result = evidence("bcast", "binomial_flat", run(name))
    assert result == "no-evidence:bcast:binomial_flat"
    verdict = mpit.judge(mpit.parse_counters(run(name)), "mv2_coll_bcast_",
                         ["binomial"], ("binomial",))
    assert verdict.outcome is mpit.Outcome.NO_COUNTERS
    assert "--enable-mpit-pvars=mv2" in verdict.message


# ---------------------------------------------------------------- mpiname -a


def test_mpiname_of_an_mrail_build():
    build = mvapich2.parse_mpiname(run("mpiname_a_ch3_mrail.txt"))
    assert (build.version, build.device) == ("2.3.7", "ch3:mrail")
    assert build.option("--enable-mpit-pvars") == "mv2"
    assert mvapich2.mv2_tuning_ignored_reason(build) is None
    assert mvapich2.build_features(build) == {"mrail", "mpit_pvars"}


def test_mpiname_rejects_another_librarys_output():
    with pytest.raises(mvapich2.MpinameError, match="not the output of MVAPICH2's 'mpiname -a'"):
        mvapich2.parse_mpiname("MPICH Version:\t4.0.2\nMPICH Device:\tch4:ofi\n")


def test_run_features():
    assert mvapich2.run_features(nodes=2, sockets_per_node=1, mapping="node") == {
        "multi_node", "cyclic_ranks"}
    assert mvapich2.run_features(nodes=1, sockets_per_node=2, mapping="core") == {
        "multi_socket"}


# ---------------------------------------------------------------- the reader itself


@pytest.mark.parametrize("mpicc", ["mpicc", "mpicc.mpich"])
def test_reader_compiles_with_every_mpi_here(mpicc, tmp_path):
    if shutil.which(mpicc) is None:
        pytest.skip(f"{mpicc} not on PATH")
    source = Path(probe.source_dir()) / mpit.READER_SOURCE
    done = subprocess.run([mpicc, "-shared", "-fPIC", "-Wall", "-Werror", "-o",
                           str(tmp_path / "libmpit.so"), str(source)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_mpiname_of_a_sock_build_says_tuning_is_ignored():
    build = mvapich2.parse_mpiname(run("mpiname_a_ch3_sock.txt"))
    assert build.device == "ch3:sock"
    reason = mvapich2.mv2_tuning_ignored_reason(build)
    assert reason.startswith("MVAPICH2 2.3.7 is built for ch3:sock")
    assert "every MV2_*_TUNING variable is ignored" in reason
    assert "mrail" not in mvapich2.build_features(build)


@pytest.mark.parametrize(("device", "honoured"), [
    ("ch3:mrail", True), ("ch3:psm", True), ("ch3:nemesis:ib", True),
    ("ch3:nemesis:ib,tcp", True), ("ch3:nemesis:tcp,ib", True), ("ch3:nemesis", False),
    ("ch3:nemesis:tcp", False), ("ch3:nemesis:ofi", False),
    ("ch3:sock", False)])
def test_channels_that_compile_mvapich2_collectives(device, honoured):
    build = mvapich2.Mv2Build("2.3.7", device, ())
    assert (mvapich2.mv2_tuning_ignored_reason(build) is None) is honoured


def test_mvapich2_binding_table_agrees_with_the_probe():
    """MV2_CPU_MAPPING=1:0 beats hydra's -bind-to core: both MVAPICH2 and the probe say so."""
    text = run("show_cpu_binding_mapping_1_0.txt")
    bound = {b.rank: b.cpus for b in mvapich2.parse_cpu_binding(text)}
    assert bound == {0: {1}, 1: {0}}
    assert {p.rank: p.cpus for p in probe.parse_probe(text)} == bound


def test_mvapich2_binding_without_its_affinity():
    bindings = mvapich2.parse_cpu_binding(run("show_cpu_binding_affinity_off.txt"))
    assert [(b.cpus, b.socket) for b in bindings] == [({0, 1}, -1), ({0, 1}, -1)]
    assert mvapich2.parse_cpu_binding(run("bcast_default_np2.txt")) == []
