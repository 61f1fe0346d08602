"""Collective algorithm tables per MPI family and version, and how to force one of them.

The tables are data (``data/algorithms/<table>.yaml``, one block per version range; the
family's record, :mod:`omb_suite.mpi.families`, names its table and how it is forced:
:mod:`omb_suite.mpi.forcing`). This module turns (family, version, collective, algorithm name)
into the environment that forces the algorithm (with its companion variables), says which
algorithms the libraries of a system offer (the collective checks' cases), which ones a build
or run cannot serve (``needs``, MVAPICH2: mrail, multicast) and which cannot run OSU's
arguments. Proof that a forced algorithm ran: :mod:`omb_suite.mpi.evidence`. 'default' always
means: set nothing, let the library choose.
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from omb_suite import yamldata
from omb_suite.mpi import families, forcing, tables
from omb_suite.mpi.mpilib import version_in

DEFAULT = 'default'


class AlgorithmError(ValueError):
    """A table, version or algorithm request that cannot be served."""


class UnknownAlgorithmError(AlgorithmError):
    """The algorithm is not in the table for that family, version and collective."""


class EvidenceError(AlgorithmError):
    """A run's output does not show the forced algorithm in effect (see omb_suite.mpi.evidence)."""


@dataclass(frozen=True)
class AlgorithmChoice:
    """Everything a check needs to run one collective with one algorithm."""

    family: str
    collective: str
    name: str  # as the library names it; 'default' = the library's own choice
    env_vars: dict[str, str]  # exactly what to export
    evidence_env: dict[str, str]  # makes the library print what it used (export as well)
    library_id: str | None  # the value given to the library (Open MPI: the enum number)


# ---------------------------------------------------------------- tables


@cache
def with_tables() -> tuple[str, ...]:
    """Families whose record loads and names an algorithm table that loads (read when first
    asked, not at import: a bad record or table fails its own family, not the import of every
    test file); a bad table is reported (a warning naming its file and key) and left out."""
    good = []
    for family in families.usable():
        if not families.get(family)['algorithms']:
            continue
        try:
            load_table(family)
        except AlgorithmError as err:
            warnings.warn(f'{err}; the algorithm table of {family} is left out until it is '
                          f'fixed (only default runs there)', stacklevel=2)
        else:
            good.append(family)
    return tuple(good)


@cache
def load_table(family: str) -> dict[str, Any]:
    """The parsed data file of one family, checked against its schema
    (:mod:`omb_suite.mpi.tables`)."""
    if families.known(family) and family not in families.usable():
        families.get(family)  # its record's error, naming file and key
    if not families.known(family) or not families.get(family)['algorithms']:
        why = ('its record in data/families/ names no algorithm table'
               if families.known(family) else f'unknown MPI family {family!r}')
        raise AlgorithmError(f'{why}; families with tables: {", ".join(with_tables())}')
    table = families.get(family)['algorithms']
    data = yamldata.load((_folder() / f'{table}.yaml').read_text())
    _validate(family, data)
    return data


def _folder() -> Any:
    return resources.files('omb_suite') / 'data' / 'algorithms'


def _validate(family: str, data: Any) -> None:
    """Fail loudly on a malformed data file instead of serving a wrong table."""
    record = families.get(family)
    tables.validate(f"data/algorithms/{record['algorithms']}.yaml", family, record, data,
                    AlgorithmError, DEFAULT)


def _block(family: str, version: str) -> dict[str, Any]:
    data = load_table(family)
    for block in data['blocks']:
        if version_in(version, block['versions']):
            return block
    ranges = ', '.join(b['versions'] for b in data['blocks'])
    raise AlgorithmError(f"no {data['library']} algorithm table covers version {version} "
                         f'(tables: {ranges}); add a block to data/algorithms/{family}.yaml')


def _entry(family: str, version: str, collective: str) -> Any:
    try:
        block = _block(family, version)
    except ValueError as err:  # an unreadable version
        raise AlgorithmError(str(err)) from None
    if collective not in block['collectives']:
        known = ', '.join(block['collectives'])
        raise AlgorithmError(f'{family} {version}: unknown collective {collective!r}; '
                             f'known: {known}')
    return block['collectives'][collective]


def _by_name(family: str) -> bool:
    """The family's variable takes the algorithm's name (MPICH's CVARs), not a number."""
    return families.get(family)['forcing']['kind'] == 'cvar'


def _algorithm_ids(family: str, entry: Any) -> dict[str, str]:
    """Algorithm name -> value the library takes, whatever the family's entry layout
    (MPICH: a list of names; Open MPI, Intel MPI: name -> number; MVAPICH2: name ->
    {value: ...})."""
    if _by_name(family):
        return {name: name for name in entry}
    return {str(name): str(spec['value'] if isinstance(spec, dict) else spec)
            for name, spec in (entry.get('algorithms') or {}).items()}


def algorithm_spec(family: str, version: str, collective: str, name: str) -> dict[str, Any]:
    """The table's data on one algorithm beyond its value ({} where the family has none):
    MVAPICH2's ``counter``, ``also``, ``env``, ``needs``, ``falls_back``."""
    spec = (_entry(family, version, collective).get('algorithms') or {}).get(name)
    return spec if isinstance(spec, dict) else {}


def algorithms(family: str, version: str, collective: str, *,
               features: frozenset[str] | None = None) -> list[str]:
    """'default' first, then every algorithm the table lists for this collective; with
    ``features`` (what the build has, e.g. :func:`omb_suite.mpi.mvapich2.build_features`), only
    those whose ``needs`` it meets."""
    names = _algorithm_ids(family, _entry(family, version, collective))
    if features is not None:
        names = {n: v for n, v in names.items()
                 if not set(algorithm_spec(family, version, collective, n).get('needs', []))
                 - features}
    return [DEFAULT, *names]


def unmet_needs(family: str, version: str, collective: str, name: str,
                features: frozenset[str]) -> str | None:
    """None when the build and run (``features``) can run ``name``; else the skip message."""
    if name == DEFAULT:
        return None
    missing = [n for n in algorithm_spec(family, version, collective, name).get('needs', [])
               if n not in features]
    if not missing:
        return None
    table = load_table(family)
    why = '; '.join(f"{n}: {table['needs'][n]}" for n in missing)
    return (f"{table['library']} {version}: {collective} algorithm {name!r} needs what this "
            f'build or run lacks ({why}); the library would silently run another one; not run')


def known_names(family: str) -> set[str]:
    """Every algorithm name any block of the family's table lists."""
    return {name for block in load_table(family)['blocks']
            for entry in block['collectives'].values()
            for name in _algorithm_ids(family, entry)}


def table_entry(family: str, collective: str, name: str, version: str | None) -> Any:
    """The table entry that defines ``name`` (in ``version``'s block, or the first that has it;
    for 'default' the first that has the collective)."""
    if version is not None:
        return _entry(family, version, collective)
    for block in load_table(family)['blocks']:
        entry = block['collectives'].get(collective)
        if entry is not None and (name == DEFAULT or name in _algorithm_ids(family, entry)):
            return entry
    raise UnknownAlgorithmError(f'no {family} table has {collective} algorithm {name!r}')


def library_name(family: str, collective: str, name: str, version: str | None = None) -> str:
    """The name the library itself prints (differs only where ours must avoid 'default')."""
    if _by_name(family) or name == DEFAULT:
        return name
    entry = table_entry(family, collective, name, version)
    return (entry.get('library_names') or {}).get(name, name)


# ---------------------------------------------------------------- forcing


def choose(family: str, version: str, collective: str, name: str) -> AlgorithmChoice:
    """The environment that forces ``name`` for ``collective`` in this family and version."""
    entry = _entry(family, version, collective)
    ids = _algorithm_ids(family, entry)
    evidence = dict(families.get(family)['proof']['env'])
    if name == DEFAULT:
        return AlgorithmChoice(family, collective, name, {}, evidence, None)
    if name not in ids:
        library = load_table(family)['library']
        raise UnknownAlgorithmError(
            f"{library} {version} has no {collective} algorithm {name!r}; valid: "
            f"{', '.join([DEFAULT, *ids])}. Pick one of these, or add it to "
            f"data/algorithms/{families.get(family)['algorithms']}.yaml if this version has it.")
    spec = entry['algorithms'][name] if isinstance(entry, dict) else {}
    env = forcing.environment(families.get(family)['forcing'], forcing.Forced(
        collective, ids[name], entry, spec if isinstance(spec, dict) else {},
        _block(family, version).get('exclude_components', [])))
    return AlgorithmChoice(family, collective, name, env, evidence, ids[name])


def exclusions(family: str, version: str) -> dict[str, str]:
    """The environment that keeps other components from taking over from the one the
    version's table runs its algorithms in (Open MPI: ``OMPI_MCA_coll=^han,...``, the block's
    ``exclude_components``); ``{}`` for a family whose forcing excludes nothing."""
    template = families.get(family)['forcing']
    if not template.get('exclude_variable'):
        return {}
    return forcing.exclusion(template, _block(family, version).get('exclude_components', []))


# ---------------------------------------------------------------- what runs where


def cannot_run(family: str, collective: str, name: str, *, nodes: int, ranks: int,
               min_elements: int, element_size: int = 1) -> str | None:
    """Why the library cannot run ``name`` with OSU's arguments on this job, or ``None``.

    From the family's ``cannot_run`` list (seen in real runs, each with the library's own
    reason), so the case is skipped before the run instead of failing in it.
    """
    holds = {'always': True, 'single_node': nodes == 1,
             'fewer_elements_than_ranks': min_elements < ranks, 'not_two_ranks': ranks != 2}
    for rule in load_table(family).get('cannot_run', []):
        if name == rule['algorithm'] and collective in rule['collectives'] \
                and holds[rule['when']]:
            hint = (f' (-S min_size={ranks * element_size} runs it from one element per rank)'
                    if rule['when'] == 'fewer_elements_than_ranks' else '')
            return (f"{load_table(family)['library']} cannot run {collective} algorithm "
                    f"{name!r} with OSU's arguments here: {' '.join(rule['reason'].split())}"
                    f'{hint}')
    return None


def defect(family: str, version: str, collective: str) -> str | None:
    """A known wrong-results defect of this library version for ``collective``, or ``None``:
    a block's ``defects`` entry is its reason, or ``{versions: SPEC, reason: ...}`` where it
    was seen in fewer versions than the block covers."""
    try:
        found = _block(family, version).get('defects', {}).get(collective)
        if isinstance(found, dict):
            return found['reason'] if version_in(version, found['versions']) else None
        return found
    except (AlgorithmError, ValueError):
        return None


def unsupported_reason(family: str, version: str, collective: str, name: str,
                       installed: dict[str, list[str]]) -> str | None:
    """None when the installed library knows ``name``; otherwise the message to skip with."""
    if name == DEFAULT:
        return None
    wanted = library_name(family, collective, name, version)
    offered = installed.get(collective, [])
    value = _algorithm_ids(family, _entry(family, version, collective)).get(name)
    if {wanted, value} & set(offered):  # a listing of names (Open MPI) or of ids (Intel MPI)
        return None
    library = load_table(family)['library']
    return (f'{library} {version} (installed) has no {collective} algorithm {wanted!r} '
            f"(it offers: {', '.join(offered) or 'none'}); not run")


#: An MPI library as the environments describe it: (family, version or None if unknown).
Library = tuple[str, 'str | None']


def _table_versions(family: str) -> list[str]:
    """One version inside each version block of a family's table (its lower bound)."""
    versions = []
    for block in load_table(family)['blocks']:
        lowest = re.search(r'>=\s*([\d.]+)', block['versions'])
        if lowest:
            versions.append(lowest.group(1))
    return versions


@cache
def offered_by(collective: str, libraries: frozenset[Library] | None = None
               ) -> dict[str, tuple[str, ...]]:
    """Algorithm name -> families that name it, in table order: for ``libraries`` (a library
    of unknown version offers what any of its family's tables lists), else for every table."""
    if libraries is None:
        libraries = frozenset((family, None) for family in with_tables())
    found: dict[str, list[str]] = {}
    for family, version in sorted(libraries, key=lambda lib: (lib[0], lib[1] or '')):
        if family not in with_tables():
            continue  # no table: only 'default' runs there
        for each in [version] if version else _table_versions(family):
            try:
                names = algorithms(family, each, collective)
            except AlgorithmError:
                continue  # no table for this version or collective (e.g. MVAPICH2 gatherv)
            for name in names[1:]:
                if family not in found.setdefault(name, []):
                    found[name].append(family)
    return {name: tuple(fams) for name, fams in found.items()}


def cases(benchmarks: list[str], libraries: frozenset[Library] | None = None
          ) -> list[tuple[str, str]]:
    """(benchmark, algorithm) pairs: 'default', then every name that ``libraries`` offer for
    the benchmark's collective."""
    return [(bench, name) for bench in benchmarks
            for name in (DEFAULT, *offered_by(bench.removeprefix('osu_'), libraries))]


def environ_features(benchmark: str, algorithm: str) -> list[str]:
    """``valid_prog_environs``: every MPI for 'default', else the families that offer it."""
    if algorithm == DEFAULT:
        return ['+mpi +osu']
    return [f'+{family} +osu'
            for family in offered_by(benchmark.removeprefix('osu_'))[algorithm]]
