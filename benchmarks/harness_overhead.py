"""What the suite costs on top of OSU itself, measured in one process.

    python benchmarks/harness_overhead.py [--repeat 5] [--smoke] [--cluster] [--no-verdict]
        [--hpctestlib-reframe R]

(a) three tests (osu_latency intra_socket, osu_allreduce and osu_alltoall with the default
    algorithm on 2 ranks, ``-m 8:8 -x 10 -i 1000``) through ``reframe`` (the collectives
    checking their results in their own launches) vs the same three OSU launches bare (no
    time limit, no wrapper, no correctness check, no evidence output) vs ReFrame's
    hpctestlib ``osu_run`` with the same programs and flags (``--hpctestlib-reframe`` or
    ``$OMB_HPCTESTLIB_REFRAME``: the ``reframe`` of a reframe-hpc 4.9.3 install, the last
    release that ships hpctestlib),
    rounds interleaved; and, from one round, where the suite's time goes;
(b) the default verdict set on ``local`` (and with ``--cluster`` on the mini-cluster, the whole
    run in one Slurm allocation) vs the sum of the bare runtimes of exactly the OSU commands
    the suite ran (read back from ReFrame's output directory);
and ``reframe -l`` of the verdict set with its predicted cost on ``local``, ``example-epyc``
and a site of 4 partitions x 4 environments. Prints medians of ``--repeat`` rounds, each
ratio and its target. Needs OSU registered (omb-setup) for the Open MPI environment.
``--smoke`` (CI, tests/test_benchmark_scripts.py): one round, no verdict set.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
REFRAME = str(Path(sys.executable).parent / 'reframe')
SETTINGS = str(REPO / 'reframe' / 'config' / 'settings.py')
CHECKS = str(REPO / 'reframe' / 'checks')
sys.path.insert(0, str(REPO / 'src'))

from omb_suite.machine import probe  # noqa: E402
from omb_suite.setup import environs  # noqa: E402

THREE = ['-n', 'OsuPt2Pt%benchmark=osu_latency%placement=intra_socket%buffers=HH',
         '-n', 'OsuCollective%case=osu_(allreduce|alltoall)/default%scale=2']
FLAGS = ['-S', 'min_size=8', '-S', 'max_size=8', '-S', 'warmup=10', '-S', 'iterations=1000']
#: Exports that exist only to prove what the suite checks (not part of a bare OSU run).
EVIDENCE_VARS = ('OMPI_MCA_coll_base_verbose', 'OMPI_MCA_mpi_show_mca_params')
TARGETS = {'three': 1.5, 'list_local': 1.5, 'list_4x4': 3.0, 'list_epyc': 3.0, 'verdict': 1.15,
           'node_minutes': 10.0}


def timed(cmd: list[str], env: dict[str, str] | None = None, cwd: Path | None = None,
          check: bool = True) -> tuple[float, subprocess.CompletedProcess]:
    start = time.perf_counter()
    out = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if check and out.returncode != 0:
        raise SystemExit(f'failed ({out.returncode}): {shlex.join(cmd)}\n'
                         f'{out.stdout[-3000:]}{out.stderr[-2000:]}')
    return wall, out


def reframe(work: Path, *args: str, env: dict[str, str] | None = None,
            launcher: list[str] | None = None,
            check: bool = True) -> tuple[float, subprocess.CompletedProcess]:
    cmd = [*(launcher or []), REFRAME, '--nocolor', '-C', SETTINGS, '-c', CHECKS, '--prefix',
           str(work / 'rfm'), *args]
    return timed(cmd, env=dict(env or os.environ, OMB_RESULTS_DIR=str(work / 'results')),
                 cwd=work, check=check)


#: The rank wrapper and its options (job_sources/omb_rank.sh), and the time limit around the
#: launch: the suite's, not part of a bare OSU launch.
WRAPPER = re.compile(r'\./omb_rank\.sh(?: --preload \S+| --gpu \S+ \S+| --rank0-env \S+)* ')
LIMIT = re.compile(r'^timeout(?: --\S+)* \d+s ')
#: The wrapper's option that preloads the collectives' correctness check into OSU.
CHECK = re.compile(r'--preload \S+/libcollective_check\.so ')


def job_launches(output: Path) -> list[tuple[dict[str, str], str, Path]]:
    """(environment, launch line as the job ran it, test dir) of every launch through the
    rank wrapper in ReFrame's output directory."""
    found = []
    for script in sorted(output.rglob('rfm_job.sh')):
        env: dict[str, str] = {}
        for line in script.read_text().splitlines():
            if m := re.match(r'export (\w+)=(.*)$', line):
                if m[1] not in EVIDENCE_VARS:
                    env[m[1]] = os.path.expandvars(m[2].strip('"'))
            elif './omb_rank.sh' in line:
                found.append((env, line, script.parent))
    return found


def bare(launch: str) -> str:
    """The launch without the time limit and the rank wrapper (and its options)."""
    return WRAPPER.sub('', LIMIT.sub('', launch))


def bare_commands(output: Path) -> list[tuple[dict[str, str], str, Path]]:
    """(environment, bare launch line, test dir) of every OSU launch that ran (the
    correctness check and the probe are the suite's own cost, not OSU's)."""
    return [(env, bare(line), where) for env, line, where in job_launches(output)
            if re.search(r'/osu_\w+ ', bare(line) + ' ')]


def run_bare(commands: list[tuple[dict[str, str], str, Path]]) -> float:
    """Sum of the wall times of the launches (each in its test's output directory)."""
    total = 0.0
    for env, launch, where in commands:
        wall, _ = timed(['bash', '-c', launch], env={**os.environ, **env}, cwd=where)
        total += wall
    return total


HPCTESTLIB_CHECK = """
import reframe as rfm
from reframe.core.builtins import run_before
from hpctestlib.microbenchmarks.mpi.osu import osu_run


@rfm.simple_test
class same_flags(osu_run):
    valid_systems = ['*']
    valid_prog_environs = ['*']

    @run_before('run')
    def same_sweep(self):
        # hpctestlib asks -m 8 (sizes 1 to 8) and appends 'D D' to pt2pt runs: the suite's
        # three runs ask one size, on host buffers
        self.executable_opts = ['-m', '8:8', '-x', '10', '-i', '1000', '-c']
        self.job.launcher.options = ['--map-by', 'core', '--bind-to', 'core']
"""
HPCTESTLIB_CONFIG = """
site_configuration = {
    'systems': [{'name': 'local', 'hostnames': ['.*'], 'partitions': [{
        'name': 'default', 'scheduler': 'local', 'launcher': 'mpirun', 'max_jobs': 1,
        'environs': ['osu'],
        'env_vars': [['OMPI_ALLOW_RUN_AS_ROOT', '1'], ['OMPI_ALLOW_RUN_AS_ROOT_CONFIRM', '1'],
                     ['PATH', '%s:$PATH']]}]}],
    'environments': [{'name': 'osu'}],
}
"""


def hpctestlib_round(reframe49: str, osu_root: str) -> float:
    """One run of hpctestlib's osu_run for the same three programs and flags (wall s)."""
    mpi = Path(osu_root) / 'libexec' / 'osu-micro-benchmarks' / 'mpi'
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        (work / 'check.py').write_text(HPCTESTLIB_CHECK)
        (work / 'config.py').write_text(HPCTESTLIB_CONFIG % f"{mpi / 'pt2pt'}:{mpi / 'collective'}")
        wall, out = timed([reframe49, '--nocolor', '-C', str(work / 'config.py'), '-c',
                           str(work / 'check.py'), '--prefix', str(work / 'rfm'), '-n',
                           'same_flags%benchmark_info=mpi.(pt2pt.osu_latency|collective.'
                           'osu_allreduce|collective.osu_alltoall)', '-S', 'num_tasks=2',
                           '-S', 'num_tasks_per_node=2', '-r'], cwd=work)
    if len(re.findall(r'^\[ +OK \]', out.stdout, re.M)) != 3:
        raise SystemExit(f'hpctestlib run did not pass 3 tests:\n{out.stdout[-3000:]}')
    return wall


def median(values: list[float]) -> float:
    return statistics.median(values)


def suite_round(env_name: str, work: Path, as_is: bool = False) -> float:
    """One suite run of the three tests in ``work``: its wall time."""
    env = dict(os.environ, OMB_REFRAME_AS_IS='1') if as_is else None
    wall, out = reframe(work, '--system', 'local', '-p', env_name, *THREE, *FLAGS, '-r',
                        env=env)
    ran = len(re.findall(r'^\[ +OK \] .*(OsuPt2Pt|OsuCollective) %', out.stdout, re.M))
    if ran != 3 or '(0 failure(s)' not in out.stdout:
        raise SystemExit(f'expected 3 tests to pass, got {ran}:\n{out.stdout[-3000:]}')
    return wall


def where_the_time_goes(output: Path, env_name: str) -> dict[str, float]:
    """The suite's costs beside OSU, each measured alone: ReFrame's start-up, loading and
    listing the selection, the rank wrapper (the launches with it, less without), the
    collectives' correctness check in their launches (with it, less without; built)."""
    with tempfile.TemporaryDirectory() as tmp:
        startup, _ = timed([REFRAME, '--version'])
        listing, _ = reframe(Path(tmp), '--system', 'local', '-p', env_name, *THREE, '-l')
    launches = job_launches(output)
    wrapper = str(Path(probe.source_dir()) / probe.WRAPPER)
    checked = [(env, LIMIT.sub('', line).replace('./omb_rank.sh', wrapper), where)
               for env, line, where in launches if '/osu_' in line]
    wrapped = [(env, CHECK.sub('', line), where) for env, line, where in checked]
    return {'reframe_version_s': startup, 'listing_s': listing,
            'with_wrapper_s': run_bare(wrapped), 'with_check_s': run_bare(checked),
            'bare_s': run_bare(bare_commands(output))}


def children_cpu_s() -> float:
    """CPU seconds of every finished child process so far (user + system)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def section_three(repeat: int, env_name: str, reframe49: str | None) -> dict[str, float]:
    """Rounds of: the suite, the same OSU launches bare, the suite without its ReFrame
    workarounds, hpctestlib (when given), and the breakdown, interleaved so that a loaded
    machine weighs on each alike. Medians of wall and CPU seconds (the CPU seconds of the
    processes follow the load much less than the wall clock)."""
    root = next(e['osu_root'] for e in environs.load_registry() if e['name'] == env_name)
    rounds: dict[str, list[float]] = {}

    def keep(name: str, measure: Callable[[], float]) -> None:
        cpu = children_cpu_s()
        rounds.setdefault(f'{name}_s', []).append(measure())
        rounds.setdefault(f'{name}_cpu_s', []).append(children_cpu_s() - cpu)

    for _ in range(repeat):
        with tempfile.TemporaryDirectory() as tmp:
            keep('suite', partial(suite_round, env_name, Path(tmp)))
            output = Path(tmp) / 'rfm' / 'output'
            keep('bare', partial(run_bare, bare_commands(output)))
            for part, value in where_the_time_goes(output, env_name).items():
                rounds.setdefault(f'part_{part}', []).append(value)
        # the same run without the suite's ReFrame workarounds (omb_suite.rfm.reframe_speed)
        with tempfile.TemporaryDirectory() as tmp:
            keep('reframe_as_is', partial(suite_round, env_name, Path(tmp), as_is=True))
        if reframe49:
            keep('hpctestlib', partial(hpctestlib_round, reframe49, root))
    result = {k: median(v) for k, v in rounds.items()}
    result['ratio'] = result['suite_s'] / result['bare_s']
    return result


def fake_site(tmp: Path) -> dict[str, str]:
    """A site of 4 Slurm partitions x 4 environments over a fake OSU tree (for listing)."""
    osu = tmp / 'osu'
    from omb_suite.osu import catalogue
    for info in catalogue.catalogue().values():
        exe = osu / 'libexec/osu-micro-benchmarks/mpi' / info.group / info.name
        exe.parent.mkdir(parents=True, exist_ok=True)
        exe.write_text('#!/bin/sh\n')
        exe.chmod(0o755)
    parts = [{'name': f'p{i}', 'scheduler': 'slurm', 'launcher': 'srun',
              'access': [f'--partition=p{i}'], 'environs': [f'env{j}' for j in range(4)],
              'processor': {'num_cpus': 32 * (i + 1), 'num_cpus_per_core': 1,
                            'num_cpus_per_socket': 16 * (i + 1), 'num_sockets': 2},
              'extras': {'num_nodes': 4 * (i + 1)}} for i in range(4)]
    (tmp / 'systems').mkdir()
    (tmp / 'systems' / 'fake4x4.py').write_text(
        'system = ' + repr({'name': 'fake4x4', 'hostnames': ['^never$'],
                            'modules_system': 'nomod', 'partitions': parts}))
    families = [('openmpi', '4.1.4'), ('mpich', '4.0.2'), ('openmpi', '5.0.3'),
                ('mpich', '4.1.2')]
    registry = tmp / 'environments.json'
    registry.write_text(json.dumps({'version': 1, 'environments': [
        {'name': f'env{j}', 'mpi_family': fam, 'mpi_version': ver, 'osu_root': str(osu),
         'osu_version': '7.4', 'source': 'system'} for j, (fam, ver) in enumerate(families)]}))
    return {**os.environ, 'OMB_SYSTEMS_PATH': str(tmp / 'systems'),
            'OMB_ENVIRONMENTS_FILE': str(registry)}


def listed(work: Path, system: str, env: dict[str, str] | None = None) -> tuple[float, str]:
    """``reframe -l`` of the verdict set: wall time and output (which must end with the
    predicted cost of what it lists)."""
    wall, out = reframe(work, '--system', system, '-l', env=env)
    if 'Predicted cost' not in out.stdout:
        raise SystemExit(f'the listing on {system} printed no predicted cost:\n'
                         f'{out.stdout[-2000:]}{out.stderr[-2000:]}')
    return wall, out.stdout


def section_listing(repeat: int) -> dict[str, float]:
    walls: dict[str, list[float]] = {'local_s': [], '4x4_s': [], 'epyc_s': []}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        env4 = fake_site(work)
        for _ in range(repeat):
            for name, system, env in (('local', 'local', None), ('4x4', 'fake4x4', env4),
                                      ('epyc', 'example-epyc', env4)):
                cpu = children_cpu_s()
                wall, text = listed(work, system, env)
                walls[f'{name}_s'].append(wall)
                walls.setdefault(f'{name}_cpu_s', []).append(children_cpu_s() - cpu)
                if name == '4x4':
                    cases = re.search(r'Found (\d+) check', text)
    return {**{k: median(v) for k, v in walls.items()},
            '4x4_checks': float(cases.group(1)) if cases else -1}


def section_verdict(env: dict[str, str] | None, system: str, launcher: list[str] | None,
                    mode: list[str]) -> dict[str, float]:
    with tempfile.TemporaryDirectory(dir=os.environ.get('OMB_CLUSTER_WORK')) as tmp:
        work = Path(tmp)
        # as scripts/quickstart.sh and cluster-ci.sh run it: one test at a time, serial policy
        # a failed test (a latency reference missed on a loaded machine) is counted, not fatal
        cpu = children_cpu_s()
        wall, out = reframe(work, '--system', system, *mode, '--exec-policy', 'serial', '-r',
                            env=env, launcher=launcher, check=False)
        summary = re.search(r'Ran (\d+)/(\d+) test case.*?\((\d+) failure', out.stdout)
        if summary is None:
            raise SystemExit(f'the verdict set did not run:\n{out.stdout[-3000:]}'
                             f'{out.stderr[-2000:]}')
        # passed tests' job scripts are in output/, failed ones' in stage/
        commands = bare_commands(work / 'rfm')
        suite_cpu, cpu = children_cpu_s() - cpu, children_cpu_s()
        bare = run_bare(commands) if launcher is None else float('nan')
    return {'suite_s': wall, 'bare_s': bare, 'ratio': wall / bare if bare == bare else 0.0,
            'suite_cpu_s': suite_cpu, 'bare_cpu_s': children_cpu_s() - cpu,
            'tests': float(summary.group(1)), 'failures': float(summary.group(3)),
            'launches': float(len(commands))}


def environ_with_osu(asked: str | None) -> str:
    """The environment to time: the one asked for if it has OSU, else the first Open MPI
    one with OSU; a clear stop naming those that have one otherwise."""
    with_osu = [e for e in environs.load_registry() if e.get('osu_root')]
    if not with_osu:
        raise SystemExit('no OSU registered: run omb-setup (or quickstart) first')
    names = [e['name'] for e in with_osu]
    if asked is not None:
        if asked not in names:
            raise SystemExit(f'environment {asked!r} has no OSU registered; environments '
                             f'with OSU: {", ".join(names)} (pass one with --environ)')
        return asked
    chosen = next((e for e in with_osu if e.get('mpi_family') == 'openmpi'), with_osu[0])
    print(f"environment: {chosen['name']} (OSU {chosen.get('osu_version')}; --environ to "
          f"choose another of {', '.join(names)})")
    return chosen['name']


def hpctestlib_reframe(asked: str | None) -> str | None:
    """The ``reframe`` of a reframe-hpc install that ships hpctestlib (4.9.3 is the last:
    4.10 no longer does): ``--hpctestlib-reframe``, else ``$OMB_HPCTESTLIB_REFRAME``."""
    found = asked or os.environ.get('OMB_HPCTESTLIB_REFRAME')
    if found and not Path(found).is_file():
        raise SystemExit(f'{found}: no such reframe (--hpctestlib-reframe, '
                         'OMB_HPCTESTLIB_REFRAME)')
    return found


def print_three(three: dict[str, float]) -> None:
    bare_s = three['bare_s']
    rest = three['suite_s'] - three['part_listing_s'] - three['part_with_check_s']
    print(f"(a) 3 tests: suite {three['suite_s']:.2f} s, bare {bare_s:.2f} s: "
          f"{three['ratio']:.2f}x (target <= {TARGETS['three']}x and below hpctestlib); "
          f"CPU s: suite {three['suite_cpu_s']:.2f}, bare {three['bare_cpu_s']:.2f}")
    print(f"    without the ReFrame deprecation workaround (OMB_REFRAME_AS_IS=1): "
          f"{three['reframe_as_is_s']:.2f} s: {three['reframe_as_is_s'] / bare_s:.2f}x")
    if 'hpctestlib_s' in three:
        hpc = three['hpctestlib_s']
        print(f"    hpctestlib osu_run (ReFrame 4.9.3), same programs and flags: {hpc:.2f} s: "
              f"{hpc / bare_s:.2f}x bare; the suite is {three['suite_s'] / hpc:.2f}x of it "
              f"(CPU s: hpctestlib {three['hpctestlib_cpu_s']:.2f}, the suite "
              f"{three['suite_cpu_s'] / three['hpctestlib_cpu_s']:.2f}x of it)")
    else:
        print('    hpctestlib osu_run: not measured (--hpctestlib-reframe or '
              'OMB_HPCTESTLIB_REFRAME: the reframe of a reframe-hpc 4.9.3 venv; 4.10 ships '
              'no hpctestlib)')
    print(f"    where the suite's time goes (medians): reframe --version "
          f"{three['part_reframe_version_s']:.2f} s; -l of the selection (start-up, loading "
          f"the checks) {three['part_listing_s']:.2f} s; the rank wrapper "
          f"{three['part_with_wrapper_s'] - three['part_bare_s']:+.2f} s over "
          f"{three['part_bare_s']:.2f} s bare; the correctness check in the launches "
          f"{three['part_with_check_s'] - three['part_with_wrapper_s']:+.2f} s; the rest "
          f"(ReFrame's pipeline, sanity, polling) {rest:.2f} s")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('--repeat', type=int, default=5, help='rounds of (a) and listing (median)')
    p.add_argument('--smoke', action='store_true',
                   help='the smallest settings (CI): one round, no verdict set')
    p.add_argument('--environ', help='environment for (a) (default: the first registered '
                   'Open MPI one that has OSU, e.g. spack-openmpi after quickstart)')
    p.add_argument('--mode', default='', help='ReFrame mode for (b), e.g. quick')
    p.add_argument('--no-verdict', action='store_true', help='skip (b) on local')
    p.add_argument('--hpctestlib-reframe', metavar='REFRAME',
                   help='reframe of a reframe-hpc 4.9.3 install, to time hpctestlib osu_run '
                   '(default: $OMB_HPCTESTLIB_REFRAME)')
    p.add_argument('--cluster', action='store_true',
                   help='also (b) on the mini-cluster in one allocation (tests/cluster/up)')
    args = p.parse_args()
    if args.smoke:
        args.repeat, args.no_verdict, args.cluster = 1, True, False
    args.environ = environ_with_osu(args.environ)
    mode = ['--mode', args.mode] if args.mode else []
    report: dict[str, dict[str, float]] = {}

    report['three'] = section_three(args.repeat, args.environ,
                                    hpctestlib_reframe(args.hpctestlib_reframe))
    print_three(report['three'])

    report['listing'] = section_listing(args.repeat)
    print(f"listing with the predicted cost: local {report['listing']['local_s']:.2f} s "
          f"(target <= {TARGETS['list_local']} s); 4 partitions x 4 environments "
          f"{report['listing']['4x4_s']:.2f} s, {report['listing']['4x4_checks']:.0f} checks "
          f"(target <= {TARGETS['list_4x4']} s); example-epyc "
          f"{report['listing']['epyc_s']:.2f} s (target <= {TARGETS['list_epyc']} s); CPU s: "
          f"{report['listing']['local_cpu_s']:.2f}, {report['listing']['4x4_cpu_s']:.2f}, "
          f"{report['listing']['epyc_cpu_s']:.2f}")

    if not args.no_verdict:
        report['verdict_local'] = v = section_verdict(None, 'local', None, mode)
        print(f"(b) verdict set on local: {v['tests']:.0f} test cases, {v['failures']:.0f} "
              f"failures, {v['launches']:.0f} launches; suite {v['suite_s']:.1f} s, bare OSU "
              f"{v['bare_s']:.1f} s: {v['ratio']:.2f}x (target <= {TARGETS['verdict']}x); CPU s: "
              f"suite {v['suite_cpu_s']:.1f}, bare {v['bare_cpu_s']:.1f}")
    if args.cluster:
        report['verdict_cluster'] = cluster_verdict(mode)
    print(json.dumps(report, indent=1))
    return 0


def cluster_verdict(mode: list[str]) -> dict[str, float]:
    """The verdict set on the mini-cluster inside one `salloc -N 2`: Slurm jobs counted in the
    controller's log, node-minutes = 2 nodes x the allocation's wall time."""
    sys.path.insert(0, str(REPO / 'tests'))
    from testdata import minicluster_env, slurm_job_ids

    env = {**os.environ, **minicluster_env()}
    cdir = Path(env['OMB_CLUSTER_DIR'])
    jobs_before = slurm_job_ids(cdir)
    os.environ['OMB_CLUSTER_WORK'] = str(cdir / 'work')
    (cdir / 'work').mkdir(exist_ok=True)
    v = section_verdict(env, 'minicluster:alloc',
                        ['salloc', '-N', '2', '--exclusive', '-p', 'compute'], mode)
    v['slurm_jobs'] = float(len(slurm_job_ids(cdir) - jobs_before))
    v['node_minutes'] = 2 * v['suite_s'] / 60
    print(f"(b) verdict set on the mini-cluster, one allocation: {v['tests']:.0f} test cases, "
          f"{v['failures']:.0f} failures, {v['slurm_jobs']:.0f} Slurm job(s) instead of "
          f"{v['tests']:.0f}; {v['suite_s']:.1f} s = {v['node_minutes']:.1f} node-minutes "
          f"(target 1 job, <= {TARGETS['node_minutes']} node-minutes)")
    return v


if __name__ == '__main__':
    sys.exit(main())
