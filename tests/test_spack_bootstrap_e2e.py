"""The real bootstrap end to end: omb-setup fetches the pinned Spack and spack-packages from
local repositories, builds OSU 7.4 with our recipe against Debian's Open MPI from a source
mirror, and a second run reuses everything (about 6 minutes on 2 cores).

The OSU version is $OMB_OSU_VERSION's when set (CI: 7.3, the official tarball it has), else
common.yaml's. It runs when OMB_SPACK_GIT, OMB_SPACK_PACKAGES_GIT and OMB_SPACK_MIRROR name them
(docs/spack.md, "Offline and air-gapped"); OMB_SPACK_INSTALL_ARGS is passed on, e.g.
--no-checksum for a tarball that is not the official one, given explicitly.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from setup_helpers import SETUP_VARIABLES, copy_checkout
from testdata import REPO

SOURCES = ('OMB_SPACK_GIT', 'OMB_SPACK_PACKAGES_GIT', 'OMB_SPACK_MIRROR')
MISSING = [name for name in SOURCES if not os.environ.get(name)]
OMB_SETUP = str(Path(sys.executable).parent / 'omb-setup')

pytestmark = [
    pytest.mark.spack, pytest.mark.e2e,
    pytest.mark.skipif(bool(MISSING), reason=f'{", ".join(MISSING)} not set: the real '
                       f'bootstrap needs local Spack sources (docs/spack.md)'),
    pytest.mark.skipif(shutil.which('ompi_info') is None, reason="no Debian Open MPI"),
]
#: Open MPI refuses to start as root without these.
ROOT_OK = {'OMPI_ALLOW_RUN_AS_ROOT': '1', 'OMPI_ALLOW_RUN_AS_ROOT_CONFIRM': '1'}


def omb_setup(repo: Path, home: Path) -> tuple[subprocess.CompletedProcess, float]:
    keep = {*SOURCES, 'OMB_SPACK_INSTALL_ARGS', 'OMB_OSU_VERSION'}
    env = {k: v for k, v in os.environ.items() if k in keep or k not in SETUP_VARIABLES}
    env.update(HOME=str(home), PATH=':'.join(p for p in env['PATH'].split(':')
                                             if not (Path(p) / 'spack').exists()))
    start = time.monotonic()
    done = subprocess.run([OMB_SETUP, '--repo', str(repo), '--env', 'openmpi'], env=env,
                          capture_output=True, text=True, timeout=1800)
    return done, time.monotonic() - start


def common_osu_version() -> str:
    """The version spack/environments/common.yaml requires ('@7.4' -> '7.4')."""
    common = yaml.safe_load((REPO / 'spack/environments/common.yaml').read_text())
    return common['packages']['osu-micro-benchmarks']['require'][0].lstrip('@')


def test_first_run_builds_osu_that_runs_and_the_second_reuses_everything(tmp_path):
    repo, home = copy_checkout(tmp_path / 'repo'), tmp_path / 'home'
    first, _ = omb_setup(repo, home)
    assert first.returncode == 0, first.stdout[-4000:] + first.stderr
    entries = {e['name']: e for e in
               json.loads((repo / '.omb/environments.json').read_text())['environments']}
    osu = entries['spack-openmpi']
    want = os.environ.get('OMB_OSU_VERSION') or common_osu_version()
    assert osu['osu_version'] == want
    assert osu['osu_spec'].startswith(f'osu-micro-benchmarks@{want}')
    latency = Path(osu['osu_root']) / 'libexec/osu-micro-benchmarks/mpi/pt2pt/osu_latency'
    run = subprocess.run(['mpirun', '-np', '2', str(latency), '-m', '8:8'], capture_output=True,
                         text=True, env={**os.environ, **ROOT_OK}, timeout=120)
    assert run.returncode == 0 and f'# OSU MPI Latency Test v{want}' in run.stdout, run.stderr
    assert not (home / '.spack').exists()

    second, took = omb_setup(repo, home)
    assert second.returncode == 0, second.stderr
    assert 'reusing Spack 1.1.0' in second.stdout
    assert 'reusing environment openmpi' in second.stdout
    assert f'+ {repo}/.omb/spack/spack/bin/spack' not in second.stdout  # Spack never ran
    assert took < 30
