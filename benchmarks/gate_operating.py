"""The gate's operating characteristics, measured on labelled real sessions: how often it fails
an unchanged library, how often and how soon it finds a real or injected regression.

    python benchmarks/gate_operating.py [DATA ...] [--positions 6] [--quick]

DATA: folders recorded by ``benchmarks/gate_record.py``: each a set of
sessions with its ``sessions.jsonl`` (label ``aa`` or ``regression``, the benchmarks a
regression is expected to move) and its perflogs; default: every set of tests/data/gate.
The A/A sessions of each system are one history, in recording order, re-timed one night
apart (the order and every value as recorded). Every verdict below is
``omb_review.judge.check.check`` at its defaults, the function ``omb-review check`` runs:

- **nightly, A/A**: after each A/A night with a baseline (min_baseline + confirm nights), the
  gate at its defaults on the history so far: exit 1 is a false alarm (nothing changed);
  exit 3 (nothing judged: every judged run on a busy node) is counted apart;
- **nightly, real regressions**: a regression set's sessions as the nights after the A/A
  history at ``--positions`` points: found on night 1 or 2 when the gate exits 1 naming a curve
  of an expected benchmark (the other benchmarks it named are listed: a library setting often
  moves the collectives built on what it changed);
- **nightly, injected steps**: the two A/A nights after each point, one curve's sizes made worse
  (latency x1.1/1.2/1.5, bandwidth x0.9/0.8; one size, or three adjacent ones): found when that
  curve is a regression on night 2 (a watch on night 1);
- **upgrade** (``scripts/upgrade.sh``: 3 sessions before, 2 after, judged together with
  ``--since``, nothing else in the results directory): A/A upgrades over every window of 5 A/A
  sessions, the real regressions after 3 A/A sessions, and +20 % latency / -10 % bandwidth
  over three adjacent sizes of every curve.

Prints one table per system and the time each decision took (sessions, and the sessions'
recorded wall time). ``--quick``: fewer positions and curves (for a smoke test).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import polars as pl

from omb_review.judge import gate
from omb_review.judge.check import EXIT_SHARED, check
from omb_review.judge.detect import Settings
from omb_review.read.ingest import load

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "tests" / "data" / "gate"
DAY0 = datetime(2026, 1, 1, 2, 0, tzinfo=timezone.utc)
LATENCY_STEPS = (0.1, 0.2, 0.5)
BANDWIDTH_STEPS = (0.1, 0.2)
UPGRADE_STEP = {"latency": 0.2, "bandwidth": 0.1}


@dataclass
class Session:
    tag: str
    label: str
    expect: list[str]
    regression: str
    seconds: float
    frame: pl.DataFrame  # its records, time relative to its first record (us)
    system: str
    changed: str = ""  # the environment a regression is in (others beside it: its canaries)

    @property
    def quiet(self) -> bool:
        """Most of its runs on a quiet node (node_state): a session the gate can judge."""
        states = self.frame["node_state"].cast(pl.String)
        return bool((~states.str.starts_with("busy").fill_null(False)).mean() >= 0.5)


def _sets(paths: list[Path]) -> list[Path]:
    found = []
    for p in paths:
        if (p / "sessions.jsonl").exists():
            found.append(p)
        elif p.is_dir():
            found += _sets(sorted(p.iterdir()))
    return sorted(set(found))


def read(paths: list[Path], tmp: Path) -> list[Session]:
    """Every recorded session, in recording order."""
    out = []
    for d in _sets(paths):
        frame = load(d, use_cache=False).frame
        # the column came after the first recordings; their tags are one per session
        frame = frame.with_columns(pl.coalesce(pl.col("session_id"),
                                               pl.col("session_tag").cast(pl.String)))
        for line in (d / "sessions.jsonl").read_text().splitlines():
            info = json.loads(line)
            part = frame.filter(pl.col("session_tag").cast(pl.String) == info["tag"])
            if part.height == 0:
                print(f"{d.name}: session {info['tag']} has no records, left out",
                      file=sys.stderr)
                continue
            t0 = part["time"].min()
            out.append(Session(info["tag"], info["label"], info.get("expect", []),
                               info.get("regression", ""), info.get("seconds", 0.0),
                               part.with_columns(offset=(pl.col("time") - t0)),
                               str(part["system"][0]), info.get("changed", "")))
    return sorted(out, key=lambda s: s.frame["time"].min())


def night(sessions: list[Session]) -> pl.DataFrame:
    """The sessions as consecutive nights (their own order and offsets kept)."""
    return pl.concat([s.frame.with_columns(time=pl.lit(DAY0 + timedelta(days=i)) + pl.col("offset"))
                      for i, s in enumerate(sessions)], how="vertical_relaxed").drop("offset")


#: The gate's settings: its defaults unless the command line explores others (--z ...).
SETTINGS = Settings()


def judge(frame: pl.DataFrame, since: datetime | None = None):
    return check(frame, gate.Windows(since=since), SETTINGS, [], quiet=True)


def _curves(frame: pl.DataFrame) -> list[tuple[dict, str, list[str]]]:
    """Curves with three or more sizes of a latency or bandwidth metric: keys, kind, perf_vars."""
    sized = frame.filter(pl.col("perf_var").cast(pl.String).str.contains(r"_\d+$")).with_columns(
        metric=pl.col("perf_var").cast(pl.String).str.replace(r"_\d+$", ""),
        size=pl.col("perf_var").cast(pl.String).str.extract(r"_(\d+)$").cast(pl.Int64))
    keys = ["lineage", "benchmark", "placement", "num_tasks", "metric", "unit"]
    out = []
    for row in sized.group_by(keys).agg(pl.col("size").unique().sort()).iter_rows(named=True):
        kind = {"us": "latency", "MB/s": "bandwidth"}.get(row["unit"])
        if kind and len(row["size"]) >= 3:
            out.append(({k: row[k] for k in keys[:4]}, kind,
                        [f"{row['metric']}_{s}" for s in row["size"]]))
    return sorted(out, key=str)


def _curve(keys: dict) -> pl.Expr:
    hit = pl.lit(True)
    for k, v in keys.items():
        hit = hit & (pl.col(k).is_null() if v is None else pl.col(k).cast(pl.String) == str(v))
    return hit


def _position(keys: dict) -> dict:
    """The curve's keys but its library: the curve and its canaries (the same curve of the other
    libraries of the sessions, omb_review.judge.canary)."""
    return {k: v for k, v in keys.items() if k != "lineage"}


def inject(frame: pl.DataFrame, keys: dict, perf_vars: list[str], factor: float) -> pl.DataFrame:
    """The curve's records and its canaries' (its verdict depends on nothing else), the curve's
    ``perf_vars`` scaled."""
    hit = pl.col("perf_var").cast(pl.String).is_in(perf_vars) & _curve(keys)
    return frame.filter(_curve(_position(keys))).with_columns(
        value=pl.when(hit).then(pl.col("value") * factor).otherwise(pl.col("value")))


def only(sessions: list[Session], keys: dict) -> list[Session]:
    return [Session(s.tag, s.label, s.expect, s.regression, s.seconds,
                    s.frame.filter(_curve(_position(keys))), s.system) for s in sessions]


def _named(out, keys: dict, benchmarks: list[str] | None = None, changed: str = "") -> bool:
    """Whether a regression finding names this curve (or, with ``benchmarks``, any of them;
    an empty list: any finding; with ``changed``, of that environment's lineage)."""
    for f in out.regressions():
        k = f.keys
        if changed and str(k.get("lineage")) != changed:
            continue
        if benchmarks is not None:
            if not benchmarks or str(k.get("benchmark")) in benchmarks:
                return True
        elif all(str(k.get(n)) == str(v) for n, v in keys.items()
                 if n in ("lineage", "benchmark", "placement", "num_tasks")):
            return True
    return False


def _rate(hits: int, n: int) -> str:
    return f"{hits}/{n} ({100 * hits / n:.0f} %)" if n else "-"


def nightly(aa: list[Session], regs: dict[str, list[Session]], args) -> list[str]:
    s = SETTINGS
    first = s.min_baseline + s.confirm
    lines, fa, busy, shared, judged = [], 0, 0, 0, 0
    names: dict[str, int] = {}
    for i in range(first, len(aa) + 1):
        out = judge(night(aa[:i]))
        judged += 1
        if out.code == 1:
            fa += 1
            for f in out.regressions():
                names[f.curve] = names.get(f.curve, 0) + 1
        busy += out.code == 3
        shared += out.code == EXIT_SHARED
    lines.append(f"nightly A/A: false alarms {_rate(fa, judged)} of nights; not judgeable "
                 f"(node busy, exit 3) {busy}; said as the machine's (every library moved, "
                 f"exit {EXIT_SHARED}) {shared}")
    lines += [f"    named: {c} ({n} nights)" for c, n in sorted(names.items())]
    points = _points(len(aa), first, args.positions)
    calm = [i for i, s in enumerate(aa) if s.quiet]  # the nights the gate can judge
    for name, reg in regs.items():
        found1 = found2 = 0
        elsewhere: set[str] = set()
        for p in points:
            first_out = judge(night([*aa[:p], reg[0]]))
            second_out = judge(night([*aa[:p], *reg[:2]])) if len(reg) > 1 else first_out
            found1 += _named(first_out, {}, reg[0].expect, reg[0].changed)
            found2 += (_named(first_out, {}, reg[0].expect, reg[0].changed)
                       or _named(second_out, {}, reg[0].expect, reg[0].changed))
            elsewhere |= {str(f.keys.get("benchmark")) for f in second_out.regressions()
                          if str(f.keys.get("benchmark")) not in reg[0].expect}
        lines.append(f"nightly, real regression {name} ({reg[0].regression}): found on night 1 "
                     f"{_rate(found1, len(points))}, by night 2 {_rate(found2, len(points))}; "
                     f"also named: {', '.join(sorted(elsewhere)) or 'nothing else'}")
    curves = _curves(night(aa))[:: 3 if args.quick else 1]
    for kind, steps in (("latency", LATENCY_STEPS), ("bandwidth", BANDWIDTH_STEPS)):
        for step in steps:
            for width in (1, 3):
                watch = hit = n = 0
                factor = 1 + step if kind == "latency" else 1 - step
                for keys, k, pv in curves:
                    if k != kind:
                        continue
                    for p in points:
                        nxt = [i for i in calm if i >= p][:2]  # the next two quiet nights
                        if len(nxt) < 2:
                            continue
                        target = pv[len(pv) // 2 - width // 2:][:width]
                        after = [aa[i] for i in nxt]
                        frames = [s.frame for s in after]
                        bad = [Session(s.tag, s.label, [], "", s.seconds,
                                       inject(f, keys, target, factor), s.system)
                               for s, f in zip(after, frames, strict=True)]
                        history = only(aa[:p], keys)
                        one = judge(night([*history, bad[0]]))
                        two = judge(night([*history, *bad]))
                        watch += any(f.status in ("watch", "regression") and _match(f, keys)
                                     for f in one.found)
                        hit += _named(two, keys)
                        n += 1
                sign = "+" if kind == "latency" else "-"
                lines.append(f"nightly, injected {kind} {sign}{step:.0%} on {width} size(s): "
                             f"watch on night 1 {_rate(watch, n)}, regression on night 2 "
                             f"{_rate(hit, n)}")
    return lines


def _match(f, keys: dict) -> bool:
    return all(str(f.keys.get(n)) == str(v) for n, v in keys.items())


def _points(n: int, first: int, count: int) -> list[int]:
    """``count`` history lengths spread from ``first`` to ``n`` (inclusive)."""
    if n <= first:
        return [n]
    step = max((n - first) // max(count - 1, 1), 1)
    return sorted(set(range(first, n + 1, step)) | {n})


def upgrade(aa: list[Session], regs: dict[str, list[Session]], args) -> list[str]:
    """Upgrades over the quiet A/A sessions (a busy one is not judged: it would be re-run)."""
    aa = [s for s in aa if s.quiet]
    lines, flagged, windows, other = [], 0, 0, []
    starts = range(0, len(aa) - 4)
    for j in starts:
        frame = night(aa[j:j + 5])
        out = judge(frame, DAY0 + timedelta(days=3))
        windows += 1
        flagged += out.code == 1
        other += [out.code] if out.code not in (0, 1) else []
    lines.append(f"upgrade A/A (3 before, 2 after): flagged {_rate(flagged, windows)}"
                 + (f"; not a pass otherwise (exit {', '.join(map(str, other))})" if other else ""))
    for name, reg in regs.items():
        if len(reg) < 2:
            continue
        found = sum(_named(judge(night([*aa[j:j + 3], *reg[:2]]), DAY0 + timedelta(days=3)),
                           {}, reg[0].expect, reg[0].changed) for j in starts)
        lines.append(f"upgrade, real regression {name}: found {_rate(found, len(starts))}")
    curves = _curves(night(aa))[:: 3 if args.quick else 1]
    for kind, step in UPGRADE_STEP.items():
        hit = n = 0
        for keys, k, pv in curves:
            if k != kind:
                continue
            for j in list(starts)[:: max(len(starts) // args.positions, 1)]:
                target = pv[len(pv) // 2 - 1:][:3]
                factor = 1 + step if kind == "latency" else 1 - step
                after = [Session(s.tag, s.label, [], "", s.seconds,
                                 inject(s.frame, keys, target, factor), s.system)
                         for s in aa[j + 3:j + 5]]
                out = judge(night([*only(aa[j:j + 3], keys), *after]),
                            DAY0 + timedelta(days=3))
                hit += _named(out, keys)
                n += 1
        sign = "+" if kind == "latency" else "-"
        lines.append(f"upgrade, injected {kind} {sign}{step:.0%} on 3 adjacent sizes: found "
                     f"{_rate(hit, n)}")
    return lines


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("data", type=Path, nargs="*", default=[DATA])
    p.add_argument("--positions", type=int, default=6,
                   help="history lengths at which regressions are spliced in (6)")
    p.add_argument("--quick", action="store_true", help="every third curve, 2 positions")
    p.add_argument("--z", type=float, default=Settings.z_session,
                   help="explore another --z than the gate's default")
    p.add_argument("--short-baseline", type=float, default=Settings.short_baseline)
    p.add_argument("--min-sizes", type=int, default=Settings.min_sizes)
    p.add_argument("--confirm", type=int, default=Settings.confirm)
    p.add_argument("--no-canary", action="store_false", dest="canary",
                   help="judge each library alone (the gate's --no-canary)")
    p.add_argument("--aa", default=":", metavar="START:END",
                   help="only these A/A sessions (a slice, in recording order), e.g. 20: to "
                   "measure on sessions a choice of settings never saw")
    args = p.parse_args()
    global SETTINGS
    SETTINGS = Settings(z_session=args.z, short_baseline=args.short_baseline,
                        min_sizes=args.min_sizes, confirm=args.confirm, canary=args.canary)
    if args.quick:
        args.positions = 2
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        every = read(args.data, Path(tmp))
    for system in sorted({s.system for s in every}):
        mine = [s for s in every if s.system == system]
        lo, _, hi = args.aa.partition(":")
        aa = [s for s in mine if s.label == "aa"][int(lo) if lo else None:int(hi) if hi else None]
        regs: dict[str, list[Session]] = {}
        for s in mine:
            if s.label == "regression":
                regs.setdefault(s.tag.rsplit("-", 1)[0], []).append(s)
        wall = sum(s.seconds for s in aa) / max(len(aa), 1)
        print(f"== {system}: {len(aa)} A/A sessions, {len(regs)} real regressions "
              f"({', '.join(f'{k}: {len(v)} sessions' for k, v in regs.items())}); a session "
              f"took {wall:.0f} s; a nightly regression is decided after 2 sessions, an "
              f"upgrade after 5 (3 before, 2 after)")
        for line in [*nightly(aa, regs, args), *upgrade(aa, regs, args)]:
            print(line, flush=True)
    print(f"settings: {SETTINGS}; benchmark time {time.monotonic() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
