"""Stand-ins for testing ``omb-setup``: Debian's MPIs, ``spack``, Spack's git repositories
and the Python that runs Spack, each a small script made by the test in its tmp_path.

The MPI stand-ins replay real ``ompi_info``/``mpichversion`` output (tests/data/mpi). The
``spack`` stand-in logs every call and fakes what omb-setup reads back: ``concretize``
writes a real ``spack.lock`` (tests/data/spack/locks), ``install`` an OSU view; with
``$STANDIN_SPACK_FAIL=<subcommand>=<file>`` that subcommand prints a real Spack output
(tests/data/spack/outputs) and fails.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import yaml
from testdata import DATA, REPO

MPICH_PROGRAMS = ('mpicc.mpich', 'mpicxx.mpich', 'mpirun.mpich', 'mpiexec.mpich',
                  'mpiexec.hydra', 'hydra_pmi_proxy')

STANDIN_SPACK = r'''#!/bin/bash
# Stand-in for spack (tests/setup_helpers.py): logs each call, fakes its results.
echo "$*" >> "$STANDIN_SPACK_LOG"
env | grep '^SPACK_' | sort > "$STANDIN_SPACK_LOG.env"
case " $* " in *" --version "*) echo "${STANDIN_SPACK_VERSION:-1.1.0} (stand-in)"; exit 0;; esac
prev= ; env_dir=
for arg in "$@"; do [ "$prev" = -e ] && env_dir=$arg; prev=$arg; done
fail=${STANDIN_SPACK_FAIL:-}
if [ -n "$fail" ] && [[ " $* " == *" ${fail%%=*} "* ]]; then tail -n +2 "${fail#*=}"; exit 1; fi
case " $* " in
  *" concretize "*) cp "$STANDIN_LOCKS/$(basename "$env_dir").spack.lock" "$env_dir/spack.lock";;
  *" install "*) mkdir -p "$env_dir/.spack-env/view/libexec/osu-micro-benchmarks/mpi/pt2pt";;
esac
'''

STANDIN_PYTHON = r'''#!/bin/sh
# Stand-in for the Python that runs Spack: clingo is importable once "pip installed".
here=$(dirname "$0")
case "$*" in
  "-c import clingo") test -e "$here/clingo-installed" ;;
  *"-m pip install"*) echo "$*" >> "$here/pip.log"
     if [ -n "$STANDIN_PIP_OUTPUT" ]; then tail -n +2 "$STANDIN_PIP_OUTPUT"; exit 1; fi
     touch "$here/clingo-installed" ;;
  *) echo "stand-in python: unexpected $*" >&2; exit 2 ;;
esac
'''


#: Variables a user may have set that change what omb-setup does; tests start without them.
SETUP_VARIABLES = ('OSU_ROOT', 'OMB_ENVIRONMENTS_FILE', 'OMB_NO_BUILD', 'OMB_SPACK_MIRROR',
                   'OMB_SPACK_INSTALL_ARGS', 'OMB_SPACK_GIT', 'OMB_SPACK_PACKAGES_GIT',
                   'OMB_SPACK_SITE_DIR', 'SPACK_PYTHON', 'OMB_OSU_VERSION')


def debian_machine(tmp_path: Path, monkeypatch) -> Path:
    """PATH with stand-ins of Debian's Open MPI and MPICH (and no spack); clean variables."""
    bindir = fake_debian_mpis(tmp_path / 'usr-bin')
    monkeypatch.setenv('PATH', f'{bindir}:/usr/bin:/bin')
    for name in SETUP_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return bindir


def script(path: Path, body: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body if body.startswith('#!') else f'#!/bin/sh\n{body}\n')
    path.chmod(0o755)
    return path


def fake_debian_mpis(bindir: Path) -> Path:
    """A bin/ with Debian's program names; ompi_info/mpichversion replay real output."""
    bindir.mkdir(parents=True)
    mpi = DATA / 'mpi'
    script(bindir / 'ompi_info',
           f'case "$1" in --version) tail -n +2 {mpi}/ompi_info-version.txt;; '
           f'*) tail -n +2 {mpi}/ompi_info-cuda.txt;; esac')
    script(bindir / 'mpichversion', f'tail -n +2 {mpi}/mpichversion.txt')
    for name in (*MPICH_PROGRAMS, 'mpicc.openmpi', 'mpirun.openmpi', 'mpicc'):
        script(bindir / name, 'exit 0')
    return bindir


def copy_checkout(repo: Path) -> Path:
    """A copy of the checkout's spack/ folder (all omb-setup needs), without built state."""
    shutil.copytree(REPO / 'spack', repo / 'spack',
                    ignore=shutil.ignore_patterns('.spack-env', 'spack.lock'))
    return repo


def git_repo(path: Path, files: dict[str, str]) -> str:
    """A git repository at ``path`` whose next commit holds ``files``; that commit's sha."""
    def git(*args: str) -> str:
        return subprocess.run(['git', '-C', str(path), '-c', 'user.name=test', '-c',
                               'user.email=test@example.org', *args], check=True,
                              capture_output=True, text=True).stdout.strip()
    if not path.exists():
        path.mkdir(parents=True)
        git('init', '-q')
    for name, text in files.items():
        if name.startswith('bin/'):
            script(path / name, text)
        else:
            _write(path / name, text)
    git('add', '-A')
    git('commit', '-q', '-m', 'stand-in')
    return git('rev-parse', 'HEAD')


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def standin_spack_repo(path: Path, marker: str = '1') -> str:
    """A Spack stand-in repository (bin/spack is the stand-in); its newest commit."""
    return git_repo(path, {'bin/spack': STANDIN_SPACK, 'share/spack/setup-env.sh': '',
                           'VERSION': marker})


def standin_packages_repo(path: Path) -> str:
    return git_repo(path, {'repos/spack_repo/builtin/repo.yaml':
                           'repo:\n  namespace: builtin\n'})


def pin(repo: Path, spack: str, packages: str, git: str = 'https://127.0.0.1:9/') -> None:
    """Rewrite the checkout's spack/pins.yaml to pin these commits (URLs that cannot work)."""
    path = repo / 'spack' / 'pins.yaml'
    pins = yaml.safe_load(path.read_text())
    pins['spack'].update(commit=spack, git=f'{git}spack.git')
    pins['spack_packages'].update(commit=packages, git=f'{git}spack-packages.git')
    path.write_text(yaml.safe_dump(pins))


def standin_python(bindir: Path) -> Path:
    return script(bindir / 'python', STANDIN_PYTHON)


def spack_calls(log: Path) -> list[str]:
    """The stand-in spack's calls, as argument strings."""
    return log.read_text().splitlines() if log.exists() else []
