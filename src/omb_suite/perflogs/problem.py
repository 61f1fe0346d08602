"""A line of input that could not be used, and why (every reader reports these)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """A line of input that could not be used, and why."""

    source: str
    line: int
    reason: str
    text: str

    def __str__(self) -> str:
        return f"{self.source}:{self.line}: {self.reason}: {self.text[:120]!r}"
