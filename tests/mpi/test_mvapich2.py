"""MVAPICH2 as installed (``mpiname -a``) and its own rank binding, read from recorded outputs
(tests/data/mvapich2/, see its README) and from a fake ``mpiname`` script: no MVAPICH2 needed."""

from __future__ import annotations

from pathlib import Path

import pytest

from omb_suite.launch import placements
from omb_suite.machine import probe
from omb_suite.mpi import mvapich2

DATA = Path(__file__).parents[1] / "data" / "mvapich2"


def fake_mpiname(tmp_path: Path, recorded: str) -> str:
    """A bin/ whose ``mpiname -a`` prints a recorded output (its first line is the command)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    text = (DATA / recorded).read_text().split("\n", 1)[1]
    (bindir / "mpiname.txt").write_text(text)
    (bindir / "mpiname").write_text(f'#!/bin/sh\n[ "$1" = -a ] && exec cat "{bindir}/mpiname.txt"'
                                    '\necho MVAPICH2\n')
    (bindir / "mpiname").chmod(0o755)
    return str(bindir)


def test_installed_build_reads_mpiname_on_the_search_path(tmp_path):
    build = mvapich2.installed_build(fake_mpiname(tmp_path, "mpiname_a_ch3_mrail.txt"))
    assert (build.version, build.device) == ("2.3.7", "ch3:mrail")
    assert "mpit_pvars" in mvapich2.build_features(build)


def test_installed_build_of_a_sock_build(tmp_path):
    build = mvapich2.installed_build(fake_mpiname(tmp_path, "mpiname_a_ch3_sock.txt"))
    assert mvapich2.mv2_tuning_ignored_reason(build) is not None
    assert not mvapich2.binds_ranks(build.device)


def test_installed_build_without_mpiname_says_how_to_register(tmp_path):
    with pytest.raises(mvapich2.MpinameError, match="omb-setup --mpi mvapich2=PREFIX"):
        mvapich2.installed_build(str(tmp_path))


def test_installed_build_of_another_library(tmp_path):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    (bindir / "mpiname").write_text("#!/bin/sh\necho 'MPICH Version: 4.0.2'\n")
    (bindir / "mpiname").chmod(0o755)
    with pytest.raises(mvapich2.MpinameError, match="not the output of MVAPICH2"):
        mvapich2.installed_build(str(bindir))


@pytest.mark.parametrize(("device", "binds"), [
    ("ch3:mrail", True), ("ch3:psm", True), ("ch3:nemesis:ib", False), ("ch3:sock", False)])
def test_channels_that_bind_ranks_themselves(device, binds):
    assert mvapich2.binds_ranks(device) is binds


def test_affinity_off_when_oversubscribed_or_thread_multiple():
    assert mvapich2.affinity_off_reason(tasks_per_node=2, cpus_per_node=2,
                                        thread_multiple=False) is None
    assert "4 ranks share 2 CPUs" in mvapich2.affinity_off_reason(
        tasks_per_node=4, cpus_per_node=2, thread_multiple=False)
    assert "MPI_THREAD_MULTIPLE" in mvapich2.affinity_off_reason(
        tasks_per_node=2, cpus_per_node=2, thread_multiple=True)


def test_bound_places_take_mvapich2s_cpu_set():
    """MV2_CPU_MAPPING=1:0 over hydra's -bind-to core: the wrapper saw 0 and 1 before exec,
    MVAPICH2 swapped them at MPI_Init (the recorded table and probe agree on the swap; here
    the wrapper's lines say what hydra did)."""
    wrapper = [probe.RankPlace(0, "vm", frozenset({0}), frozenset({0}), frozenset({0})),
               probe.RankPlace(1, "vm", frozenset({1}), frozenset({0}), frozenset({0}))]
    table = mvapich2.parse_cpu_binding((DATA / "show_cpu_binding_mapping_1_0.txt").read_text())
    bound = mvapich2.bound_places(wrapper, table)
    assert [(p.rank, p.cpus, p.sockets, p.numa) for p in bound] == [
        (0, {1}, {0}, set()), (1, {0}, {0}, set())]


def test_bound_places_keep_the_wrapper_line_where_mvapich2_agrees():
    text = (DATA / "show_cpu_binding_default.txt").read_text()
    places = probe.parse_probe(text)
    assert mvapich2.bound_places(places, mvapich2.parse_cpu_binding(text)) == places


def test_bound_places_without_the_table_fail_naming_the_variable():
    places = probe.parse_probe((DATA / "show_cpu_binding_default.txt").read_text())
    with pytest.raises(probe.ProbeError, match=r"MV2_SHOW_CPU_BINDING=2.*ranks \[0, 1\]"):
        mvapich2.bound_places(places, [])


def test_mv2_binding_variables_of_placements_and_mappings():
    assert placements.placement("intra_socket").mv2_env() == {
        "MV2_CPU_BINDING_POLICY": "bunch", "MV2_CPU_BINDING_LEVEL": "core"}
    assert placements.mapping("socket").mv2_env()["MV2_CPU_BINDING_POLICY"] == "scatter"
