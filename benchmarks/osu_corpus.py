"""How the OSU parser fares on outputs written elsewhere: files and sources parsed, refused, why.

    python benchmarks/osu_corpus.py [CORPUS_DIR]   (default: tests/data/osu-world)

Every file is cut into benchmark outputs (`split_outputs`) and each output parsed on its
own. Each top-level directory is one source (see the corpus README); `constructed/` (made
here) is counted apart. A file "parses" when every output in it parses. Refusals are
grouped by the cause their message names, then listed one by one (file:line: message).
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from omb_suite.osu.parsing import SUPPORTED_TEXT, OsuParseError, split_outputs

DEFAULT = Path(__file__).resolve().parent.parent / "tests" / "data" / "osu-world"
CONSTRUCTED = "constructed"
#: Refusal causes, the first pattern found in the message wins.
CAUSES = (
    (r"is older than|is newer than|has no version",
     f"OSU release outside {SUPPORTED_TEXT} (layout never checked)"),
    (r"the run failed|the output says: .*(Segmentation|signal|CANCELLED|error)",
     "the run failed (crash, kill or error line)"),
    (r"but no data rows|no column header", "no data rows (the run stopped or hung)"),
    (r"title without its '#'|no '# OSU MPI", "no OSU title (edited or not an OSU output)"),
    (r"garbled|truncated|missing sizes", "truncated or garbled table"),
    (r"second table", "several datatype tables in one run (-T all)"),
)


@dataclass
class Tally:
    files: int = 0
    files_parsed: int = 0
    outputs: int = 0
    parsed: int = 0
    versions: Counter = field(default_factory=Counter)
    causes: Counter = field(default_factory=Counter)
    refusals: list[str] = field(default_factory=list)  # "file:line: message", one per refusal


def cause_of(message: str) -> str:
    return next((name for pattern, name in CAUSES if re.search(pattern, message)), "other")


def read(path: Path, tally: Tally, root: Path) -> None:
    tally.files += 1
    refused = 0
    for output in split_outputs(path.read_text(errors="replace")):
        tally.outputs += 1
        try:
            table = output.parse()
        except OsuParseError as err:
            refused += 1
            tally.causes[cause_of(str(err))] += 1
            tally.refusals.append(f"{path.relative_to(root)}:{output.first_line}: {err}")
        else:
            tally.parsed += 1
            tally.versions[table.version] += 1
    tally.files_parsed += refused == 0


def survey(root: Path) -> dict[str, Tally]:
    """One tally per source directory."""
    tallies: dict[str, Tally] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        if path.suffix in (".md", ".yaml"):
            continue
        source = path.relative_to(root).parts[0]
        read(path, tallies.setdefault(source, Tally()), root)
    return tallies


def total(tallies: list[Tally]) -> Tally:
    out = Tally()
    for t in tallies:
        out.files += t.files
        out.files_parsed += t.files_parsed
        out.outputs += t.outputs
        out.parsed += t.parsed
        out.versions.update(t.versions)
        out.causes.update(t.causes)
        out.refusals += t.refusals
    return out


def report(name: str, t: Tally, sources: int | None = None) -> list[str]:
    where = f" from {sources} sources" if sources is not None else ""
    lines = [
        f"{name}: {t.files} files{where}: {t.files_parsed} parse entirely, "
        f"{t.files - t.files_parsed} hold a refused output; "
        f"{t.outputs} benchmark outputs: {t.parsed} parsed, {t.outputs - t.parsed} refused",
        "  OSU versions parsed: "
        + ", ".join(f"{v} ({n})" for v, n in sorted(t.versions.items(), key=_version_key)),
    ]
    lines += [f"  refused, {cause}: {n}" for cause, n in t.causes.most_common()]
    lines += [f"    {_short(refusal)}" for refusal in t.refusals]
    return lines


def _short(text: str, width: int = 220) -> str:
    return text if len(text) <= width else text[: width - 3] + "..."


def _version_key(item: tuple[str, int]) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", item[0] or ""))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path, nargs="?", default=DEFAULT)
    args = parser.parse_args(argv)
    tallies = survey(args.corpus)
    real = {k: v for k, v in tallies.items() if k != CONSTRUCTED}
    print("\n".join(report("real outputs", total(list(real.values())), len(real))))
    for source, tally in sorted(real.items()):
        print(f"  {source}: {tally.files_parsed}/{tally.files} files, "
              f"{tally.parsed}/{tally.outputs} outputs parsed")
    if CONSTRUCTED in tallies:
        print("\n".join(report("constructed cases", tallies[CONSTRUCTED])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
