"""Record labelled sessions of the suite for the gate's benchmark (benchmarks/gate_operating.py).

    python benchmarks/gate_record.py OUT --set NAME --sessions N [--label aa|regression]
        [--regression WHAT] [--expect BENCH,...] [--changed ENVIRON] [--env VAR=VALUE ...]
        [--background N]
        [--reruns 2] [-C FILE ...] [--system local] [--alloc CMD] [-- REFRAME OPTIONS...]

Each session is one ``reframe -C ... -c reframe/checks --system SYSTEM -r --reruns R`` of the
verdict set (every test R+1 times, interleaved: one session gives a distribution), tagged
``session_tag=NAME-<i>``, its perflogs in ``OUT/NAME`` (``OMB_RESULTS_DIR``). ``--env``
exports variables to the session (a real regression: ``OMPI_MCA_btl=self,tcp``); with
``--background N`` N busy loops run beside it (a loaded machine). ``OUT/NAME/sessions.jsonl``
keeps one line per session: its tag, label, the regression, the benchmarks it is expected
to move and the environment it changes (``--changed``, where the session measures others
beside it: they are its canaries), the variables, the background load, start and end, and
the load average before and after (what the node was doing). ``--alloc``: each session is
one allocation ReFrame runs in, as ``scripts/cluster-ci.sh``'s ``OMB_ALLOC`` (the
mini-cluster: ``source tests/cluster/env.sh`` first, then ``--system minicluster:alloc
--alloc 'salloc -N 2 --exclusive -p compute'``; its tests run one after another,
``--exec-policy serial``). Nothing recorded is edited afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
VENV = Path(sys.executable).parent


def _load() -> list[float]:
    return [float(x) for x in Path('/proc/loadavg').read_text().split()[:3]]


def _busy_share(seconds: float = 5.0) -> float:
    """Share of the machine's CPU time spent busy over ``seconds`` (/proc/stat)."""
    def sample() -> tuple[int, int]:
        fields = [int(x) for x in Path('/proc/stat').read_text().split('\n')[0].split()[1:]]
        return sum(fields), fields[3] + fields[4]  # total, idle + iowait
    t0, i0 = sample()
    time.sleep(seconds)
    t1, i1 = sample()
    return 1 - (i1 - i0) / max(t1 - t0, 1)


def wait_quiet(limit: float, share: float = 0.15) -> float:
    """Wait (at most ``limit`` seconds) until the machine is quiet: less than ``share`` of its
    CPU busy over 5 s. Returns the seconds waited."""
    start = time.monotonic()
    while time.monotonic() - start < limit and _busy_share() >= share:
        pass
    return time.monotonic() - start


def _reframe() -> str:
    found = VENV / 'reframe'
    return str(found) if found.exists() else 'reframe'


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('out', type=Path)
    p.add_argument('--set', required=True, help='name of the set (a folder of OUT)')
    p.add_argument('--sessions', type=int, default=1)
    p.add_argument('--first', type=int, default=1, help='number of the first session (1)')
    p.add_argument('--label', choices=('aa', 'regression'), default='aa')
    p.add_argument('--regression', default='', help='what was changed (a name)')
    p.add_argument('--expect', default='', help='benchmarks the change should move (a,b)')
    p.add_argument('--changed', default='', metavar='ENVIRON',
                   help='the environment the change is in, where others run beside it')
    p.add_argument('--env', action='append', default=[], metavar='VAR=VALUE')
    p.add_argument('--background', type=int, default=0, help='busy loops beside each session')
    p.add_argument('--reruns', type=int, default=2)
    p.add_argument('-C', '--config', action='append', default=[])
    p.add_argument('--system', default='local')
    p.add_argument('--alloc', default='', help='allocation command each session runs in')
    p.add_argument('--wait-quiet', type=float, default=0, metavar='SECONDS',
                   help='before each session, wait up to SECONDS for the machine to be quiet '
                   '(under 15 %% of its CPU busy over 5 s); the wait is recorded')
    argv = sys.argv[1:]
    cut = argv.index('--') if '--' in argv else len(argv)
    args = p.parse_args(argv[:cut])
    extra = argv[cut + 1:]  # after --: more reframe options
    where = (args.out / args.set).absolute()
    where.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, OMB_RESULTS_DIR=str(where))
    env.update(kv.split('=', 1) for kv in args.env)
    config = args.config or [str(REPO / 'reframe' / 'config' / 'settings.py')]
    for i in range(args.first, args.first + args.sessions):
        tag = f'{args.set}-{i}'
        alloc = shlex.split(args.alloc)
        serial = ['--exec-policy', 'serial'] if alloc else []
        cmd = [*alloc, _reframe(), *[x for c in config for x in ('-C', c)], '-c',
               str(REPO / 'reframe' / 'checks'), '--system', args.system, '-r', '--reruns',
               str(args.reruns), '-S', f'session_tag={tag}', *serial, *extra]
        waited = wait_quiet(args.wait_quiet) if args.wait_quiet else 0.0
        loops = [subprocess.Popen(['sh', '-c', 'while :; do :; done'])
                 for _ in range(args.background)]
        before, start = _load(), datetime.now(timezone.utc)
        t0 = time.monotonic()
        with open(where / f'{tag}.out', 'w') as fp:
            rc = subprocess.run(cmd, env=env, cwd=REPO, stdout=fp,
                                stderr=subprocess.STDOUT).returncode
        for loop in loops:
            loop.kill()
        line = {'tag': tag, 'label': args.label, 'regression': args.regression,
                'expect': [b for b in args.expect.split(',') if b], 'changed': args.changed,
                'env': args.env,
                'background': args.background, 'reruns': args.reruns, 'system': args.system,
                'start': start.isoformat(), 'end': datetime.now(timezone.utc).isoformat(),
                'seconds': round(time.monotonic() - t0, 1), 'load_before': before,
                'load_after': _load(), 'waited_for_quiet': round(waited, 1),
                'reframe_exit': rc, 'command': cmd}
        with open(where / 'sessions.jsonl', 'a') as fp:
            fp.write(json.dumps(line) + '\n')
        print(f'{tag}: exit {rc}, {line["seconds"]} s, load {before[0]:.2f} -> '
              f'{line["load_after"][0]:.2f}', flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
