"""Placements and mappings: from a name to the job shape and launcher options, and the check
that the ranks ended up where the name says.

Point-to-point checks use a *placement* (``intra_socket``, ``inter_socket``, ``inter_node``):
exactly two ranks. Collective and start-up checks use a *mapping* (``core``, ``socket``,
``node``) of N ranks; multi-pair checks place the two halves of N pairs like a placement.
The options per launcher dialect live in ``data/placements.yaml``; this module selects from
it, shapes jobs, and verifies what the per-rank probe observed (:mod:`omb_suite.probe`):
a wrong placement fails with what was asked and what was seen.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import yaml

from omb_suite.mpilib import HYDRA_FAMILIES
from omb_suite.probe import Binding, RankPlace
from omb_suite.topology import Topology

#: Launcher options that let more ranks than cores run (``oversubscribe`` > 1), per dialect.
_OVERSUBSCRIBE = {'ompi': ['--oversubscribe'], 'hydra': [], 'srun': ['--overcommit']}


class PlacementError(ValueError):
    """A placement or mapping that is unknown or cannot be offered."""


class WrongPlacement(ValueError):
    """The ranks are not where the placement or mapping says (asked vs observed)."""


@dataclass(frozen=True)
class Placement:
    name: str
    doc: str
    num_nodes: int
    tasks_per_node: int
    needs: dict[str, int]

    @property
    def num_tasks(self) -> int:
        return self.num_nodes * self.tasks_per_node


@dataclass(frozen=True)
class Shape:
    num_tasks: int
    num_nodes: int

    @property
    def tasks_per_node(self) -> int:
        return math.ceil(self.num_tasks / self.num_nodes)


@cache
def _table() -> dict[str, Any]:
    text = resources.files('omb_suite').joinpath('data/placements.yaml').read_text()
    return yaml.safe_load(text)


def placement_names() -> list[str]:
    return list(_table()['placements'])


def mapping_names() -> list[str]:
    return list(_table()['mappings'])


def get_placement(name: str) -> Placement:
    try:
        entry = _table()['placements'][name]
    except KeyError:
        raise PlacementError(
            f'unknown placement {name!r}; known placements: {", ".join(placement_names())}'
        ) from None
    return Placement(name, entry['doc'], entry['nodes'], entry['tasks_per_node'],
                     dict(entry.get('needs', {})))


# ---------------------------------------------------------------- launcher options


def launcher_key(launcher: str, mpi_family: str | None) -> str:
    """Which option dialect a launcher speaks: ``srun``, ``ompi`` or ``hydra``."""
    if launcher in ('srun', 'srunalloc'):
        return 'srun'
    if launcher in ('mpirun', 'mpiexec'):
        return 'hydra' if (mpi_family or '') in HYDRA_FAMILIES else 'ompi'
    raise PlacementError(
        f'launcher {launcher!r} cannot place MPI ranks; use a partition whose launcher is '
        f'mpirun, mpiexec, srun or srunalloc'
    )


def _options(kind: str, name: str, launcher: str, mpi_family: str | None,
             overrides: dict[str, dict[str, list[str]]] | None) -> list[str]:
    key = launcher_key(launcher, mpi_family)
    if overrides and name in overrides.get(key, {}):
        return list(overrides[key][name])
    try:
        return list(_table()[kind][name][key])
    except KeyError:
        known = ', '.join(_table()[kind])
        raise PlacementError(f'unknown {kind[:-1]} {name!r}; known: {known}') from None


def placement_options(name: str, launcher: str, mpi_family: str | None,
                      overrides: dict[str, dict[str, list[str]]] | None = None) -> list[str]:
    """Launcher options that realise a point-to-point placement."""
    return _options('placements', name, launcher, mpi_family, overrides)


def mapping_options(name: str, launcher: str, mpi_family: str | None,
                    overrides: dict[str, dict[str, list[str]]] | None = None) -> list[str]:
    """Launcher options that realise a mapping of N ranks."""
    return _options('mappings', name, launcher, mpi_family, overrides)


def mv2_binding_env(name: str, overrides: dict[str, dict[str, list[str]]] | None = None
                    ) -> dict[str, str]:
    """MVAPICH2's own binding variables for a placement or mapping (its ``mv2`` entry, or
    the partition's ``placement_options['mv2'][name]``)."""
    entry = {**_table()['placements'], **_table()['mappings']}.get(name)
    if entry is None:
        raise PlacementError(f'unknown placement or mapping {name!r}; known: '
                             f'{", ".join([*placement_names(), *mapping_names()])}')
    chosen = (overrides or {}).get('mv2', {}).get(name, entry['mv2'])
    pairs = [item.partition('=') for item in chosen]
    bad = [key for key, eq, _ in pairs if not eq]
    if bad:
        raise PlacementError(f'mv2 binding of {name!r}: {bad} is not VAR=value')
    return {key: value for key, _, value in pairs}


def srun_mpi_options(launcher: str, mpi_family: str | None,
                     srun_mpi: dict[str, str] | None) -> list[str]:
    """``--mpi=<plugin>`` for srun, from the partition's ``extras['srun_mpi']`` table."""
    if launcher_key(launcher, mpi_family) != 'srun' or not srun_mpi:
        return []
    family = mpi_family or ''
    plugin = srun_mpi.get(family) or srun_mpi.get(family.split('-')[0])
    return [f'--mpi={plugin}'] if plugin else []


def oversubscribe_options(options: list[str], dialect: str) -> list[str]:
    """Mapping options plus what lets ranks share cores (Open MPI: bindings may overload)."""
    if dialect == 'ompi':
        options = [f'{opt}:overload-allowed' if prev == '--bind-to' and opt != 'none' else opt
                   for prev, opt in zip(['', *options[:-1]], options, strict=True)]
    return [*_OVERSUBSCRIBE[dialect], *options]


# ---------------------------------------------------------------- what a partition offers


def unmet_needs(placement: Placement, topo: Topology) -> str | None:
    """Why a partition cannot offer ``placement``, or ``None`` when it can."""
    have = {'nodes': topo.nodes, 'sockets': topo.sockets,
            'cores_per_socket': topo.cores_per_socket}
    for what, need in placement.needs.items():
        if have[what] < need:
            return (f'placement {placement.name!r} needs {need} {what.replace("_", " ")} '
                    f'but the partition has {have[what]}')
    return None


def mappings_for(topologies: list[Topology]) -> list[str]:
    """Mappings some partition can tell apart from ``core``: ``socket`` needs two sockets,
    ``node`` two nodes."""
    needs = {'socket': lambda t: t.sockets >= 2, 'node': lambda t: t.nodes >= 2}
    return [name for name in mapping_names()
            if any(needs.get(name, lambda t: True)(t) for t in topologies)]


def job_shape(ranks: int, mapping: str, topo: Topology, oversubscribe: int = 1) -> Shape | str:
    """The nodes that ``ranks`` ranks mapped by ``mapping`` use, or why it is impossible.

    Ranks fill as few nodes as hold them (``oversubscribe`` ranks per core); ``node``
    takes the same allocation, at least two nodes, and deals ranks round-robin over it,
    so ``core`` and ``node`` compare the same nodes in a different rank order.
    """
    if mapping not in mapping_names():
        return f'unknown mapping {mapping!r}; known: {", ".join(mapping_names())}'
    if mapping == 'socket' and topo.sockets < 2:
        return (f'mapping {mapping!r} needs 2 sockets per node but the partition has '
                f'{topo.sockets}')
    per_node = topo.cores_per_node * max(oversubscribe, 1)
    need = math.ceil(ranks / per_node)
    if mapping == 'node':
        need = max(need, 2)
    if need > topo.nodes:
        return (f'{ranks} ranks mapped by {mapping} need {need} nodes of '
                f'{topo.cores_per_node} cores (oversubscribe={oversubscribe}) but the '
                f'partition has {topo.nodes}')
    return Shape(ranks, need)


# ---------------------------------------------------------------- verification


def _wrong(what: str, problem: str, places: list[RankPlace]) -> WrongPlacement:
    shown = '; '.join(p.describe() for p in places)
    return WrongPlacement(f'{what} does not hold: {problem} (observed: {shown})')


def verify_pair(placement: str, places: list[RankPlace]) -> None:
    """Two ranks as ``placement`` says: one socket, two sockets of one host, or two hosts."""
    problem = _pair_problem(placement, places)
    if problem:
        raise _wrong(f'placement {placement!r}', problem, places)


def _pair_problem(placement: str, places: list[RankPlace]) -> str | None:
    if len(places) != 2:
        return f'expected 2 ranks, the probe saw {len(places)}'
    a, b = places
    if len(a.cpus) == 1 and a.cpus == b.cpus and a.host == b.host:
        return f'both ranks are bound to the same single CPU {min(a.cpus)}'
    if placement == 'inter_node':
        return None if a.host != b.host else f'both ranks run on host {a.host}'
    if a.host != b.host:
        return f'ranks run on different hosts {a.host} and {b.host}'
    if placement == 'intra_socket' and len(a.sockets | b.sockets) != 1:
        return 'ranks are not confined to one socket'
    if placement == 'inter_socket' and (len(a.sockets) != 1 or len(b.sockets) != 1
                                        or a.sockets == b.sockets):
        return 'ranks are not on two different sockets'
    if placement not in ('intra_socket', 'inter_socket'):
        return f'unknown placement {placement!r}'
    return None


def verify_ranks(places: list[RankPlace], *, nodes: int, oversubscribed: bool = False) -> None:
    """Ranks on exactly ``nodes`` hosts, no two pinned to one CPU (unless oversubscribed)."""
    hosts = {p.host for p in places}
    if len(hosts) != nodes:
        raise _wrong(f'{nodes} node(s)', f'the ranks run on {len(hosts)}', places)
    if oversubscribed:
        return
    pinned: dict[tuple[str, frozenset[int]], int] = {}
    for place in places:
        if len(place.cpus) == 1:
            other = pinned.setdefault((place.host, place.cpus), place.rank)
            if other != place.rank:
                raise _wrong('one rank per core', f'ranks {other} and {place.rank} are both '
                             f'bound to CPU {min(place.cpus)} of {place.host}', places)


def verify_mapping(mapping: str, places: list[RankPlace], tasks_per_node: int) -> None:
    """Rank order as the mapping says: ``core`` fills a host with ``tasks_per_node`` ranks
    before the next, ``node`` deals neighbouring ranks to different hosts (when more than one
    is used), ``socket`` alternates sockets where the ranks use more than one."""
    if len(places) < 2:
        return
    a, b = places[0], places[1]
    several_hosts = len({p.host for p in places}) > 1
    if mapping == 'node' and several_hosts and a.host == b.host:
        raise _wrong('mapping "node"', f'ranks 0 and 1 both run on {a.host}', places)
    if mapping == 'core':
        for prev, this in itertools.pairwise(places):
            if this.rank % tasks_per_node and this.host != prev.host:
                raise _wrong('mapping "core"', f'ranks {prev.rank} and {this.rank} run on '
                             f'{prev.host} and {this.host}, {tasks_per_node} ranks fill a '
                             'host first', places)
    if mapping == 'socket' and a.host == b.host and len(a.sockets) == 1 \
            and a.sockets == b.sockets and len(set().union(*(p.sockets for p in places))) > 1:
        raise _wrong('mapping "socket"', f'ranks 0 and 1 share socket {min(a.sockets)}',
                     places)


def verify_halves(placement: str, places: list[RankPlace]) -> None:
    """Multi-pair runs: rank ``i`` and ``i + N/2`` placed as ``placement`` says."""
    half = len(places) // 2
    for a, b in zip(places[:half], places[half:], strict=True):
        problem = _pair_problem(placement, [a, b])
        if problem:
            raise _wrong(f'pairs {placement!r}', f'ranks {a.rank} and {b.rank}: {problem}',
                         places)


def verify_gpus(bindings: list[Binding], places: list[RankPlace]) -> None:
    """Every rank reported its GPU and no two ranks of one host share one."""
    if len(bindings) != len(places):
        raise _wrong('one GPU per rank', f'{len(bindings)} GPU bindings for {len(places)} '
                     'ranks (the rank wrapper did not report a device for every rank)', places)
    seen: dict[tuple[str, str], int] = {}
    for b in bindings:
        if (b.host, b.device) in seen:
            raise _wrong('one GPU per rank', f'ranks {seen[b.host, b.device]} and {b.rank} '
                         f'share GPU {b.device} on {b.host} (visible {b.visible})', places)
        seen[b.host, b.device] = b.rank

