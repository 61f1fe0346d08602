"""Placements and mappings: launcher options, job shapes, and the verdict on real probe lines
(tests/data/probe/*.txt, real outputs of this 2-core VM)."""

from __future__ import annotations

import pytest
from testdata import DATA, real_output

from omb_suite import placements, probe
from omb_suite.placements import Shape, WrongPlacement
from omb_suite.topology import Topology

LOCAL = Topology(nodes=1, sockets=1, cores_per_socket=2)
CLUSTER = Topology(nodes=64, sockets=2, cores_per_socket=64)


def places(name: str, ranks: int | None = None) -> list[probe.RankPlace]:
    return probe.parse_probe(real_output(DATA / 'probe' / name), expect_ranks=ranks)


def test_every_placement_and_mapping_has_options_for_every_dialect():
    for launcher, family in [('mpirun', 'openmpi'), ('mpirun', 'mpich'), ('srun', None)]:
        for name in placements.placement_names():
            assert placements.placement_options(name, launcher, family)
        for name in placements.mapping_names():
            assert placements.mapping_options(name, launcher, family)


def test_dialect_follows_mpi_family_and_launcher():
    assert placements.placement_options('intra_socket', 'mpirun', 'openmpi') == [
        '--map-by', 'core', '--bind-to', 'core']
    assert placements.placement_options('intra_socket', 'mpirun', 'mpich') == ['-bind-to', 'core']
    assert placements.placement_options('inter_node', 'srunalloc', 'openmpi') == [
        '--distribution=cyclic', '--cpu-bind=cores']
    # Hydra has no `-map-by node` ("unrecognized directive node"): one rank per host in turn
    assert placements.mapping_options('node', 'mpiexec', 'mpich') == ['-ppn', '1', '-bind-to',
                                                                     'core']


def test_partition_override_wins():
    override = {'ompi': {'inter_node': ['--map-by', 'node', '--bind-to', 'none']}}
    assert placements.placement_options('inter_node', 'mpirun', 'openmpi', override)[-1] == 'none'


def test_unknown_names_and_launchers_are_explained():
    with pytest.raises(placements.PlacementError, match='known placements'):
        placements.get_placement('same_numa')
    with pytest.raises(placements.PlacementError, match='cannot place MPI ranks'):
        placements.placement_options('intra_socket', 'local', 'openmpi')


def test_unmet_needs_names_the_shortfall():
    why = placements.unmet_needs(placements.get_placement('inter_socket'), LOCAL)
    assert why == "placement 'inter_socket' needs 2 sockets but the partition has 1"
    assert placements.unmet_needs(placements.get_placement('intra_socket'), LOCAL) is None


def test_srun_mpi_plugin_per_family():
    table = {'openmpi': 'pmix', 'mpich': 'pmi2'}
    assert placements.srun_mpi_options('srun', 'openmpi', table) == ['--mpi=pmix']
    assert placements.srun_mpi_options('srunalloc', 'mpich', table) == ['--mpi=pmi2']
    assert placements.srun_mpi_options('mpirun', 'openmpi', table) == []


def test_mappings_are_what_the_partitions_can_tell_apart():
    assert placements.mappings_for([LOCAL]) == ['core']
    assert placements.mappings_for([LOCAL, CLUSTER]) == ['core', 'socket', 'node']


@pytest.mark.parametrize(('ranks', 'mapping', 'topo', 'over', 'shape'), [
    (2, 'core', LOCAL, 1, Shape(2, 1)),
    (4, 'core', LOCAL, 2, Shape(4, 1)),
    (256, 'core', CLUSTER, 1, Shape(256, 2)),
    (4, 'node', CLUSTER, 1, Shape(4, 2)),
    (256, 'socket', CLUSTER, 1, Shape(256, 2)),
])
def test_job_shape(ranks, mapping, topo, over, shape):
    got = placements.job_shape(ranks, mapping, topo, over)
    assert got == shape and got.tasks_per_node == -(-ranks // shape.num_nodes)


@pytest.mark.parametrize(('ranks', 'mapping', 'why'), [
    (4, 'core', '4 ranks mapped by core need 2 nodes of 2 cores (oversubscribe=1) but the '
                'partition has 1'),
    (2, 'node', '2 ranks mapped by node need 2 nodes'),
    (2, 'socket', "mapping 'socket' needs 2 sockets per node but the partition has 1"),
    (2, 'diagonal', "unknown mapping 'diagonal'; known: core, socket, node"),
])
def test_job_shape_says_why_not(ranks, mapping, why):
    got = placements.job_shape(ranks, mapping, LOCAL)
    assert isinstance(got, str) and got.startswith(why)


def test_oversubscription_options_per_launcher():
    ompi = ['--map-by', 'core', '--bind-to', 'core']
    assert placements.oversubscribe_options(ompi, 'ompi') == [
        '--oversubscribe', '--map-by', 'core', '--bind-to', 'core:overload-allowed']
    assert placements.oversubscribe_options(['-bind-to', 'core'], 'hydra') == ['-bind-to', 'core']
    assert placements.oversubscribe_options(['--cpu-bind=cores'], 'srun') == [
        '--overcommit', '--cpu-bind=cores']


# ---------------------------------------------------------------- verification


@pytest.mark.parametrize('name', ['wrapper_ompi_intra_socket.txt',
                                  'wrapper_mpich_intra_socket.txt', 'ompi_intra_socket.txt'])
def test_real_intra_socket_holds(name):
    placements.verify_pair('intra_socket', places(name, 2 if name.startswith('wrap') else None))


def test_real_single_host_run_is_not_inter_node():
    with pytest.raises(WrongPlacement, match='both ranks run on host vm') as err:
        placements.verify_pair('inter_node', places('ompi_map_by_node_one_host.txt'))
    assert 'rank 0: host=vm cpus=0' in str(err.value)


def test_real_unbound_ranks_are_not_inter_socket():
    unbound = places('wrapper_ompi_unbound.txt', 2)
    placements.verify_pair('intra_socket', unbound)
    with pytest.raises(WrongPlacement, match='not on two different sockets'):
        placements.verify_pair('inter_socket', unbound)


def test_real_both_ranks_on_one_cpu_fail_with_asked_and_observed():
    with pytest.raises(WrongPlacement, match="placement 'intra_socket' does not hold: both "
                                             "ranks are bound to the same single CPU 0") as err:
        placements.verify_pair('intra_socket', places('wrapper_ompi_both_on_cpu0.txt', 2))
    assert 'rank 1: host=vm cpus=0 socket=0 numa=0' in str(err.value)


def test_real_oversubscribed_ranks_share_cpus_only_when_allowed():
    four = places('wrapper_ompi_4ranks_oversubscribed.txt', 4)
    placements.verify_ranks(four, nodes=1, oversubscribed=True)
    placements.verify_mapping('core', four, tasks_per_node=4)
    with pytest.raises(WrongPlacement, match='ranks 0 and 2 are both bound to CPU 0 of vm'):
        placements.verify_ranks(four, nodes=1)
    with pytest.raises(WrongPlacement, match='2 node\\(s\\) does not hold: the ranks run on 1'):
        placements.verify_ranks(four, nodes=2, oversubscribed=True)


def test_synthetic_two_hosts_pass_inter_node_fail_intra_socket_and_core_mapping():
    text = ('PROBE rank=0 size=2 host=node1 cpus=0 sockets=0 numa=0\n'
            'PROBE rank=1 size=2 host=node2 cpus=0 sockets=0 numa=0\n')
    two = probe.parse_probe(text, 2)
    placements.verify_pair('inter_node', two)
    placements.verify_mapping('node', two, tasks_per_node=1)
    placements.verify_mapping('core', two, tasks_per_node=1)      # one rank fills a host
    with pytest.raises(WrongPlacement, match='different hosts node1 and node2'):
        placements.verify_pair('intra_socket', two)
    with pytest.raises(WrongPlacement, match='mapping "core" does not hold: ranks 0 and 1 run '
                                             'on node1 and node2, 2 ranks fill a host first'):
        placements.verify_mapping('core', two, tasks_per_node=2)


def test_synthetic_halves_of_pairs():
    text = ''.join(f'PROBE rank={r} size=4 host=node{1 + r // 2} cpus={r % 2} sockets=0 numa=0\n'
                   for r in range(4))
    four = probe.parse_probe(text, 4)
    placements.verify_halves('inter_node', four)
    with pytest.raises(WrongPlacement, match="pairs 'intra_socket' does not hold: ranks 0 and 2"):
        placements.verify_halves('intra_socket', four)


def test_synthetic_two_ranks_on_one_gpu_are_caught():
    text = ('PROBE rank=0 size=2 host=n1 cpus=0 sockets=0 numa=0\n'
            'PROBE rank=1 size=2 host=n1 cpus=1 sockets=0 numa=0\n'
            'GPUBIND rank=0 host=n1 visible=0 device=0\n'
            'GPUBIND rank=1 host=n1 visible=0 device=0\n')
    two = probe.parse_probe(text, 2)
    with pytest.raises(WrongPlacement, match='ranks 0 and 1 share GPU 0 on n1'):
        placements.verify_gpus(probe.parse_bindings(text), two)
    with pytest.raises(WrongPlacement, match='1 GPU bindings for 2 ranks'):
        placements.verify_gpus(probe.parse_bindings(text)[:1], two)
