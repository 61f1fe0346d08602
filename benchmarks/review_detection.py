"""How well ``omb-review check`` separates a real step from the noise of *your* perflogs.

    python benchmarks/review_detection.py PERFLOG_DIR [--latest 10] [--step 0.10]
        [--threshold 0.05] [--alpha 0.01] [--fdr] [--override PATTERN=THRESHOLD ...]

Slides the gate over the history of every series, as if it had run after each session: at
every position with at least ``--min-history`` runs before a window of the ``--latest`` runs,
the gate is judged twice on the same real values,

- as measured: a regression verdict is a false alarm (nothing was changed on purpose);
- with the latest window made ``--step`` worse (times x (1 + step), rates / (1 + step)):
  a regression verdict is a detection.

Prints, per series and in total, the false-alarm rate and the detection rate, and the gate's
outcome at the last position (what ``omb-review check --latest N`` says on the tree today);
then per gate run (positions counted back from each series' last run, which lines sessions up
when every series ran in every session): how often the gate would have gone red on the values
as measured, and how often it would have named every series had all been made worse.
The windows overlap, so the rates are descriptive, not independent trials.  Synthetic noise
(tests/review/test_detection.py) measures the method; this measures the method on a machine.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from omb_review.arguments import parse_override
from omb_review.judge import gate
from omb_review.judge.detect import Settings
from omb_review.read.ingest import load
from omb_review.read.series import label, threshold_for, worse_when


def _judge(run: gate.Run, values: np.ndarray, end: int, args, s: Settings, over):
    part = gate.Run(run.keys, run.times[:end], values[:end], run.meta)
    return gate.judge(part, gate.Windows(latest=args.latest), s, over)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("perflog_dir", type=Path)
    p.add_argument("--latest", type=int, default=10, help="runs in the latest window (10)")
    p.add_argument("--step", type=float, default=0.10, help="injected relative step (0.10)")
    p.add_argument("--min-history", type=int, default=20,
                   help="runs before the latest window at the first position (20)")
    p.add_argument("--threshold", type=float, default=0.05)
    p.add_argument("--alpha", type=float, default=0.01)
    p.add_argument("--fdr", action="store_true", help="as omb-review check --fdr")
    p.add_argument("--override", type=parse_override, action="append", default=[])
    p.add_argument("--only", default="*", help="series label pattern (shell wildcards)")
    args = p.parse_args()
    s = replace(Settings(), threshold=args.threshold, alpha=args.alpha)
    runs = [r for r in gate.runs(load(args.perflog_dir, use_cache=False).frame)
            if worse_when(r.keys["unit"]) and threshold_for(label(r.keys), 0, [(args.only, 1)])]
    first = args.min_history + args.latest
    # per gate run, counted back from each series' last run (0 = the gate run today): the
    # verdicts of every series as measured and with its latest window made worse
    measured: dict[int, list[gate.SeriesResult]] = {}
    worsened: dict[int, list[gate.SeriesResult]] = {}
    for run in runs:
        ok = ~np.isnan(run.values)
        run = gate.Run(run.keys, run.times[ok], run.values[ok], run.meta)
        sign, n = worse_when(run.keys["unit"]), int(ok.sum())
        for end in range(first, n + 1):
            worse = run.values.copy()
            k = slice(end - args.latest, end)
            worse[k] = worse[k] * (1 + args.step) if sign > 0 else worse[k] / (1 + args.step)
            measured.setdefault(n - end, []).append(_judge(run, run.values, end, args, s,
                                                           args.override))
            worsened.setdefault(n - end, []).append(_judge(run, worse, end, args, s,
                                                           args.override))
    if not measured:
        print(f"no series has {first} runs", file=sys.stderr)
        return 1
    if args.fdr:
        for results in [*measured.values(), *worsened.values()]:
            gate.control_fdr(results, args.alpha)
    flagged = {}  # series label -> [positions, false alarms, detections]
    for back in measured:
        for a, b in zip(measured[back], worsened[back], strict=True):
            row = flagged.setdefault(a.series, [0, 0, 0])
            row[0] += 1
            row[1] += a.verdict.status == "regression"
            row[2] += b.verdict.status == "regression"
    print(f"{'series':<70} {'pos':>4} {'false':>6} {'detect':>7}  today")
    for r in measured[0]:
        pos, false, detect = flagged[r.series]
        name = r.series.split(" buffers=")[-1]
        print(f"{name[-70:]:<70} {pos:>4} {false / pos:>6.0%} {detect / pos:>7.0%}  "
              f"{r.verdict.status}")
    total = np.sum(list(flagged.values()), axis=0)
    gates, step = len(measured), f"{args.step:.0%}"

    def red(results: list[gate.SeriesResult]) -> bool:
        return any(r.verdict.status == "regression" for r in results)

    def every(results: list[gate.SeriesResult]) -> bool:
        return all(r.verdict.status == "regression" for r in results)

    print(f"\nseries-windows: {total[0]}; false alarms {total[1] / total[0]:.1%}; a {step} step "
          f"in the last {args.latest} runs detected {total[2] / total[0]:.1%}")
    print(f"gate runs: {gates}; red on the values as measured "
          f"{sum(map(red, measured.values())) / gates:.0%}; red once every series was made "
          f"{step} worse {sum(map(red, worsened.values())) / gates:.0%}, every series named "
          f"{sum(map(every, worsened.values())) / gates:.0%}")
    print(f"today: {'red' if red(measured[0]) else 'green'} as measured; "
          f"{sum(r.verdict.status == 'regression' for r in worsened[0])} of "
          f"{len(worsened[0])} series named when made {step} worse")
    return 0


if __name__ == "__main__":
    sys.exit(main())
