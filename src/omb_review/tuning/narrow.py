"""``omb-review tune --narrow DIR``: a recommendation narrowed to where its proof held.

A proving run (``OsuTunedCollective``, ``OsuTunedNonBlocking``) keeps per job
``tuning-comparison.json``: per size, the load against the default and its outcome. Where the
last attempt of a job found the load slower beyond the noise, the file's rules that could have
served that call are the cause: a rule serves communicators of exactly its size (both writers
bracket each measured size with the library's own choice), and a collective on R ranks over N
nodes runs on communicators of R ranks, and, where the library splits it by node (Open MPI 5's
han, MPICH's node-aware algorithms), of the ranks on one node (R/N, rounded both ways) and of
one rank per node (N). Each such rule loses the slower size's cell (the sweep's size whose
range holds it): the library's own choice there, said in the table. A slower size that no rule
explains (none of those communicator sizes has a rule there) is the load's own: the file is
not written, with the reason.

Only proofs of the same environment and library version count (another is said and left out);
a comparison that cannot be read is reported and skipped.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from omb_review.tuning import tune
from omb_suite.tuning.rules import DEFAULT

#: What the proving check keeps per job (omb_suite.rfm.tuned.COMPARISON).
COMPARISON = "tuning-comparison.json"
_RETRY = re.compile(r"_retry(\d+)$")


@dataclass(frozen=True)
class Slower:
    """One size where a proving job's last attempt found the load slower than the default."""

    environ: str
    version: str
    collective: str  # without osu_
    ranks: int
    nodes: int
    size: int
    ratio: float
    low: float
    high: float
    source: str  # the comparison's path

    def text(self) -> str:
        return (f"{self.collective} {self.ranks} ranks on {self.nodes} node(s) {self.size} B "
                f"{self.ratio:.2f} [{self.low:.2f}, {self.high:.2f}]")


def last_attempts(root: Path) -> list[Path]:
    """Every job's comparison below ``root`` (a ReFrame prefix, or its output/ or stage/),
    the last attempt's only: ReFrame names a retry's folders ``<test>_retry<n>``, and keeps a
    passed job in output/, a failed one in stage/ (output/ wins: a failed first attempt's
    stage stays behind a passed retry)."""
    found: dict[tuple[str, ...], tuple[tuple[int, int], Path]] = {}
    for path in sorted(root.rglob(COMPARISON)):
        test = path.parent.name
        m = _RETRY.search(test)
        parts = path.relative_to(root).parts[:-2]
        # the job: its folder without the retry suffix, below stage/ or output/
        where = tuple(p for p in parts if p not in ("stage", "output"))
        key = (*where, _RETRY.sub("", test))
        rank = ("output" in parts, int(m.group(1)) if m else 0)
        if key not in found or found[key][0] < rank:
            found[key] = (rank, path)
    return [path for _, path in sorted(found.values(), key=lambda x: str(x[1]))]


def slower_cells(roots: Iterable[Path]) -> tuple[list[Slower], list[str]]:
    """The slower sizes of the last attempts below ``roots``, and what could not be read."""
    out, problems = [], []
    for root in roots:
        if not root.is_dir():
            problems.append(f"{root}: not a directory (give a proving run's ReFrame prefix)")
            continue
        paths = last_attempts(root)
        if not paths:
            problems.append(f"{root}: no {COMPARISON} below it (a proving run's ReFrame "
                            "prefix: OsuTunedCollective, OsuTunedNonBlocking)")
        for path in paths:
            try:
                data = json.loads(path.read_text())
                out += [Slower(str(data["environ"]), str(data["mpi_version"]),
                               str(data["benchmark"]).removeprefix("osu_"), int(data["ranks"]),
                               int(data["nodes"]), int(r["size"]), float(r["ratio"]),
                               float(r["ratio_low"]), float(r["ratio_high"]), str(path))
                        for r in data["rows"] if r["outcome"] == "slower"]
            except (OSError, ValueError, KeyError, TypeError) as err:
                problems.append(f"{path}: unreadable comparison ({type(err).__name__}: {err}); "
                                "skipped")
    return out, problems


def communicators(ranks: int, nodes: int) -> set[int]:
    """Sizes of the communicators a collective on ``ranks`` ranks over ``nodes`` nodes can run
    on (see module): the whole, one node's ranks, one rank per node; only those of 2 or more
    (a rule needs 2 ranks)."""
    sizes = {ranks}
    if nodes > 1:
        sizes |= {nodes, ranks // nodes, -(-ranks // nodes)}
    return {s for s in sizes if s >= 2}


def _cell_at(cells: list[tune.Cell], size: int) -> tune.Cell | None:
    """The sweep's cell whose size range holds ``size`` (its size up to the next's), None
    above the largest measured size (the library's own choice there)."""
    below = [c for c in cells if c.size <= size]
    if not below or size > max(c.size for c in cells):
        return None
    return max(below, key=lambda c: c.size)


def narrow(s: tune.Study, slower: list[Slower]) -> list[str]:
    """Narrow the study's rules by ``slower`` (in place); the sizes no rule explains (the
    file must not be written), as text. Notes say what was narrowed and what was left out."""
    unexplained: list[str] = []
    for cell in slower:
        if cell.environ != s.environ:
            continue
        if cell.version != s.version:
            note = (f"proof of {cell.environ} {cell.version} not used (this study is "
                    f"{s.version}): {cell.source}")
            if note not in s.notes:
                s.notes.append(note)
            continue
        hit = False
        for rule in [r for r in s.rules if r.collective == cell.collective
                     and r.ranks in communicators(cell.ranks, cell.nodes)]:
            mine = [c for c in s.cells if (c.collective, c.ranks, c.nodes) ==
                    (rule.collective, rule.ranks, rule.nodes)]
            at = _cell_at(mine, cell.size)
            if at is not None and at.narrowed is not None:
                hit = True  # narrowed by another proof of the same size already
                s.notes.append(f"narrowed: {rule.collective} at {rule.ranks} ranks, {at.size} B: "
                               f"slower in the proof at {cell.text()} too ({cell.source})")
                continue
            if at is None or at.winner == DEFAULT:
                continue
            hit = True
            s.cells[s.cells.index(at)] = replace(
                at, winner=DEFAULT, gain=0.0, winner_us=at.default_us, ratio=None,
                ratio_low=None, ratio_high=None,
                narrowed=f"{at.winner} left out: slower in the proof at {cell.text()}")
            s.notes.append(f"narrowed: {rule.collective} at {rule.ranks} ranks, {at.size} B: "
                           f"{at.winner} left out (the library's own there), slower in the "
                           f"proof at {cell.text()} ({cell.source})")
        if not hit:
            unexplained.append(cell.text())
    rules = []
    for key in sorted({(r.collective, r.ranks, r.nodes) for r in s.rules}):
        cells = [c for c in s.cells if (c.collective, c.ranks, c.nodes) == key]
        if any(c.winner != DEFAULT for c in cells):
            rules.append(tune.rule(*key, cells))
    s.rules = rules
    return unexplained
