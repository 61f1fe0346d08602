"""The perflog columns have one definition (src/omb_suite/data/perflog_columns.yaml, read by
omb_suite.perflog_schema): docs/perflogs.md shows it, and no other file keeps a copy."""

from __future__ import annotations

import ast

import pytest
from testdata import REPO

from omb_suite import perflog_schema

#: Files that write or read whole perflog records (configurations, the checks' layer, the cost
#: fit). The review's own subsets (the keys of a series, the columns a mapping may set) name
#: what they mean, not the record, and are not copies of it.
SOURCES = sorted([*(REPO / 'src' / 'omb_suite').rglob('*.py'),
                  *(REPO / 'reframe' / 'config').rglob('*.py'),
                  *(REPO / 'docs' / 'examples').glob('*.py'), *(REPO / 'benchmarks').glob('*.py')])


def test_the_docs_table_is_the_definition():
    text = (REPO / 'docs' / 'perflogs.md').read_text()
    rows = ['| ' + ', '.join(f'`{c}`' for c in cols) + f' | {meaning} |'
            for cols, meaning in perflog_schema.table_rows()]
    assert '| column | meaning |\n| --- | --- |\n' + '\n'.join(rows) + '\n' in text


def test_every_column_is_named_once_and_has_a_meaning_row():
    names = perflog_schema.columns()
    assert len(names) == len(set(names))
    assert sum(len(cols) for cols, _ in perflog_schema.table_rows()) == len(names)
    assert perflog_schema.runtime_columns() == {'version'}


@pytest.mark.parametrize('path', SOURCES, ids=lambda p: str(p.relative_to(REPO)))
def test_no_file_keeps_its_own_list_of_the_columns(path):
    """A tuple, list or set literal naming 8 or more of the columns is a copy that will drift."""
    names = set(perflog_schema.columns())
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            named = {e.value for e in node.elts if isinstance(e, ast.Constant)} & names
            assert len(named) < 8, f'{path.name}:{node.lineno} lists {len(named)} perflog columns'
