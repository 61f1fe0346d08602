"""Placements and mappings, each one object read from one table (``data/placements.yaml``).

A :class:`Placement` (``intra_socket``...) puts the two ranks of a pair (and the halves of a
multi-pair run); a :class:`Mapping` (``core``...) spreads the N ranks of a collective or
start-up run. Each knows its needs, its job and the rule the ranks the probe saw
(:mod:`.probe`) must satisfy: a wrong placement fails with what was asked and what was seen.
Its launcher options are the launcher dialect's (:mod:`.dialects`, one record per dialect),
which may say that it cannot express it: the test is then skipped with that reason.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from collections.abc import Mapping as MappingType
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from omb_suite import yamldata
from omb_suite.machine.probe import RankPlace, wrong_placement
from omb_suite.machine.topology import Topology
from omb_suite.mpi import dialects, families
from omb_suite.mpi.dialects import JobNumbers

#: ``{dialect: {placement or mapping name: options}}``, a partition's replacements.
Overrides = MappingType[str, MappingType[str, list[str]]]

#: ReFrame launchers that start the MPI library's own ``mpirun``: its family says the dialect.
MPIRUN_LAUNCHERS = ('mpirun', 'mpiexec')
#: What each ``needs`` key counts, in messages.
_NEEDS = {'nodes': 'nodes', 'sockets': 'sockets per node', 'cores_per_socket': 'cores per socket'}
#: The partition setting that replaces option lists, and the name it had before.
OVERRIDES_KEY, OLD_OVERRIDES_KEY = 'launcher_overrides', 'placement_options'


class PlacementError(ValueError):
    """A placement or mapping that is unknown or cannot be offered."""


@dataclass(frozen=True)
class Shape:
    num_tasks: int
    num_nodes: int

    @property
    def tasks_per_node(self) -> int:
        return math.ceil(self.num_tasks / self.num_nodes)


@dataclass(frozen=True)
class Placing:
    """What placements and mappings share: needs, the rule of the ranks, options per dialect."""

    kind: str
    name: str
    doc: str
    needs: MappingType[str, int]
    ranks: MappingType[str, str]

    def unmet_on(self, topo: Topology, skip: tuple[str, ...] = ()) -> str | None:
        """Why a partition of topology ``topo`` cannot offer this, or ``None``."""
        have = {'nodes': topo.nodes, 'sockets': topo.sockets,
                'cores_per_socket': topo.cores_per_socket}
        for what, need in self.needs.items():
            if what not in skip and have[what] < need:
                return (f'{self.kind} {self.name!r} needs {need} {_NEEDS[what]} but the '
                        f'partition has {have[what]}')
        return None

    def launcher_options(self, dialect: str, overrides: Overrides | None = None,
                         numbers: JobNumbers | None = None) -> list[str]:
        """The options that realise it in ``dialect`` (the partition's override first),
        placeholders filled with the job's ``numbers``; :class:`dialects.Unexpressible`
        where the dialect cannot express it."""
        chosen = (overrides or {}).get(dialect, {}).get(self.name)
        return dialects.dialect(dialect).options_for(
            self.kind, self.name, numbers, None if chosen is None else list(chosen))

    def mv2_env(self, overrides: Overrides | None = None) -> dict[str, str]:
        """MVAPICH2's own binding variables (its ``mv2`` options, or the partition's)."""
        pairs = [item.partition('=') for item in self.launcher_options('mv2', overrides)]
        bad = [key for key, eq, _ in pairs if not eq]
        if bad:
            raise PlacementError(f'mv2 binding of {self.name!r}: {bad} is not VAR=value')
        return {key: value for key, _, value in pairs}


@dataclass(frozen=True)
class Placement(Placing):
    """Two ranks: ``nodes`` x ``tasks_per_node``, observed as ``ranks`` says."""

    nodes: int
    tasks_per_node: int

    @property
    def num_tasks(self) -> int:
        return self.nodes * self.tasks_per_node

    def pair_problem(self, a: RankPlace, b: RankPlace) -> str | None:
        """What is wrong with ranks ``a`` and ``b`` for this placement, or ``None``."""
        if len(a.cpus) == 1 and a.cpus == b.cpus and a.host == b.host:
            return f'both ranks are bound to the same single CPU {min(a.cpus)}'
        if self.ranks['hosts'] == 'different':
            return None if a.host != b.host else f'both ranks run on host {a.host}'
        if a.host != b.host:
            return f'ranks run on different hosts {a.host} and {b.host}'
        sockets = self.ranks.get('sockets')
        if sockets == 'one' and len(a.sockets | b.sockets) != 1:
            return 'ranks are not confined to one socket'
        if sockets == 'different' and (len(a.sockets) != 1 or len(b.sockets) != 1
                                       or a.sockets == b.sockets):
            return 'ranks are not on two different sockets'
        return None

    def verify(self, places: list[RankPlace]) -> None:
        problem = (f'expected 2 ranks, the probe saw {len(places)}' if len(places) != 2
                   else self.pair_problem(*places))
        if problem:
            raise wrong_placement(f'placement {self.name!r}', problem, places)

    def verify_halves(self, places: list[RankPlace]) -> None:
        """Multi-pair runs: rank ``i`` and ``i + N/2`` placed as the placement says."""
        half = len(places) // 2
        for a, b in zip(places[:half], places[half:], strict=True):
            problem = self.pair_problem(a, b)
            if problem:
                raise wrong_placement(f'pairs {self.name!r}',
                                      f'ranks {a.rank} and {b.rank}: {problem}', places)

    def pairs_shape(self, topo: Topology, inter_node_pairs: int | None = None) -> Shape | str:
        """N pairs whose halves sit as the placement says, filling the cores its ``needs``
        name (two nodes: a node's cores, or ``inter_node_pairs``; two sockets: a socket's;
        one socket: half of it), or why the partition cannot hold them."""
        why = self.unmet_on(topo)
        if why is not None:
            return why
        if 'nodes' in self.needs:
            pairs = inter_node_pairs or topo.cores_per_node * self.needs['nodes'] // 2
        else:
            pairs = topo.cores_per_socket * self.needs.get('sockets', 1) // 2
        return Shape(2 * pairs, self.nodes)


@dataclass(frozen=True)
class Mapping(Placing):
    def job_shape(self, ranks: int, topo: Topology, oversubscribe: int = 1) -> Shape | str:
        """The nodes ``ranks`` ranks use, or why it is impossible. Ranks fill as few nodes as
        hold them (``oversubscribe`` ranks per core), at least ``needs['nodes']``: ``node``
        takes the same allocation as ``core`` (at least two nodes) in another rank order."""
        why = self.unmet_on(topo, skip=('nodes',))
        if why is not None:
            return why
        per_node = topo.cores_per_node * max(oversubscribe, 1)
        need = max(math.ceil(ranks / per_node), self.needs.get('nodes', 1))
        if need > topo.nodes:
            return (f'{ranks} ranks mapped by {self.name} need {need} nodes of '
                    f'{topo.cores_per_node} cores (oversubscribe={oversubscribe}) but the '
                    f'partition has {topo.nodes}')
        return Shape(ranks, need)

    def verify(self, places: list[RankPlace], tasks_per_node: int) -> None:
        """Rank order as ``ranks['order']`` says (see data/placements.yaml)."""
        if len(places) >= 2:
            _ORDERS[self.ranks['order']](self.name, places, tasks_per_node)


def _fill_hosts(name: str, places: list[RankPlace], tasks_per_node: int) -> None:
    for prev, this in itertools.pairwise(places):
        if this.rank % tasks_per_node and this.host != prev.host:
            raise wrong_placement(f'mapping "{name}"', f'ranks {prev.rank} and {this.rank} '
                                  f'run on {prev.host} and {this.host}, {tasks_per_node} ranks '
                                  'fill a host first', places)


def _alternate_hosts(name: str, places: list[RankPlace], _: int) -> None:
    a, b = places[0], places[1]
    if len({p.host for p in places}) > 1 and a.host == b.host:
        raise wrong_placement(f'mapping "{name}"', f'ranks 0 and 1 both run on {a.host}', places)


def _alternate_sockets(name: str, places: list[RankPlace], _: int) -> None:
    a, b = places[0], places[1]
    if a.host == b.host and len(a.sockets) == 1 and a.sockets == b.sockets \
            and len(set().union(*(p.sockets for p in places))) > 1:
        raise wrong_placement(f'mapping "{name}"',
                              f'ranks 0 and 1 share socket {min(a.sockets)}', places)


_ORDERS: dict[str, Callable[[str, list[RankPlace], int], None]] = {
    'fill_hosts': _fill_hosts, 'alternate_hosts': _alternate_hosts,
    'alternate_sockets': _alternate_sockets}
_PAIR_RULES = {'hosts': ('same', 'different'), 'sockets': ('one', 'different')}


# ---------------------------------------------------------------- the table


@cache
def _table() -> dict[str, Any]:
    text = resources.files('omb_suite').joinpath('data/placements.yaml').read_text()
    return yamldata.load(text)


def _fields(kind: str, name: str, entry: dict[str, Any]) -> dict[str, Any]:
    ranks = dict(entry['ranks'])
    allowed = _PAIR_RULES if kind == 'placement' else {'order': tuple(_ORDERS)}
    bad = {k: v for k, v in ranks.items() if v not in allowed.get(k, ())}
    if bad or set(_NEEDS) < set(entry.get('needs') or {}):
        raise PlacementError(f'data/placements.yaml: {kind} {name!r}: unknown rule or need '
                             f'{bad or entry["needs"]}; rules: {allowed}, needs: {list(_NEEDS)}')
    return {'kind': kind, 'name': name, 'doc': entry['doc'],
            'needs': dict(entry.get('needs') or {}), 'ranks': ranks}


@cache
def _objects() -> tuple[dict[str, Placement], dict[str, Mapping]]:
    table = _table()
    return ({name: Placement(**_fields('placement', name, e), nodes=e['nodes'],
                             tasks_per_node=e['tasks_per_node'])
             for name, e in table['placements'].items()},
            {name: Mapping(**_fields('mapping', name, e))
             for name, e in table['mappings'].items()})


def placement_names() -> list[str]:
    return list(_objects()[0])


def mapping_names() -> list[str]:
    return list(_objects()[1])


def placement(name: str) -> Placement:
    return _get(0, 'placement', name)


def mapping(name: str) -> Mapping:
    return _get(1, 'mapping', name)


def _get(index: int, kind: str, name: str) -> Any:
    try:
        return _objects()[index][name]
    except KeyError:
        raise PlacementError(f'unknown {kind} {name!r}; known {kind}s: '
                             f'{", ".join(_objects()[index])}') from None


def offered_placements(topologies: list[Topology]) -> list[str]:
    """Placements some partition can offer."""
    return [name for name, p in _objects()[0].items()
            if any(p.unmet_on(t) is None for t in topologies)]


def offered_mappings(topologies: list[Topology]) -> list[str]:
    """Mappings some partition can tell apart from ``core`` (see their ``needs``)."""
    return [name for name, m in _objects()[1].items()
            if any(m.unmet_on(t) is None for t in topologies)]


# ---------------------------------------------------------------- launchers


def launcher_dialect(launcher: str, mpi_family: str | None) -> str:
    """Which dialect a launcher speaks: for ``mpirun``/``mpiexec`` the MPI family's own (its
    record, :func:`omb_suite.mpi.families.mpirun_dialect`), else the dialect whose record names
    the launcher (``srun``, ``jsrun``...)."""
    if launcher in MPIRUN_LAUNCHERS:
        return families.mpirun_dialect(mpi_family)
    fixed = dialects.of_launcher(launcher)
    if fixed is not None:
        return fixed.name
    names = ', '.join(dict.fromkeys([*MPIRUN_LAUNCHERS, *dialects.launcher_names()]))
    raise PlacementError(f'launcher {launcher!r} cannot place MPI ranks; use a partition '
                         f'whose launcher is one of {names} (data/launchers/)')


def overrides_of(extras: MappingType[str, Any]) -> tuple[Overrides, str | None]:
    """A partition's ``launcher_overrides``, and a deprecation message where it still uses
    the old key ``placement_options`` (read the same way)."""
    if OLD_OVERRIDES_KEY not in extras:
        return extras.get(OVERRIDES_KEY) or {}, None
    message = (f'extras[{OLD_OVERRIDES_KEY!r}] is deprecated: rename it to {OVERRIDES_KEY!r} '
               '(same content: {dialect: {placement or mapping: options}})')
    return {**extras[OLD_OVERRIDES_KEY], **(extras.get(OVERRIDES_KEY) or {})}, message


def srun_mpi_options(dialect: str, mpi_family: str | None,
                     srun_mpi: MappingType[str, str] | None) -> list[str]:
    """``--mpi=<plugin>`` for srun, from the partition's ``extras['srun_mpi']`` table, else the
    family record's plugin."""
    if dialect != 'srun' or not srun_mpi:
        return []
    family = mpi_family or ''
    plugin = srun_mpi.get(family) or families.srun_plugin(family)
    return [f'--mpi={plugin}'] if plugin else []


def launch_options(where: Placing, launcher: str, mpi_family: str | None,
                   numbers: JobNumbers, *, srun_mpi: MappingType[str, str] | None = None,
                   overrides: Overrides | None = None) -> list[str]:
    """Everything the launcher line needs to place the ranks as ``where`` says: what the
    dialect starts every launch through ``launcher`` with (a step of an allocation,
    ``srunalloc``, names its node count as a batch job would; ``flux run`` its nodes and
    tasks), srun's ``--mpi`` plugin (the partition's ``srun_mpi`` table), then ``where``'s
    options, placeholders filled with the job's ``numbers``. Raises
    :class:`dialects.Unexpressible` where the dialect cannot place ranks so."""
    dialect = launcher_dialect(launcher, mpi_family)
    return [*dialects.dialect(dialect).prefix(launcher, numbers),
            *srun_mpi_options(dialect, mpi_family, srun_mpi),
            *where.launcher_options(dialect, overrides, numbers)]


def oversubscribe_options(options: list[str], dialect: str) -> list[str]:
    """Mapping options plus what lets ranks share cores, as the dialect's record says."""
    return dialects.dialect(dialect).oversubscribed(options)
