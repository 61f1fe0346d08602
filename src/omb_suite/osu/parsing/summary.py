"""The summary OSU 8.0's launchers (``omb_pt2pt``, ``omb_coll``, ``omb_one_sided``: many
tests in one launch) print on stderr at the end: the tests that were not launched (a program
built without what it needs, a name not found), could not take an option, or failed. Their
own tables are read like any other output (``split_outputs``); a summary line ends the table
above it (``layout.ends_table``). Format from the 8.0b2 sources (c/launcher/
omb_launcher_util.c) and real runs (tests/data/osu80)::

    13 test(s) were not launched:
                                test  status
      ------------------------------  ------------------------------
            osu_allgather_persistent  All persistent tests require _ENABLE_MPI4_
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from . import layout as L

#: The section a summary entry is in, by the words of its heading.
SECTIONS = {
    "were not launched": "not launched",
    "could not run due to unsupported options": "unsupported option",
    "exited with failure": "failed",
}
_ENTRY = re.compile(r"^\s+(\S+)\s{2,}(\S.*?)\s*$")
_FRAME = re.compile(r"^\s*(?:test\s+(?:status|option\s+message)|[-\s]+)$")


@dataclass(frozen=True)
class NotRun:
    """One test a launcher names in its summary (``line``: 1-based line of the entry)."""

    test: str
    section: str  # a value of SECTIONS
    status: str
    line: int

    def __str__(self) -> str:
        return f"{self.test}: {self.section} by OSU's launcher ({self.status})"


def launcher_summary(text: str) -> list[NotRun]:
    """Every entry of every summary section in ``text`` (none: no launcher summary)."""
    found: list[NotRun] = []
    section = None
    for number, raw in enumerate(L.untagged(text.splitlines()), 1):
        if heading := L.LAUNCHER_SUMMARY_RE.match(raw.strip()):
            section = SECTIONS[heading[2]]
        elif section is None or not raw.strip() or _FRAME.match(raw):
            continue
        elif entry := _ENTRY.match(raw):
            found.append(NotRun(entry[1], section, entry[2], number))
        else:
            section = None
    return found
