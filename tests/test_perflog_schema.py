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


REVIEW = sorted((REPO / 'src' / 'omb_review').rglob('*.py'))


@pytest.mark.parametrize('path', REVIEW, ids=lambda p: str(p.relative_to(REPO)))
def test_the_review_keeps_no_copy_of_what_tells_measurements_apart(path):
    """The review's own subsets name what they mean (the fields a finding compares, the ones
    a mapping rule may set); a literal naming 4 or more of the measurement columns (``buffers``,
    ``rma_sync``, ...) is a copy of the schema's ``measurement`` list that a new knob of a test
    would have to find and extend, and so is one naming 12 or more of all the columns."""
    names, measured = set(perflog_schema.columns()), set(perflog_schema.measurement_columns())
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
            named = {e.value for e in node.elts if isinstance(e, ast.Constant)}
            assert len(named & measured) < 4, (
                f'{path.name}:{node.lineno} lists {sorted(named & measured)}: use '
                'perflog_schema.measurement_columns()')
            assert len(named & names) < 12, f'{path.name}:{node.lineno} copies the columns'


def test_every_measurement_column_is_labelled_and_indexed():
    """A knob added to ``measurement`` in the data file reaches the series' labels, the
    references' ``$index`` and the series' identity without another edit."""
    from omb_review.read import normalise, series
    from omb_review.references import baseline

    measured = perflog_schema.measurement_columns()
    labelled = {column for column, _ in series.LABEL_PARTS}
    assert set(measured) <= labelled, f'{set(measured) - labelled}: give it a label in series.py'
    assert baseline.INDEX_COLUMNS == measured
    assert set(measured) <= set(series.SERIES_KEYS) and set(measured) <= set(normalise.COLUMNS)
