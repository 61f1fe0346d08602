"""Many ranks at once: N pairs (osu_mbw_mr, osu_multi_lat), forked processes (osu_latency_mp)
and congestion over nodes (osu_bw_fan_in/_fan_out).

OSU pairs rank ``i`` with rank ``i + N/2``, so ranks are filled in order (mapping ``core``)
and the ``placement`` says where the two halves sit: ``inter_node`` (first half on one node,
second half on the other), ``inter_socket`` (one full socket each) or ``intra_socket`` (both
halves in one socket). The wrapper's probe lines verify it.
"""

from __future__ import annotations

from reframe.core.builtins import run_after, variable

from omb_suite.launch import placements
from omb_suite.machine import probe
from omb_suite.osu import versions as osu_versions
from omb_suite.rfm import site_offers
from omb_suite.rfm.base import OsuRunBase
from omb_suite.rfm.pt2pt import OsuPt2PtBase


class _FilledInOrder(OsuRunBase):
    """Ranks filled core by core (mapping ``core``), so consecutive ranks share a node."""

    def placing(self) -> placements.Mapping:
        return placements.mapping('core')

    def launcher_options(self):
        return site_offers.placed_launch(self, self.placing())


class OsuPairsBase(_FilledInOrder):
    """N pairs running the same benchmark at once, halves placed by ``placement``.

    The child defines ``benchmark`` and ``placement``.
    """

    #: Pairs for ``placement=inter_node`` (``None``: one per core of a node). Socket
    #: placements use the socket's cores (the mapping fills them in order).
    #: :type: :class:`int` or ``None`` :default: ``None``
    pairs = variable(int, type(None), value=None, loggable=False)

    tags = {'multi-pair'}

    @run_after('setup')
    def shape_pairs(self):
        shape = placements.placement(self.placement).pairs_shape(self.topology, self.pairs)
        self.skip_if(isinstance(shape, str), f'pairs: {shape} ({self.current_partition.fullname})')
        self.num_nodes = shape.num_nodes
        self.num_tasks = shape.num_tasks
        self.num_tasks_per_node = shape.tasks_per_node

    def check_placement(self, places):
        probe.verify_ranks(places, nodes=self.num_nodes)
        placements.placement(self.placement).verify_halves(places)


class OsuMbwMrBase(OsuPairsBase):
    """``osu_mbw_mr``: aggregate bandwidth and message rate of N pairs, ``window_size``
    messages in flight per pair (``-W``; the child's parameter, a perflog column)."""

    benchmark = variable(str, value='osu_mbw_mr')

    def osu_options(self):
        return [*super().osu_options(), '-W', str(self.window_size)]

    @run_after('sanity')
    def check_pairs(self):
        self.expect_meta(pairs=self.num_tasks // 2, window_size=self.window_size)


class OsuLatencyMpBase(OsuPt2PtBase):
    """``osu_latency_mp``: ping-pong between two ranks that each fork ``processes`` child
    processes (``-t N:N``; the child's parameter, a perflog column)."""

    benchmark = variable(str, value='osu_latency_mp')
    tags = {'multi-process'}

    @run_after('setup')
    def skip_osu_defects(self):
        """A release whose osu_latency_mp cannot run (``data/osu_versions.yaml`` defects)."""
        broken = osu_versions.defect(self.osu_version, 'forked_processes')
        self.skip_if(broken is not None, f'OSU {self.osu_version}: {broken}; not run')

    def osu_options(self):
        # `-t N` alone sets only the receiver's children: give both sides explicitly
        return [*super().osu_options(), '-t', f'{self.processes}:{self.processes}']

    @run_after('sanity')
    def check_processes(self):
        self.expect_meta(sender_processes=self.processes, receiver_processes=self.processes)


class OsuCongestionBase(_FilledInOrder):
    """``osu_bw_fan_in``/``osu_bw_fan_out`` (OSU 7.4+): one rank per node talks to the ranks of
    all other nodes; the child's ``nodes`` parameter says how many (same tasks per node)."""

    #: Ranks per node (the same on every node, as OSU requires).
    #: :type: :class:`int` :default: ``1``
    tasks_per_node = variable(int, value=1, loggable=False)

    tags = {'congestion'}

    @run_after('setup')
    def shape_job(self):
        have = self.topology.nodes
        self.skip_if(self.nodes > have, f'{self.nodes} nodes asked, '
                     f'{self.current_partition.fullname} has {have}')
        self.num_nodes = self.nodes
        self.num_tasks_per_node = self.tasks_per_node
        self.num_tasks = self.nodes * self.tasks_per_node

    def check_placement(self, places):
        probe.verify_ranks(places, nodes=self.nodes)
