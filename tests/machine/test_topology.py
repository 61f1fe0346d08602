"""The one reader of a partition's topology, on ReFrame's own partition objects."""

from __future__ import annotations

from types import SimpleNamespace

from omb_suite.machine import topology
from omb_suite.machine.topology import Topology


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


def test_flux_steps_in_flux_alloc_have_the_allocations_nodes(monkeypatch, tmp_path):
    """Inside ``flux alloc -N 4`` (``FLUX_URI`` set) the instance's size, not the 128 nodes
    declared for the whole cluster; outside it the declared count (a stand-in ``flux``)."""
    flux = tmp_path / 'flux'
    flux.write_text('#!/bin/sh\n[ "$1 $2" = "getattr size" ] && echo 4\n')
    flux.chmod(0o755)
    monkeypatch.setenv('PATH', f'{tmp_path}:/usr/bin:/bin')
    part = partition('local', {'num_nodes': 128}, launcher='flux', num_cpus=4)
    monkeypatch.delenv('FLUX_URI', raising=False)
    assert topology.of_partition(part).nodes == 128
    monkeypatch.setenv('FLUX_URI', 'local:///tmp/flux-x/local-0')
    assert topology.of_partition(part).nodes == 4
    assert topology.assumptions(partition('slurm', {}, launcher='flux', num_cpus=4,
                                          num_sockets=1)) == []


def test_what_was_assumed_is_named_with_what_to_declare(monkeypatch):
    monkeypatch.delenv('SLURM_JOB_NUM_NODES', raising=False)
    bare = topology.assumptions(partition('slurm', {}))
    assert len(bare) == 2
    assert bare[0].startswith('no processor.num_cpus: assumed 2 CPUs per node')
    assert 'declare processor: {num_cpus' in bare[0]
    assert bare[1].startswith('no extras.num_nodes: assumed 2 nodes')
    assert 'declare extras: {num_nodes: N}' in bare[1]
    one_socket = topology.assumptions(partition('slurm', {'num_nodes': 8}, num_cpus=64))
    assert one_socket == [
        'no processor.num_sockets: assumed 1 socket per node (no inter_socket placement); '
        'declare processor.num_sockets and num_cpus_per_socket']
    assert topology.assumptions(partition('local', {}, num_cpus=2, num_sockets=1)) == []
    declared = partition('slurm', {'num_nodes': 8}, num_cpus=64, num_sockets=2)
    assert topology.assumptions(declared) == []


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
