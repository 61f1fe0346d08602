"""The cost model: how long a test will take, from OSU's own loop and a partition's performance.

A test's wall time is its launches' start-up plus, for each size OSU runs, warm-up and timed
iterations (as OSU chooses them: :func:`omb_suite.osu.limits.loop`) times one iteration: the
operation (a collective, a round trip, a window of messages) and, for collectives, the barrier
OSU puts after each. One operation's time comes from a :class:`PerfModel`: latency and
bandwidth per link (``intra_socket``, ``inter_socket``, ``inter_node``) and textbook collective
costs (``data/perf_model.yaml``), times the correction fitted for the benchmark at that scale
from the suite's own perflogs (:mod:`omb_suite.cost.fit`). A site's first run uses what its
partition declares (extras ``perf_model``) or the defaults.

The time limit of a test is a stated multiple of its prediction with a floor
(:func:`time_limit`); a test stopped there says how much slower than the model it ran
(:func:`slower_message`).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field, replace
from functools import cache
from importlib import resources
from typing import Any

from omb_suite import yamldata
from omb_suite.osu import catalogue
from omb_suite.osu import limits as osu_limits

LINKS = ('intra_socket', 'inter_socket', 'inter_node')
#: The barrier OSU runs after each timed collective (its cost is part of every iteration).
BARRIER = 'osu_barrier'
#: (benchmark, ranks, link) -> [(size, measured / modelled)], sorted by size.
Corrections = dict[tuple[str, int, str], list[tuple[int, float]]]


@cache
def _data() -> dict[str, Any]:
    return yamldata.load(resources.files('omb_suite').joinpath('data/perf_model.yaml')
                          .read_text())


@dataclass(frozen=True)
class PerfModel:
    """A partition's performance: what one operation costs, and one launch's start-up."""

    latency_us: dict[str, float]
    bandwidth_mbs: dict[str, float]
    startup_s: float
    startup_per_node_s: float
    startup_per_rank_s: float
    per_size_s: float
    corrections: Corrections = field(default_factory=dict)
    source: str = 'default'
    #: fitted from the partition's perflogs (its corrections say which programs were measured)
    fitted: bool = False


def model_for(extras: dict | None) -> PerfModel:
    """The partition's declared ``perf_model`` (its extras) over the defaults; a bad entry is
    an error naming it."""
    base = dict(_data()['default'])
    declared = dict((extras or {}).get('perf_model') or {})
    source = 'declared' if declared else 'default'
    unknown = set(declared) - set(base)
    if unknown:
        raise ValueError(f'perf_model: unknown keys {sorted(unknown)}; known: {sorted(base)} '
                         '(docs/systems.md)')
    for key in ('latency_us', 'bandwidth_mbs'):
        declared[key] = {**base[key], **(declared.get(key) or {})}
        bad = {k: v for k, v in declared[key].items() if k not in LINKS or not float(v) > 0}
        if bad:
            raise ValueError(f'perf_model.{key}: {bad} is not a positive value per link '
                             f'({", ".join(LINKS)})')
    merged = {**base, **declared}
    return PerfModel({k: float(v) for k, v in merged['latency_us'].items()},
                     {k: float(v) for k, v in merged['bandwidth_mbs'].items()},
                     float(merged['startup_s']), float(merged['startup_per_node_s']),
                     float(merged['startup_per_rank_s']), float(merged['per_size_s']),
                     source=source)


@dataclass(frozen=True)
class Shape:
    """Where a test's ranks run: how many, on how many nodes, over which link."""

    ranks: int
    nodes: int
    tasks_per_node: int
    cores_per_node: int
    link: str

    @property
    def oversubscription(self) -> float:
        return max(1.0, self.tasks_per_node / max(1, self.cores_per_node))


def link_of(nodes: int, tasks_per_node: int, cores_per_socket: int, sockets: int,
            placement: str | None = None) -> str:
    """The link a job's messages cross: its placement's, else the widest its ranks span
    (ranks beyond a socket's cores on a one-socket node share that socket)."""
    if placement in LINKS:
        return placement
    if nodes > 1:
        return 'inter_node'
    spans = sockets > 1 and tasks_per_node > max(1, cores_per_socket)
    return 'inter_socket' if spans else 'intra_socket'


def _terms(ranks: int) -> dict[str, float]:
    log = math.ceil(math.log2(max(ranks, 2)))
    frac = (ranks - 1) / ranks
    return {'one': 1, 'two': 2, 'log': log, '2log': 2 * log, 'lin': ranks - 1,
            'frac': frac, '2frac': 2 * frac, 'log2max': min(log, 2)}


def _alpha_beta(model: PerfModel, link: str) -> tuple[float, float]:
    """Latency (us) and bandwidth (bytes/us) of a link."""
    return model.latency_us[link], model.bandwidth_mbs[link]


def modelled_unit_us(benchmark: str, size: int, shape: Shape, model: PerfModel) -> float:
    """The figure OSU reports, as microseconds, from latency and bandwidth alone: a collective's
    latency, a one-way latency, or the time per message of a bandwidth test."""
    info = catalogue.get(benchmark)
    alpha, beta = _alpha_beta(model, shape.link)
    slow = shape.oversubscription
    if info.kind in catalogue.COLLECTIVE_KINDS:
        spec = _data()['collectives'][osu_limits.base_name(benchmark)]
        terms = _terms(shape.ranks)
        shared = shape.tasks_per_node if spec.get('nic_shared') and shape.nodes > 1 else 1
        cost = terms[spec['alpha']] * alpha
        if 'beta' in spec:
            cost += terms[spec['beta']] * size * shared / beta
        return cost * slow
    if osu_limits.loop_kind(benchmark) == 'latency':
        return (alpha + size / beta) * slow
    pairs = max(1, shape.ranks // 2) if info.kind == 'multi_pair' and shape.nodes > 1 else 1
    both = 2 if benchmark.startswith('osu_bibw') else 1
    return (size * pairs / (beta * both) + alpha / osu_limits.window()) * slow


def unit_us(benchmark: str, size: int, shape: Shape, model: PerfModel) -> float:
    """:func:`modelled_unit_us` times the correction fitted for this benchmark and scale."""
    return modelled_unit_us(benchmark, size, shape, model) * correction(
        model.corrections, benchmark, shape.ranks, shape.link, size)


def correction(table: Corrections, benchmark: str, ranks: int, link: str, size: int) -> float:
    """Measured / modelled for a benchmark: at its scale, else the nearest fitted scale (in
    log2 of the ranks), interpolated over log2 of the size; 1 when never measured. (A
    geometric interpolation between the two neighbouring scales did worse on this host's
    2-32 ranks: benchmarks/scale_costs.py collectives, median error 0.57 against 0.46.)"""
    scales = [r for (b, r, ln) in table if b == benchmark and ln == link]
    if not scales:
        return 1.0
    nearest = min(scales, key=lambda r: (abs(math.log2(r) - math.log2(max(ranks, 1))), -r))
    return _over_sizes(table[(benchmark, nearest, link)], size)


def _over_sizes(points: list[tuple[int, float]], size: int) -> float:
    if size <= points[0][0]:
        return points[0][1]
    for (s0, f0), (s1, f1) in itertools.pairwise(points):
        if size <= s1:
            t = (math.log2(size) - math.log2(s0)) / (math.log2(s1) - math.log2(s0))
            return math.exp(math.log(f0) + t * (math.log(f1) - math.log(f0)))
    return points[-1][1]


def iteration_us(benchmark: str, size: int, shape: Shape, model: PerfModel) -> float:
    """One iteration of OSU's timed loop at ``size``."""
    info = catalogue.get(benchmark)
    unit = unit_us(benchmark, size, shape, model)
    if info.kind in catalogue.COLLECTIVE_KINDS:
        return unit + unit_us(BARRIER, 0, shape, model)
    if osu_limits.loop_kind(benchmark) == 'latency':
        return unit * (1 if info.kind == 'one_sided' else 2)
    # osu_bibw's figure counts both directions' windows: one iteration moves twice the bytes
    # its unit is of (measured: as long as osu_bw or longer, never half: 2.58 s against 2.23 s
    # on local, 15.5 s against 9.3 s on the mini-cluster)
    both = 2 if benchmark.startswith('osu_bibw') else 1
    return unit * osu_limits.window() * both


@dataclass(frozen=True)
class Prediction:
    """Predicted wall time of a test, with where it goes and when each size ends."""

    seconds: float
    startup_s: float
    loop_s: float
    ends: list[tuple[int, float]]   # (size, seconds from the start when OSU prints it)
    launches: int = 1

    def until(self, size: int) -> float:
        """Seconds from the start until OSU printed ``size`` (the whole run if not a size)."""
        return next((t for s, t in self.ends if s == size), self.seconds)


def predict(benchmark: str, sizes: list[int], shape: Shape, model: PerfModel, *,
            warmup: int | None = None, iterations: int | None = None,
            launches: int = 1, warmup_large: int | None = None,
            iterations_large: int | None = None,
            osu_version: str | None = None) -> Prediction:
    """Wall time of ``launches`` launches of ``benchmark`` over ``sizes`` on ``shape``
    (``_large``: the counts above OSU's LARGE_MESSAGE_SIZE where the launch sets them apart,
    OSU's iteration buckets; ``osu_version``: where its sizes switch to the large counts)."""
    startup = (model.startup_s + model.startup_per_node_s * shape.nodes
               + model.startup_per_rank_s * shape.ranks)
    passes = _data()['passes']
    passes = passes.get(benchmark, passes.get(catalogue.get(benchmark).kind, 1))
    loop_sizes = sizes or ([0] if osu_limits.loop_kind(benchmark) else [])
    elapsed, ends = startup, []
    apart = warmup_large is not None or iterations_large is not None
    for size, skip, iters in osu_limits.loop(benchmark, loop_sizes, warmup, iterations,
                                             osu_version):
        if apart and osu_limits.is_large(size, benchmark, osu_version):
            skip, iters = osu_limits.loop(benchmark, [size], warmup_large,
                                          iterations_large, osu_version)[0][1:]
        elapsed += passes * (skip + iters) * iteration_us(benchmark, size, shape, model) / 1e6
        elapsed += model.per_size_s
        ends.append((size, elapsed))
    loop_s = elapsed - startup
    return Prediction(startup * launches + loop_s * launches, startup * launches,
                      loop_s * launches, ends, launches)


def scaled(prediction: Prediction, factor: float) -> Prediction:
    """The prediction with every time multiplied by ``factor`` (a measured wall correction,
    :mod:`omb_suite.cost.wall`)."""
    if factor == 1.0:
        return prediction
    return replace(prediction, seconds=prediction.seconds * factor,
                   startup_s=prediction.startup_s * factor, loop_s=prediction.loop_s * factor,
                   ends=[(size, t * factor) for size, t in prediction.ends])


def with_corrections(model: PerfModel, corrections: Corrections, source: str) -> PerfModel:
    """The model fitted from runs: their corrections, and where they came from."""
    return replace(model, corrections=corrections, source=source, fitted=True)


def launcher_s() -> float:
    """What a launch takes around MPI_Init (added to osu_init's figures when fitting)."""
    return float(_data()['launcher_s'])


def time_limit(prediction: Prediction, multiple: float | None = None,
               floor_s: int | None = None) -> int:
    """Seconds allowed: ``multiple`` x the prediction, at least ``floor_s`` (``None``: the
    rule of ``data/perf_model.yaml`` limits)."""
    rule_multiple, rule_floor, _ = limit_rule()
    multiple = rule_multiple if multiple is None else multiple
    floor_s = rule_floor if floor_s is None else floor_s
    return math.ceil(max(float(floor_s), multiple * prediction.seconds))


def limit_rule() -> tuple[float, int, int]:
    """(multiple, floor, grace) of ``data/perf_model.yaml`` limits."""
    rule = _data()['limits']
    return float(rule['multiple']), int(rule['floor_s']), int(rule['grace_s'])


def hung_after_result_message(program: str, prediction: Prediction, limit_s: float,
                              elapsed_s: float) -> str:
    """What a test stopped at its limit says when the program had printed its whole result:
    the time went after the benchmark, not to the network."""
    return (f'{program} printed its whole result, then did not exit: stopped at its time limit '
            f'of {limit_s:.0f} s after {elapsed_s:.0f} s (predicted {prediction.seconds:.1f} s); '
            'the run hung after the benchmark (MPI_Finalize or the launcher), the network '
            'was not slow')


def slower_message(prediction: Prediction, limit_s: float, elapsed_s: float,
                   last_size: int | None, multiple: float | None = None,
                   floor_s: int | None = None, basis: str | None = None) -> str:
    """What a test stopped at its limit says: predicted vs elapsed, and how much slower the
    network ran than the partition's model up to the last size OSU printed. ``basis``: how
    the limit was set, when not from the prediction (then no pace is claimed)."""
    rule_multiple, rule_floor, _ = limit_rule()
    multiple = rule_multiple if multiple is None else multiple
    floor_s = rule_floor if floor_s is None else floor_s
    # the size after the last one printed had not ended: had the run been N x slower than
    # predicted throughout, N x (the time predicted for that size to end) > elapsed
    sizes = [s for s, _ in prediction.ends]
    after = sizes.index(last_size) + 1 if last_size in sizes else 0
    unfinished = prediction.ends[after][1] if after < len(sizes) else prediction.seconds
    pace = elapsed_s / max(unfinished, 1e-9)
    where = f'got up to {last_size} B' if last_size is not None else 'printed no result row'
    if basis:
        return (f'stopped at its time limit of {limit_s:.0f} s ({basis}) after {elapsed_s:.0f} '
                f's; it had {where} of an incomplete result')
    return (f'stopped at its time limit of {limit_s:.0f} s ({multiple:g} x the predicted '
            f'{prediction.seconds:.1f} s, at least {floor_s} s) after {elapsed_s:.0f} s; it had '
            f'{where}, the next size predicted to end at {unfinished:.1f} s: the network is '
            f'at least {pace:.1f} x slower than this partition\'s model')
