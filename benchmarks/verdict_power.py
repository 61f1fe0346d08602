"""Node-minutes of a verdict of known power: counts from history (omb_suite.cost.iterations) vs
OSU's defaults, at the gate's detection power measured by replaying real noise.

    python benchmarks/verdict_power.py [PERFLOG_DIR ...] [--smoke] [--step 0.05]
        For every series of each perflog directory (default: the 80 real sessions of
        tests/review/data/trend, OSU's default counts): the counts iterations.choose takes from
        its first --history runs, both ways: one -i for the whole sweep (OSU before 7.5.1) and
        a count per size range in one launch (OSU's iteration buckets), then the gate slid
        over the rest as benchmarks/review_detection.py does (latest/baseline windows of
        data/iterations.yaml),
        on the values as measured (OSU's defaults) and on the same values with each run's
        deviation from the series median scaled by the modelled spread ratio at the chosen
        counts (the real sequence, two states and drift included; the scaling is the model
        measured by `measure`; --measured F, repeatable: whose exponents). False alarms and
        detections of a --step step, per count,
        and the predicted seconds (cost model fitted from the same perflog) of each test at
        each count: the node-minutes ratio; --wall N: each test's whole sweep also run for
        real (bare launches, OSU from --osu) N times at each count, interleaved (the counts
        as that OSU reads them: osu_counts.options; buckets only where it has them); --launch:
        the launch command (default: mpirun -np 2 here; on the mini-cluster, e.g.
        'srun -N 2 -n 2 --mpi=pmix', docs/benchmarks.md).
        --smoke: osu_latency only, 20 runs of history, no prediction for another system.
    python benchmarks/verdict_power.py predict SYSTEM
        Only the prediction for SYSTEM (the default run ends with it for --predict).
    python benchmarks/verdict_power.py measure OUT.json [--reps 12] [--osu VIEW]
        Real OSU runs (osu_latency, osu_bw, osu_allreduce, 2 ranks, --launch) at 1-100 % of OSU's
        default counts, small (1 B-1 KiB) and large (64 KiB-4 MiB) sizes as separate launches
        (counts as osu_counts.options writes them for that OSU), the cases shuffled within
        each repetition: the data the exponents are fitted from.
    python benchmarks/verdict_power.py fit OUT.json
        How the spread (the gate's estimator) shrinks with iterations, per OSU loop and band:
        the slope of log spread on log iterations (sizes as fixed effects) and its upper
        95 % bound, clamped to [0, 0.5]: what a partition declares as ``iteration_shrink``.

Numbers measured on the shared 2-core development machine are noisy: say so.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import runpy
import shlex
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np

from omb_review.judge import gate
from omb_review.judge.detect import Settings
from omb_review.read.ingest import load
from omb_review.read.series import worse_when
from omb_suite.cost import fit as costfit
from omb_suite.cost import iterations
from omb_suite.cost import model as costmodel
from omb_suite.osu import catalogue
from omb_suite.osu import counts as osu_counts
from omb_suite.osu import limits as osu_limits
from omb_suite.osu import versions as osu_versions
from omb_suite.osu.parsing import parse_osu_output

REPO = Path(__file__).resolve().parents[1]
TREND = REPO / 'tests' / 'review' / 'data' / 'trend'
SPREAD = REPO / 'tests' / 'data' / 'iterations' / 'osu73_openmpi_spread_quiet.json'
VIEW = REPO / 'spack' / 'environments' / 'openmpi' / '.spack-env' / 'view'
PROGRAMS = ('osu_latency', 'osu_bw', 'osu_allreduce')
RANGES = {'small': (1, 1024), 'large': (65536, 4194304)}
FRACTIONS = (0.01, 0.03, 0.1, 0.3, 1.0)
MPIRUN = ('mpirun', '--allow-run-as-root', '--oversubscribe', '-np', '2')
WAYS = ('default', 'one -i', 'buckets')


def _program(view: Path, prog: str) -> Path:
    return view / 'libexec' / 'osu-micro-benchmarks' / 'mpi' / catalogue.get(prog).group / prog


def has_buckets(view: Path) -> tuple[str | None, bool]:
    """(release, iteration buckets?) of the OSU under ``view``, from its osu_latency."""
    version = osu_versions.banner_version(_program(view, 'osu_latency'))
    return version, osu_versions.supports(version, 'iteration_buckets')


def measure(out: Path, reps: int, view: Path, launch: list[str]) -> None:
    version, buckets = has_buckets(view)
    cases = []
    for prog in PROGRAMS:
        for band, (lo, hi) in RANGES.items():
            for f in FRACTIONS:
                _, x, i = osu_limits.loop(prog, [hi])[0]
                cases.append((prog, band, lo, hi, max(2, round(i * f)), max(1, round(x * f))))
    records, start = [], time.strftime('%FT%TZ', time.gmtime())
    for rep in range(reps):
        random.shuffle(cases)
        for prog, band, lo, hi, i, x in cases:
            cmd = [*launch, str(_program(view, prog)), '-m', f'{lo}:{hi}',
                   *osu_counts.options(prog, osu_counts.Counts(x, i), buckets)]
            t0 = time.monotonic()
            text = subprocess.run(cmd, capture_output=True, text=True, timeout=600).stdout
            col = parse_osu_output(text).column(catalogue.get(prog).metrics[0])
            records.append({'program': prog, 'band': band, 'iterations': i, 'warmup': x,
                            'rep': rep, 'wall_s': round(time.monotonic() - t0, 3),
                            'values': {str(k): v for k, v in col.items()}})
        print(f'repetition {rep + 1} of {reps} done', flush=True)
    out.write_text(json.dumps({'provenance': {
        'start': start, 'end': time.strftime('%FT%TZ', time.gmtime()), 'host': platform.node(),
        'osu': f'OSU {version} ({view})', 'mpi': _mpi(launch), 'launch': ' '.join(launch),
        'order': 'cases shuffled within each repetition'}, 'runs': records}, indent=0))


def _mpi(launch: list[str]) -> str:
    """The launcher's own version line (``mpirun --version``)."""
    try:
        text = subprocess.run([launch[0], '--version'], capture_output=True, text=True,
                              timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return 'unknown'
    return next((line for line in text.splitlines() if line.strip()), 'unknown')


def fit(path: Path) -> dict[str, dict[str, float]]:
    """The exponents (``iteration_shrink``) of the runs ``measure`` recorded, printed."""
    cells: dict[tuple[str, str, int], dict[int, list[float]]] = {}
    for r in json.loads(path.read_text())['runs']:
        for size, value in r['values'].items():
            cells.setdefault((r['program'], r['band'], int(size)), {}).setdefault(
                r['iterations'], []).append(value)
    fitted = iterations.fit_exponents(cells)
    for kind, bands in sorted(fitted.items()):
        for band, (slope, exponent) in sorted(bands.items()):
            print(f'{kind:<10} {band:<5} fitted exponent {slope:+.3f}, upper bound clamped: '
                  f'{exponent:.2f}')
    return {k: {b: e for b, (_, e) in bands.items()} for k, bands in fitted.items()}


def _tests(perflog_dir: Path, only: str | None) -> dict[tuple, dict[int, gate.Run]]:
    """Per test (series keys but the variable): its reported sizes' runs of the first metric,
    values only (failed runs dropped), as the gate reads them."""
    tests: dict[tuple, dict[int, gate.Run]] = {}
    for run in gate.runs(load(perflog_dir, use_cache=False).frame):
        bench = run.keys.get('benchmark') or ''
        metric, _, size = run.keys['perf_var'].rpartition('_')
        if not size.isdigit() or (only and bench != only) \
                or catalogue.get(bench).metrics[:1] != (metric,):
            continue
        ok = ~np.isnan(run.values)
        test = tuple((k, v) for k, v in run.keys.items() if k not in ('perf_var', 'unit'))
        tests.setdefault(test, {})[int(size)] = gate.Run(
            run.keys, run.times[ok], run.values[ok], run.meta,
            {field: values[ok] for field, values in run.software.items()})
    return tests


def _verdicts(run: gate.Run, first: int, step: float, s: Settings) -> tuple[int, int, int]:
    """(positions, false alarms, detections) of the gate slid over one series."""
    g = iterations.goal()
    sign = worse_when(run.keys['unit'])
    positions = alarms = caught = 0
    for end in range(first, len(run.values) + 1):
        worse = run.values[:end].copy()
        k = slice(end - g.latest, end)
        worse[k] = worse[k] * (1 + step) if sign > 0 else worse[k] / (1 + step)
        for vals, is_step in ((run.values[:end], False), (worse, True)):
            part = gate.Run(run.keys, run.times[:end], vals, run.meta)
            red = gate.judge(part, gate.Windows(latest=g.latest), s, []).verdict.status \
                == 'regression'
            alarms += red and not is_step
            caught += red and is_step
        positions += 1
    return positions, alarms, caught


def _cost(test: dict, rows: list[dict[str, str]]) -> iterations.Cost:
    """Predicted seconds of a test's sweep at given counts: the cost model fitted from the
    perflog's own records (nodes of this machine's two cores, as the mini-cluster's are)."""
    bench = test['benchmark']
    model = costfit.fit(rows, costmodel.model_for({}), cores_per_node=2, cores_per_socket=2,
                        sockets=1)
    nodes = test['num_nodes'] or 1
    shape = costmodel.Shape(test['num_tasks'], nodes, max(1, test['num_tasks'] // nodes), 2,
                            test.get('placement') or 'intra_socket')
    sweep = osu_limits.sizes_between(1, catalogue.get(bench).max_size)
    return lambda counts: _predict(bench, sweep, shape, model, counts)


def _predict(bench: str, sweep: list[int], shape: costmodel.Shape, model: costmodel.PerfModel,
             counts: osu_counts.Counts) -> float:
    return costmodel.predict(bench, sweep, shape, model, warmup=counts.warmup,
                             iterations=counts.iterations, warmup_large=counts.warmup_large,
                             iterations_large=counts.iterations_large).seconds


def replay(perflog_dir: Path, history: int, step: float, only: str | None,
           shrink: dict | None) -> tuple:
    """Gate outcomes (positions, false alarms, detections) and predicted seconds at OSU's
    defaults and at the counts chosen both ways (one -i, buckets), summed over the
    directory's tests; and the counts chosen per test."""
    g = iterations.goal()
    s = replace(Settings(), alpha=g.alpha, z_min=g.z_min, threshold=g.threshold,
                baseline_runs=g.baseline)
    rows = [r for path in sorted(perflog_dir.rglob('*.log'))
            for r in costfit.read_perflog(path)[0]]
    totals = {way: [0, 0, 0] for way in WAYS}
    seconds = dict.fromkeys(WAYS, 0.0)
    chosen: dict[str, dict[str, osu_counts.Counts]] = {}
    for test, sizes in _tests(perflog_dir, only).items():
        keys = dict(test)
        bench = keys['benchmark']
        hist = [iterations.SizeHistory(z, list(r.values[:history]), None)
                for z, r in sorted(sizes.items())]
        # a series is keyed by its environments' lineage: its runs' own environment names
        environs = {e for run in sizes.values() for e in run.software.get('environ', [])}
        cost = _cost(keys, [r for r in rows if r.get('environ') in environs])
        chosen[bench] = {'default': osu_counts.Counts()}
        for way, buckets in (('one -i', False), ('buckets', True)):
            choice = iterations.choose(bench, f'{bench} {keys.get("placement")}', hist, cost,
                                       shrink, buckets)
            print(f'  {way:<8} {choice.reason}')
            chosen[bench][way] = choice.counts
        first = max(history, g.min_history + g.latest)
        for way, counts in chosen[bench].items():
            seconds[way] += cost(counts)
            for size, run in sorted(sizes.items()):
                default_n = osu_limits.loop(bench, [size])[0][2]
                ratio = (default_n / counts.at(bench, size)[1]) ** \
                    iterations.exponent(bench, size, shrink)
                med = np.median(run.values[:history])
                scaled = gate.Run(run.keys, run.times, med + (run.values - med) * ratio,
                                  run.meta)
                got = _verdicts(scaled, first, step, s)
                totals[way] = [a + b for a, b in zip(totals[way], got, strict=True)]
    return totals, seconds, chosen


def wall(chosen: dict[str, dict[str, osu_counts.Counts]], reps: int, view: Path,
         launch: list[str]) -> None:
    """Real wall time of each test's whole sweep, bare ``launch`` commands, at OSU's
    defaults and at each way's counts (buckets only where the OSU has them), interleaved
    ``reps`` times, the order shuffled within a repetition (medians)."""
    version, buckets = has_buckets(view)
    ways = [w for w in WAYS if buckets or w != 'buckets']
    runs: dict[tuple[str, str], list[float]] = {}
    for _ in range(reps):
        cases = [(bench, way) for bench in chosen for way in ways]
        random.shuffle(cases)
        for bench, way in cases:
            cmd = [*launch, str(_program(view, bench)),
                   *osu_counts.options(bench, chosen[bench][way], buckets)]
            t0 = time.monotonic()
            subprocess.run(cmd, capture_output=True, check=True, timeout=600)
            runs.setdefault((bench, way), []).append(time.monotonic() - t0)
    med = {k: float(np.median(v)) for k, v in runs.items()}
    for bench in chosen:
        print(f'  {bench} (OSU {version}, medians of {reps}, bare {launch[0]}): ' + ', '.join(
            f'{way} {med[(bench, way)]:.2f} s' for way in ways))
    total = {way: sum(med[(b, way)] for b in chosen) for way in ways}
    print('  measured wall ratio / OSU\'s defaults: ' + ', '.join(
        f'{way} {total[way] / total["default"]:.2f}' for way in ways[1:]))


def _memory(partition: dict) -> int | None:
    gib = (partition.get('extras') or {}).get('memory_per_node_gib')
    return int(float(gib) * 2**30) if gib else None


def predicted(system: str, spreads: tuple[float, ...], shrink: dict | None) -> None:
    """The verdict set's jobs on ``system`` (its --dry-run, as ``scale_costs.py audit``):
    node-minutes at OSU's defaults and at the counts a history of each spread would choose
    (every reported size spreading by that much), with the partition's cost model."""
    import tempfile

    sys.path.insert(0, str(REPO / 'tests'))
    from rfm_helpers import job_scripts, run_reframe, two_family_registry

    from omb_suite.cost import scale_audit

    tmp = Path(tempfile.mkdtemp(prefix='verdict-power-'))
    out = run_reframe(tmp, '--system', system, '--dry-run', registry=two_family_registry(tmp))
    if out.returncode:
        sys.exit(out.stdout[-3000:] + out.stderr[-3000:])
    config = runpy.run_path(str(REPO / 'reframe' / 'config' / 'systems'
                                / f'{system.replace("-", "_")}.py'))['system']
    parts = {p['name']: p for p in config['partitions']}
    jobs = [a for path, text in job_scripts(tmp).items()
            if (a := scale_audit.audit_script(path, text, node_memory=_memory(
                parts[path.split('/')[1]])))]
    default = sum(a.predicted_s * a.nodes for a in jobs) / 60
    print(f'\n{system} (predicted, {len(jobs)} jobs of the verdict set): OSU\'s defaults '
          f'{default:.3g} node-minutes')
    for spread in spreads:
        one = buckets = 0.0
        for a in jobs:
            ratios = (1.0, 1.0)
            if a.benchmark in catalogue.catalogue():  # not a program of ours
                ratios = _ratios(a, parts[a.path.split('/')[1]], spread, shrink)
            one += a.predicted_s * ratios[0] * a.nodes / 60
            buckets += a.predicted_s * ratios[1] * a.nodes / 60
        print(f'  every size spreading {spread:.1%}: one -i per launch {one:.3g} node-minutes, '
              f'{one / default:.2f} of OSU\'s defaults; a count per size range (buckets) '
              f'{buckets:.3g}, {buckets / default:.2f}')


def _ratios(job, part: dict, spread: float, shrink: dict | None) -> tuple[float, float]:
    """Predicted cost at the counts chosen for ``spread`` over OSU's defaults, one launch
    each: one -i for the sweep, and a count per size range (OSU's buckets)."""
    proc, model = part['processor'], costmodel.model_for(part.get('extras'))
    per_node = max(1, job.ranks // max(1, job.nodes))
    shape = costmodel.Shape(job.ranks, job.nodes, per_node, proc['num_cpus'],
                            costmodel.link_of(job.nodes, per_node, proc['num_cpus_per_socket'],
                                              proc['num_sockets']))
    sweep = osu_limits.sizes_between(1, catalogue.get(job.benchmark).max_size or 1)
    reported = [z for z in (1, 8, 1024, 65536, 1048576, 4194304) if z <= sweep[-1]]
    def cost(counts: osu_counts.Counts) -> float:
        return _predict(job.benchmark, sweep, shape, model, counts)
    whole = cost(osu_counts.Counts())
    one, buckets = (cost(iterations.choose_for_spread(job.benchmark, job.path, reported,
                                                      spread, cost, shrink, b).counts)
                    for b in (False, True))
    return one / whole, buckets / whole


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('args', nargs='*', help='PERFLOG_DIR ... | measure OUT.json | fit OUT.json')
    p.add_argument('--smoke', action='store_true')
    p.add_argument('--step', type=float, default=None, help='step (data/iterations.yaml)')
    p.add_argument('--history', type=int, default=30, help='runs that choose the counts (30)')
    p.add_argument('--measured', type=Path, action='append',
                   help='runs of `measure` whose exponents stand for this machine (repeat '
                        f'for several; default {SPREAD.name})')
    p.add_argument('--predict', default='example-epyc', help='system predicted ("": none)')
    p.add_argument('--reps', type=int, default=12)
    p.add_argument('--wall', type=int, default=0, metavar='N',
                   help='also time the chosen and default counts for real, N times each')
    p.add_argument('--osu', type=Path, default=VIEW)
    p.add_argument('--launch', default=' '.join(MPIRUN),
                   help=f'launch command of --wall (default: {" ".join(MPIRUN)})')
    a = p.parse_args()
    if a.args[:1] == ['measure']:
        measure(Path(a.args[1]), a.reps, a.osu, shlex.split(a.launch))
        return 0
    if a.args[:1] == ['fit']:
        fit(Path(a.args[1]))
        return 0
    if a.args[:1] == ['predict']:
        predicted(a.args[1], (0.005, 0.01, 0.02, 0.05), None)
        return 0
    step = a.step or iterations.goal().step
    only, history = ('osu_latency', 20) if a.smoke else (None, a.history)
    sources: dict[str, dict | None] = {'declared by no partition (default)': None}
    for path in a.measured or [SPREAD]:
        print(f'exponents of {path.name}:')
        sources[f'measured ({path.name})'] = fit(path)
    for directory in [Path(d) for d in a.args] or [TREND]:
        for source, shrink in sources.items():
            print(f'\n== {directory.name}, exponents {source}')
            totals, seconds, chosen = replay(directory, history, step, only, shrink)
            print(f'gate replayed on {totals["default"][0]} series-windows, a {step:.0%} '
                  f'step in the latest {iterations.goal().latest} runs')
            for way in WAYS:
                pos, alarms, caught = totals[way]
                print(f'  {way:<8} false alarms {alarms / pos:.1%}, detected '
                      f'{caught / pos:.1%}, predicted {seconds[way]:.1f} s, node-minutes '
                      f'ratio {seconds[way] / seconds["default"]:.2f} (target <= 0.33)')
            if a.wall:
                wall(chosen, a.wall, a.osu, shlex.split(a.launch))
    if a.predict and not a.smoke:
        predicted(a.predict, (0.005, 0.01, 0.02, 0.05), None)
    return 0


if __name__ == '__main__':
    sys.exit(main())
