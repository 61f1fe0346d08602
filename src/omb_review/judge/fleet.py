"""``omb-review fleet``: the slow node or link named again from a fleet run's perflog
(``--mode fleet``, docs/howto-fleet.md): the latest job of each (system, partition,
environment, benchmark), its pair figures (performance variables ``a+b``) and node figures
(``a``) judged by :func:`omb_suite.fleet.culprit.judge`, as the run's own verdict was, with
the tolerance the partition declares (``extras['fleet_tolerance']`` in ``-C``) unless one is
given. The report draws the same runs node by node (:mod:`omb_review.report.fleet_matrix`)."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from omb_review.read.siteconfig import ConfigError, fleet_tolerances
from omb_suite.fleet import culprit
from omb_suite.perflogs.reader import read_perflog

#: The perflog's unit -> whether a higher figure is worse.
HIGHER_IS_WORSE = {'us': True, 'MB/s': False}
#: The perflog file of a fleet run (the check's class name).
LOG_NAME = 'OsuFleet.log'


def _higher_is_worse(unit: str) -> bool:
    return HIGHER_IS_WORSE.get(unit, True)


@dataclass
class Run:
    """One fleet job's figures of one benchmark and their verdict."""

    where: str  # system:partition
    environ: str
    job: str
    benchmark: str
    unit: str
    tolerance: float
    pairs: dict[tuple[str, str], float]
    intra: dict[str, float]
    verdict: culprit.Verdict

    @property
    def higher_is_worse(self) -> bool:
        return _higher_is_worse(self.unit)

    @property
    def nodes(self) -> list[str]:
        return sorted({n for p in self.pairs for n in p} | set(self.intra))


def runs(root: Path, tolerance: float | None = None,
         tolerances: dict[str, float] | None = None) -> list[Run]:
    """The latest fleet job of each (system, partition, environment, benchmark) under
    ``root``, judged with ``tolerance``, else the partition's (``tolerances``), else
    :data:`culprit.TOLERANCE`. Malformed lines are reported on stderr by the perflog reader,
    and skipped."""
    out = []
    for path in sorted(root.rglob(LOG_NAME)):
        frame, problems = read_perflog(path, str(path.relative_to(root)))
        for problem in problems:
            print(f'omb-review fleet: {problem}', file=sys.stderr)
        if frame.height == 0:
            continue
        value = pl.col('perf_value').cast(pl.String)
        # a dry run's records carry no figure ('null'): nothing was measured
        rows = frame.filter(value.is_not_null() & ~value.is_in(['null', '']))
        for _, job in rows.group_by(['system', 'partition', 'environ', 'benchmark'],
                                    maintain_order=True):
            latest = job.sort('job_completion_time')['jobid'][-1]
            job = job.filter(pl.col('jobid') == latest)
            where = f"{job['system'][0]}:{job['partition'][0]}"
            factor = tolerance if tolerance is not None else (tolerances or {}).get(
                where, culprit.TOLERANCE)
            unit = str(job['perf_unit'][0])
            pairs, intra = {}, {}
            for var, value in zip(job['perf_var'], job['perf_value'], strict=True):
                if '+' in var:
                    a, b = var.split('+', 1)
                    pairs[(a, b) if a <= b else (b, a)] = float(value)
                else:
                    intra[var] = float(value)
            benchmark = str(job['benchmark'][0])
            verdict = culprit.judge(benchmark, pairs, intra=intra, unit=unit,
                                    higher_is_worse=_higher_is_worse(unit),
                                    tolerance=factor)
            out.append(Run(where, str(job['environ'][0]), str(latest), benchmark, unit, factor,
                           pairs, intra, verdict))
    return out


def run(root: Path, tolerance: float | None = None,
        tolerances: dict[str, float] | None = None) -> int:
    """Print each verdict and the drain lines; 1 if any names a culprit, 2 if no fleet run."""
    found = runs(root, tolerance, tolerances)
    if not found:
        print(f'omb-review fleet: no fleet run ({LOG_NAME} with figures) under {root}: run '
              f'reframe ... --mode fleet -r (docs/howto-fleet.md)', file=sys.stderr)
        return 2
    for one in found:
        verdict = one.verdict
        lines = verdict.lines()
        at = len(lines) - len(verdict.notes)
        lines[at:at] = [f'  job {one.job} on {one.where} ({one.environ}), tolerance '
                        f'x{one.tolerance:g}']
        print('\n'.join(lines))
        for line in verdict.drain_commands():
            print(f'  to drain: {line}')
    return 1 if any(r.verdict.findings or r.verdict.failed for r in found) else 0


def command(args) -> int:
    """``omb-review fleet PERFLOGS [--tolerance X] [-C FILE]``; 2 when ``-C`` cannot be read."""
    try:
        tolerances = fleet_tolerances(args.config) if args.config else {}
    except ConfigError as err:
        print(f'omb-review: {err}; give --config FILE or --tolerance X', file=sys.stderr)
        return 2
    return run(args.perflogs, args.tolerance, tolerances)
