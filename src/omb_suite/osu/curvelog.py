"""Whole OSU curves kept beside the perflog: one JSON line per run, every size OSU measured.

The perflog holds the sizes a check reports as performance variables (six by default); the
curve log holds the whole table, so curves and Hockney fits can use every size.  After each
run that produced a table, the check appends one line to
``<perflog dir>/<system>/<partition>/<TestClass>.curves.jsonl``::

    {"format": 1, "system": "local", "partition": "default", "environ": "spack-openmpi",
     "name": "OsuPt2Pt %benchmark=osu_latency ...", "jobid": "4242",
     "job_completion_time_unix": 1764000000.5, "benchmark": "osu_latency",
     "osu_version": "7.3", "kind": "latency", "columns": ["size", "latency"],
     "units": {"latency": "us"}, "rows": [[1, 1.62], [2, 1.6], ...]}

``system``, ``partition``, ``environ``, ``name`` and ``jobid`` are the perflog's columns of the
same name and ``job_completion_time_unix`` the time the perflog prints (to the second), so
``omb_review.read.curves`` joins each curve to its perflog records.  Rows hold the table's columns
in order (numbers, or text for OSU's ``Pass``/``Fail`` validation column).
"""

from __future__ import annotations

import json
from pathlib import Path

from omb_suite.osu.parsing import OsuTable

FORMAT = 1
SUFFIX = ".curves.jsonl"
#: Fields every line has, besides ``columns``, ``units`` and ``rows``.
RUN_FIELDS = ("system", "partition", "environ", "name", "jobid", "job_completion_time_unix",
              "benchmark", "osu_version", "kind")


def record(table: OsuTable, **run: object) -> dict:
    """The line of one run: ``run`` gives the perflog's identity fields (see module doc)."""
    missing = [f for f in RUN_FIELDS if f not in run and f not in ("osu_version", "kind")]
    if missing:
        raise ValueError(f"curve record without {', '.join(missing)}")
    return {
        "format": FORMAT, **run, "osu_version": run.get("osu_version") or table.version,
        "kind": table.kind, "title": table.title, "columns": list(table.columns),
        "units": dict(table.units), "meta": dict(table.meta),
        "rows": [[row.get(c) for c in table.columns] for row in table.rows],
    }


def path_for(directory: Path, test_class: str) -> Path:
    """``<directory>/<TestClass>.curves.jsonl`` (directory: the perflog's, per partition)."""
    return directory / f"{test_class}{SUFFIX}"


def append(path: Path, line: dict) -> None:
    """Append one run (one ``write`` of one line: runs of one session never interleave)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as fp:
        fp.write(json.dumps(line, separators=(",", ":")) + "\n")
