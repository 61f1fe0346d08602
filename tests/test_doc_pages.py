"""User pages (README.md, docs/*.md; not docs/dev/) say what is true now and how to do a
task: no lab notebook (dates, machine sizes, issue numbers, before/now narration, words of
our own history), and docs/index.md reaches every page. Measurements and history go to
docs/dev/ and CHANGELOG.md."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from testdata import REPO

#: Lab-notebook phrases: what each looks like, and why it is not for a user page.
NOTEBOOK = {
    r'\b20\d\d-\d\d-\d\d\b': 'a date',
    r'\b2-core\b|\b2 cores\b|\bthis VM\b|\b(development|test|quiet|shared|loaded) VM\b':
        "this machine's size",
    r'\bissues? #?\d+\b|\(#\d+\)': 'an issue number',
    r'\bseeds?\b': 'a seed (the users we heard from)',
    r'\blent\b': 'a lent machine',
    r'\bthe lead\b|\bmerged suite\b|\bSTYLE\.md\b|\bhelper i\d|\bbranch i\d|\bstop \d+\b':
        'words of our own work',
    r'\bused to\b|\bBefore, |\(was \d|\bbefore this (contract|layout)\b|\bSince then\b':
        'before/now narration',
}


def user_pages() -> list[Path]:
    return [REPO / 'README.md', *sorted((REPO / 'docs').glob('*.md'))]


def prose(text: str) -> list[tuple[int, str]]:
    """Numbered lines outside fenced blocks (a block may show a dated output or option)."""
    lines, fenced = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith('```'):
            fenced = not fenced
        elif not fenced:
            lines.append((number, line))
    return lines


def test_no_lab_notebook_in_user_pages():
    found = [f'{page.relative_to(REPO)}:{number}: {why}: {line.strip()[:100]}'
             for page in user_pages() for number, line in prose(page.read_text())
             for pattern, why in NOTEBOOK.items() if re.search(pattern, line, re.I)]
    assert not found, ('lab notebook in user pages (move it to docs/dev/<topic>.md or '
                       'CHANGELOG.md):\n' + '\n'.join(found))


@pytest.mark.parametrize(('line', 'why'), [
    ('Measured 2026-11-26 on the VM', 'a date'), ('on a 2-core box', "this machine's size"),
    ('(issue 20)', 'an issue number'), ('the cloud team of seed 000', 'a seed'),
    ('It used to be a launch', 'before/now narration'), ("the lead's build", 'words of')])
def test_the_notebook_patterns_catch_what_they_name(line, why):
    assert any(re.search(p, line, re.I) for p, w in NOTEBOOK.items() if w.startswith(why))


def links(page: Path) -> set[Path]:
    """Pages a markdown page links to (relative links, anchors dropped)."""
    found = set()
    for target in re.findall(r'\]\(([^)#\s]+)(?:#[^)]*)?\)', page.read_text()):
        if not re.match(r'\w+:', target):
            found.add((page.parent / target).resolve())
    return found


def test_the_index_reaches_every_page():
    index = REPO / 'docs' / 'index.md'
    reached = links(index)
    pages = [*sorted((REPO / 'docs').glob('*.md')), *sorted((REPO / 'docs/dev').glob('*.md'))]
    missing = [str(p.relative_to(REPO)) for p in pages if p != index and p.resolve()
               not in reached and p.resolve() not in links(REPO / 'docs/dev/index.md')]
    assert not missing, f'pages docs/index.md (or docs/dev/index.md) does not link: {missing}'
    assert index.resolve() in links(REPO / 'README.md')


def test_every_relative_link_of_a_page_exists():
    pages = [*user_pages(), *sorted((REPO / 'docs/dev').glob('*.md')), REPO / 'CHANGELOG.md']
    broken = [f'{page.relative_to(REPO)} -> {target}' for page in pages
              for target in links(page) if not target.exists()]
    assert not broken, f'links to nothing: {broken}'


def slugs(page: Path) -> set[str]:
    """The anchors GitHub gives a page's headings."""
    headings = re.findall(r'^#+ (.+)$', re.sub(r'```.*?```', '', page.read_text(), flags=re.S),
                          re.M)
    return {re.sub(r'[^\w\- ]', '', h.strip().lower()).replace(' ', '-') for h in headings}


def test_every_anchor_of_a_link_exists():
    pages = [*user_pages(), *sorted((REPO / 'docs/dev').glob('*.md'))]
    broken = []
    for page in pages:
        for target, anchor in re.findall(r'\]\(([^)#\s]*)#([^)\s]+)\)', page.read_text()):
            path = (page.parent / target).resolve() if target else page
            if path.suffix == '.md' and path.exists() and anchor not in slugs(path):
                broken.append(f'{page.relative_to(REPO)} -> {target}#{anchor}')
    assert not broken, f'anchors no heading has: {broken}'


def test_the_readme_is_a_front_door():
    assert len((REPO / 'README.md').read_text().splitlines()) <= 120
