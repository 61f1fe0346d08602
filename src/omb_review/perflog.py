"""Read one ReFrame perflog file (any header, one-line or multiline records) into raw rows.

Every file carries its own header (ReFrame rotates a file to ``<Test>.log.hN`` when the header
changes), so each file is parsed with the column names of its first line.  Values are written
unquoted by ReFrame and may in principle contain the delimiter, so every line's field count is
checked against the header; lines that do not match are reported as problems, never guessed at.
Parsing is done by polars (reading lines and splitting on the delimiter); there is no hand-written
CSV parser.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import polars as pl

DELIM = "|"
#: Fields that ReFrame's ``format_perfvars`` expands per variable in one-line records.
PERF_FIELDS = ("value", "unit", "ref", "lower_thres", "upper_thres")
_ONELINE_VALUE = re.compile(r"^(?P<var>.+)_value$")


@dataclass(frozen=True)
class Problem:
    """A line of input that could not be used, and why."""

    source: str
    line: int
    reason: str
    text: str

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: {self.reason}: {self.text[:120]!r}"


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


def _perfvar_groups(header: list[str]) -> tuple[list[str], list[str]]:
    """Split a one-line header into (common columns, performance variable names)."""
    names = [m["var"] for col in header if (m := _ONELINE_VALUE.match(col))]
    owned = {f"{var}_{f}" for var in names for f in PERF_FIELDS}
    return [c for c in header if c not in owned], names


def _unpivot_oneline(frame: pl.DataFrame, header: list[str]) -> pl.DataFrame:
    """Turn one-line records (all variables on one line) into one row per variable."""
    common, names = _perfvar_groups(header)
    parts = []
    for var in names:
        cols = {f"perf_{f}": pl.col(f"{var}_{f}") for f in PERF_FIELDS if f"{var}_{f}" in header}
        parts.append(frame.select("line", *common, perf_var=pl.lit(var), **cols))
    if not parts:
        return frame.select("line", *common)
    return pl.concat(parts, how="diagonal_relaxed")


def read_perflog(path: Path, label: str) -> tuple[pl.DataFrame, list[Problem]]:
    """Parse one perflog file; ``label`` names it in problems (e.g. path relative to the root)."""
    lines = _read_lines(path)
    if lines.height == 0:
        return pl.DataFrame(), [Problem(label, 1, "empty file (no header)", "")]
    header = lines["raw"][0].split(DELIM)
    if len(set(header)) != len(header):
        return pl.DataFrame(), [Problem(label, 1, "header repeats a column name", lines["raw"][0])]
    nfields = lines["raw"].str.count_matches(DELIM, literal=True) + 1
    bad = lines.with_columns(n=nfields).slice(1).filter(pl.col("n") != len(header))
    problems = [
        Problem(label, ln, f"{n} fields, header has {len(header)}", raw)
        for ln, raw, n in bad.select("line", "raw", "n").iter_rows()
    ]
    # polars keeps one row per line (blank and ragged lines included), so row i is line i + 2
    table = pl.read_csv(
        path, separator=DELIM, quote_char=None, infer_schema=False, truncate_ragged_lines=True
    ).with_row_index("line", offset=2)
    table = table.filter((nfields.slice(1) == len(header)).fill_null(False))
    table = table.with_columns(pl.col("line").cast(pl.Int32))
    if "perf_var" not in header:
        table = _unpivot_oneline(table, header)
    return table.with_columns(source=pl.lit(label)), problems
