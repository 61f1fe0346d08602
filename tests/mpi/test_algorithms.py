"""The collective algorithm tables, the forcing environment, the cases a system offers and the
algorithms that cannot run OSU's arguments."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from testdata import pip_mpi_prefix

from omb_suite.mpi import algorithms as alg
from omb_suite.mpi import mpilib

DATA = Path(alg.__file__).parents[1] / "data" / "algorithms"
DEFECTS = Path(__file__).parents[1] / "data" / "defects"
OSU_COLLECTIVES = ["allgather", "allgatherv", "allreduce", "alltoall", "alltoallv", "barrier",
                   "bcast", "gather", "gatherv", "reduce", "reduce_scatter", "scatter",
                   "scatterv", "iallgather", "iallreduce", "ialltoall", "ibarrier", "ibcast",
                   "igather", "ireduce", "iscatter"]


# ---------------------------------------------------------------- data files



@pytest.mark.parametrize(('family', 'value'), [('openmpi', 'six'), ('openmpi', 6.5),
                                               ('intel-mpi', True), ('intel-mpi', -1)])
def test_an_algorithm_number_that_is_not_a_whole_number_is_refused_at_load(family, value):
    """Synthetic: Open MPI's MCA and Intel MPI's preset take the algorithm's number; a name
    would reach the job as OMPI_MCA_coll_tuned_bcast_algorithm=six."""
    data = yaml.safe_load((DATA / f'{family}.yaml').read_text())
    entry = next(e for e in data['blocks'][-1]['collectives'].values() if e.get('algorithms'))
    name = next(iter(entry['algorithms']))
    entry['algorithms'][name] = value
    with pytest.raises(alg.AlgorithmError, match=rf"^data/algorithms/{family}\.yaml: "
                                                 rf"blocks\[\d\]\.collectives\.\w+\.algorithms\."
                                                 rf"{name}: expected a whole number >= 0"):
        alg._validate(family, data)


@pytest.mark.parametrize("family", sorted(p.stem for p in DATA.glob("*.yaml")))
def test_data_file_parses_and_validates(family):
    """Over the table files, not ``with_tables()``: a bad table, left out of that, fails here."""
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
    for family in alg.with_tables():
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
    assert mpilib.version_in(version, spec) is inside


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


# ---------------------------------------------------------------- what cannot run, defects


@pytest.mark.parametrize(("collective", "name", "nodes", "ranks", "elements", "why"), [
    ("alltoall", "pairwise_sendrecv_replace", 2, 64, 64, "in-place only"),
    ("bcast", "smp", 1, 2, 1, "every rank on one node"),
    ("iallreduce", "sched_reduce_scatter_allgather", 1, 2, 1,
     "-S min_size=8 runs it from one element per rank"),
])
def test_mpich_algorithms_that_cannot_run_osus_arguments(collective, name, nodes, ranks,
                                                         elements, why):
    reason = alg.cannot_run("mpich", collective, name, nodes=nodes, ranks=ranks,
                            min_elements=elements, element_size=4)
    assert reason.startswith(f"MPICH cannot run {collective} algorithm '{name}'")
    assert why in reason


@pytest.mark.parametrize("collective", ["allgather", "allgatherv", "alltoall", "barrier"])
def test_open_mpi_two_process_algorithms_run_on_two_ranks_only(collective):
    """Met with Open MPI 5.0.11: osu_alltoall two_proc at 4 ranks aborted with
    MPI_ERR_UNSUPPORTED_OPERATION."""
    reason = alg.cannot_run("openmpi", collective, "two_proc", nodes=1, ranks=4, min_elements=1)
    assert "MPI_ERR_UNSUPPORTED_OPERATION" in reason
    assert alg.cannot_run("openmpi", collective, "two_proc", nodes=1, ranks=2,
                          min_elements=1) is None


def test_what_cannot_run_here_can_elsewhere():
    assert alg.cannot_run("mpich", "bcast", "smp", nodes=2, ranks=4, min_elements=1) is None
    assert alg.cannot_run("mpich", "iallreduce", "sched_reduce_scatter_allgather", nodes=1,
                          ranks=2, min_elements=2) is None
    assert alg.cannot_run("openmpi", "bcast", "chain", nodes=1, ranks=2, min_elements=1) is None


def test_known_defects_are_per_version():
    assert "MPI_Gather_init" in alg.defect("mpich", "4.0.2", "gather_persistent")
    assert alg.defect("mpich", "4.1.2", "gather_persistent") is None
    assert alg.defect("mpich", "4.0.2", "allreduce_persistent") is None
    assert alg.defect("openmpi", "4.1.4", "gather_persistent") is None
    # a defect seen in fewer versions than its block covers names them
    assert "MPI_Scatter_init" in alg.defect("intel-mpi", "2021.18.1", "scatter_persistent")
    assert alg.defect("intel-mpi", "2021.17.0", "scatter_persistent") is None
    assert alg.defect("intel-mpi", "2021.18.1", "allreduce_persistent") is None


def _listed_defects(family: str, version: str) -> set[str]:
    return {c.removesuffix("_persistent") for c in ("allreduce_persistent",
                                                    "allgather_persistent",
                                                    "gather_persistent", "scatter_persistent")
            if alg.defect(family, version, c)}


def _wrong_persistent(mpicc: str, mpirun: str, tmp_path: Path, env: dict | None = None
                      ) -> tuple[set[str], str]:
    """The persistent collectives our own program (not OSU) finds wrong on 2 ranks."""
    exe = tmp_path / "persistent_collectives"
    subprocess.run([mpicc, "-o", str(exe), str(DEFECTS / "persistent_collectives.c")],
                   check=True, env=env)
    out = subprocess.run([mpirun, "-np", "2", str(exe)], capture_output=True, text=True,
                         timeout=120, check=True, env=env).stdout
    return {line.split()[0] for line in out.splitlines() if " wrong " in line}, out


@pytest.mark.launches
@pytest.mark.skipif(not (shutil.which("mpicc.mpich") and shutil.which("mpichversion")),
                    reason="Debian MPICH not installed: its defects are checked where it is")
def test_mpich_defects_are_true_of_the_installed_library(tmp_path):
    """Our own program (not OSU) finds exactly the listed persistent collectives wrong."""
    wrong, out = _wrong_persistent("mpicc.mpich", "mpirun.mpich", tmp_path)
    assert wrong == _listed_defects("mpich", mpilib.library_version("mpich")), out


@pytest.mark.launches
@pytest.mark.skipif(not (pip_mpi_prefix("impi") / "bin" / "mpicc").is_file(),
                    reason="pip's Intel MPI not installed (bash scripts/install-deps.sh "
                           "--pip-mpi): its defects are checked where it is")
def test_intel_mpi_defects_are_true_of_the_installed_library(tmp_path, monkeypatch):
    prefix = pip_mpi_prefix("impi")
    monkeypatch.setenv("I_MPI_ROOT", str(prefix))
    env = dict(os.environ, PATH=f"{prefix / 'bin'}:{os.environ['PATH']}")
    version = mpilib.recognise(str(prefix / "bin"), "intel-mpi")[1]
    wrong, out = _wrong_persistent(str(prefix / "bin" / "mpicc"),
                                   str(prefix / "bin" / "mpirun"), tmp_path, env)
    assert wrong == _listed_defects("intel-mpi", version), (version, out)
