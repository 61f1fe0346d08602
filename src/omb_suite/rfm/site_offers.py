"""What the selected ReFrame system offers, for parameter lists fixed at class creation.

ReFrame fixes parameters when a check class is created, while partitions and environments
are known per test case; so a check is parameterised over what *some* partition of the
selected system offers (scales, mappings, node counts, MPI libraries), and a test case that
its own partition cannot run is skipped at setup with the reason.
"""

from __future__ import annotations

from reframe.core.runtime import runtime

from omb_suite import topology
from omb_suite.algorithms import Library
from omb_suite.placements import get_placement, mappings_for, placement_names, unmet_needs
from omb_suite.topology import Topology


def topologies() -> list[Topology]:
    return [topology.of_partition(part) for part in runtime().system.partitions]


def libraries() -> frozenset[Library]:
    """The MPI libraries (family, version) of the environments the partitions use."""
    return frozenset((str(env.extras.get('mpi_family')), env.extras.get('mpi_version'))
                     for part in runtime().system.partitions for env in part.environs
                     if env.extras.get('mpi_family'))


def all_scales() -> list[int]:
    """Powers of two up to the largest partition's core count (at least 4)."""
    return topology.scales(topologies())


def verdict_scales() -> list[int]:
    """The verdict set's collective scales: every partition's smallest and largest."""
    return sorted({s for t in topologies() for s in topology.end_scales(t)})


def mappings() -> list[str]:
    """Mappings some partition can tell apart."""
    return mappings_for(topologies())


def end_nodes() -> list[int]:
    """One node and every partition's node count."""
    return sorted({1, *(t.nodes for t in topologies())})


def placements() -> list[str]:
    """Point-to-point placements some partition can offer."""
    return [name for name in placement_names()
            if any(unmet_needs(get_placement(name), t) is None
                   for t in topologies())]
