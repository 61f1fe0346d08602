#!/usr/bin/env python3
"""What an exploration run did with its non-default algorithm cases, per environment: how
many ran (passed, failed), were skipped (and why), and were proven (the library's own
evidence names the algorithm) or only forced. Read from ReFrame's JSON run report
(``reframe ... --report-file FILE``), where a re-run case (``--max-retries``) counts as its
last attempt, and the reasons of skipped cases from ReFrame's output (``--log``: the report
has none).

    python3 scripts/algorithm_coverage.py REPORT.json [--log OUTPUT] [--min-run 0.8]

With ``--min-run`` it exits 1 when an environment ran fewer than that share of its cases or
had a failure (issue 26's target: at least 80% run, none failed). docs/algorithms.md keeps
the table this prints for the libraries proven here.
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

#: Evidence that is no proof: the library showed nothing (evidence.NO_EVIDENCE), or the
#: algorithm could be forced but the library offers no way to see it ("forced, not proven").
UNPROVEN = ('no-evidence', 'forced, not proven')
#: A skipped case in ReFrame's output (colours removed): its name, environment and reason.
SKIPPED = re.compile(r'^\[\s*SKIP\s*\] \(\s*\d+/\d+\) (?P<name>.+?) /[0-9a-f]{8} '
                     r'@[^+\s]+\+(?P<env>\S+) \[(?P<why>.*)\]$', re.M)
COLOURS = re.compile(r'\x1b\[[0-9;]*m')


@dataclass
class Coverage:
    """The non-default algorithm cases of one environment."""

    ran: int = 0
    failed: list[str] = field(default_factory=list)
    proven: int = 0
    skipped: Counter = field(default_factory=Counter)

    @property
    def cases(self) -> int:
        return self.ran + sum(self.skipped.values())

    def share_run(self) -> float:
        return self.ran / self.cases if self.cases else 0.0


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
            cov.skipped[why] += 1
            continue
        cov.ran += 1
        evidence = case.get('algorithm_evidence') or ''
        if case['result'] != 'pass':
            cov.failed.append(f'{case["display_name"]}: {case.get("fail_reason")}')
        elif evidence and not any(word in evidence for word in UNPROVEN):
            cov.proven += 1
    return dict(per_env)


def table(per_env: dict[str, Coverage]) -> str:
    lines = ['| environment | non-default cases | run | failed | proven | skipped (reason) |',
             '|---|---|---|---|---|---|']
    for env, cov in sorted(per_env.items()):
        skipped = '; '.join(f'{n}: {why}' for why, n in cov.skipped.most_common()) or '-'
        lines.append(f'| `{env}` | {cov.cases} | {cov.ran} ({cov.share_run():.0%}) | '
                     f'{len(cov.failed)} | {cov.proven} | {skipped} |')
    return '\n'.join(lines)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('report', type=Path, help="ReFrame's JSON run report (--report-file)")
    p.add_argument('--log', type=Path, help="ReFrame's output of the run (skip reasons)")
    p.add_argument('--min-run', type=float, help='fail below this share of cases run, or on '
                   'any failure (e.g. 0.8)')
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
