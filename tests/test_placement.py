"""Placement table and placement-probe verification on real probe outputs."""

from __future__ import annotations

import pytest
from testdata import DATA, real_output

from omb_suite import placement, probe


def test_every_placement_has_options_for_every_launcher():
    for name in placement.placement_names():
        for launcher, family in [('mpirun', 'openmpi'), ('mpirun', 'mpich'), ('srun', None)]:
            assert placement.placement_options(name, launcher, family)
    for name in placement.mapping_names():
        assert placement.mapping_options(name, 'srun', None)


def test_dialect_follows_mpi_family():
    assert placement.placement_options('intra_socket', 'mpirun', 'openmpi') == [
        '--map-by', 'core', '--bind-to', 'core']
    assert placement.placement_options('intra_socket', 'mpirun', 'mpich') == ['-bind-to', 'core']
    assert placement.placement_options('inter_node', 'srun', 'openmpi') == [
        '--distribution=cyclic', '--cpu-bind=cores']


def test_partition_override_wins():
    override = {'ompi': {'inter_node': ['--map-by', 'node', '--bind-to', 'none']}}
    assert placement.placement_options('inter_node', 'mpirun', 'openmpi', override)[-1] == 'none'


def test_unknown_names_and_launchers_are_explained():
    with pytest.raises(placement.PlacementError, match='known placements'):
        placement.get_placement('same_numa')
    with pytest.raises(placement.PlacementError, match='cannot place MPI ranks'):
        placement.placement_options('intra_socket', 'local', 'openmpi')


def test_unmet_needs_names_the_shortfall():
    inter_socket = placement.get_placement('inter_socket')
    why = placement.unmet_needs(inter_socket, num_nodes=1, num_sockets=1, cores_per_socket=2)
    assert why == "placement 'inter_socket' needs 2 sockets but the partition has 1"
    assert placement.unmet_needs(placement.get_placement('intra_socket'), num_nodes=1,
                                 num_sockets=1, cores_per_socket=2) is None


def test_srun_mpi_plugin_per_family():
    table = {'openmpi': 'pmix', 'mpich': 'pmi2'}
    assert placement.srun_mpi_options('srun', 'openmpi', table) == ['--mpi=pmix']
    assert placement.srun_mpi_options('mpirun', 'openmpi', table) == []


@pytest.mark.parametrize('capture', ['ompi_intra_socket.txt', 'mpich_intra_socket.txt'])
def test_real_intra_socket_probe_holds(capture):
    places = probe.parse_probe(real_output(DATA / 'probe' / capture))
    probe.verify('intra_socket', places)
    assert probe.observed(places) == 'vm:cpu0/s0/n0;vm:cpu1/s0/n0'


def test_real_single_host_run_is_not_inter_node():
    places = probe.parse_probe(real_output(DATA / 'probe' / 'ompi_map_by_node_one_host.txt'))
    with pytest.raises(probe.ProbeError, match='both ranks run on host vm') as err:
        probe.verify('inter_node', places)
    assert 'rank 0: host=vm cpus=0' in str(err.value)


def test_real_unbound_ranks_are_not_inter_socket():
    places = probe.parse_probe(real_output(DATA / 'probe' / 'ompi_unbound.txt'))
    probe.verify('intra_socket', places)
    with pytest.raises(probe.ProbeError, match='not on two different sockets'):
        probe.verify('inter_socket', places)


def test_synthetic_both_ranks_on_one_cpu_fail():
    text = ('PROBE rank=0 size=2 host=n1 cpus=0 sockets=0 numa=0\n'
            'PROBE rank=1 size=2 host=n1 cpus=0 sockets=0 numa=0\nPROBE done ranks=2\n')
    with pytest.raises(probe.ProbeError, match='same single CPU 0'):
        probe.verify('intra_socket', probe.parse_probe(text))


def test_synthetic_two_hosts_pass_inter_node_and_fail_intra_socket():
    text = ('PROBE rank=0 size=2 host=node1 cpus=0 sockets=0 numa=0\n'
            'PROBE rank=1 size=2 host=node2 cpus=0 sockets=0 numa=0\nPROBE done ranks=2\n')
    places = probe.parse_probe(text)
    probe.verify('inter_node', places)
    with pytest.raises(probe.ProbeError, match='different hosts node1 and node2'):
        probe.verify('intra_socket', places)


def test_synthetic_truncated_probe_output_is_reported():
    with pytest.raises(probe.ProbeError, match='no PROBE lines'):
        probe.parse_probe('mpirun: command not found\n')
    with pytest.raises(probe.ProbeError, match='ranks \\[1\\] missing'):
        probe.parse_probe('PROBE rank=0 size=2 host=a cpus=0 sockets=0 numa=0\n')
    with pytest.raises(probe.ProbeError, match='cut off'):
        probe.parse_probe('PROBE rank=0 size=1 host=a cpus=0 sockets=0 numa=0\n')
