"""What a partition offers: nodes, sockets per node, cores per socket, GPUs per node.

The one reader of a ReFrame partition's topology (its ``processor``, ``devices`` and
``extras``); it takes the partition object as it is and imports nothing from ReFrame.

Node count: a partition whose tests are steps of one allocation (launcher ``srunalloc``) has
the nodes of the allocation ReFrame runs in (``$SLURM_JOB_NUM_NODES``). Otherwise
``extras: {num_nodes: N}`` where the configuration says it; without it, a partition whose
scheduler is ``local`` is this one host (1 node), and any other scheduler is assumed to offer
2 nodes, the fewest that run the inter-node placements, so a new system runs its inter-node
checks before anyone counts its nodes (set ``num_nodes`` to the real count for larger scales).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Topology:
    nodes: int
    sockets: int
    cores_per_socket: int
    gpus_per_node: int = 0

    @property
    def cores_per_node(self) -> int:
        return self.sockets * self.cores_per_socket

    @property
    def cores(self) -> int:
        return self.nodes * self.cores_per_node


def default_nodes(scheduler: str) -> int:
    """Nodes of a partition whose configuration does not say (see the module doc)."""
    return 1 if scheduler == 'local' else 2


def of_partition(part: Any) -> Topology:
    """The topology of a ReFrame partition (``SystemPartition``)."""
    proc = part.processor
    per_core = proc.num_cpus_per_core or 1
    sockets = proc.num_sockets or 1
    cpus = proc.num_cpus or 2
    per_socket = (proc.num_cpus_per_socket or cpus // sockets) // per_core
    nodes = part.extras.get('num_nodes', default_nodes(part.scheduler.registered_name))
    if part.launcher_type.registered_name == 'srunalloc':
        nodes = os.environ.get('SLURM_JOB_NUM_NODES', nodes)
    gpus = sum(d.num_devices for d in part.select_devices('gpu'))
    return Topology(int(nodes), sockets, max(per_socket, 1), gpus)


def scales(topologies: list[Topology], smallest_top: int = 4) -> list[int]:
    """Powers of two from 2 up to the largest partition's core count (at least
    ``smallest_top``, so a 2-core machine can run 4 ranks oversubscribed)."""
    top = max([smallest_top, *(t.cores for t in topologies)])
    return [2 ** k for k in range(1, top.bit_length()) if 2 ** k <= top]


def end_scales(topology: Topology) -> tuple[int, int]:
    """The smallest and largest collective scale of a partition: 2 ranks, and every core
    of every node (at least 2)."""
    return 2, max(2, topology.cores)
