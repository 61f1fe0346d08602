"""Paths to test data and the repository, shared by the test modules.

(A module, not ``conftest.py``: tests/review has its own conftest, and two ``conftest``
modules would shadow each other under pytest's default import mode.)
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / 'data'


def real_output(path: Path) -> str:
    """A captured output without its first `$ command` line."""
    lines = path.read_text().splitlines(keepends=True)
    return ''.join(lines[1:]) if lines and lines[0].startswith('$ ') else ''.join(lines)
