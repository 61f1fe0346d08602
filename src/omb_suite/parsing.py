"""Parse the text output of one OSU Micro-Benchmarks (OMB 5.8 to 7.4) run into one table.

Every ReFrame check and tool reads OSU output through `parse_osu_output`, so that a truncated,
garbled or failed run is caught in one place with one clear message. The formats follow OMB's
own printf calls (`c/util/osu_util_mpi.c`, `osu_util.c` and the benchmark sources of 7.4) and
real outputs of 5.8, 7.3 and 7.4 (see `tests/data/osu/README.md`).

Table kinds (`OsuTable.kind`), told apart by the `# OSU MPI... Test` title line:

==============  ============================================================================
kind            benchmarks
==============  ============================================================================
latency         osu_latency, osu_latency_persistent
bandwidth       osu_bw, osu_bw_persistent, osu_bw_fan_in/_fan_out (their output is osu_bw's)
bibw            osu_bibw, osu_bibw_persistent
mbw_mr          osu_mbw_mr (bandwidth and message rate of all pairs)
multi_lat       osu_multi_lat
latency_mt      osu_latency_mt (threads: meta sender_threads, receiver_threads)
latency_mp      osu_latency_mp (forked processes: meta sender_processes, receiver_processes)
one_sided       osu_put_*, osu_get_*, osu_acc_latency, osu_get_acc_latency, osu_fop/cas_latency
collective      blocking, persistent and neighborhood collectives (osu_bcast, osu_barrier, ...)
nonblocking     osu_i* collectives (overall/compute/pure communication/overlap)
init            osu_init (columns nprocs, init_min, init_max, init_avg in ms)
hello           osu_hello (column nprocs)
==============  ============================================================================

Column names (`OsuTable.columns`) and units: size (bytes), latency, avg_latency, min_latency,
max_latency (us), iterations, bandwidth (MB/s), msg_rate (messages/s), overall, compute,
coll_init, mpi_test, mpi_wait, pure_comm, min_comm, max_comm (us), overlap (%), validation
('Pass'/'Fail'), p<N> tail percentiles from `-z` (us, or MB/s in bandwidth tables),
transmit_size (bytes, `-D`). OSU 7 prints "Avg Latency(us)" for point-to-point latency too:
it is `latency` in point-to-point and one-sided tables, `avg_latency` in collective ones.
Tables without a Size column (osu_barrier, osu_ibarrier, osu_init, osu_hello) hold one row,
found under size key 0 by `OsuTable.column` and by `OsuTable.value` with no size.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field

Value = float | int | str


class OsuParseError(ValueError):
    """The text is not a complete, well-formed OSU output; the message says what and where."""


@dataclass(frozen=True)
class OsuTable:
    """One OSU result table; see the module docstring for kinds, columns and units."""

    title: str
    version: str | None
    kind: str
    columns: tuple[str, ...]
    units: dict[str, str]
    rows: tuple[dict[str, Value], ...]
    meta: dict[str, str] = field(default_factory=dict)

    def sizes(self) -> list[int]:
        """Message sizes in output order; empty for tables without a Size column."""
        if "size" not in self.columns:
            return []
        return [int(row["size"]) for row in self.rows]

    def column(self, name: str) -> dict[int, float]:
        """Numeric column `name` as {size: value}; size-less tables use key 0."""
        if name not in self.columns:
            raise OsuParseError(
                f"{self.title}: no column {name!r} (columns: {', '.join(self.columns)})"
            )
        if name == "validation":
            raise OsuParseError(f"{self.title}: column 'validation' holds Pass/Fail, not numbers")
        return {int(row.get("size", 0)): float(row[name]) for row in self.rows}

    def value(self, column: str, size: int | None = None) -> float:
        """One number: `column` at message `size` (no size for size-less tables)."""
        values = self.column(column)
        has_size = "size" in self.columns
        if size is None and has_size:
            raise OsuParseError(f"{self.title}: give a message size for {column!r}")
        if size is not None and not has_size:
            raise OsuParseError(f"{self.title}: table has no Size column; ask without a size")
        key = 0 if size is None else size
        if key not in values:
            raise OsuParseError(f"{self.title}: no row for size {size} (sizes: {self.sizes()})")
        return values[key]


def parse_size_arg(arg: str) -> tuple[int | None, int | None]:
    """Read OSU's `-m [MIN:]MAX` argument: '8' -> (None, 8), '2:128', '2:' -> (2, None).

    None means "OSU's default". As in OSU, a single number is the maximum.
    """
    match = re.fullmatch(r"\s*(\d*)\s*(:?)\s*(\d*)\s*", arg)
    if not match or not (match[1] or match[3]) or (match[3] and not match[2] and match[1]):
        raise ValueError(f"bad OSU message size argument {arg!r}: expected MAX, MIN:MAX or MIN:")
    low, colon, high = match[1], match[2], match[3]
    if not colon:
        return None, int(low)
    return (int(low) if low else None), (int(high) if high else None)


def expected_sizes(
    min_size: int, max_size: int, *, zero_row: bool = False, datatype_size: int = 1
) -> list[int]:
    """Sizes OSU prints for `-m min_size:max_size`: min, 2*min, 4*min, ... up to max.

    Size 0: OSU 7.4 never prints it (a 0-byte message has 0 elements and is skipped, so
    `osu_latency -m 0:8` starts at 1; OSU also ignores a minimum of 0 and keeps its default,
    0 for point-to-point, 1 for collectives); point-to-point benchmarks of OSU 5.x/6.x print
    a 0-byte row when the minimum is 0: pass `zero_row=True` for those. Sizes smaller than
    the datatype (`-T mpi_int`: `datatype_size=4`) are skipped as well.
    """
    if min_size < 0 or max_size < 0 or datatype_size < 1:
        raise ValueError(f"bad size range {min_size}:{max_size} (datatype {datatype_size} B)")
    sizes = [0] if (min_size == 0 and zero_row) else []
    size = max(min_size, 1)
    while size <= max_size:
        if size >= datatype_size:
            sizes.append(size)
        size *= 2
    return sizes


# --- what the lines of an OSU output look like ------------------------------------------

_TITLE_RE = re.compile(r"^#\s*(?P<title>OSU MPI\S*.*?\bTest)(?:\s+v(?P<version>\S+))?\s*$")
_ACCEL_RE = re.compile(r"-(CUDA MANAGED|CUDA|OPENACC|ROCM|MANAGED)\b")

# Ordered: the first pattern matching the lower-case title (accelerator removed) wins.
_KINDS = (
    (r"^osu mpi_", "one_sided"),
    (r"\binit test$", "init"),
    (r"\bhello world test$", "hello"),
    (r"multiple bandwidth / message rate", "mbw_mr"),
    (r"\bmulti latency", "multi_lat"),
    (r"multi-threaded latency", "latency_mt"),
    (r"multi-process latency", "latency_mp"),
    (r"non-blocking", "nonblocking"),
    (r"bi-directional bandwidth", "bibw"),
    (r"\bbandwidth\b", "bandwidth"),
    (r"^osu mpi latency (persistent )?test$", "latency"),
    (r"latency test$", "collective"),
)
# Kinds where OSU 7's "Avg Latency(us)" is the plain point-to-point latency.
_P2P_LATENCY_KINDS = {"latency", "multi_lat", "latency_mt", "latency_mp", "one_sided"}

_LABELS = tuple(
    (re.compile(pattern), name, unit)
    for pattern, name, unit in (
        (r"Size", "size", "bytes"),
        (r"Avg Latency\(us\)", "avg_latency", "us"),
        (r"Min Latency\(us\)", "min_latency", "us"),
        (r"Max Latency\(us\)", "max_latency", "us"),
        (r"Latency \(us\)", "latency", "us"),
        (r"Iterations", "iterations", ""),
        (r"Bandwidth \(MB/s\)", "bandwidth", "MB/s"),
        (r"MB/s", "bandwidth", "MB/s"),
        (r"Messages/s", "msg_rate", "messages/s"),
        (r"Overall\(us\)", "overall", "us"),
        (r"Compute\(us\)", "compute", "us"),
        (r"Coll\. Init\(us\)", "coll_init", "us"),
        (r"MPI_Test\(us\)", "mpi_test", "us"),
        (r"MPI_Wait\(us\)", "mpi_wait", "us"),
        (r"Pure Comm\.\(us\)", "pure_comm", "us"),
        (r"Min Comm\.\(us\)", "min_comm", "us"),
        (r"Max Comm\.\(us\)", "max_comm", "us"),
        (r"Overlap\(%\)", "overlap", "%"),
        (r"Validation", "validation", ""),
        (r"P(\d+) Tail Lat\(us\)", "p{}", "us"),
        (r"P(\d+) Tail BW\(MB/s\)", "p{}", "MB/s"),
        (r"Transmit Size", "transmit_size", "bytes"),
    )
)
_INT_COLUMNS = {"size", "iterations", "transmit_size"}
_NUMBER_RE = re.compile(r"[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?")
# A data row starts with the size (%d) or, in size-less tables, a time (%.2f); other lines,
# such as Open MPI's "1. this process did not call init", are launcher messages.
_ROW_START_RE = {True: re.compile(r"\d+"), False: re.compile(r"\d+\.\d+")}

_KEY_VALUE_RE = re.compile(r"^#\s*([A-Za-z][\w .]*?)\s*:\s*(.*?)\s*$")
_BRACKETS_RE = re.compile(r"\[\s*([^:\]]+?)\s*:\s*([^\]]*?)\s*\]")
_BUFFERS_RE = re.compile(
    r"^#\s*(?:Send Buffer|Rank 0 Memory) on (.+?) and (?:Receive Buffer|Rank 1 Memory) on (.+?)\s*$"
)
_NBC_FORMULA = "# Overall = Coll. Init + Compute + MPI_Test + MPI_Wait"
_META_RENAMES = {
    "number_of_sender_threads": "sender_threads",
    "number_of_receiver_threads": "receiver_threads",
    "number_of_forked_processes_in_sender": "sender_processes",
    "number_of_forked_processes_in_receiver": "receiver_processes",
}
_INIT_RE = re.compile(
    r"^nprocs:\s*(\d+),\s*min:\s*(\S+)\s*ms,\s*max:\s*(\S+)\s*ms,\s*avg:\s*(\S+)\s*ms\s*$"
)
_HELLO_RE = re.compile(r"^This is a test with (\d+) processes\s*$")

# Lines that say why a run failed. Fatal ones fail the parse even after a complete table
# (the job was killed or aborted); hints are only quoted when something else is wrong.
_FATAL_RE = re.compile(
    r"This test requires|Abort\(\d+\)|Fatal error in|unexpectedly disconnected|CANCELLED"
    r"|^srun: error:|\bKilled\b|Segmentation fault|BAD TERMINATION|MPI_ABORT was invoked"
    r"|\] Error: '|\] (?:MPI |function |CUDA |ROCM )?call .*failed with|\] Failed with message"
    r"|^Invalid option|not enough slots|was unable to (?:find|launch)"
    r"|error while loading shared libraries|command not found"
)
_HINT_RE = re.compile(r"DATA VALIDATION ERROR|Limiting max message size|exiting improperly")


@dataclass(frozen=True)
class _Cause:
    """A line of the output that says why the run failed (1-based line number)."""

    number: int
    text: str
    fatal: bool  # the job was killed or aborted: the parse fails even after a full table

    def __str__(self) -> str:
        return f"the output says: {self.text!r} (line {self.number})"


@dataclass
class _Body:
    """What the output holds, gathered line by line, with line numbers for messages."""

    title: str
    kind: str
    cause: _Cause | None
    meta: dict[str, str] = field(default_factory=dict)
    labels: list[tuple[str, str]] = field(default_factory=list)
    header_line: int = 0
    rows: list[tuple[int, dict[str, Value]]] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)

    def error(self, *problems: str) -> OsuParseError:
        return OsuParseError(_message(self.title, list(problems), self.cause))


def parse_osu_output(
    text: str, *, expect_sizes: Iterable[int] | None = None, require_validation: bool = False
) -> OsuTable:
    """Parse one OSU benchmark's output (launcher noise around it is allowed).

    expect_sizes: sizes the run must have printed (see `expected_sizes`); missing ones fail.
    require_validation: the table must have a Validation column (`-c`) with only 'Pass'.
    Raises OsuParseError naming what is missing or garbled, with line numbers, and quoting
    the first line of the output that says why the run failed, if there is one.
    """
    lines = text.splitlines()
    cause = _first_cause(lines)
    title_no, title, version = _find_title(lines, cause)
    body = _Body(title=title, kind=_kind(title), cause=cause)
    _read_body(body, lines, title_no)
    table = _build_table(body, version)
    problems = _problems(table, body, expect_sizes, require_validation)
    if not problems and cause is not None and cause.fatal:
        problems.append(f"the run failed{_last_row(body)}")
    if problems:
        raise body.error(*problems)
    return table


def _first_cause(lines: list[str]) -> _Cause | None:
    """The first fatal line, else the first hint (the command line `$ ...` is skipped)."""
    for pattern, fatal in ((_FATAL_RE, True), (_HINT_RE, False)):
        for number, line in enumerate(lines, 1):
            if not line.startswith("$ ") and pattern.search(line):
                return _Cause(number, line.strip(), fatal=fatal)
    return None


def _message(title: str, problems: list[str], cause: _Cause | None) -> str:
    return "; ".join([f"{title}: {problems[0]}", *problems[1:], *([str(cause)] if cause else [])])


def _find_title(lines: list[str], cause: _Cause | None) -> tuple[int, str, str | None]:
    found = [(n, m) for n, line in enumerate(lines, 1) if (m := _TITLE_RE.match(line.strip()))]
    if not found:
        problem = "no '# OSU MPI ... Test' header: not an OSU output or the benchmark did not start"
        raise OsuParseError(_message("OSU output", [problem], cause or _first_output_line(lines)))
    if len(found) > 1:
        numbers = ", ".join(str(n) for n, _ in found)
        raise OsuParseError(
            f"OSU output holds {len(found)} benchmark headers (lines {numbers}): "
            "parse each benchmark's output on its own"
        )
    number, match = found[0]
    return number, match["title"], match["version"]


def _first_output_line(lines: list[str]) -> _Cause | None:
    for number, line in enumerate(lines, 1):
        if line.strip() and not line.startswith("$ "):
            return _Cause(number, line.strip(), fatal=False)
    return None


def _kind(title: str) -> str:
    plain = _ACCEL_RE.sub("", title).lower()
    for pattern, kind in _KINDS:
        if re.search(pattern, plain):
            return kind
    raise OsuParseError(f"{title}: unknown OSU benchmark title; parsing.py knows no such table")


def _read_body(body: _Body, lines: list[str], title_no: int) -> None:
    if accel := _ACCEL_RE.search(body.title):
        body.meta["accel"] = accel[1]
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if number == title_no or not line or line.startswith("$ "):
            continue
        if line.startswith("#"):
            _read_comment(body, number, line, after_title=number > title_no)
        elif number > title_no:
            _read_line(body, number, line)
    if body.comments:
        body.meta["comments"] = "\n".join(body.comments)


def _read_comment(body: _Body, number: int, line: str, *, after_title: bool) -> None:
    """A '#' line: column header, '# Key: value' metadata, or a comment."""
    if body.labels:
        raise _after_table(body, number, line)
    labels = _read_labels(body, number, line)
    if labels:
        body.labels, body.header_line = labels, number
    else:
        _read_meta(body, line, after_title=after_title)


def _after_table(body: _Body, number: int, line: str) -> OsuParseError:
    """Only rows follow the column header: a '#' line there is another table or garbage."""
    if line.startswith(("# Datatype", "# Size")):
        return body.error(
            f"a second table starts at line {number} ({line!r}; the first, "
            f"{body.meta.get('datatype', '?')}, at line {body.header_line}): "
            "run one -T datatype per check"
        )
    return body.error(f"unexpected line {number} inside the table: {line!r}")


def _read_meta(body: _Body, line: str, *, after_title: bool) -> None:
    if (buffers := _BUFFERS_RE.match(line)) is not None:
        body.meta["send_buffer"], body.meta["recv_buffer"] = buffers[1], buffers[2]
    elif pairs := _BRACKETS_RE.findall(line):
        for key, value in pairs:
            body.meta[_snake(key)] = value
    elif (key_value := _KEY_VALUE_RE.match(line)) is not None:
        key, value = _snake(key_value[1]), key_value[2].rstrip(".").strip()
        body.meta[_META_RENAMES.get(key, key)] = value
    elif after_title and line != _NBC_FORMULA:
        body.comments.append(line)


def _snake(text: str) -> str:
    return re.sub(r"\W+", "_", text.strip().lower()).strip("_")


def _read_labels(body: _Body, number: int, line: str) -> list[tuple[str, str]]:
    """Column labels of a header line like '# Size   Avg Latency(us)'; [] if not one."""
    text, pos, labels = line.lstrip("#"), 0, []
    while text[pos:].strip():
        pos = len(text) - len(text[pos:].lstrip())
        label = _match_label(text, pos)
        if label is None:
            if not labels:
                return []
            raise body.error(f"unknown column label {text[pos:].strip()!r} at line {number}")
        name, unit, pos = label
        if name == "avg_latency" and body.kind in _P2P_LATENCY_KINDS:
            name = "latency"
        labels.append((name, unit))
    return labels


def _match_label(text: str, pos: int) -> tuple[str, str, int] | None:
    for pattern, name, unit in _LABELS:
        if match := pattern.match(text, pos):
            return name.format(*match.groups()), unit, match.end()
    return None


def _read_line(body: _Body, number: int, line: str) -> None:
    """A line that is not a comment: a data row, an init/hello result, or launcher noise."""
    if body.kind in ("init", "hello"):
        _read_startup(body, number, line)
        return
    fields = line.split()
    if not _is_row(body, fields):
        return  # launcher or MPI messages between rows; fatal ones were found by _first_cause
    names = [name for name, _ in body.labels]
    if len(fields) != len(names):
        raise body.error(
            f"garbled data row at line {number}: {len(fields)} fields for {len(names)} "
            f"columns ({', '.join(names)}): {line!r}"
        )
    row = {
        name: _value(body, number, name, token) for name, token in zip(names, fields, strict=True)
    }
    body.rows.append((number, row))


def _is_row(body: _Body, fields: list[str]) -> bool:
    if not body.labels:
        return False
    if _ROW_START_RE[body.labels[0][0] == "size"].fullmatch(fields[0]):
        return True
    # A row whose first value is garbled: as many fields as columns, the others all values.
    return len(fields) == len(body.labels) > 1 and all(
        _NUMBER_RE.fullmatch(field) or field in ("Pass", "Fail") for field in fields[1:]
    )


def _read_startup(body: _Body, number: int, line: str) -> None:
    if body.kind == "init" and (match := _INIT_RE.match(line)):
        names = ("nprocs", "init_min", "init_max", "init_avg")
        body.labels = [("nprocs", "")] + [(name, "ms") for name in names[1:]]
        times = [
            _value(body, number, n, t) for n, t in zip(names[1:], match.groups()[1:], strict=True)
        ]
        body.rows.append((number, dict(zip(names, [int(match[1]), *times], strict=True))))
    elif body.kind == "hello" and (match := _HELLO_RE.match(line)):
        body.labels = [("nprocs", "")]
        body.rows.append((number, {"nprocs": int(match[1])}))


def _value(body: _Body, number: int, name: str, token: str) -> Value:
    if name == "validation":
        if token in ("Pass", "Fail"):
            return token
    elif _NUMBER_RE.fullmatch(token):
        if name in _INT_COLUMNS and token.lstrip("+-").isdigit():
            return int(token)
        if name not in _INT_COLUMNS and math.isfinite(float(token)):
            return float(token)
    raise body.error(f"garbled value {token!r} in column {name!r} at line {number}")


def _build_table(body: _Body, version: str | None) -> OsuTable:
    columns = tuple(name for name, _ in body.labels)
    if len(set(columns)) != len(columns):
        raise body.error(f"repeated column in the header at line {body.header_line}")
    return OsuTable(
        title=body.title,
        version=version,
        kind=body.kind,
        columns=columns,
        units=dict(body.labels),
        rows=tuple(row for _, row in body.rows),
        meta=body.meta,
    )


def _problems(
    table: OsuTable, body: _Body, expect_sizes: Iterable[int] | None, require_validation: bool
) -> list[str]:
    if table.meta.get("window_size") == "varied":
        return ["window-varied output (osu_mbw_mr -V) is not supported; run without -V"]
    if not table.rows:
        return [_no_rows(body)]
    problems = _duplicates(body)
    if expect_sizes is not None:
        problems += _missing_sizes(table, body, sorted(set(expect_sizes)))
    if require_validation:
        problems += _validation_failures(table, body)
    return problems


def _no_rows(body: _Body) -> str:
    if body.kind == "init":
        return "no 'nprocs: N, min: X ms, max: Y ms, avg: Z ms' line"
    if body.kind == "hello":
        return "no 'This is a test with N processes' line"
    if not body.labels:
        return "no column header and no data rows after the header"
    return (
        f"column header at line {body.header_line} but no data rows "
        "(no size in the requested range, or the benchmark stopped before the first one)"
    )


def _duplicates(body: _Body) -> list[str]:
    seen: dict[int, int] = {}
    problems = []
    for number, row in body.rows:
        key = int(row.get("size", 0))
        if key in seen:
            problems.append(f"size {key} appears twice (lines {seen[key]} and {number})")
        seen[key] = number
    return problems


def _missing_sizes(table: OsuTable, body: _Body, expected: list[int]) -> list[str]:
    if "size" not in table.columns:
        return ["table has no Size column, so no expected sizes"] if expected else []
    missing = sorted(set(expected) - set(table.sizes()))
    if not missing:
        return []
    return [f"missing sizes {missing} (truncated?){_last_row(body)}"]


def _last_row(body: _Body) -> str:
    if not body.rows:
        return ""
    number, row = body.rows[-1]
    where = f"size {row['size']}" if "size" in row else "its only row"
    return f"; last row: {where} at line {number}"


def _validation_failures(table: OsuTable, body: _Body) -> list[str]:
    if "validation" not in table.columns:
        return ["no Validation column: run the benchmark with -c"]
    failed = [(n, row.get("size", 0)) for n, row in body.rows if row["validation"] != "Pass"]
    if not failed:
        return []
    where = ", ".join(f"{size} (line {number})" for number, size in failed)
    return [f"data validation failed for sizes {where}"]
