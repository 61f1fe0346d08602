"""OSU's behaviour per release (``data/osu_versions.yaml``): which options a release accepts,
the datatype a benchmark uses without ``-T``, and the release of an installed program.

A fact holds for a range of releases; a release newer than the data knows is taken as the
newest it knows (:func:`as_known`), and :func:`unknown_note` says so once per process. An
unknown version (``None``) supports no optional feature: the suite never passes an option
it cannot show the installed OSU accepts.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from omb_suite import yamldata

#: The title every OSU program holds ('# OSU MPI%s Latency Test v7.4', 8.0b: '# OSU MPI%s
#: Latency Test Test v8.0b', and '# MPI%s BENCHMARK NAME UNSET v8.0b'): the release of a
#: program without running it.
_BANNER = re.compile(rb'(?:Test|UNSET) v(\d+(?:\.\d+)+[a-z]*\d*)')
_NOTED: set[str] = set()


@cache
def _data() -> dict[str, Any]:
    return yamldata.load(resources.files('omb_suite').joinpath('data/osu_versions.yaml')
                         .read_text())


def release(version: str) -> tuple[int, ...]:
    """'7.5.1' -> (7, 5, 1); a letter ends the number: '8.0b2' -> (8, 0)."""
    match = re.match(r'\s*v?(\d+(?:\.\d+)*)', version)
    if match is None:
        raise ValueError(f'{version!r} is not an OSU release number (e.g. 7.4, 7.5.1, 8.0b2)')
    return tuple(int(n) for n in match[1].split('.'))


def newest_known() -> str:
    return str(_data()['newest_known'])


def is_newer_than_known(version: str) -> bool:
    """Whether ``version`` is after the newest release series the data knows (8.0.x)."""
    newest = release(newest_known())
    return release(version)[:len(newest)] > newest


def as_known(version: str | None) -> str | None:
    """The release whose facts apply: ``version`` itself, or the newest known for a newer."""
    if version is None:
        return None
    return newest_known() if is_newer_than_known(version) else version


def unknown_note(version: str | None) -> str | None:
    """What to say, once per process, about a release newer than the data (None otherwise,
    and for every later call with the same version)."""
    if version is None or not is_newer_than_known(version) or version in _NOTED:
        return None
    _NOTED.add(version)
    return (f'OSU {version} is newer than the releases the suite knows (up to '
            f'{newest_known()}.x): it runs with what OSU {newest_known()} accepts and prints; '
            f'check its CHANGES and add it to src/omb_suite/data/osu_versions.yaml')


def _in_range(version: str, entry: dict[str, Any]) -> bool:
    number = release(version)
    start, end = entry.get('from'), entry.get('before')
    return (start is None or number >= release(str(start))) and \
        (end is None or number < release(str(end)))


def features(version: str | None) -> frozenset[str]:
    """The optional features (``data/osu_versions.yaml`` ``features``) ``version`` has."""
    known = as_known(version)
    if known is None:
        return frozenset()
    return frozenset(name for name, entry in _data()['features'].items()
                     if _in_range(known, entry))


def feature_names() -> list[str]:
    return list(_data()['features'])


def supports(version: str | None, feature: str) -> bool:
    """Whether OSU ``version`` has ``feature`` (``mem_limit``, ``iteration_buckets``,
    ``size_powers``, ``version_option``, ``launchers``, ``colour``); False when unknown."""
    if feature not in _data()['features']:
        raise KeyError(f'{feature!r} is not an OSU feature of data/osu_versions.yaml '
                       f'(one of {", ".join(feature_names())})')
    return feature in features(version)


def fact(feature: str) -> dict[str, Any]:
    """A feature's entry: ``doc``, its range, ``source`` (and ``order`` for buckets)."""
    return dict(_data()['features'][feature])


def _entry(table: str, version: str) -> dict[str, Any]:
    known = as_known(version) or version
    for entry in _data()[table]:
        if _in_range(known, entry):
            return entry
    raise KeyError(f'OSU {version}: no {table} entry in data/osu_versions.yaml')


def default_datatype(benchmark: str, version: str | None) -> str | None:
    """The datatype ``benchmark`` of OSU ``version`` uses without ``-T`` (``MPI_CHAR``,
    ``MPI_INT``), or None when the version is unknown."""
    if version is None:
        return None
    entry = _entry('datatypes', version)
    for datatype, names in (entry.get('benchmarks') or {}).items():
        if benchmark in names:
            return str(datatype)
    return str(entry['default'])


def lacks(benchmark: str, version: str | None) -> bool:
    """Whether OSU ``version`` installs no ``benchmark`` though the catalogue has it."""
    known = as_known(version)
    return known is not None and any(
        benchmark in entry['programs'] and _in_range(known, entry)
        for entry in _data()['missing_programs'])


def defect(version: str | None, name: str) -> str | None:
    """What defect ``name`` (``data/osu_versions.yaml`` ``defects``) of OSU ``version`` does,
    or None when that release does not have it (or is unknown)."""
    entry = _data()['defects'][name]
    known = as_known(version)
    return str(entry['doc']) if known is not None and _in_range(known, entry) else None


def program_defect(benchmark: str, version: str | None) -> str | None:
    """What a defect of OSU ``version`` listing ``benchmark`` in its ``programs`` does (the
    program cannot run there), or None."""
    known = as_known(version)
    if known is None:
        return None
    return next((str(entry['doc']) for entry in _data()['defects'].values()
                 if benchmark in entry.get('programs', ()) and _in_range(known, entry)), None)


def install_group(group: str, version: str | None) -> str:
    """The directory (under ``libexec/osu-micro-benchmarks/mpi``) where ``version`` installs
    the programs of catalogue ``group`` (``data/osu_versions.yaml`` ``install_groups``)."""
    known = as_known(version)
    for entry in _data().get('install_groups', []) if known else []:
        if _in_range(known, entry):
            return str(entry['moved'].get(group, group))
    return group


def reduction_char(version: str) -> str:
    """What a reduction runs when asked for ``-T mpi_char`` (MPI_SIGNED_CHAR from 7.5)."""
    return str(_entry('reduction_char', version)['datatype'])


@cache
def banner_version(program: Path) -> str | None:
    """The release compiled into an OSU program's title ('7.4', '8.0b'), read from the file
    (8.0's programs print it only when launched with at least two processes)."""
    try:
        match = _BANNER.search(Path(program).read_bytes())
    except OSError:
        return None
    return match[1].decode() if match else None


def not_built(program: Path) -> str | None:
    """What the MPI lacked when OSU (8.0 on) built ``program`` as a stub that only says so
    (``data/osu_versions.yaml`` ``not_built``), or None for a real program."""
    try:
        text = Path(program).read_bytes()
    except OSError:
        return None
    markers = _data()['not_built']['markers']
    return next((need for line, need in markers.items() if line.encode() in text), None)
