"""Find every input under a perflog tree, read it (through an incremental Parquet cache) and
return one normalised, de-duplicated polars frame plus the list of problems found.

Inputs: ``*.log`` and rotated ``*.log.hN`` perflogs anywhere below the root; ReFrame JSON run
reports (``reports/*.json`` below the root, or given) and results databases (``results.db`` at
the root, or given).  The cache keeps each file's normalised rows keyed by path, size and
modification time, so a second run only parses files that changed.  Records are keyed by
(system, partition, environ, test name, job id, variable, time): reading the same record twice
(from a copy, a report and the database) keeps it once. Records from older headers that lack
some series columns join their series (``drift``); each environment's runs join their
``lineage`` (the series an upgrade continues).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
from tqdm import tqdm

from omb_review.read import lineage
from omb_review.read.missing_columns import join_unknown
from omb_review.read.normalise import COLUMNS, empty, normalise
from omb_review.read.sources import read_report, read_results_db
from omb_suite.perflogs.reader import Problem, read_perflog

CACHE_VERSION = f"8/polars-{pl.__version__}"  # record hashes are stable within a version
ROTATED = re.compile(r"\.log(\.h\d+)?$")
RUN_KEY = ("system", "partition", "environ", "name", "jobid")
RECORD_KEY = (*RUN_KEY, "perf_var", "time")
READERS = {"perflog": read_perflog, "report": read_report, "db": read_results_db}


@dataclass
class Dataset:
    """Everything read: the records, what could not be read, and where it came from."""

    frame: pl.DataFrame
    problems: list[Problem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # records that could not join their series
    files: int = 0
    parsed: int = 0  # files parsed in this run (the others came from the cache)


@dataclass(frozen=True)
class Source:
    kind: str
    path: Path
    label: str


def _label(path: Path, root: Path) -> str:
    try:
        return str(path.relative_to(root))
    except ValueError:
        return str(path)


def discover(
    root: Path, reports: list[Path], dbs: list[Path], auto: bool = True
) -> list[Source]:
    """All inputs, perflogs first (they win when the same record appears twice)."""
    if not root.is_dir():
        raise FileNotFoundError(f"{root}: not a directory; give the perflog directory")
    logs = sorted(p for p in root.rglob("*.log*") if ROTATED.search(p.name) and p.is_file())
    found = [Source("perflog", p, _label(p, root)) for p in logs]
    report_files = [f for r in reports for f in (sorted(r.glob("*.json")) if r.is_dir() else [r])]
    if auto:
        report_files += sorted((root / "reports").glob("*.json"))
        dbs = [*dbs, *([root / "results.db"] if (root / "results.db").is_file() else [])]
    found += [Source("report", p, _label(p, root)) for p in dict.fromkeys(report_files)]
    found += [Source("db", p, _label(p, root)) for p in dict.fromkeys(dbs)]
    return found


def default_cache_dir(root: Path) -> Path:
    """Per-tree cache under ``$XDG_CACHE_HOME`` (the perflog tree itself stays untouched)."""
    base = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    digest = hashlib.sha1(str(root.resolve()).encode()).hexdigest()[:16]
    return base / "omb-review" / digest


def _stamp(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_size, st.st_mtime_ns]


class Cache:
    """Normalised rows of every file read so far, in one Parquet file plus a JSON manifest."""

    def __init__(self, directory: Path, naive_tz: str) -> None:
        self.dir = directory
        self.key = f"{CACHE_VERSION}:{naive_tz}"
        self.manifest: dict[str, dict] = {}
        path = directory / "manifest.json"
        if path.is_file() and (directory / "records.parquet").is_file():
            data = json.loads(path.read_text())
            if data.get("key") == self.key:
                self.manifest = data["files"]

    def fresh(self, src: Source) -> bool:
        entry = self.manifest.get(src.label)
        return entry is not None and entry["stamp"] == _stamp(src.path)

    def rows(self, labels: list[str]) -> pl.DataFrame:
        frame = pl.read_parquet(self.dir / "records.parquet")
        if len(labels) == len(self.manifest):
            return frame
        return frame.filter(pl.col("source").cast(pl.String).is_in(labels))

    def problems(self, label: str) -> list[Problem]:
        return [Problem(**p) for p in self.manifest[label]["problems"]]

    def save(self, frame: pl.DataFrame, entries: dict[str, dict]) -> None:
        self.dir.mkdir(parents=True, exist_ok=True)
        tmp = self.dir / "records.parquet.tmp"
        frame.write_parquet(tmp, compression="zstd", statistics=False)
        os.replace(tmp, self.dir / "records.parquet")
        text = json.dumps({"key": self.key, "files": entries})
        (self.dir / "manifest.json.tmp").write_text(text)
        os.replace(self.dir / "manifest.json.tmp", self.dir / "manifest.json")


def _hash(columns: tuple[str, ...]) -> pl.Expr:
    """Hash of the columns' text (categorical codes differ between processes, text does not)."""
    return pl.struct(pl.col(c).cast(pl.String) for c in columns).hash(seed=0)


def _parse(src: Source, naive_tz: str) -> tuple[pl.DataFrame, list[Problem]]:
    raw, problems = READERS[src.kind](src.path, src.label)
    frame, bad_rows = normalise(raw, naive_tz)
    frame = frame.with_columns(record_key=_hash(RECORD_KEY), run_key=_hash(RUN_KEY))
    return frame, problems + bad_rows


def _dedupe(frame: pl.DataFrame) -> pl.DataFrame:
    """One row per record (hashed key): the one that knows most (fewest empty columns: a
    site's perflog format may lack ``iterations`` that its run report has), the first source
    among equals; a sanity failure known only from a report (no variable) is dropped when the
    same run has variable rows elsewhere."""
    empty = pl.sum_horizontal(pl.all().exclude("record_key", "run_key").is_null())
    frame = (frame.with_columns(_empty=empty)
             .filter(pl.col("_empty") == pl.col("_empty").min().over("record_key"))
             .filter(pl.col("record_key").is_first_distinct()).drop("_empty"))
    bare = pl.col("perf_var").is_null()
    if not frame.select(bare.any()).item():
        return frame
    with_vars = frame.filter(~bare)
    orphans = frame.filter(bare & ~pl.col("run_key").is_in(with_vars["run_key"].implode()))
    return pl.concat([with_vars, orphans])


def load(
    root: Path,
    reports: list[Path] | None = None,
    dbs: list[Path] | None = None,
    cache_dir: Path | None = None,
    use_cache: bool = True,
    naive_tz: str = "UTC",
    auto_sources: bool = True,
) -> Dataset:
    """Read the tree (and extra reports/databases), reusing the cache where files are unchanged."""
    sources = discover(root, reports or [], dbs or [], auto_sources)
    cache = Cache(cache_dir or default_cache_dir(root), naive_tz) if use_cache else None
    fresh = [s for s in sources if cache and cache.fresh(s)]
    todo = [s for s in sources if s not in fresh]
    frames = [cache.rows([s.label for s in fresh])] if cache and fresh else []
    problems = [p for s in fresh for p in cache.problems(s.label)] if cache else []
    entries = {s.label: cache.manifest[s.label] for s in fresh} if cache else {}
    for src in tqdm(todo, desc="reading", unit="file", disable=None, leave=False):
        frame, found = _parse(src, naive_tz)
        frames.append(frame)
        problems += found
        entries[src.label] = {"stamp": _stamp(src.path), "problems": [p.__dict__ for p in found]}
    frames = [f for f in frames if f.height]
    if not frames:
        return Dataset(lineage.assign(empty())[0], problems, [], len(sources), len(todo))
    frame = pl.concat(frames, how="vertical_relaxed")
    if cache and (todo or len(entries) != len(cache.manifest)):
        cache.save(frame, entries)
    frame, dry = _without_dry_runs(_dedupe(frame).select(COLUMNS))
    frame, notes = lineage.assign(frame)
    frame, more = join_unknown(frame)
    notes += dry + more
    return Dataset(frame, problems, notes, len(sources), len(todo))


def _without_dry_runs(frame: pl.DataFrame) -> tuple[pl.DataFrame, list[str]]:
    """Records of ``reframe --dry-run`` (passed, no job, no value: nothing was measured) left
    out, and said; a failed run (result ``fail``) stays."""
    jobid = pl.col("jobid").cast(pl.String)
    dry = (pl.col("result") == "pass") & pl.col("value").is_null() & (
        jobid.is_null() | (jobid == ""))
    n = frame.select(dry.sum()).item()
    if not n:
        return frame, []
    runs = frame.filter(dry).select("system", "partition", "environ", "name").unique().height
    return frame.filter(~dry), [
        f"{n} records of {runs} dry-run test case(s) left out (reframe --dry-run: passed, no "
        "job, no value; nothing was measured)"]
