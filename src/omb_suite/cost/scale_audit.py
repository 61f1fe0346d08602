"""The scale audit: every generated job script checked against OSU's limits and the cost model.

A test writes its plan into its job script as one comment line (:func:`plan_line`): the sizes
it expects OSU to run, its predicted wall time and its limit. :func:`audit_script` reads the
script as the scheduler would run it (the ``#SBATCH`` shape, the ``timeout`` around the launch,
the OSU program and options after the rank wrapper) and reports each violation:

- OSU would refuse the rank count (``osu_limits.refused``), or an option its release lacks
  (``-M`` from 7.5; the plan line names the release: ``osu=``);
- OSU would stop the sweep at a size other than the plan's largest (a cap unknown to the
  suite: its sanity would fail with "missing sizes", or pass with sizes it did not expect);
- the buffers of a node's ranks at OSU's largest size exceed the node's declared memory;
- the launch's ``timeout`` is not the limit the plan states, or the job's own limit is shorter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from omb_suite.osu import catalogue
from omb_suite.osu import limits as osu_limits
from omb_suite.osu import versions as osu_versions

PLAN_MARK = '# omb-plan:'
_PLAN = re.compile(r'^# omb-plan: benchmark=(\S+) ranks=(\d+) largest=(\d+|-) '
                   r'predicted_s=([\d.]+) limit_s=(\d+)(?: osu=(\S+))?', re.M)
_SBATCH = re.compile(r'^#SBATCH --(ntasks|nodes|ntasks-per-node|time)=(\S+)', re.M)


def plan_line(benchmark: str, ranks: int, largest: int | None, predicted_s: float,
              limit_s: int, osu_version: str | None = None) -> str:
    """The comment a job script carries (a shell comment: it changes nothing in the run)."""
    return (f'{PLAN_MARK} benchmark={benchmark} ranks={ranks} '
            f'largest={"-" if largest is None else largest} predicted_s={predicted_s:.2f} '
            f'limit_s={limit_s}' + (f' osu={osu_version}' if osu_version else ''))


@dataclass(frozen=True)
class Launch:
    """One OSU launch of a job script."""

    benchmark: str
    options: list[str]
    timeout_s: int | None


@dataclass(frozen=True)
class Audit:
    """What the audit read from one script, and what it found wrong."""

    path: str
    benchmark: str
    ranks: int
    nodes: int
    predicted_s: float
    violations: list[str]


def _seconds(text: str) -> int:
    """Slurm's ``--time`` (``D-HH:MM:SS``, ``HH:MM:SS``, ``MM:SS``) or ``60s`` in seconds."""
    if text.endswith('s'):
        return int(float(text[:-1]))
    days, _, rest = text.rpartition('-')
    parts = [int(p) for p in rest.split(':')]
    while len(parts) < 3:
        parts.insert(0, 0)
    return (int(days) if days else 0) * 86400 + parts[0] * 3600 + parts[1] * 60 + parts[2]


def launches(script: str) -> list[Launch]:
    """OSU launches (through the rank wrapper) of a job script."""
    found = []
    for line in script.splitlines():
        tokens = line.split()
        wrapper = next((i for i, t in enumerate(tokens) if t.endswith('omb_rank.sh')), None)
        if wrapper is None:
            continue
        rest = tokens[wrapper + 1:]
        while rest and rest[0].startswith('--'):                  # wrapper options
            rest = rest[2 + (rest[0] == '--gpu'):]
        if not rest:
            continue
        timeout = None
        if tokens and tokens[0] == 'timeout':
            timeout = _seconds(next(t for t in tokens[1:] if not t.startswith('-')))
        opts = [t for t in rest[1:] if t not in ('>', '2>&1') and not t.startswith('>')]
        found.append(Launch(Path(rest[0]).name, opts, timeout))
    return found


def _size_range(benchmark: str, options: list[str]) -> tuple[int, int] | None:
    """``-m`` as OSU reads it (``MAX``, ``MIN:MAX``, ``MIN:``, ``:MAX``), else the defaults."""
    info = catalogue.get(benchmark)
    if not info.has_sizes:
        return None
    lo, hi = 1, int(info.max_size or 0)
    if '-m' in options:
        value = options[options.index('-m') + 1]
        if ':' not in value:
            return lo, int(value)
        first, last = value.split(':', 1)
        lo, hi = int(first or lo), int(last or hi)
    return lo, hi


def audit_script(path: str, script: str, *, node_memory: int | None) -> Audit | None:
    """Violations of one job script (None: it launches no OSU program)."""
    shape = dict(_SBATCH.findall(script))
    plans = _PLAN.findall(script)
    runs = launches(script)
    if not runs:
        return None
    ranks = int(shape['ntasks']) if 'ntasks' in shape else int(plans[0][1]) if plans else 0
    per_node = int(shape.get('ntasks-per-node', 0))
    nodes = int(shape['nodes']) if 'nodes' in shape else -(-ranks // per_node) if per_node else 1
    per_node = per_node or -(-ranks // nodes)
    bad: list[str] = []
    if not plans:
        return Audit(path, runs[0].benchmark, ranks, nodes, 0.0, ['no omb-plan line'])
    bench, _, largest, predicted, limit, osu = plans[0]
    for run in runs:
        bad += _audit_launch(run, bench, ranks, per_node, largest, int(limit), node_memory,
                             osu or None)
    if 'time' in shape and int(limit) and _seconds(shape['time']) < int(limit):
        bad.append(f'job limit {shape["time"]} is shorter than the launch limit {limit} s')
    return Audit(path, bench, ranks, nodes, float(predicted), bad)


def _audit_launch(run: Launch, bench: str, ranks: int, per_node: int, largest: str,
                  limit: int, node_memory: int | None, osu: str | None) -> list[str]:
    """An OSU of unknown release (no ``osu=`` in the plan) is taken to have ``-M``."""
    bad = []
    has_mem_limit = osu is None or osu_versions.supports(osu, 'mem_limit')
    if not has_mem_limit and osu_limits.mem_limit_in(run.options) is not None:
        bad.append(f'{run.benchmark}: -M given to OSU {osu}, which has none (from 7.5)')
    osu = run.benchmark in catalogue.catalogue()
    refused = osu_limits.refused(run.benchmark, ranks) if osu else None
    if refused:
        bad.append(refused)
    span = _size_range(run.benchmark, run.options) if osu else None
    if span is not None and run.benchmark == bench:
        lo, hi = span
        user = osu_limits.mem_limit_in(run.options)
        top = osu_limits.largest_size(run.benchmark, ranks, hi, user) if has_mem_limit else hi
        top = max(osu_limits.sizes_between(lo, top), default=0)
        if largest != str(top):
            bad.append(f'{run.benchmark} on {ranks} ranks with {" ".join(run.options)}: OSU '
                       f'stops at {top} B, the plan expects {largest}')
        used = osu_limits.node_bytes(run.benchmark, ranks, per_node, top)
        if node_memory and used > node_memory:
            bad.append(f'{run.benchmark}: {used / 2**30:.0f} GiB of buffers per node, the node '
                       f'has {node_memory / 2**30:.0f} GiB')
    if run.timeout_s is not None and run.timeout_s != limit:
        bad.append(f'timeout {run.timeout_s} s, the plan states {limit} s')
    if run.timeout_s is None and limit:
        bad.append('launch without the timeout of its limit')
    return bad
