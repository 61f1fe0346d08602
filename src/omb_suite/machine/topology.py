"""What a partition offers: nodes, sockets per node, cores per socket, GPUs per node.

The one reader of a ReFrame partition's topology (its ``processor``, ``devices`` and
``extras``); it takes the partition object as it is and imports nothing from ReFrame.

Node count: a partition whose tests are steps of one allocation has the nodes of the
allocation ReFrame runs in: launcher ``srunalloc`` inside ``salloc`` (``$SLURM_JOB_NUM_NODES``),
launcher ``flux`` inside ``flux alloc`` (``$FLUX_URI`` set: ``flux getattr size``, one broker
per node). Otherwise ``extras: {num_nodes: N}`` where the configuration says it; without it, a
partition whose scheduler is ``local`` is this one host (1 node), and any other scheduler is
assumed to offer 2 nodes, the fewest that run the inter-node placements, so a new system runs
its inter-node checks before anyone counts its nodes.

Whatever is assumed rather than declared (nodes, CPUs, sockets) :func:`assumptions` names,
with what to declare; the ReFrame layer says it once per partition.
"""

from __future__ import annotations

import functools
import os
import subprocess
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


#: What is assumed when a partition's ``processor`` does not say.
DEFAULT_CPUS, DEFAULT_SOCKETS = 2, 1


def allocation_nodes(launcher: str) -> int | None:
    """The nodes of the allocation ReFrame runs in, for a launcher that starts steps of it:
    ``srunalloc`` in ``salloc``/``sbatch``, ``flux`` in ``flux alloc``/``flux batch``;
    ``None`` outside one."""
    if launcher == 'srunalloc' and os.environ.get('SLURM_JOB_NUM_NODES'):
        return int(os.environ['SLURM_JOB_NUM_NODES'])
    if launcher == 'flux' and os.environ.get('FLUX_URI'):
        return flux_instance_size(os.environ['FLUX_URI'])
    return None


@functools.cache
def flux_instance_size(uri: str) -> int | None:
    """Brokers (one per node) of the Flux instance at ``uri`` (``flux getattr size``, asked
    once per instance: every test case reads its partition's topology)."""
    try:
        out = subprocess.run(['flux', 'getattr', 'size'], capture_output=True, text=True,
                             timeout=30, env={**os.environ, 'FLUX_URI': uri})
    except (OSError, subprocess.TimeoutExpired):
        return None
    size = out.stdout.strip()
    return int(size) if out.returncode == 0 and size.isdigit() else None


def of_partition(part: Any) -> Topology:
    """The topology of a ReFrame partition (``SystemPartition``)."""
    proc = part.processor
    per_core = proc.num_cpus_per_core or 1
    sockets = proc.num_sockets or DEFAULT_SOCKETS
    cpus = proc.num_cpus or DEFAULT_CPUS
    per_socket = (proc.num_cpus_per_socket or cpus // sockets) // per_core
    nodes = allocation_nodes(part.launcher_type.registered_name) or part.extras.get(
        'num_nodes', default_nodes(part.scheduler.registered_name))
    gpus = sum(d.num_devices for d in part.select_devices('gpu'))
    return Topology(int(nodes), sockets, max(per_socket, 1), gpus)


def assumptions(part: Any) -> list[str]:
    """What :func:`of_partition` assumed because the partition's configuration did not say,
    each with its consequence and what to declare (empty when everything was given)."""
    proc, said = part.processor, []
    if not proc.num_cpus:
        said.append(f'no processor.num_cpus: assumed {DEFAULT_CPUS} CPUs per node (largest '
                    'collective scale 2 ranks per node); declare processor: {num_cpus, '
                    'num_cpus_per_core, num_sockets, num_cpus_per_socket}, or let ReFrame '
                    'detect it (reframe --detect-host-topology on a node of the partition)')
    elif not proc.num_sockets:
        said.append(f'no processor.num_sockets: assumed {DEFAULT_SOCKETS} socket per node (no '
                    'inter_socket placement); declare processor.num_sockets and '
                    'num_cpus_per_socket')
    scheduler = part.scheduler.registered_name
    if ('num_nodes' not in part.extras and scheduler != 'local'
            and allocation_nodes(part.launcher_type.registered_name) is None):
        said.append(f'no extras.num_nodes: assumed {default_nodes(scheduler)} nodes (the '
                    'largest scale and the all-node start-up stop there); declare extras: '
                    '{num_nodes: N}')
    return said


def scales(topologies: list[Topology], smallest_top: int = 4) -> list[int]:
    """Powers of two from 2 up to the largest partition's core count (at least
    ``smallest_top``, so a 2-core machine can run 4 ranks oversubscribed)."""
    top = max([smallest_top, *(t.cores for t in topologies)])
    return [2 ** k for k in range(1, top.bit_length()) if 2 ** k <= top]


def end_scales(topology: Topology) -> tuple[int, int]:
    """The smallest and largest collective scale of a partition: 2 ranks, and every core
    of every node (at least 2)."""
    return 2, max(2, topology.cores)
