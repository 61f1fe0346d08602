"""The schema of an algorithm table (``data/algorithms/<table>.yaml``), checked when the table
is loaded (:func:`validate`, with :mod:`omb_suite.mpi.records`), as the family records are.

An entry's layout follows the family's ``forcing.kind``: a list of names (``cvar``: MPICH's
CVARs take the name), name -> the library's number (``mca``, ``preset``: Open MPI's MCA
parameter, Intel MPI's preset; a name there would reach the job as
``OMPI_MCA_coll_tuned_bcast_algorithm=six``), name -> ``{value, counter...}`` (``mv2``:
MVAPICH2's table variable and MPI_T counters). A fault is refused naming the file and the
dotted key (``blocks[1].collectives.bcast.algorithms.binomial``); what looks across families
(:func:`omb_suite.mpi.algorithms.with_tables`) leaves the table out with a warning, so only
its own family fails.
"""

from __future__ import annotations

from typing import Any

from omb_suite.mpi.mpilib import version_in
from omb_suite.mpi.records import Either, Fields, Items, Number, OneOf, Table, Text, check

#: When a ``cannot_run`` rule holds (:func:`omb_suite.mpi.algorithms.cannot_run`).
WHEN = ('always', 'single_node', 'fewer_elements_than_ranks', 'not_two_ranks')
_NAMES = Items(of=Text())
_ENV = Table(of=Either(choices=(Text(), Number())))
_NUMBERED = Fields(fields={'component': Text(), 'algorithms': Table(of=Number()),
                           'library_names': Table(of=Text())},
                   optional=('component', 'algorithms', 'library_names'))
_COUNTED = Fields(fields={
    'variable': Text(), 'env': _ENV, 'fallback': Text(), 'counters': _NAMES,
    'stages': Items(of=Text(), empty=True), 'omitted': Fields(extra=True),
    'algorithms': Table(of=Fields(fields={
        'value': Number(), 'counter': Either(choices=(Text(), _NAMES)), 'also': _NAMES,
        'needs': _NAMES, 'env': _ENV, 'falls_back': Text()},
        optional=('also', 'needs', 'env', 'falls_back')))},
    optional=('omitted',))
#: An entry of a collective, by the family's ``forcing.kind``.
ENTRIES = {'cvar': Items(of=Text(), empty=True), 'mca': _NUMBERED, 'preset': _NUMBERED,
           'mv2': _COUNTED}
_RULE = Fields(fields={'collectives': _NAMES, 'algorithm': Text(), 'when': OneOf(values=WHEN),
                       'reason': Text()})
_DEFECT = Either(choices=(Text(), Fields(fields={'versions': Text(), 'reason': Text()})))


def schema(kind: str) -> Fields:
    """The schema of a table whose family forces with ``kind``."""
    block = Fields(fields={
        'versions': Text(), 'source': Text(), 'verified': Text(nullable=True),
        'exclude_components': Items(of=Text(), empty=True),
        'defects': Table(of=_DEFECT, nullable=True), 'collectives': Table(of=ENTRIES[kind])},
        optional=('exclude_components', 'defects'))
    return Fields(fields={
        'family': Text(), 'library': Text(), 'wrappers': _NAMES, 'provides': Table(of=_NAMES),
        'cannot_run': Items(of=_RULE, empty=True), 'counter_prefix': Text(),
        'needs': Table(of=Text()), 'blocks': Items(of=block)},
        optional=('wrappers', 'provides', 'cannot_run', 'counter_prefix', 'needs'))


def validate(where: str, family: str, record: dict[str, Any], data: Any,
             error: type[ValueError], reserved: str) -> None:
    """Refuse a table that does not fit :func:`schema` for the family ``record``'s forcing,
    or that the family's proof cannot read, naming the file and the key."""
    check(where, data, schema(record['forcing']['kind']), error=error)
    if data['family'] != family:
        raise error(f"{where}: family: says {data['family']!r}, not {family!r} (the family "
                    f'whose record names the table)')
    needed = {'coll_verbose': ('provides', 'wrappers'), 'mpit': ('counter_prefix', 'needs')}
    for key in needed.get(record['proof']['kind'], ()):
        if key not in data:
            raise error(f"{where}: missing key {key} (the proof of {family}, "
                        f"{record['proof']['kind']}, reads it)")
    for i, block in enumerate(data['blocks']):
        try:
            version_in('0', block['versions'])
        except ValueError as err:
            raise error(f'{where}: blocks[{i}].versions: {err}') from None
        for coll, entry in block['collectives'].items():
            key = f'blocks[{i}].collectives.{coll}'
            names = list(entry if isinstance(entry, list) else entry.get('algorithms') or {})
            if reserved in names or len(set(names)) != len(names):
                raise error(f"{where}: {key}: duplicate or reserved ('{reserved}') algorithm "
                            f'names {names}')
            if record['forcing']['kind'] == 'mv2':
                _counted(where, key, entry, data['needs'], error)


def _counted(where: str, key: str, entry: dict[str, Any], needs: dict[str, str],
             error: type[ValueError]) -> None:
    """MVAPICH2: every algorithm's counters and stages are its collective's, its needs known."""
    known = set(entry['counters'])
    for name, spec in entry['algorithms'].items():
        counters = spec['counter'] if isinstance(spec['counter'], list) else [spec['counter']]
        unknown = ({*counters, *spec.get('also', []), *entry['stages']} - known
                   | set(spec.get('needs', [])) - set(needs))
        if unknown:
            raise error(f'{where}: {key}.algorithms.{name}: expected counters, stages and '
                        f'needs that the file declares (unknown: {sorted(unknown)})')
