"""A secondary figure beside its headline (``omb-review compare``): a program's secondary
figures (a collective's min and max latency, a peak, a non-blocking collective's compute time
and overlap) stand only beside a change, the same way, of a headline figure of the same curve
(``headline`` in the OSU catalogue), or by ``alone_factor`` times the threshold.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import TYPE_CHECKING

from omb_suite.osu import catalogue

if TYPE_CHECKING:
    from omb_review.judge.side_by_side import Curve, Rule


def stands_alone(c: Curve) -> bool:
    """Whether a change of this curve's figure is a finding on its own (a program the
    catalogue does not know: yes)."""
    try:
        program = catalogue.get(str(c.keys.get("benchmark")))
    except KeyError:
        return True
    return program.stands_alone(str(c.keys["metric"]))


def beside_headline(curves: list[Curve], rule: Rule) -> None:
    """A secondary figure's regression or improvement stands only beside the same status of a
    headline figure of the same curve, or by ``rule.alone_factor`` times the threshold; where
    the curve has no headline figure among these, it stands."""
    from omb_review.judge.side_by_side import IMPROVEMENT, OK, REGRESSION  # one place

    def same_curve(c: Curve) -> tuple:
        return tuple(str(v) for k, v in c.keys.items() if k not in ("metric", "unit"))
    headlines: dict[tuple, list[Curve]] = defaultdict(list)
    for c in curves:
        if stands_alone(c):
            headlines[same_curve(c)].append(c)
    for c in curves:
        beside = headlines.get(same_curve(c), [])
        if c.status not in (REGRESSION, IMPROVEMENT) or stands_alone(c) or not beside:
            continue
        large = abs(math.log(c.change)) >= math.log1p(
            rule.alone_factor * rule.limit(c.keys["unit"]))
        if not large and all(h.status != c.status for h in beside):
            c.alone = (f"{c.status} alone, beside "
                       + ", ".join(f"{h.keys['metric']} {h.status}" for h in beside))
            c.status = OK
