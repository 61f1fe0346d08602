"""Our recipe and environments through a real Spack (skipped with the reason without one).

The Spack is the one on PATH, or the pinned one omb-setup bootstrapped into .omb/spack
(tests/spack_helpers.py). Recipe facts come from Spack's own API (tests/spack_recipe_facts.py
run by `spack python`): versions, variants, what our requirements name, and the configure
arguments of a concrete spec, compared with builtin's recipe for the same spec. Environments
are concretized in a copy of spack/ so a user's spack.lock files stay as they are; CPU ones
on site ``local``, CUDA ones on ``example-cuda-cluster``. Each concretization takes about a
minute of CPU on this 2-core VM.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from spack_helpers import SKIP_REASON, VENV_BIN, real_spack, run_spack
from testdata import DATA, REPO

from omb_suite.setup import cli, spack_envs

SPACK = real_spack()
#: scripts/run-tests.sh runs the Spack tests two at a time (pytest-xdist, --dist loadgroup):
#: Spack's concretizer is single-threaded and these tests time nothing. Two groups of about
#: the same length: the recipe's facts and the CPU environments here, and the CUDA
#: environments with the real bootstrap (tests/test_spack_bootstrap_e2e.py).
OTHER_CORE = pytest.mark.xdist_group('spack-builds')
pytestmark = [pytest.mark.spack, pytest.mark.skipif(SPACK is None, reason=SKIP_REASON),
              pytest.mark.xdist_group('spack-recipe')]
RECIPE = REPO / 'spack/repo/spack_repo/omb/packages/osu_micro_benchmarks/package.py'
MVAPICH2_RECIPE = REPO / 'spack/repo/spack_repo/omb/packages/mvapich2/package.py'
FACTS = Path(__file__).resolve().parent / 'spack_recipe_facts.py'
#: One spec per GPU runtime with every optional variant on, over GPU-aware MPI externals.
ROCM = 'osu-micro-benchmarks@7.4 +rocm amdgpu_target=gfx90a +xccl +graphing +papi ^mpich'
CUDA = 'osu-micro-benchmarks@7.4 +cuda cuda_arch=90 +xccl ^openmpi'


def spack(*args: str, **kwargs) -> str:
    assert SPACK is not None
    return run_spack(SPACK, *args, **kwargs)


def cuda_site(repo: Path) -> Path:
    return repo / 'spack/environments/sites/example-cuda-cluster'


@pytest.fixture(scope='module')
def checkout(tmp_path_factory) -> Path:
    """A copy of spack/ plus the local site part omb-setup generates (MPICH's external)."""
    repo = tmp_path_factory.mktemp('spack-checkout')
    shutil.copytree(REPO / 'spack', repo / 'spack',
                    ignore=shutil.ignore_patterns('.spack-env', 'spack.lock'))
    mpis = [m for m in (cli.detect_mpi(repo, f) for f in cli.SYSTEM_FAMILIES) if m is not None]
    spack_envs.write_local_site(repo, mpis)
    return repo


@pytest.fixture(scope='module')
def omb_scope(tmp_path_factory) -> Path:
    """A config scope registering our repository, with made-up GPU externals."""
    scope = tmp_path_factory.mktemp('omb-scope')
    (scope / 'repos.yaml').write_text(f'repos:\n  omb: {REPO / "spack/repo/spack_repo/omb"}\n')
    shutil.copy(DATA / 'spack/gpu-externals/packages.yaml', scope)
    return scope


@pytest.fixture(scope='module')
def facts(omb_scope) -> dict:
    out = spack('-C', str(omb_scope), 'python', str(FACTS), ROCM, CUDA)
    return json.loads(out.strip().splitlines()[-1])


def test_audit_packages_is_clean(omb_scope):
    out = spack('-C', str(omb_scope), 'audit', 'packages', 'osu-micro-benchmarks', 'mvapich2')
    assert 'PKG-DIRECTIVES: passed' in out


def test_spack_style_is_clean():
    missing = [t for t in ('flake8', 'isort', 'black') if not shutil.which(t, path=VENV_BIN)
               and not shutil.which(t)]
    if missing:
        pytest.skip(f'spack style needs {", ".join(missing)} (Spack 1.1 CI: pip install '
                    f'black==25.9.0 flake8==7.3.0 isort==7.0.0), or it bootstraps them online')
    out = spack('style', '--skip', 'mypy', str(RECIPE), str(MVAPICH2_RECIPE))
    assert 'spack style checks were clean' in out


def test_our_recipe_shadows_builtin(facts):
    assert facts['resolves_to'] == 'omb'


def test_recipe_keeps_every_builtin_version_with_its_checksum(facts):
    ours, builtin = facts['recipes']['omb'], facts['recipes']['builtin']
    lost = {v: sha for v, sha in builtin['versions'].items() if ours['versions'].get(v) != sha}
    assert not lost, f'versions of builtin missing or with another sha256 in ours: {lost}'


def test_recipe_keeps_every_builtin_variant(facts):
    ours, builtin = facts['recipes']['omb'], facts['recipes']['builtin']
    assert set(builtin['variants']) <= set(ours['variants'])


def test_every_mpi_variant_our_requirements_name_exists_in_the_pinned_builtin(facts):
    """When the pin moves past a variant we require (spack-packages dropped mvapich2+cuda
    after v2025.11.0), every concretization of our recipe fails: this says which one."""
    missing = [f'{r["package"]}+{r["variant"]} (when {r["when"]})'
               for r in facts['required'] if not r['exists']]
    assert not missing, (f'the builtin packages lack {missing}: drop them from '
                         f'CUDA_AWARE_MPIS/ROCM_AWARE_MPIS in {RECIPE.relative_to(REPO)}')
    assert {'mvapich2', 'openmpi', 'mpich'} <= {r['package'] for r in facts['required']}


@pytest.mark.parametrize('spec', [ROCM, CUDA])
def test_configure_passes_everything_builtin_passes(facts, spec):
    done = facts['configure'][spec]
    assert done['namespace'] == 'omb'
    assert set(done['builtin']) <= set(done['ours'])


def test_rocm_configure_arguments(facts):
    args = facts['configure'][ROCM]['ours']
    assert {'--enable-rocm', '--with-rocm=/opt/rocm-6.2.0',
            'HCC_AMDGPU_TARGET=--amdgpu-target=gfx90a', '--enable-rcclomb',
            '--with-rccl=/opt/rocm-6.2.0', '--enable-papi', '--with-papi=/opt/papi',
            '--with-gnuplot=/opt/gnuplot/bin', '--with-convert=/opt/imagemagick/bin',
            'CC=/opt/mpich-rocm/bin/mpicc', 'LDFLAGS=-lrt'} <= set(args)


def test_cuda_configure_arguments(facts):
    args = facts['configure'][CUDA]['ours']
    assert {'--enable-cuda', '--with-cuda=/opt/cuda-12.4', '--enable-ncclomb',
            '--with-nccl=/opt/nccl', 'CC=/opt/openmpi-cuda/bin/mpicc'} <= set(args)
    assert any(a.startswith('NVCCFLAGS=') and 'sm_90' in a for a in args)


@pytest.mark.parametrize('name', ['openmpi', 'mpich', 'mvapich2', 'mvapich'])
def test_cpu_environment_concretizes_on_local(checkout, name):
    if name == 'mpich' and shutil.which('mpichversion') is None:
        pytest.skip('the local site declares the system MPICH, and none is installed')
    out = spack('-e', str(checkout / 'spack/environments' / name), 'concretize', '--fresh')
    assert 'osu-micro-benchmarks@7.4' in out


@OTHER_CORE
@pytest.mark.parametrize('name', ['openmpi-cuda', 'mpich-cuda', 'mvapich-cuda'])
def test_cuda_environment_concretizes_with_a_cuda_external(checkout, name):
    out = spack('-e', str(checkout / 'spack/environments' / name), 'concretize', '--fresh',
                site_dir=cuda_site(checkout))
    assert 'osu-micro-benchmarks@7.4+cuda' in out


@OTHER_CORE
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
