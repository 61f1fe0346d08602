"""Our recipe and environments through a real Spack (skipped with the reason without one).

Environments are concretized in a copy of spack/ so a user's spack.lock files stay as they
are. CPU environments use site ``local``; CUDA ones ``example-cuda-cluster`` (a CUDA
external). Each concretization takes ~1 min on 2 cores.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from omb_suite import setup, spack_envs

REPO = Path(__file__).resolve().parents[1]

SPACK = shutil.which('spack')
pytestmark = [
    pytest.mark.spack,
    pytest.mark.skipif(SPACK is None, reason='spack is not on PATH (docs/spack.md installs '
                       'Spack 1.1)'),
]
RECIPE = REPO / 'spack/repo/spack_repo/omb/packages/osu_micro_benchmarks/package.py'
MVAPICH2_RECIPE = REPO / 'spack/repo/spack_repo/omb/packages/mvapich2/package.py'


def spack(*args: str, site_dir: Path | None = None, check: bool = True) -> str:
    """Run spack; ``site_dir`` replaces the environments' default site (sites/local)."""
    env = dict(os.environ)
    env.pop(spack_envs.SITE_DIR_VAR, None)
    if site_dir is not None:
        env[spack_envs.SITE_DIR_VAR] = str(site_dir)
    done = subprocess.run([SPACK, *args], capture_output=True, text=True, env=env)
    out = done.stdout + done.stderr
    if check:
        assert done.returncode == 0, out
    return out


def cuda_site(repo: Path) -> Path:
    return repo / 'spack/environments/sites/example-cuda-cluster'


@pytest.fixture(scope='module')
def checkout(tmp_path_factory) -> Path:
    """A copy of spack/ plus the local site part omb-setup generates (MPICH's external)."""
    repo = tmp_path_factory.mktemp('spack-checkout')
    shutil.copytree(REPO / 'spack', repo / 'spack',
                    ignore=shutil.ignore_patterns('.spack-env', 'spack.lock'))
    mpis = [m for m in (setup.detect_mpi(repo, f) for f in setup.PROBES) if m is not None]
    spack_envs.write_local_site(repo, mpis)
    return repo


def test_audit_packages_is_clean(checkout):
    repo_dir = checkout / 'spack/repo/spack_repo/omb'
    scope = checkout / 'audit-scope'
    scope.mkdir()
    (scope / 'repos.yaml').write_text(f'repos:\n  omb: {repo_dir}\n')
    out = spack('-C', str(scope), 'audit', 'packages', 'osu-micro-benchmarks', 'mvapich2')
    assert 'PKG-DIRECTIVES: passed' in out


def test_spack_style_is_clean():
    out = spack('style', '--skip', 'mypy', str(RECIPE), str(MVAPICH2_RECIPE))
    assert 'spack style checks were clean' in out


@pytest.mark.parametrize('name', ['openmpi', 'mpich', 'mvapich2', 'mvapich'])
def test_cpu_environment_concretizes_on_local(checkout, name):
    if name == 'mpich' and shutil.which('mpichversion') is None:
        pytest.skip('the local site declares the system MPICH, and none is installed')
    out = spack('-e', str(checkout / 'spack/environments' / name), 'concretize', '--fresh')
    assert 'osu-micro-benchmarks@7.4' in out


@pytest.mark.parametrize('name', ['openmpi-cuda', 'mpich-cuda', 'mvapich-cuda'])
def test_cuda_environment_concretizes_with_a_cuda_external(checkout, name):
    out = spack('-e', str(checkout / 'spack/environments' / name), 'concretize', '--fresh',
                site_dir=cuda_site(checkout))
    assert 'osu-micro-benchmarks@7.4+cuda' in out


def test_cuda_osu_over_an_mpi_without_cuda_is_refused(checkout):
    env_dir = checkout / 'spack/environments/mpich-no-cuda'
    env_dir.mkdir()
    manifest = (checkout / 'spack/environments/mpich-cuda/spack.yaml').read_text()
    (env_dir / 'spack.yaml').write_text(manifest.replace('mpich +cuda', 'mpich ~cuda'))
    out = spack('-e', str(env_dir), 'concretize', '--fresh', site_dir=cuda_site(checkout),
                check=False)
    assert '+cuda needs a CUDA-aware MPI' in out


def test_mvapich2_recipe_configures_the_counters_and_hydra(checkout, tmp_path):
    """Our omb.mvapich2: builtin's configure line plus --enable-mpit-pvars (docs/spack.md)."""
    script = tmp_path / 'configure_args.py'
    script.write_text(
        'import spack.concretize, spack.spec\n'
        's = spack.concretize.concretize_one(spack.spec.Spec('
        '"mvapich2@2.3.7 fabrics=mrail process_managers=hydra"))\n'
        'print(s.namespace, " ".join(s.package.configure_args()))\n')
    out = spack('-e', str(checkout / 'spack/environments/mvapich2'), 'python', str(script))
    assert out.startswith('omb ')
    assert {'--enable-mpit-pvars=mv2', '--with-pm=hydra', '--with-device=ch3:mrail'} <= set(
        out.split())
