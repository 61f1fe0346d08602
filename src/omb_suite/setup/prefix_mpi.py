"""MPIs installed under a prefix of their own, not as system packages (an MVAPICH2 built by
hand into ``/opt/mvapich2-2.3.7``, pip's Open MPI 5 in a virtualenv): which family a prefix
holds, which prefix an OSU build links, and the library's facts for the environment registry
(``omb-setup --mpi``).

A prefix is given as ``--mpi PREFIX`` (the family is recognised from the family records'
tools, :func:`omb_suite.mpi.mpilib.recognise`) or ``--mpi FAMILY=PREFIX`` (checked), or found from
an OSU build given as ``--osu-root [FAMILY=]OSU_PREFIX``: the MPI library its ``osu_latency``
links (``ldd``) lies in ``<prefix>/lib``. Two libraries of one family (Debian's Open MPI 4 and
pip's Open MPI 5) are two entries.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from omb_suite.mpi import families, mpilib

#: What ldd prints for the MPI library a program links (Open MPI, MPICH, Intel MPI: libmpi.so.*;
#: Debian's MPICH: libmpich.so.*).
_LINKED_MPI = re.compile(r'^\s*lib(?:mpi|mpich)\.so[.\d]*\s+=>\s+(?P<path>/\S+)', re.M)
OSU_PROGRAM = Path('libexec') / 'osu-micro-benchmarks' / 'mpi' / 'pt2pt' / 'osu_latency'


class PrefixError(ValueError):
    """A prefix that is not an MPI installation of the family named; says what to give."""


def linked_prefix(ldd_output: str, *, prefix: bool = True) -> Path | None:
    """The installation prefix of the MPI library in ``ldd`` output (``<prefix>/lib/libmpi.so.12``
    -> ``<prefix>``; the library file itself with ``prefix=False``), or ``None`` when no MPI
    library is linked."""
    match = _LINKED_MPI.search(ldd_output)
    if not match:
        return None
    return Path(match['path']).parent.parent if prefix else Path(match['path'])


def osu_mpi_library(osu_program: Path) -> Path | None:
    """The MPI library file an OSU program links (``ldd``), ``None`` if none is found."""
    try:
        found = linked_prefix(mpilib.run_tool('ldd', str(osu_program)), prefix=False)
    except mpilib.MpiToolError:
        return None
    return found


def system_family(library: Path | None, system_families: set[str]) -> str | None:
    """The system MPI family whose library file ``library`` is (Debian's: no bin/ beside)."""
    if library is None:
        return None
    return next((f for f in families.linking(library.name) if f in system_families), None)


def split_item(item: str, option: str) -> tuple[str | None, Path]:
    """``FAMILY=PREFIX`` or ``PREFIX`` -> (family or None, prefix); a named family must have a
    record."""
    family, sep, prefix = item.partition('=')
    if not sep:
        family, prefix = '', item
    if not prefix:
        raise PrefixError(f'{option} {item}: expected PREFIX or FAMILY=PREFIX, e.g. '
                          f'{option} /opt/mvapich2-2.3.7')
    if family and not families.known(family):
        raise PrefixError(f'{option} {item}: FAMILY must be one of {", ".join(families.names())}'
                          f' (or give the PREFIX alone: the family is recognised)')
    return family or None, Path(prefix).expanduser()


def describe(prefix: Path, family: str | None = None) -> dict[str, Any]:
    """The facts omb-setup registers about the MPI installed under ``prefix`` (the keys of a
    detected system MPI: family, version, cuda, bin, prefix, device), its family recognised
    from its bin/ and, when ``family`` is given, checked against it."""
    bindir = prefix.resolve() / 'bin'
    try:
        found, version = mpilib.recognise(str(bindir), family)
    except ValueError as err:
        raise PrefixError(_unrecognised(prefix, bindir, family, err)) from None
    return {'family': found, 'version': version,
            'cuda': mpilib.gpu_support(found, 'cuda', str(bindir), {}).aware is True,
            'bin': str(bindir), 'prefix': str(bindir.parent), 'device': None}


def osu_roots(items: list[str], system: list[str], check: Callable[[str, str], Path]
              ) -> list[tuple[str | None, Path]]:
    """OSU prefixes of --osu-root [FAMILY=]PREFIX, then $OSU_ROOT: (family or None where the
    MPI it links is to be recognised, prefix); ``check`` refuses a prefix without OSU."""
    roots = []
    for item in items:
        family, prefix = split_item(item, '--osu-root')
        roots.append((family, check(str(prefix), f'--osu-root {item}')))
    if os.environ.get('OSU_ROOT'):
        root = check(os.environ['OSU_ROOT'], 'OSU_ROOT')
        library = osu_mpi_library(root / OSU_PROGRAM)
        family = system_family(library, set(system))
        if family is None and library and (library.parent.parent / 'bin').is_dir():
            return [*roots, (None, root)]  # an MPI under a prefix: recognised there
        if family is None and system:
            family = system[0]
            print(f'omb-setup: cannot tell which MPI OSU_ROOT={root} was built with (ldd); '
                  f'pairing it with {family}: use --osu-root FAMILY=PREFIX to choose')
        if family is None:
            print(f'omb-setup: OSU_ROOT={root} ignored: no system MPI to pair it with')
        return roots + ([(family, root)] if family else [])
    return roots


def _unrecognised(prefix: Path, bindir: Path, family: str | None, err: ValueError) -> str:
    """What to say of a prefix without the library asked for: what it holds instead, if a
    record knows it, else what was found there."""
    if family:
        try:
            other, version = mpilib.recognise(str(bindir))
            return f'{prefix} holds {other} {version}, not {family}: drop FAMILY= or name {other}'
        except ValueError:
            pass
    return (f'{prefix} holds no {family or "MPI"} installation this suite knows ({err}): give '
            f'the prefix the library was installed to (its bin/ holds the tools)')


def prefixed_mpis(explicit: list[str], osu_roots: list[tuple[str | None, Path]],
                  system_families: set[str]) -> tuple[list[dict[str, Any]], dict[str, Path]]:
    """The MPIs of ``--mpi``, each with the OSU build (``osu_root``) that links it, and one
    more per OSU build linking an MPI under a prefix not given with ``--mpi``; then the OSU
    builds left for the system MPIs, by family."""
    mpis = [{**describe(prefix, family), 'osu_root': None}
            for family, prefix in (split_item(i, '--mpi') for i in explicit)]
    system: dict[str, Path] = {}
    for family, root in osu_roots:
        program = root / OSU_PROGRAM
        library = osu_mpi_library(program)
        linked = library.parent.parent if library else None
        mine = next((m for m in mpis if linked and Path(m['prefix']) == linked.resolve()), None)
        named = [m for m in mpis if m['family'] == family]
        if mine is None and linked is None and len(named) == 1:
            mine = named[0]  # ldd cannot tell: the one --mpi of the family named
        if mine is not None:
            mine['osu_root'] = root
            continue
        family = family or system_family(library, system_families)
        if family in system_families:
            system.setdefault(family, root)
        elif linked is None or not (linked / 'bin').is_dir():
            given = f'{family}={root}' if family else str(root)
            raise PrefixError(f'--osu-root {given}: no system {family or "MPI"} and no MPI '
                              f'installation linked by {program} (ldd: '
                              f'{library or "no MPI library"}); name the MPI with --mpi '
                              f'{family or "FAMILY"}=PREFIX')
        else:
            mpis.append({**describe(linked, family), 'osu_root': root})
    return mpis, system
