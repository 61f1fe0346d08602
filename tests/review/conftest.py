"""Shared fixtures: the committed sample of real ReFrame output (see data/README.md)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"


@pytest.fixture
def multiline(tmp_path: Path) -> Path:
    """A writable copy of the real multiline perflog tree (rotated file, report, results DB)."""
    return Path(shutil.copytree(DATA / "rfm_multiline", tmp_path / "perflogs"))


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"
