"""What the selected ReFrame system offers: parameter lists fixed at class creation, and how
each partition launches (its launcher's options for a placement or mapping).

ReFrame fixes parameters when a check class is created, while partitions and environments
are known per test case; so a check is parameterised over what *some* partition of the
selected system offers (scales, mappings, node counts, MPI libraries), and a test case that
its own partition cannot run is skipped at setup with the reason.
"""

from __future__ import annotations

import os
import shlex

import reframe as rfm
from reframe.core.logging import getlogger
from reframe.core.runtime import runtime

from omb_suite.launch.placements import (
    Overrides,
    Placing,
    launch_options,
    offered_mappings,
    offered_placements,
    overrides_of,
)
from omb_suite.machine import topology
from omb_suite.machine.topology import Topology
from omb_suite.mpi.algorithms import Library
from omb_suite.mpi.dialects import JobNumbers, Unexpressible
from omb_suite.rfm import environ_facts

#: Partitions already warned about a deprecated setting (once per session each).
_WARNED: set[str] = set()


def topologies() -> list[Topology]:
    environ_facts.say_what_is_missing()
    parts = runtime().system.partitions
    for part in parts:
        say_assumed(part)
    return [topology.of_partition(part) for part in parts]


def say_assumed(part) -> None:
    """Once per session and partition: the shape the suite assumed because the partition's
    configuration did not give it (:func:`omb_suite.machine.topology.assumptions`)."""
    key = f'{part.fullname}:shape'
    said = topology.assumptions(part)
    if said and key not in _WARNED:
        _WARNED.add(key)
        getlogger().warning(f'partition {part.fullname}: ' + '; '.join(said)
                            + ' (docs/site-config.md#what-your-partition-should-declare)')


def libraries() -> frozenset[Library]:
    """The MPI libraries (family, version) of the MPI environments the partitions use: from
    their ``extras``, else found in the environment (:mod:`omb_suite.rfm.environ_facts`)."""
    found = {environ_facts.mpi_library(env) for part in runtime().system.partitions
             for env in part.environs if 'mpi' in env.features}
    return frozenset((family, version) for family, version in found if family)


def all_scales() -> list[int]:
    """Powers of two up to the largest partition's core count (at least 4), or up to
    ``$OMB_MAX_SCALE`` ranks when that is larger: a small machine explores the rank counts of
    a bigger one oversubscribed (with ``-S oversubscribe=<ranks per core>``)."""
    top = os.environ.get('OMB_MAX_SCALE', '')
    if top and not top.isdigit():
        raise ValueError(f'OMB_MAX_SCALE={top!r}: give a number of ranks, e.g. 32')
    return topology.scales(topologies(), smallest_top=max(4, int(top or 0)))


def verdict_scales() -> list[int]:
    """The verdict set's collective scales: every partition's smallest and largest."""
    return sorted({s for t in topologies() for s in topology.end_scales(t)})


def mappings() -> list[str]:
    """Mappings some partition can tell apart."""
    return offered_mappings(topologies())


def end_nodes() -> list[int]:
    """One node and every partition's node count."""
    return sorted({1, *(t.nodes for t in topologies())})


def placements() -> list[str]:
    """Point-to-point placements some partition can offer."""
    return offered_placements(topologies())


def launcher_overrides(part) -> Overrides:
    """The partition's ``launcher_overrides`` (the deprecated ``placement_options`` still
    read, with a warning naming the new key once per session)."""
    overrides, deprecated = overrides_of(part.extras)
    if deprecated and part.fullname not in _WARNED:
        _WARNED.add(part.fullname)
        getlogger().warning(f'partition {part.fullname}: {deprecated}')
    return overrides


def placed_launch(test: rfm.RegressionTest, where: Placing) -> list[str]:
    """The launcher options that place ``test``'s ranks as ``where`` says on its partition
    with its MPI (see :func:`omb_suite.launch.placements.launch_options`), the dialect's
    placeholders filled from the job and the partition's topology; skips the test, with the
    reason, where the partition's launcher cannot express ``where``. Each option is quoted
    for the shell: ReFrame writes them into the job script as they are, and ``flux run``'s
    CPU map separates its cpusets with ``;``."""
    part = test.current_partition
    numbers = JobNumbers.of(test.num_tasks, test.num_nodes, topology.of_partition(part),
                            test.num_tasks_per_node)
    family = getattr(test, 'mpi_family', None) or \
        environ_facts.mpi_library(test.current_environ)[0]
    try:
        options = launch_options(where, part.launcher_type.registered_name, family, numbers,
                                 srun_mpi=part.extras.get('srun_mpi'),
                                 overrides=launcher_overrides(part))
    except Unexpressible as why:
        test.skip(f'{why} ({part.fullname})')
    return [shlex.quote(option) for option in options]
