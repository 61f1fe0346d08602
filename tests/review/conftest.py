"""Shared fixtures: the committed sample of real ReFrame output (see data/README.md)."""

from __future__ import annotations

import importlib.util
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


@pytest.fixture(scope="session")
def bench_page(tmp_path_factory) -> Path:
    """The report of a synthetic tree from ``benchmarks/review_bench.py``: 12 nights, 3 systems,
    with its injected osu_latency step (an Open MPI rebuild on other nodes) on alpha:cpu."""
    from omb_review.cli import main

    bench = REPO / "benchmarks" / "review_bench.py"
    spec = importlib.util.spec_from_file_location("review_bench", bench)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    tmp = tmp_path_factory.mktemp("bench")
    module.generate(tmp / "perflogs", 12)
    assert main(["report", str(tmp / "perflogs"), "-o", str(tmp / "out"), "--no-cache"]) == 0
    return tmp / "out" / "report.html"
