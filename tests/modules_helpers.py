"""Lmod for the tests of environments from modules: whether Debian's ``lmod`` is installed,
a site-like hierarchy (tests/lmod_tree.py) in a test's tmp_path, and a stand-in
``osu_latency``: a real MPI program compiled with the MPI's ``mpicc`` that prints OSU's
banner (a controlled release and the linked library; the facts read from it are real)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from lmod_tree import DEBIAN, debian_version

LMOD_HOME = Path('/usr/share/lmod/lmod')
LMOD = (LMOD_HOME / 'libexec' / 'lmod').is_file()
needs_lmod = pytest.mark.skipif(not LMOD, reason='Lmod not installed (Debian: apt-get install '
                                'lmod, or scripts/install-deps.sh --modules)')

STAND_IN = r'''#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    printf("# OSU MPI Latency Test vRELEASE\n");
    MPI_Finalize();
    return 0;
}
'''


def needs_debian(*families: str):
    missing = [f for f in families if debian_version(f) is None]
    return pytest.mark.skipif(bool(missing), reason=f'Debian {", ".join(missing)} not installed')


def stand_in_osu(prefix: Path, family: str, release: str = '7.3') -> Path:
    """``prefix/libexec/osu-micro-benchmarks/mpi/pt2pt/osu_latency`` built with the Debian
    MPI of ``family`` (it prints the banner of OSU ``release``)."""
    program = prefix / 'libexec' / 'osu-micro-benchmarks' / 'mpi' / 'pt2pt' / 'osu_latency'
    program.parent.mkdir(parents=True, exist_ok=True)
    source = prefix / 'stand_in.c'
    source.write_text(STAND_IN.replace('RELEASE', release))
    mpicc = shutil.which(DEBIAN[family][1]['mpicc'])
    subprocess.run([mpicc, str(source), '-o', str(program)], check=True, timeout=120)
    return prefix


def lmod_env(modulepath: list[Path]) -> dict[str, str]:
    """Variables of a shell where Lmod is set up and searches ``modulepath`` (``module`` is
    defined from ``module_init`` by our scripts; LMOD_CMD tells ReFrame's `local` it is Lmod)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(('LMOD', 'BASH_FUNC_', '__LMOD', '_ModuleTable'))}
    env.update({'MODULEPATH': ':'.join(str(p) for p in modulepath),
                'MODULESHOME': str(LMOD_HOME), 'LMOD_CMD': str(LMOD_HOME / 'libexec/lmod')})
    env.pop('LOADEDMODULES', None)
    return env
