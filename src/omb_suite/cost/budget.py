"""A study within a budget of node-minutes, and a campaign that finishes it over nights.

A budget (``-S budget=600``: node-minutes; ``10node-h`` in node-hours) selects, from the cases a
command selected, those whose predicted cost (:mod:`omb_suite.cost.model`, the partition's own
model) fits, taken in the order of what a site most needs to know (:func:`rank`):

1. each benchmark's **default** algorithm (the library's own choice; point-to-point and
   every test without an algorithm) at **one rank count per power-of-two node count**: the
   largest the case's family has on that many nodes (a full node, then two, four...);
2. the default at the other rank counts;
3. algorithms that **won** a size in the partition's earlier runs (a sweep's winners), at
   one rank count per power-of-two node count, then the other algorithms there;
4. everything else.

Within a tier the families take turns (round robin, fewest nodes first), so a budget that
ends inside a tier has a little of every benchmark rather than all of one. A case that does
not fit is passed over and the next is tried: a small case may still fit after a large one
did not.

A **campaign** (``-S campaign=NAME``) is a study run in slices: each session runs what its
budget buys of the cases that have no result in the campaign yet (a case with a result,
passed or failed, is not run again), so successive sessions finish the study with no case
twice. Its progress is counted from the run reports (:func:`progress`).

Pure: no ReFrame; :mod:`omb_suite.rfm.budget_selection` applies it to a session's test cases.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

#: ``600``, ``600node-min``, ``600 node-minutes``, ``10node-h``, ``10 node-hours``
_BUDGET = re.compile(r'^\s*(\d+(?:\.\d*)?|\.\d+)\s*'
                     r'(?:(node-?min(?:utes?)?|nm)|(node-?h(?:ours?)?|nh))?\s*$', re.I)
FORM = ('-S budget=NODE_MINUTES (e.g. -S budget=600), or in node-hours -S budget=10node-h')
DEFAULT_ALGORITHMS = {None, '', 'default'}


class BudgetError(ValueError):
    """A budget or campaign that cannot be used, said with the expected form."""


def parse(text: str) -> float:
    """Node-minutes from ``text``; a negative budget or another unit is refused."""
    found = _BUDGET.match(text)
    if not found:
        raise BudgetError(f'budget={text!r} is not a number of node-minutes (seconds, hours or '
                          f'minutes of one job are not node-minutes): give {FORM}')
    value = float(found.group(1))
    return value * 60 if found.group(3) else value


def campaign_name(text: str) -> str:
    """The campaign's name as given; refused when it could not name a session tag."""
    if not re.fullmatch(r'[A-Za-z0-9][A-Za-z0-9._+-]{0,63}', text):
        raise BudgetError(f'campaign={text!r}: a campaign is named by letters, digits and '
                          "'._+-' (at most 64), e.g. -S campaign=ompi5-tuning")
    return text


@dataclass(frozen=True)
class Case:
    """One test case as the budget sees it."""

    key: tuple[str, str, str, str]   # (system, partition, environ, test name with parameters)
    family: tuple                   # the case's family: everything but its rank count
    benchmark: str
    algorithm: str | None
    num_nodes: int
    num_tasks: int
    node_minutes: float


@dataclass
class Selection:
    """What a budget bought and what it left out."""

    budget: float | None
    chosen: list[Case] = field(default_factory=list)
    left_out: list[Case] = field(default_factory=list)
    done: list[Case] = field(default_factory=list)     # a campaign's cases with a result
    tiers: dict[str, tuple[int, int]] = field(default_factory=dict)  # tier: (bought, of)

    @property
    def bought(self) -> float:
        return sum(c.node_minutes for c in self.chosen)

    @property
    def rest(self) -> float:
        return sum(c.node_minutes for c in self.left_out)


def _power_of_two(n: int) -> bool:
    return n >= 1 and n & (n - 1) == 0


def _default(case: Case) -> bool:
    return case.algorithm in DEFAULT_ALGORITHMS


TIERS = ('default, one rank count per power-of-two node count', 'default, other rank counts',
         "earlier sweeps' winners, one rank count per power-of-two node count",
         'other algorithms, one rank count per power-of-two node count', 'the rest')


def tier(case: Case, representative: bool, winners: set[tuple[str, str]]) -> int:
    """The case's rank in :data:`TIERS` (0 first)."""
    if _default(case):
        return 0 if representative else 1
    if not representative:
        return 4
    return 2 if (case.benchmark, case.algorithm) in winners else 3


def rank(cases: Iterable[Case], winners: set[tuple[str, str]] | None = None
         ) -> list[tuple[int, Case]]:
    """``(tier, case)`` in the order a budget takes them (module docstring)."""
    winners = winners or set()
    largest: dict[tuple, int] = {}
    cases = list(cases)
    for c in cases:
        k = (c.family, c.num_nodes)
        largest[k] = max(largest.get(k, 0), c.num_tasks)
    per_tier: dict[int, dict[tuple, list[Case]]] = defaultdict(lambda: defaultdict(list))
    for c in cases:
        rep = _power_of_two(c.num_nodes) and c.num_tasks == largest[(c.family, c.num_nodes)]
        per_tier[tier(c, rep, winners)][c.family].append(c)
    ordered: list[tuple[int, Case]] = []
    for t in sorted(per_tier):
        queues = [sorted(q, key=lambda c: (c.num_nodes, c.num_tasks))
                  for q in per_tier[t].values()]
        for turn in range(max(len(q) for q in queues)):
            ordered += [(t, q[turn]) for q in queues if turn < len(q)]
    return ordered


def select(cases: Iterable[Case], budget: float | None,
           winners: set[tuple[str, str]] | None = None) -> Selection:
    """The cases the budget buys, in rank order (all of them without a budget)."""
    out = Selection(budget)
    spent = 0.0
    counts: dict[int, list[int]] = defaultdict(lambda: [0, 0])
    for t, case in rank(cases, winners):
        counts[t][1] += 1
        if budget is None or spent + case.node_minutes <= budget:
            out.chosen.append(case)
            spent += case.node_minutes
            counts[t][0] += 1
        else:
            out.left_out.append(case)
    out.tiers = {TIERS[t]: (b, n) for t, (b, n) in sorted(counts.items())}
    return out


def nm(minutes: float) -> str:
    """Node-minutes as printed: ``119480``, ``12.5``, ``0.043``."""
    return f'{minutes:.0f}' if minutes >= 100 else f'{minutes:.1f}' if minutes >= 1 else \
        f'{minutes:.3f}'


def progress_line(sel: Selection, campaign: str, spent: float, rehearsal: bool = False) -> str:
    """A campaign's progress: cases done and left, node-minutes spent and left, nights
    (``rehearsal``: the cases done are dry runs, their time nothing measured)."""
    total = len(sel.done) + len(sel.chosen) + len(sel.left_out)
    how = 'rehearsed in dry runs: predicted, not measured' if rehearsal else 'measured'
    if not sel.chosen and not sel.left_out:
        return (f'campaign {campaign}: complete, {total} case(s) done, {nm(spent)} '
                f'node-minutes spent ({how}); nothing left to run')
    left = sel.bought + sel.rest
    nights = math.ceil(left / sel.budget - 1e-9) if sel.budget and left > 0 else 0
    if sel.budget is not None and not sel.chosen:
        pace = ', and no case left fits this budget: raise it to go on'
    elif sel.budget and nights:
        pace = f', at least {nights} session(s) to go at this budget, this one included'
    else:
        pace = ''
    return (f'campaign {campaign}: {len(sel.done)} of {total} case(s) done, '
            f'{len(sel.chosen) + len(sel.left_out)} left; {nm(spent)} node-minutes spent '
            f'({how}), {nm(left)} predicted to go' + pace)


def summary(sel: Selection, campaign: str | None = None, spent: float = 0.0,
            rehearsal: bool = False) -> list[str]:
    """What a budget bought, what it left out and what the rest would cost."""
    lines = []
    if not (sel.chosen or sel.left_out or sel.done):
        return ['Budget: no selected case can be priced (none selected, or their setup skips '
                'each one here): nothing to choose from']
    if sel.budget is not None:
        lines.append(f'Budget {sel.budget:g} node-minutes: {len(sel.chosen)} case(s) selected, '
                     f'predicted {nm(sel.bought)} node-minutes; {len(sel.left_out)} left out, '
                     f'predicted {nm(sel.rest)} node-minutes more')
        lines += [f'  {name}: {b} of {n}' for name, (b, n) in sel.tiers.items()]
        if sel.left_out:
            names = [c.key[3] for c in sel.left_out[:3]]
            more = len(sel.left_out) - len(names)
            lines.append('  left out first: ' + '; '.join(names)
                         + (f' (and {more} more)' if more else ''))
    if campaign:
        lines.append(progress_line(sel, campaign, spent, rehearsal))
    return lines


def below_cheapest(sel: Selection) -> str | None:
    """Why nothing can run: the budget is below every case's cost (``None``: something fits,
    or nothing was left to run)."""
    if sel.chosen or not sel.left_out or sel.budget is None:
        return None
    cheapest = min(sel.left_out, key=lambda c: c.node_minutes)
    return (f'budget={sel.budget:g} node-minutes is below the cheapest selected case '
            f'({cheapest.key[3]} on {cheapest.key[0]}:{cheapest.key[1]}+{cheapest.key[2]}, '
            f'predicted {nm(cheapest.node_minutes)} node-minutes): nothing run; raise the '
            f'budget to at least {math.ceil(cheapest.node_minutes * 100) / 100:g}')
