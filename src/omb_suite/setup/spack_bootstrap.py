"""The pinned Spack under ``.omb/spack``, for machines with no ``spack`` on ``PATH``.

``spack/pins.yaml`` pins Spack and the builtin spack-packages to commits and clingo to a
release. :func:`bootstrap` makes (or finds) this layout in the git-ignored ``.omb/spack``::

    spack/            Spack at its pinned commit (installs go to its opt/spack)
    spack-packages/   the builtin package repository at its pinned commit
    config/           this Spack's user scope ($SPACK_USER_CONFIG_PATH): repos.yaml
    cache/            this Spack's user cache ($SPACK_USER_CACHE_PATH)
    env.sh            `. .omb/spack/env.sh` puts this Spack on PATH for use by hand

so a user's ``~/.spack`` is neither needed nor changed. Each checkout is fetched, at its
commit only, from the pinned URL or, without network, from a local clone or bare repository
holding the commit (``$OMB_SPACK_GIT``, ``$OMB_SPACK_PACKAGES_GIT``). clingo comes from
PyPI into the Python that runs this Spack (``$SPACK_PYTHON``, by default the suite's venv),
so Spack never bootstraps its own. A second run finds everything at
its pins and fetches nothing.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import yaml

from omb_suite.setup import spack_envs, step_failures
from omb_suite.setup.progress import Progress
from omb_suite.setup.spack_envs import SpackSetupError

#: pins.yaml key -> (directory under .omb/spack, variable naming a local source, what it is).
CHECKOUTS = {
    'spack': ('spack', 'OMB_SPACK_GIT', 'Spack'),
    'spack_packages': ('spack-packages', 'OMB_SPACK_PACKAGES_GIT', 'spack-packages'),
}
BUILTIN_REPO = Path('repos') / 'spack_repo' / 'builtin'


@dataclass(frozen=True)
class Spack:
    """How to run one Spack: the program, and what its environment must add."""

    executable: str
    env: dict[str, str]


@dataclass(frozen=True)
class Pin:
    name: str
    version: str
    git: str
    commit: str
    var: str


def root(repo: Path) -> Path:
    return repo / '.omb' / 'spack'


def read_pins(repo: Path) -> dict:
    return spack_envs.read_yaml(repo / 'spack' / 'pins.yaml')


def pins(repo: Path) -> dict[str, Pin]:
    """The pinned checkouts of spack/pins.yaml, by key of :data:`CHECKOUTS`."""
    data = read_pins(repo)
    return {key: Pin(name, str(data[key]['version']), data[key]['git'], data[key]['commit'], var)
            for key, (_, var, name) in CHECKOUTS.items()}


def git(*args: str | Path) -> subprocess.CompletedProcess:
    try:
        return subprocess.run(['git', *map(str, args)], capture_output=True, text=True)
    except FileNotFoundError as err:
        raise SpackSetupError('git is not installed; it fetches Spack: apt-get install git '
                              '(scripts/install-deps.sh does)') from err


def head(dest: Path) -> str | None:
    """The commit a checkout is at, or None when ``dest`` is no git checkout."""
    if not (dest / '.git').exists():
        return None
    done = git('-C', dest, 'rev-parse', 'HEAD')
    return done.stdout.strip() if done.returncode == 0 else None


def source_of(pin: Pin, environ: Mapping[str, str]) -> str:
    """Where to fetch from: ``$<var>`` (a local repository, made absolute) or the pinned URL."""
    local = environ.get(pin.var)
    if not local:
        return pin.git
    path = Path(local).expanduser()
    return str(path.resolve()) if path.exists() else local


def left_by_failed_fetch(dest: Path) -> bool:
    """``dest`` holds nothing a fetch finished: an empty folder, or a ``git init`` with no
    commit and no files (what omb-setup before 2026-11 left when a fetch failed)."""
    entries = {p.name for p in dest.iterdir()} if dest.is_dir() else {'?'}
    if not entries:
        return True
    if entries != {'.git'}:
        return False
    return git('-C', dest, 'rev-parse', '--verify', '-q', 'HEAD').returncode != 0


def fetch_new(pin: Pin, dest: Path, source: str) -> subprocess.CompletedProcess:
    """Fetch the pinned commit into a temporary sibling of ``dest``, moved into place only
    when complete: a failed or interrupted fetch leaves nothing that blocks the next run."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    for stale in dest.parent.glob(f'.{dest.name}.partial-*'):
        shutil.rmtree(stale, ignore_errors=True)  # an interrupted run's
    tmp = Path(tempfile.mkdtemp(prefix=f'.{dest.name}.partial-', dir=dest.parent))
    # mkdtemp makes it 0700; the checkout gets a plain directory's mode, or other users
    # (a site's non-root users, CI's) could not read the Spack and OSU installed under it
    umask = os.umask(0)
    os.umask(umask)
    tmp.chmod(0o777 & ~umask)
    try:
        done = git('init', '-q', tmp)
        if done.returncode == 0:
            done = git('-C', tmp, 'fetch', '-q', '--depth', '1', source, pin.commit)
        if done.returncode == 0:
            done = git('-C', tmp, 'checkout', '-q', '--detach', 'FETCH_HEAD')
        if done.returncode == 0:
            tmp.rename(dest)
        return done
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def checkout(pin: Pin, dest: Path, source: str, progress: Progress, key: str) -> None:
    """Put ``dest`` at the pinned commit: nothing to do when it is there already."""
    found = head(dest)
    if found == pin.commit:
        return
    if dest.exists() and found is None:
        if not left_by_failed_fetch(dest):
            raise SpackSetupError(f'{dest} exists but is not a git checkout: remove it and '
                                  f'run omb-setup again')
        shutil.rmtree(dest)
    was = f', replacing {found[:10]}' if found else ''
    with progress.step(f'clone_{key}', f'fetch {pin.name} {pin.version} '
                       f'({pin.commit[:10]}) from {source}{was}'):
        if found is None:
            done = fetch_new(pin, dest, source)
        else:
            done = git('-C', dest, 'fetch', '-q', '--depth', '1', source, pin.commit)
            if done.returncode == 0:
                done = git('-C', dest, 'checkout', '-q', '--detach', 'FETCH_HEAD')
        if done.returncode != 0 or head(dest) != pin.commit:
            raise SpackSetupError(step_failures.explain(
                'git_fetch', done.stderr, name=pin.name, version=pin.version,
                commit=pin.commit, source=source, git=pin.git, var=pin.var))


def clingo_importable(python: str) -> bool:
    return subprocess.run([python, '-c', 'import clingo'], capture_output=True).returncode == 0


def ensure_clingo(python: str, version: str, progress: Progress) -> None:
    """clingo importable by ``python``; installed from PyPI when it is not."""
    if clingo_importable(python):
        return
    with progress.step('clingo', f'pip install clingo=={version} (Spack\'s concretizer)'):
        done = subprocess.run([python, '-m', 'pip', 'install', '-q', f'clingo=={version}'],
                              capture_output=True, text=True)
        if done.returncode != 0 or not clingo_importable(python):
            raise SpackSetupError(step_failures.explain(
                'clingo', done.stdout + done.stderr, version=version, python=python))


def spack_python(environ: Mapping[str, str]) -> str:
    """``$SPACK_PYTHON`` (Spack's own variable), else the Python running omb-setup (the venv)."""
    return environ.get('SPACK_PYTHON') or sys.executable


def spack_of(repo: Path, python: str) -> Spack:
    """The bootstrapped Spack's program and environment (whether or not it exists yet)."""
    base = root(repo)
    return Spack(executable=str(base / 'spack' / 'bin' / 'spack'), env={
        'SPACK_PYTHON': python,
        'SPACK_USER_CONFIG_PATH': str(base / 'config'),
        'SPACK_USER_CACHE_PATH': str(base / 'cache'),
    })


def write_config(repo: Path, spack: Spack) -> None:
    """This Spack's user scope (builtin = the pinned checkout) and ``env.sh``."""
    base = root(repo)
    config = Path(spack.env['SPACK_USER_CONFIG_PATH'])
    config.mkdir(parents=True, exist_ok=True)
    repos = {'repos': {'builtin': str(base / 'spack-packages' / BUILTIN_REPO)}}
    (config / 'repos.yaml').write_text('# Written by omb-setup (spack/pins.yaml); rerun it '
                                       'instead of editing.\n' + yaml.safe_dump(repos))
    exports = ''.join(f'export {k}={shlex.quote(v)}\n' for k, v in sorted(spack.env.items()))
    setup_env = base / 'spack' / 'share' / 'spack' / 'setup-env.sh'
    (base / 'env.sh').write_text(
        '# Written by omb-setup: the Spack it bootstrapped, for use by hand:\n'
        f'#   . {shlex.quote(str(base / "env.sh"))}\n'
        f'{exports}. {shlex.quote(str(setup_env))}\n')


def is_bootstrapped(repo: Path) -> bool:
    """Both checkouts at their pins (nothing to fetch)."""
    return all(head(root(repo) / CHECKOUTS[key][0]) == pin.commit
               for key, pin in pins(repo).items())


def bootstrapped(repo: Path) -> Spack | None:
    """The Spack bootstrapped before in ``repo`` (at its pins), without fetching anything."""
    return spack_of(repo, spack_python(os.environ)) if is_bootstrapped(repo) else None


def bootstrap(repo: Path, progress: Progress, environ: Mapping[str, str] | None = None) -> Spack:
    """The pinned Spack in ``.omb/spack``: fetched and configured, or found ready."""
    environ = os.environ if environ is None else environ
    python = spack_python(environ)
    pinned = pins(repo)
    if is_bootstrapped(repo):
        progress.say(f'reusing Spack {pinned["spack"].version} and spack-packages '
                     f'{pinned["spack_packages"].version} in {root(repo)} (at their pins)')
    for key, pin in pinned.items():
        checkout(pin, root(repo) / CHECKOUTS[key][0], source_of(pin, environ), progress, key)
    ensure_clingo(python, str(read_pins(repo)['clingo']['version']), progress)
    spack = spack_of(repo, python)
    write_config(repo, spack)
    return spack
