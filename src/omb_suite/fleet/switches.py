"""Switch groups from Slurm's own topology: ``scontrol show topology`` (topology/tree).

Each leaf switch (a switch line with ``Nodes=`` and no ``Switches=``) is a group: its nodes
share it, and a pair of nodes under two leaves crosses an uplink. The node lists are Slurm
hostlist expressions (``nid[001-004,010],login1``), expanded here as Slurm does for the forms
topology.conf uses.
"""

from __future__ import annotations

import re

#: ``scontrol show topology`` when the cluster has no topology plugin.
NO_TOPOLOGY = 'No topology information available'


class TopologyError(ValueError):
    """The topology cannot be read; the message says why and what to do."""


def _split_top(text: str) -> list[str]:
    """Split on commas outside brackets."""
    parts, depth, cur = [], 0, ''
    for ch in text:
        depth += ch == '['
        depth -= ch == ']'
        if ch == ',' and depth == 0:
            parts.append(cur)
            cur = ''
        else:
            cur += ch
    if depth:
        raise TopologyError(f'hostlist {text!r}: unbalanced brackets')
    return [p for p in [*parts, cur] if p]


def expand(hostlist: str) -> list[str]:
    """``node[1-3,7],login1`` -> ``['node1', 'node2', 'node3', 'node7', 'login1']``
    (ranges keep their zero padding: ``nid[008-010]`` -> ``nid008, nid009, nid010``)."""
    out = []
    for part in _split_top(hostlist.strip()):
        m = re.fullmatch(r'([^\[\]]*)\[([^\[\]]+)\]([^\[\]]*)', part)
        if not m:
            if '[' in part or ']' in part:
                raise TopologyError(f'hostlist {part!r}: one bracket group per name is read')
            out.append(part)
            continue
        prefix, ranges, suffix = m.groups()
        for item in ranges.split(','):
            lo, _, hi = item.partition('-')
            if not lo.isdigit() or (hi and not hi.isdigit()):
                raise TopologyError(f'hostlist {part!r}: {item!r} is not a number or range')
            width = len(lo)
            for n in range(int(lo), int(hi or lo) + 1):
                out.append(f'{prefix}{n:0{width}d}{suffix}')
    return out


def groups(text: str) -> dict[str, str]:
    """node -> its leaf switch, from ``scontrol show topology``'s output."""
    if NO_TOPOLOGY in text:
        raise TopologyError('Slurm has no topology (scontrol show topology: "No topology '
                            'information available"): declare the groups instead, '
                            '-S groups=node1:leaf1,node2:leaf1,...')
    found: dict[str, str] = {}
    for line in text.splitlines():
        fields = dict(re.findall(r'(\w+)=(\S+)', line))
        if 'SwitchName' not in fields or 'Nodes' not in fields or 'Switches' in fields:
            continue  # an upper switch lists every node below it: only leaves are groups
        for node in expand(fields['Nodes']):
            found.setdefault(node, fields['SwitchName'])
    if not found:
        raise TopologyError('scontrol show topology names no leaf switch with nodes '
                            '(SwitchName=... Nodes=...): declare the groups instead, '
                            '-S groups=node1:leaf1,...')
    return found
