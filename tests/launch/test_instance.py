"""Where ReFrame may start a partition's steps (:mod:`omb_suite.launch.instance`): ``flux run``
needs ``flux`` on PATH and the instance ReFrame runs in; each refusal names what to start.
Stand-in ``flux`` programs here; the real instances in tests/test_e2e_flux.py."""

from __future__ import annotations

from pathlib import Path

import pytest
from setup_helpers import script

from omb_suite.launch import instance
from omb_suite.machine import topology


@pytest.fixture(autouse=True)
def _fresh_sizes():
    topology.flux_instance_size.cache_clear()
    yield
    topology.flux_instance_size.cache_clear()


def flux_bin(tmp: Path, body: str) -> str:
    script(tmp / 'bin/flux', body)
    return f'{tmp / "bin"}:/usr/bin:/bin'


def test_launchers_that_need_no_instance_are_never_refused():
    assert instance.problem('srun', 'c:p', 2, {'PATH': ''}) is None
    assert instance.problem('mpirun', 'local:default', 1, {'PATH': ''}) is None


def test_no_flux_on_path_says_where_flux_comes_from():
    said = instance.problem('flux', 'flux-test:host', 1, {'PATH': '/nonexistent'})
    assert 'partition flux-test:host launches every test with `flux run`, but no `flux` is on ' \
           'PATH' in said
    assert 'scripts/build-flux.sh' in said and 'flux alloc -N 1 reframe' in said


def test_outside_an_instance_it_says_which_instance_to_start(tmp_path):
    path = flux_bin(tmp_path, 'exit 0')
    said = instance.problem('flux', 'example-flux:alloc', 128, {'PATH': path})
    assert 'ReFrame runs outside any (FLUX_URI is not set)' in said
    assert '`flux alloc -N 128 reframe ...`' in said
    assert '`flux start --test-size=1 reframe ...`' in said


def test_an_instance_that_has_ended_is_named(tmp_path, monkeypatch):
    path = flux_bin(tmp_path, 'echo "flux-getattr: Unable to connect to Flux" >&2; exit 1')
    monkeypatch.setenv('PATH', path)
    uri = 'local:///tmp/flux-gone/local-0'
    said = instance.problem('flux', 'flux-test:host', 1, {'PATH': path, 'FLUX_URI': uri})
    assert f'the Flux instance FLUX_URI={uri} does not answer' in said


def test_inside_an_answering_instance_nothing_is_said(tmp_path, monkeypatch):
    path = flux_bin(tmp_path, '[ "$1 $2" = "getattr size" ] && echo 2')
    monkeypatch.setenv('PATH', path)
    env = {'PATH': path, 'FLUX_URI': 'local:///tmp/flux-x/local-0'}
    assert instance.problem('flux', 'flux-test:minicluster', 2, env) is None


def test_flux_cannot_start_open_mpi_5_ranks_unless_the_partition_has_flux_pmix():
    why = instance.cannot_start('flux', 'openmpi', '5.0.11', {})
    assert why.startswith('Open MPI 5.0.11 takes its ranks\' wire-up from PMIx only')
    assert 'partition extras {flux_pmix: true}' in why
    assert instance.cannot_start('flux', 'openmpi', '5.0.11', {'flux_pmix': True}) is None
    assert instance.cannot_start('flux', 'openmpi', '4.1.4', {}) is None
    assert instance.cannot_start('flux', 'mpich', '5.0.2', {}) is None
    assert instance.cannot_start('srun', 'openmpi', '5.0.11', {}) is None
    assert instance.cannot_start('flux', 'openmpi', None, {}) is None
