"""MPIs installed under a prefix of their own, not as system packages (an MVAPICH2 built by
hand into ``/opt/mvapich2-2.3.7``): which family a prefix holds, which prefix an OSU build
links, and the library's facts for the environment registry (``omb-setup --mpi``).

A prefix is given as ``--mpi FAMILY=PREFIX``, or found from an OSU build given as
``--osu-root FAMILY=OSU_PREFIX`` for a family with no system package: the ``libmpi`` its
``osu_latency`` links (``ldd``) lies in ``<prefix>/lib``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from omb_suite import mpilib

#: Family -> a program of the prefix's bin/ that the family installs (its version tool).
FAMILY_TOOLS = {'mvapich2': 'mpiname', 'openmpi': 'ompi_info', 'mpich': 'mpichversion'}
#: What ldd prints for the MPI library a program links.
_LINKED_MPI = re.compile(r'^\s*lib(?:mpi|mpich)\.so[.\d]*\s+=>\s+(?P<path>/\S+)', re.M)


class PrefixError(ValueError):
    """A prefix that is not an MPI installation of the family named; says what to give."""


def linked_prefix(ldd_output: str) -> Path | None:
    """The installation prefix of the MPI library in ``ldd`` output (``<prefix>/lib/libmpi.so.12``
    -> ``<prefix>``), or ``None`` when no MPI library is linked."""
    match = _LINKED_MPI.search(ldd_output)
    return Path(match['path']).parent.parent if match else None


def osu_mpi_prefix(osu_program: Path) -> Path | None:
    """The prefix of the MPI that an OSU program links (``ldd``), ``None`` if none is found."""
    try:
        return linked_prefix(mpilib.run_tool('ldd', str(osu_program)))
    except mpilib.MpiToolError:
        return None


def describe(family: str, prefix: Path) -> dict[str, Any]:
    """The facts omb-setup registers about the MPI of ``family`` installed under ``prefix``
    (the keys of a detected system MPI: family, version, cuda, bin, prefix, device)."""
    if family not in FAMILY_TOOLS:
        raise PrefixError(f'--mpi {family}=...: FAMILY must be one of {", ".join(FAMILY_TOOLS)}')
    bindir = prefix.resolve() / 'bin'
    tool = bindir / FAMILY_TOOLS[family]
    if not tool.is_file():
        raise PrefixError(f'{prefix} holds no {family} installation ({tool} is missing): give '
                          f'the prefix the library was installed to (configure --prefix)')
    version = mpilib.library_version(family, str(bindir))
    if version is None:
        raise PrefixError(f'{tool} did not print a {family} version: is {prefix} a {family} '
                          f'installation?')
    return {'family': family, 'version': version,
            'cuda': mpilib.gpu_support(family, 'cuda', str(bindir), {}).aware is True,
            'bin': str(bindir), 'prefix': str(bindir.parent), 'device': None}


def prefixed_mpis(explicit: list[str], osu_roots: dict[str, Path],
                  system_families: set[str]) -> list[dict[str, Any]]:
    """The MPIs of ``--mpi FAMILY=PREFIX``, then one per OSU build of a family that has
    neither a system package nor ``--mpi`` (its prefix from the OSU build's ``ldd``)."""
    given: dict[str, Path] = {}
    for item in explicit:
        family, sep, prefix = item.partition('=')
        if not sep or not prefix:
            raise PrefixError(f'--mpi {item}: expected FAMILY=PREFIX, e.g. '
                              f'mvapich2=/opt/mvapich2-2.3.7')
        given[family] = Path(prefix).expanduser()
    for family, root in osu_roots.items():
        if family in given or family in system_families:
            continue
        program = root / 'libexec' / 'osu-micro-benchmarks' / 'mpi' / 'pt2pt' / 'osu_latency'
        found = osu_mpi_prefix(program)
        if found is None:
            raise PrefixError(f'--osu-root {family}={root}: no system {family} and no MPI '
                              f'library linked by {program} (ldd); name the MPI with --mpi '
                              f'{family}=PREFIX')
        given[family] = found
    return [describe(family, prefix) for family, prefix in given.items()]
