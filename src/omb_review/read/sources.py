"""Read ReFrame JSON run reports and the ReFrame results database (SQLite) into raw rows.

Both hold whole run reports (the database keeps each session's report as one JSON blob), so one
function turns a report into rows with the same column names as a multiline perflog.  Test cases
without performance values (sanity failures) become one failure row without a variable.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl

from omb_suite import perflog_schema
from omb_suite.perflogs.reader import Problem

#: Test-case attributes copied from reports; the rest of a report entry is not needed.
ATTRS = tuple(c for c in perflog_schema.columns()
              if c not in perflog_schema.runtime_columns() and c != "job_completion_time"
              and not c.startswith("perf_"))


def _text(value: Any) -> str | None:
    """Report values as the perflog writes them: strings, lists as Python reprs."""
    if value is None:
        return None
    return str(value)


def _case_rows(case: dict[str, Any], session_end: float | None) -> Iterator[dict[str, Any]]:
    when = case.get("job_completion_time_unix") or session_end
    base = {a: _text(case.get(a)) for a in ATTRS}
    base["job_completion_time_unix"] = None if when is None else int(when)
    perfvalues = case.get("perfvalues") or {}
    if not perfvalues:
        yield {**base, "perf_var": None}
    for key, entry in perfvalues.items():
        value, ref, lower, upper, unit, result = (list(entry) + [None] * 6)[:6]
        yield {
            **base,
            "perf_var": key.split(":")[-1],
            "perf_value": _text(value),
            "perf_unit": _text(unit),
            "perf_ref": _text(ref),
            "perf_lower_thres": _text(lower),
            "perf_upper_thres": _text(upper),
            "perf_result": _text(result),
        }


def report_rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """All rows of one ReFrame run report (``data_version`` 4.x)."""
    session_end = report.get("session_info", {}).get("time_end_unix")
    return [
        row
        for run in report.get("runs", [])
        for case in run.get("testcases", [])
        for row in _case_rows(case, session_end)
    ]


def _frame(rows: list[dict[str, Any]], label: str) -> pl.DataFrame:
    if not rows:
        return pl.DataFrame()
    frame = pl.DataFrame(rows, infer_schema_length=None)
    strings = [c for c in frame.columns if c != "job_completion_time_unix"]
    return frame.with_columns(
        pl.col(strings).cast(pl.String), source=pl.lit(label), line=pl.lit(None, pl.Int32)
    )


def read_report(path: Path, label: str) -> tuple[pl.DataFrame, list[Problem]]:
    """Rows of one JSON run report; an unreadable report is one problem."""
    try:
        report = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as err:
        return pl.DataFrame(), [Problem(label, 0, f"not a ReFrame JSON report ({err})", "")]
    if not isinstance(report, dict) or "runs" not in report:
        return pl.DataFrame(), [Problem(label, 0, "JSON without 'runs': not a run report", "")]
    return _frame(report_rows(report), label), []


def read_results_db(path: Path, label: str) -> tuple[pl.DataFrame, list[Problem]]:
    """Rows of every session stored in a ReFrame results database (opened read-only)."""
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            blobs = conn.execute("SELECT uuid, json_blob FROM sessions").fetchall()
    except sqlite3.DatabaseError as err:
        return pl.DataFrame(), [Problem(label, 0, f"not a ReFrame results database ({err})", "")]
    rows: list[dict[str, Any]] = []
    problems = []
    for uuid, blob in blobs:
        try:
            rows.extend(report_rows(json.loads(blob)))
        except (json.JSONDecodeError, TypeError, AttributeError) as err:
            problems.append(Problem(label, 0, f"session {uuid}: unreadable report ({err})", ""))
    return _frame(rows, label), problems
