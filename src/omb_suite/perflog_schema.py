"""The perflog record: its columns, their meaning, and the ReFrame handler that writes them.

One definition (``data/perflog_columns.yaml``), imported by the suite's configuration
(``reframe/config/settings.py``), a site's (``docs/examples/slurm_lmod_site.py``), the
importer of raw OSU outputs and the docs test that renders docs/perflogs.md's table. A site's
configuration writes the suite's records with::

    from omb_suite import perflog_schema
    'handlers_perflog': [perflog_schema.handler('/shared/reframe/perflogs')]

Readers never rely on the order: every perflog file carries its header.  Pure: no ReFrame.
"""

from __future__ import annotations

import functools
from importlib import resources

from omb_suite import yamldata

#: Where the handler puts each partition's files below its ``basedir``.
PREFIX = '%(check_system)s/%(check_partition)s'
#: Time stamps with their time zone (``omb-review`` assumes UTC for naive ones).
DATEFMT = '%FT%T%:z'
#: What a reader makes of a column's text besides keeping it (``type`` in the data file).
TYPES = ('int', 'number', 'time')


@functools.cache
def _schema() -> dict:
    text = resources.files('omb_suite').joinpath('data/perflog_columns.yaml').read_text()
    schema = yamldata.load(text)
    names = [c['name'] for c in schema['columns']]
    unknown = [c for c in schema['measurement'] if c not in names]
    kinds = {c.get('type', 'text') for c in schema['columns']} - {'text', *TYPES}
    if unknown or kinds:
        raise ValueError(f'data/perflog_columns.yaml: measurement names {unknown} that are not '
                         f'columns, or type {sorted(kinds)} is none of {TYPES}: fix the record')
    return schema


def _records() -> tuple[dict, ...]:
    return tuple(_schema()['columns'])


def columns() -> tuple[str, ...]:
    """The columns of every record, in order."""
    return tuple(c['name'] for c in _records())


def typed(kind: str) -> tuple[str, ...]:
    """The columns of one ``type`` (``text``, ``int``, ``number``, ``time``), in order."""
    return tuple(c['name'] for c in _records() if c.get('type', 'text') == kind)


def measurement_columns() -> tuple[str, ...]:
    """The columns that tell one measurement of a test from another, in the order the
    references index them (``$index``)."""
    return tuple(_schema()['measurement'])


def runtime_columns() -> frozenset[str]:
    """Columns ReFrame fills itself (``version``), not from the test."""
    return frozenset(c['name'] for c in _records() if c.get('from') == 'reframe')


def record_format() -> str:
    """The handler's ``format``: ``%(check_<column>)s`` (``%(<column>)s`` for ReFrame's own),
    ``|``-separated."""
    own = runtime_columns()
    return '|'.join(f'%({c})s' if c in own else f'%(check_{c})s' for c in columns())


def handler(basedir: str, prefix: str = PREFIX, level: str = 'info') -> dict:
    """The ``filelog`` entry of ``logging/handlers_perflog`` that writes the suite's records
    under ``basedir/<system>/<partition>/<TestClass>.log`` (``perflog_multiline`` must be on in
    the same ``logging`` entry: one record per performance variable)."""
    return {'type': 'filelog', 'basedir': basedir, 'prefix': prefix, 'level': level,
            'format': record_format(), 'datefmt': DATEFMT, 'append': True}


def table_rows() -> list[tuple[list[str], str]]:
    """``(columns, meaning)`` rows as docs/perflogs.md shows them: a column without a meaning
    of its own shares the row before it."""
    rows: list[tuple[list[str], str]] = []
    for c in _records():
        if 'meaning' in c or not rows:
            rows.append(([c['name']], c.get('meaning', '')))
        else:
            rows[-1][0].append(c['name'])
    return rows
