"""Read one benchmark's output (one title, one table) into an `OsuTable`, or say why not."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

from . import layout as L
from .table import OsuParseError, OsuTable, Value


@dataclass
class _Body:
    """What the output holds, gathered line by line, with line numbers for messages."""

    title: str
    kind: str
    cause: L.Cause | None
    meta: dict[str, str] = field(default_factory=dict)
    labels: list[tuple[str, str]] = field(default_factory=list)
    header_line: int = 0
    rows: list[tuple[int, dict[str, Value]]] = field(default_factory=list)
    comments: list[str] = field(default_factory=list)
    # '#' lines after the column header: a wrapper's trailer, unless a data row follows
    after_header: list[tuple[int, str]] = field(default_factory=list)

    def error(self, *problems: str) -> OsuParseError:
        return OsuParseError(_message(self.title, list(problems), self.cause))


def parse_osu_output(
    text: str, *, expect_sizes: Iterable[int] | None = None, require_validation: bool = False
) -> OsuTable:
    """Parse one OSU benchmark's output (launcher and wrapper lines around it are allowed).

    expect_sizes: sizes the run must have printed (see `expected_sizes`); missing ones fail.
    require_validation: the table must have a Validation column (`-c`) with only 'Pass'.
    Raises OsuParseError naming what is missing or garbled, with line numbers, and quoting
    the first line of the output that says why the run failed, if there is one. A text with
    several benchmark outputs is refused: `split_outputs` cuts it into single outputs.
    """
    return parse_lines(
        text.splitlines(), 1, expect_sizes=expect_sizes, require_validation=require_validation
    )


def parse_lines(
    lines: list[str],
    first: int,
    *,
    expect_sizes: Iterable[int] | None = None,
    require_validation: bool = False,
) -> OsuTable:
    """`parse_osu_output` of lines numbered from `first` (their place in a larger file)."""
    lines = L.untagged(lines)
    cause = L.first_cause(lines, first)
    title_no, title, version = _find_title(lines, first, cause)
    if problem := L.version_problem(version):
        raise OsuParseError(f"{title} (line {title_no}): {problem}")
    kind = L.kind_of(title)
    if kind is None:
        raise OsuParseError(f"{title}: unknown OSU benchmark title; parsing knows no such table")
    body = _Body(title=title, kind=kind, cause=cause)
    _read_body(body, lines, first, title_no)
    table = _build_table(body, version)
    problems = _problems(table, body, expect_sizes, require_validation)
    if not problems and cause is not None and cause.fatal:
        problems.append(f"the run failed{_last_row(body)}")
    if problems:
        raise body.error(*problems)
    return table


def _message(title: str, problems: list[str], cause: L.Cause | None) -> str:
    return "; ".join([f"{title}: {problems[0]}", *problems[1:], *([str(cause)] if cause else [])])


def _find_title(lines: list[str], first: int, cause: L.Cause | None) -> tuple[int, str, str | None]:
    """(line number, title, version) of the one title; the number is that of its last
    repeat (OSU 7.3's osu_mbw_mr prints it twice), where the body starts."""
    found = L.find_titles(lines, first)
    if not found:
        raise OsuParseError(_no_title(lines, first, cause))
    if len(found) > 1:
        numbers = ", ".join(str(title.number) for title in found)
        raise OsuParseError(
            f"OSU output holds {len(found)} benchmark headers (lines {numbers}): "
            "parse each benchmark's output on its own (omb_suite.osu.parsing.split_outputs)"
        )
    return found[0].last, found[0].title, found[0].version


def _no_title(lines: list[str], first: int, cause: L.Cause | None) -> str:
    for number, line in enumerate(lines, first):
        if L.BARE_TITLE_RE.match(line.strip()):
            return (f"OSU output: line {number} looks like an OSU title without its '#' "
                    f"({line.strip()!r}): edited or garbled output")
    problem = "no '# OSU MPI ... Test' header: not an OSU output or the benchmark did not start"
    return _message("OSU output", [problem], cause or _first_output_line(lines, first))


def _first_output_line(lines: list[str], first: int) -> L.Cause | None:
    for number, line in enumerate(lines, first):
        if line.strip() and not L.is_command(line):
            return L.Cause(number, line.strip(), fatal=False)
    return None


def _read_body(body: _Body, lines: list[str], first: int, title_no: int) -> None:
    """Lines after the title up to where a page ends the table (`layout.ends_table`) or the
    run failed (a crash's backtrace is no row), but none left of it (`layout.left_of`); before
    the title only OSU's thread and process counts are read (launchers' and wrappers' '#'
    comments there are no metadata)."""
    if accel := L.ACCEL_RE.search(body.title):
        body.meta["accel"] = accel[1]
    indent = L.indent(lines[title_no - first])
    crash = body.cause.number if body.cause and body.cause.fatal else None
    for number, raw in enumerate(lines, first):
        line = raw.strip()
        ended = L.ends_table(raw) or (crash is not None and title_no < crash < number)
        if number > title_no and ended:
            break  # a page's fence or heading, or a crash: the table ended above it
        if number < title_no and (key_value := L.KEY_VALUE_RE.match(line)):
            if (key := L.snake(key_value[1])) in L.META_RENAMES:
                body.meta[L.META_RENAMES[key]] = key_value[2]
        if number <= title_no or not line or L.is_command(raw) or L.left_of(raw, indent):
            continue
        if line.startswith("#"):
            _read_comment(body, number, line)
        else:
            _read_line(body, number, line)
    body.comments += [line for _, line in body.after_header]
    if body.comments:
        body.meta["comments"] = "\n".join(body.comments)


def _read_comment(body: _Body, number: int, line: str) -> None:
    """A '#' line: column header, '# Key: value' metadata, or a comment."""
    if body.labels:
        _comment_after_header(body, number, line)
        return
    labels = _read_labels(body, number, line)
    if labels:
        body.labels, body.header_line = labels, number
    else:
        _read_meta(body, line)


def _bare_header(body: _Body, number: int, line: str) -> bool:
    """OSU 5.6 to 7.4 print the header of size-less non-blocking tables (osu_ibarrier)
    without '#': a line made only of column labels is that header."""
    try:
        labels = _read_labels(body, number, line)
    except OsuParseError:
        return False  # a launcher line that starts like a label
    if labels:
        body.labels, body.header_line = labels, number
    return bool(labels)


def _comment_after_header(body: _Body, number: int, line: str) -> None:
    """OSU 7.1/7.2 print the datatype right after the header; any other '#' line there is
    another table (refused), or a wrapper's trailer if no data row follows it."""
    datatype = L.DATATYPE_RE.match(line) is not None
    if datatype and not body.rows and "datatype" not in body.meta:
        _read_meta(body, line)
    elif datatype or line.startswith("# Size"):
        raise body.error(
            f"a second table starts at line {number} ({line!r}; the first, "
            f"{body.meta.get('datatype', '?')}, at line {body.header_line}): "
            "run one -T datatype per check"
        )
    else:
        body.after_header.append((number, line))


def _read_meta(body: _Body, line: str) -> None:
    if (buffers := L.BUFFERS_RE.match(line)) is not None:
        body.meta["send_buffer"], body.meta["recv_buffer"] = buffers[1], buffers[2]
    elif pairs := L.BRACKETS_RE.findall(line):
        for key, value in pairs:
            body.meta[L.snake(key)] = value
    elif (key_value := L.KEY_VALUE_RE.match(line)) is not None:
        key, value = L.snake(key_value[1]), key_value[2].rstrip(".").strip()
        body.meta[L.META_RENAMES.get(key, key)] = value
    elif line != L.NBC_FORMULA:
        body.comments.append(line)


def _read_labels(body: _Body, number: int, line: str) -> list[tuple[str, str]]:
    """Column labels of a header line like '# Size   Avg Latency(us)'; [] if not one."""
    text, pos, labels = line.lstrip("#"), 0, []
    while text[pos:].strip():
        pos = len(text) - len(text[pos:].lstrip())
        label = L.match_label(text, pos)
        if label is None:
            if not labels:
                return []
            raise body.error(f"unknown column label {text[pos:].strip()!r} at line {number}")
        name, unit, pos = label
        if name == "avg_latency" and body.kind in L.P2P_LATENCY_KINDS:
            name = "latency"
        labels.append((name, unit))
    return labels


def _read_line(body: _Body, number: int, line: str) -> None:
    """A line that is not a comment: a data row, an init/hello result, or launcher noise."""
    if body.kind in ("init", "hello"):
        _read_startup(body, number, line)
        return
    if not body.labels and _bare_header(body, number, line):
        return
    fields = line.split()
    if not _is_row(body, fields):
        return  # launcher or MPI messages between rows; fatal ones were found by first_cause
    if body.after_header:
        where, text = body.after_header[0]
        raise body.error(f"unexpected line {where} inside the table: {text!r}")
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
    if L.ROW_START_RE[body.labels[0][0] == "size"].fullmatch(fields[0]):
        return True
    # A row whose first value is garbled ('8x'): as many fields as columns, the others all
    # values. A word there ('real 2.59' from `time -p`) is a launcher line, not a row.
    return len(fields) == len(body.labels) > 1 and any(c.isdigit() for c in fields[0]) and all(
        L.NUMBER_RE.fullmatch(field) or field in ("Pass", "Fail") for field in fields[1:]
    )


def _read_startup(body: _Body, number: int, line: str) -> None:
    if body.kind == "init" and (match := L.INIT_RE.match(line)):
        names = ("nprocs", "init_min", "init_max", "init_avg")
        body.labels = [("nprocs", "")] + [(name, "ms") for name in names[1:]]
        times = [
            _value(body, number, n, t) for n, t in zip(names[1:], match.groups()[1:], strict=True)
        ]
        body.rows.append((number, dict(zip(names, [int(match[1]), *times], strict=True))))
    elif body.kind == "hello" and (match := L.HELLO_RE.match(line)):
        body.labels = [("nprocs", "")]
        body.rows.append((number, {"nprocs": int(match[1])}))


def _value(body: _Body, number: int, name: str, token: str) -> Value:
    if name == "validation":
        if token in ("Pass", "Fail"):
            return token
    elif L.NUMBER_RE.fullmatch(token):
        if name in L.INT_COLUMNS and token.lstrip("+-").isdigit():
            return int(token)
        if name not in L.INT_COLUMNS and math.isfinite(float(token)):
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
