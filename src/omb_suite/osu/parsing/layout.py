"""What the lines of an OSU output look like, release by release (OMB 4.0 to 8.0.x).

The printf formats are OMB's own (`c/util/osu_util_mpi.c` and the benchmark sources of 5.6,
5.9, 7.0, 7.4 and 7.5); the differences between releases that matter here:

- 7.0 prints no datatype line; 7.1 to 7.3 print `# Datatype: MPI_CHAR.` AFTER the column
  header of point-to-point tables, 7.4 and later BEFORE it (collectives: before in 7.3 too);
- 7.3's osu_mbw_mr prints its title line twice, one after the other (`find_titles`);
- 5.x to 7.3 label point-to-point latency "Latency (us)", 7.4+ "Avg Latency(us)";
- 5.x to 7.2 point-to-point tables start at size 0; 7.3+ never print size 0;
- accelerator builds add `-CUDA`, `-ROCM`, `-OPENACC` to the title and a buffer line
  (`# Send Buffer on HOST (H) and Receive Buffer on DEVICE (D)`, one-sided: `# Rank 0 Memory
  on ...`) before the header;
- 8.0's rebuilt templates print `OSU MPI Latency Test Test`, `OSU MPI Multi Latency Test
  Test`, `OSU MPI Latency Test Persistent` (7.x: `Latency Persistent Test`), `... Bandwidth
  Test Persistent`, the non-blocking all-to-alls `... Personalized ExchangeLatency Test`, the
  neighbourhood programs `Dimensions size = N` before the title, and each error as
  `<program> exited with <status>: <reason>`; with colour on (a terminal, `FORCE_COLOR`) lines
  carry ANSI escape sequences, removed first (`untagged`). Tables are 7.4's (real outputs of
  every 8.0b2 program: tests/data/osu80).

OMB 4.x and 5.0 to 5.5 print the tables of 5.6 (titles, `# Size  Latency (us)` and size 0 in
point-to-point tables, collectives' `Avg Latency(us)`, one-sided window and synchronization
lines, device buffer lines): seen in real outputs of 4.4, 4.4.1, 5.0, 5.3, 5.3.2, 5.4.1 and
5.5 (tests/data/osu-world). Their titles differ (every title 4.0 to 5.5 printed, with the
sources read: tests/data/osu-titles/titles-4.0-5.5.yaml):

- 4.0 to 4.2's one-sided programs print `OSU One Sided MPI_Get latency Test`, `OSU MPI One
  Sided MPI_Get Bandwidth Test` (and `osu_passive_*`, `osu_cas_flush`/`osu_fop_flush` alike),
  no window or synchronization line; 4.3 on print `OSU MPI_Get latency Test` and those lines;
- 4.0's collectives print `OSU Allgather Latency Test` (no `MPI`);
- 4.0 to 4.4's osu_bibw (and 4.0 to 4.2's osu_put_bibw) label the column `Bi-Bandwidth (MB/s)`.
A table of theirs is read like any other: what the parser does not know (a column label, a
line inside the table) refuses it with the line, not its version. Releases before 4.0 are
refused by version, so that a layout nobody checked is never read as if it were a known one;
so is a title without a version. A release after 8.0.x is read as 8.0 (what it prints
differently is refused by its line); the suite names such a release once
(`omb_suite.osu.versions.unknown_note`).

A table copied into a Markdown page ends at the page's next code fence (```` ``` ````, `~~~`)
or heading (`##` to `######`; OSU's own comment lines start with one `#`): what follows is the
page's, not the table's (`ends_table`). In an indented block (reStructuredText `code-block`,
Markdown indented code), lines left of the title are the page's prose, never rows (`left_of`).
OSU itself prints every line from column 0.
Open MPI's `--tag-output` and `--timestamp-output` line prefixes are removed first (`untagged`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: The oldest OSU release whose layouts are known; later ones up to 8.0.x are all known.
OLDEST = (4, 0)
SUPPORTED_TEXT = "4.0 to 8.0.x"

#: What a title says after "OSU": "MPI..." from 4.3 on; 4.0 to 4.2 also "One Sided ..." and
#: (4.0's collectives) "<Operation> Latency Test"; 8.0 adds " Test" or " Persistent" after it.
TITLE = r"OSU\s+(?:MPI\S*|One Sided|[A-Z][\w-]*\s+Latency)\b.*?\bTest(?: Test| Persistent)?"
TITLE_RE = re.compile(
    rf"^#\s*(?P<title>{TITLE})"
    r"(?:\s+v(?P<version>\S+)|\s+\(Version\s+(?P<old_version>[^)]+)\))?\s*$"
)
#: A title whose '#' was lost (copied from a web page or edited): refused, with the line.
BARE_TITLE_RE = re.compile(rf"^{TITLE}(?:\s+v\S+)?\s*$")
#: Open MPI's per-line prefixes: `--timestamp-output` ("Wed May 27 09:26:50 2020") and
#: `--tag-output` ("[1,0]<stdout>:", job and rank), removed before anything is read.
TAG_RE = re.compile(
    r"^(?:[A-Z][a-z]{2} [A-Z][a-z]{2} +\d+ \d\d:\d\d:\d\d \d{4})?\[\d+,\d+\]<std(?:out|err)>:"
)
#: The heading of a section of OSU 8.0's launcher summary (omb_suite.osu.parsing.summary).
LAUNCHER_SUMMARY_RE = re.compile(
    r"^(\d+) test\(s\) (were not launched|could not run due to unsupported options"
    r"|exited with failure):$"
)
#: ANSI SGR sequences (colour, bold) of OSU 8.0's coloured output.
ANSI_RE = re.compile(r"\x1b\[[0-9;]*m")
#: Where a table in a Markdown page ends: a code fence or a heading of level 2 to 6.
TABLE_END_RE = re.compile(r"^(?:```|~~~|#{2,6}(?:\s|$))")
ACCEL_RE = re.compile(r"-(CUDA MANAGED|CUDA|OPENACC|ROCM|MANAGED)\b")

# Ordered: the first pattern matching the lower-case title (accelerator removed) wins.
KINDS = (
    (r"^osu mpi_|\bone sided\b", "one_sided"),
    (r"\binit test$", "init"),
    (r"\bhello world test$", "hello"),
    (r"multiple bandwidth / message rate", "mbw_mr"),
    (r"\bmulti latency", "multi_lat"),
    (r"multi-threaded latency", "latency_mt"),
    (r"multi-process latency", "latency_mp"),
    (r"non-blocking", "nonblocking"),
    (r"\bpartitioned latency", "partitioned"),
    (r"bi-directional bandwidth", "bibw"),
    (r"\bbandwidth\b", "bandwidth"),
    (r"^osu mpi latency (persistent )?test( test| persistent)?$", "latency"),
    (r"latency test$", "collective"),
)
#: Kinds where OSU 7's "Avg Latency(us)" is the plain point-to-point latency.
P2P_LATENCY_KINDS = {"latency", "multi_lat", "latency_mt", "latency_mp", "one_sided"}

LABELS = tuple(
    (re.compile(pattern), name, unit)
    for pattern, name, unit in (
        (r"Size", "size", "bytes"),
        (r"Avg Latency\(us\)", "avg_latency", "us"),
        (r"Min Latency\(us\)", "min_latency", "us"),
        (r"Max Latency\(us\)", "max_latency", "us"),
        (r"Latency \(us\)", "latency", "us"),
        (r"Iterations", "iterations", ""),
        (r"Bandwidth \(MB/s\)", "bandwidth", "MB/s"),
        (r"Bi-Bandwidth \(MB/s\)", "bandwidth", "MB/s"),
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
INT_COLUMNS = {"size", "iterations", "transmit_size"}
NUMBER_RE = re.compile(r"[-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?")
# A data row starts with the size (%d) or, in size-less tables, a time (%.2f); other lines,
# such as Open MPI's "1. this process did not call init", are launcher messages.
ROW_START_RE = {True: re.compile(r"\d+"), False: re.compile(r"\d+\.\d+")}

KEY_VALUE_RE = re.compile(r"^#\s*([A-Za-z][\w .]*?)\s*:\s*(.*?)\s*$")
BRACKETS_RE = re.compile(r"\[\s*([^:\]]+?)\s*:\s*([^\]]*?)\s*\]")
BUFFERS_RE = re.compile(
    r"^#\s*(?:Send Buffer|Rank 0 Memory) on (.+?) and (?:Receive Buffer|Rank 1 Memory) on (.+?)\s*$"
)
DATATYPE_RE = re.compile(r"^#\s*Datatype\s*:")
NBC_FORMULA = "# Overall = Coll. Init + Compute + MPI_Test + MPI_Wait"
META_RENAMES = {
    "number_of_sender_threads": "sender_threads",
    "number_of_receiver_threads": "receiver_threads",
    "number_of_forked_processes_in_sender": "sender_processes",
    "number_of_forked_processes_in_receiver": "receiver_processes",
}
INIT_RE = re.compile(
    r"^nprocs:\s*(\d+),\s*min:\s*(\S+)\s*ms,\s*max:\s*(\S+)\s*ms,\s*avg:\s*(\S+)\s*ms\s*$"
)
HELLO_RE = re.compile(r"^This is a test with (\d+) processes\s*$")

# Lines that say why a run failed. Fatal ones fail the parse even after a complete table
# (the job was killed or aborted); hints are only quoted when something else is wrong.
FATAL_RE = re.compile(
    r"This test requires|Abort\(\d+\)|Fatal error in|unexpectedly disconnected|CANCELLED"
    r"|^srun: error:|\bKilled\b|Segmentation fault|BAD TERMINATION|MPI_ABORT was invoked"
    r"|\] Error: '|\] (?:MPI |function |CUDA |ROCM )?call .*failed with|\] Failed with message"
    r"|^Invalid option|not enough slots|was unable to (?:find|launch)"
    r"|error while loading shared libraries|command not found|Process received signal"
    r"|\*\*\* An error occurred in MPI_"  # Open MPI's MPI_ERRORS_ARE_FATAL report
    r"|^osu_\w+ exited with \d+:"  # OSU 8.0's error exit ("... exited with 207: This test ...")
)
HINT_RE = re.compile(r"DATA VALIDATION ERROR|Limiting max message size|exiting improperly")


@dataclass(frozen=True)
class Cause:
    """A line of the output that says why the run failed (1-based line number)."""

    number: int
    text: str
    fatal: bool  # the job was killed or aborted: the parse fails even after a full table

    def __str__(self) -> str:
        return f"the output says: {self.text!r} (line {self.number})"


def is_command(line: str) -> bool:
    """A recorded command line (`$ mpirun ...`), never part of the output itself."""
    return line.startswith("$ ")


def first_cause(lines: list[str], first: int = 1) -> Cause | None:
    """The first fatal line, else the first hint; `first` numbers the first line."""
    for pattern, fatal in ((FATAL_RE, True), (HINT_RE, False)):
        for number, line in enumerate(lines, first):
            if not is_command(line) and pattern.search(line):
                return Cause(number, line.strip(), fatal=fatal)
    return None


@dataclass(frozen=True)
class Title:
    """A title line: where it is (a repeat right after it counts as the same) and its parts."""

    number: int  # 1-based line number of the title
    last: int  # line number of its last identical repeat (`number` if it has none)
    title: str
    version: str | None


def untagged(lines: list[str]) -> list[str]:
    """The lines without colour sequences and Open MPI's `--tag-output`/`--timestamp-output`
    prefixes."""
    return [TAG_RE.sub("", ANSI_RE.sub("", line), count=1) for line in lines]


def indent(raw: str) -> int:
    return len(raw) - len(raw.lstrip())


def ends_table(raw: str) -> bool:
    """Whether this line, after a title, ends its table: a page's fence or heading, or the
    summary of OSU 8.0's launchers after their last table."""
    return bool(TABLE_END_RE.match(raw.strip()) or LAUNCHER_SUMMARY_RE.match(raw.strip()))


def left_of(raw: str, title_indent: int) -> bool:
    """Whether this line stands left of a title indented by `title_indent`: a page's prose
    beside an indented block, never a row or a comment of the table (a wrapper's unindented
    stderr line between indented rows is skipped the same way, and the rows go on)."""
    return bool(raw.strip()) and indent(raw) < title_indent


def find_titles(lines: list[str], first: int = 1) -> list[Title]:
    """The title lines of `lines` (numbered from `first`). OSU 7.3's osu_mbw_mr prints its
    title twice, one line after the other: a title identical to the previous one with only
    blank lines between them is that same header repeated, not a second benchmark (a run
    that crashed after its title and was run again has the crash's lines between)."""
    found: list[Title] = []
    previous = ""  # the last non-blank line
    for number, raw in enumerate(lines, first):
        line = raw.strip()
        if match := TITLE_RE.match(line):
            if found and line == previous:
                found[-1] = Title(found[-1].number, number, found[-1].title, found[-1].version)
            else:
                version = match["version"] or match["old_version"]
                found.append(Title(number, number, match["title"], version))
        previous = line or previous
    return found


def version_problem(version: str | None) -> str | None:
    """Why a release's output is not read, or None when its layout is known."""
    numbers = tuple(int(n) for n in re.findall(r"\d+", version or "")[:3])
    if not numbers:
        return (f"the title has no version, so its layout is unknown (OSU before 4.0, or a "
                f"build without one); layouts known: OSU {SUPPORTED_TEXT}")
    if numbers < OLDEST:
        return (f"OSU {version} is older than the layouts this parser knows (OSU "
                f"{SUPPORTED_TEXT}): its table format was never checked")
    return None


def kind_of(title: str) -> str | None:
    """The table kind of a title (see the package docstring), None if unknown."""
    plain = ACCEL_RE.sub("", title).lower()
    return next((kind for pattern, kind in KINDS if re.search(pattern, plain)), None)


def snake(text: str) -> str:
    return re.sub(r"\W+", "_", text.strip().lower()).strip("_")


def match_label(text: str, pos: int) -> tuple[str, str, int] | None:
    """(column name, unit, end position) of the column label at `pos`, None if unknown."""
    for pattern, name, unit in LABELS:
        if match := pattern.match(text, pos):
            return name.format(*match.groups()), unit, match.end()
    return None
