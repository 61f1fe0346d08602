"""Launcher dialects, each one record of data (``data/launchers/<dialect>.yaml``).

A dialect is how one launcher (or one MPI library's own ``mpirun``) says where ranks go: per
placement and mapping (:mod:`.placements`) either its options, or ``{skip: reason}`` where it
cannot express them; the options every launch through a ReFrame launcher of it starts with
(``launchers``); how it lets ranks share cores (``oversubscribe``, or why it cannot). Options
hold placeholders for the numbers of the job, filled at run time from the job and the
partition's topology (:class:`JobNumbers`): ``{tasks}``, ``{nodes}``, ``{tasks_per_node}``,
``{sockets}``, ``{cores_per_socket}``, ``{socket1_core}`` (the first core of socket 1, cores
being numbered socket by socket as Linux does), and two CPU lists of one node's ranks, joined
by the separator after the colon: ``{core_list:,}`` (cores in order) and
``{socket_cycle:;}`` (cores dealt round-robin over the sockets).
"""

from __future__ import annotations

import math
import string
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from omb_suite import yamldata
from omb_suite.machine.topology import Topology
from omb_suite.mpi.records import Either, Fields, Flag, Items, Table, Text, check

PLACEHOLDERS = ('tasks', 'nodes', 'tasks_per_node', 'sockets', 'cores_per_socket',
                'socket1_core', 'core_list', 'socket_cycle')
_OPTIONS = Items(of=Text(), empty=True)
#: The keys of a dialect record (``doc`` and ``options`` required, the others may be left out).
SCHEMA = Fields(fields={
    'doc': Text(), 'launchers': Table(of=_OPTIONS, nullable=True),
    'command': Items(of=Text(), nullable=True),
    'options': Table(of=Either(choices=(_OPTIONS, Fields(fields={'skip': Text()}, extra=True)))),
    'oversubscribe': Either(nullable=True, choices=(Text(), Fields(extra=True))),
    'environment': Flag(nullable=True)})
_REQUIRED = ('doc', 'options')


class DialectError(ValueError):
    """A dialect that is unknown or whose record is malformed."""


class Unexpressible(DialectError):
    """What a dialect cannot express: the test asking for it is skipped with this reason."""


class CpuList(tuple):
    """CPU numbers that a format spec joins: ``format(CpuList((0, 1)), ';') == '0;1'``."""

    def __format__(self, spec: str) -> str:
        return (spec or ',').join(map(str, self))


@dataclass(frozen=True)
class JobNumbers:
    """The numbers of one job that fill a dialect's placeholders."""

    tasks: int
    nodes: int
    tasks_per_node: int
    topology: Topology

    @classmethod
    def of(cls, tasks: int, nodes: int, topology: Topology,
           tasks_per_node: int | None = None) -> JobNumbers:
        return cls(tasks, nodes, tasks_per_node or math.ceil(tasks / max(nodes, 1)), topology)

    def fields(self) -> dict[str, Any]:
        topo, per_node = self.topology, self.tasks_per_node
        cores = max(topo.cores_per_node, 1)
        # rank i of a node: socket i % sockets, the (i // sockets)-th core of that socket
        cycle = [(i % topo.sockets) * topo.cores_per_socket + i // topo.sockets
                 for i in range(per_node)]
        return {'tasks': self.tasks, 'nodes': self.nodes, 'tasks_per_node': per_node,
                'sockets': topo.sockets, 'cores_per_socket': topo.cores_per_socket,
                'socket1_core': topo.cores_per_socket,
                'core_list': CpuList(i % cores for i in range(per_node)),
                'socket_cycle': CpuList(c % cores for c in cycle)}


def fill(options: tuple[str, ...] | list[str], numbers: JobNumbers | None) -> list[str]:
    """``options`` with their placeholders replaced by the job's numbers."""
    if numbers is None:
        if any(_placeholders(opt) for opt in options):
            raise DialectError(f'{list(options)} need the job\'s numbers (JobNumbers)')
        return list(options)
    fields = numbers.fields()
    return [opt.format_map(fields) for opt in options]


def _placeholders(option: str) -> set[str]:
    return {name.split(':')[0] for _, name, _, _ in string.Formatter().parse(option) if name}


@dataclass(frozen=True)
class Skip:
    """A placement or mapping a dialect cannot express, and why; ``one_per_node``: the
    options that still express it where every node holds one rank (no order to choose)."""

    reason: str
    one_per_node: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Dialect:
    name: str
    doc: str
    launchers: Mapping[str, tuple[str, ...]]
    options: Mapping[str, tuple[str, ...] | Skip]
    oversubscribe: Mapping[str, Any] | str
    environment: bool = False
    #: The command of the first launcher of ``launchers`` where ReFrame lacks it
    #: (``[flux, run]``), ``()`` if none.
    command: tuple[str, ...] = ()

    def options_for(self, kind: str, name: str, numbers: JobNumbers | None = None,
                    override: list[str] | None = None) -> list[str]:
        """The options of placement or mapping ``name`` (the partition's ``override``
        first), or :class:`Unexpressible` saying why the dialect cannot place it so."""
        entry = override if override is not None else self.options.get(name)
        if entry is None:
            raise Unexpressible(f'{self.doc} has no options for {kind} {name!r} '
                                f'(data/launchers/{self.name}.yaml; a partition may give '
                                f'its own in extras launcher_overrides {self.name})')
        if isinstance(entry, Skip):
            if entry.one_per_node is not None and numbers and numbers.tasks_per_node == 1:
                return fill(entry.one_per_node, numbers)
            raise Unexpressible(f'{self.doc} cannot express {kind} {name!r}: {entry.reason}')
        return fill(entry, numbers)

    def prefix(self, launcher: str, numbers: JobNumbers | None) -> list[str]:
        """What every launch through ReFrame's ``launcher`` of this dialect starts with."""
        return fill(self.launchers.get(launcher, ()), numbers)

    def oversubscribed(self, options: list[str]) -> list[str]:
        """``options`` plus what lets ranks share cores (suffixes of bindings, not ``none``)."""
        if isinstance(self.oversubscribe, str):
            raise Unexpressible(f'{self.doc} cannot oversubscribe: {self.oversubscribe}')
        suffix = self.oversubscribe.get('suffix') or {}
        marked = [opt + suffix[prev] if prev in suffix and opt != 'none' else opt
                  for prev, opt in zip(['', *options[:-1]], options, strict=True)]
        return [*self.oversubscribe.get('add', []), *marked]


def _skip(where: str, name: str, entry: dict[str, Any]) -> Skip:
    if not isinstance(entry.get('skip'), str) or set(entry) - {'skip', 'one_per_node'}:
        raise DialectError(f'{where}: {name}: give a list of options or {{skip: reason}} '
                           f'(optionally one_per_node: [options]), not {entry}')
    one = entry.get('one_per_node')
    return Skip(entry['skip'], None if one is None else tuple(map(str, one)))


def read_record(name: str, entry: dict[str, Any]) -> Dialect:
    where = f'data/launchers/{name}.yaml'
    if not isinstance(entry, dict):
        raise DialectError(f'{where}: not a mapping of the keys {", ".join(SCHEMA.fields)}')
    unknown = set(entry) - set(SCHEMA.fields)
    if unknown or any(key not in entry for key in _REQUIRED):
        raise DialectError(f'{where}: fields {sorted(unknown)} unknown or doc/options '
                           f'missing; fields: {sorted(SCHEMA.fields)}')
    check(where, {k: entry.get(k) for k in SCHEMA.fields}, SCHEMA, error=DialectError)
    options = {k: _skip(where, k, v) if isinstance(v, dict) else tuple(map(str, v))
               for k, v in entry['options'].items()}
    launchers = {k: tuple(map(str, v)) for k, v in (entry.get('launchers') or {}).items()}
    lists = [*launchers.values(), *(o.one_per_node or () if isinstance(o, Skip) else o
                                     for o in options.values())]
    used = {p for opts in lists for opt in opts for p in _placeholders(opt)}
    if used - set(PLACEHOLDERS):
        raise DialectError(f'{where}: unknown placeholders {sorted(used - set(PLACEHOLDERS))}; '
                           f'known: {", ".join(PLACEHOLDERS)}')
    command = tuple(entry.get('command') or ())
    if command and not launchers:
        raise DialectError(f'{where}: a command registers the first ReFrame launcher of '
                           f'launchers, and it names none')
    return Dialect(name, entry['doc'], launchers, options, entry.get('oversubscribe') or {},
                   bool(entry.get('environment')), command)


@cache
def names() -> tuple[str, ...]:
    """Every dialect with a record, by file name."""
    return tuple(sorted(p.name[:-5] for p in _folder().iterdir() if p.name.endswith('.yaml')))


def _folder() -> Any:
    return resources.files('omb_suite').joinpath('data/launchers')


@cache
def _read(name: str) -> Dialect:
    return read_record(name, yamldata.load(_folder().joinpath(f'{name}.yaml').read_text()))


@cache
def dialects() -> dict[str, Dialect]:
    """Every dialect whose record loads; a bad record is reported (a warning naming its file
    and key) and left out, so that only what uses that dialect fails (:func:`dialect`)."""
    found = {}
    for name in names():
        try:
            found[name] = _read(name)
        except DialectError as err:
            warnings.warn(f'{err}; the dialect {name} is left out until its record is fixed',
                          stacklevel=2)
    for name in _claiming_another_launcher(found):
        del found[name]
    return found


def _claiming_another_launcher(found: dict[str, Dialect]) -> list[str]:
    """Records that name a ReFrame launcher another record names too, reported (a warning
    naming both files) and left out: where one of them is named after the launcher it keeps
    it, and only the other is left out; otherwise both are."""
    out: list[str] = []
    for launcher in {lnc for d in found.values() for lnc in d.launchers}:
        claims = sorted(n for n, d in found.items() if launcher in d.launchers)
        if len(claims) < 2:
            continue
        bad = [n for n in claims if n != launcher] if launcher in claims else claims
        files = ' and '.join(f'data/launchers/{n}.yaml' for n in claims)
        for name in bad:
            warnings.warn(f'the ReFrame launcher {launcher!r} is named in the launchers of '
                          f'{files}: one record per launcher (leave it out of the other); '
                          f'the dialect {name} is left out until its record is fixed',
                          stacklevel=3)
        out += bad
    return sorted(set(out))


def dialect(name: str) -> Dialect:
    if name not in names():
        raise DialectError(f'unknown launcher dialect {name!r}; known: '
                           f'{", ".join(names())} (data/launchers/)')
    record = _read(name)
    if name not in dialects():  # it names a launcher another record names
        others = [n for n in names() if n != name]
        claimed = [lnc for lnc in record.launchers if any(lnc in _launchers_of(n) for n in others)]
        raise DialectError(f'data/launchers/{name}.yaml: launchers: {claimed} are named by '
                           f'another record too: one record per launcher (leave it out of '
                           f'one of them)')
    return record


def _launchers_of(name: str) -> tuple[str, ...]:
    try:
        return tuple(_read(name).launchers)
    except DialectError:
        return ()


def of_launcher(launcher: str) -> Dialect | None:
    """The dialect a ReFrame launcher always speaks (``srun``, ``jsrun``...), or ``None``
    where the MPI library decides (``mpirun``, ``mpiexec``). Two records naming the same
    launcher are refused, naming both."""
    claims = [d for d in dialects().values() if launcher in d.launchers]
    if len(claims) > 1:
        raise DialectError(f'the ReFrame launcher {launcher!r} is named in the launchers of '
                           + ' and '.join(f'data/launchers/{d.name}.yaml' for d in claims)
                           + ': one record per launcher (leave it out of the other)')
    return claims[0] if claims else None


def launcher_names() -> list[str]:
    """Every ReFrame launcher a record names (each speaks that record's dialect)."""
    return [launcher for d in dialects().values() for launcher in d.launchers]


def new_launchers() -> dict[str, tuple[str, ...]]:
    """``{ReFrame launcher name: command}`` of the launchers records add to ReFrame's."""
    return {next(iter(d.launchers)): d.command for d in dialects().values() if d.command}
