"""Every script under benchmarks/ runs once with its smallest settings and exits 0, so a
broken one fails CI (none is timed here: the scripts measure, their targets are theirs).
Scripts that launch OSU use ``$OSU_ROOT`` (Open MPI; CI exports it) and skip otherwise.
About 100 s in all on the 2-core VM."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from rfm_helpers import local_registry, needs_osu, osu_root
from testdata import REPO

BENCHMARKS = REPO / 'benchmarks'
REVIEW_PERFLOGS = REPO / 'tests' / 'review' / 'data' / 'ours'
#: The gate's smoke: the mini-cluster's sets (10 A/A sessions and a real regression; the whole
#: data took 70 s even with --quick)
GATE_SETS = [str(REPO / 'tests' / 'data' / 'gate' / s)
             for s in ('mc-aa', 'mc-reg-ompi-tcp-buffers')]

#: Sessions that ran one Open MPI as ab-a and ab-b, and ab-nosc beside them (side by side)
SIDE_BY_SIDE = str(REPO / 'tests' / 'data' / 'gate' / 'local-side-by-side')

#: (script, smallest arguments, what the run must print); ``{tmp}`` is a scratch directory.
WITHOUT_OSU = [
    ('osu_corpus.py', [], 'benchmark outputs'),
    # the injected regression names what changed only with enough history before it
    ('review_bench.py', ['--dir', '{tmp}/tree', '--nights', '60', '--repeat', '1'],
     'target 1 finding'),
    ('report_bench.py', ['--dir', '{tmp}/tree', '--nights', '20', '--repeat', '1'], 'page'),
    ('review_detection.py', [str(REVIEW_PERFLOGS), '--min-history', '3', '--latest', '3'],
     'false alarms'),
    ('scale_costs.py', ['audit', '--system', 'example-epyc-xl'], '0 violations'),
    ('verdict_power.py', ['--smoke'], 'node-minutes ratio'),
    ('gate_operating.py', ['--quick', *GATE_SETS], 'nightly A/A: false alarms'),
    ('interleaved_gate.py', [SIDE_BY_SIDE, '--pair', 'ab-a:ab-b:aa', '--pair',
                             'ab-a:ab-nosc:regression', '--pairs', '6'], '6 pairs: comparisons'),
    ('launch_modes.py', [SIDE_BY_SIDE, '-e', 'ab-a', '-e', 'ab-b'], 'sizes of headline figures'),
]
WITH_OSU = [
    ('scale_costs.py', ['collectives', '--ranks', '2,4'], 'median error'),
    ('scale_costs.py', ['twice', '--dir', '{tmp}/twice', '--', '-p', 'system-openmpi', '-n',
                        'OsuPt2Pt%benchmark=osu_latency%placement=intra_socket%buffers=HH',
                        '-S', 'max_size=8', '-S', 'iterations=100', '-S', 'warmup=10'],
     'run 2: exit 0'),
    ('harness_overhead.py', ['--smoke', '--environ', 'system-openmpi'], 'listing with the'),
    ('osu_launchers.py', ['--smoke'], 'launchers'),
    ('tuning_gain.py', ['--smoke', '--environ', 'system-openmpi', '--dir', '{tmp}/tuning'],
     'target (never slower than the default'),
    ('budget_spend.py', ['{tmp}/spend', '--budget', '0.03', '--sessions', '2', '--', '-p',
                         'system-openmpi', '-n', 'OsuPt2Pt', '-E',
                         "placement == 'intra_socket' and buffers == 'H H'",
                         '-S', 'max_size=8', '-S', 'iterations=100', '-S', 'warmup=10'],
     'spent within +-20 %'),
    ('gate_record.py', ['{tmp}/rec', '--set', 'smoke', '--reruns', '0', '--', '-p',
                        'system-openmpi', '-n',
                        'OsuPt2Pt%benchmark=osu_latency%placement=intra_socket%buffers=HH',
                        '-S', 'max_size=8', '-S', 'iterations=100', '-S', 'warmup=10'],
     'smoke-1: exit 0'),
]


def run_script(tmp_path, script: str, args: list[str], env: dict[str, str] | None = None):
    cmd = [sys.executable, str(BENCHMARKS / script), *(a.format(tmp=tmp_path) for a in args)]
    return subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=600,
                          env={**os.environ, **(env or {})})


def test_every_benchmark_script_is_run_here():
    covered = {script for script, _, _ in WITHOUT_OSU + WITH_OSU}
    assert covered == {p.name for p in BENCHMARKS.glob('*.py')}


@pytest.mark.parametrize(('script', 'args', 'says'), WITHOUT_OSU,
                         ids=[f'{s}-{a[0] if a else ""}' for s, a, _ in WITHOUT_OSU])
def test_a_benchmark_script_runs(tmp_path, script, args, says):
    out = run_script(tmp_path, script, args)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert says in out.stdout


@needs_osu()
@pytest.mark.parametrize(('script', 'args', 'says'), WITH_OSU,
                         ids=[f'{s}-{a[0]}' for s, a, _ in WITH_OSU])
def test_a_benchmark_script_that_launches_osu_runs(tmp_path, script, args, says):
    registry = local_registry(tmp_path, osu_openmpi=osu_root('OSU_ROOT'))
    out = run_script(tmp_path, script, args, env={'OMB_ENVIRONMENTS_FILE': str(registry)})
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert says in out.stdout
