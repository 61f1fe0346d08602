"""The import graph reads checks -> omb_suite.rfm -> pure modules -> data, with no arrow back,
and check files declare parameters and nothing else (read from the sources' syntax trees)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from testdata import REPO

SRC = REPO / 'src' / 'omb_suite'
#: The one module outside the layer that imports ReFrame: its launcher registry, no more
#: (settings.py imports it, and so does every reader of the site configuration).
LIGHT = {SRC / 'launch/launchers.py': ('reframe.core.backends', 'reframe.core.exceptions',
                                'reframe.core.launchers')}
PURE = sorted(p for p in SRC.rglob('*.py') if 'rfm' not in p.parts and p not in LIGHT)
LAYER = sorted((SRC / 'rfm').glob('*.py'))
CHECKS = sorted((REPO / 'reframe' / 'checks').rglob('*.py'))


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


@pytest.mark.parametrize('path', [*PURE, *LIGHT, *LAYER, *CHECKS], ids=lambda p: p.name)
def test_no_private_name_is_imported_across_modules(path):
    for module, names in imports(path):
        private = [n for n in names if n.startswith('_') and n != '__future__']
        assert not private, f'{path.name} imports {private} from {module}'


def test_the_reframe_layer_does_not_import_checks_or_the_review_tool():
    for path in LAYER:
        for module, _ in imports(path):
            assert not module.startswith(('omb_review', 'osu_')), (path.name, module)


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


@pytest.mark.parametrize('path', [*PURE, *LIGHT, *LAYER], ids=lambda p: p.name)
def test_library_files_stay_short(path):
    assert len(path.read_text().splitlines()) <= 350, f'{path.name}: split it by concept'
