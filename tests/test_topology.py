"""The one reader of a partition's topology, on ReFrame's own partition objects."""

from __future__ import annotations

from types import SimpleNamespace

from omb_suite import topology
from omb_suite.topology import Topology


def partition(scheduler: str, extras: dict, gpus: int = 0, launcher: str = 'srun', **proc):
    processor = SimpleNamespace(**{'num_cpus': None, 'num_cpus_per_core': None,
                                   'num_cpus_per_socket': None, 'num_sockets': None, **proc})
    devices = [SimpleNamespace(num_devices=gpus)] if gpus else []
    return SimpleNamespace(processor=processor, extras=extras,
                           scheduler=SimpleNamespace(registered_name=scheduler),
                           launcher_type=SimpleNamespace(registered_name=launcher),
                           select_devices=lambda kind: devices if kind == 'gpu' else [])


def test_nodes_default_once_local_is_one_host_a_batch_partition_two():
    assert topology.of_partition(partition('local', {}, num_cpus=2)).nodes == 1
    assert topology.of_partition(partition('slurm', {}, num_cpus=2)).nodes == 2
    assert topology.of_partition(partition('local', {'num_nodes': 2}, num_cpus=2)).nodes == 2


def test_steps_of_one_allocation_have_the_allocations_nodes(monkeypatch):
    alloc = partition('local', {'num_nodes': 2}, launcher='srunalloc', num_cpus=2)
    assert topology.of_partition(alloc).nodes == 2          # listing outside an allocation
    monkeypatch.setenv('SLURM_JOB_NUM_NODES', '16')
    assert topology.of_partition(alloc).nodes == 16
    assert topology.of_partition(partition('slurm', {}, num_cpus=2)).nodes == 2


def test_cores_from_reframe_processor_info_with_smt():
    epyc = partition('slurm', {'num_nodes': 64}, gpus=4, num_cpus=256, num_cpus_per_core=2,
                     num_cpus_per_socket=128, num_sockets=2)
    assert topology.of_partition(epyc) == Topology(64, 2, 64, 4)
    assert topology.of_partition(epyc).cores_per_node == 128


def test_undetected_processor_is_a_two_core_host():
    assert topology.of_partition(partition('local', {})) == Topology(1, 1, 2, 0)


def test_scales_and_end_scales():
    local, cluster = Topology(1, 1, 2), Topology(64, 2, 64)
    assert topology.scales([local]) == [2, 4]            # 4: oversubscribed on 2 cores
    assert topology.scales([local, cluster])[-1] == 8192
    assert topology.end_scales(local) == (2, 2)
    assert topology.end_scales(cluster) == (2, 8192)
