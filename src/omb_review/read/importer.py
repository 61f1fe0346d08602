"""``omb-review import-osu``: a directory of raw OSU output files -> perflog records.

Years of hand runs and older suites' outputs become history: each file is cut into benchmark
outputs (``omb_suite.osu.parsing.split_outputs``), each output parsed on its own, and every
parsed table written as records of the perflog format this suite uses (one per variable:
``<metric>_<size>`` and the curve figures, as the checks report them) to
``OUT/<system>/<partition>/imported-<Check>.log``. A mapping file says which runs the files
are (see ``load_rules``); what neither the mapping nor the output says is left out of the
header, so it is unknown and the records join the suite's series they match (``drift``).
Refused outputs and files no rule matches are listed, never dropped silently; so are the tests
the summary of OSU 8.0's launchers (``omb_pt2pt``, ``omb_coll``) says were not run.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import datetime, timezone
from functools import cache
from importlib import resources
from pathlib import Path

import yaml

from omb_suite import perflog_schema
from omb_suite.osu import catalogue
from omb_suite.osu.parsing import (
    OsuOutput,
    OsuParseError,
    OsuTable,
    launcher_summary,
    split_outputs,
)
from omb_suite.osu.parsing.layout import ACCEL_RE

#: Columns a mapping rule may set (named groups of its path pattern set them too).
SETTABLE = (
    "system", "partition", "environ", "mpi_family", "mpi_version", "num_tasks_per_node",
    "session_tag", "test", *perflog_schema.measurement_columns(),
)
#: Perflog columns in the suite's order (one definition: omb_suite.perflog_schema).
ORDER = perflog_schema.columns()
_PAIRS = {"latency", "bandwidth", "bibw", "latency_mt", "latency_mp", "one_sided", "partitioned"}
#: "OSU MPI_Put ...", "OSU MPI One Sided ...", "OSU One Sided ...", "OSU Allgather ...": the
#: title's key starts after "OSU" and "MPI".
_TITLE_START = re.compile(r"^osu\s+(?:mpi)?")


class MappingError(ValueError):
    """The mapping file is not usable; the message says what to change."""


class _Unknown(ValueError):
    """An output this tool cannot file under a program (the message says how to name it)."""


@dataclass(frozen=True)
class Rule:
    pattern: re.Pattern
    values: dict[str, str]
    date: str  # "file", a strftime format for the `date` group, or an ISO date


@dataclass
class Imported:
    """What an import did: records per output file, and what was not imported and why."""

    files: dict[Path, list[dict[str, str]]] = field(default_factory=dict)
    tables: int = 0
    refused: list[str] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # parsed, but nothing the suite logs
    unmatched: list[str] = field(default_factory=list)


@cache
def _tables() -> dict:
    text = resources.files("omb_review").joinpath("data/osu_import.yaml").read_text()
    data = yaml.safe_load(text)
    data["rma_windows"] = {printed: w for w, printed in catalogue.rma_windows().items()}
    data["rma_syncs"] = {printed: s for s, printed in catalogue.rma_syncs().items()}
    return data


def load_rules(path: Path) -> list[Rule]:
    """Rules of a mapping file::

        rules:
          - path: '(?P<date>\\d{8})/(?P<benchmark>osu_\\w+)-(?P<placement>\\w+)\\.txt'
            date_format: '%Y%m%d'    # or  date: file  (modification time) | date: 2021-03-01
            system: mycluster
            partition: cpu
            environ: openmpi
            mpi_family: openmpi

    ``path`` is a regular expression matched against the whole path relative to the input
    directory; the first rule that matches a file applies. Its named groups set the column
    of the same name; values may use ``{group}``.
    """
    try:
        raw = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as err:
        raise MappingError(f"{path}: not a readable YAML mapping ({err})") from None
    rules = raw.get("rules") if isinstance(raw, dict) else None
    if not rules:
        raise MappingError(f"{path}: no 'rules:' list (see omb-review import-osu --help)")
    return [_rule(path, n, r) for n, r in enumerate(rules, 1)]


def _rule(path: Path, n: int, raw: dict) -> Rule:
    where = f"{path}: rule {n}"
    extra = set(raw) - {"path", "date", "date_format", *SETTABLE}
    if extra:
        raise MappingError(f"{where}: unknown keys {sorted(extra)}; allowed: path, date, "
                           f"date_format, {', '.join(SETTABLE)}")
    try:
        pattern = re.compile(str(raw["path"]))
    except (KeyError, re.error) as err:
        raise MappingError(f"{where}: 'path' must be a regular expression ({err})") from None
    date = raw.get("date_format") or str(raw.get("date", ""))
    if not date:
        raise MappingError(f"{where}: give 'date: file', 'date: YYYY-MM-DD' or 'date_format' "
                           "for a (?P<date>...) group of the path")
    if "date_format" in raw and "date" not in pattern.groupindex:
        raise MappingError(f"{where}: date_format needs a (?P<date>...) group in 'path'")
    values = {k: str(v) for k, v in raw.items() if k in SETTABLE}
    missing = {"system", "partition"} - set(values) - set(pattern.groupindex)
    if missing:
        raise MappingError(f"{where}: say which {' and '.join(sorted(missing))} the runs are")
    return Rule(pattern, values, date)


def import_dir(root: Path, rules: list[Rule], sizes: set[int] | None, out: Path) -> Imported:
    """Parse every file below ``root`` that a rule matches into records for ``out``."""
    result = Imported()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = path.relative_to(root).as_posix()
        found = next(((r, m) for r in rules if (m := r.pattern.fullmatch(rel))), None)
        if found is None:
            result.unmatched.append(rel)
            continue
        rule, match = found
        base = {**{k: v.format(**match.groupdict()) for k, v in rule.values.items()},
                **{k: v for k, v in match.groupdict().items() if k in SETTABLE and v}}
        when = _when(rule, match, path)
        text = path.read_text(errors="replace")
        for output in split_outputs(text):
            _import_output(result, output, f"{rel}:{output.first_line}", base, when, sizes, out)
        result.skipped += [f"{rel}:{entry.line}: {entry}" for entry in launcher_summary(text)]
    return result


def _import_output(result: Imported, output: OsuOutput, where: str, base: dict, when: str,
                   sizes: set[int] | None, out: Path) -> None:
    try:
        table = output.parse()
        records = _records(table, base, when, where, sizes)
    except (OsuParseError, _Unknown) as err:
        result.refused.append(f"{where}: {err}")
        return
    if not records:
        bench = base.get("benchmark") or benchmark_of(table)
        result.skipped.append(f"{where}: {table.title}: the suite logs no figure of {bench}")
        return
    result.tables += 1
    for record in records:
        result.files.setdefault(_file(out, record), []).append(record)


def _when(rule: Rule, match: re.Match, path: Path) -> str:
    if rule.date == "file":
        return datetime.fromtimestamp(path.stat().st_mtime, timezone.utc).isoformat(
            timespec="seconds")
    text = match.groupdict().get("date") if "%" in rule.date else rule.date
    try:
        stamp = datetime.strptime(text, rule.date) if "%" in rule.date else (
            datetime.fromisoformat(text))
    except (TypeError, ValueError):
        raise MappingError(f"{path}: date {text!r} does not read as {rule.date!r}") from None
    return stamp.isoformat(timespec="seconds")


def title_entry(title: str) -> dict[str, str] | None:
    """What a title says: the program (``benchmark``) and, for OSU 4.0 to 4.2's one-sided
    titles, the window and synchronization their source uses (``rma_window``, ``rma_sync``)
    and the program's old name (``was``); None for a title no OSU release printed."""
    core = _TITLE_START.sub("", ACCEL_RE.sub("", title).lower()).strip()
    entry = _tables()["titles"].get(core)
    return {"benchmark": entry} if isinstance(entry, str) else entry


def benchmark_of(table: OsuTable) -> str | None:
    """The OSU program whose records this table's title makes."""
    entry = title_entry(table.title)
    return entry["benchmark"] if entry else None


def _records(table: OsuTable, base: dict, when: str, jobid: str, sizes) -> list[dict]:
    bench = base.get("benchmark") or benchmark_of(table)
    if bench is None:
        raise _Unknown(f"{table.title!r} names no program this tool knows; give it with a "
                       "(?P<benchmark>...) group of the path or 'benchmark:' in the rule")
    try:
        info = catalogue.get(bench)
    except KeyError as err:
        raise _Unknown(str(err)) from None
    test = base.get("test") or catalogue.check_of(bench)
    common = {**_from_table(table), **base, "benchmark": bench, "test": test,
              "job_completion_time": when, "result": "pass", "jobid": jobid,
              "name": f"{test} %benchmark={bench}", "osu_version": table.version or ""}
    perf = [(f"{m}_{s}", table.value(m, s), m) for m in info.metrics if m in table.columns
            for s in table.sizes() if sizes is None or s in sizes]
    perf += [(name, _curve(table, col, how), col) for name, (col, how) in info.curve.items()
             if col in table.columns]
    return [{k: v.replace("|", "/") for k, v in {
        **common, "perf_var": var, "perf_value": repr(float(value)),
        "perf_unit": catalogue.unit(col)}.items()} for var, value, col in perf]


def _curve(table: OsuTable, column: str, how: str) -> float:
    values = table.column(column).values()
    return min(values) if how == "min" else max(values)


def _from_table(table: OsuTable) -> dict[str, str]:
    """Series columns the output itself says."""
    meta, tables, out = table.meta, _tables(), {}
    if "send_buffer" in meta:
        out["buffers"] = f"{meta['send_buffer'][-2]} {meta['recv_buffer'][-2]}"
    if table.kind == "mbw_mr" and "window_size" in meta:
        out["window_size"] = meta["window_size"]
    if "sender_processes" in meta:
        out["processes"] = meta["sender_processes"]
    entry = title_entry(table.title) or {}
    out.update({k: entry[k] for k in ("rma_window", "rma_sync") if k in entry})
    if meta.get("window_creation") in tables["rma_windows"]:
        out["rma_window"] = tables["rma_windows"][meta["window_creation"]]
    if meta.get("synchronization") in tables["rma_syncs"]:
        out["rma_sync"] = tables["rma_syncs"][meta["synchronization"]]
    if table.kind in _PAIRS:
        out["num_tasks"] = "2"
    elif "pairs" in meta:
        out["num_tasks"] = str(2 * int(meta["pairs"]))
    elif table.kind in ("init", "hello"):
        out["num_tasks"] = str(int(table.rows[0]["nprocs"]))
    return out


def _file(out: Path, record: dict) -> Path:
    columns = "|".join(c for c in ORDER if c in record)
    tag = hashlib.sha1(columns.encode()).hexdigest()[:6]  # one header per file
    return out / record["system"] / record["partition"] / f"imported-{record['test']}-{tag}.log"


def write(result: Imported) -> list[Path]:
    """Write (replace) every output file: a header of the columns known, one record a line."""
    for path, records in result.files.items():
        columns = [c for c in ORDER if c in records[0]]
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = ["|".join(columns), *("|".join(r[c] for c in columns) for r in records)]
        path.write_text("\n".join(lines) + "\n")
    return sorted(result.files)
