"""The import graph reads checks -> omb_suite.rfm -> pure packages -> data, with no arrow back;
between the packages of src/omb_suite only the arrows of :data:`ARROWS` (the picture in
docs/maintaining.md), no cycle; check files declare parameters and nothing else (read from the
sources' syntax trees)."""

from __future__ import annotations

import ast
import re
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest
from testdata import REPO

SRC = REPO / 'src' / 'omb_suite'
#: The packages of src/omb_suite and the packages each may import (besides itself and
#: :data:`BASE`). docs/maintaining.md, "Packages and their arrows", draws the same picture.
ARROWS: dict[str, set[str]] = {
    'machine': set(),
    'mpi': {'machine'},
    'launch': {'mpi', 'machine'},
    'osu': {'mpi'},
    'cost': {'osu', 'mpi', 'perflogs'},
    'tuning': {'osu', 'mpi'},
    'setup': {'osu', 'mpi'},
    'rfm': {'osu', 'mpi', 'launch', 'machine', 'cost', 'tuning', 'setup', 'build_cache',
            'fleet'},
    'build_cache': set(),
    'fleet': set(),
    'perflogs': set(),
}
#: Top modules every package may import: they import no package of ours.
BASE = {'yamldata', 'perflog_schema'}
#: The one module outside the layer that imports ReFrame: its launcher registry, no more
#: (settings.py imports it, and so does every reader of the site configuration).
LIGHT = {SRC / 'launch/launchers.py': ('reframe.core.backends', 'reframe.core.exceptions',
                                'reframe.core.launchers')}
PURE = sorted(p for p in SRC.rglob('*.py') if 'rfm' not in p.parts and p not in LIGHT)
LAYER = sorted((SRC / 'rfm').glob('*.py'))
CHECKS = sorted((REPO / 'reframe' / 'checks').rglob('*.py'))

REVIEW = REPO / 'src' / 'omb_review'
#: The packages of src/omb_review and the packages each may import (besides itself, the pure
#: packages of omb_suite and data files). docs/maintaining.md, "Trend review", draws it; the
#: command line (:data:`REVIEW_TOP`) sits above them all.
REVIEW_ARROWS: dict[str, set[str]] = {
    'read': set(),
    'judge': {'read'},
    'references': {'read', 'judge'},
    'tuning': {'read', 'judge'},
    'report': {'read', 'judge', 'tuning'},
}
REVIEW_TOP = {'__init__', 'cli', 'arguments'}
#: The review's one ReFrame import: a site's configuration read by ReFrame's own loader.
REVIEW_READS_REFRAME = {REVIEW / 'read' / 'siteconfig.py': ('reframe.core.config',)}
REVIEW_FILES = sorted(REVIEW.rglob('*.py'))


def imports(path: Path) -> list[tuple[str, list[str]]]:
    """(module, names) of every import statement of a file."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            found.append((node.module or '', [alias.name for alias in node.names]))
    return found


@pytest.mark.parametrize('path', PURE, ids=lambda p: str(p.relative_to(SRC)))
def test_pure_modules_import_neither_reframe_nor_the_layers_above(path):
    for module, _ in imports(path):
        assert not module.startswith(('reframe', 'omb_suite.rfm', 'omb_review')), module


@pytest.mark.parametrize(('path', 'allowed'), LIGHT.items(), ids=lambda p: getattr(p, 'name', ''))
def test_the_launcher_registration_imports_reframes_registry_and_pure_modules_only(path, allowed):
    for module, _ in imports(path):
        if module.startswith('reframe'):
            assert module in allowed, module
        assert not module.startswith(('omb_suite.rfm', 'omb_review')), module


@pytest.mark.parametrize('path', [*PURE, *LIGHT, *LAYER, *CHECKS, *REVIEW_FILES],
                         ids=lambda p: p.name)
def test_no_private_name_is_imported_across_modules(path):
    for module, names in imports(path):
        private = [n for n in names if n.startswith('_') and n != '__future__']
        assert not private, f'{path.name} imports {private} from {module}'


def test_the_reframe_layer_does_not_import_checks_or_the_review_tool():
    for path in LAYER:
        for module, _ in imports(path):
            assert not module.startswith(('omb_review', 'osu_')), (path.name, module)


def _unit(path: Path, root: Path = SRC) -> str:
    """The package (or top module) of ``root`` (src/omb_suite, src/omb_review) a file
    belongs to."""
    parts = path.relative_to(root).parts
    return parts[0] if len(parts) > 1 else path.stem


def _targets(path: Path, top: str = 'omb_suite') -> set[str]:
    """The packages and top modules of ``top`` a file imports."""
    found = set()
    for module, names in imports(path):
        parts = module.split('.')
        if parts[0] != top:
            continue
        found |= set(names) if len(parts) == 1 else {parts[1]}
    return found


def _drawn(after: str) -> dict[str, set[str]]:
    """The arrows of the first ``text`` picture after ``after`` in docs/maintaining.md."""
    text = (REPO / 'docs' / 'maintaining.md').read_text()
    block = text.split(after, 1)[1].split('```text\n', 1)[1].split('```', 1)[0]
    drawn = {}
    for line in block.splitlines():
        name, _, targets = line.partition('->')
        drawn[name.strip()] = set(re.findall(r'\w+', targets))
    return drawn


def _shim(path: Path) -> bool:
    return 'is deprecated: import omb_suite.' in path.read_text()


def test_the_picture_names_every_package_and_no_module_is_loose():
    packages = {p.parent.name for p in SRC.glob('*/__init__.py')}
    assert packages == set(ARROWS) - {'build_cache'}, 'add the package to ARROWS and the picture'
    loose = [p.name for p in SRC.glob('*.py')
             if p.stem not in {'__init__', 'build_cache', *BASE} and not _shim(p)]
    assert not loose, f'{loose}: move each into the package of its concern'


@pytest.mark.parametrize('path', sorted(SRC.rglob('*.py')), ids=lambda p: str(p.relative_to(SRC)))
def test_imports_between_packages_follow_the_arrows(path):
    unit = _unit(path)
    if _shim(path) or unit == '__init__':
        return
    allowed = {unit, *BASE} | ARROWS.get(unit, set())
    stray = _targets(path) - allowed
    assert not stray, f'{path.relative_to(SRC)} imports {sorted(stray)}: not an arrow of {unit}'


def test_the_arrows_have_no_cycle():
    try:
        tuple(TopologicalSorter(ARROWS).static_order())
    except CycleError as err:
        pytest.fail(f'a cycle between packages: {err.args[1]}')


def test_the_picture_in_maintaining_md_is_the_arrows():
    assert _drawn('## Packages and their arrows') == ARROWS


def _declarations_only(cls: ast.ClassDef) -> list[str]:
    """What a check class does besides its docstring and attribute declarations."""
    extra = []
    for stmt in cls.body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue                                         # docstring
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            continue                                         # parameter(...), tags = {...}
        extra.append(type(stmt).__name__)
    return extra


@pytest.mark.parametrize('path', CHECKS, ids=lambda p: str(p.relative_to(REPO)))
def test_check_files_hold_parameters_and_nothing_else(path):
    tree = ast.parse(path.read_text())
    for node in tree.body:
        assert isinstance(node, (ast.Import, ast.ImportFrom, ast.ClassDef, ast.Expr)), (
            f'{path.name}: {type(node).__name__} at line {node.lineno}: move it to omb_suite.rfm')
        if isinstance(node, ast.ClassDef):
            assert not _declarations_only(node), f'{path.name}.{node.name}: move it to the layer'


@pytest.mark.parametrize('path', [*PURE, *LIGHT, *LAYER, *REVIEW_FILES], ids=lambda p: p.name)
def test_library_files_stay_short(path):
    assert len(path.read_text().splitlines()) <= 350, f'{path.name}: split it by concept'


@pytest.mark.parametrize('path', REVIEW_FILES, ids=lambda p: str(p.relative_to(REVIEW)))
def test_the_review_imports_no_reframe_and_no_layer_of_the_suite(path):
    allowed = REVIEW_READS_REFRAME.get(path, ())
    for module, _ in imports(path):
        if module.startswith('reframe'):
            assert module in allowed, f'{path.name} imports {module}: the review reads perflogs'
        assert not module.startswith(('omb_suite.rfm', 'omb_suite.setup')), module


@pytest.mark.parametrize('path', REVIEW_FILES, ids=lambda p: str(p.relative_to(REVIEW)))
def test_the_review_packages_follow_their_arrows(path):
    unit = _unit(path, REVIEW)
    if unit in REVIEW_TOP:
        return
    stray = _targets(path, 'omb_review') - {unit} - REVIEW_ARROWS[unit]
    assert not stray, f'{path.relative_to(REVIEW)} imports {sorted(stray)}: not an arrow of {unit}'



def test_the_review_has_its_packages_and_no_loose_module():
    packages = {p.parent.name for p in REVIEW.glob('*/__init__.py')}
    assert packages == set(REVIEW_ARROWS), 'add the package to REVIEW_ARROWS and the picture'
    loose = [p.name for p in REVIEW.glob('*.py') if p.stem not in REVIEW_TOP]
    assert not loose, f'{loose}: move each into the package of what it does'
    tuple(TopologicalSorter(REVIEW_ARROWS).static_order())


def test_the_review_picture_in_maintaining_md_is_its_arrows():
    assert _drawn('**Trend review**') == REVIEW_ARROWS


def test_layer_modules_are_named_for_what_the_reframe_side_does():
    """A module of rfm/ does not repeat a pure package's or module's name (``rfm/cost.py``
    beside ``cost/``): the pure one computes, the layer's applies it to a test."""
    pure = {p.stem for p in PURE} | {p.parent.name for p in PURE} | {p.stem for p in LIGHT}
    repeated = sorted(p.name for p in LAYER if p.stem in pure - {'__init__'})
    assert not repeated, f'{repeated}: name each for what the ReFrame side does'
