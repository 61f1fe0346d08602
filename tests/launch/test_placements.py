"""Placements and mappings as objects of one table: launcher options, job shapes, multi-pair
shapes, and the verdict on real probe lines (tests/data/probe/*.txt, real outputs of this
2-core VM)."""

from __future__ import annotations

import pytest
from testdata import DATA, real_output

from omb_suite.launch import placements
from omb_suite.launch.placements import Shape
from omb_suite.machine import probe
from omb_suite.machine.probe import WrongPlacement
from omb_suite.machine.topology import Topology
from omb_suite.mpi.dialects import JobNumbers

LOCAL = Topology(nodes=1, sockets=1, cores_per_socket=2)
CLUSTER = Topology(nodes=64, sockets=2, cores_per_socket=64)
DIALECTS = ('ompi', 'hydra', 'srun', 'mv2')


def places(name: str, ranks: int | None = None) -> list[probe.RankPlace]:
    return probe.parse_probe(real_output(DATA / 'probe' / name), expect_ranks=ranks)


def everything() -> list[placements.Placing]:
    return [*map(placements.placement, placements.placement_names()),
            *map(placements.mapping, placements.mapping_names())]


@pytest.mark.parametrize('where', everything(), ids=lambda w: w.name)
def test_every_placement_and_mapping_has_options_for_every_mpirun_and_srun_dialect(where):
    numbers = JobNumbers.of(4, 2, CLUSTER)
    for dialect in DIALECTS:
        assert where.launcher_options(dialect, numbers=numbers), (where.name, dialect)
    assert where.mv2_env()


def test_launch_options_follow_launcher_and_mpi_family():
    intra, node = placements.placement('intra_socket'), placements.mapping('node')
    one, two = JobNumbers.of(2, 1, CLUSTER), JobNumbers.of(2, 2, CLUSTER)
    assert placements.launch_options(intra, 'mpirun', 'openmpi', one) == [
        '--map-by', 'core', '--bind-to', 'core']
    assert placements.launch_options(intra, 'mpirun', 'mpich', one) == ['-bind-to', 'core']
    # a step of an allocation names its nodes; srun gets the family's --mpi plugin
    assert placements.launch_options(placements.placement('inter_node'), 'srunalloc', 'openmpi',
                                     two, srun_mpi={'openmpi': 'pmix'}) == [
        '--nodes=2', '--mpi=pmix', '--distribution=cyclic', '--cpu-bind=cores']
    # Hydra has no `-map-by node` ("unrecognized directive node"): one rank per host in turn
    assert placements.launch_options(node, 'mpiexec', 'mpich', two) == [
        '-ppn', '1', '-bind-to', 'core']
    # Intel MPI pins ranks itself: its own processor list, through its mpiexec's -genv
    assert placements.launch_options(intra, 'mpirun', 'intel-mpi', one) == [
        '-ppn', '2', '-genv', 'I_MPI_PIN_PROCESSOR_LIST', '0,1']


def test_partition_override_wins_for_options_and_mvapich2_variables():
    inter = placements.placement('inter_node')
    override = {'ompi': {'inter_node': ['--map-by', 'node', '--bind-to', 'none']}}
    assert inter.launcher_options('ompi', override)[-1] == 'none'
    assert inter.launcher_options('hydra', override) == ['-ppn', '1', '-bind-to', 'core']
    core = placements.mapping('core')
    assert core.mv2_env({'mv2': {'core': ['MV2_CPU_MAPPING=0:1']}}) == {
        'MV2_CPU_MAPPING': '0:1'}
    with pytest.raises(placements.PlacementError, match='is not VAR=value'):
        core.mv2_env({'mv2': {'core': ['bunch']}})


def test_old_override_key_is_read_with_a_message_naming_the_new_one():
    old = {'placement_options': {'srun': {'inter_node': ['--cpu-bind=none']}}}
    overrides, message = placements.overrides_of(old)
    assert overrides == old['placement_options']
    assert 'placement_options' in message and "'launcher_overrides'" in message
    new = {'launcher_overrides': old['placement_options']}
    assert placements.overrides_of(new) == (new['launcher_overrides'], None)
    assert placements.overrides_of({}) == ({}, None)


def test_unknown_names_and_launchers_are_explained():
    with pytest.raises(placements.PlacementError, match='known placements'):
        placements.placement('same_numa')
    with pytest.raises(placements.PlacementError, match="unknown mapping 'diagonal'"):
        placements.mapping('diagonal')
    with pytest.raises(placements.PlacementError, match='cannot place MPI ranks'):
        placements.launcher_dialect('local', 'openmpi')


def test_unmet_needs_name_the_shortfall():
    why = placements.placement('inter_socket').unmet_on(LOCAL)
    assert why == "placement 'inter_socket' needs 2 sockets per node but the partition has 1"
    assert placements.placement('intra_socket').unmet_on(LOCAL) is None


def test_srun_mpi_plugin_per_family():
    table = {'openmpi': 'pmix', 'mpich': 'pmi2'}
    assert placements.srun_mpi_options('srun', 'openmpi', table) == ['--mpi=pmix']
    assert placements.srun_mpi_options('srun', 'mpich', table) == ['--mpi=pmi2']
    assert placements.srun_mpi_options('ompi', 'openmpi', table) == []


def test_offered_placements_and_mappings_are_what_the_partitions_can_tell_apart():
    assert placements.offered_placements([LOCAL]) == ['intra_socket']
    assert placements.offered_placements([LOCAL, CLUSTER]) == [
        'intra_socket', 'inter_socket', 'inter_node']
    assert placements.offered_mappings([LOCAL]) == ['core']
    assert placements.offered_mappings([LOCAL, CLUSTER]) == ['core', 'socket', 'node']


@pytest.mark.parametrize(('name', 'topo', 'pairs', 'shape'), [
    ('intra_socket', LOCAL, None, Shape(2, 1)),          # half the cores of one socket
    ('intra_socket', CLUSTER, None, Shape(64, 1)),
    ('inter_socket', CLUSTER, None, Shape(128, 1)),      # a socket's cores each half
    ('inter_node', CLUSTER, None, Shape(256, 2)),        # a node's cores each half
    ('inter_node', CLUSTER, 4, Shape(8, 2)),
])
def test_multi_pair_shapes_derive_from_the_placement(name, topo, pairs, shape):
    assert placements.placement(name).pairs_shape(topo, pairs) == shape


def test_multi_pair_shape_says_why_not():
    assert placements.placement('inter_node').pairs_shape(LOCAL) == (
        "placement 'inter_node' needs 2 nodes but the partition has 1")


@pytest.mark.parametrize(('ranks', 'mapping', 'topo', 'over', 'shape'), [
    (2, 'core', LOCAL, 1, Shape(2, 1)),
    (4, 'core', LOCAL, 2, Shape(4, 1)),
    (256, 'core', CLUSTER, 1, Shape(256, 2)),
    (4, 'node', CLUSTER, 1, Shape(4, 2)),
    (256, 'socket', CLUSTER, 1, Shape(256, 2)),
])
def test_job_shape(ranks, mapping, topo, over, shape):
    got = placements.mapping(mapping).job_shape(ranks, topo, over)
    assert got == shape and got.tasks_per_node == -(-ranks // shape.num_nodes)


@pytest.mark.parametrize(('ranks', 'mapping', 'why'), [
    (4, 'core', '4 ranks mapped by core need 2 nodes of 2 cores (oversubscribe=1) but the '
                'partition has 1'),
    (2, 'node', '2 ranks mapped by node need 2 nodes'),
    (2, 'socket', "mapping 'socket' needs 2 sockets per node but the partition has 1"),
])
def test_job_shape_says_why_not(ranks, mapping, why):
    got = placements.mapping(mapping).job_shape(ranks, LOCAL)
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
    ranks = 2 if name.startswith('wrap') else None
    placements.placement('intra_socket').verify(places(name, ranks))


def test_real_single_host_run_is_not_inter_node():
    with pytest.raises(WrongPlacement, match='both ranks run on host vm') as err:
        placements.placement('inter_node').verify(places('ompi_map_by_node_one_host.txt'))
    assert 'rank 0: host=vm cpus=0' in str(err.value)


def test_real_unbound_ranks_are_not_inter_socket():
    unbound = places('wrapper_ompi_unbound.txt', 2)
    placements.placement('intra_socket').verify(unbound)
    with pytest.raises(WrongPlacement, match='not on two different sockets'):
        placements.placement('inter_socket').verify(unbound)


def test_real_both_ranks_on_one_cpu_fail_with_asked_and_observed():
    with pytest.raises(WrongPlacement, match="placement 'intra_socket' does not hold: both "
                                             "ranks are bound to the same single CPU 0") as err:
        placements.placement('intra_socket').verify(places('wrapper_ompi_both_on_cpu0.txt', 2))
    assert 'rank 1: host=vm cpus=0 socket=0 numa=0' in str(err.value)


def test_real_oversubscribed_ranks_share_cpus_only_when_allowed():
    four = places('wrapper_ompi_4ranks_oversubscribed.txt', 4)
    probe.verify_ranks(four, nodes=1, oversubscribed=True)
    placements.mapping('core').verify(four, tasks_per_node=4)
    with pytest.raises(WrongPlacement, match='ranks 0 and 2 are both bound to CPU 0 of vm'):
        probe.verify_ranks(four, nodes=1)
    with pytest.raises(WrongPlacement, match='2 node\\(s\\) does not hold: the ranks run on 1'):
        probe.verify_ranks(four, nodes=2, oversubscribed=True)


def test_synthetic_two_hosts_pass_inter_node_fail_intra_socket_and_core_mapping():
    text = ('PROBE rank=0 size=2 host=node1 cpus=0 sockets=0 numa=0\n'
            'PROBE rank=1 size=2 host=node2 cpus=0 sockets=0 numa=0\n')
    two = probe.parse_probe(text, 2)
    placements.placement('inter_node').verify(two)
    placements.mapping('node').verify(two, tasks_per_node=1)
    placements.mapping('core').verify(two, tasks_per_node=1)      # one rank fills a host
    with pytest.raises(WrongPlacement, match='different hosts node1 and node2'):
        placements.placement('intra_socket').verify(two)
    with pytest.raises(WrongPlacement, match='mapping "core" does not hold: ranks 0 and 1 run '
                                             'on node1 and node2, 2 ranks fill a host first'):
        placements.mapping('core').verify(two, tasks_per_node=2)


def test_synthetic_halves_of_pairs():
    text = ''.join(f'PROBE rank={r} size=4 host=node{1 + r // 2} cpus={r % 2} sockets=0 numa=0\n'
                   for r in range(4))
    four = probe.parse_probe(text, 4)
    placements.placement('inter_node').verify_halves(four)
    with pytest.raises(WrongPlacement, match="pairs 'intra_socket' does not hold: ranks 0 and 2"):
        placements.placement('intra_socket').verify_halves(four)


def test_synthetic_two_ranks_on_one_gpu_are_caught():
    text = ('PROBE rank=0 size=2 host=n1 cpus=0 sockets=0 numa=0\n'
            'PROBE rank=1 size=2 host=n1 cpus=1 sockets=0 numa=0\n'
            'GPUBIND rank=0 host=n1 visible=0 device=0\n'
            'GPUBIND rank=1 host=n1 visible=0 device=0\n')
    two = probe.parse_probe(text, 2)
    with pytest.raises(WrongPlacement, match='ranks 0 and 1 share GPU 0 on n1'):
        probe.verify_gpus(probe.parse_bindings(text), two)
    with pytest.raises(WrongPlacement, match='1 GPU bindings for 2 ranks'):
        probe.verify_gpus(probe.parse_bindings(text)[:1], two)
