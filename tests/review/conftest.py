"""Shared fixtures: the committed sample of real ReFrame output (see data/README.md)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

DATA = Path(__file__).parent / "data"
REPO = DATA.parents[2]


def worsen(log: Path, factor: Callable[[dict[str, str]], float]) -> None:
    """Multiply each record's ``perf_value`` by ``factor(record)`` in a perflog, in place
    (records as ``{column: text}``; failed runs, with no value, stay as they are)."""
    header, *rows = log.read_text().splitlines()
    cols = header.split("|")
    out = []
    for row in rows:
        record = dict(zip(cols, row.split("|"), strict=True))
        if record["perf_value"] != "null":
            record["perf_value"] = repr(float(record["perf_value"]) * factor(record))
        out.append("|".join(record.values()))
    log.write_text("\n".join([header, *out]) + "\n")


@pytest.fixture
def multiline(tmp_path: Path) -> Path:
    """A writable copy of the real multiline perflog tree (rotated file, report, results DB)."""
    return Path(shutil.copytree(DATA / "rfm_multiline", tmp_path / "perflogs"))


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    return tmp_path / "cache"
