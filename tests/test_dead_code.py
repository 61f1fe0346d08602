"""No dead code: every module-level function of the library, the checks and the benchmark
scripts is referenced somewhere (a call, an attribute, an import, a string such as an entry
point or a hook name) in src/, reframe/, tests/, benchmarks/, scripts/ or spack/, other than
by its own definition."""

from __future__ import annotations

import ast
import re
import subprocess

from testdata import REPO

DEFINED_IN = ('src', 'reframe', 'benchmarks')
USED_IN = ('src', 'reframe', 'tests', 'benchmarks', 'scripts', 'spack')
#: Where a name is used outside Python: entry points, CI and the shell scripts.
OTHER_TEXT = ('pyproject.toml', '.ci/run', 'scripts/*.sh', 'tests/*.sh')


def _tracked(top: str) -> list:
    """The Python files under ``top`` that git tracks or would track. Build outputs in the
    checkout (Spack's environment views) are not the project's users of a name: with them, a
    function no file of ours calls passed because a Spack package mentions its name."""
    listed = subprocess.run(['git', 'ls-files', '--cached', '--others', '--exclude-standard',
                             '--', f'{top}/*.py'], cwd=REPO, check=True,
                            capture_output=True, text=True).stdout.split()
    return sorted(REPO / name for name in listed if (REPO / name).exists())


def _functions() -> list[tuple[str, str]]:
    """(file:line, name) of every module-level function."""
    found = []
    for top in DEFINED_IN:
        for path in _tracked(top):
            for node in ast.parse(path.read_text()).body:
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    found.append((f'{path.relative_to(REPO)}:{node.lineno}', node.name))
    return found


def _names(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.ImportFrom):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return re.findall(r'\w+', node.value)
    return []


def _used() -> set[str]:
    used: set[str] = set()
    for top in USED_IN:
        for path in _tracked(top):
            for node in ast.walk(ast.parse(path.read_text())):
                used.update(_names(node))
    for pattern in OTHER_TEXT:
        for path in REPO.glob(pattern):
            used.update(re.findall(r'\w+', path.read_text(errors='replace')))
    return used


def test_every_module_level_function_has_a_user():
    used = _used()
    dead = [f'{where} {name}' for where, name in _functions() if name not in used]
    assert not dead, f'functions nothing uses (remove them, or use them): {dead}'
