"""The rounds in which one allocation measures its node pairs.

A round is a set of disjoint pairs, run at the same time (each node in at most one pair). The
round-robin of a tournament (the circle method) meets every pair of N nodes once in N-1
rounds (N even; with N odd one node rests each round, N rounds); a site with many nodes asks
for K rounds: each node then meets K partners, chosen so that they differ. With switch groups
(``groups``: node -> group), the rounds are the same and each pair is said to be within or
across groups.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

Pair = tuple[str, str]


class FleetError(ValueError):
    """An allocation or a request the fleet cannot be measured with."""


def rounds(nodes: Sequence[str], max_rounds: int | None = None) -> list[list[Pair]]:
    """The circle method's rounds over ``nodes`` (in their order), the first ``max_rounds``
    of them when given; every pair (a, b) has a before b in ``nodes``."""
    if len(nodes) < 2:
        raise FleetError(f'a fleet run needs 2 nodes or more to pair them; the allocation has '
                         f'{len(nodes)} ({", ".join(nodes) or "none"}): allocate more nodes '
                         f'(salloc -N 4, or the nodes of the reservation)')
    if len(set(nodes)) != len(nodes):
        raise FleetError(f'nodes named twice in {list(nodes)}: give each node once')
    if max_rounds is not None and max_rounds < 1:
        raise FleetError(f'{max_rounds} rounds: ask for 1 or more')
    order = {n: i for i, n in enumerate(nodes)}
    ring: list[str | None] = [*nodes, *([None] if len(nodes) % 2 else [])]
    count = len(ring) - 1
    out = []
    for _ in range(min(count, max_rounds or count)):
        half = len(ring) // 2
        pairs = [(ring[i], ring[-1 - i]) for i in range(half)]
        out.append(sorted(tuple(sorted((a, b), key=order.__getitem__))  # type: ignore[misc]
                          for a, b in pairs if a is not None and b is not None))
        ring = [ring[0], ring[-1], *ring[1:-1]]
    return out


def every_pair(nodes: Sequence[str]) -> set[Pair]:
    """The pairs a complete schedule meets."""
    return {(a, b) for i, a in enumerate(nodes) for b in nodes[i + 1:]}


def across(pair: Pair, groups: Mapping[str, str]) -> bool:
    """Whether a pair crosses switch groups (a node of no group is a group of its own)."""
    return groups.get(pair[0], pair[0]) != groups.get(pair[1], pair[1])


@dataclass(frozen=True)
class Plan:
    """What a fleet run costs before it runs: its rounds, and the allocation's wall time and
    node-minutes (every node is held for the whole run)."""

    nodes: int
    rounds: int
    pairs: int
    seconds_per_launch: float
    intra_seconds: float
    at_once: int = 0

    @property
    def wall_seconds(self) -> float:
        if self.at_once:   # launches one batch after another
            # each node twice within itself, then the pairs
            batches = (math.ceil(2 * self.nodes / self.at_once)
                       + math.ceil(self.pairs / self.at_once))
            return batches * self.seconds_per_launch
        return self.intra_seconds + self.rounds * self.seconds_per_launch

    @property
    def node_minutes(self) -> float:
        return self.nodes * self.wall_seconds / 60

    def summary(self) -> str:
        at_once = min(self.at_once or self.nodes // 2, self.nodes // 2)
        return (f'fleet of {self.nodes} nodes: {self.rounds} round(s) of up to '
                f'{at_once} pair(s) at once, {self.pairs} pair(s) in all; predicted '
                f'{self.wall_seconds / 60:.1f} min wall, {self.node_minutes:.0f} node-minutes')


def plan(nodes: int, seconds_per_pair: float, intra_seconds: float = 0.0,
         max_rounds: int | None = None, at_once: int = 0) -> Plan:
    """The plan for ``nodes`` nodes: a round lasts one pair's run (the pairs run at once); the
    intra-node runs of every node at once come first (``intra_seconds``: all of them, every
    node's launches within itself). ``at_once``: at most that many launches at the same time
    (0: no limit)."""
    names = [f'n{i}' for i in range(nodes)]
    done = rounds(names, max_rounds)
    return Plan(nodes, len(done), sum(map(len, done)), seconds_per_pair, intra_seconds,
                at_once)


def within(nodes: int, budget: float, seconds_per_pair: float, intra_seconds: float = 0.0,
           max_rounds: int | None = None, at_once: int = 0) -> Plan | None:
    """The plan with the most rounds (at most ``max_rounds``, else all) whose node-minutes fit
    ``budget``; ``None`` when not even one round fits."""
    def fits(k: int) -> Plan | None:
        got = plan(nodes, seconds_per_pair, intra_seconds, k, at_once)
        return got if got.node_minutes <= budget else None

    full = plan(nodes, seconds_per_pair, intra_seconds, max_rounds, at_once)
    if full.node_minutes <= budget:
        return full
    lo, hi = 0, full.rounds   # node-minutes grow with the rounds: the most that fit
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid - 1)
    return fits(lo) if lo else None
