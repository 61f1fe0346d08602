"""Facts the README repeats from the code agree with it: the verdict set's table against
``catalogue.verdict_set()`` (adding a program to the verdict set without its row fails here,
naming the row)."""

from __future__ import annotations

import re

from testdata import REPO

from omb_suite.osu import catalogue


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


def map_paragraphs() -> list[str]:
    """The paragraphs of docs/maintaining.md's "The map" section."""
    text = (REPO / 'docs/maintaining.md').read_text()
    section = text.split('## The map', 1)[1].split('\n## ', 1)[0]
    return [p for p in re.split(r'\n\s*\n', section) if p.strip()]


def mapped_modules() -> set[str]:
    """Modules the map names, as paths under src/. A paragraph that names a package
    (`src/omb_suite/setup/`) names its modules by file (`cli.py`); a file that is not in it
    (and every file in a paragraph naming no package: `rfm/hangs.py`, `cost/wall.py`) is
    under src/omb_suite/."""
    src = REPO / 'src'
    named = set()
    for paragraph in map_paragraphs():
        packages = [p for p in re.findall(r'`src/([\w/]+)/`', paragraph)
                    if (src / p / '__init__.py').is_file()]
        named |= {f'{p}/__init__.py' for p in packages}
        for ref in re.findall(r'`((?:src/)?[\w/]+\.py)`', paragraph):
            ref = ref.removeprefix('src/')
            found = [f'{base}/{ref}'.lstrip('/') for base in [*packages, 'omb_suite', '']
                     if (src / base / ref).is_file()]
            named |= set(found[:1])  # the paragraph's package first
    return named


def test_the_map_names_every_module():
    """docs/maintaining.md maps every module under src/ (a new module: write where it lives
    and what it does in the paragraph of its concept)."""
    modules = {str(p.relative_to(REPO / 'src')) for p in (REPO / 'src').rglob('*.py')}
    missing = [f'src/{m}' for m in sorted(modules - mapped_modules())]
    assert not missing, ('modules not on the map of docs/maintaining.md (name each in the '
                         f'paragraph of its concept): {", ".join(missing)}')
