"""The culprit named from a fleet run's figures: which node, link or switch group is slow.

Each figure is judged against the fleet's own (the median over nodes of the median of each
node's better half of pairs, of its pairs within its switch group where groups are given: a
slow node, link or uplink moves its own pairs, not that baseline), or
against a reference where the site gives one. A pair is slow beyond ``tolerance`` (its
figure that many times worse). Then, in this order, each explaining what it can:

1. a **switch group** whose pairs with every other group are slow while its pairs within are
   not: its uplink (or the path between two groups);
2. a **node** slow with most of its partners (more than ``NODE_SHARE`` of them, 2 at least:
   two slow pairs that share a node are that node, not two links), or whose
   own intra-node figure is slow (then the node itself: cores, memory; otherwise its
   network: NIC, cable, port), or slow with one partner and within itself beyond the
   square root of the tolerance (its own figure says the slow pair is the node's);
3. a **link**: a pair that did not run while both its nodes ran with others (failed), or a
   slow pair whose two nodes are fine with their other partners.

A node that failed to launch is named as failed, never as slow, and the rest is judged. With
2 nodes a pair has nothing to be compared with but a reference: the verdict says so.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from statistics import median

from omb_suite.fleet.schedule import Pair, across

#: A node is named when more than this share of its pairs (and 2 of them) is slow. A starved
#: node is not slow with every partner: a CPU quota lets some pairs through (a 4-node CI run:
#: node2 at 5 % of a core slow with 2 of its 3 partners, x27, and fine with the third; in
#: another, slow with 1 of 3, x22, and x4.3 within itself: named by its own figure).
NODE_SHARE = 0.5
#: Default: a figure twice as bad as the fleet's is slow.
TOLERANCE = 2.0


@dataclass(frozen=True)
class Finding:
    """One culprit: ``kind`` 'node', 'link' or 'group'; ``name`` the node, ``a-b`` or the
    group(s); ``evidence`` the figures that name it."""

    kind: str
    name: str
    why: str
    evidence: tuple[str, ...]


@dataclass
class Verdict:
    benchmark: str
    unit: str
    baseline: float | None
    findings: list[Finding] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    #: The figure a node within itself is judged against (``None``: fewer than 3 nodes).
    intra_baseline: float | None = None

    def named(self, kind: str) -> list[str]:
        return [f.name for f in self.findings if f.kind == kind]

    def drain_commands(self) -> list[str]:
        """The commands a site would run to drain the named and failed nodes (printed, never
        run by the suite)."""
        out = []
        for f in self.findings:
            if f.kind == 'node':
                out.append(f'scontrol update nodename={f.name} state=drain '
                           f'reason="omb fleet: {self.benchmark} {f.why}"')
        out += [f'scontrol update nodename={n} state=drain reason="omb fleet: {self.benchmark} '
                f'did not launch"' for n in self.failed]
        return out

    def lines(self) -> list[str]:
        head = (f'{self.benchmark}: baseline {self.baseline:.4g} {self.unit}'
                if self.baseline is not None else f'{self.benchmark}: no baseline')
        if not self.findings and not self.failed:
            return [f'{head}; nothing slow', *self.notes]
        out = [head]
        for f in self.findings:
            out.append(f'  {f.kind} {f.name}: {f.why}')
            out += [f'    {e}' for e in f.evidence]
        out += [f'  failed {n}: did not launch (not judged as slow)' for n in self.failed]
        return out + self.notes


def worse(value: float, base: float, higher_is_worse: bool = True) -> float:
    """How many times worse than ``base`` a figure is (above 1: worse)."""
    return value / base if higher_is_worse else base / value


def _key(a: str, b: str) -> Pair:
    return (a, b) if a <= b else (b, a)


def judge(benchmark: str, pairs: Mapping[Pair, float], *, intra: Mapping[str, float] | None = None,
          higher_is_worse: bool = True, tolerance: float = TOLERANCE, unit: str = '',
          failed: Iterable[str] = (), failed_pairs: Iterable[Pair] = (),
          groups: Mapping[str, str] | None = None,
          reference: float | None = None, intra_reference: float | None = None) -> Verdict:
    """The verdict on one benchmark's figures: ``pairs`` (node pair -> figure across them),
    ``intra`` (node -> its figure within itself), ``failed`` nodes that did not launch,
    ``failed_pairs`` pairs that did not run while both their nodes ran with others (each a
    failed link)."""
    if tolerance <= 1:
        raise ValueError(f'tolerance {tolerance}: a factor above 1 (2 = twice as bad)')
    failed = sorted(set(failed))
    pairs = {_key(*p): v for p, v in pairs.items() if not set(p) & set(failed)}
    intra = {n: v for n, v in (intra or {}).items() if n not in failed}
    groups = dict(groups or {})
    nodes = sorted({n for p in pairs for n in p} | set(intra))
    of = {n: [p for p in pairs if n in p] for n in nodes}

    def times(value: float, base: float) -> float:
        return worse(value, base, higher_is_worse)

    def better_half(values: list[float]) -> float:
        ranked = sorted(values, reverse=not higher_is_worse)
        return median(ranked[:math.ceil(len(ranked) / 2)])

    def own(n: str) -> list[Pair]:
        """The pairs a node's baseline comes from: within its switch group where groups are
        given and it has any there (a slow uplink slows half of every node's pairs), else all."""
        inside = [p for p in of[n] if groups and not across(p, groups)]
        return inside or of[n]

    per_node = [better_half([pairs[p] for p in own(n)]) for n in nodes if of[n]]
    base = reference if reference is not None else (
        median(per_node) if len(nodes) > 2 and per_node else None)
    verdict = Verdict(benchmark, unit, base, failed=failed)
    if base is None and pairs:
        verdict.notes.append(f'  {len(nodes)} node(s): a pair has no other to be compared with; '
                             f'give a reference (the references of OsuPt2Pt inter_node)')
    slow = {p for p, v in pairs.items() if base and times(v, base) > tolerance}

    def fig(p: Pair) -> str:
        return f'{p[0]}-{p[1]} {pairs[p]:.4g} {unit} (x{times(pairs[p], base):.1f})'

    explained: set[Pair] = set()
    # 1. switch groups
    names = sorted({groups.get(n, n) for n in nodes})
    if groups and len(names) > 1 and base:
        def group(n: str) -> str:
            return groups.get(n, n)
        for g in names if len(names) > 2 else names[:1]:
            cross = [p for p in pairs if across(p, groups) and g in map(group, p)]
            inner = [p for p in pairs if not across(p, groups)]
            others = [p for p in pairs if across(p, groups) and p not in cross]
            if cross and all(p in slow for p in cross) and not any(p in slow for p in inner) \
                    and not any(p in slow for p in others):
                name, why = (g, 'slow with every other group, fine within: its uplink') \
                    if len(names) > 2 else ('-'.join(names), 'every pair across the two groups '
                                            'slow, fine within each: the path between them')
                verdict.findings.append(Finding('group', name, why,
                                                tuple(fig(p) for p in sorted(cross))))
                explained |= set(cross)
    # 2. nodes
    intra_base = intra_reference if intra_reference is not None else (
        median(intra.values()) if len(intra) > 2 else None)
    verdict.intra_baseline = intra_base
    for n in nodes:
        mine = [p for p in of[n] if p not in explained]
        bad = [p for p in mine if p in slow]
        own = intra.get(n)
        own_ratio = times(own, intra_base) if intra_base and own is not None else 1.0
        own_slow = own_ratio > tolerance
        # slower within itself too (beyond the square root of the tolerance): the node
        # itself, not only its network
        itself = own_ratio > math.sqrt(tolerance)
        if own_slow or (len(bad) >= 2 and len(bad) > NODE_SHARE * len(mine)) or (bad and itself):
            why = (f'slow within itself (cores, memory); slow with {len(bad)} of {len(mine)} '
                   f'partners') if own_slow else (f'slow with {len(bad)} of {len(mine)} '
                                                  f'partners and within itself '
                                                  f'(x{own_ratio:.1f}): the node itself (cores, '
                                                  f'memory)' if itself else
                                                  f'slow with {len(bad)} of {len(mine)} '
                                                  f'partners; its network (NIC, cable, port): '
                                                  f'fine within itself')
            evidence = [f'with {len(bad)} of {len(mine)} partner(s) slow: '
                        + ', '.join(fig(p) for p in bad)] if bad else []
            if own is not None and intra_base:
                evidence.append(f'within itself {own:.4g} {unit} against the fleet\'s '
                                f'{intra_base:.4g} (x{times(own, intra_base):.1f})')
            verdict.findings.append(Finding('node', n, why, tuple(evidence)))
            explained |= set(mine) & slow
    # 3. links: failed, then slow
    for p in sorted({_key(*q) for q in failed_pairs if not set(q) & set(failed)}):
        ran = [f'{n} ran with {len(of.get(n, []))} other partner(s)' for n in p]
        verdict.findings.append(Finding('link', f'{p[0]}-{p[1]}',
                                        'did not run while both nodes ran with others: the '
                                        'path between them (cables, switch ports)',
                                        (f'{p[0]}-{p[1]} printed no OSU table', *ran)))
    for p in sorted(slow - explained):
        fine = [f'{n} fine with {sum(q not in slow for q in of[n])} of {len(of[n]) - 1} other '
                f'partner(s)' for n in p]
        verdict.findings.append(Finding('link', f'{p[0]}-{p[1]}',
                                        'slow while both nodes are fine with others',
                                        (fig(p), *fine)))
    return verdict
