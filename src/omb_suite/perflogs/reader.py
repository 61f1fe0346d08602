"""Read one ReFrame perflog file (any header, one-line or multiline records) into raw rows.

Every ReFrame 4 file carries its own header (ReFrame rotates a file to ``<Test>.log.hN`` when
the header changes), so each file is parsed with the column names of its first line, split on
``|`` or, for ReFrame 4.0-4.2's default format, ``,`` (whose thresholds are ``<var>_lower``
and ``<var>_upper``, whose test name is ``display_name``).  Values are written unquoted by
ReFrame and may in principle contain the delimiter, so every line's field count is checked
against the header; lines that do not match are reported as problems, never guessed at.
One-line records take their variable names from the line where the format writes them
(``%(check_perf_var)s``), else from the header, which names the variables of the test it was
written for only: other tests' lines under it are reported, not read (``_unattributable``).
Parsing is done by polars (reading lines and splitting on the delimiter); there is no
hand-written CSV parser.  Files without a header (ReFrame 3) are read line by line (``rfm3``).
"""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl

from omb_suite.perflogs import rfm3
from omb_suite.perflogs.problem import Problem

__all__ = ["Problem", "read_perflog"]

#: Fields that ReFrame's ``format_perfvars`` expands per variable in one-line records, with
#: the header suffixes that name them (ReFrame 4.0/4.1's default used ``_lower``/``_upper``).
PERF_FIELDS = {
    "var": ("var",), "value": ("value",), "unit": ("unit",), "ref": ("ref",),
    "lower_thres": ("lower_thres", "lower"), "upper_thres": ("upper_thres", "upper"),
}
_ONELINE_VALUE = re.compile(r"^(?P<var>.+)_value$")
#: What a one-line format without variable names is told to add.
NAME_THE_VARIABLES = (
    "its performance values carry no variable names, so which variable each value is cannot "
    "be told; add %(check_perf_var)s to the handler's 'format_perfvars' (e.g. "
    "'%(check_perf_var)s|%(check_perf_value)s|%(check_perf_unit)s|') or set "
    "'perflog_multiline': True"
)


def _read_lines(path: Path) -> pl.DataFrame:
    """All lines of ``path`` as one string column, with 1-based line numbers."""
    frame = pl.read_csv(
        path,
        has_header=False,
        separator="\x1f",  # unit separator: never written by ReFrame, so a line stays whole
        quote_char=None,
        infer_schema=False,
        new_columns=["raw"],
        low_memory=True,
    )
    return frame.with_row_index("line", offset=1).with_columns(pl.col("line").cast(pl.Int32))


def _perfvar_columns(header: list[str], var: str) -> dict[str, str]:
    """perf field -> header column of one variable of a one-line header."""
    found = {}
    for field, suffixes in PERF_FIELDS.items():
        column = next((f"{var}_{s}" for s in suffixes if f"{var}_{s}" in header), None)
        if column is not None:
            found[field] = column
    return found


def _unpivot_oneline(frame: pl.DataFrame, header: list[str]) -> pl.DataFrame:
    """Turn one-line records (all variables on one line) into one row per variable.

    The variable is the line's own ``<var>_var`` field where the format writes one
    (``%(check_perf_var)s``), else the name the header gives the position."""
    names = [m["var"] for col in header if (m := _ONELINE_VALUE.match(col))]
    columns = {var: _perfvar_columns(header, var) for var in names}
    owned = {c for cols in columns.values() for c in cols.values()}
    common = [c for c in header if c not in owned]
    parts = []
    for var, cols in columns.items():
        perf = {f"perf_{f}": pl.col(c) for f, c in cols.items() if f != "var"}
        named = pl.col(cols["var"]) if "var" in cols else pl.lit(var)
        parts.append(frame.select("line", *common, perf_var=named, **perf))
    if not parts:
        return frame.select("line", *common)
    return pl.concat(parts, how="diagonal_relaxed")


def _unattributable(
    table: pl.DataFrame, header: list[str], lines: pl.DataFrame, label: str
) -> tuple[pl.DataFrame, list[Problem]]:
    """One-line records whose values the header does not name: ReFrame writes a file's header
    once, for the first record it logs there (line 2), and appends the records of every other
    test of the class under it.  Where the values carry no variable names, only records of
    that test (the same ``name``) are read under the header's names; any other line is
    reported, never read under another test's variables."""
    names = [m["var"] for col in header if (m := _ONELINE_VALUE.match(col))]
    if not names or any(f"{var}_var" in header for var in names) or table.height == 0:
        return table, []
    first = table.filter(pl.col("line") == 2)
    if first.height and "name" in header:
        owner = first["name"][0]
        own = pl.col("name").eq_missing(pl.lit(owner, pl.String))
    else:  # line 2 unreadable, or no test names: only line 2 is known to fit the header
        owner = "line 2" + ("" if first.height else " (unreadable)")
        own = pl.col("line") == 2
    name = pl.col("name") if "name" in header else pl.lit(None, pl.String)
    bad = table.filter(~own).select("line", name.alias("_test"))
    raw = dict(lines.filter(pl.col("line").is_in(bad["line"].implode())).iter_rows())
    problems = [
        Problem(label, ln, f"one-line record of {test!r} under the header ReFrame wrote for "
                f"{owner!r}: {NAME_THE_VARIABLES}", raw[ln])
        for ln, test in bad.iter_rows()
    ]
    return table.filter(own), problems


def _read_rfm3(lines: pl.DataFrame, label: str, header: bool) -> tuple[pl.DataFrame, list]:
    records, problems = [], []
    for number, raw in lines.slice(1 if header else 0).iter_rows():
        if raw.strip():
            found, bad = rfm3.parse(raw, label, number)
            records += found
            problems += bad
    frame = pl.DataFrame(records, infer_schema_length=None) if records else pl.DataFrame()
    if frame.height:
        frame = frame.with_columns(pl.col("line").cast(pl.Int32), source=pl.lit(label))
    return frame, problems


def read_perflog(path: Path, label: str) -> tuple[pl.DataFrame, list[Problem]]:
    """Parse one perflog file; ``label`` names it in problems (e.g. path relative to the root)."""
    lines = _read_lines(path)
    if lines.height == 0:
        return pl.DataFrame(), [Problem(label, 1, "empty file (no header)", "")]
    first = lines["raw"][0]
    if rfm3.is_record(first) or rfm3.is_header(first):
        return _read_rfm3(lines.select("line", "raw"), label, header=rfm3.is_header(first))
    delim = "|" if "|" in first else ","
    header = first.split(delim)
    if len(set(header)) != len(header):
        return pl.DataFrame(), [Problem(label, 1, "header repeats a column name", first)]
    nfields = lines["raw"].str.count_matches(delim, literal=True) + 1
    bad = lines.with_columns(n=nfields).slice(1).filter(pl.col("n") != len(header))
    problems = [
        Problem(label, ln, f"{n} fields, header has {len(header)}", raw)
        for ln, raw, n in bad.select("line", "raw", "n").iter_rows()
    ]
    # polars keeps one row per line (blank and ragged lines included), so row i is line i + 2
    table = pl.read_csv(
        path, separator=delim, quote_char=None, infer_schema=False, truncate_ragged_lines=True
    ).with_row_index("line", offset=2)
    table = table.filter((nfields.slice(1) == len(header)).fill_null(False))
    table = table.with_columns(pl.col("line").cast(pl.Int32))
    if "name" not in header and "display_name" in header:  # ReFrame 4.0-4.2
        table = table.rename({"display_name": "name"})
        header = ["name" if c == "display_name" else c for c in header]
    if "perf_var" not in header:
        table, unnamed = _unattributable(table, header, lines, label)
        problems += unnamed
        table = _unpivot_oneline(table, header)
    return table.with_columns(source=pl.lit(label)), problems


def read_rows(path: Path) -> tuple[list[dict[str, str]], list[str]]:
    """Records of one perflog as ``{column: text}`` (empty text for null fields), and one
    message per line that could not be read (``path:line: why``): what the cost fit and
    the iteration history read, through the same parser as the review."""
    frame, problems = read_perflog(path, str(path))
    text = frame.drop("line", "source", strict=False).cast(pl.String).fill_null("")
    return text.to_dicts(), [f"{p.source}:{p.line}: {p.reason}; skipped" for p in problems]
