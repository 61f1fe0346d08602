"""MPI families, one record each (``data/families/<family>.yaml``): how a library of the family
is recognised, which option dialect its ``mpirun`` speaks, how an algorithm is forced and
proven, how GPU awareness is read, which tool lists its algorithms, its module and Spack names.

Every key is required and its value checked when the record is loaded (:data:`SCHEMA`, with
:mod:`omb_suite.mpi.records`: types, non-empty lists, non-null patterns with the groups the code
reads, the known values of :data:`VOCABULARY`), and so are its cross-references (its dialect
in ``data/launchers/``, its table in ``data/algorithms/``, the family it ``derives_from``, with
no loop; no library, Spack package, module or recognition pattern another record declares): a
bad record is refused naming the file and the key, so a family cannot be half-added, and what
looks across families (:func:`usable`) leaves it out with a warning, so it fails its own
family only. Recognition tries a family before the one it ``derives_from``
(:func:`precedence`). The code that acts on a part (forcing: :mod:`omb_suite.mpi.algorithms`,
proof: :mod:`omb_suite.mpi.evidence`, GPU and listings: :mod:`omb_suite.mpi.mpilib`) dispatches on
the record's ``kind``/``probe``/``parser``.
"""

from __future__ import annotations

import os
import re
import warnings
from functools import cache
from importlib import resources
from typing import Any

from omb_suite import yamldata
from omb_suite.mpi import dialects
from omb_suite.mpi.records import Fields, Flag, Items, OneOf, RecordError, Table, Text, check

#: Status of a family whose libraries this suite ran; the other one: 'on paper'.
RUN_HERE = 'run here'
ON_PAPER = 'on paper, not run here'
#: The values a record may give where code dispatches on them; each code table
#: (``forcing.KINDS``, ``evidence.PROOF_KINDS``, ``mpilib.GPU_PROBES``,
#: ``mpilib.LISTING_PARSERS``, ``tuning.files.WRITERS``) covers exactly its list
#: (tests/mpi/test_families.py).
VOCABULARY: dict[str, tuple[str, ...]] = {
    'forcing.kind': ('cvar', 'preset', 'mv2', 'mca'),
    'proof.kind': ('coll_verbose', 'fallback_error', 'mpit', 'none'),
    'gpu.probe': ('ompi_info', 'mpichversion', 'env', 'none'),
    'listing.parser': ('ompi_parsable', 'mpivars', 'impi_range'),
    'tuning.kind': ('ompi_rules', 'mpich_json', 'impi_adjust'),
}
_ENV = Table(of=Text())
#: Every key of a family record, each required (``null`` only where it says so).
SCHEMA = Fields(fields={
    'family': Text(), 'library': Text(), 'status': OneOf(values=(RUN_HERE, ON_PAPER)),
    # recognition precedence: a family based on another is tried before it (its libraries
    # print the base's name too); null: based on no other record
    'derives_from': Text(nullable=True),
    'recognise': Fields(fields={
        'tools': Items(of=Text()), 'version_tool': Items(of=Text(), nullable=True),
        'version_pattern': Text(pattern=True, groups=1), 'tool_output': Text(pattern=True),
        'device_pattern': Text(pattern=True, groups=1, nullable=True),
        'library_version': Text(pattern=True, groups=1),
        'mpirun_version': Text(pattern=True, groups=1),
        'linked_library': Text(pattern=True), 'tool_env': _ENV}),
    # srun_mpi: null where the family's libraries are not launched by srun
    'launch': Fields(fields={'mpirun': Text(), 'srun_mpi': Text(nullable=True)}),
    'forcing': Fields(fields={
        'kind': OneOf(values=VOCABULARY['forcing.kind']), 'variable': Text(nullable=True),
        'companions': Table(of=_ENV), 'exclude_variable': Text(nullable=True),
        'oversubscribe_env': _ENV}),
    'proof': Fields(fields={
        'kind': OneOf(values=VOCABULARY['proof.kind']), 'env': _ENV, 'rank0_only': Flag(),
        'read_back': Text(nullable=True)}),
    'gpu': Fields(fields={'probe': OneOf(values=VOCABULARY['gpu.probe'])}, extra=True),
    'listing': Fields(nullable=True, fields={
        'tool': Text(), 'args': Items(of=Text(), empty=True),
        'parser': OneOf(values=VOCABULARY['listing.parser'])}),
    'algorithms': Text(nullable=True),
    'modules': Items(of=Text()), 'spack': Items(of=Text()), 'features': Items(empty=True),
    'tuning': Fields(fields={
        'kind': OneOf(values=VOCABULARY['tuning.kind'], nullable=True),
        'versions': Text(nullable=True),
        'file': Text(nullable=True), 'env': _ENV, 'why': Text(nullable=True)}),
})


class FamilyError(RecordError):
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


@cache
def _raw(family: str) -> dict[str, Any]:
    """A family's record as written (not validated: what another record's check reads)."""
    record = yamldata.load((_directory() / f'{family}.yaml').read_text())
    return record if isinstance(record, dict) else {}


def validate(where: str, family: str, record: Any) -> None:
    """Refuse a record that does not fit :data:`SCHEMA` or names what does not exist (its
    dialect, its algorithm table, the family it derives from), naming the file and the key."""
    check(where, record, SCHEMA, error=FamilyError)
    if record['family'] != family:
        raise FamilyError(f"{where}: family: says {record['family']!r}, not {family!r} "
                          f'(the file name)')
    base = record['derives_from']
    if base is not None and (base == family or base not in names()):
        raise FamilyError(f'{where}: derives_from: {base!r} is not another family record '
                          f'(known: {", ".join(names())})')
    chain = [family]
    while base is not None and base in names():
        if base == family:
            raise FamilyError(f'{where}: derives_from: a cycle, {" -> ".join([*chain, base])}: '
                              f'a family derives from one it is not a base of (set '
                              f'derives_from to the family it is built on, or null)')
        if base in chain:
            break  # a cycle further up, not through this record: refused in its own records
        chain.append(base)
        base = _raw(base).get('derives_from')
    for other in names():
        if other != family:
            _one_library(where, family, record, other)
    if record['launch']['mpirun'] not in dialects.names():
        raise FamilyError(f"{where}: launch.mpirun: no dialect {record['launch']['mpirun']!r} "
                          f'in data/launchers/ (known: {", ".join(dialects.names())})')
    table = record['algorithms']
    tables = resources.files('omb_suite') / 'data' / 'algorithms'
    if table is not None and not (tables / f'{table}.yaml').is_file():
        raise FamilyError(f'{where}: algorithms: no table data/algorithms/{table}.yaml')
    gpu = record['gpu']
    if gpu['probe'] == 'env':
        for key in ('variable', 'enabled'):
            check(where, gpu.get(key), Text(), f'gpu.{key}', FamilyError)
    for key in ('versions', 'file') if record['tuning']['kind'] is not None else ():
        check(where, record['tuning'][key], Text(), f'tuning.{key}', FamilyError)
    if record['tuning']['kind'] is None and record['tuning']['why'] is None:
        raise FamilyError(f'{where}: tuning.why: expected why the family has no tuning file '
                          f'(tuning.kind is null)')


def _norm(name: Any) -> str:
    return re.sub(r'[^a-z0-9]', '', str(name).lower())


def _one_library(where: str, family: str, record: dict[str, Any], other: str) -> None:
    """Refuse a record that declares a library ``other``'s record declares too (a Spack package
    or module, the library's name, a recognition pattern): where one of the two is named after
    what they share it keeps it, and only the other is refused; otherwise both are."""
    theirs = _raw(other)
    found = [(k, sorted(set(record[k]) & set(theirs.get(k) or ()))) for k in ('spack', 'modules')]
    found = [(k, v, family in v, other in v) for k, v in found if v]
    if _norm(record['library']) == _norm(theirs.get('library')):
        found.append(('library', record['library'], _owns(family, record, record['library']),
                      _owns(other, theirs, record['library'])))
    for key in ('library_version', 'mpirun_version', 'tool_output'):
        pattern = record['recognise'][key]
        if pattern == _part(theirs, 'recognise').get(key):
            found.append((f'recognise.{key}', pattern, _owns(family, record, pattern),
                          _owns(other, theirs, pattern)))
    for key, shared, mine, its in found:
        if its or not mine:
            raise FamilyError(f'{where}: {key}: {shared!r} also in data/families/{other}.yaml: '
                              f'one library, one family record (a library built on '
                              f"another's is a record that derives_from it, with its own "
                              f'names and patterns; the record named after the library keeps '
                              f'them)')


def _part(record: dict[str, Any], key: str) -> dict[str, Any]:
    return record[key] if isinstance(record.get(key), dict) else {}


def _owns(family: str, record: dict[str, Any], shared: str) -> bool:
    """Whether ``family`` is named after its library and ``shared`` names every word of it
    (openmpi, ``Open MPI``, ``^Open MPI v(...)``): it keeps what another record shares."""
    library = str(record.get('library'))
    words = re.findall(r'[a-z0-9]+', library.lower())
    return _norm(family) in _norm(library) and all(w in _norm(shared) for w in words)


@cache
def usable() -> tuple[str, ...]:
    """The families whose record loads, for what looks across families (recognition, names
    of modules and packages, tables): a bad record is reported (a warning naming its file
    and key) and left out, so that it fails its own family only."""
    good = []
    for family in names():
        try:
            get(family)
        except FamilyError as err:
            warnings.warn(f'{err}; the family {family} is left out until its record is fixed',
                          stacklevel=2)
        else:
            good.append(family)
    return tuple(good)


@cache
def precedence() -> tuple[str, ...]:
    """The order recognition tries the families in: each before the family it
    ``derives_from`` (MVAPICH, Intel MPI and Cray MPICH before MPICH; Spectrum MPI before
    Open MPI), otherwise by name."""
    def depth(family: str, seen: tuple[str, ...] = ()) -> int:
        base = get(family)['derives_from']
        if base is None or base not in usable():
            return 0
        if base in seen:
            raise FamilyError(f'data/families/{family}.yaml: derives_from: a cycle through '
                              f'{", ".join(seen)}')
        return 1 + depth(base, (*seen, family))
    return tuple(sorted(usable(), key=lambda f: (-depth(f), f)))


def based_on(family: str) -> tuple[str, ...]:
    """The families ``family`` derives from, nearest first (up to a refused record's)."""
    chain = []
    base = get(family)['derives_from']
    while base is not None and base not in chain:
        chain.append(base)
        base = get(base)['derives_from'] if base in usable() else None  # a refused record
    return tuple(chain)


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
    """The matching family of :func:`precedence`; two matches neither of which derives from
    the other are an error: the records cannot tell the libraries apart."""
    found = {f: m.group(1) for f in precedence()
             if (m := re.search(get(f)['recognise'][key], text, re.M))}
    bases = {b for f in found for b in based_on(f)}
    left = [f for f in found if f not in bases]
    if len(left) > 1:
        raise FamilyError(f'recognise.{key} of {" and ".join(left)} both match and neither '
                          f'derives_from the other: make the patterns exclusive or set '
                          f'derives_from in data/families/{left[0]}.yaml')
    return (left[0], found[left[0]]) if left else None


def tool_families() -> dict[str, list[str]]:
    """Program of a prefix's bin/ -> the families that install it (recognition)."""
    found: dict[str, list[str]] = {}
    for family in usable():
        for tool in get(family)['recognise']['tools']:
            found.setdefault(tool, []).append(family)
    return found


def by_spack_package(package: str) -> str | None:
    """The family a Spack package name belongs to (``intel-oneapi-mpi`` -> ``intel-mpi``)."""
    return next((f for f in usable() if package in get(f)['spack']), None)


def by_module(module: str) -> str | None:
    """The family whose record lists this Lmod module name (``impi/2021.9`` -> ``intel-mpi``)."""
    name = module.split('/')[0]
    return next((f for f in usable() if name in get(f)['modules']), None)


def linking(library_file: str) -> list[str]:
    """Families whose library file an OSU program may link (``libmpi.so.12``: MPICH's own
    install and Intel MPI alike: the prefix's tools tell them apart, :func:`recognise`)."""
    return [f for f in usable() if re.match(get(f)['recognise']['linked_library'], library_file)]


def tool_env(family: str, prefix: str) -> dict[str, str]:
    """Variables the family's tools need to start, for the library installed at ``prefix``
    (``{PATH}`` in a value: this process's ``PATH``)."""
    return {k: v.format(prefix=prefix, PATH=os.environ.get('PATH', ''))
            for k, v in get(family)['recognise']['tool_env'].items()}
