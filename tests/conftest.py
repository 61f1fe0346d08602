"""Shared fixtures: paths to test data and the repository."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DATA = Path(__file__).resolve().parent / 'data'


def real_output(path: Path) -> str:
    """A captured output without its first `$ command` line."""
    lines = path.read_text().splitlines(keepends=True)
    return ''.join(lines[1:]) if lines and lines[0].startswith('$ ') else ''.join(lines)


@pytest.fixture
def repo() -> Path:
    return REPO


def have(program: str) -> bool:
    return shutil.which(program) is not None
