"""Switch groups from ``scontrol show topology`` (omb_suite.fleet.switches)."""

from __future__ import annotations

import pytest

from omb_suite.fleet import switches

# as Slurm 22.05's scontrol prints a topology/tree configuration (two leaves, one spine)
TOPOLOGY = """\
SwitchName=spine Level=1 LinkSpeed=1 Nodes=nid[001-004,010],login1 Switches=leaf[1-2]
SwitchName=leaf1 Level=0 LinkSpeed=1 Nodes=nid[001-002,010]
SwitchName=leaf2 Level=0 LinkSpeed=1 Nodes=nid[003-004],login1
"""


def test_each_leaf_switch_is_a_group():
    assert switches.groups(TOPOLOGY) == {
        'nid001': 'leaf1', 'nid002': 'leaf1', 'nid010': 'leaf1',
        'nid003': 'leaf2', 'nid004': 'leaf2', 'login1': 'leaf2'}


@pytest.mark.parametrize(('text', 'nodes'), [
    ('node1', ['node1']),
    ('node[1-3]', ['node1', 'node2', 'node3']),
    ('nid[008-010]', ['nid008', 'nid009', 'nid010']),
    ('a[1,3-4]x,b2', ['a1x', 'a3x', 'a4x', 'b2']),
])
def test_hostlists_expand_as_slurm_writes_them(text, nodes):
    assert switches.expand(text) == nodes


@pytest.mark.parametrize('text', ['node[1-', 'node[a-b]', 'r[1-2]n[1-2]'])
def test_a_hostlist_it_cannot_read_is_said(text):
    with pytest.raises(switches.TopologyError, match='hostlist'):
        switches.expand(text)


def test_no_topology_says_to_declare_the_groups():
    with pytest.raises(switches.TopologyError, match='-S groups=node1:leaf1'):
        switches.groups('No topology information available\n')
    with pytest.raises(switches.TopologyError, match='no leaf switch'):
        switches.groups('SwitchName=spine Level=1 Switches=leaf[1-2]\n')
