"""ReFrame 3 perflog lines: no header, one record per line, fields found by their shape.

ReFrame 3's default format is
``TIME|reframe VERSION|INFO|jobid=ID|VAR=VALUE|ref=REF (l=LOWER, u=UPPER)|UNIT``; sites
added fields (``num_tasks=N``, tags) and moved the unit before ``ref=`` (as StackHPC's
hpc-tests did). So fields are recognised by what they look like, not by position:

- INFO is ``<test> on <system>:<partition> using <environ>`` (ReFrame 3.0-3.x) or
  ``<test> [/hash] @<system>:<partition>+<environ>`` (ReFrame 3.9+ and 4.x);
- ``key=value`` fields with known keys (jobid, num_tasks, ...) are run metadata; the one
  just before ``ref=`` (or before the unit) is the performance variable;
- the unit is the plain field next to the variable or to ``ref=``;
- ``reframe VERSION`` (ReFrame's own version, ReFrame 3's default second field) is kept.

ReFrame 4.0-4.2 with a ReFrame 3 format writes such lines with empty performance fields
(``null=null|ref=null (l=null, u=null)|null``, under a header line of the same shape): the
values are not in the perflog; each such line is reported, with where to find them.
"""

from __future__ import annotations

import re

from omb_suite.perflogs.problem import Problem

TIME_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?$")
INFO_RES = (
    re.compile(r"^(?P<name>.+?) on (?P<system>[^:\s]+):(?P<partition>\S+) using (?P<environ>\S+)$"),
    re.compile(r"^(?P<name>.+?)(?: /[0-9a-f]{8})? @(?P<system>[^:\s]+):(?P<partition>[^+\s]+)"
               r"\+(?P<environ>\S+)$"),
)
REF_RE = re.compile(r"^ref=(?P<ref>\S*) \(l=(?P<lower>[^,]*), u=(?P<upper>[^)]*)\)$")
KEY_VALUE_RE = re.compile(r"^(?P<key>[A-Za-z_][\w.:-]*)=(?P<value>\S*)$")
VERSION_RE = re.compile(r"^reframe (?P<version>\S+)")
#: ``key=value`` fields that describe the run, as the perflog columns they become.
META_KEYS = {
    "jobid": "jobid", "num_tasks": "num_tasks", "num_nodes": "num_nodes",
    "num_tasks_per_node": "num_tasks_per_node", "nodelist": "job_nodelist",
    "job_nodelist": "job_nodelist", "result": "result",
}
EMPTY = ("None", "null", "")
NO_VALUES = (
    "performance fields are empty (ReFrame 4 wrote this record with a ReFrame 3 log format, "
    "which has no place for the values: they are in the run report or results database)"
)


def is_record(line: str) -> bool:
    """A header-less ReFrame 3 style line (first field a completion time)?"""
    return bool(TIME_RE.match(line.split("|", 1)[0].strip()))


def is_header(line: str) -> bool:
    """The header ReFrame 4 writes for a ReFrame 3 style format (``perf_var=perf_value``)."""
    return "perf_var=perf_value" in line


def parse(line: str, label: str, number: int) -> tuple[list[dict[str, str]], list[Problem]]:
    """The record of one line (a list of one), or the problem that stops it."""
    fields = [f.strip() for f in line.split("|")]
    record: dict[str, str] = {"job_completion_time": fields[0], "line": str(number)}
    info = next((m for f in fields for r in INFO_RES if (m := r.match(f))), None)
    ref_at = next((i for i, f in enumerate(fields) if REF_RE.match(f)), None)
    if not TIME_RE.match(fields[0]) or info is None or ref_at is None:
        why = "not a ReFrame 3 perflog line (time|reframe X|<test> on <sys>:<part>|...|ref=...)"
        return [], [Problem(label, number, why, line)]
    record.update(info.groupdict())
    version = next((m for f in fields[1:] if (m := VERSION_RE.match(f))), None)
    if version:
        record["reframe_version"] = version["version"]
    ref = REF_RE.match(fields[ref_at])
    record.update(perf_ref=ref["ref"], perf_lower_thres=ref["lower"], perf_upper_thres=ref["upper"])
    perf_at = _read_key_values(fields, ref_at, record)
    if perf_at is None or record["perf_var"] in EMPTY:
        return [], [Problem(label, number, NO_VALUES, line)]
    record["perf_unit"] = _unit(fields, perf_at, ref_at)
    return [record], []


def _read_key_values(fields: list[str], ref_at: int, record: dict[str, str]) -> int | None:
    """Metadata into ``record``; the variable is the last other ``key=value`` before ref=
    (or before the unit just before ref=). Returns its field index."""
    perf_at = None
    for i, field in enumerate(fields):
        match = KEY_VALUE_RE.match(field)
        if not match:
            continue
        if match["key"] in META_KEYS:
            record[META_KEYS[match["key"]]] = match["value"]
        elif i < ref_at:
            perf_at = i
            record["perf_var"], record["perf_value"] = match["key"], match["value"]
    return perf_at


def _unit(fields: list[str], perf_at: int, ref_at: int) -> str:
    if perf_at + 1 < ref_at:  # VAR=VALUE|UNIT|ref=...
        return fields[perf_at + 1]
    after = fields[ref_at + 1] if ref_at + 1 < len(fields) else ""
    return "" if KEY_VALUE_RE.match(after) else after
