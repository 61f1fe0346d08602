"""Lineage: which environment's runs continue which series across an upgrade.

An upgrade often renames the environment (``mod-openmpi-4_1_5`` -> ``mod-openmpi-4_1_6``,
``openmpi-4.1.5`` -> ``openmpi-4.1.6``, ``PrgEnv-gnu-8.5`` -> ``PrgEnv-gnu-8.6``); the library
is the same series before and after, so a series is keyed by its *lineage*, not by the
environment's name. Per system, partition and environment the lineage is:

1. the name the site declares (perflog column ``series``, from the environment's
   ``extras: {series: NAME}``); the environment's latest declaration holds for all its records,
   so records written before it was declared join it;
2. else the environment's name without its version: ``-``/``/``/``@``-separated words that
   start with a digit (``4_1_5``, ``4.1.5``, ``8.5``, ``v2``) are left out, and so is the
   ``mod-`` that ``omb-setup --module`` puts before the module's name
   (``mod-openmpi-4_1_5-gnu`` -> ``openmpi-gnu``);
3. else (a name that is only a version) the MPI family.

Environments of one derived lineage that were measured side by side (their runs overlap in
time: the same sessions) stay apart: each keeps its own name as its lineage (the others,
which ran one after another, are the lineage). A declared
lineage is never split. The versions (environment, MPI, OSU) stay attributes of each run, and a
finding names what changed. Bad input is said in a note and nothing is dropped: a lineage whose
environments are of two MPI families (the families stay separate series, as ``mpi_family`` is
a series key), environments declared one series but measured side by side (their runs are
one series, as declared), and an environment that begins where another of the same library
ended under a different lineage (a rename: its series start with no baseline).
"""

from __future__ import annotations

import itertools
import re

import polars as pl

#: Where an environment name is cut into words (a ``_`` before a digit, as in ``openmpi_4.1``).
_WORDS = re.compile(r"[-/@]|_(?=\d)")
_VERSION_WORD = re.compile(r"^v?\d")
#: The prefix ``omb-setup --module`` gives an environment (``omb_suite.setup.module_envs``).
MODULE_PREFIX = "mod-"
_PLACE = ("system", "partition")


def without_version(environ: str | None) -> str:
    """The environment's name without version words and without ``mod-`` ('' if nothing is
    left): ``mod-openmpi-4_1_5`` -> ``openmpi``, ``PrgEnv-gnu-8.5`` -> ``PrgEnv-gnu``."""
    name = environ or ""
    name = name[len(MODULE_PREFIX):] if name.startswith(MODULE_PREFIX) else name
    return "-".join(w for w in _WORDS.split(name) if w and not _VERSION_WORD.match(w))


def _environments(frame: pl.DataFrame) -> pl.DataFrame:
    """One row per system, partition and environment: its time span, families, versions, the
    declared series (the latest) and the derived candidate lineage."""
    env = (frame.group_by(*_PLACE, "environ")
           .agg(first=pl.col("time").min(), last=pl.col("time").max(),
                families=pl.col("mpi_family").cast(pl.String).drop_nulls().unique().sort(),
                mpi=pl.col("mpi_version").cast(pl.String).drop_nulls().unique().sort(),
                osu=pl.col("osu_version").cast(pl.String).drop_nulls().unique().sort(),
                declared=pl.col("series").cast(pl.String).drop_nulls().sort_by(
                    pl.col("time").filter(pl.col("series").is_not_null())).last())
           .with_columns(pl.col(*_PLACE, "environ").cast(pl.String)))
    derived = [without_version(e) or None for e in env["environ"]]
    family = [f[0] if len(f) == 1 else None for f in env["families"]]
    candidate = [d or f or e for d, f, e in zip(derived, family, env["environ"], strict=True)]
    return env.with_columns(candidate=pl.Series(candidate, dtype=pl.String))


def _successive(spans: list[tuple]) -> bool:
    """Whether environments' (first, last) spans follow one another without overlapping."""
    ordered = sorted(spans)
    return all(a[1] < b[0] for a, b in itertools.pairwise(ordered))


def _overlapping(spans: list[tuple]) -> list[bool]:
    """For each (first, last) span, whether another one overlaps it."""
    return [any(j != i and a[0] <= b[1] and b[0] <= a[1] for j, b in enumerate(spans))
            for i, a in enumerate(spans)]


def _assign(env: pl.DataFrame) -> tuple[dict[tuple, str], list[str]]:
    """(system, partition, environ) -> lineage, and notes on environments kept apart."""
    out: dict[tuple, str] = {}
    notes: list[str] = []
    derived = env.filter(pl.col("declared").is_null())
    for (system, partition, candidate), group in derived.group_by(*_PLACE, "candidate",
                                                                  maintain_order=True):
        names = group["environ"].to_list()
        spans = list(zip(group["first"], group["last"], strict=True))
        apart = [o and name is not None for name, o in zip(names, _overlapping(spans),
                                                           strict=True)]
        for name, own in zip(names, apart, strict=True):
            out[(system, partition, name)] = name if own else candidate
        if any(apart):
            kept = sorted(n for n, own in zip(names, apart, strict=True) if own)
            notes.append(f"{system}:{partition}: environments {', '.join(kept)} were measured "
                         "side by side (their runs overlap in time): each is a series of its "
                         f"own, not the lineage {candidate!r}")
    for row in env.filter(pl.col("declared").is_not_null()).iter_rows(named=True):
        out[(row["system"], row["partition"], row["environ"])] = row["declared"]
    return out, notes


def _library(row: dict) -> str:
    return (f"{'/'.join(row['families']) or 'MPI ?'} {'/'.join(row['mpi']) or '?'}, "
            f"OSU {'/'.join(row['osu']) or '?'}")


def _which(group: pl.DataFrame) -> str:
    return "; ".join(f"{r['environ']} ({_library(r)}, {r['first']:%Y-%m-%d}.."
                     f"{r['last']:%Y-%m-%d})" for r in group.sort("first").iter_rows(named=True))


def _mixed(env: pl.DataFrame) -> list[str]:
    """A lineage holding two MPI families (they stay separate series), or environments
    declared one series but measured side by side (their runs are mixed in one series)."""
    notes = []
    for (system, partition, lineage), group in env.group_by(*_PLACE, "lineage",
                                                            maintain_order=True):
        families = sorted({f for fs in group["families"] for f in fs})
        if len(families) > 1:
            notes.append(f"{system}:{partition}: lineage {lineage!r} holds MPI families "
                         f"{' and '.join(families)}: {_which(group)}. Each family stays a series "
                         "of its own (a new family has no baseline); if they are different "
                         "libraries, give them different series names (environment extras "
                         "'series')")
        elif group.height > 1 and not _successive(list(zip(group["first"], group["last"],
                                                           strict=True))):
            notes.append(f"{system}:{partition}: environments declared as series {lineage!r} "
                         f"were measured side by side: {_which(group)}; their runs are one "
                         "series. If they are different libraries, give them different series "
                         "names")
    return notes


def _renamed(env: pl.DataFrame) -> list[str]:
    """An environment that starts, under another lineage, where one with the same library
    (family, MPI and OSU version) ended: probably renamed; its series start with no baseline."""
    notes = []
    rows = env.sort("first").to_dicts()
    for new in rows:
        before = [old for old in rows
                  if (old["system"], old["partition"]) == (new["system"], new["partition"])
                  and old["lineage"] != new["lineage"] and old["last"] < new["first"]
                  and old["families"] == new["families"] and old["mpi"] == new["mpi"]
                  and old["osu"] == new["osu"] and old["mpi"]]
        if before:
            old = before[-1]
            notes.append(
                f"{new['system']}:{new['partition']}: environment {new['environ']!r} (lineage "
                f"{new['lineage']!r}) began after {old['environ']!r} (lineage {old['lineage']!r})"
                f" ended, with the same library ({_library(new)}): if it is that environment "
                f"renamed, declare its series (environment extras: {{series: "
                f"{old['lineage']}}}) so its runs continue that history; as it is, its series "
                "start with no baseline")
    return notes


def assign(frame: pl.DataFrame) -> tuple[pl.DataFrame, list[str]]:
    """The frame with a ``lineage`` column, and notes on what could not be joined cleanly."""
    if frame.height == 0:
        return frame.with_columns(lineage=pl.lit(None, pl.String).cast(pl.Categorical)), []
    env = _environments(frame)
    mapping, notes = _assign(env)
    env = env.with_columns(lineage=pl.Series(
        [mapping[(s, p, e)] for s, p, e in env.select(*_PLACE, "environ").iter_rows()],
        dtype=pl.String))
    notes += _mixed(env) + _renamed(env)
    table = env.select(*_PLACE, "environ", "lineage").with_columns(
        pl.col(*_PLACE, "environ", "lineage").cast(pl.Categorical))
    keys = [*_PLACE, "environ"]
    joined = frame.join(table, on=keys, how="left", nulls_equal=True)
    return joined, notes
