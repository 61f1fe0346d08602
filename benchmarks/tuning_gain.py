"""From algorithm sweep to a deployed tuning file, measured: does the library's own tuning file
written by ``omb-review tune`` beat the default, and is its load never slower beyond the noise,
for every collective it touches and at scales the sweep skipped?

    python benchmarks/tuning_gain.py --environ spack-openmpi [--environ ...] [--dir DIR]
        [--collectives bcast,allreduce,alltoall,allgather] [--check-collectives C1,C2]
        [--scales 2,4] [--validate-scales 3,5] [--max-size 65536] [--sessions 5] [--repeat 5]
        [--oversubscribe 2] [--iterations N] [--system local] [--untouched] [--skip-sweep]
        [--skip-tune] [--tuned-prefix NAME] [--narrow PROOF_DIR] [--smoke] [-C FILE ...]

With a site's configuration (``-C site.py``, repeatable: ``-C site.py -C
reframe/config/modes.py``) its system (``--system mycluster:batch``) and environments
(``--environ openmpi``) are used; ``reframe`` and ``omb-review`` are those installed beside
the Python that runs this, else on ``PATH``; the perflogs go under DIR whatever the
configuration's perflog handler says (``--perflogdir``).

Per environment, for real (ReFrame and OSU, one after another):
  1. the sweep: ``OsuCollectiveSweep`` of the collectives at the scales, the default measured
     too (``-S measure_default=1``), in ``--sessions`` ReFrame sessions (each runs every case
     once, so drift over the sweep falls on every algorithm alike; perflogs in
     DIR/<environ>/perflogs; ``--skip-sweep`` reuses them);
  2. ``omb-review tune --allow-unproven`` -> DIR/<environ>/tuning (the library's file and its
     table; Intel MPI's algorithms can only be forced, not proven); ``--narrow PROOF_DIR``
     passes a proving run's prefix to ``omb-review tune --narrow`` (rules narrowed to where it
     held: give a new DIR whose <environ>/perflogs is the sweep's, with ``--skip-sweep``, for
     the summary adds up every ``tuned*`` folder of DIR/<environ>);
  3. ``OsuTunedCollective`` and ``OsuTunedNonBlocking``: the load against the default in
     one job (``--repeat`` runs of each, alternating), with the family's proof where a rule
     applies (DIR/<environ>/tuned), each writing ``tuning-comparison.json``: every collective
     the load touches (the recommendation's ``touches``; ``--check-collectives`` narrows
     it) at the sweep's scales and ``--validate-scales`` (oversubscribed as far as they
     need); ``--untouched``: every other collective too (``-S measure_untouched=1``), the
     evidence that the load leaves them at the default's speed. ``--skip-tune`` reuses
     DIR/<environ>/tuning; ``--tuned-prefix`` names the check's output folder (default
     ``tuned``; the summary reads every ``tuned*`` folder, so runs split by scale add up;
     ReFrame's report beside it, ``<prefix>-report.json``, keeps why a re-measured job's
     first attempt failed).
Then, per environment: every cell (collective, scale, size) measured with and without the
load; of those where a rule applies, the share faster with the ratio's 95 % interval below 1
and the median gain with its interval; the cells slower beyond the noise among ALL of them
(the target: none).
``--smoke``: osu_bcast at 2 ranks up to 64 B, 50 iterations (CI: the script still runs).
Exits 1 when a cell is slower beyond the noise or a step failed.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

from omb_review.tuning import narrow
from omb_suite.tuning import stats as tuning_stats

REPO = Path(__file__).resolve().parents[1]
#: The check's default slower_threshold (omb_suite.rfm.tuned).
SLOWER_THRESHOLD = 0.05
VENV = Path(sys.executable).parent
#: A cell's interval within 1/TIGHT..TIGHT shows the load at the default's speed there.
TIGHT = 1.1


#: The ReFrame configuration files (``-C``, in order): ours unless a site gives its own.
CONFIGS: list[str] = [str(REPO / 'reframe' / 'config' / 'settings.py')]


def tool(name: str) -> str:
    """A program of the suite: beside this Python (our .venv), else on PATH (a site's)."""
    here = VENV / name
    found = str(here) if here.exists() else shutil.which(name)
    if not found:
        sys.exit(f'tuning_gain.py: {name} is neither beside {sys.executable} nor on PATH: '
                 'install the suite (pip install <checkout>) in the Python that runs this')
    return found


def _rfm(system: str, env: str, extra: list[str], perflogs: Path) -> list[str]:
    # --perflogdir: the perflogs where `omb-review tune` reads them, whatever the
    # configuration's own handler directory
    return [tool('reframe'), *(x for c in CONFIGS for x in ('-C', c)),
            '-c', str(REPO / 'reframe' / 'checks' / 'explore'), '--system', system,
            '-p', f'^{env}$', '--exec-policy', 'serial', '--perflogdir', str(perflogs),
            *extra, '-r']


def _run(cmd: list[str], log: Path, env: dict[str, str], *,
         out_of_bounds_ok: bool = False) -> int:
    """Run one step, its output in ``log``; its exit status, 0 where every failure is the
    node's business (busy) or, with ``out_of_bounds_ok``, a measurement beyond the guard-rail
    references (a sweep: ``omb-review tune`` leaves the case out and says so)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open('w') as out:
        rc = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT,
                            env={**os.environ, **env}).returncode
    print(f'  {Path(cmd[0]).name} {cmd[1] if cmd[1:] else ""} ... -> exit {rc} ({log})')
    if rc == 0:
        return 0
    found = failures(log.read_text())
    for phase, reason in found:
        print(f'   failed ({phase}): {reason[:300]}')
    if found and all('the node was busy' in reason for _, reason in found):
        print(f'  NOT JUDGED: every failure in {log} is "the node was busy" (the machine\'s '
              'other work, not the MPI): run it again on a quiet machine')
        return 0
    if out_of_bounds_ok and found and all(phase == 'performance' for phase, _ in found):
        print(f'  LEFT OUT: {len(found)} case(s) measured beyond their guard-rail references '
              '(the performance stage; their results are right): the study goes on without '
              'them, as omb-review tune says')
        return 0
    return rc


def failures(text: str) -> list[tuple[str, str]]:
    """Every failure of a ReFrame session's output: its failing phase and its reason (as
    tests/busy-only.sh reads them); empty without a failure summary."""
    text = re.sub(r'\x1b\[[0-9;]*m', '', text)
    _, summary, rest = text.partition('SUMMARY OF FAILURES')
    found, phase = [], ''
    for line in rest.splitlines():
        line = line.strip()
        if line.startswith('* Failing phase:'):
            phase = line.partition(':')[2].strip()
        elif line.startswith('* Reason:'):
            found.append((phase, line.partition(':')[2].strip()))
            phase = ''
    return found if summary else []


def busy_only(text: str) -> bool:
    """Whether every failure of a ReFrame session's output is one that failed only because the
    node was busy (as tests/busy-only.sh reads it); False without a failure summary."""
    found = failures(text)
    return bool(found) and all('the node was busy' in reason for _, reason in found)


def pipeline(args, env: str) -> int:
    """Sweep, tune, load-vs-default for one environment; the worst exit status."""
    where = args.dir / env
    colls = '|'.join(args.collectives.split(','))
    scales = f"scale in ({args.scales},)"
    common = ['-S', f'max_size={args.max_size}', *args.osu]
    results = {'OMB_RESULTS_DIR': str(where / 'perflogs'),
               'OMB_MAX_SCALE': str(max(int(s) for s in args.scales.split(',')))}
    rc = 0
    for session in range(0 if args.skip_sweep else args.sessions):
        rc |= _run(_rfm(args.system, env, ['-n', f'OsuCollectiveSweep%case=osu_({colls})/',
                                           '-S', 'measure_default=1', '-E', scales,
                                           '-S', f'oversubscribe={args.oversubscribe}',
                                           *common, '--prefix', str(where / 'sweep')],
                        where / 'perflogs'),
                   where / f'sweep-{session}.log', results, out_of_bounds_ok=True)
    # --allow-unproven: Intel MPI's forced algorithms are 'forced-not-proven' (it shows none);
    # the other families' are proven or left out whatever this says
    tuning, log = where / 'tuning', where / 'tune.log'
    tuned = 0 if args.skip_tune else _run(
        [tool('omb-review'), 'tune', str(where / 'perflogs'), '--no-cache',
         '--allow-unproven', '--environ', env, '-o', str(tuning),
         *(f'--narrow={d}' for d in args.narrow)], log, {})
    if log.exists():
        print('   ' + '\n   '.join(log.read_text().splitlines()[-3:]))
    if tuned != 0 and log.exists() and "without the 'algorithm' column" in log.read_text():
        return 1   # the configuration's perflogs cannot be tuned from: said in tune.log
    if tuned != 0:
        return rc  # nothing to recommend: said in tune.log, nothing to compare
    # every collective the load touches (the check skips the others), at the sweep's scales
    # and the validation scales (oversubscribed as far as they need)
    checked = '|'.join(args.check_collectives.split(',')) if args.check_collectives else '.*'
    every = sorted({*map(int, args.scales.split(',')),
                    *(int(s) for s in args.validate_scales.split(',') if s)})
    per_core = max(args.oversubscribe, -(-every[-1] // (os.cpu_count() or 1)))
    rc |= _run(_rfm(args.system, env, ['-n', f'OsuTunedCollective%case=osu_({checked})/',
                                       '-n', f'OsuTunedNonBlocking%case=osu_({checked})/',
                                       *(['-S', 'measure_untouched=1'] if args.untouched
                                         else []),
                                       '-E', f"scale in ({','.join(map(str, every))},)",
                                       '-S', f'oversubscribe={per_core}',
                                       '-S', f'tuning_dir={tuning}',
                                       '-S', f'repeats={args.repeat}', '--max-retries',
                                       '1', *common,
                                       # the first attempts' reasons, which a passed retry's
                                       # stage and output replace
                                       '--report-file',
                                       str(where / f'{args.tuned_prefix}-report.json'),
                                       '--prefix', str(where / args.tuned_prefix)],
                    where / f'{args.tuned_prefix}-perflogs'),
               where / f'{args.tuned_prefix}.log',
               {**results, 'OMB_RESULTS_DIR': str(where / f'{args.tuned_prefix}-perflogs')})
    return rc


def _kept(where: Path) -> int:
    """Cells of the study where no rule applies: nothing to compare, the library's own."""
    recs = list(where.glob('tuning/*/recommendation.json'))
    if not recs:
        return 0
    rec = json.loads(recs[0].read_text())
    ruled = {(r['collective'], r['ranks']) for r in rec['rules']}
    return sum((c['collective'], c['ranks']) not in ruled for c in rec['cells'])


def _gain(rows: list[dict]) -> str:
    """The median gain of ``rows`` (1 - tuned/default), between the medians of the rows'
    95 % interval bounds."""
    if not rows:
        return '-'
    return (f"{1 - statistics.median(r['ratio'] for r in rows):.1%} "
            f"[{1 - statistics.median(r['ratio_high'] for r in rows):.1%}, "
            f"{1 - statistics.median(r['ratio_low'] for r in rows):.1%}]")


def judged(row: dict) -> dict:
    """A row with its ratio, intervals and outcome computed here from its runs, by the
    statistics of this checkout (the same as the check's; a comparison written by another
    version of the check is judged alike)."""
    outcome, iv, wide = tuning_stats.compare_runs(row['default_us'], row['tuned_us'],
                                                  SLOWER_THRESHOLD)
    return {**row, 'ruled': row['algorithm'] != 'default', 'ratio': iv.ratio,
            'ratio_low': iv.low, 'ratio_high': iv.high, 'slower_low': wide.low,
            'outcome': outcome}


def first_failures(where: Path) -> list[tuple[str, str]]:
    """(test, ReFrame's reason) of each attempt that failed before the last, from the check
    runs' reports (``<prefix>-report.json``; none before the reports were kept)."""
    out = []
    for path in sorted(where.glob('tuned*-report.json')):
        try:
            runs = json.loads(path.read_text())['runs']
        except (OSError, ValueError, KeyError) as err:
            out.append((path.name, f'unreadable report ({err}): reasons not shown'))
            continue
        out += [(case['display_name'], (case.get('fail_reason') or '?')[:300])
                for run in runs[:-1] for case in run['testcases']
                if case.get('result') == 'fail']
    return out


def summary(where: Path) -> tuple[list[str], int]:
    """The table lines of one environment's comparisons, and the count of slower cells."""
    rows = []
    # each test's last attempt (a later --tuned-prefix's run of the same test replaces it)
    found: dict[str, Path] = {}
    for prefix in sorted(p for p in where.glob('tuned*') if p.is_dir()
                         and not p.name.endswith('-perflogs')):
        for path in narrow.last_attempts(prefix):
            found[path.parent.name.split('_retry')[0]] = path
    for _, path in sorted(found.items()):
        data = json.loads(path.read_text())
        # what the comparison says of all its rows: the column compared, whether the load
        # touches the collective (absent from a comparison written before they were kept)
        kind = {k: data[k] for k in ('metric', 'touched') if k in data}
        rows += [(data['benchmark'], data['ranks'], {**judged(r), **kind})
                 for r in data['rows']]
    if not rows:
        said = (f'{_kept(where)} cells of the study, no rule' if _kept(where) else
                'nothing recommended, no file written')
        return [f'  no comparison ran ({said}: see tune.log and tuned.log)'], 0
    ruled = [r for _, _, r in rows if r.get('ruled')]
    faster = [r for r in ruled if r['ratio_high'] < 1]
    beyond = [r for r in ruled if r['outcome'] == 'faster']
    slower = [f"{b} {n} ranks {r['size']} B ({r['algorithm']}: {r['ratio']:.2f} "
              f"[{r['ratio_low']:.2f}, {r['ratio_high']:.2f}])"
              for b, n, r in rows if r['outcome'] == 'slower']
    benches = sorted({(b, n) for b, n, _ in rows})
    lines = [f'  cells measured with and without the load: {len(rows)} '
             f'({len(benches)} collective x scale pairs: '
             + ', '.join(f'{b.removeprefix("osu_")}@{n}' for b, n in benches) + ')',
             f'  cells where a rule applies: {len(ruled)}; faster with the 95 % interval below '
             f'1: {len(faster)} ({len(faster) / len(ruled):.0%})' if ruled else
             '  cells where a rule applies: 0',
             f'  beyond the threshold (interval below 1 - 5 %): {len(beyond)}; median gain '
             f'there {_gain(beyond)} (median of the cells\' gains [medians of their interval '
             'bounds])',
             f'  slower beyond the noise (99 % interval above 1, >= 5 %), of all {len(rows)} '
             f'cells: {len(slower)}']
    # how much "not slower" shows: where no rule applies, the load should run the default
    rest = [r for _, _, r in rows if not r.get('ruled')]
    if rest:
        tight = [r for r in rest if 1 / TIGHT <= r['ratio_low'] and r['ratio_high'] <= TIGHT]
        width = statistics.median(r['ratio_high'] / r['ratio_low'] for r in rest)
        lines.append(f'  cells without a rule: {len(rest)}; shown at the default\'s speed '
                     f'(interval within {1 / TIGHT:.2f}-{TIGHT:.2f}): {len(tight)} '
                     f'({len(tight) / len(rest):.0%}); median interval width (high/low) '
                     f'{width:.2f}')
    nonblocking = [r for _, _, r in rows if r.get('metric') == 'pure_comm']
    if nonblocking:
        lines.append(f'  of them non-blocking (pure communication time): {len(nonblocking)}, '
                     f"slower {sum(r['outcome'] == 'slower' for r in nonblocking)}")
    untouched = [r for _, _, r in rows if r.get('touched') is False]
    if untouched:
        lines.append(f'  of them on collectives the load does not touch: {len(untouched)}, '
                     f"slower {sum(r['outcome'] == 'slower' for r in untouched)}")
    lines += [f'    SLOWER: {s}' for s in slower]
    scales = sorted({n for _, n, _ in rows})
    lines.append('  by scale (ranks: cells, slower): ' + ', '.join(
        f"{n}: {sum(1 for _, m, _ in rows if m == n)}, "
        f"{sum(1 for _, m, r in rows if m == n and r['outcome'] == 'slower')}" for n in scales))
    logs = [log.read_text() for log in sorted(where.glob('tuned*.log'))]
    retried = sum(int(n) for text in logs
                  for n in re.findall(r'Retrying (\d+) failed check', text))
    if retried:
        lines.append(f'  failed at the first attempt and re-measured (--max-retries 1): '
                     f'{retried} test(s); the counts above are the last attempt\'s')
        lines += [f'    first attempt: {name}: {reason}' for name, reason in first_failures(where)]
    # tests that failed at the last attempt too, each with ReFrame's reason (a proof, a
    # slower cell, or a run that did not complete: then no comparison counts above), unless a
    # later run (a later log, or its retry) passed it
    failed: dict[str, str] = {}
    for log in logs:
        text = re.sub(r'\x1b\[[0-9;]*m', '', log)
        for outcome, name in re.findall(r'^\[ +(OK|FAIL) \] \(\s*\d+/\d+\) (.+?) /[0-9a-f]{8} @',
                                        text, re.M):
            failed.pop(name, None) if outcome == 'OK' else failed.setdefault(name, '?')
        for name, reason in re.findall(r'FAILURE INFO for (.+?) \(run: .*?\* Reason: ([^\n]+)',
                                       text, re.S):
            failed[name] = reason
    lines += [f'  FAILED: {name}: {reason[:200]}' for name, reason in failed.items()]
    return lines, len(slower)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--environ', action='append', required=True)
    p.add_argument('--dir', type=Path, default=REPO / '.omb' / 'tuning-gain')
    p.add_argument('--system', default='local')
    p.add_argument('-C', dest='configs', action='append', metavar='FILE',
                   help="the site's ReFrame configuration (repeatable, e.g. site.py then "
                        'reframe/config/modes.py); default: reframe/config/settings.py')
    p.add_argument('--collectives', default='bcast,allreduce,alltoall,allgather')
    p.add_argument('--check-collectives', default='',
                   help='the proving check\'s collectives (default: every one the load touches)')
    p.add_argument('--scales', default='2,4')
    p.add_argument('--validate-scales', default='3,5',
                   help='scales the sweep skips, validated by the proving check (\'\': none)')
    p.add_argument('--max-size', type=int, default=65536)
    p.add_argument('--sessions', type=int, default=5)
    p.add_argument('--repeat', type=int, default=5)
    p.add_argument('--oversubscribe', type=int, default=2)
    p.add_argument('--iterations', type=int, default=0,
                   help="OSU's iterations per size in the sweep and the check alike (warm-up: "
                        "a tenth; default: OSU's own): oversubscribed MPICH polls")
    p.add_argument('--untouched', action='store_true',
                   help='measure the collectives the load does not touch too')
    p.add_argument('--skip-sweep', action='store_true')
    p.add_argument('--skip-tune', action='store_true')
    p.add_argument('--tuned-prefix', default='tuned')
    p.add_argument('--narrow', action='append', type=Path, default=[], metavar='DIR',
                   help="omb-review tune --narrow: a proving run's ReFrame prefix whose slower "
                        "sizes the rules leave to the library (repeatable)")
    p.add_argument('--smoke', action='store_true')
    args = p.parse_args()
    CONFIGS[:] = [str(Path(c).resolve()) for c in args.configs or CONFIGS]
    # absolute: ReFrame takes a relative perflog directory as relative to its --prefix
    args.dir = args.dir.resolve()
    args.osu = (['-S', f'iterations={args.iterations}', '-S',
                 f'warmup={max(1, args.iterations // 10)}'] if args.iterations else [])
    if args.smoke:
        args.collectives, args.scales, args.max_size, args.sessions = 'bcast', '2', 64, 3
        args.check_collectives, args.validate_scales = 'bcast', ''
        args.osu = ['-S', 'iterations=50', '-S', 'warmup=5']
    rc, slower = 0, 0
    for env in args.environ:
        print(f'== {env}')
        rc |= pipeline(args, env)
        lines, n = summary(args.dir / env)
        slower += n
        print('\n'.join(lines))
    verdict = (f'NOT met ({slower} cells)' if slower else
               'not judged: a step failed (above)' if rc else 'met')
    print(f'target (never slower than the default beyond the noise): {verdict}')
    return 1 if rc or slower else 0


if __name__ == '__main__':
    sys.exit(main())
