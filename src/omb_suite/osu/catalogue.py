"""The OSU catalogue (``data/catalogue.yaml``): every program OSU installs, what it reports and
which options it takes. The only place that knows OSU's programs and their options.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from omb_suite import yamldata

#: Unit of each parser column that a check reports.
UNITS: dict[str, str] = {
    'latency': 'us', 'avg_latency': 'us', 'min_latency': 'us', 'max_latency': 'us',
    'p50': 'us', 'p90': 'us', 'p99': 'us', 'overall': 'us', 'compute': 'us',
    'pure_comm': 'us', 'coll_init': 'us', 'mpi_test': 'us', 'mpi_wait': 'us',
    'bandwidth': 'MB/s', 'msg_rate': 'messages/s', 'overlap': '%',
    'init_min': 'ms', 'init_max': 'ms', 'init_avg': 'ms',
}
#: Catalogue kinds run by the collective checks.
COLLECTIVE_KINDS = ('collective', 'nonblocking')


@dataclass(frozen=True)
class Benchmark:
    """One OSU program (see the comment at the top of ``data/catalogue.yaml``)."""

    name: str
    group: str
    kind: str
    metrics: tuple[str, ...]
    curve: dict[str, tuple[str, str]]
    max_size: int | None
    since: str
    needs: str | None = None
    min_ranks: int = 2
    data_options: bool = True
    validates: bool = True
    syncs: tuple[str, ...] = ()
    thread_multiple: bool = False
    loop: str | None = None
    partitions: int = 1
    headline: tuple[str, ...] = ()

    def stands_alone(self, figure: str) -> bool:
        """Whether a change of ``figure`` (a per-size metric or a curve figure) is a finding on
        its own; the others (a collective's min/max latency, a peak) stand only beside a change
        of a headline figure of the same curve (``headline`` in data/catalogue.yaml)."""
        return not self.headline or figure in self.headline

    @property
    def collective(self) -> str:
        """'osu_ireduce_scatter' -> 'ireduce_scatter' (the algorithm tables' key)."""
        return self.name.removeprefix('osu_')

    @property
    def nonblocking(self) -> bool:
        return self.kind == 'nonblocking'

    @property
    def has_sizes(self) -> bool:
        """False for programs without a message-size sweep (barriers, start-up)."""
        return self.max_size is not None

    @property
    def fixed_size(self) -> bool:
        """One element whatever ``-m`` says (fetch-and-op, compare-and-swap)."""
        return self.max_size == 1

    def missing_from(self, osu_version: str | None) -> str | None:
        """Why OSU ``osu_version`` has no such program (it is older than ``since``), or
        None when it has it or the version is unknown."""
        if osu_version and release(osu_version) < release(self.since):
            return f'OSU {osu_version} has no {self.name} (it exists since OSU {self.since})'
        return None


def release(version: str) -> tuple[int, ...]:
    """'7.1-1' -> (7, 1, 1), '5.6.3' -> (5, 6, 3): OSU versions in release order."""
    return tuple(int(n) for n in re.findall(r'\d+', version))


@cache
def _data() -> dict[str, Any]:
    text = resources.files('omb_suite').joinpath('data/catalogue.yaml').read_text()
    return yamldata.load(text)


def _syncs(entry: dict[str, Any]) -> tuple[str, ...]:
    rma = _data()['one_sided']
    which = entry.get('syncs')
    if which is None:
        return ()
    return tuple(rma['active_syncs'] if which == 'active' else rma['syncs'])


@cache
def catalogue() -> dict[str, Benchmark]:
    return {
        name: Benchmark(name, e['group'], e['kind'], tuple(e.get('metrics') or ()),
                        {k: (v[0], v[1]) for k, v in (e.get('curve') or {}).items()},
                        e.get('max_size'), str(e.get('since', '5.0')), e.get('needs'),
                        int(e.get('min_ranks', 2)), bool(e.get('data_options', True)),
                        bool(e.get('validates', True)), _syncs(e),
                        bool(e.get('thread_multiple', False)), e.get('loop'),
                        int(e.get('partitions', 1)), tuple(e.get('headline') or ()))
        for name, e in _data()['benchmarks'].items()
    }


def get(name: str) -> Benchmark:
    try:
        return catalogue()[name]
    except KeyError:
        raise KeyError(f'{name!r} is not in the OSU catalogue (src/omb_suite/data/catalogue.yaml);'
                       f' add it there') from None


def names(*kinds: str) -> list[str]:
    """Programs of the given kinds (``pt2pt``, ``collective``, ...), in catalogue order."""
    return [n for n, b in catalogue().items() if b.kind in kinds]


def verdict(kind: str) -> list[str]:
    """The programs of a kind in the default verdict set (``data/catalogue.yaml``)."""
    return list(_data()['verdict'][kind])


def verdict_set() -> dict[str, list[str]]:
    """Every kind of the verdict set with its programs, in the catalogue's order."""
    return {kind: list(names) for kind, names in _data()['verdict'].items()
            if isinstance(names, list)}


def check_of(name: str) -> str:
    """The check (class) that runs a program: the verdict set's when it is in it, else the
    exploration's (``osu_mbw_mr`` runs in both: its verdict window is OsuMbwMr's)."""
    entry = get(name)
    verdict, explore = _data()['checks'][entry.kind]
    if name in _data()['verdict'].get(entry.kind, []) and verdict:
        return verdict
    return explore


def verdict_window_size() -> int:
    """``osu_mbw_mr``'s window (``-W``) in the verdict set."""
    return int(_data()['verdict']['mbw_mr_window_size'])


def unit(column: str) -> str:
    """The unit of a reported column (``''`` for dimensionless ones such as iterations)."""
    return UNITS.get(column, '')


def buffers() -> tuple[str, ...]:
    """OSU's ``-d`` buffer placements (send, receive), host first."""
    return tuple(_data()['buffers'])


def datatype_size(datatype: str) -> int:
    """Bytes per element of an OSU ``-T`` datatype (``''`` = OSU's MPI_CHAR)."""
    sizes = _data()['datatypes']
    try:
        return sizes[datatype.lower() or 'mpi_char']
    except KeyError:
        raise ValueError(f'datatype {datatype!r} is not an OSU -T datatype; use one of '
                         f'{", ".join(sizes)}') from None


def rma_windows() -> dict[str, str]:
    """One-sided ``-w`` values -> the name OSU prints (``MPI_Win_allocate``)."""
    return dict(_data()['one_sided']['windows'])


def rma_syncs() -> dict[str, str]:
    """One-sided ``-s`` values -> the name OSU prints (``MPI_Win_flush``)."""
    return dict(_data()['one_sided']['syncs'])


def one_sided_cases() -> list[tuple[str, str, str]]:
    """Every (benchmark, window, sync) that OSU accepts, in catalogue order."""
    return [(b.name, window, sync) for b in catalogue().values() if b.syncs
            for window in rma_windows() for sync in b.syncs]
