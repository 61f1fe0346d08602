"""What OSU will really run (``data/osu_limits.yaml``, read from OSU's sources): the sizes of a
sweep at a rank count, the ``-M`` that lets it reach its largest size, the loop OSU chooses per
size, and the rank counts it refuses.

One rule decides a collective's sweep (:func:`plan_sweep`). Up to OSU 7.4, OSU lowers its
largest size to what ``-M`` allows at the job's rank count (``-M / ranks`` for alltoall,
allgather, gather, scatter and their ``v``, non-blocking, persistent and neighbourhood forms;
``-M`` for the others): the suite either raises ``-M`` so the sweep reaches its largest size,
as far as the partition's declared memory allows and never beyond, or expects the sizes to
stop where OSU stops. From 7.5 OSU has no ``-M`` and lowers nothing (``data/osu_versions.yaml``):
the suite itself stops the sweep (``-m``) at the largest size whose buffers fit the node's
declared memory. Either way it says which sizes were not measured and why. Where the release
is unknown, the suite passes no ``-M`` and stops at the smaller of both caps, right for either.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from omb_suite import yamldata
from omb_suite.osu import catalogue
from omb_suite.osu import versions as osu_versions

#: What rank 0 prints when it lowers the largest size (check_mem_limit, no newline after it).
_ANNOUNCED = re.compile(r"Warning! Limiting max message size to: (\d+)")

#: Share of a node's memory the benchmark's buffers may use (the MPI library, the OS and
#: the launcher need the rest).
MEMORY_SHARE = 0.5


@cache
def _data() -> dict[str, Any]:
    return yamldata.load(resources.files('omb_suite').joinpath('data/osu_limits.yaml')
                          .read_text())


def default_mem_limit() -> int:
    return int(_data()['mem_limit']['default'])


def base_name(benchmark: str) -> str:
    """The collective behind a program: ``osu_ialltoall_persistent`` -> ``alltoall``."""
    name = benchmark.removeprefix('osu_').removesuffix('_persistent')
    if name.startswith('ineighbor_'):
        return name[1:]
    if catalogue.get(benchmark).nonblocking and name.startswith('i'):
        return name[1:]
    return name


def cap_kind(benchmark: str) -> str:
    """``per_rank``, ``total`` or ``none`` (check_mem_limit's branch); only collectives."""
    if catalogue.get(benchmark).kind not in catalogue.COLLECTIVE_KINDS:
        return 'none'
    base = base_name(benchmark)
    for kind, names in _data()['mem_cap'].items():
        if base in names:
            return kind
    raise KeyError(f'{benchmark} ({base}) has no mem_cap entry in data/osu_limits.yaml: read '
                   'its check_mem_limit branch in OSU\'s c/util/osu_util_mpi.c and add it')


def effective_mem_limit(value: int | None) -> int:
    """The ``-M`` OSU uses: its default when none is given, at least its lower limit."""
    if value is None:
        return default_mem_limit()
    return max(int(value), int(_data()['mem_limit']['lower']))


def _last_option(options: list[str], short: str, long: str) -> str | None:
    """The value of the last ``-X N`` / ``-XN`` / ``--long N`` / ``--long=N``, or None."""
    found = None
    for i, opt in enumerate(options):
        if opt in (short, long) and i + 1 < len(options):
            found = options[i + 1]
        elif opt.startswith(f'{long}='):
            found = opt.split('=', 1)[1]
        elif opt.startswith(short) and len(opt) > 2:
            found = opt[2:]
    return found


def mem_limit_in(options: list[str]) -> int | None:
    """The last ``-M N`` / ``--mem-limit N`` / ``--mem-limit=N`` of a command line, or None."""
    found = _last_option(options, '-M', '--mem-limit')
    if found is None:
        return None
    try:
        return int(found)
    except ValueError:
        raise ValueError(f'-M {found!r} is not a number of bytes (OSU --mem-limit)') from None


def partitions(benchmark: str, options: list[str]) -> int:
    """The partitions each size is cut into: the last ``-q N`` / ``--partitions N`` of a
    command line, else the catalogue's (OSU's default ``-q``; 1 for unpartitioned programs)."""
    default = catalogue.get(benchmark).partitions
    found = _last_option(options, '-q', '--partitions') if default > 1 else None
    if found is None:
        return default
    if not found.isdigit() or int(found) < 1:
        raise ValueError(f'-q {found!r} is not a number of partitions (OSU --partitions)')
    return int(found)


def largest_size(benchmark: str, ranks: int, max_size: int, mem_limit: int | None) -> int:
    """The largest size OSU runs when asked for ``max_size`` on ``ranks`` ranks."""
    limit = effective_mem_limit(mem_limit)
    kind = cap_kind(benchmark)
    if kind == 'per_rank' and max_size * ranks > limit:
        return limit // ranks
    if kind == 'total' and max_size > limit:
        return limit
    return max_size


def needed_mem_limit(benchmark: str, ranks: int, max_size: int) -> int:
    """The smallest ``-M`` that lets the sweep reach ``max_size`` on ``ranks`` ranks."""
    per = max_size * ranks if cap_kind(benchmark) == 'per_rank' else max_size
    return max(per, int(_data()['mem_limit']['lower']))


def node_bytes(benchmark: str, ranks: int, ranks_per_node: int, max_size: int) -> int:
    """Bytes of benchmark buffers on one node at the largest size OSU runs."""
    kind = cap_kind(benchmark)
    if kind == 'none':
        return 0
    per_buffer = max_size * ranks if kind == 'per_rank' else max_size
    return int(_data()['buffers_per_rank'][kind]) * per_buffer * ranks_per_node


@dataclass(frozen=True)
class SweepPlan:
    """The sweep of one run: sizes OSU runs, sizes asked for but not run, and why."""

    sizes: list[int]
    not_measured: list[int]
    mem_limit: int | None      # -M to pass (None: leave OSU's own, or the user's)
    reason: str                # why sizes are not measured ('' when all are)
    max_size: int | None = None  # the -m largest size to pass instead of the one asked for


def sizes_between(lo: int, hi: int, datatype_size: int = 1) -> list[int]:
    """OSU's loop ``for (size = lo; size <= hi; size *= 2)``, sizes of no element skipped."""
    out, size = [], max(lo, 1)
    while size <= hi:
        if size // datatype_size:
            out.append(size)
        size *= 2
    return out


def plan_sweep(benchmark: str, ranks: int, lo: int, hi: int, *, user_mem_limit: int | None,
               ranks_per_node: int, node_memory: int | None, osu_version: str | None,
               datatype_size: int = 1) -> SweepPlan:
    """The one rule: a ``-M`` the user gave is kept; else, where the default cap would stop
    the sweep, ``-M`` is raised as far as the partition's declared ``node_memory`` (bytes)
    allows (``MEMORY_SHARE`` of it for the buffers of every rank of a node); the sizes above
    what OSU then runs are reported as not measured, with the reason. An OSU without ``-M``
    (7.5 on, or of unknown release): :func:`_plan_without_mem_limit`."""
    told = osu_version is None and user_mem_limit is not None   # the user's -M says it has
    if not osu_versions.supports(osu_version, 'mem_limit') and not told:
        return _plan_without_mem_limit(benchmark, ranks, lo, hi, ranks_per_node, node_memory,
                                       osu_version, datatype_size)
    asked = sizes_between(lo, hi, datatype_size)
    mem_limit = user_mem_limit
    if user_mem_limit is None and node_memory:
        mem_limit = _fitting(benchmark, ranks, ranks_per_node, hi, node_memory)
    top = largest_size(benchmark, ranks, hi, mem_limit)
    run = [s for s in asked if s <= top]
    skipped = [s for s in asked if s > top]
    reason = ''
    if skipped:
        reason = _reason(benchmark, ranks, top, mem_limit, user_mem_limit, node_memory)
    raised = mem_limit if mem_limit != user_mem_limit else None
    return SweepPlan(run, skipped, raised, reason)


def _plan_without_mem_limit(benchmark: str, ranks: int, lo: int, hi: int, per_node: int,
                            node_memory: int | None, osu_version: str | None,
                            datatype_size: int) -> SweepPlan:
    """No ``-M`` passed: the suite stops the sweep with ``-m`` at the largest size whose
    buffers fit the node's share of its declared memory; where the release is unknown, also
    where an OSU up to 7.4 would stop with its default ``-M`` (so that either runs the plan)."""
    asked = sizes_between(lo, hi, datatype_size)
    top, why = hi, []
    if cap_kind(benchmark) != 'none' and node_memory:
        budget = int(node_memory * MEMORY_SHARE)
        fits = [s for s in asked if node_bytes(benchmark, ranks, per_node, s) <= budget]
        if not fits or fits[-1] < hi:
            top = fits[-1] if fits else 0
            need = node_bytes(benchmark, ranks, per_node, hi) / 2**30
            why.append(f'the buffers of {hi} B ({need:.0f} GiB per node) would not fit '
                       f'{node_memory / 2**30:.0f} GiB per node')
    if osu_version is None and cap_kind(benchmark) != 'none':
        default = largest_size(benchmark, ranks, hi, None)
        if default < top:
            top = default
            why.append(f'the OSU release is unknown, and up to 7.4 OSU stops at {default} B '
                       f'(-M {default_mem_limit()}, check_mem_limit); -M is not passed to an '
                       'OSU that may refuse it')
    run = [s for s in asked if s <= top]
    skipped = [s for s in asked if s > top]
    if not skipped:
        return SweepPlan(run, [], None, '')
    release = f'OSU {osu_version} has no -M (from 7.5)' if osu_version else 'no -M'
    reason = (f'the suite stops {benchmark} at {run[-1] if run else 0} B (-m): '
              f'{"; ".join(why)}; {release}')
    return SweepPlan(run, skipped, None, reason, max_size=run[-1] if run else lo)


def _fitting(benchmark: str, ranks: int, per_node: int, hi: int, node_memory: int) -> int | None:
    """The largest ``-M`` up to the needed one whose buffers fit the node's share (halving:
    each halving halves the largest size), or None when OSU's default is that value."""
    if cap_kind(benchmark) == 'none':
        return None
    needed = needed_mem_limit(benchmark, ranks, hi)
    lower = int(_data()['mem_limit']['lower'])
    budget = int(node_memory * MEMORY_SHARE)
    fits = needed
    while fits > lower and node_bytes(
            benchmark, ranks, per_node, largest_size(benchmark, ranks, hi, fits)) > budget:
        fits //= 2
    fits = max(fits, lower)
    if fits == default_mem_limit() or (fits == needed and needed <= default_mem_limit()):
        return None
    return fits


def _reason(benchmark: str, ranks: int, top: int, mem_limit: int | None,
            user_mem_limit: int | None, node_memory: int | None) -> str:
    limit = effective_mem_limit(mem_limit)
    per = f'-M {limit} / {ranks} ranks' if cap_kind(benchmark) == 'per_rank' else f'-M {limit}'
    why = f'OSU stops {benchmark} at {top} B ({per}, check_mem_limit)'
    if user_mem_limit is not None:
        return f'{why}; -M was given on the command line'
    if not node_memory:
        return (f'{why}; the partition declares no memory_per_node_gib in its extras, so -M '
                f'is not raised')
    return f'{why}; a larger -M would not fit {node_memory / 2**30:.0f} GiB per node'


def announced_cap(benchmark: str, text: str, mem_limit: int | None) -> int | None:
    """The largest size OSU said it lowered its sweep to (rank 0's stderr), or None when it
    said nothing. The ``per_rank`` branch prints the new largest size; the ``total`` branch
    prints the size asked for (OSU 7.3: the warning comes before the assignment) and then
    stops at ``-M``, so that is the cap."""
    found = _ANNOUNCED.findall(text)
    if not found:
        return None
    if cap_kind(benchmark) == 'total':
        return effective_mem_limit(mem_limit)
    return int(found[-1])


def loop_kind(benchmark: str) -> str | None:
    """Which of OSU's loop tables a program uses (``data/osu_limits.yaml`` loops)."""
    info = catalogue.get(benchmark)
    if info.kind in catalogue.COLLECTIVE_KINDS:
        return 'collective'
    if info.kind == 'startup' or not info.has_sizes:
        return None
    return info.loop or ('latency' if 'latency' in info.metrics else 'bandwidth')


def large_message_size() -> int:
    """OSU's ``LARGE_MESSAGE_SIZE`` (``data/osu_limits.yaml``): the edge between its small and
    large warm-up and iteration counts, and the edge the suite writes into OSU's iteration
    buckets (``-i EDGE:ABOVE:UP_TO``, sizes up to ``EDGE`` take ``UP_TO``)."""
    return int(_data()['large_message_size'])


def is_large(size: int, benchmark: str | None = None, osu_version: str | None = None) -> bool:
    """Whether OSU runs this size with its "large" warm-up and iteration counts: the sizes
    above :func:`large_message_size`, and from OSU 8.0 on the edge itself for the
    point-to-point latency programs (``data/osu_versions.yaml`` ``latency_edge_large``; with
    no ``benchmark`` or version, the rule of every program up to 7.4)."""
    edge = large_message_size()
    if benchmark is not None and _edge_is_large(benchmark, osu_version):
        return size >= edge
    return size > edge


def _edge_is_large(benchmark: str, osu_version: str | None) -> bool:
    if not osu_versions.supports(osu_version, 'latency_edge_large'):
        return False
    kinds = osu_versions.fact('latency_edge_large')['kinds']
    return loop_kind(benchmark) == 'latency' and catalogue.get(benchmark).kind in kinds


def loop(benchmark: str, sizes: list[int], warmup: int | None = None,
         iterations: int | None = None,
         osu_version: str | None = None) -> list[tuple[int, int, int]]:
    """(size, warm-up, timed iterations) per size, as OSU ``osu_version`` chooses them: the
    small counts up to 8192 B, the large ones from the first large size on (:func:`is_large`);
    ``-x``/``-i`` set both."""
    kind = loop_kind(benchmark)
    if kind is None:
        return []
    table = _data()['loops'][kind]
    out, big = [], False
    for size in sizes:
        big = big or is_large(size, benchmark, osu_version)
        skip, iters = table['large' if big else 'small']
        out.append((size, skip if warmup is None else warmup,
                    iters if iterations is None else iterations))
    return out


def window() -> int:
    """OSU's default window (``-W``) of bandwidth tests."""
    return int(_data()['loops']['window'])


def refused(benchmark: str, ranks: int) -> str | None:
    """Why OSU would refuse ``ranks`` ranks, or None."""
    info = catalogue.get(benchmark)
    rules = _data()['ranks']
    if info.kind in rules['exactly_two'] and ranks != 2:
        return f'{benchmark} requires exactly two processes (OSU), not {ranks}'
    if info.kind in rules['at_least_two'] and ranks < info.min_ranks:
        return f'{benchmark} requires at least {info.min_ranks} processes (OSU), not {ranks}'
    return None
