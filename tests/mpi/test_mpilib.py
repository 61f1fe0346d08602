"""Facts read from the installed MPI library: versions, algorithm listings, GPU awareness.

Files under tests/data/evidence/ and tests/data/gpu/ are real outputs (first line: the
command) of ompi_info / mpivars / mpichversion of Debian Open MPI 4.1.4 and MPICH 4.0.2.
"""

from __future__ import annotations

import gzip
import os
import shutil

import pytest
from testdata import DATA, real_output

from omb_suite.mpi import algorithms as alg
from omb_suite.mpi import mpilib

EVIDENCE = DATA / "evidence"


def _without_command(name: str) -> str:
    return (EVIDENCE / name).read_text().split("\n", 1)[1]


# ---------------------------------------------------------------- versions


@pytest.mark.parametrize(("family", "text", "version"), [
    ("openmpi", "Open MPI v4.1.4\n\nhttp://www.open-mpi.org/community/help/", "4.1.4"),
    ("mpich", "MPICH Version:      4.0.2\nMPICH Release date: Thu Apr  7", "4.0.2"),
    ("mvapich2", "MVAPICH2 2.3.7 Wed March 02 22:00:00 EST 2022 ch3:mrail", "2.3.7"),
])
def test_one_version_pattern_per_family(family, text, version):
    assert mpilib.version_from(family, text) == version


def test_version_of_mpirun_tells_the_family():
    assert mpilib.launcher_family("mpirun (Open MPI) 4.1.4\n") == ("openmpi", "4.1.4")
    assert mpilib.launcher_family("HYDRA build details:\n    Version: 4.0.2\n") == (
        "mpich", "4.0.2")
    assert mpilib.launcher_family("something else") == ("unknown", None)


def test_missing_tool_says_what_to_do():
    with pytest.raises(mpilib.MpiToolError, match="not found; put the MPI library's bin/"):
        mpilib.run_tool("/nonexistent/ompi_info", "--version")
    assert mpilib.library_version("openmpi", "/nonexistent") is None


# ---------------------------------------------------------------- algorithm listings


def _ompi4_listing() -> dict[str, list[str]]:
    """Debian Open MPI 4.1.4: ompi_info --parsable --param coll all --level 9."""
    return mpilib.parse_ompi_parsable((DATA / "mpi" / "ompi4_info_coll_parsable.txt").read_text())


def test_ompi_info_parser_on_captured_output():
    found = _ompi4_listing()
    assert found["bcast"][4] == "binary_tree"
    assert found["ibcast"] == ["linear", "binomial", "chain", "knomial"]
    assert "ignore" not in found["bcast"]


def test_mpivars_parser_separates_glued_names():
    found = mpilib.parse_mpivars(_without_command("mpich_mpivars.txt"), alg.known_names("mpich"))
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
    _assert_table_matches("openmpi", "4.1.4", _ompi4_listing())


def test_captured_mpivars_matches_mpich_4_0_table():
    _assert_table_matches("mpich", "4.0.2",
                          mpilib.parse_mpivars(_without_command("mpich_mpivars.txt"),
                                               alg.known_names("mpich")))


def test_unsupported_reason_names_library_and_version():
    installed = _ompi4_listing()
    assert alg.unsupported_reason("openmpi", "5.0.3", "bcast", "knomial", installed) is None
    reason = alg.unsupported_reason("openmpi", "5.0.3", "allgather", "sparbit", installed)
    assert reason.startswith("Open MPI 5.0.3 (installed) has no allgather algorithm 'sparbit'")


def test_mvapich2_has_no_listing_tool():
    assert mpilib.listed_algorithms("mvapich2", None, set()) is None


# ---------------------------------------------------------------- installed library (live)


def test_table_matches_installed_open_mpi():
    if shutil.which("ompi_info") is None:
        pytest.skip("ompi_info not on PATH: cannot check the Open MPI table")
    version = mpilib.library_version("openmpi")
    _assert_table_matches("openmpi", version,
                          mpilib.listed_algorithms("openmpi", None, alg.known_names("openmpi")))


def test_table_matches_installed_mpich():
    if shutil.which("mpivars") is None or shutil.which("mpichversion") is None:
        pytest.skip("mpivars/mpichversion not on PATH: cannot check the MPICH table")
    version = mpilib.library_version("mpich")
    _assert_table_matches("mpich", version,
                          mpilib.listed_algorithms("mpich", None, alg.known_names("mpich")))




# ---------------------------------------------------------------- GPU awareness

OMPI_INFO = DATA / 'gpu' / 'debian_openmpi_4.1.4_ompi_info_parsable_all.txt.gz'
MPICHVERSION = DATA / 'gpu' / 'debian_mpich_4.0.2_mpichversion.txt'


def test_debian_openmpi_is_not_cuda_aware():
    text = gzip.decompress(OMPI_INFO.read_bytes()).decode()
    support = mpilib.openmpi_gpu_support(text, 'cuda')
    assert support.aware is False
    assert support.evidence == 'ompi_info: mpi_built_with_cuda_support=false'


def test_debian_openmpi_cannot_tell_rocm():
    text = gzip.decompress(OMPI_INFO.read_bytes()).decode()
    assert mpilib.openmpi_gpu_support(text, 'rocm').aware is None


def test_cuda_aware_line_as_documented_by_open_mpi():
    # the line Open MPI's FAQ shows for a CUDA-aware build (no such build on this machine)
    line = 'mca:mpi:base:param:mpi_built_with_cuda_support:value:true\n'
    assert mpilib.openmpi_gpu_support(line, 'cuda').aware is True


def test_debian_mpich_has_no_gpu_support():
    support = mpilib.mpich_gpu_support(real_output(MPICHVERSION), 'cuda', {})
    assert support.aware is False and '--without-yaksa' in support.evidence
    assert mpilib.device_from('mpich', real_output(MPICHVERSION)) == 'ch4:ucx'


def test_mpich_cvar_disables_gpu_support():
    text = 'MPICH configure: --prefix=/opt/mpich --with-cuda=/usr/local/cuda\n'  # synthetic
    assert mpilib.mpich_gpu_support(text, 'cuda', {}).aware is True
    assert mpilib.mpich_gpu_support(text, 'cuda', {'MPIR_CVAR_ENABLE_GPU': '0'}).aware is False
    assert mpilib.mpich_gpu_support(text, 'rocm', {}).aware is None


@pytest.mark.skipif(not shutil.which('ompi_info'), reason='Open MPI (ompi_info) not installed')
def test_probe_of_this_machines_open_mpi_says_not_cuda_aware():
    support = mpilib.gpu_support('openmpi', 'cuda', os.environ['PATH'])
    assert support.aware is False
    assert 'mpi_built_with_cuda_support=false' in support.evidence
