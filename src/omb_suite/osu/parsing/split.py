"""Cut a text that holds several benchmark outputs (a wrapper script's concatenation of
runs, a job log of a loop over benchmarks) into single outputs, each judged on its own."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise

from . import layout as L
from .reader import parse_lines
from .table import OsuTable


@dataclass(frozen=True)
class OsuOutput:
    """One benchmark's output cut from a longer text, with its place in that text."""

    first_line: int  # 1-based number, in the whole text, of the output's first line
    lines: tuple[str, ...]

    def parse(
        self, *, expect_sizes: Iterable[int] | None = None, require_validation: bool = False
    ) -> OsuTable:
        """`parse_osu_output` of this output; messages give line numbers in the whole text."""
        return parse_lines(
            list(self.lines),
            self.first_line,
            expect_sizes=expect_sizes,
            require_validation=require_validation,
        )


def split_outputs(text: str) -> list[OsuOutput]:
    """One output per '# OSU MPI ... Test' title (a title repeated right after itself, as
    OSU 7.3's osu_mbw_mr prints it, is one): from the title to the line before the
    next one, with the '# Key: value' lines right above the title (osu_latency_mt prints its
    thread counts there). Lines before the first title go with the first output. What
    follows a table until the next title (timings, the next command, a failed run that
    printed no title) stays with that table, so a failure there refuses the table rather
    than letting it pass."""
    lines = L.untagged(text.splitlines())
    starts = [title.number for title in L.find_titles(lines, 0)]
    cuts = [0, *(_own_preamble(lines, i) for i in starts[1:]), len(lines)]
    return [
        OsuOutput(first_line=a + 1, lines=tuple(lines[a:b]))
        for a, b in pairwise(cuts)
    ]


def _own_preamble(lines: list[str], title: int) -> int:
    """Index where the output whose title is at `title` starts: its '# Key: value' lines
    just above (never another title or column header)."""
    start = title
    while start > 0 and L.KEY_VALUE_RE.match(lines[start - 1].strip()):
        start -= 1
    return start
