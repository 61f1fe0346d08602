"""The result of parsing: one OSU table, its error type, and OSU's message-size arithmetic."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

Value = float | int | str


class OsuParseError(ValueError):
    """The text is not a complete, well-formed OSU output; the message says what and where."""


@dataclass(frozen=True)
class OsuTable:
    """One OSU result table; see the package docstring for kinds, columns and units."""

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

    Size 0: OSU 7.3 and later never print it (a 0-byte message has 0 elements and is skipped,
    so `osu_latency -m 0:8` starts at 1, seen on 7.3 and 7.4; OSU also ignores a minimum of 0
    and keeps its default, 0 for point-to-point, 1 for collectives); point-to-point benchmarks
    of OSU 4.x to 7.2 print a 0-byte row when the minimum is 0: pass `zero_row=True` for those.
    Sizes smaller than the datatype (`-T mpi_int`: `datatype_size=4`) are skipped as well.
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
