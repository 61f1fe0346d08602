"""The placement probe: where each rank of a job runs (host, CPU set, socket, NUMA node, GPU).

Two producers print the same ``PROBE`` lines:

- ``job_sources/omb_rank.sh``, the per-rank wrapper every OSU run goes through: it prints the
  rank's line (and its ``GPUBIND`` line with ``--gpu``) and execs the benchmark, so the
  placement observed is the one the benchmark runs with, in the same launch;
- ``job_sources/placement_probe.c``, a tiny MPI program (rank 0 gathers and prints every line, then
  ``PROBE done``), run by the ``PlacementProbe`` check where no OSU is installed yet.

This module reads those lines and checks what every run must satisfy (node count, one rank
per core, one GPU per rank); :mod:`omb_suite.launch.placements` judges them against a placement.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

#: anywhere in a line: another rank's message without its newline (OSU 7.3's "Requested
#: memory limit too low, using [1048576] instead.") may come first
_LINE = re.compile(
    r'PROBE rank=(?P<rank>\S+) size=(?P<size>\S+) host=(?P<host>\S+) '
    r'cpus=(?P<cpus>\S+) sockets=(?P<sockets>\S+) numa=(?P<numa>\S+)\s*$'
)
_DONE = re.compile(r'PROBE done ranks=(\d+)\s*$')
_BIND = re.compile(r'^GPUBIND rank=(\d+) host=(\S+) visible=(\S+) device=(\S+)\s*$', re.M)

#: The per-rank wrapper (package data) and the MPI probe's source.
WRAPPER = 'omb_rank.sh'
PROBE_SOURCE = 'placement_probe.c'


class ProbeError(ValueError):
    """The probe output is missing, incomplete, or garbled."""


class WrongPlacement(ValueError):
    """The ranks are not where the placement or mapping says (asked vs observed)."""


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


@dataclass(frozen=True)
class Binding:
    """The GPU a rank uses, as the wrapper reported it."""

    rank: int
    host: str
    visible: str
    device: str


def source_dir() -> str:
    """Directory holding the wrapper and ``placement_probe.c``."""
    return str(Path(str(resources.files('omb_suite').joinpath('job_sources'))))


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


def parse_probe(text: str, expect_ranks: int | None = None) -> list[RankPlace]:
    """The ranks' places, by rank.

    With ``expect_ranks`` (the wrapper: one line per rank, no final line) every rank
    0..N-1 must have reported once; without it (the MPI probe) the output must end with
    ``PROBE done``. Raises :class:`ProbeError` saying what is missing.
    """
    ranks: dict[int, RankPlace] = {}
    size = done = None
    for line in text.splitlines():
        if m := _LINE.search(line.strip()):
            if not m['rank'].isdigit():
                raise ProbeError('a rank printed its PROBE line without knowing its rank: the '
                                 'launcher set none of the rank variables the wrapper reads '
                                 '(OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, SLURM_PROCID)')
            try:
                place = RankPlace(int(m['rank']), m['host'], _ids(m['cpus']),
                                  _ids(m['sockets']), _ids(m['numa']))
            except ValueError:
                raise ProbeError(f'garbled probe line: {line.strip()!r}') from None
            if place.rank in ranks:
                raise ProbeError(f'rank {place.rank} reported twice: two jobs wrote one output, '
                                 f'or the launcher started the program twice per rank')
            ranks[place.rank] = place
            size = int(m['size']) if m['size'].isdigit() else size
        elif m := _DONE.search(line.strip()):
            done = int(m[1])
    if not ranks:
        raise ProbeError('no PROBE lines: the ranks did not start, or died before rank 0 '
                         'printed (the job\'s stderr says why)')
    want = expect_ranks if expect_ranks is not None else (size or 0)
    missing = sorted(set(range(want)) - set(ranks))
    extra = sorted(set(ranks) - set(range(want))) if expect_ranks is not None else []
    if missing or extra:
        raise ProbeError(f'expected ranks 0-{want - 1}; ' + (
            f'ranks {missing} did not report' if missing else f'unexpected ranks {extra}'))
    if expect_ranks is None and done is None:
        raise ProbeError('placement probe output has no final "PROBE done" line: it was cut off')
    return [ranks[r] for r in sorted(ranks)]


def parse_bindings(text: str) -> list[Binding]:
    """The ``GPUBIND`` lines of a job's output, by rank."""
    found = {int(r): Binding(int(r), h, v, d) for r, h, v, d in _BIND.findall(text)}
    return [found[r] for r in sorted(found)]


def observed(places: list[RankPlace], bindings: list[Binding] | None = None) -> str:
    """Compact summary for the perflog: ``vm:cpu0/s0/n0;vm:cpu1/s0/n0`` (``/gpu0`` with GPUs).
    Three or more ranks in a row on one host, one CPU each and in CPU order, are one entry
    ``host:cpu0..127/s0-1/n0-7`` (``..``: one rank per CPU), so the summary of a full node
    stays as short as that of two ranks."""
    gpus = {b.rank: b.device for b in bindings or []}
    if bindings:
        return ';'.join(f'{_place(p)}/gpu{gpus.get(p.rank, "?")}' for p in places)
    return ';'.join(_run(run) if len(run) > 2 else ';'.join(_place(p) for p in run)
                    for run in _runs(places))


def _place(p: RankPlace) -> str:
    return f'{p.host}:cpu{_fmt(p.cpus)}/s{_fmt(p.sockets)}/n{_fmt(p.numa)}'


def _runs(places: list[RankPlace]) -> list[list[RankPlace]]:
    """Consecutive ranks on one host, each on one CPU, the CPUs ascending by one."""
    runs: list[list[RankPlace]] = []
    for p in places:
        last = runs[-1][-1] if runs else None
        if (last is not None and last.host == p.host and len(last.cpus) == len(p.cpus) == 1
                and min(p.cpus) == min(last.cpus) + 1):
            runs[-1].append(p)
        else:
            runs.append([p])
    return runs


def _run(run: list[RankPlace]) -> str:
    sockets = frozenset(s for p in run for s in p.sockets)
    numa = frozenset(n for p in run for n in p.numa)
    return (f'{run[0].host}:cpu{min(run[0].cpus)}..{min(run[-1].cpus)}/s{_fmt(sockets)}'
            f'/n{_fmt(numa)}')


def wrong_placement(what: str, problem: str, places: list[RankPlace]) -> WrongPlacement:
    shown = '; '.join(p.describe() for p in places)
    return WrongPlacement(f'{what} does not hold: {problem} (observed: {shown})')


def verify_ranks(places: list[RankPlace], *, nodes: int, oversubscribed: bool = False) -> None:
    """Ranks on exactly ``nodes`` hosts, no two pinned to one CPU (unless oversubscribed)."""
    hosts = {p.host for p in places}
    if len(hosts) != nodes:
        raise wrong_placement(f'{nodes} node(s)', f'the ranks run on {len(hosts)}', places)
    if oversubscribed:
        return
    pinned: dict[tuple[str, frozenset[int]], int] = {}
    for place in places:
        if len(place.cpus) == 1:
            other = pinned.setdefault((place.host, place.cpus), place.rank)
            if other != place.rank:
                raise wrong_placement('one rank per core', f'ranks {other} and {place.rank} are '
                                      f'both bound to CPU {min(place.cpus)} of {place.host}',
                                      places)


def verify_gpus(bindings: list[Binding], places: list[RankPlace]) -> None:
    """Every rank reported its GPU and no two ranks of one host share one."""
    if len(bindings) != len(places):
        raise wrong_placement('one GPU per rank', f'{len(bindings)} GPU bindings for '
                              f'{len(places)} ranks (the rank wrapper did not report a device '
                              'for every rank)', places)
    seen: dict[tuple[str, str], int] = {}
    for b in bindings:
        if (b.host, b.device) in seen:
            raise wrong_placement('one GPU per rank', f'ranks {seen[b.host, b.device]} and '
                                  f'{b.rank} share GPU {b.device} on {b.host} (visible '
                                  f'{b.visible})', places)
        seen[b.host, b.device] = b.rank
