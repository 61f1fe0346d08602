"""omb-setup getting a Spack and building OSU with it: every decision, with stand-ins.

A stand-in ``spack`` (on PATH, or committed as ``bin/spack`` of a stand-in Spack git
repository made by the test), stand-in MPIs and a stand-in Python for clingo: see
tests/setup_helpers.py. The failures replay real Spack 1.1, git and pip output
(tests/data/spack/outputs) or make git fail for real.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml
from setup_helpers import (
    copy_checkout,
    debian_machine,
    pin,
    script,
    spack_calls,
    standin_packages_repo,
    standin_python,
    standin_spack_repo,
)
from testdata import DATA

from omb_suite.setup import cli, spack_bootstrap, spack_build

OUTPUTS = DATA / 'spack' / 'outputs'
BUILT = ('openmpi', 'mpich')


class Machine:
    """A checkout, stand-in MPIs and Python, and the stand-in Spack's sources and log."""

    def __init__(self, tmp: Path, monkeypatch) -> None:
        self.tmp, self.monkeypatch = tmp, monkeypatch
        self.bin = debian_machine(tmp, monkeypatch)
        self.repo = copy_checkout(tmp / 'repo')
        self.log = tmp / 'spack.log'
        self.python = standin_python(tmp / 'python-bin')
        self.spack_src, self.packages_src = tmp / 'src' / 'spack', tmp / 'src' / 'spack-packages'
        self.spack_commit = standin_spack_repo(self.spack_src)
        self.packages_commit = standin_packages_repo(self.packages_src)
        pin(self.repo, self.spack_commit, self.packages_commit)
        for name, value in {'STANDIN_SPACK_LOG': self.log, 'STANDIN_LOCKS': DATA / 'spack/locks',
                            'SPACK_PYTHON': self.python, 'HOME': tmp / 'home',
                            'OMB_SPACK_GIT': self.spack_src,
                            'OMB_SPACK_PACKAGES_GIT': self.packages_src}.items():
            monkeypatch.setenv(name, str(value))

    def setup(self, *args: str) -> int:
        return cli.main(['--repo', str(self.repo), '--registry',
                           str(self.repo / '.omb/environments.json'), *args])

    def registry(self) -> dict[str, dict]:
        data = json.loads((self.repo / '.omb/environments.json').read_text())
        return {e['name']: e for e in data['environments']}

    def spack_on_path(self) -> Path:
        """The stand-in spack as the user's, on PATH."""
        standin = self.spack_src / 'bin' / 'spack'
        self.monkeypatch.setenv('PATH', f'{standin.parent}:{self.bin}:/usr/bin:/bin')
        return standin


@pytest.fixture
def machine(tmp_path, monkeypatch) -> Machine:
    return Machine(tmp_path, monkeypatch)


def builds(calls: list[str]) -> list[tuple[str, str]]:
    """(environment, step) of each concretize/install call of the stand-in spack."""
    out = []
    for call in calls:
        words = call.split()
        step = next((w for w in words if w in ('concretize', 'install')), None)
        if step and '-e' in words:
            out.append((Path(words[words.index('-e') + 1]).name, step))
    return out


def assert_built(calls: list[str]) -> None:
    """Every environment of BUILT concretized (at once: in either order), then each installed
    in turn."""
    steps = builds(calls)
    assert sorted(steps[:len(BUILT)]) == sorted((env, 'concretize') for env in BUILT), steps
    assert steps[len(BUILT):] == [(env, 'install') for env in BUILT], steps


def test_spack_on_path_is_used_and_nothing_is_fetched(machine, capsys):
    machine.spack_on_path()
    assert machine.setup() == 0
    assert_built(spack_calls(machine.log))
    assert not spack_bootstrap.root(machine.repo).exists()
    entries = machine.registry()
    assert {'spack-openmpi', 'spack-mpich'} <= set(entries)
    assert entries['spack-mpich']['osu_version'] == '7.4'
    assert 'warning' not in capsys.readouterr().out  # the stand-in says it is 1.1.0


def test_spack_on_path_of_another_release_is_used_with_a_warning(machine, monkeypatch, capsys):
    machine.spack_on_path()
    monkeypatch.setenv('STANDIN_SPACK_VERSION', '0.23.1')
    assert machine.setup('--env', 'openmpi') == 0
    out = capsys.readouterr().out
    assert 'is Spack 0.23.1, this suite is tested with Spack 1.1.0' in out
    assert builds(spack_calls(machine.log)) == [('openmpi', 'concretize'), ('openmpi', 'install')]


def test_without_spack_the_pinned_one_is_bootstrapped_with_its_own_config(machine, capsys):
    assert machine.setup() == 0
    root = spack_bootstrap.root(machine.repo)
    assert spack_bootstrap.head(root / 'spack') == machine.spack_commit
    assert spack_bootstrap.head(root / 'spack-packages') == machine.packages_commit
    repos = yaml.safe_load((root / 'config/repos.yaml').read_text())
    assert repos == {'repos': {'builtin': str(root / 'spack-packages/repos/spack_repo/builtin')}}
    assert (root / 'spack-packages/repos/spack_repo/builtin/repo.yaml').is_file()
    seen_env = (machine.tmp / 'spack.log.env').read_text().splitlines()
    assert f'SPACK_USER_CONFIG_PATH={root / "config"}' in seen_env
    assert f'SPACK_USER_CACHE_PATH={root / "cache"}' in seen_env
    assert f'SPACK_PYTHON={machine.python}' in seen_env
    assert not (machine.tmp / 'home' / '.spack').exists()
    assert 'clingo==5.8.0' in (machine.python.parent / 'pip.log').read_text()
    assert_built(spack_calls(machine.log))
    assert {'spack-openmpi', 'spack-mpich'} <= set(machine.registry())
    env_sh = (root / 'env.sh').read_text()
    assert f'export SPACK_USER_CONFIG_PATH={root / "config"}' in env_sh
    out = capsys.readouterr().out
    assert '[1] fetch Spack 1.1.0' in out and '(usually ' in out and ': done in ' in out


def test_second_run_fetches_concretizes_and_builds_nothing(machine, capsys):
    assert machine.setup() == 0
    first_registry = machine.registry()
    shutil.rmtree(machine.tmp / 'src')  # any fetch would now fail
    machine.log.unlink()
    capsys.readouterr()
    assert machine.setup() == 0
    assert spack_calls(machine.log) == []  # Spack is not even started
    out = capsys.readouterr().out
    assert 'reusing Spack 1.1.0' in out
    assert out.count('nothing to concretize or build') == len(BUILT)
    assert machine.registry() == first_registry


def test_moved_pin_is_fetched_and_rebuilds(machine, capsys):
    assert machine.setup('--env', 'openmpi') == 0
    machine.log.unlink()
    new_commit = standin_spack_repo(machine.spack_src, marker='2')
    pin(machine.repo, new_commit, machine.packages_commit)
    assert machine.setup('--env', 'openmpi') == 0
    assert spack_bootstrap.head(spack_bootstrap.root(machine.repo) / 'spack') == new_commit
    assert f'replacing {machine.spack_commit[:10]}' in capsys.readouterr().out
    assert builds(spack_calls(machine.log)) == [('openmpi', 'concretize'), ('openmpi', 'install')]


def test_changed_site_rebuilds_only_then(machine):
    machine.spack_on_path()
    assert machine.setup('--env', 'openmpi') == 0
    packages = machine.repo / 'spack/environments/sites/local/packages.yaml'
    packages.write_text(packages.read_text().replace('gmake@4.3', 'gmake@4.4'))
    machine.log.unlink()
    assert machine.setup('--env', 'openmpi') == 0
    assert builds(spack_calls(machine.log)) == [('openmpi', 'concretize'), ('openmpi', 'install')]
    call = next(c for c in spack_calls(machine.log) if 'concretize' in c)
    assert call.endswith('concretize --force')  # the lock must follow the changed site


def test_mirror_goes_into_our_config_scope_source_only(machine, monkeypatch):
    machine.spack_on_path()
    mirror = machine.tmp / 'mirror'
    (mirror / '_source-cache/archive').mkdir(parents=True)
    monkeypatch.setenv('OMB_SPACK_MIRROR', str(mirror))
    assert machine.setup('--env', 'openmpi') == 0
    scope = machine.repo / '.omb/spack-config'
    assert yaml.safe_load((scope / 'mirrors.yaml').read_text()) == {
        'mirrors': {'omb-setup-mirror': {'url': mirror.as_uri(), 'binary': False}}}
    calls = [c for c in spack_calls(machine.log) if ' -e ' in c]
    assert len(calls) == 2 and all(c.startswith(f'-C {scope} -e ') for c in calls)


def test_mirror_without_source_cache_is_refused(machine, monkeypatch, capsys):
    machine.spack_on_path()
    assert machine.setup('--mirror', str(machine.tmp)) == 1
    assert 'is not a Spack source mirror (no _source-cache/)' in capsys.readouterr().err


@pytest.mark.parametrize('how', [['--no-build'], 'OMB_NO_BUILD'])
def test_no_build_runs_no_spack_and_says_how_to_get_osu(machine, monkeypatch, capsys, how):
    args = how if isinstance(how, list) else []
    if how == 'OMB_NO_BUILD':
        monkeypatch.setenv('OMB_NO_BUILD', '1')
    assert machine.setup(*args) == 0
    assert spack_calls(machine.log) == []
    assert not spack_bootstrap.root(machine.repo).exists()
    assert capsys.readouterr().out.count('no OSU Micro-Benchmarks found') == 1


def test_every_mpi_with_an_osu_needs_no_spack(machine, capsys):
    osu = machine.tmp / 'osu'
    (osu / cli.OSU_MPI_DIR).mkdir(parents=True)
    assert machine.setup('--osu-root', f'openmpi={osu}', '--osu-root', f'mpich={osu}') == 0
    assert not spack_bootstrap.root(machine.repo).exists()
    assert spack_calls(machine.log) == []


def test_no_network_says_how_to_use_local_repositories(machine, monkeypatch, capsys):
    monkeypatch.delenv('OMB_SPACK_GIT')  # the pinned URL is https://127.0.0.1:9/spack.git
    assert machine.setup() == 1
    err = capsys.readouterr().err
    assert 'no network' in err and 'OMB_SPACK_GIT=/path/to/that/clone' in err
    assert machine.spack_commit in err


def test_source_without_the_pinned_commit_is_named(machine, capsys):
    pin(machine.repo, 'f' * 40, machine.packages_commit)
    assert machine.setup() == 1
    err = capsys.readouterr().err
    assert f'{machine.spack_src} does not hold commit {"f" * 40}' in err


def test_clingo_without_pypi_says_how_to_install_a_wheel(machine, monkeypatch, capsys):
    monkeypatch.setenv('STANDIN_PIP_OUTPUT', str(OUTPUTS / 'pip-no-network.txt'))
    assert machine.setup() == 1
    err = capsys.readouterr().err
    assert 'cannot install clingo==5.8.0' in err and 'pip download' in err
    assert 'ERROR: Could not find a version that satisfies the requirement clingo' in err


def test_concretizer_error_names_the_spec_and_the_site(machine, monkeypatch, capsys):
    machine.spack_on_path()
    monkeypatch.setenv('STANDIN_SPACK_FAIL',
                       f'concretize={OUTPUTS / "concretize-unsatisfiable.txt"}')
    assert machine.setup('--env', 'openmpi') == 1
    captured = capsys.readouterr()
    assert "Cannot satisfy 'openmpi@5'" in captured.out  # Spack's own reasons, shown
    assert ("cannot concretize `osu-micro-benchmarks ^[virtuals=mpi] openmpi` (environment "
            "openmpi) on site 'local' (spack/environments/sites/local)") in captured.err
    assert 'FAILED after' in captured.out


def test_unknown_variant_in_our_requirements_points_at_the_pins(machine, monkeypatch, capsys):
    machine.spack_on_path()
    monkeypatch.setenv('STANDIN_SPACK_FAIL',
                       f'concretize={OUTPUTS / "concretize-unknown-variant.txt"}')
    assert machine.setup('--env', 'openmpi') == 1
    err = capsys.readouterr().err
    assert "No such variant 'nosuchvariant' in package openmpi" in err
    assert 'spack/pins.yaml' in err and 'CUDA_AWARE_MPIS' in err


def test_checksum_mismatch_is_never_skipped_silently(machine, monkeypatch, capsys):
    machine.spack_on_path()
    monkeypatch.setenv('STANDIN_SPACK_FAIL', f'install={OUTPUTS / "install-checksum-mismatch.txt"}')
    assert machine.setup('--env', 'openmpi') == 1
    err = capsys.readouterr().err
    assert all('--no-checksum' not in call for call in spack_calls(machine.log))
    assert 'never turns the check off by itself' in err
    assert 'OMB_SPACK_INSTALL_ARGS=--no-checksum' in err
    assert ('_source-cache/archive/1e/1edd0c2efa61999409bfb28740a7f39689a5b42b1a1b4c66d1656e5637'
            'f7cefc.tar.gz') in err


def test_no_checksum_only_when_asked_and_then_loudly(machine, monkeypatch, capsys):
    machine.spack_on_path()
    monkeypatch.setenv('OMB_SPACK_INSTALL_ARGS', '--no-checksum')
    assert machine.setup('--env', 'openmpi') == 0
    install = next(c for c in spack_calls(machine.log) if ' install ' in f' {c} ')
    assert install.endswith('install --fail-fast --no-checksum')
    assert 'WARNING: spack install --no-checksum, as you asked' in capsys.readouterr().out


def test_download_failure_says_how_to_use_a_mirror(machine, monkeypatch, capsys):
    machine.spack_on_path()
    monkeypatch.setenv('STANDIN_SPACK_FAIL', f'install={OUTPUTS / "install-no-network.txt"}')
    assert machine.setup('--env', 'openmpi') == 1
    err = capsys.readouterr().err
    assert 'OMB_SPACK_MIRROR=/path/to/mirror' in err
    assert '_source-cache/archive/<sha256[:2]>/<sha256>.<ext>' in err
    assert '_source-cache/archive/1e/1edd0c2efa' in err  # the very file Spack looked for


def test_fingerprint_covers_the_recipe(machine):
    env_dir = machine.repo / 'spack/environments/openmpi'
    spack = spack_bootstrap.Spack('spack', {})
    before = spack_build.fingerprint(machine.repo, env_dir, 'local', spack)
    recipe = next((machine.repo / 'spack/repo').rglob('package.py'))
    script(recipe, recipe.read_text() + '\n# changed\n')
    assert spack_build.fingerprint(machine.repo, env_dir, 'local', spack) != before


def test_no_network_then_offline_sources_just_works(machine, monkeypatch, capsys):
    """A first run without network fails and leaves nothing behind; the second, given the
    local repositories, bootstraps without asking anyone to remove anything."""
    monkeypatch.delenv('OMB_SPACK_GIT')  # the pinned URL is https://127.0.0.1:9/spack.git
    assert machine.setup() == 1
    root = spack_bootstrap.root(machine.repo)
    assert not (root / 'spack').exists()
    assert not list(root.glob('.spack.partial-*'))
    monkeypatch.setenv('OMB_SPACK_GIT', str(machine.spack_src))
    capsys.readouterr()
    assert machine.setup() == 0
    assert spack_bootstrap.head(root / 'spack') == machine.spack_commit
    # as a plain mkdir would make it (not mkdtemp's 0700): other users read Spack's installs
    umask = os.umask(0)
    os.umask(umask)
    assert (root / 'spack').stat().st_mode & 0o777 == 0o777 & ~umask


def test_empty_repository_left_by_an_older_failed_fetch_is_resumed(machine):
    root = spack_bootstrap.root(machine.repo)
    (root / 'spack').mkdir(parents=True)
    spack_bootstrap.git('init', '-q', root / 'spack')
    assert machine.setup() == 0
    assert spack_bootstrap.head(root / 'spack') == machine.spack_commit


def test_checkout_with_files_but_no_git_is_still_refused(machine, capsys):
    root = spack_bootstrap.root(machine.repo)
    (root / 'spack').mkdir(parents=True)
    (root / 'spack' / 'mine.txt').write_text('a user file')
    assert machine.setup() == 1
    assert 'exists but is not a git checkout: remove it' in capsys.readouterr().err
    assert (root / 'spack' / 'mine.txt').is_file()


def test_osu_version_replaces_the_common_requirement_and_rebuilds(machine, monkeypatch):
    machine.spack_on_path()
    assert machine.setup('--env', 'openmpi') == 0
    scope = machine.repo / '.omb/spack-config'
    assert not (scope / 'packages.yaml').exists()
    machine.log.unlink()
    monkeypatch.setenv('OMB_OSU_VERSION', '7.3')
    assert machine.setup('--env', 'openmpi') == 0
    assert yaml.safe_load((scope / 'packages.yaml').read_text()) == {
        'packages': {'osu-micro-benchmarks': {'require:': ['@7.3']}}}
    calls = [c for c in spack_calls(machine.log) if ' -e ' in c]
    assert len(calls) == 2 and all(c.startswith(f'-C {scope} -e ') for c in calls)
    machine.log.unlink()
    monkeypatch.delenv('OMB_OSU_VERSION')
    assert machine.setup('--env', 'openmpi') == 0  # back to common.yaml's version: rebuilt
    assert not (scope / 'packages.yaml').exists()
    assert builds(spack_calls(machine.log)) == [('openmpi', 'concretize'), ('openmpi', 'install')]


def test_osu_version_the_recipe_does_not_declare_is_refused(machine, capsys):
    machine.spack_on_path()
    assert machine.setup('--env', 'openmpi', '--osu-version', '7.9') == 1
    err = capsys.readouterr().err
    assert "OSU version '7.9' is not one our recipe declares" in err and '7.3' in err


def _standin_concretizer(tmp: Path, fail: str = '') -> list[str]:
    """A command that stands for ``spack``: records when each ``-e ENV concretize`` starts and
    ends (a second apart), and fails for the environment named ``fail``."""
    tool = script(tmp / 'concretizer', f"""#!/usr/bin/env python3
import sys, time
if 'providers' in sys.argv:   # the indexes built alone first (spack_build.warm_indexes)
    with open('{tmp}/warm', 'a') as log:
        log.write(f'{{time.monotonic()}}\\n')
    sys.exit(0)
env = sys.argv[sys.argv.index('-e') + 1].rsplit('/', 1)[1]
with open('{tmp}/times', 'a') as log:
    log.write(f'{{env}} start {{time.monotonic()}}\\n')
time.sleep(1)
with open('{tmp}/times', 'a') as log:
    log.write(f'{{env}} end {{time.monotonic()}}\\n')
print(f'concretized {{env}}')
if env == '{fail}':
    print("==> Error: Cannot satisfy 'openmpi@5'")
    sys.exit(1)
""")
    return [str(tool)]


def _intervals(tmp: Path) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {}
    for line in (tmp / 'times').read_text().splitlines():
        env, _, when = line.split()
        out.setdefault(env, []).append(float(when))
    return out


def test_environments_are_concretized_at_once_on_two_cores(machine, capsys):
    envs = [machine.repo / 'spack/environments' / name for name in BUILT]
    argv = _standin_concretizer(machine.tmp)
    spack_build.concretize(argv, dict(os.environ), machine.repo, envs, 'local',
                           spack_build.Progress(), cores=2)
    (a_start, a_end), (b_start, b_end) = _intervals(machine.tmp).values()
    assert a_start < b_end and b_start < a_end   # they overlapped
    # Spack's indexes were built once before them: two concretizations of a fresh Spack
    # waited on each other's index lock past Spack's 120 s and one failed
    (warmed,) = map(float, (machine.tmp / 'warm').read_text().split())
    assert warmed < min(a_start, b_start)
    out = capsys.readouterr().out
    assert 'concretize openmpi, mpich on site local (2 at a time' in out
    assert out.index('concretized openmpi') < out.index('concretized mpich')  # in given order


def test_one_core_concretizes_one_after_the_other(machine):
    envs = [machine.repo / 'spack/environments' / name for name in BUILT]
    spack_build.concretize(_standin_concretizer(machine.tmp), dict(os.environ), machine.repo,
                           envs, 'local', spack_build.Progress(), cores=1)
    (_, a_end), (b_start, _) = _intervals(machine.tmp).values()
    assert a_end <= b_start


def test_a_failed_concretization_among_several_is_the_one_explained(machine, capsys):
    envs = [machine.repo / 'spack/environments' / name for name in BUILT]
    argv = _standin_concretizer(machine.tmp, fail='mpich')
    with pytest.raises(spack_build.SpackSetupError) as failed:
        spack_build.concretize(argv, dict(os.environ), machine.repo, envs, 'local',
                               spack_build.Progress(), cores=2)
    assert '(environment mpich)' in str(failed.value)
    assert "Cannot satisfy 'openmpi@5'" in capsys.readouterr().out
