"""Today's MPI releases from their PyPI wheels (Open MPI 5, MPICH 5, Intel MPI 2021), each in
a virtual environment of its own under ``.omb/mpi/<name>``: what is pinned
(``setup/data/pip_mpis.yaml``), installing them (``scripts/install-deps.sh --pip-mpi``, which
runs ``python -m omb_suite.setup.pip_mpis``), and which are installed, at which version.

One prefix each because the wheels install ``mpicc``, ``mpirun`` and ``mpiexec`` under the
same names. A library is installed again only when its pins changed.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from dataclasses import dataclass
from importlib import metadata, resources
from pathlib import Path

import yaml


class PipMpiError(RuntimeError):
    """A pip MPI that cannot be installed or is not known; the message says what to do."""


@dataclass(frozen=True)
class PipMpi:
    """One library of ``pip_mpis.yaml``."""

    name: str
    what: str
    pip: tuple[str, ...]
    spack: str
    spack_env: str
    env: dict[str, str]
    spack_layout: str | None = None

    @property
    def spack_package(self) -> str:
        return self.spack.split()[0]

    def prefix(self, repo: Path) -> Path:
        return repo / '.omb' / 'mpi' / self.name

    def environment(self, repo: Path) -> dict[str, str]:
        """Variables its tools need, with ``{prefix}`` filled in."""
        prefix = str(self.prefix(repo).resolve())
        return {key: value.replace('{prefix}', prefix) for key, value in self.env.items()}


def libraries() -> list[PipMpi]:
    text = resources.files('omb_suite.setup').joinpath('data/pip_mpis.yaml').read_text()
    return [PipMpi(name, entry['what'], tuple(entry['pip']), entry['spack'],
                   entry['spack_env'], dict(entry.get('env') or {}), entry.get('spack_layout'))
            for name, entry in yaml.safe_load(text).items()]


def by_spack_env(name: str) -> PipMpi | None:
    """The library whose OSU environment is spack/environments/``name``, if any."""
    return next((lib for lib in libraries() if lib.spack_env == name), None)


def pinned(requirement: str) -> tuple[str, str]:
    """``impi-rt==2021.18.1`` -> (``impi-rt``, ``2021.18.1``)."""
    name, sep, version = requirement.partition('==')
    if not sep:
        raise PipMpiError(f'pip_mpis.yaml: {requirement!r} is not pinned (NAME==VERSION)')
    return name.strip(), version.strip()


def installed_versions(prefix: Path) -> dict[str, str]:
    """Distribution name (normalised) -> version, of what pip installed into ``prefix``."""
    site = sorted(prefix.glob('lib/python3*/site-packages'))
    return {dist.metadata['Name'].lower().replace('_', '-'): dist.version
            for dist in metadata.distributions(path=[str(p) for p in site])}


def is_installed(lib: PipMpi, repo: Path) -> bool:
    """Every pinned requirement is installed at its pinned version."""
    found = installed_versions(lib.prefix(repo))
    return all(found.get(name.lower()) == version for name, version in map(pinned, lib.pip))


def version(lib: PipMpi, repo: Path) -> str | None:
    """The library's version: that of its first requirement, as installed."""
    return installed_versions(lib.prefix(repo)).get(pinned(lib.pip[0])[0].lower())


def installed(repo: Path) -> list[PipMpi]:
    return [lib for lib in libraries() if is_installed(lib, repo)]


def install(lib: PipMpi, repo: Path) -> bool:
    """Install ``lib`` into its prefix unless its pins are there; True when pip ran."""
    if is_installed(lib, repo):
        return False
    prefix = lib.prefix(repo)
    python = prefix / 'bin' / 'python'
    steps = ([] if python.exists() else [[sys.executable, '-m', 'venv', str(prefix)]]) + \
        [[str(python), '-m', 'pip', 'install', '-q', *lib.pip]]
    for cmd in steps:
        done = subprocess.run(cmd, capture_output=True, text=True)
        if done.returncode != 0:
            raise PipMpiError(f'{" ".join(cmd)} failed ({done.returncode}):\n'
                              f'{(done.stdout + done.stderr).strip()[-2000:]}\nWithout '
                              f'network, point pip at a wheel directory (PIP_FIND_LINKS) or '
                              f'drop --pip-mpi')
    if not is_installed(lib, repo):
        raise PipMpiError(f'{prefix}: pip ran but {", ".join(lib.pip)} is not what is '
                          f'installed there: remove {prefix} and run again')
    return True


def choose(names: list[str]) -> list[PipMpi]:
    libs = libraries()
    unknown = sorted(set(names) - {lib.name for lib in libs})
    if unknown:
        raise PipMpiError(f'unknown pip MPI(s) {", ".join(unknown)}: choose from '
                          f'{", ".join(lib.name for lib in libs)} (setup/data/pip_mpis.yaml)')
    return [lib for lib in libs if not names or lib.name in names]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog='python -m omb_suite.setup.pip_mpis',
                                description='Install the pinned MPI wheels, each into '
                                '.omb/mpi/<name> (all of them by default).')
    p.add_argument('names', nargs='*', help='libraries of setup/data/pip_mpis.yaml')
    p.add_argument('--repo', default='.', help='checkout root (default: .)')
    args = p.parse_args(argv)
    repo = Path(args.repo).resolve()
    try:
        for lib in choose(args.names):
            done = install(lib, repo)
            state = 'installed' if done else 'already installed'
            print(f'== pip MPI {lib.name}: {", ".join(lib.pip)} {state} in {lib.prefix(repo)}')
    except PipMpiError as err:
        print(f'ERROR: {err}', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
