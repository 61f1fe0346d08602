"""The README's second command after the first: `bash scripts/run-tests.sh` runs the OSU
end-to-end tests with the OSU `bash scripts/quickstart.sh` registered, or says in its
summary that they were skipped and how to enable them; an exported OSU_ROOT (CI) wins
(issue 29). Run for real in a sandbox where pytest, ruff and install-deps.sh are stand-ins
(tests/test_ci_definitions.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from setup_helpers import script
from test_ci_definitions import LOGGER, Sandbox

REAL = ['scripts/run-tests.sh', 'tests/registered_osu.py', 'tests/caller_env.py',
        'README.md', 'docs/spack.md']
#: pytest stands in: it logs the OSU it was given; every other python call is real.
PYTHON = f'''#!/bin/sh
if [ "$1" = -m ] && [ "$2" = pytest ]; then
  echo "pytest OSU_ROOT=${{OSU_ROOT:-none}} OSU_ROOT_MPICH=${{OSU_ROOT_MPICH:-none}}" \\
    "registry=${{OMB_ENVIRONMENTS_FILE:-none}}" >> "$STANDIN_LOG"; exit 0
fi
exec {sys.executable} "$@"
'''


def _view(root: Path, family: str) -> Path:
    view = root / 'spack/environments' / family / '.spack-env/view'
    (view / 'libexec/osu-micro-benchmarks/mpi').mkdir(parents=True)
    return view


@pytest.fixture
def box(tmp_path) -> Sandbox:
    sandbox = Sandbox(tmp_path / 'checkout', REAL)
    script(sandbox.root / '.venv/bin/python', PYTHON)
    script(sandbox.root / '.venv/bin/ruff', LOGGER)
    return sandbox


def _pytest_runs(box: Sandbox) -> list[str]:
    return [call for call in box.calls() if call.startswith('pytest')]


def _register(root: Path) -> dict[str, Path]:
    views = {family: _view(root, family) for family in ('openmpi', 'mpich')}
    entries = [{'name': 'system-openmpi', 'mpi_family': 'openmpi', 'osu_root': None,
                'source': 'system'}]
    entries += [{'name': f'spack-{f}', 'mpi_family': f, 'osu_root': str(v),
                 'osu_version': '7.3', 'source': 'spack'} for f, v in views.items()]
    (root / '.omb').mkdir()
    (root / '.omb/environments.json').write_text(
        json.dumps({'version': 1, 'environments': entries}))
    return views


def test_run_tests_uses_the_osu_the_quickstart_registered(box):
    views = _register(box.root)
    done = box.run('bash scripts/run-tests.sh')
    assert done.returncode == 0, done.stdout + done.stderr
    pytest_runs = _pytest_runs(box)
    assert pytest_runs[:2] == [f'pytest OSU_ROOT={views["openmpi"]} '
                               f'OSU_ROOT_MPICH={views["mpich"]} registry=none'] * 2
    summary = done.stdout.splitlines()[-1]
    assert f'OSU_ROOT={views["openmpi"]} (spack-openmpi, OSU 7.3)' in summary
    assert 'registered by omb-setup' in summary


def test_run_tests_says_the_osu_runs_were_skipped_and_how_to_enable_them(box):
    done = box.run('bash scripts/run-tests.sh')
    assert done.returncode == 0, done.stdout + done.stderr
    assert _pytest_runs(box)[0] == 'pytest OSU_ROOT=none OSU_ROOT_MPICH=none registry=none'
    summary = done.stdout.splitlines()[-1]
    assert 'OSU end-to-end tests SKIPPED' in summary
    assert 'bash scripts/quickstart.sh' in summary and 'export OSU_ROOT=' in summary


def test_an_exported_osu_root_wins_over_the_registry(box):
    """CI exports the views itself: nothing changes for it."""
    _register(box.root)
    done = box.run('bash scripts/run-tests.sh', OSU_ROOT='/ci/view')
    assert done.returncode == 0, done.stdout + done.stderr
    assert _pytest_runs(box)[0] == 'pytest OSU_ROOT=/ci/view OSU_ROOT_MPICH=none registry=none'
    assert done.stdout.splitlines()[-1].endswith('OSU_ROOT=/ci/view (exported by the caller)')


def test_the_module_tests_run_again_with_the_documented_variables(box):
    done = box.run('bash scripts/run-tests.sh')
    pytest_runs = _pytest_runs(box)
    assert len(pytest_runs) == 4 and done.returncode == 0
    assert pytest_runs[3].endswith('registry=/nonexistent/omb_environments_file')
