"""What a budget really spends: sessions of a campaign, predicted node-minutes against measured.

    python benchmarks/budget_spend.py OUT [--budget NODE_MINUTES] [--sessions N] [-C FILE ...]
        [--system local] [--alloc CMD] [-- REFRAME SELECTION...]

Runs the same command as a site's nightly campaign (``reframe -C ... -c reframe/checks
--system SYSTEM -S campaign=NAME -S budget=B -r`` plus the selection given after ``--``), up to
N sessions or until the campaign says it is complete, its results in ``OUT``
(``OMB_RESULTS_DIR``). Per session: what the budget bought (the ``Budget`` line's predicted
node-minutes), what the session's cases took (``time_run`` x nodes, from its run report), their
ratio, and the load average before and after (what the node was doing: a busy node stretches
every run). At the end: every case of the campaign ran exactly once, and the sessions whose
measured spend was within +-20 % of the prediction. ``--alloc``: each session one allocation
ReFrame runs in (the mini-cluster: ``source tests/cluster/env.sh``, ``--system
minicluster:alloc --alloc 'salloc -N 2 --exclusive -p compute'``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
import sys
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
VENV = Path(sys.executable).parent
BOUGHT = re.compile(r'Budget \S+ node-minutes: (\d+) case\(s\) selected, predicted ([\d.]+)')


def load() -> float:
    return float(Path('/proc/loadavg').read_text().split()[0])


def session_cases(report: Path, campaign: str) -> list[dict]:
    data = json.loads(report.read_text())
    return [tc for run in data['runs'] for tc in run['testcases']
            if tc.get('campaign') == campaign]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('out', type=Path)
    ap.add_argument('--budget', default='0.2', help='node-minutes per session (default 0.2)')
    ap.add_argument('--sessions', type=int, default=4)
    ap.add_argument('--campaign', default='spend')
    ap.add_argument('-C', dest='configs', action='append')
    ap.add_argument('--system', default='local')
    ap.add_argument('--alloc', default='', help='command each session runs in (salloc ...)')
    argv = sys.argv[1:] if argv is None else argv
    cut = argv.index('--') if '--' in argv else len(argv)
    args = ap.parse_args(argv[:cut])
    args.selection = argv[cut + 1:]
    configs = args.configs or [str(REPO / 'reframe/config/settings.py')]
    (args.out / 'reports').mkdir(parents=True, exist_ok=True)
    env = {**os.environ, 'OMB_RESULTS_DIR': str(args.out.resolve())}
    rows, ran = [], Counter()
    for i in range(1, args.sessions + 1):
        # one report per session for good: the campaign's memory is its run reports, and the
        # wall factors of the next predictions are read from <results>/reports
        report = args.out / 'reports' / f'{args.campaign}-session-{i}.json'
        if report.exists():
            print(f'{report} exists: a new --campaign name, or a new OUT', file=sys.stderr)
            return 2
        cmd = [*shlex.split(args.alloc), str(VENV / 'reframe'), '--nocolor',
               *(x for c in configs for x in ('-C', c)), '-c', str(REPO / 'reframe/checks'),
               '--system', args.system, '--prefix', str(args.out / 'rfm'),
               '--report-file', str(report), '-S', f'campaign={args.campaign}',
               '-S', f'budget={args.budget}', *args.selection, '-r']
        before = load()
        out = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=REPO)
        after = load()
        text = out.stdout + out.stderr
        if f'campaign {args.campaign}: complete' in text:   # said with a Budget line of 0
            print(f'session {i}: the campaign is complete')
            break
        found = BOUGHT.search(text)
        if out.returncode not in (0, 1) or not found or not report.exists():
            print(f'session {i}: reframe exit {out.returncode}\n{text[-2000:]}', file=sys.stderr)
            return 2
        cases = session_cases(report, args.campaign)
        ran.update(tc['name'] for tc in cases)
        measured = sum((tc.get('time_run') or 0) * max(1, tc.get('num_nodes') or 1)
                       for tc in cases) / 60
        predicted = float(found.group(2))
        ratio = measured / predicted if predicted else float('nan')
        rows.append((i, int(found.group(1)), predicted, measured, ratio, before, after))
        print(f'session {i}: {found.group(1)} case(s), predicted {predicted:.3f}, measured '
              f'{measured:.3f} node-minutes, measured/predicted {ratio:.2f} '
              f'(load {before:.1f} -> {after:.1f})', flush=True)
    within = [r for r in rows if 0.8 <= r[4] <= 1.2]
    twice = [n for n, k in ran.items() if k > 1]
    print(f'\n{len(rows)} session(s) at budget {args.budget}: {len(within)} spent within +-20 % '
          f'of the prediction; {len(ran)} case(s) ran, {len(twice)} of them twice')
    return 0 if not twice else 1


if __name__ == '__main__':
    sys.exit(main())
