"""A site's Lmod hierarchy for Debian's Open MPI and MPICH, with OSU modules under each MPI,
as a site would write it (used by tests/test_modules*.py and tests/modules-ci.sh):

    <root>/Core/<family>/<version>.lua                          the MPI (opens its branch)
    <root>/MPI/<family>/<version>/osu-micro-benchmarks/<v>.lua  OSU built with that MPI
    <root>/sw/<family>-<version>/bin/                           the MPI's programs, plain names

Debian installs both MPIs into /usr/bin under suffixed names (``mpicc.openmpi``,
``mpicc.mpich``); each module's ``bin/`` names them plainly, as a site's install prefix would.

    python tests/lmod_tree.py ROOT [--osu FAMILY=PREFIX ...]   # prints FAMILY=MODULE,...

The OSU module's version is the release in its ``osu_latency`` banner.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
from pathlib import Path

from omb_suite.osu.versions import banner_version
from omb_suite.setup.module_facts import OSU_INSTALL

#: Family -> (its version tool, the Debian names of its programs by plain name).
DEBIAN = {
    'openmpi': ('ompi_info', {**{n: f'{n}.openmpi' for n in
                                 ('mpicc', 'mpicxx', 'mpif90', 'mpirun', 'mpiexec')},
                              'ompi_info': 'ompi_info'}),
    'mpich': ('mpichversion', {**{n: f'{n}.mpich' for n in
                                  ('mpicc', 'mpicxx', 'mpif90', 'mpirun', 'mpiexec')},
                               **{n: n for n in ('mpiexec.hydra', 'hydra_pmi_proxy',
                                                 'mpichversion', 'mpivars')}}),
}
VERSION = {'openmpi': r'Open MPI v(\S+)', 'mpich': r'MPICH Version:\s*(\S+)'}
OSU_DIRS = ('pt2pt', 'pt2pt/persistent', 'collective', 'one-sided', 'startup', 'congestion')


def debian_version(family: str) -> str | None:
    """The installed Debian MPI's version, ``None`` when it is not installed."""
    tool = shutil.which(DEBIAN[family][0])
    if tool is None or shutil.which(DEBIAN[family][1]['mpicc']) is None:
        return None
    out = subprocess.run([tool, '--version'] if family == 'openmpi' else [tool],
                         capture_output=True, text=True, timeout=60).stdout
    match = re.search(VERSION[family], out)
    return match[1] if match else None


def mpi_module(root: Path, family: str, version: str) -> str:
    bindir = root / 'sw' / f'{family}-{version}' / 'bin'
    bindir.mkdir(parents=True, exist_ok=True)
    for name, target in DEBIAN[family][1].items():
        found = shutil.which(target)
        link = bindir / name
        if found and not link.is_symlink():
            link.symlink_to(found)
    module = root / 'Core' / family / f'{version}.lua'
    module.parent.mkdir(parents=True, exist_ok=True)
    module.write_text(f'-- Debian {family} {version}\nfamily("MPI")\n'
                      f'prepend_path("PATH", "{bindir}")\n'
                      f'prepend_path("MODULEPATH", "{root / "MPI" / family / version}")\n')
    return f'{family}/{version}'


def osu_module(root: Path, family: str, version: str, prefix: Path) -> str:
    osu = banner_version(prefix / OSU_INSTALL)
    if osu is None:
        raise SystemExit(f'{prefix / OSU_INSTALL}: no OSU release in its banner')
    module = root / 'MPI' / family / version / 'osu-micro-benchmarks' / f'{osu}.lua'
    module.parent.mkdir(parents=True, exist_ok=True)
    base = prefix / 'libexec' / 'osu-micro-benchmarks' / 'mpi'
    lines = [f'prepend_path("PATH", "{base / d}")' for d in OSU_DIRS if (base / d).is_dir()]
    module.write_text(f'-- OSU {osu} built with {family} {version}\n' + '\n'.join(lines) + '\n')
    return f'osu-micro-benchmarks/{osu}'


def write_tree(root: Path, osu: dict[str, Path]) -> dict[str, list[str]]:
    """Modules of every installed Debian MPI, and of the OSU prefix given for it; returns
    family -> [MPI module, OSU module]."""
    loads = {}
    for family in DEBIAN:
        version = debian_version(family)
        if version is None:
            continue
        loads[family] = [mpi_module(root, family, version)]
        if family in osu:
            loads[family].append(osu_module(root, family, version, osu[family]))
    return loads


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    p.add_argument('root', type=Path)
    p.add_argument('--osu', action='append', default=[], metavar='FAMILY=PREFIX',
                   help='an OSU install built with that Debian MPI; repeatable')
    args = p.parse_args()
    osu = {f: Path(prefix).absolute() for f, _, prefix in
           (item.partition('=') for item in args.osu)}
    loads = write_tree(args.root.resolve(), osu)
    for family, modules in loads.items():
        print(f'{family}={",".join(modules)}')


if __name__ == '__main__':
    main()
