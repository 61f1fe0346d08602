"""Read the placement probe's output and judge it against the placement asked for.

The probe (``probe/placement_probe.c``) prints one ``PROBE rank=...`` line per rank.
A placement is *verified*, not assumed: ``intra_socket`` needs both ranks on one host
and one socket, ``inter_socket`` on one host and two different sockets, ``inter_node``
on two hosts. Two ranks pinned to the same single CPU always fail (they would time-share
one core and report milliseconds instead of microseconds).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

_LINE = re.compile(
    r'^PROBE rank=(?P<rank>\d+) size=(?P<size>\d+) host=(?P<host>\S+) '
    r'cpus=(?P<cpus>\S+) sockets=(?P<sockets>\S+) numa=(?P<numa>\S+)\s*$'
)
_DONE = re.compile(r'^PROBE done ranks=(\d+)\s*$')


class ProbeError(ValueError):
    """The probe output is missing, incomplete, or contradicts the placement."""


@dataclass(frozen=True)
class RankPlace:
    rank: int
    host: str
    cpus: frozenset[int]
    sockets: frozenset[int]
    numa: frozenset[int]

    def describe(self) -> str:
        return (f'rank {self.rank}: host={self.host} cpus={_fmt(self.cpus)} '
                f'socket={_fmt(self.sockets)} numa={_fmt(self.numa)}')


def source_dir() -> str:
    """Directory holding ``placement_probe.c`` (the ReFrame build fixture's sources)."""
    return str(Path(str(resources.files('omb_suite').joinpath('probe'))))


def _ids(text: str) -> frozenset[int]:
    if text == 'none':
        return frozenset()
    out: set[int] = set()
    for part in text.split(','):
        lo, _, hi = part.partition('-')
        out.update(range(int(lo), int(hi or lo) + 1))
    return frozenset(out)


def _fmt(ids: frozenset[int]) -> str:
    return ','.join(map(str, sorted(ids))) or 'none'


def parse_probe(text: str) -> list[RankPlace]:
    """Parse probe output; raise :class:`ProbeError` when it is absent or incomplete."""
    ranks: dict[int, RankPlace] = {}
    size = done = None
    for line in text.splitlines():
        if m := _LINE.match(line.strip()):
            size = int(m['size'])
            ranks[int(m['rank'])] = RankPlace(int(m['rank']), m['host'], _ids(m['cpus']),
                                              _ids(m['sockets']), _ids(m['numa']))
        elif m := _DONE.match(line.strip()):
            done = int(m[1])
    if not ranks:
        raise ProbeError('placement probe printed no PROBE lines: it did not run '
                         '(see the job\'s stderr for the launcher error)')
    missing = sorted(set(range(size or 0)) - set(ranks))
    if missing or done is None:
        raise ProbeError(f'placement probe output is incomplete: ranks {missing} missing'
                         if missing else 'placement probe output has no final "PROBE done" '
                         'line: it was cut off')
    return [ranks[r] for r in sorted(ranks)]


def observed(places: list[RankPlace]) -> str:
    """Compact summary for the perflog, e.g. ``vm:cpu0/s0/n0;vm:cpu1/s0/n0``."""
    return ';'.join(f'{p.host}:cpu{_fmt(p.cpus)}/s{_fmt(p.sockets)}/n{_fmt(p.numa)}'
                    for p in places)


def verify(placement: str, places: list[RankPlace]) -> None:
    """Raise :class:`ProbeError` showing asked-for vs observed placement on mismatch."""
    problem = _problem(placement, places)
    if problem:
        shown = '; '.join(p.describe() for p in places)
        raise ProbeError(f'placement {placement!r} does not hold: {problem} (observed: {shown})')


def _problem(placement: str, places: list[RankPlace]) -> str | None:
    if len(places) != 2:
        return f'expected 2 ranks, the probe saw {len(places)}'
    a, b = places
    if len(a.cpus) == 1 and a.cpus == b.cpus and a.host == b.host:
        return f'both ranks are bound to the same single CPU {_fmt(a.cpus)}'
    if placement == 'inter_node':
        return None if a.host != b.host else f'both ranks run on host {a.host}'
    if a.host != b.host:
        return f'ranks run on different hosts {a.host} and {b.host}'
    if placement == 'intra_socket':
        if len(a.sockets | b.sockets) != 1:
            return (f'ranks are not confined to one socket (sockets {_fmt(a.sockets)} and '
                    f'{_fmt(b.sockets)})')
        return None
    if placement == 'inter_socket':
        if len(a.sockets) != 1 or len(b.sockets) != 1 or a.sockets == b.sockets:
            return (f'ranks are not on two different sockets (sockets {_fmt(a.sockets)} and '
                    f'{_fmt(b.sockets)})')
        return None
    return f'unknown placement {placement!r}'


def verify_mapping(mapping: str, places: list[RankPlace]) -> None:
    """Check a collective mapping: neighbouring ranks share a host (``core``) or not
    (``node``, when more than one host is used); ``socket`` spreads over sockets."""
    hosts = [p.host for p in places]
    if mapping == 'node' and len(set(hosts)) > 1 and hosts[0] == hosts[1]:
        raise ProbeError(f'mapping "node" should alternate hosts but ranks 0 and 1 both run on '
                         f'{hosts[0]}: {observed(places)}')
    if mapping == 'core' and len(places) > 1 and len(set(hosts)) > 1 and hosts[0] != hosts[1]:
        raise ProbeError(f'mapping "core" should fill a host first but ranks 0 and 1 run on '
                         f'{hosts[0]} and {hosts[1]}: {observed(places)}')
    if mapping == 'socket' and len(places) > 1:
        a, b = places[0], places[1]
        if a.host == b.host and len(a.sockets) == 1 and a.sockets == b.sockets:
            nsock = len(set().union(*(p.sockets for p in places)))
            if nsock > 1:
                raise ProbeError(f'mapping "socket" should alternate sockets but ranks 0 and 1 '
                                 f'share socket {_fmt(a.sockets)}: {observed(places)}')
