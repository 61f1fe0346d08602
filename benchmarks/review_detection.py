"""How well ``omb-review check`` separates a real step from the noise of *your* perflogs.

    python benchmarks/review_detection.py PERFLOG_DIR [--latest 10] [--step 0.10]
        [--threshold 0.05] [--alpha 0.01] [--override PATTERN=THRESHOLD ...]

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

from omb_review import gate
from omb_review.cli import _override
from omb_review.detect import Settings
from omb_review.ingest import load
from omb_review.series import label, threshold_for, worse_when


def _verdict(run: gate.Run, values: np.ndarray, end: int, args, s: Settings, over) -> str:
    part = gate.Run(run.keys, run.times[:end], values[:end], run.meta)
    return gate.judge(part, gate.Windows(latest=args.latest), s, over).verdict.status


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("perflog_dir", type=Path)
    p.add_argument("--latest", type=int, default=10, help="runs in the latest window (10)")
    p.add_argument("--step", type=float, default=0.10, help="injected relative step (0.10)")
    p.add_argument("--min-history", type=int, default=20,
                   help="runs before the latest window at the first position (20)")
    p.add_argument("--threshold", type=float, default=0.05)
    p.add_argument("--alpha", type=float, default=0.01)
    p.add_argument("--override", type=_override, action="append", default=[])
    p.add_argument("--only", default="*", help="series label pattern (shell wildcards)")
    args = p.parse_args()
    s = replace(Settings(), threshold=args.threshold, alpha=args.alpha)
    runs = [r for r in gate.runs(load(args.perflog_dir, use_cache=False).frame)
            if worse_when(r.keys["unit"]) and threshold_for(label(r.keys), 0, [(args.only, 1)])]
    # per gate run, counted back from each series' last run (0 = the gate run today):
    false_any: dict[int, bool] = {}  # some series flagged on the values as measured
    named_all: dict[int, bool] = {}  # every series flagged once its latest window was worsened
    total = np.zeros(3, dtype=int)  # series-windows, false alarms, detections
    print(f"{'series':<70} {'pos':>4} {'false':>6} {'detect':>7}  today")
    for run in runs:
        ok = ~np.isnan(run.values)
        run = gate.Run(run.keys, run.times[ok], run.values[ok], run.meta)
        sign = worse_when(run.keys["unit"])
        first = args.min_history + args.latest
        n = len(run.values)
        if n < first:
            continue
        false = detect = 0
        for end in range(first, n + 1):
            worse = run.values.copy()
            k = slice(end - args.latest, end)
            worse[k] = worse[k] * (1 + args.step) if sign > 0 else worse[k] / (1 + args.step)
            alarm = _verdict(run, run.values, end, args, s, args.override) == "regression"
            hit = _verdict(run, worse, end, args, s, args.override) == "regression"
            false, detect = false + alarm, detect + hit
            back = n - end
            false_any[back] = false_any.get(back, False) or alarm
            named_all[back] = named_all.get(back, True) and hit
        positions = n - first + 1
        total += [positions, false, detect]
        today = _verdict(run, run.values, n, args, s, args.override)
        name = label(run.keys).split(" buffers=")[-1]
        print(f"{name[-70:]:<70} {positions:>4} {false / positions:>6.0%} "
              f"{detect / positions:>7.0%}  {today}")
    if not total[0]:
        print(f"no series has {args.min_history + args.latest} runs", file=sys.stderr)
        return 1
    gates, step = len(false_any), f"{args.step:.0%}"
    print(f"\nseries-windows: {total[0]}; false alarms {total[1] / total[0]:.1%}; a {step} step "
          f"in the last {args.latest} runs detected {total[2] / total[0]:.1%}")
    print(f"gate runs: {gates}; red on the values as measured "
          f"{sum(false_any.values()) / gates:.0%}; every series named once all were made {step} "
          f"worse {sum(named_all.values()) / gates:.0%}")
    print(f"today: {'red' if false_any[0] else 'green'} as measured; "
          f"{'every' if named_all[0] else 'not every'} series named when made {step} worse")
    return 0


if __name__ == "__main__":
    sys.exit(main())
