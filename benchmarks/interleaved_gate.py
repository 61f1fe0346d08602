"""An upgrade judged side by side (``omb-review compare``), measured on real sessions: its false
alarms on an unchanged library, the real regressions it finds, and its power on injected steps,
per number of pairs of launches.

    python benchmarks/interleaved_gate.py DATA [DATA ...] --pair BEFORE:AFTER:aa
        --pair BEFORE:AFTER:regression [--group 1] [--pairs 4,6,12] [--threshold ...]

DATA: results directories (or sets of tests/data/gate) whose sessions ran several environments
of one library with ``--exec-policy serial --reruns N`` (ReFrame runs the environments of a
case one after the other, so OLD and NEW of one case are launched seconds apart and each rerun
adds a pair): for example ``-p '^ab-(a|b|nosc)$'`` over a registry in which ``ab-a`` and
``ab-b`` are the same library and ``ab-nosc`` the same with a setting that makes it slower
(``benchmarks/gate_record.py --twin``). ``--pair BEFORE:AFTER:LABEL``: ``aa`` (nothing
changed: a regression found is a false alarm) or ``regression`` (a real change: found or not).

Every verdict is :func:`omb_review.judge.side_by_side.judge` at the given rule, what ``omb-review
compare`` runs. A comparison is ``--group`` consecutive sessions (their pairs together: two
sessions of 6 reruns give 12 pairs), judged on the first ``k`` pairs of each curve for each
``k`` of ``--pairs`` (fewer reruns, measured on the same launches). Prints per label and ``k``:
comparisons failed (a regression found), curves flagged of curves judged, and on A/A pairs the
share of injected steps found (latency x1.1/1.2/1.5, bandwidth x0.9/0.8 over every run of
``min_sizes`` adjacent sizes (``--step-sizes``) of every curve of a headline figure with that
many sizes, added to the after side's launches of those sizes only: a change of the MPI moves
the headline figure, which the secondary ones, a collective's min and max latency, stand
beside).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from dataclasses import replace
from pathlib import Path

import polars as pl

from omb_review.judge import side_by_side as sbs
from omb_review.read.ingest import load
from omb_review.read.series import worse_when

STEPS = (('latency', 1.1), ('latency', 1.2), ('latency', 1.5), ('bandwidth', 0.9),
         ('bandwidth', 0.8))


def comparisons(frame: pl.DataFrame, before: str, after: str, group: int
                ) -> list[list[sbs.Curve]]:
    """Each group of ``group`` consecutive sessions that ran both: its curves with their pairs."""
    both = (frame.filter(pl.col('environ').cast(pl.String).is_in([before, after]))
            .group_by('session_id').agg(pl.col('time').min(),
                                        pl.col('environ').cast(pl.String).n_unique().alias('n'))
            .filter(pl.col('n') == 2).sort('time'))
    ids = both['session_id'].to_list()
    out = []
    for start in range(0, len(ids) - group + 1, group):
        part = frame.filter(pl.col('session_id').is_in(ids[start:start + group]))
        out.append(sbs.pair_curves(part, before, after))
    return out


def first(c: sbs.Curve, k: int, step: float = 0.0, stepped: tuple = ()) -> sbs.Curve:
    """The curve with its first ``k`` pairs per size (half of each order where it ran in both:
    ``scripts/upgrade.sh side-by-side``), ``step`` (oriented log) added at ``stepped`` sizes."""
    order = c.after_first.get(c.sizes[0], []) if c.sizes else []
    keep = list(range(k))
    if any(order) and not all(order):
        keep = ([i for i, f in enumerate(order) if not f][:(k + 1) // 2]
                + [i for i, f in enumerate(order) if f][:k // 2])
    pairs = {s: [v[i] for i in keep if i < len(v)] for s, v in c.pairs.items()}
    after_first = {s: [v[i] for i in keep if i < len(v)] for s, v in c.after_first.items()}
    launches = {s: [v[i] for i in keep if i < len(v)] for s, v in c.launches.items()}
    return sbs.stepped(replace(c, pairs=pairs, after_first=after_first, launches=launches),
                       step, set(stepped))


def order_effect(groups: list[list[sbs.Curve]]) -> str:
    """The median log ratio (after/before, oriented: > 0 worse) of the pairs in which the after
    side was launched second, and of those in which it was launched first."""
    second, first_ = [], []
    for group in groups:
        for c in group:
            for s, values in c.pairs.items():
                for v, f in zip(values, c.after_first.get(s, [False] * len(values)),
                                strict=False):
                    (first_ if f else second).append(v)
    def text(values: list[float]) -> str:
        return (f'{math.expm1(statistics.median(values)):+.1%} ({len(values)} pairs)'
                if values else '-')
    return f'after launched second {text(second)}, first {text(first_)}'



def judged(group: list[sbs.Curve], k: int, rule: sbs.Rule, again: bool = False,
           step: float = 0.0, stepped: tuple = ()) -> list[sbs.Curve]:
    """The group's curves with ``k`` pairs judged on their first ``k``; with ``again``, as
    ``scripts/upgrade.sh side-by-side`` does, a first look that passed judged again with ``2k``
    pairs for the blind curves (those whose pairs could not have shown ``blind_factor``
    thresholds), or as many as the group has beyond ``k`` (busy pairs are left out)."""
    look = sbs.judge([first(c, k, step, stepped) for c in group if c.n_pairs >= k], rule)
    if not again or any(c.status == sbs.REGRESSION for c in look):
        return look
    blind = {c.label for c in look if c.blind}

    def again_(c: sbs.Curve) -> sbs.Curve:
        n = min(2 * k, c.n_pairs)   # the pairs the second round kept (busy ones left out)
        return sbs.judge([first(c, n, step, stepped)], rule)[0]
    return [again_(c) if c.label in blind and c.n_pairs > k else v
            for c, v in zip([c for c in group if c.n_pairs >= k], look, strict=True)]


def injected(groups: list[list[sbs.Curve]], k: int, rule: sbs.Rule, kind: str, factor: float,
             width: int | None = None, again: bool = False) -> tuple[int, int]:
    """(found, injected) over every run of ``width`` (``min_sizes``) adjacent sizes of every
    curve."""
    step = abs(math.log(factor))
    width = width or rule.min_sizes
    found = total = 0
    for group in groups:
        for c in group:
            latency = worse_when(c.keys['unit']) > 0
            if (latency != (kind == 'latency') or c.n_pairs < k or not sbs.stands_alone(c)
                    or len(c.sizes) < width or c.sizes[0] is None):
                continue
            for start in range(len(c.sizes) - width + 1):
                stepped = tuple(c.sizes[start:start + width])
                total += 1
                found += judged([c], k, rule, again, step, stepped)[0].status == sbs.REGRESSION
    return found, total


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('data', type=Path, nargs='+')
    ap.add_argument('--pair', action='append', required=True, help='BEFORE:AFTER:aa|regression')
    ap.add_argument('--group', type=int, default=1, help='sessions per comparison (1)')
    ap.add_argument('--pairs', default='4,6', help='pairs of launches used per curve (4,6)')
    ap.add_argument('--threshold', type=float, default=sbs.Rule.threshold)
    ap.add_argument('--bandwidth-threshold', type=float, default=sbs.Rule.bandwidth_threshold,
                    help='for bandwidth and message rate (default: --threshold)')
    ap.add_argument('--step-sizes', type=int, default=None,
                    help='adjacent sizes each injected step covers (default: --min-sizes)')
    ap.add_argument('--alpha', type=float, default=sbs.Rule.alpha)
    ap.add_argument('--min-sizes', type=int, default=sbs.Rule.min_sizes)
    ap.add_argument('--alone-factor', type=float, default=sbs.Rule.alone_factor,
                    help='a secondary figure stands alone by this many thresholds (2)')
    ap.add_argument('--couples', action='store_true',
                    help='judge couples of pairs of both orders (compare --couples)')
    ap.add_argument('--again', action='store_true',
                    help='upgrade.sh side-by-side\'s second round: the blind curves of a look '
                    'that passed judged again on twice the pairs (give --group twice the '
                    'sessions of one round)')
    ap.add_argument('--no-modes', action='store_true',
                    help='no launch-mode rule: a pair split between modes counts')
    args = ap.parse_args(argv)
    frame = pl.concat([load(d, use_cache=False).frame for d in args.data], how='diagonal_relaxed')
    ks = [int(k) for k in args.pairs.split(',')]
    bw = ('' if args.bandwidth_threshold is None
          else f' (bandwidth {args.bandwidth_threshold:.0%})')
    unit = 'couples' if args.couples else 'pairs'
    print(f'rule: median of the {unit} >= +{args.threshold:.0%}{bw}, '
          f'signed-rank p <= {args.alpha}, '
          f'{args.min_sizes} adjacent sizes as one; {args.group} session(s) per comparison'
          + ('; blind curves judged again on twice the pairs' if args.again else '')
          + ('; no launch-mode rule' if args.no_modes else
             f'; pairs split between launch modes (x{sbs.Rule.mode_gap}) left out'))
    for spec in args.pair:
        try:
            before, after, label = spec.split(':')
        except ValueError:
            ap.error(f'--pair {spec!r}: expected BEFORE:AFTER:aa or BEFORE:AFTER:regression')
        groups = comparisons(frame, before, after, args.group)
        print(f'\n{before} -> {after} ({label}): {len(groups)} comparison(s)')
        if not groups:
            print(f'  no session ran both {before} and {after}', file=sys.stderr)
            return 2
        print(f'  order: {order_effect(groups)}')
        for k in ks:
            rule = sbs.Rule(threshold=args.threshold, bandwidth_threshold=args.bandwidth_threshold,
                            alpha=args.alpha, min_sizes=args.min_sizes, min_pairs=k,
                            alone_factor=args.alone_factor,
                            mode_gap=None if args.no_modes else sbs.Rule.mode_gap,
                            by_couples=args.couples)
            # a comparison none of whose curves has k quiet pairs judged nothing: not a pass
            verdicts = [v for v in (judged(g, k, rule, args.again) for g in groups) if v]
            failed = sum(any(c.status == sbs.REGRESSION for c in v) for v in verdicts)
            flagged = sum(c.status == sbs.REGRESSION for v in verdicts for c in v)
            curves = sum(len(v) for v in verdicts)
            unjudged = len(groups) - len(verdicts)
            line = (f'  {k} pairs: comparisons failed {failed}/{len(verdicts)}'
                    + (f' ({unjudged} not judged: no curve with {k} quiet pairs)'
                       if unjudged else '') + f', curves flagged {flagged}/{curves}')
            if label == 'aa':
                for kind, factor in STEPS:
                    hit, n = injected(groups, k, rule, kind, factor, args.step_sizes,
                                      args.again)
                    line += f'; {kind} x{factor}: {hit}/{n}'
            print(line)
    return 0


if __name__ == '__main__':
    sys.exit(main())
