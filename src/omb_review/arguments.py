"""The options of ``omb-review``'s subcommands: its grammar (:func:`parser`) and the parsers of
its option values (dates, ranges, ``NAME=NUMBER``, size lists), each refusing bad input with
the form it expects. What each subcommand does with them: :mod:`omb_review.cli`."""

from __future__ import annotations

import argparse
from datetime import datetime, timezone
from pathlib import Path

from omb_review.judge.check import EXIT_NEW_SERIES, EXIT_NOTHING_JUDGED
from omb_review.judge.detect import Settings
from omb_review.judge.side_by_side import Rule
from omb_review.read import importer
from omb_review.read.siteconfig import default_config


def _when(text: str) -> datetime:
    """ISO date or date-time; without a zone it is UTC."""
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a date; use e.g. 2026-05-01 or 2026-05-01T12:00+02:00") from None
    return value if value.tzinfo else value.replace(tzinfo=timezone.utc)


def _range(text: str) -> tuple[datetime, datetime]:
    start, sep, end = text.partition("..")
    if not sep:
        raise argparse.ArgumentTypeError(f"{text!r}: give START..END, e.g. 2026-01-01..2026-03-01")
    return _when(start), _when(end)


def _assignment(shape: str):
    """Parser of ``NAME=NUMBER`` options; ``shape`` is what the error message asks for."""

    def parse(text: str) -> tuple[str, float]:
        name, _sep, value = text.rpartition("=")
        try:
            return name, float(value)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r}: give {shape}") from None

    return parse


parse_override = _assignment("PATTERN=FRACTION, e.g. '*osu_latency*latency_0 *=0.2'")
_peak = _assignment("SYSTEM:PARTITION=MB/s, e.g. cluster:cpu=12500")


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("perflog_dir", type=Path, metavar="PERFLOG_DIR",
                   help="ReFrame perflog directory (all *.log and rotated *.log.hN below it)")
    p.add_argument("--reports", type=Path, action="append", default=[],
                   help="extra ReFrame JSON run report (file or directory; repeatable); "
                   "PERFLOG_DIR/reports/*.json is read anyway")
    p.add_argument("--db", type=Path, action="append", default=[],
                   help="extra ReFrame results database (SQLite; repeatable); "
                   "PERFLOG_DIR/results.db is read anyway")
    p.add_argument("--perflogs-only", action="store_true",
                   help="do not read PERFLOG_DIR/reports or PERFLOG_DIR/results.db")
    p.add_argument("--system", action="append", help="only these systems (repeatable)")
    p.add_argument("--cache-dir", type=Path, help="cache location (default ~/.cache/omb-review)")
    p.add_argument("--no-cache", action="store_true", help="parse everything, write no cache")
    p.add_argument("--naive-tz", default="UTC",
                   help="time zone of perflog stamps written without one (default UTC)")


def _gate_options(p: argparse.ArgumentParser) -> None:
    g = p.add_argument_group("windows and thresholds")
    g.add_argument("--since", type=_when, help="judged: the sessions at/after this date (and "
                   "the ones just before, up to --confirm)")
    g.add_argument("--latest", type=int, help="judged: the last N sessions of each series")
    g.add_argument("--session-gap", type=float, default=12.0, metavar="HOURS",
                   help="a system's judged session: its runs within HOURS of its newest (12)")
    g.add_argument("--baseline", type=_range, metavar="START..END",
                   help="baseline window (default: up to --baseline-runs sessions before the "
                   "judged ones)")
    g.add_argument("--baseline-runs", type=int, default=30, metavar="SESSIONS",
                   help="default baseline size, in sessions (30)")
    g.add_argument("--confirm", type=int, default=Settings.confirm, metavar="SESSIONS",
                   help="sessions that must each be worse for a regression; fewer are a WATCH "
                   f"(default {Settings.confirm}; 1: one session decides)")
    g.add_argument("--min-sizes", type=int, default=Settings.min_sizes, metavar="N",
                   help="adjacent message sizes a change must hold over to be named "
                   f"(default {Settings.min_sizes})")
    g.add_argument("--z", type=float, default=Settings.z_session, dest="z_session",
                   help="a session is worse beyond this many sigmas of the noise sessions have "
                   f"shown in its series (default {Settings.z_session})")
    g.add_argument("--threshold", type=float, default=0.05,
                   help="smallest relative change reported (default 0.05 = 5%%)")
    g.add_argument("--override", type=parse_override, action="append", default=[],
                   metavar="PATTERN=FRACTION",
                   help="threshold for series whose name matches the shell pattern (repeatable; "
                   "last match wins)")
    g.add_argument("--alpha", type=float, default=0.01, help="Mann-Whitney significance (0.01)")
    g.add_argument("--no-canary", action="store_false", dest="canary",
                   help="judge each library alone: a change every other library of the same "
                   "sessions shares is otherwise SHARED (the machine's), not a regression")
    g.add_argument("--fdr", action="store_true",
                   help="alpha bounds the false discovery rate over all series (Benjamini-"
                   "Hochberg) instead of each series' false-alarm rate: for noisy machines and "
                   "latest windows of 10+ runs")


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="omb-review", description="Trend review of ReFrame perflogs of the OSU benchmarks.")
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser("report", help="interactive HTML report (one file)",
                         description="Write OUT/report.html: self-contained, opens "
                         "offline in a browser.")
    _common(rep)
    _gate_options(rep)
    rep.add_argument("-o", "--out", type=Path, required=True, help="output directory")
    rep.add_argument("--split", type=_when, help="before/after date for the size curves")
    rep.add_argument("--split-tag", help="session tag that starts the 'after' curves")
    rep.add_argument("--link-peak", type=_peak, action="append", default=[],
                     metavar="SYSTEM:PARTITION=MBPS",
                     help="link peak for the Hockney table (overrides the configuration's)")
    rep.add_argument("-C", "--config", type=lambda t: [Path(f) for f in t.split(":") if f],
                     default=default_config(), metavar="FILE[:FILE]",
                     help="ReFrame configuration (as reframe -C) whose partitions declare "
                     "extras.link_peak_mbs (default: $RFM_CONFIG_FILES)")
    flt = sub.add_parser("fleet", help="the slow node or link of a --mode fleet run",
                         description="Name the slow node, link or switch group again from "
                         "the perflog of a fleet run (exit 1 when one is named).")
    flt.add_argument("perflogs", type=Path, help="the perflog directory")
    flt.add_argument("--tolerance", type=float,
                     help="a figure this many times worse than the fleet's is slow (default: "
                     "the partition's extras fleet_tolerance in --config, else 2)")
    flt.add_argument("-C", "--config", type=lambda t: [Path(f) for f in t.split(":") if f],
                     default=default_config(), metavar="FILE[:FILE]",
                     help="ReFrame configuration (as reframe -C) whose partitions may declare "
                     "extras.fleet_tolerance (default: $RFM_CONFIG_FILES)")
    chk = sub.add_parser("check", help="CI gate: exit 1 on a performance regression",
                         description="Judge the latest runs of every series against a baseline.")
    _common(chk)
    _gate_options(chk)
    chk.add_argument("--json", type=Path, default=Path("omb-review-check.json"),
                     help="where to write the verdicts (default ./omb-review-check.json)")
    chk.add_argument("--show", type=int, default=50,
                     help="regression findings (curves) printed (50)")
    chk.add_argument("--allow-empty", action="store_true",
                     help=f"exit 0 when no series could be judged (a site's first runs); "
                     f"otherwise that exits {EXIT_NOTHING_JUDGED}")
    chk.add_argument("--allow-new", action="store_true",
                     help="exit 0 when series of the judged session have no baseline yet (new "
                     "on purpose); otherwise that exits "
                     f"{EXIT_NEW_SERIES}: a new or renamed library is not a pass")
    cmp_ = sub.add_parser(
        "compare", help="an upgrade judged side by side: old and new library in one session",
        description="Judge NEW against OLD from the launches of one session that ran both, "
        "pair by pair (reframe -p '^(OLD|NEW)$' --exec-policy serial --reruns N: "
        "docs/upgrade-workflow.md). Exit 1 on a regression, 3 when no curve has enough pairs.")
    _common(cmp_)
    cmp_.add_argument("--before", required=True, metavar="ENVIRON",
                      help="the old library's ReFrame environment")
    cmp_.add_argument("--after", required=True, metavar="ENVIRON",
                      help="the new library's ReFrame environment")
    cmp_.add_argument("--since", type=_when,
                      help="only the launches at/after this date (the side-by-side session)")
    cmp_.add_argument("--threshold", type=float, default=Rule.threshold,
                      help="smallest change named (default %(default)s = 10%%)")
    cmp_.add_argument("--bandwidth-threshold", type=float, default=Rule.bandwidth_threshold,
                      help="smallest change named for bandwidth and message rate (default "
                      "%(default)s; none: --threshold)")
    cmp_.add_argument("--alpha", type=float, default=Rule.alpha,
                      help="signed-rank significance of a run of sizes (%(default)s)")
    cmp_.add_argument("--min-sizes", type=int, default=Rule.min_sizes, metavar="N",
                      help="adjacent message sizes judged as one (%(default)s)")
    cmp_.add_argument("--min-pairs", type=int, default=Rule.min_pairs, metavar="N",
                      help="pairs of launches a curve needs to be judged (%(default)s)")
    cmp_.add_argument("--couples", action="store_true",
                      help="judge couples of pairs launched in both orders (an order effect "
                      "cancels; 6 couples reach p 1/64 only), not the pairs")
    cmp_.add_argument("--mode-gap", type=float, default=Rule.mode_gap, metavar="X",
                      help="a size whose launches fall in two modes X times apart or more "
                      "leaves out the pairs split between them (%(default)s; 0: no mode rule)")
    cmp_.add_argument("--json", type=Path, help="also write each curve's verdict here")
    cmp_.add_argument("--again", type=Path, metavar="FILE",
                      help="write here the ReFrame name patterns (-n, one a line; empty: none) "
                      "of the tests of the blind curves: ok, but at their noise the rule would "
                      f"not have found {Rule.blind_factor:g} times the threshold; scripts/"
                      "upgrade.sh side-by-side runs them again")
    base = sub.add_parser("baseline", help="derive ReFrame reference values (YAML)",
                          description="Reference values per series from a stable window.")
    _common(base)
    base.add_argument("--window", type=_range, metavar="START..END",
                      help="stable window (default: each series' last segment)")
    base.add_argument("-o", "--output", type=Path, help="YAML file (default: stdout)")
    base.add_argument("--index-from", type=Path,
                      help="reuse $index of an existing reference file (default: --output)")
    base.add_argument("--floor", type=float, default=0.05, help="tightest bound (0.05)")
    base.add_argument("--generous", type=float, default=0.5,
                      help="bound on the good side (0.5)")
    base.add_argument("--provisional-tolerance", type=float, default=0.25,
                      help="bad-side bound of a provisional reference (a series with fewer "
                      "runs than check needs) where OSU reported no spread (0.25)")
    base.add_argument("--no-provisional", action="store_true",
                      help="write no provisional reference: list the series with too few runs "
                      f"and exit {EXIT_NEW_SERIES}")
    tun = sub.add_parser("tune", help="tuning recommendation and the library's tuning file",
                         description="From proven algorithm sweeps (OsuCollectiveSweep with "
                         "-S measure_default=1, repeated): per environment the fastest algorithm "
                         "per collective, scale and size range where it beats the default beyond "
                         "the noise, and the library's own tuning file (docs/algorithms.md).")
    _common(tun)
    tun.add_argument("-o", "--out", type=Path, required=True,
                     help="output directory: OUT/<environ>/ gets the file and its table")
    tun.add_argument("--partition", help="only this partition")
    tun.add_argument("--environ", action="append", help="only these environments (repeatable)")
    tun.add_argument("--mapping", default="core", help="the mapping studied (core)")
    tun.add_argument("--nodes", type=int, help="only runs on this many nodes")
    tun.add_argument("--threshold", type=float, default=0.05,
                     help="smallest gain over the default recommended (0.05 = 5%%)")
    tun.add_argument("--alpha", type=float, default=0.01, help="Mann-Whitney significance (0.01)")
    tun.add_argument("--allow-unproven", action="store_true",
                     help="use algorithms forced but not provable (Intel MPI: "
                     "'forced-not-proven') and write a file whose load cannot be proven "
                     "never slower (Intel MPI's); the table says so")
    tun.add_argument("--narrow", action="append", type=Path, metavar="DIR",
                     help="a proving run's ReFrame prefix (OsuTunedCollective -S tuning_dir=...;"
                     " repeatable): each rule that could serve a size the proof found slower "
                     "leaves that size to the library; a slower size no rule explains writes "
                     "no file (docs/tuning.md)")
    res = sub.add_parser("results-dir", help="where a ReFrame configuration's perflogs go",
                         description="Print the directory the configuration's filelog perflog "
                         "handler writes under (what check, report and upgrade.sh must read).")
    res.add_argument("-C", "--config", required=True, metavar="FILE[:FILE]",
                     type=lambda t: [Path(f) for f in t.split(":") if f],
                     help="the ReFrame configuration, as reframe -C (files joined by ':')")
    imp = sub.add_parser("import-osu", help="raw OSU output files -> perflog records (history)",
                         description=importer.__doc__.split("\n\n")[0])
    imp.add_argument("osu_dir", type=Path, metavar="OSU_DIR",
                     help="directory of OSU output files (any depth, several runs per file)")
    imp.add_argument("--map", type=Path, required=True, dest="mapping", metavar="MAPPING",
                     help="YAML rules: path pattern -> system, partition, environ, MPI, "
                     "placement, date (docs/review.md#importing-raw-osu-outputs)")
    imp.add_argument("-o", "--out", type=Path, required=True,
                     help="perflog directory to write to (e.g. perflogs/; files "
                     "<system>/<partition>/imported-<Check>-<id>.log are replaced)")
    imp.add_argument("--sizes", type=_sizes, metavar="N,N,...",
                     help="message sizes to import (default: all; the checks report "
                     "1,8,1024,65536,1048576,4194304 unless told otherwise)")
    return parser


def _sizes(text: str) -> set[int]:
    try:
        return {int(s) for s in text.split(",") if s.strip()}
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: give sizes in bytes, e.g. 1,8,1024") from None
