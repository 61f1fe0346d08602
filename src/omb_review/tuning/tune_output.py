"""``omb-review tune``'s output: per environment, the library's own tuning file (written by
:mod:`omb_suite.tuning.files` from the recommendation of :mod:`omb_review.tuning.tune`), its table
(``recommendation.md``) and everything a site needs to deploy and roll it back
(``recommendation.json``). Nothing to recommend is said with the reason, and writes no file.
"""

from __future__ import annotations

import json
import sys
from dataclasses import asdict
from pathlib import Path

import polars as pl

from omb_review.judge import detect
from omb_review.read import curves
from omb_review.read.ingest import Dataset
from omb_review.tuning import narrow, tune
from omb_suite.tuning import files as tuning_files
from omb_suite.tuning.rules import TuningError

#: Exit status when no environment got a tuning file.
EXIT_NOTHING = 3


def _points(args, ds: Dataset) -> pl.DataFrame:
    frame, unreadable = curves.report_frame(args.perflog_dir, ds.frame)
    if unreadable:
        print(f"omb-review tune: {len(unreadable)} curve lines could not be used, e.g. "
              f"{unreadable[0]}", file=sys.stderr)
    asked = {"partition": [args.partition] if args.partition else None,
             "environ": args.environ, "num_nodes": [args.nodes] if args.nodes else None}
    for column, wanted in asked.items():
        if not wanted:
            continue
        present = sorted(map(str, frame[column].drop_nulls().unique()))
        frame = frame.filter(pl.col(column).cast(pl.String).is_in([str(w) for w in wanted]))
        if frame.height == 0:
            raise tune.NothingToRecommend(
                f"no records with {column} {', '.join(map(str, wanted))} (present: "
                f"{', '.join(present) or 'none'})")
    return frame


def _unwritable(family: str, version: str, collective: str, algorithm: str) -> str | None:
    """Why the library's file cannot name the algorithm; None where it can, or where no file
    is written for the library at all (the study is then a recommendation only)."""
    if tuning_files.support(family, version) is not None:
        return None
    return tuning_files.unwritable(family, version, collective, algorithm)


def _file(s: tune.Study, allow_unproven: bool) -> tuning_files.TuningFile:
    """The library's file, or :class:`TuningError`: none can be written, or its load cannot
    be proven safe for some collective (unless ``--allow-unproven``)."""
    if s.unexplained:
        raise TuningError("not written: the proof found the load slower where no rule of the "
                          "file serves the call (the load's own; narrowing cannot help): "
                          + "; ".join(s.unexplained))
    written = tuning_files.write(s.family, s.version, s.rules)
    why = tuning_files.unsafe(s.family, s.version, s.rules)
    if why and not allow_unproven:
        raise TuningError(f"not written: {why} (--allow-unproven writes it anyway)")
    return written


def _write(out: Path, s: tune.Study, lines: list[str], allow_unproven: bool = False) -> str:
    """Write the environment's file and its table; the line printed for it."""
    where = out / s.environ
    where.mkdir(parents=True, exist_ok=True)
    record: dict = {"environ": s.environ, "mpi_family": s.family, "mpi_version": s.version,
                    "mapping": s.mapping, "rules": [asdict(r) for r in s.rules],
                    "cells": [asdict(c) for c in s.cells], "notes": s.notes}
    try:
        written = _file(s, allow_unproven)
    except TuningError as err:
        record["file"] = None
        record["why_no_file"] = str(err)
        said = f"{s.environ}: recommendation only, no file ({err})"
    else:
        path = (where / written.name).resolve()
        path.write_text(written.text)
        for name, text in written.companions.items():
            (where / name).write_text(text)
        record["companions"] = sorted(written.companions)
        record["file"] = path.name
        record["load"] = written.environment(str(path))
        # what the load changes: OsuTunedCollective measures each of these collectives
        record["touches"] = list(written.touches)
        record["changes"] = written.changes
        record["valid_for"] = f"{s.family} {s.version}"
        said = (f"{s.environ}: wrote {path} (valid for {record['valid_for']} only); load it "
                "with " + " ".join(f"{k}={v}" for k, v in record["load"].items())
                + f"; it changes: {written.changes}")
    (where / "recommendation.json").write_text(json.dumps(record, indent=1) + "\n")
    (where / "recommendation.md").write_text("\n".join(lines) + "\n")
    return said


def run(args, ds: Dataset) -> int:
    settings = detect.Settings(threshold=args.threshold, alpha=args.alpha)
    try:
        found, said = tune.studies(_points(args, ds), args.mapping, args.threshold,
                                   settings, args.allow_unproven, _unwritable)
    except tune.NothingToRecommend as err:
        print(f"omb-review tune: nothing to recommend: {err}", file=sys.stderr)
        return EXIT_NOTHING
    slower, unread = narrow.slower_cells(args.narrow or [])
    for s in found:
        s.unexplained = narrow.narrow(s, slower)
        if args.narrow:
            mine = sum(c.environ == s.environ for c in slower)
            said.append(f"{s.environ}: {mine} slower size(s) in the proofs of --narrow, "
                        f"{sum(c.narrowed is not None for c in s.cells)} cell(s) narrowed, "
                        f"{len(s.unexplained)} served by no rule")
    for line in [*said, *unread]:
        print(f"omb-review tune: {line}", file=sys.stderr)
    wrote = 0
    for s in found:
        lines = tune.table(s)
        print("\n".join(lines) + "\n")
        if not s.rules and not s.unexplained:
            narrowed = sum(c.narrowed is not None for c in s.cells)
            why = (f"every rule was narrowed away by the proof ({narrowed} cells)" if narrowed
                   else "the default was as fast as every proven algorithm, beyond the noise, "
                   f"in all {len(s.cells)} cells")
            print(f"omb-review tune: {s.environ}: nothing to recommend: {why}", file=sys.stderr)
            continue
        print(_write(args.out, s, lines, args.allow_unproven))
        wrote += 1
    return 0 if wrote else EXIT_NOTHING
