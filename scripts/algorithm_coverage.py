#!/usr/bin/env python3
"""What an exploration run did with its non-default algorithm cases, per environment: how
many ran (passed, failed), were skipped (and why: apart, those the library itself cannot
run with OSU's arguments on this job, e.g. an in-place-only or a node-aware algorithm on one
node: ``algorithms.cannot_run``), and were proven (the library's own
evidence names the algorithm) or only forced. Read from ReFrame's JSON run report
(``reframe ... --report-file FILE``), where a re-run case (``--max-retries``) counts as its
last attempt, and the reasons of skipped cases from ReFrame's output (``--log``: the report
has none).

    python3 scripts/algorithm_coverage.py REPORT.json [--log OUTPUT] [--min-run 0.8]

With ``--min-run`` it exits 1 when an environment had a failure, or ran fewer than that
share of the cases its library can run here (issue 26's target: at least 80% run, none
failed; the table shows the share of all cases too). docs/algorithms.md keeps the table this
prints for the libraries proven here.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omb_suite.mpi import evidence

#: Evidence that is no proof: the library showed nothing, the algorithm could be forced but
#: the library offers no way to see it ran (Intel MPI), or no table covers the version.
UNPROVEN = (evidence.NO_EVIDENCE, evidence.FORCED_NOT_PROVEN, evidence.NO_TABLE)
#: A skipped case in ReFrame's output (colours removed): its name, environment and reason.
SKIPPED = re.compile(r'^\[\s*SKIP\s*\] \(\s*\d+/\d+\) (?P<name>.+?) /[0-9a-f]{8} '
                     r'@[^+\s]+\+(?P<env>\S+) \[(?P<why>.*)\]$', re.M)
COLOURS = re.compile(r'\x1b\[[0-9;]*m')
#: How a skip by ``algorithms.cannot_run`` begins its reason ('MPICH cannot run bcast ...').
CANNOT_RUN = re.compile(r"^[\w .-]+ cannot run \w+ algorithm '[^']+' with OSU's arguments")


@dataclass
class Coverage:
    """The non-default algorithm cases of one environment."""

    ran: int = 0
    failed: list[str] = field(default_factory=list)
    proven: int = 0
    cannot: Counter = field(default_factory=Counter)   # the library's own refusals
    skipped: Counter = field(default_factory=Counter)  # any other reason

    @property
    def cases(self) -> int:
        return self.ran + sum(self.cannot.values()) + sum(self.skipped.values())

    def share_run(self) -> float:
        """Of the cases the library can run here."""
        runnable = self.cases - sum(self.cannot.values())
        return self.ran / runnable if runnable else 0.0


def last_attempts(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Each test case of the report once, as its last run left it."""
    cases: dict[tuple[str, str], dict[str, Any]] = {}
    for run in report['runs']:
        for case in run['testcases']:
            cases[(case['environ'], case['display_name'])] = case
    return list(cases.values())


def skip_reasons(output: str) -> dict[tuple[str, str], str]:
    """(environment, test case) -> why ReFrame skipped it, from ReFrame's output."""
    return {(m['env'], m['name']): m['why']
            for m in SKIPPED.finditer(COLOURS.sub('', output))}


def coverage(report: dict[str, Any], reasons: dict[tuple[str, str], str]) -> dict[str, Coverage]:
    per_env: dict[str, Coverage] = defaultdict(Coverage)
    for case in last_attempts(report):
        algorithm = case.get('algorithm')
        if not algorithm or algorithm == 'default':
            continue
        cov = per_env[case['environ']]
        if case['result'] == 'skip':
            why = reasons.get((case['environ'], case['display_name']), 'reason not in --log')
            (cov.cannot if CANNOT_RUN.match(why) else cov.skipped)[why] += 1
            continue
        cov.ran += 1
        shown = case.get('algorithm_evidence') or ''
        if case['result'] != 'pass':
            cov.failed.append(f'{case["display_name"]}: {case.get("fail_reason")}')
        elif shown and not shown.startswith(UNPROVEN):
            cov.proven += 1
    return dict(per_env)


def reasons_text(counts: Counter) -> str:
    return '; '.join(f'{n}: {why}' for why, n in counts.most_common()) or '-'


def table(per_env: dict[str, Coverage]) -> str:
    lines = ['| environment | non-default cases | run (of all; of those it can run) | failed | '
             'proven | the library cannot run them with OSU here | other skips |',
             '|---|---|---|---|---|---|---|']
    for env, cov in sorted(per_env.items()):
        lines.append(f'| `{env}` | {cov.cases} | {cov.ran} ({cov.ran / cov.cases:.0%}; '
                     f'{cov.share_run():.0%}) | {len(cov.failed)} | {cov.proven} | '
                     f'{reasons_text(cov.cannot)} | {reasons_text(cov.skipped)} |')
    return '\n'.join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('report', type=Path, help="ReFrame's JSON run report (--report-file)")
    p.add_argument('--log', type=Path, help="ReFrame's output of the run (skip reasons)")
    p.add_argument('--min-run', type=float, help='fail below this share run of the cases the '
                   'library can run here, or on any failure (e.g. 0.8)')
    args = p.parse_args(argv)
    reasons = skip_reasons(args.log.read_text()) if args.log else {}
    per_env = coverage(json.loads(args.report.read_text()), reasons)
    print(table(per_env))
    for env, cov in sorted(per_env.items()):
        for failure in cov.failed:
            print(f'FAILED in {env}: {failure}')
    if args.min_run is None:
        return 0
    short = [env for env, cov in per_env.items()
             if cov.failed or cov.share_run() < args.min_run]
    if short or not per_env:
        print(f'algorithm coverage below {args.min_run:.0%} run with 0 failures: '
              f'{", ".join(sorted(short)) or "no algorithm case in the report"}')
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
