"""``omb-review``: report, check and baseline subcommands over a ReFrame perflog tree."""

from __future__ import annotations

import sys
from datetime import datetime, timedelta, timezone

import polars as pl

from omb_review import arguments
from omb_review.judge import gate
from omb_review.judge.check import EXIT_NEW_SERIES, EXIT_NOTHING_JUDGED, EXIT_USAGE, check
from omb_review.judge.detect import Settings
from omb_review.read import importer
from omb_review.read.ingest import Dataset, load
from omb_review.read.siteconfig import (
    ConfigError,
    fleet_tolerances,
    link_peaks,
    perflog_dir,
)


def _load(args) -> Dataset:
    ds = load(args.perflog_dir, args.reports, args.db, args.cache_dir, not args.no_cache,
              args.naive_tz, not args.perflogs_only)
    if args.system:
        present = sorted(ds.frame["system"].cast(pl.String).unique().drop_nulls())
        unnamed = ds.frame["system"].null_count()
        ds.frame = ds.frame.filter(pl.col("system").cast(pl.String).is_in(args.system))
        if ds.frame.height == 0:
            lacking = (f"; {unnamed} records name no system (their perflog has no 'system' "
                       "column): add %(check_system)s and %(check_partition)s to the perflog "
                       "handler's 'format'" if unnamed else "")
            raise ValueError(f"no records for --system {','.join(args.system)}; "
                             f"systems present: {', '.join(present) or 'none'}{lacking}")
    if ds.frame.height == 0:
        why = f"; {len(ds.problems)} lines could not be read, e.g. {ds.problems[0]}" if (
            ds.problems) else "; is it a ReFrame perflog directory?"
        raise ValueError(f"{args.perflog_dir}: no performance records found"
                         f"{' for ' + ','.join(args.system) if args.system else ''}{why}")
    if ds.problems:
        print(f"omb-review: {len(ds.problems)} input lines could not be read, e.g.\n  "
              + "\n  ".join(map(str, ds.problems[:5])), file=sys.stderr)
    for note in ds.notes:
        print(f"omb-review: {note}", file=sys.stderr)
    return ds


def _settings(args) -> Settings:
    return Settings(threshold=args.threshold, alpha=args.alpha,
                    baseline_runs=args.baseline_runs, fdr=args.fdr, confirm=args.confirm,
                    min_sizes=args.min_sizes, z_session=args.z_session, canary=args.canary)


def _windows(args) -> gate.Windows:
    return gate.Windows(args.since, args.latest, timedelta(hours=args.session_gap),
                        args.baseline)


def cmd_check(args) -> int:
    from omb_review.judge import gate_output

    ds = _load(args)
    out = check(ds.frame, _windows(args), _settings(args), args.override, args.allow_empty,
                args.allow_new)
    ds.notes += out.notes
    for line in gate_output.report(out.results, out.found, args.show, _settings(args)):
        print(line)
    counts = gate_output.counts(out.results)
    print(f"{len(out.results)} series: "
          + ", ".join(f"{counts[s]} {s}" for s in gate_output.STATUSES)
          + f" ({counts['new']} of them new); "
          f"{len(out.regressions())} regression findings (curves); "
          f"judged {gate_output.judged(out.results)}; "
          f"{len(ds.problems)} unreadable lines; verdicts in {args.json}")
    gate_output.write_json(args.json, out.results, out.found, ds.problems, ds.notes)
    for line in out.why:
        print(line, file=sys.stderr)
    return out.code


def cmd_report(args) -> int:
    from omb_review.report import build

    try:
        peaks = link_peaks(args.config) if args.config else {}
        tolerances = fleet_tolerances(args.config) if args.config else {}
    except ConfigError as err:
        print(f"omb-review: {err}; give --config FILE or --link-peak SYSTEM:PARTITION=MBPS",
              file=sys.stderr)
        return EXIT_USAGE
    ds = _load(args)
    results = check(ds.frame, _windows(args), _settings(args), args.override).results
    path = build.build(args, ds, results, peaks | dict(args.link_peak), tolerances)
    print(f"wrote {path}")
    return 0


def _baseline_header(args, system: str, refs) -> list[str]:
    from omb_review.judge.detect import Settings

    need = Settings().min_baseline
    return [
        f"ReFrame references for {system}, derived by omb-review baseline from {args.perflog_dir}",
        f"on {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC. Window: "
        + (f"{args.window[0]:%Y-%m-%d}..{args.window[1]:%Y-%m-%d}" if args.window
           else "each series' last stable segment (after its last change point)") + ".",
        "Entries: [ref (median), lower, upper (relative), unit]  # evidence",
        *([f"{refs.provisional} entries are PROVISIONAL: from fewer than {need} runs; derive "
           f"again after {need} sessions to replace them"] if refs.provisional else []),
        *refs.notes[:20],
    ]


def cmd_baseline(args) -> int:
    from omb_review.references import baseline

    ds = _load(args)
    system = (args.system or [None])[0]
    if system is None:
        raise ValueError("give --system SYSTEM (reference files are per system)")
    known = baseline.known_indexes(args.index_from or args.output)
    limits = baseline.Limits(args.floor, args.generous, args.provisional_tolerance,
                             not args.no_provisional)
    refs = baseline.derive(ds.frame, system, known, args.window, limits=limits)
    for line in refs.short:
        print(f"NO REFERENCE {line}", file=sys.stderr)
    if not refs.written:
        print(f"omb-review baseline: no reference derived for {system} ({len(refs.short)} "
              "series, the reasons above); nothing written", file=sys.stderr)
        return EXIT_NOTHING_JUDGED
    text = baseline.render(refs.indexes, refs.entries, _baseline_header(args, system, refs))
    said = (f"wrote {refs.written} references ({refs.provisional} provisional), "
            f"{refs.collisions} shared keys, {len(refs.short)} series without one")
    if args.output:
        args.output.write_text(text)
        print(f"{said}, to {args.output}")
    else:
        sys.stdout.write(text)
        print(said, file=sys.stderr)
    if refs.short and args.no_provisional:
        print(f"omb-review baseline: {len(refs.short)} series have too few runs for a "
              f"reference (NO REFERENCE above); exit {EXIT_NEW_SERIES}", file=sys.stderr)
        return EXIT_NEW_SERIES
    return 0


def cmd_tune(args) -> int:
    from omb_review.tuning import tune_output

    ds = _load(args)
    return tune_output.run(args, ds)


def cmd_import(args) -> int:
    if not args.osu_dir.is_dir():
        raise FileNotFoundError(f"{args.osu_dir}: not a directory of OSU outputs")
    rules = importer.load_rules(args.mapping)
    result = importer.import_dir(args.osu_dir, rules, args.sizes, args.out)
    written = importer.write(result)
    records = sum(map(len, result.files.values()))
    print(f"imported {result.tables} tables ({records} records) into {len(written)} files "
          f"under {args.out}; {len(result.refused)} outputs refused, {len(result.skipped)} "
          f"with no figure to import, {len(result.unmatched)} files matched no rule")
    for line in result.refused:
        print(f"REFUSED {line}")
    for line in result.skipped:
        print(f"SKIPPED {line}")
    for rel in result.unmatched:
        print(f"NO RULE {rel}")
    return 0 if result.tables else 1


def cmd_fleet(args) -> int:
    from omb_review.judge import fleet

    return fleet.command(args)


def cmd_results_dir(args) -> int:
    print(perflog_dir(args.config))
    return 0


def cmd_compare(args) -> int:
    import json
    import re

    from omb_review.judge import side_by_side as sbs

    ds = _load(args)
    frame = ds.frame
    if args.since:
        frame = frame.filter(pl.col("time") >= args.since)
    present = sorted(frame["environ"].cast(pl.String).unique().drop_nulls())
    lacking = [e for e in (args.before, args.after) if e not in present]
    if lacking:
        raise ValueError(f"no launches of {' and '.join(lacking)}"
                         f"{' since ' + str(args.since) if args.since else ''}; environments "
                         f"present: {', '.join(present) or 'none'}")
    rule = sbs.Rule(threshold=args.threshold, bandwidth_threshold=args.bandwidth_threshold,
                    alpha=args.alpha, min_sizes=args.min_sizes,
                    min_pairs=args.min_pairs, mode_gap=args.mode_gap or None,
                    by_couples=args.couples)
    curves = sbs.judge(sbs.pair_curves(frame, args.before, args.after), rule)
    counts = {s: sum(c.status == s for c in curves) for s in
              (sbs.REGRESSION, sbs.IMPROVEMENT, sbs.OK, sbs.INSUFFICIENT)}
    for c in curves:
        if c.status in (sbs.REGRESSION, sbs.IMPROVEMENT) or c.alone:
            print(sbs.describe(c))
    alone = sum(bool(c.alone) for c in curves)
    busy = max((c.busy_pairs for c in curves), default=0)
    mixed = max((c.mixed_pairs for c in curves), default=0)
    bimodal = [c for c in curves if c.bimodal]
    split = max((c.split_pairs for c in curves), default=0)
    print(f"{args.before} -> {args.after}: {len(curves)} curves measured by both: "
          + ", ".join(f"{n} {s}" for s, n in counts.items())
          + (f" ({alone} of the ok moved alone: a secondary figure beside its unchanged "
             "headline)" if alone else "")
          + (f"; up to {busy} pairs a curve left out (a launch on a busy node)" if busy else "")
          + (f"; {len(bimodal)} curve(s) with launches in two modes (x{rule.mode_gap} or "
             f"more apart), up to {split} pairs a size left out there (its two launches in "
             "different modes)" if bimodal else ""))
    if mixed:
        print(f"omb-review compare: up to {mixed} pairs a curve left out: {args.before} and "
              f"{args.after} ran OSU with different counts (-x/-i, each chosen from its own "
              "history); run both with the same: -S iterations_from_history=0 (scripts/"
              "upgrade.sh side-by-side does), or one --mode", file=sys.stderr)
    ordered = [c for c in curves if c.order_moved and not c.couples]
    if ordered:
        print(f"omb-review compare: on {len(ordered)} curve(s) the pairs with {args.after} "
              f"launched first differ from those with it second (the order moves them: "
              + "; ".join(c.label for c in ordered[:3])
              + (f" and {len(ordered) - 3} more" if len(ordered) > 3 else "")
              + "): judged as pairs, where the order adds spread; --couples judges couples "
              "of both orders, in which it cancels", file=sys.stderr)
    blind = [c for c in curves if c.blind]
    if blind:
        see = rule.blind_factor * 100
        print(f"omb-review compare: {len(blind)} curve(s) ok but blind: at their noise a change "
              f"of {see * rule.threshold:.0f} % ({see * rule.limit('MB/s'):.0f} % bandwidth) "
              "would not have been found: " + "; ".join(
                  f"{c.label} ({c.n_pairs} pairs)" for c in blind[:6])
              + (f" and {len(blind) - 6} more" if len(blind) > 6 else "")
              + ": run their tests again beside these sessions (more pairs; --again FILE "
              "writes their -n patterns; scripts/upgrade.sh side-by-side does)", file=sys.stderr)
    if args.again:
        patterns = sorted({"^" + re.escape(n.replace(" ", "")) + "$"
                           for c in blind for n in c.names})
        args.again.write_text("".join(f"{p}\n" for p in patterns))
    if args.json:
        args.json.write_text(json.dumps([
            {"curve": c.label, "unit": c.keys["unit"], "status": c.status, "pairs": c.n_pairs,
             "couples": c.couples, "sizes": c.sizes_moved, "ratio": c.change, "p": c.p,
             "alone": c.alone or None, "blind": c.blind, "tests": sorted(c.names),
             "bimodal": c.bimodal, "split_pairs": c.split_pairs,
             "order_moved": c.order_moved}
            for c in curves], indent=1))
    if counts[sbs.REGRESSION]:
        return 1
    if not curves or counts[sbs.INSUFFICIENT] == len(curves):
        most = max((c.n_pairs for c in curves), default=0)
        why = (f" ({busy} left out: a launch on a busy node; run it again on a quiet one)"
               if busy else "") + (f" ({mixed} left out: different OSU counts)" if mixed else "")
        print(f"omb-review compare: no curve has {rule.min_pairs} pairs of launches (at "
              f"most {most}{why}): run both environments in one session with --exec-policy "
              f"serial --reruns {rule.min_pairs - 1} (or more); scripts/upgrade.sh "
              f"side-by-side: OMB_SIDE_BY_SIDE_PAIRS={2 * rule.min_couples} or more (half in "
              f"each order)", file=sys.stderr)
        return EXIT_NOTHING_JUDGED
    return 0


def main(argv: list[str] | None = None) -> int:
    args = arguments.parser().parse_args(argv)
    command = {"check": cmd_check, "report": cmd_report, "baseline": cmd_baseline,
               "import-osu": cmd_import, "tune": cmd_tune,
               "results-dir": cmd_results_dir, "fleet": cmd_fleet,
               "compare": cmd_compare}[args.command]
    try:
        return command(args)
    except (FileNotFoundError, ValueError) as err:
        print(f"omb-review {args.command}: error: {err}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
