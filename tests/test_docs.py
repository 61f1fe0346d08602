"""Facts the README repeats from the code agree with it: the verdict set's table against
``catalogue.verdict_set()`` (adding a program to the verdict set without its row fails here,
naming the row)."""

from __future__ import annotations

import re

from testdata import REPO

from omb_suite import catalogue


def verdict_table() -> dict[tuple[str, ...], set[str]]:
    """README's "What a run does" table: the checks of a row -> the programs it names."""
    text = (REPO / 'README.md').read_text()
    start = text.index('| check | the verdict set |')
    rows = text[start:].split('\n\n', 1)[0].splitlines()[2:]
    table = {}
    for row in rows:
        checks, programs = row.strip('|').split('|', 1)
        table[tuple(re.findall(r'`(\w+)`', checks))] = set(re.findall(r'`(osu_\w+)`', programs))
    return table


def test_readme_verdict_table_lists_the_catalogues_verdict_set():
    verdict = {name for names in catalogue.verdict_set().values() for name in names}
    listed = set()
    for checks, programs in verdict_table().items():
        expected = {name for name in verdict if catalogue.check_of(name) in checks}
        assert programs == expected, f'README row {checks}: lists {sorted(programs)}, ' \
                                     f'the catalogue has {sorted(expected)}'
        listed |= programs
    assert listed == verdict, f'README lacks a row for {sorted(verdict - listed)}'
