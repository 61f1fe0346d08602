"""Environments from modules in ReFrame: their ``modules`` become ``module load`` lines of
every job script (after ``module use`` of where they were found), only systems with a
``modules_system`` get them, and the perflog column ``environ_modules`` names them. The last
tests run the placement probe (and ``osu_latency`` where OSU is here) through a real Lmod on
`local`."""

from __future__ import annotations

import subprocess
from functools import partial
from pathlib import Path

import pytest
import rfm_helpers
from caller_env import from_caller
from lmod_tree import write_tree
from modules_helpers import LMOD_HOME, lmod_env, needs_debian, needs_lmod
from rfm_helpers import job_scripts, osu_root, perflog, write_registry

from omb_suite.launch.failures import failure_cause
from omb_suite.setup import environs

run_reframe = partial(rfm_helpers.run_reframe, checks=('placement_probe.py', 'osu_pt2pt.py'))

ENTRY = {'name': 'mod-openmpi-4_1_5-gnu', 'mpi_family': 'openmpi', 'mpi_version': '4.1.5',
         'osu_root': None, 'osu_version': None, 'path': [], 'source': 'module',
         'tool_path': ['/apps/openmpi/4.1.5/bin'], 'modules': ['openMPI/4.1.5/gnu'],
         'module_use': ['/apps/modules/Core', '/apps/modules/extra'],
         'module_init': '/usr/share/lmod/lmod/init/bash'}


def test_module_entry_becomes_an_environment_that_loads_its_modules():
    env = environs.to_reframe(ENTRY)
    assert env['modules'] == ['openMPI/4.1.5/gnu']
    assert env['prepare_cmds'] == [
        'type module >/dev/null 2>&1 || . /usr/share/lmod/lmod/init/bash',
        'module use /apps/modules/extra /apps/modules/Core']     # Core first again
    assert 'PATH' not in dict(env['env_vars'])            # the module sets PATH, not us
    assert env['extras']['env_path'] == ['/apps/openmpi/4.1.5/bin']   # ompi_info on login
    assert env['extras']['modules'] == ['openMPI/4.1.5/gnu']
    assert 'modules' in env['features'] and 'openmpi' in env['features']


def test_environments_without_modules_load_none():
    env = environs.to_reframe({'name': 'system-mpich', 'mpi_family': 'mpich', 'path': ['/x']})
    assert env['modules'] == [] and env['prepare_cmds'] == []


@pytest.mark.parametrize(('env', 'expected'), [
    ({'LMOD_CMD': '/usr/share/lmod/lmod/libexec/lmod'}, 'lmod'),
    ({'MODULES_CMD': '/usr/share/modules/libexec/modulecmd.tcl'}, 'envmod'), ({}, 'nomod')])
def test_local_modules_system_is_the_module_command_of_the_shell(env, expected):
    assert environs.detected_modules_system(env) == expected


def test_example_site_with_lmod_writes_module_loads_without_lmod_here(tmp_path):
    """Dry run on example-epyc (modules_system lmod) from a shell without Lmod: ReFrame
    resolves nothing itself (resolve_module_conflicts off), the job script loads."""
    registry = write_registry(tmp_path / 'environments.json', [
        {**ENTRY, 'osu_root': str(rfm_helpers.fake_osu_tree(tmp_path / 'osu'))}])
    out = run_reframe(tmp_path, '--system', 'example-epyc:compute', '--dry-run', '-n',
                      'OsuPt2Pt', '-E', "benchmark=='osu_latency' and placement=='inter_node'",
                      registry=registry, extra_env={'LMOD_CMD': '', 'MODULESHOME': ''})
    assert out.returncode == 0, out.stdout + out.stderr
    (script,) = job_scripts(tmp_path).values()
    lines = script.splitlines()
    setup = lines.index('module use /apps/modules/extra /apps/modules/Core')
    assert lines[setup + 1] == 'module load openMPI/4.1.5/gnu'
    assert lines[setup + 1] < next(line for line in lines if 'srun' in line)


def test_system_without_modules_system_does_not_get_module_environments(tmp_path):
    registry = write_registry(tmp_path / 'environments.json', [
        ENTRY, {'name': 'system-openmpi', 'mpi_family': 'openmpi', 'source': 'system'}])
    out = run_reframe(tmp_path, '--system', 'local', '--list=C', '-n', 'PlacementProbe',
                      registry=registry, extra_env={'LMOD_CMD': '', 'MODULES_CMD': ''})
    assert out.returncode == 0, out.stdout + out.stderr
    assert '+system-openmpi' in out.stdout and 'mod-openmpi' not in out.stdout


def test_lmod_shell_holds_none_of_the_callers_variables():
    """The Lmod shell of the last tests copies the caller's environment: with the
    documented OMB_ENVIRONMENTS_FILE exported, ReFrame read the caller's registry, not the
    test's (issue 29). tests/conftest.py removes the caller's variables for every test;
    tests/test_caller_environment.py runs this file with them exported."""
    assert from_caller(lmod_env([Path('/nonexistent')])) == []


@pytest.fixture
def site(tmp_path):
    osu = osu_root('OSU_ROOT')
    loads = write_tree(tmp_path / 'modules', {'openmpi': Path(osu)} if osu else {})
    return tmp_path / 'modules', loads


@pytest.mark.e2e
@needs_lmod
@needs_debian('openmpi', 'mpich')
def test_probe_and_osu_run_through_module_load_on_local(tmp_path, site, monkeypatch):
    """Both Debian MPIs registered from their modules by omb-setup's code, then the probe
    (and osu_latency, when $OSU_ROOT names OSU built with Open MPI) through Lmod."""
    from omb_suite.setup import module_envs

    tree, loads = site
    env = lmod_env([tree / 'Core'])
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    entries = module_envs.module_entries([f'{f}={",".join(m)}' for f, m in loads.items()])
    registry = write_registry(tmp_path / 'environments.json', entries)
    names = {f: e['name'] for f, e in zip(loads, entries, strict=True)}
    out = run_reframe(tmp_path, '--system', 'local', '-n', 'PlacementProbe',
                      '-n', 'OsuPt2Pt%benchmark=osu_latency', '-E', "placement=='intra_socket'",
                      '-S', 'max_size=8', '-S', 'iterations=100', '-S', 'warmup=10', '-r',
                      registry=registry, extra_env=env)
    assert out.returncode == 0, out.stdout + out.stderr
    # the probe runs where no OSU is registered, osu_latency where one is
    rows = [r for test in ('PlacementProbe', 'OsuPt2Pt')
            if (tmp_path / 'results/local/default' / f'{test}.log').is_file()
            for r in perflog(tmp_path, test) if r['placement'] == 'intra_socket']
    assert {r['environ']: r['environ_modules'] for r in rows} == {
        names[f]: ','.join(m) for f, m in loads.items()}
    assert all(r['result'] == 'pass' for r in rows)
    expected = {names[f]: ','.join(m) for f, m in loads.items()}
    built = perflog(tmp_path, 'PlacementProbeBuild')       # the builds name them too
    assert built and all(r['environ_modules'] == expected[r['environ']] for r in built)
    builds = [p.read_text() for p in (tmp_path / 'rfm').rglob('rfm_build.sh')]
    scripts = [p.read_text() for p in (tmp_path / 'rfm').rglob('rfm_job.sh')]
    for family, modules in loads.items():
        loading = ''.join(f'module load {m}\n' for m in modules)
        assert any(loading in s for s in scripts), family
    assert any(f'module load {loads["mpich"][0]}\nmpicc' in s for s in builds)
    assert all(f'|| . {LMOD_HOME}/init/bash' in s for s in scripts + builds)
    if len(loads['openmpi']) == 2:
        lat = perflog(tmp_path, 'OsuPt2Pt')
        assert float(next(r['perf_value'] for r in lat if r['perf_var'] == 'latency_8')) > 0


@needs_lmod
@pytest.mark.parametrize('init', [False, True])
def test_the_guard_stops_a_job_whose_module_is_not_loaded(tmp_path, site, init):
    """The lines the checks add after ReFrame's ``module load`` lines, in a real shell: without
    ``module`` (a scheduler's non-login shell: the upgrade test once measured the MPI on PATH and
    passed) and with Lmod where the load failed; then a module that did load goes through."""
    from omb_suite.rfm.environ_facts import modules_guard

    tree, loads = site
    (mpi,) = loads['openmpi'][:1] or pytest.skip('no Debian Open MPI')
    env = {k: v for k, v in lmod_env([tree / 'Core']).items() if k != 'MODULESHOME'}
    start = [f'. {LMOD_HOME}/init/bash'] if init else ['unset -f module ml 2>/dev/null']
    script = '\n'.join([*start, 'module load openmpi/0.0-gone',
                        *modules_guard(['openmpi/0.0-gone']), 'echo RAN']) + '\n'
    out = subprocess.run(['bash', '-c', script], capture_output=True, text=True, env=env,
                         timeout=60)
    assert out.returncode == 1 and 'RAN' not in out.stdout
    said = failure_cause(out.stderr)
    assert said == ('module not loaded: OMB-MODULE-MISSING: openmpi/0.0-gone is not loaded in '
                    'the job: its module load failed (above)' if init else
                    "module not loaded: OMB-MODULE-MISSING: the job's shell has no module "
                    'command: openmpi/0.0-gone not loaded (define it in the environment\'s '
                    'prepare_cmds, e.g. . /usr/share/lmod/lmod/init/bash)')
    if init:
        script = '\n'.join([*start, f'module load {mpi}', *modules_guard([mpi]),
                            'echo RAN']) + '\n'
        out = subprocess.run(['bash', '-c', script], capture_output=True, text=True, env=env,
                             timeout=60)
        assert (out.returncode, out.stdout) == (0, 'RAN\n'), out.stderr


@pytest.mark.e2e
@needs_lmod
@needs_debian('openmpi')
def test_a_job_whose_module_load_fails_fails_naming_the_module(tmp_path, site, monkeypatch):
    """Open MPI and OSU registered from their modules, then the MPI module renamed in the
    registry to one the tree does not have: the job's load fails, and osu_latency would run
    with the MPI on PATH (Debian's, the same library: it passed before the guard)."""
    from omb_suite.setup import module_envs

    tree, loads = site
    if len(loads['openmpi']) < 2:
        pytest.skip('$OSU_ROOT (OSU built with Open MPI) not set')
    env = lmod_env([tree / 'Core'])
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    (entry,) = module_envs.module_entries([f'openmpi={",".join(loads["openmpi"])}'])
    gone = ['openmpi/0.0-gone', *entry['modules'][1:]]
    registry = write_registry(tmp_path / 'environments.json', [{**entry, 'modules': gone}])
    out = run_reframe(tmp_path, '--system', 'local', '-n', 'OsuPt2Pt%benchmark=osu_latency',
                      '-E', "placement=='intra_socket'", '-S', 'max_size=8', '-S',
                      'iterations=100', '-S', 'warmup=10', '-r', registry=registry,
                      extra_env=env)
    assert out.returncode != 0
    assert ('[job: module not loaded: OMB-MODULE-MISSING: openmpi/0.0-gone is not loaded in '
            'the job: its module load failed (above)]') in out.stdout
