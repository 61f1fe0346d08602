"""How much of a side-by-side set's noise is launch *modes*: a launch that lands, whole, in a
fast or a slow state (2 vCPUs that are or are not hyperthreads of one core, a buffer on a huge
page or not), so that one environment's share of slow launches, not its library, decides a
pair's ratio.

    python benchmarks/launch_modes.py DATA [DATA ...] -e ENV [-e ENV ...] [--gap 1.5]
        [--share 0.1] [--top 15]

DATA: results directories (or sets of tests/data/gate) of side-by-side sessions
(``benchmarks/gate_record.py``); ``-e``: the environments to pool (the twins of an A/A set).
Per curve and size of a headline figure (``headline`` in the OSU catalogue), every launch of
those environments over every session, as log values, split in two by the widest gap between
sorted values (``omb_review.judge.side_by_side.mode_cut``, what ``omb-review compare`` uses).
The size is **bimodal** when that gap is at least ``--gap`` times and the smaller group holds
at least ``--share`` of the launches. Prints how
many sizes are bimodal, and for the ``--top`` widest: the modes' medians, the slow share of
each environment, and per session the slow launches of each environment (what decides a
pair's ratio there). Reads the data only: no launch, no verdict.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections import defaultdict
from pathlib import Path

import polars as pl

from omb_review.judge import side_by_side as sbs
from omb_review.read.ingest import load
from omb_review.read.series import curve_label, with_size, worse_when
from omb_suite.osu import catalogue


def headline(benchmark: str, metric: str) -> bool:
    try:
        return catalogue.get(benchmark).stands_alone(metric)
    except (KeyError, ValueError):
        return False


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('data', nargs='+', type=Path)
    ap.add_argument('-e', dest='envs', action='append', required=True)
    ap.add_argument('--gap', type=float, default=sbs.Rule.mode_gap,
                    help='times between the modes for a bimodal size (the rule\'s)')
    ap.add_argument('--share', type=float, default=sbs.Rule.mode_share,
                    help='the smaller mode holds at least this share (the rule\'s)')
    ap.add_argument('--top', type=int, default=15)
    args = ap.parse_args(argv)
    rule = sbs.Rule(mode_gap=args.gap, mode_share=args.share)
    for d in args.data:
        if not d.is_dir():
            ap.error(f'{d}: not a directory (a results directory or a set of tests/data/gate)')
    frame = pl.concat([load(d, use_cache=False).frame for d in args.data], how='diagonal_relaxed')
    frame = with_size(frame.filter(pl.col('environ').cast(pl.String).is_in(args.envs)
                                   & pl.col('value').is_not_null() & (pl.col('value') > 0)))
    if frame.is_empty():
        print(f'no launch of {", ".join(args.envs)} in {", ".join(map(str, args.data))}',
              file=sys.stderr)
        return 2
    launches: dict[tuple, list[tuple[str, str, float]]] = defaultdict(list)
    sessions: dict[str, object] = {}
    for row in frame.sort('time').iter_rows(named=True):
        if not headline(str(row['benchmark']), str(row['metric'])):
            continue
        sign = worse_when(str(row['unit']))
        if not sign:
            continue
        key = (curve_label({**{k: row[k] for k in sbs.CURVE_KEYS}, 'lineage': None}),
               str(row['metric']), row['size'])
        # oriented: larger is worse (a slow launch of a bandwidth test is a low value)
        launches[key].append((str(row['session_id']), str(row['environ']),
                              math.log(row['value']) * sign))
        sessions.setdefault(str(row['session_id']), row['time'])
    order = {s: i + 1 for i, s in enumerate(sorted(sessions, key=lambda s: sessions[s]))}
    found = []
    for key, rows in launches.items():
        values = [v for _, _, v in rows]
        if len(values) < 4:
            continue
        cut = sbs.mode_cut(values, rule)
        if cut is not None:
            low, high = [v for v in values if v <= cut], [v for v in values if v > cut]
            ratio = math.exp(statistics.median(high) - statistics.median(low))
            found.append((ratio, key, rows, cut))
    print(f'{len(found)} of {len(launches)} sizes of headline figures bimodal (medians >= '
          f'{args.gap}x apart, the smaller >= {args.share:.0%} of the launches); '
          f'{len(order)} session(s), environments {", ".join(args.envs)}')
    for ratio, (test, metric, size), rows, cut in sorted(found, key=lambda f: -f[0])[:args.top]:
        values = sorted(v for _, _, v in rows)
        sign = 1 if values[-1] > 0 else -1   # back from oriented logs to the figure's unit
        fast = math.exp(sign * statistics.median([v for v in values if v <= cut]))
        slow = math.exp(sign * statistics.median([v for v in values if v > cut]))
        per_env = {e: [v > cut for _, env, v in rows if env == e] for e in args.envs}
        shares = ', '.join(f'{e} {sum(s)}/{len(s)}' for e, s in per_env.items() if s)
        print(f'\n{test} {metric} {size} B: modes {fast:.4g} and {slow:.4g} (x{ratio:.2f}); '
              f'slow launches {shares}')
        by_session: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
        for session, env, v in rows:
            by_session[session][env].append(v > cut)
        for session in sorted(by_session, key=order.get):
            cells = '  '.join(f'{e} {sum(by_session[session][e])}/{len(by_session[session][e])}'
                              for e in args.envs if by_session[session][e])
            print(f'  session {order[session]}: {cells}')
    return 0


if __name__ == '__main__':
    sys.exit(main())
