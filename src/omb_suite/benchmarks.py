"""The OSU benchmark catalogue (``data/benchmarks.yaml``): one entry per program."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources

import yaml


@dataclass(frozen=True)
class Benchmark:
    name: str
    group: str
    ranks: int | str
    metrics: tuple[str, ...]
    curve: dict[str, tuple[str, str]]
    max_size: int | None
    since: str


@cache
def catalogue() -> dict[str, Benchmark]:
    text = resources.files('omb_suite').joinpath('data/benchmarks.yaml').read_text()
    raw = yaml.safe_load(text)['benchmarks']
    return {
        name: Benchmark(name, e['group'], e['ranks'], tuple(e.get('metrics', ())),
                        {k: (v[0], v[1]) for k, v in (e.get('curve') or {}).items()},
                        e.get('max_size'), str(e.get('since', '5.0')))
        for name, e in raw.items()
    }


def get(name: str) -> Benchmark:
    try:
        return catalogue()[name]
    except KeyError:
        raise KeyError(f'{name!r} is not in the OSU benchmark catalogue '
                       f'(src/omb_suite/data/benchmarks.yaml); add it there') from None


def names(group_prefix: str) -> list[str]:
    """Benchmarks whose group starts with ``group_prefix`` (e.g. ``pt2pt``)."""
    return [n for n, b in catalogue().items() if b.group.startswith(group_prefix)]


#: Unit of each parser column that a check reports.
UNITS: dict[str, str] = {
    'latency': 'us', 'avg_latency': 'us', 'min_latency': 'us', 'max_latency': 'us',
    'p50': 'us', 'p90': 'us', 'p99': 'us', 'overall': 'us', 'compute': 'us',
    'pure_comm': 'us', 'coll_init': 'us', 'mpi_test': 'us', 'mpi_wait': 'us',
    'bandwidth': 'MB/s', 'msg_rate': 'messages/s', 'overlap': '%',
    'init_min': 'ms', 'init_max': 'ms', 'init_avg': 'ms',
}


def unit(column: str) -> str:
    """The unit of a reported column (``''`` for dimensionless ones such as iterations)."""
    return UNITS.get(column, '')
