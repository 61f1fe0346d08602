"""MPI families, one record each (``data/families/<family>.yaml``): how a library of the family
is recognised, which option dialect its ``mpirun`` speaks, how an algorithm is forced and
proven, how GPU awareness is read, which tool lists its algorithms, its module and Spack names.

Every part is required (:data:`SCHEMA`): a record that lacks one is refused when it is loaded,
naming the file and the key, so a family cannot be half-added. The code that acts on a part
(forcing: :mod:`omb_suite.algorithms`, proof: :mod:`omb_suite.evidence`, GPU and listings:
:mod:`omb_suite.mpilib`) dispatches on the record's ``kind``/``probe``/``parser``.
"""

from __future__ import annotations

import os
import re
from functools import cache
from importlib import resources
from typing import Any

from omb_suite import yamldata

#: Status of a family whose libraries this suite ran; anything else is 'on paper'.
RUN_HERE = 'run here'
#: Required keys: top level, then those of each mapping part (``None`` = any value).
SCHEMA: dict[str, tuple[str, ...] | None] = {
    'family': None, 'library': None, 'status': None, 'algorithms': None, 'modules': None,
    'spack': None, 'features': None, 'listing': None,
    'recognise': ('tools', 'version_tool', 'version_pattern', 'tool_output', 'device_pattern',
                  'library_version', 'mpirun_version', 'linked_library', 'tool_env'),
    'launch': ('mpirun', 'srun_mpi'),
    'forcing': ('kind', 'variable', 'companions', 'exclude_variable', 'oversubscribe_env'),
    'proof': ('kind', 'env', 'rank0_only', 'read_back'),
    'gpu': ('probe',),
    'tuning': ('kind', 'versions', 'file', 'env', 'why'),
}
#: Keys of a listing (where it is not ``null``: the library has no tool that lists).
LISTING_KEYS = ('tool', 'args', 'parser')


class FamilyError(ValueError):
    """A family record that is missing or malformed, or a name no record has."""


def _directory() -> Any:
    return resources.files('omb_suite') / 'data' / 'families'


@cache
def names() -> tuple[str, ...]:
    """Every family with a record, by file name."""
    return tuple(sorted(p.name[:-len('.yaml')] for p in _directory().iterdir()
                        if p.name.endswith('.yaml')))


@cache
def get(family: str) -> dict[str, Any]:
    """The validated record of ``family``."""
    if family not in names():
        raise FamilyError(f'unknown MPI family {family!r}; known: {", ".join(names())} '
                          f'(a new one is a record in data/families/)')
    where = f'data/families/{family}.yaml'
    record = yamldata.load((_directory() / f'{family}.yaml').read_text())
    validate(where, family, record)
    return record


def validate(where: str, family: str, record: Any) -> None:
    """Refuse a record that lacks a part, naming the file and the missing key."""
    if not isinstance(record, dict):
        raise FamilyError(f'{where}: not a mapping of the keys {", ".join(SCHEMA)}')
    for key, inner in SCHEMA.items():
        if key not in record:
            raise FamilyError(f'{where}: missing key {key!r} (every family record needs: '
                              f'{", ".join(SCHEMA)}; see docs/maintaining.md)')
        for sub in inner or ():
            if not isinstance(record[key], dict) or sub not in record[key]:
                raise FamilyError(f'{where}: missing key {key}.{sub!r}')
    listing = record['listing']
    if listing is not None and not all(k in listing for k in LISTING_KEYS):
        raise FamilyError(f'{where}: listing needs {", ".join(LISTING_KEYS)} (or null)')
    if record['family'] != family:
        raise FamilyError(f"{where}: says family {record['family']!r}, not {family!r}")


def run_here(family: str) -> bool:
    return get(family)['status'] == RUN_HERE


def known(family: str | None) -> bool:
    return bool(family) and family in names()


# ---------------------------------------------------------------- launching


def mpirun_dialect(family: str | None) -> str:
    """Which option dialect the family's ``mpirun``/``mpiexec`` speaks (``ompi``, ``hydra``...);
    ``ompi`` for an unknown family (what an unrecognised ``mpirun`` was taken to be before)."""
    return get(family)['launch']['mpirun'] if known(family) else 'ompi'


def srun_plugin(family: str | None) -> str | None:
    """srun's ``--mpi`` plugin for the family, ``None`` for an unknown one."""
    return get(family)['launch']['srun_mpi'] if known(family) else None


# ---------------------------------------------------------------- recognising


def version_from(family: str, text: str) -> str | None:
    """The version in the output of the family's version tool."""
    match = re.search(get(family)['recognise']['version_pattern'], text, re.M)
    return match.group(1) if match else None


def tool_version(family: str, text: str) -> str | None:
    """The version in a version tool's output, ``None`` where the output is not the family's
    own (MPICH's and MVAPICH's ``mpichversion`` share a name: ``tool_output`` tells them
    apart)."""
    if not re.search(get(family)['recognise']['tool_output'], text, re.M):
        return None
    return version_from(family, text)


def from_library_version(text: str) -> tuple[str, str] | None:
    """(family, version) from ``MPI_Get_library_version``'s text, ``None`` if no record's."""
    return _first_match('library_version', text)


def from_mpirun_version(text: str) -> tuple[str, str | None] | None:
    """(family, version) from ``mpirun --version``, ``None`` if no record's pattern matches."""
    return _first_match('mpirun_version', text)


def _first_match(key: str, text: str) -> tuple[str, str] | None:
    # more specific records first: a family based on another prints the base's name too
    for family in sorted(names(), key=lambda f: -len(get(f)['recognise'][key])):
        match = re.search(get(family)['recognise'][key], text, re.M)
        if match:
            return family, match.group(1)
    return None


def tool_families() -> dict[str, list[str]]:
    """Program of a prefix's bin/ -> the families that install it (recognition)."""
    found: dict[str, list[str]] = {}
    for family in names():
        for tool in get(family)['recognise']['tools']:
            found.setdefault(tool, []).append(family)
    return found


def by_spack_package(package: str) -> str | None:
    """The family a Spack package name belongs to (``intel-oneapi-mpi`` -> ``intel-mpi``)."""
    return next((f for f in names() if package in get(f)['spack']), None)


def by_module(module: str) -> str | None:
    """The family whose record lists this Lmod module name (``impi/2021.9`` -> ``intel-mpi``)."""
    name = module.split('/')[0]
    return next((f for f in names() if name in get(f)['modules']), None)


def linking(library_file: str) -> list[str]:
    """Families whose library file an OSU program may link (``libmpi.so.12``: MPICH's own
    install and Intel MPI alike: the prefix's tools tell them apart, :func:`recognise`)."""
    return [f for f in names() if re.match(get(f)['recognise']['linked_library'], library_file)]


def tool_env(family: str, prefix: str) -> dict[str, str]:
    """Variables the family's tools need to start, for the library installed at ``prefix``
    (``{PATH}`` in a value: this process's ``PATH``)."""
    return {k: v.format(prefix=prefix, PATH=os.environ.get('PATH', ''))
            for k, v in get(family)['recognise']['tool_env'].items()}
