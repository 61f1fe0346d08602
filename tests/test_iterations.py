"""-x/-i from the partition's own history (omb_suite.cost.iterations, rfm/earlier_runs.py): the
choice on real perflogs, the gate's settings it rests on, and the counts in the generated
command, with the reason printed; --mode upgrade and no history keep OSU's defaults. Where
the environment's OSU has iteration buckets (7.5.1 and later), a count per size range in the
one launch, written as a real OSU 8.0b2 reads it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from rfm_helpers import (
    fake_osu_tree,
    job_scripts,
    launch_line,
    run_reframe,
    two_family_registry,
    write_registry,
)
from testdata import REPO

from omb_review.judge.detect import Settings, noise
from omb_suite.cost import fit as costfit
from omb_suite.cost import iterations
from omb_suite.osu import counts as osu_counts
from omb_suite.osu import limits as osu_limits
from omb_suite.osu.parsing import parse_osu_output
from omb_suite.rfm.earlier_runs import count_ran

TREND = REPO / 'tests' / 'review' / 'data' / 'trend' / 'local' / 'default' / 'OsuPt2Pt.log'
SPREAD = REPO / 'tests' / 'data' / 'iterations' / 'osu73_openmpi_spread.json'
QUIET = REPO / 'tests' / 'data' / 'iterations' / 'osu73_openmpi_spread_quiet.json'
LATENCY = 'OsuPt2Pt %benchmark=osu_latency %placement=intra_socket %buffers=H H'
OSU80 = REPO / 'tests' / 'data' / 'osu80'


def _history(benchmark: str, runs: int) -> list[iterations.SizeHistory]:
    """The real trend perflog (80 sessions at OSU's defaults): first ``runs`` per size."""
    rows = [r for r in costfit.read_perflog(TREND)[0] if r['benchmark'] == benchmark]
    metric = 'latency' if benchmark == 'osu_latency' else 'bandwidth'
    sizes = sorted({int(r['perf_var'].split('_')[1]) for r in rows
                    if r['perf_var'].startswith(f'{metric}_')})
    return [iterations.SizeHistory(s, [float(r['perf_value']) for r in rows
                                       if r['perf_var'] == f'{metric}_{s}'][:runs], None)
            for s in sizes]


def test_the_goal_uses_the_gates_own_settings():
    g, s = iterations.goal(), Settings()
    assert (g.alpha, g.z_min, g.threshold, g.baseline) == \
        (s.alpha, s.z_min, s.threshold, s.baseline_runs)


@pytest.mark.parametrize('benchmark', ['osu_latency', 'osu_bw'])
def test_spread_is_the_gates_noise_over_the_median(benchmark):
    for h in _history(benchmark, 80):
        y = np.array(h.values)
        assert iterations.spread(y) == pytest.approx(noise(y) / np.median(y))


def test_power_and_the_spread_it_needs_are_inverse():
    g = iterations.goal()
    for p in (0.05, 0.3, 0.45):
        assert iterations.power(iterations.spread_needed(p, g), g) == pytest.approx(p, rel=1e-6)
    assert iterations.power(0.01, g) > iterations.power(0.05, g) > iterations.power(0.2, g)


def test_a_step_equal_to_the_gates_threshold_is_caught_at_most_half_the_time():
    g = iterations.goal()
    assert g.step == g.threshold
    assert iterations.power(1e-4, g) == pytest.approx(0.5)
    assert iterations.spread_needed(g.power, g) == 0  # 90 % is out of reach


def _measured(path: Path = SPREAD) -> dict:
    """The exponents fitted from the real OSU runs recorded in tests/data/iterations."""
    cells: dict = {}
    for r in json.loads(path.read_text())['runs']:
        for size, value in r['values'].items():
            cells.setdefault((r['program'], r['band'], int(size)), {}).setdefault(
                r['iterations'], []).append(value)
    return {k: {b: e for b, (_, e) in bands.items()}
            for k, bands in iterations.fit_exponents(cells).items()}


def test_the_recorded_runs_say_iterations_do_not_narrow_latency_on_this_vm():
    """Real OSU 7.3 runs at 3-100 % of OSU's counts (loaded 2-core VM): the spread of
    osu_latency's figures does not shrink with iterations; osu_allreduce's small sizes do."""
    fitted = _measured()
    assert fitted['latency'] == {'small': 0.0, 'large': 0.0}
    assert 0 < fitted['collective']['small'] <= 0.5
    assert json.loads(SPREAD.read_text())['provenance']['osu'].startswith('OSU 7.3')


def test_osu_8_runs_under_load_say_the_same_of_latency():
    """Real OSU 8.0b2 runs (counts in the bucket form, 1-100 % of OSU's; the VM loaded by
    other work): more iterations do not narrow latency's spread there either."""
    path = SPREAD.with_name('osu80_openmpi_spread_loaded.json')
    data = json.loads(path.read_text())
    assert data['provenance']['osu'].startswith('OSU 8.0b2')
    assert min(r['iterations'] for r in data['runs']) == iterations.goal().lowest_iterations
    fitted = _measured(path)
    assert fitted['latency']['small'] == 0.0 and fitted['latency']['large'] <= 0.1



def test_osu_8_runs_on_the_quiet_vm_say_the_same_of_small_latency():
    """Real OSU 8.0b2 runs, quiet VM (2026-11-27, docs/dev/iterations.md): more iterations
    do not narrow the small sizes' latency spread, and do narrow bandwidth's small sizes."""
    path = SPREAD.with_name('osu80_openmpi_spread_quiet.json')
    assert json.loads(path.read_text())['provenance']['osu'].startswith('OSU 8.0b')
    fitted = _measured(path)
    assert fitted['latency']['small'] == 0.0
    assert 0 < fitted['bandwidth']['small'] <= 0.5

def test_the_quiet_runs_reach_down_to_the_lowest_fraction():
    """The same runs on the quiet VM (2026-11-26) at 1-100 % of OSU's counts: the floor of
    data/iterations.yaml is inside the measured range, and latency's spread barely narrows
    (upper bounds under 0.2, far from independent iterations' 0.5)."""
    runs = json.loads(QUIET.read_text())['runs']
    g = iterations.goal()
    assert min(r['iterations'] for r in runs if r['program'] == 'osu_latency'
               and r['band'] == 'small') == round(g.lowest_fraction * 10000)
    assert min(r['iterations'] for r in runs) == g.lowest_iterations
    fitted = _measured(QUIET)
    assert 0 < fitted['latency']['small'] < 0.2 and 0 < fitted['latency']['large'] < 0.2


def test_latency_on_the_noisy_vm_runs_the_fewest_iterations_at_the_same_power():
    choice = iterations.choose('osu_latency', 'osu_latency intra_socket',
                               _history('osu_latency', 30), shrink=_measured())
    # spread does not shrink with iterations there: the fewest the measured range allows
    assert choice.iterations == round(iterations.goal().lowest_fraction * 10000)
    assert choice.warmup == 10  # OSU's smaller default warm-up of osu_latency
    assert choice.reason.startswith('osu_latency intra_socket: -i 100 -x 10 for the whole '
                                    'sweep (history: 30 runs; weakest 1 KiB, spread 24.3%')
    caught, default = (float(p.rstrip('%)')) for p in
                       choice.reason.split('caught at ')[1].split(" (OSU's defaults: "))
    assert caught >= default - 100 * iterations.goal().power_loss


def test_independent_iterations_keep_the_defaults_power_within_its_loss():
    """At 1 % spread and independent iterations (the default exponent), osu_latency needs
    (1 % / the spread at which the gate keeps its power at OSU's defaults less power_loss)^2
    of OSU's 10000."""
    g = iterations.goal()
    choice = iterations.choose_for_spread('osu_latency', 'lat', [1, 8, 1024], 0.01)
    need = 10000 * (0.01 / iterations.spread_needed(iterations.power(0.01, g) - g.power_loss,
                                                    g)) ** 2
    assert need <= choice.iterations <= need * 1.05 < 10000


def test_too_short_a_history_keeps_osus_defaults():
    choice = iterations.choose('osu_latency', 'osu_latency intra_socket',
                               _history('osu_latency', 5))
    assert (choice.warmup, choice.iterations) == (None, None)
    assert 'fewer than 20 runs at 1 B, 8 B, 1 KiB, 64 KiB, 1 MiB, 4 MiB' in choice.reason


def test_counts_that_would_cost_more_than_the_defaults_are_not_taken():
    choice = iterations.choose('osu_latency', 'lat', _history('osu_latency', 30),
                               cost=lambda c: 1.0 if c == osu_counts.Counts() else 2.0)
    assert (choice.warmup, choice.iterations) == (None, None)
    assert 'would cost more' in choice.reason


def test_buckets_give_small_sizes_fewer_iterations_where_the_large_ones_need_more():
    """The quiet run's exponents: one -i is what the large sizes need (650 of 1000) for the
    whole sweep; with buckets the small sizes take the fewest their spread allows."""
    hist = _history('osu_latency', 30)
    one = iterations.choose('osu_latency', 'lat', hist, shrink=_measured(QUIET))
    per = iterations.choose('osu_latency', 'lat', hist, shrink=_measured(QUIET), buckets=True)
    assert per.iterations_large == one.iterations < 1000
    assert per.iterations < one.iterations
    assert per.reason.startswith(f'lat: -i {per.iterations} -x 10 up to 8 KiB, '
                                 f'-i {one.iterations} -x 10 above, in one launch (history')


def test_buckets_keep_the_gates_power_at_every_size():
    g = iterations.goal()
    for bench in ('osu_latency', 'osu_bw'):
        choice = iterations.choose(bench, bench, _history(bench, 30), shrink=_measured(QUIET),
                                   buckets=True)
        caught, default = (float(p.rstrip('%)')) for p in
                           choice.reason.split('caught at ')[1].split(" (OSU's defaults: "))
        assert caught >= default - 100 * g.power_loss, choice.reason


def test_counts_are_written_as_the_osu_reads_them():
    both = osu_counts.Counts(10, 100, 2, 20)
    assert osu_counts.options('osu_allreduce', both, buckets=True) == \
        ['-x', '8192:2:10', '-i', '8192:20:100']
    # one count: OSU 8.0b2 ignores a lone -x N for its per-size warm-up, so the bucket form
    assert osu_counts.options('osu_bw', osu_counts.Counts(2, 14), buckets=True) == \
        ['-x', '8192:2:2', '-i', '8192:14:14']
    assert osu_counts.options('osu_bw', osu_counts.Counts(2, 14), buckets=False) == \
        ['-x', '2', '-i', '14']
    # a range left at OSU's default gets OSU's default count in the bucket
    assert osu_counts.options('osu_latency', osu_counts.Counts(None, None, 10, 300),
                              buckets=True) == ['-x', '8192:10:100', '-i', '8192:300:10000']
    assert osu_counts.options('osu_latency', osu_counts.Counts(), buckets=True) == []
    with pytest.raises(ValueError, match=r'OSU 7\.5\.1 or later'):
        osu_counts.options('osu_allreduce', both, buckets=False)


def test_a_real_osu_8_run_has_the_iterations_the_counts_say():
    """OSU 8.0b2 (built by hand), osu_allreduce -f run with the options written for
    Counts(7, 20, 3, 50): its Iterations column is 20 up to 8 KiB and 50 above."""
    counts = osu_counts.Counts(7, 20, 3, 50)
    text = (OSU80 / 'cap80_ompi_osu_allreduce_buckets.txt').read_text()
    assert text.splitlines()[0].endswith(' '.join(osu_counts.options('osu_allreduce', counts,
                                                                     buckets=True)))
    ran = parse_osu_output(text).column('iterations')
    assert min(ran) == 4 and max(ran) == 65536
    assert {size: n for size, n in ran.items()} == \
        {size: counts.at('osu_allreduce', size)[1] for size in ran}
    assert {ran[8192], ran[16384]} == {20, 50}


def test_history_reads_each_sizes_count_from_a_bucketed_record():
    """Synthetic records (a real trend record re-labelled with bucket counts)."""
    row = dict(costfit.read_perflog(TREND)[0][0], iterations='150', iterations_large='650')
    assert (count_ran(row, 1024), count_ran(row, 65536)) == (150, 650)
    row = dict(row, iterations='', iterations_large='650')
    assert (count_ran(row, 8), count_ran(row, 4194304)) == (None, 650)
    assert count_ran(dict(row, iterations='300', iterations_large=''), 65536) == 300
    # 8192 B of osu_latency ran the large count on OSU 8.0 (pt2pt_entry.c), the small on 7.x
    row = dict(row, benchmark='osu_latency', iterations='150', iterations_large='650')
    assert count_ran(dict(row, osu_version='8.0b'), 8192) == 650
    assert count_ran(dict(row, osu_version='7.3'), 8192) == 150
    assert count_ran(dict(row, osu_version='null'), 8192) == 150


@pytest.fixture
def history_dir(tmp_path):
    """System ``vm``: ``local`` with the exponents measured on this VM declared
    (``iteration_shrink``), and the real trend perflog (80 sessions) as its partition's
    history, its environment renamed to the dry run's registry name."""
    systems = tmp_path / 'systems'
    systems.mkdir()
    local = (REPO / 'reframe' / 'config' / 'systems' / 'local.py').read_text()
    (systems / 'vm.py').write_text(
        local.replace("'name': 'local'", "'name': 'vm'")
        .replace("'extras': {", f"'extras': {{'iteration_shrink': {_measured()!r}, "))
    where = tmp_path / 'results' / 'vm' / 'default'
    where.mkdir(parents=True)
    # as ReFrame rotates a perflog written before the columns warmup/iterations
    (where / 'OsuPt2Pt.log.h0').write_text(TREND.read_text().replace('|system-openmpi|',
                                                                     '|test-openmpi|'))
    return tmp_path


def _dry_run(tmp, *args: str):
    return run_reframe(tmp, '--dry-run', '-p', 'test-openmpi', '-n', 'OsuPt2Pt', *args,
                       registry=two_family_registry(tmp), checks=('osu_pt2pt.py',),
                       extra_env={'OMB_SYSTEMS_PATH': str(tmp / 'systems')})


def _latency_script(tmp_path) -> str:
    return next(s for s in job_scripts(tmp_path).values() if '/osu_latency ' in s)


def test_dry_run_takes_the_counts_from_history_and_prints_why(history_dir):
    out = _dry_run(history_dir, '--system', 'vm')
    assert out.returncode == 0, out.stdout + out.stderr
    line = launch_line(_latency_script(history_dir), 'osu_latency')
    assert ' -x 10 -i 100' in line
    assert f'{LATENCY} on vm:default+test-openmpi: -i 100 -x 10 for the whole sweep ' \
           '(history: 80 runs; weakest' in out.stdout


@pytest.mark.parametrize('off', ['0', 'false', 'no'])
def test_iterations_from_history_off_on_the_command_line_keeps_osus_defaults(history_dir, off):
    out = _dry_run(history_dir, '--system', 'vm', '-S', f'iterations_from_history={off}')
    assert out.returncode == 0, out.stdout + out.stderr
    line = launch_line(_latency_script(history_dir), 'osu_latency')
    assert ' -i ' not in line and ' -x ' not in line, line
    assert 'for the whole sweep' not in out.stdout


def test_mode_upgrade_keeps_full_counts(history_dir):
    out = _dry_run(history_dir, '--system', 'vm', '--mode', 'upgrade')
    # upgrade requires references, which a scratch prefix has none of: the scripts are written
    assert 'no reference value found' in out.stdout
    assert ' -x 1000 -i 10000' in launch_line(_latency_script(history_dir), 'osu_latency')
    assert 'for the whole sweep' not in out.stdout


def test_no_history_keeps_osus_defaults(tmp_path):
    (tmp_path / 'systems').mkdir()
    out = _dry_run(tmp_path, '--system', 'local')
    assert out.returncode == 0, out.stdout + out.stderr
    line = launch_line(_latency_script(tmp_path), 'osu_latency')
    assert ' -i ' not in line and ' -x ' not in line
    assert 'fewer than 20 runs' in out.stdout


@pytest.mark.parametrize(('osu', 'expected'), [
    ('8.0b2', ' -x 8192:10:10 -i 8192:{large}:{small}'),
    ('7.5.1', ' -x 8192:10:10 -i 8192:{large}:{small}'),
    ('7.4', ' -x 10 -i {one}'),
    (None, ' -x 10 -i {one}'),
])
def test_dry_run_passes_buckets_only_to_an_osu_that_has_them(history_dir, osu, expected):
    registry = write_registry(history_dir / 'environments.json', [
        {'name': 'test-openmpi', 'mpi_family': 'openmpi', 'mpi_version': '4.1.4',
         'osu_root': str(fake_osu_tree(history_dir / 'osu')), 'source': 'system',
         **({'osu_version': osu} if osu else {})}])
    hist = _history('osu_latency', 80)
    per = iterations.choose('osu_latency', 'lat', hist, shrink=_measured(), buckets=True)
    one = iterations.choose('osu_latency', 'lat', hist, shrink=_measured())
    out = run_reframe(history_dir, '--dry-run', '-p', 'test-openmpi', '-n', 'OsuPt2Pt',
                      '--system', 'vm', registry=registry, checks=('osu_pt2pt.py',),
                      extra_env={'OMB_SYSTEMS_PATH': str(history_dir / 'systems')})
    assert out.returncode == 0, out.stdout + out.stderr
    line = launch_line(_latency_script(history_dir), 'osu_latency')
    small, large = per.iterations, per.iterations_large or per.iterations
    assert expected.format(small=small, large=large, one=one.iterations) in line, line
    assert (' up to 8 KiB' in out.stdout) == ('8192:' in expected)


def _calls(name: str) -> tuple[str, dict[int, int]]:
    """The command and rank 0's calls per size of a counted real OSU 8.0b2 run."""
    text = (REPO / 'tests' / 'data' / 'osu80-counts' / f'{name}.txt').read_text()
    line = next(x for x in text.splitlines() if ':' in x and not x.startswith(('$', '#')))
    return text.splitlines()[0], {int(size): int(n) for size, n in
                                  (w.split(':') for w in line.split() if ':' in w)}


@pytest.mark.parametrize(('name', 'benchmark', 'per_iteration'), [
    ('allreduce_buckets', 'osu_allreduce', 1), ('bw_buckets', 'osu_bw', 64),
    ('latency_buckets', 'osu_latency', 1)])
def test_osu_8_runs_each_size_as_the_bucket_form_says(name, benchmark, per_iteration):
    """Real OSU 8.0b2 runs, its MPI calls counted: -x 8192:3:7 -i 8192:50:20 is 7 + 20 up to
    8 KiB and 3 + 50 above (osu_latency takes 8192 B itself as large: osu_limits knows)."""
    counts = osu_counts.Counts(7, 20, 3, 50)
    command, calls = _calls(name)
    assert command.endswith(' '.join(osu_counts.options(benchmark, counts, buckets=True)))
    for size, n in calls.items():
        large = size >= 8192 if benchmark == 'osu_latency' else size > 8192
        assert n == per_iteration * (53 if large else 27), (size, n)
        assert n == per_iteration * sum(counts.at(benchmark, size, '8.0b')), size
    if benchmark == 'osu_latency':   # OSU 7.x's rule, with no version, keeps 8192 B small
        assert counts.at(benchmark, 8192) == (7, 20)


@pytest.mark.parametrize(('name', 'benchmark'), [
    ('latency_defaults', 'osu_latency'), ('allreduce_defaults', 'osu_allreduce')])
def test_osu_8_defaults_per_size_are_what_osu_limits_plans(name, benchmark):
    """Real OSU 8.0b2 runs at OSU's defaults, MPI calls counted: osu_latency runs 8192 B with
    10 + 1000 (the large counts), osu_allreduce with 100 + 1000 (the small ones)."""
    calls = _calls(name)[1]
    plan = osu_limits.loop(benchmark, sorted(calls), osu_version='8.0b')
    assert calls == {size: skip + n for size, skip, n in plan}
    assert osu_counts.bucket_edge() == osu_limits.large_message_size() == 8192


def test_osu_8_takes_a_lone_warmup_for_its_iterations_after_i():
    """Why the suite writes the bucket form on OSU >= 7.5.1 (real OSU 8.0b2 runs): OSU's
    defaults are 1000 + 100 and 100 + 10; '-x 10 -i 100' keeps the small warm-up of 100 at
    every size, '-i 100 -x 10' runs 10 iterations."""
    assert _calls('allreduce_defaults')[1] == {4096: 1100, 8192: 1100, 16384: 110, 32768: 110}
    assert set(_calls('allreduce_x_then_i')[1].values()) == {100 + 100}
    assert set(_calls('allreduce_i_then_x')[1].values()) == {10 + 100}


def test_counts_per_size_range_by_hand_skip_an_osu_without_buckets(history_dir):
    out = _dry_run(history_dir, '--system', 'vm', '-S', 'iterations_large=50')
    assert "iterations_large need OSU's iteration buckets (OSU 7.5.1 or later); this " \
           "environment's OSU: 7.4" in out.stdout, out.stdout[-3000:]
    assert not [s for s in job_scripts(history_dir).values() if '/osu_latency ' in s]
