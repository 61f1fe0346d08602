"""Fit a partition's :class:`~omb_suite.cost.model.PerfModel` from the suite's own perflogs.

Latency per link from ``osu_latency``'s 8-byte latency, bandwidth per link from ``osu_bw``'s
4 MiB bandwidth (median over the records), then, for every benchmark, scale and link measured,
the ratio of what OSU reported to what the latency-bandwidth model says, per size (median over
the records): the collective cost per scale. Records are the perflog's rows as dicts keyed by
its header (:mod:`omb_suite.perflog_schema`); :func:`read_perflog` reads one
file with the suite's one perflog reader, reporting malformed lines instead of dropping them.
"""

from __future__ import annotations

import re
import statistics
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from omb_suite.cost import model as costmodel
from omb_suite.cost.model import PerfModel, Shape
from omb_suite.mpi import algorithms
from omb_suite.osu import catalogue

_SIZED = re.compile(r'^(?P<metric>[a-z_]+?)_(?P<size>\d+)$')
#: The figure of each kind that the model predicts (the others follow from it).
_UNIT_METRIC = {'collective': 'avg_latency', 'nonblocking': 'pure_comm'}
#: A non-blocking collective's loop runs it alone (pure_comm), then overlapped with as much
#: computation (overall): one iteration of each pass, averaged, is its unit.
_SECOND_PASS = 'overall'


def read_perflog(path: Path) -> tuple[list[dict[str, str]], list[str]]:
    """Rows of one perflog, and one problem per bad line (:func:`omb_suite.perflogs.reader.
    read_rows`: the review's parser; polars is imported only when a history is read)."""
    from omb_suite.perflogs import reader

    return reader.read_rows(path)


def measurable(benchmark: str) -> bool:
    """Whether the fit can learn ``benchmark``'s cost from its records (a program reporting
    latency, bandwidth or a non-blocking loop's figures)."""
    info = catalogue.get(benchmark)
    return info.kind in _UNIT_METRIC or _two_pass(info) or \
        bool({'latency', 'bandwidth'} & set(info.metrics))


def _two_pass(info: catalogue.Benchmark) -> bool:
    """A program whose loop runs each size alone, then overlapped, reporting both as the
    non-blocking collectives do (``osu_partitioned_latency``: ``pure_comm`` and ``overall``)."""
    return {'pure_comm', 'overall'} <= set(info.metrics)


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value not in (None, '', 'null', 'None') else default
    except ValueError:
        return default


def measured_unit(record: dict[str, str]) -> tuple[int, float] | None:
    """(size, the model's unit in us) of one record, or None if it is not a unit figure."""
    try:
        info = catalogue.get(record.get('benchmark') or '')
        value = float(record['perf_value'])
    except (KeyError, ValueError):
        return None
    var = record.get('perf_var', '')
    metric = _UNIT_METRIC.get(info.kind)
    if metric is None and _two_pass(info):
        metric = _UNIT_METRIC['nonblocking']
    if metric and not info.has_sizes:
        return (0, value) if var == metric else None
    match = _SIZED.match(var)
    if not match or value <= 0:
        return None
    size = int(match['size'])
    if metric:
        return (size, value) if match['metric'] == metric else None
    if match['metric'] == 'latency':
        return size, value
    if match['metric'] == 'bandwidth':
        return size, size / value
    return None


def _shape(record: dict[str, str], cores_per_node: int, cores_per_socket: int,
           sockets: int) -> Shape:
    ranks = _int(record.get('num_tasks'), 2)
    nodes = _int(record.get('num_nodes'), 1)
    per_node = _int(record.get('num_tasks_per_node'), max(1, ranks // nodes))
    placement = record.get('placement')
    link = costmodel.link_of(nodes, per_node, cores_per_socket, sockets, placement)
    return Shape(ranks, nodes, per_node, cores_per_node, link)


def _median(values: list[float]) -> float:
    return float(statistics.median(values))


def fit(records: Iterable[dict[str, str]], base: PerfModel, *, cores_per_node: int,
        cores_per_socket: int, sockets: int) -> PerfModel:
    """``base`` with latency and bandwidth per link and the corrections fitted from
    ``records`` (links and benchmarks without records keep what ``base`` says)."""
    records = list(records)
    rows = [r for r in records if measured_unit(r) is not None]
    starts = [r for r in records if r.get('benchmark') == 'osu_init'
              and r.get('perf_var') == 'init_avg' and _float(r.get('perf_value')) is not None]
    if not rows and not starts:
        # nothing measured (a dry run's perflog holds null values): the model stays what it
        # was, the built-in defaults included, which limit nothing
        return base
    shaped = [(r, _shape(r, cores_per_node, cores_per_socket, sockets), measured_unit(r))
              for r in rows]
    shaped = [_with_second_pass(item, records) for item in shaped]
    latency, bandwidth = dict(base.latency_us), dict(base.bandwidth_mbs)
    for link, values in _by_link(shaped, 'osu_latency', 8).items():
        latency[link] = _median(values)
    for link, values in _by_link(shaped, 'osu_bw', 4194304).items():
        bandwidth[link] = 4194304 / _median(values)
    model = replace(base, latency_us=latency, bandwidth_mbs=bandwidth,
                    **_startup(starts, base))
    ratios: dict[tuple[str, int, str], dict[int, list[float]]] = defaultdict(
        lambda: defaultdict(list))
    for record, shape, (size, unit) in shaped:
        if not _default_algorithm(record):
            continue
        modelled = costmodel.modelled_unit_us(record['benchmark'], size, shape, model)
        ratios[(record['benchmark'], shape.ranks, shape.link)][size].append(unit / modelled)
    corrections = {key: sorted((size, _median(v)) for size, v in per_size.items())
                   for key, per_size in ratios.items()}
    return costmodel.with_corrections(model, corrections,
                                      f'fitted from {len(rows)} perflog records')


def _with_second_pass(item, records: list[dict[str, str]]):
    """A non-blocking (or two-pass) record's unit: the mean of its pure_comm and overall at
    that size (the same test run); kept as is where no overall was recorded."""
    record, shape, (size, unit) = item
    info = catalogue.get(record['benchmark'])
    if info.kind != 'nonblocking' and not _two_pass(info):
        return item
    var = f'{_SECOND_PASS}_{size}' if size else _SECOND_PASS
    key = ('display_name', 'job_completion_time', 'num_tasks')
    for other in records:
        if other.get('perf_var') == var and all(other.get(k) == record.get(k) for k in key) \
                and _float(other.get('perf_value')):
            return record, shape, (size, (unit + float(other['perf_value'])) / 2)
    return item


def _startup(records: list[dict[str, str]], base: PerfModel) -> dict[str, float]:
    """Start-up from osu_init's MPI_Init time (ms) by rank count: a line through the points
    (per rank, and the launcher's share on top of its intercept); none: the base's."""
    points = [(_int(r.get('num_tasks'), 2), float(r['perf_value']) / 1e3) for r in records
              if _float(r.get('perf_value')) is not None]
    if not points:
        return {}
    ranks = {x for x, _ in points}
    slope = base.startup_per_rank_s
    if len(ranks) > 1:
        mx = statistics.fmean(x for x, _ in points)
        my = statistics.fmean(y for _, y in points)
        slope = max(0.0, sum((x - mx) * (y - my) for x, y in points)
                    / sum((x - mx) ** 2 for x, _ in points))
    intercept = statistics.median(y - slope * x for x, y in points)
    return {'startup_s': max(0.0, intercept) + costmodel.launcher_s(),
            'startup_per_rank_s': slope, 'startup_per_node_s': 0.0}


def _float(value: str | None) -> float | None:
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _by_link(shaped, benchmark: str, size: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = defaultdict(list)
    for record, shape, (at, unit) in shaped:
        if record['benchmark'] == benchmark and at == size:
            out[shape.link].append(unit)
    return out


def _default_algorithm(record: dict[str, str]) -> bool:
    """Forced algorithms cost what they cost: only the library's default feeds the model."""
    if catalogue.get(record['benchmark']).kind not in catalogue.COLLECTIVE_KINDS:
        return True
    return record.get('algorithm') in (None, '', 'null', 'None', algorithms.DEFAULT)
