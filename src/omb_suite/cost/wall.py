"""Wall-time corrections from the suite's own run reports: what the cost model does not see.

The model (:mod:`omb_suite.cost.model`, fitted by :mod:`omb_suite.cost.fit`) explains OSU's
timed loop. A job also spends time the perflog does not record: start-up and finalisation at
its rank count, OSU's own work per size (buffers, the statistics it reduces), a correctness
launch, ranks sharing cores. ReFrame's run reports (``<results>/reports/*.json``, written
every run) hold each test's measured ``time_run`` beside the model's own ``model_s``; their
ratio per benchmark and rank count, median over the newest reports of the partition and
environment, multiplies the next prediction. A rank count never run takes a log-linear fit
over the rank counts run of the same benchmark (at most one doubling beyond them). A
benchmark never run borrows the partition's: the median factor of the other benchmarks at its
rank count, else at every rank count (:func:`borrowed`); a partition with no report, 1.
"""

from __future__ import annotations

import json
import math
import statistics
from collections import defaultdict
from pathlib import Path

#: (benchmark, ranks) -> measured / modelled wall time
WallFactors = dict[tuple[str, int], float]

#: Reports read, newest first: recent runs describe the partition as it is now.
NEWEST = 50


def read_reports(directory: Path, newest: int | None = NEWEST,
                 dry_runs: bool = False) -> tuple[list[dict], list[str]]:
    """Test cases of the newest run reports in ``directory`` (every run of each, retries
    included; dry runs left out unless ``dry_runs``; ``newest=None``: every report), and one
    problem per report that could not be read (skipped, not dropped silently)."""
    cases, problems = [], []
    paths = sorted(directory.glob('*.json'), key=lambda p: p.stat().st_mtime, reverse=True)
    for path in paths[:newest]:
        try:
            report = json.loads(path.read_text())
            if '--dry-run' in str(report['session_info'].get('cmdline', '')) and not dry_runs:
                continue            # nothing ran: its "passing" cases took no time
            cases += [case for run in report['runs'] for case in run['testcases']]
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as err:
            problems.append(f'{path}: not a ReFrame run report ({err!r}); skipped')
    return cases, problems


def wall_factors(cases: list[dict], system: str, partition: str, environ: str) -> WallFactors:
    """Median ``time_run / model_s`` per (benchmark, ranks) over the passing cases of one
    partition and environment that carry the model's prediction."""
    ratios: dict[tuple[str, int], list[float]] = defaultdict(list)
    for case in cases:
        if (case.get('result') != 'pass' or case.get('system') != system
                or case.get('partition') != partition or case.get('environ') != environ):
            continue
        model, took = case.get('model_s'), case.get('time_run')
        benchmark, ranks = case.get('benchmark'), case.get('num_tasks')
        if not (isinstance(model, (int, float)) and model > 0 and isinstance(took, (int, float))
                and took > 0 and isinstance(benchmark, str) and isinstance(ranks, int)):
            continue
        ratios[(benchmark, ranks)].append(took / model)
    return {key: statistics.median(values) for key, values in ratios.items()}


def factor(table: WallFactors, benchmark: str, ranks: int) -> float:
    """The factor at this rank count; else, from the rank counts of this benchmark that ran, a
    line through log(factor) over log2(ranks) (ranks sharing cores, start-up and OSU's own
    work per size grow with the rank count), extrapolated at most one doubling beyond them;
    from one rank count, its factor; from none, 1."""
    if (benchmark, ranks) in table:
        return table[(benchmark, ranks)]
    points = [(math.log2(r), math.log(f)) for (b, r), f in table.items() if b == benchmark]
    if not points:
        return 1.0
    if len(points) == 1:
        return math.exp(points[0][1])
    mx = statistics.fmean(x for x, _ in points)
    my = statistics.fmean(y for _, y in points)
    sxx = sum((x - mx) ** 2 for x, _ in points)
    slope = sum((x - mx) * (y - my) for x, y in points) / sxx
    lo, hi = min(x for x, _ in points), max(x for x, _ in points)
    at = min(max(math.log2(max(ranks, 1)), lo - 1), hi + 1)
    return math.exp(my + slope * (at - mx))


def borrowed(table: WallFactors, ranks: int) -> float | None:
    """For a benchmark never run in this partition: the median factor of the benchmarks that
    ran at this rank count, else of every benchmark at every rank count (what the partition's
    launches cost beyond the model: start-up, TCP over veths, ranks sharing cores, whatever the
    program); None with no report. The mini-cluster's first runs took 3x the built-in model,
    ``local``'s 0.6x: a partition-wide factor is most of what one program's history adds."""
    if not table:
        return None
    same = [f for (_, r), f in table.items() if r == ranks]
    return statistics.median(same or table.values())
