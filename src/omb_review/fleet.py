"""``omb-review fleet``: the slow node or link named again from a fleet run's perflog
(``--mode fleet``, docs/howto-fleet.md): the latest job of each (system, partition,
environment, benchmark), its pair figures (performance variables ``a+b``) and node figures
(``a``) judged by :func:`omb_suite.fleet.culprit.judge`, as the run's own verdict was."""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl

from omb_review.perflog import read_perflog
from omb_suite.fleet import culprit

#: The perflog's unit -> whether a higher figure is worse.
HIGHER_IS_WORSE = {'us': True, 'MB/s': False}


def verdicts(root: Path, tolerance: float) -> list[culprit.Verdict]:
    """One verdict per latest fleet job found under ``root`` (malformed lines reported on
    stderr by the perflog reader, and skipped)."""
    out = []
    for path in sorted(root.rglob('OsuFleet.log')):
        frame, problems = read_perflog(path, str(path.relative_to(root)))
        for problem in problems:
            print(f'omb-review fleet: {problem}', file=sys.stderr)
        if frame.height == 0:
            continue
        rows = frame.filter(pl.col('perf_value').is_not_null())
        for _, job in rows.group_by(['system', 'partition', 'environ', 'benchmark'],
                                    maintain_order=True):
            latest = job.sort('job_completion_time')['jobid'][-1]
            job = job.filter(pl.col('jobid') == latest)
            unit = job['perf_unit'][0]
            pairs, intra = {}, {}
            for var, value in zip(job['perf_var'], job['perf_value'], strict=True):
                if '+' in var:
                    a, b = var.split('+', 1)
                    pairs[(a, b)] = float(value)
                else:
                    intra[var] = float(value)
            verdict = culprit.judge(str(job['benchmark'][0]), pairs, intra=intra, unit=unit,
                                    higher_is_worse=HIGHER_IS_WORSE.get(unit, True),
                                    tolerance=tolerance)
            verdict.notes.insert(0, f"  job {latest} on {job['system'][0]}:"
                                    f"{job['partition'][0]} ({job['environ'][0]})")
            out.append(verdict)
    return out


def run(root: Path, tolerance: float) -> int:
    """Print each verdict and the drain lines; 1 if any names a culprit, 2 if no fleet run."""
    found = verdicts(root, tolerance)
    if not found:
        print(f'omb-review fleet: no fleet run (OsuFleet.log with figures) under {root}: run '
              f'reframe ... --mode fleet -r (docs/howto-fleet.md)', file=sys.stderr)
        return 2
    for verdict in found:
        print('\n'.join(verdict.lines()))
        for line in verdict.drain_commands():
            print(f'  to drain: {line}')
    return 1 if any(v.findings for v in found) else 0
