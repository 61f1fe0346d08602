"""Start-up OSU runs: ``osu_init`` (time of ``MPI_Init``) and ``osu_hello`` on a number of
nodes (the child's ``nodes`` parameter), one rank per node by default, ranks dealt over the
nodes (mapping ``node``).

``MPI_Init`` should grow about logarithmically with the node count (tree-based wire-up); each
node count has its own reference in ``reframe/references/<system>.yaml``.
"""

from __future__ import annotations

import reframe as rfm
from reframe.core.builtins import run_after, variable
from reframe.core.exceptions import SanityError

from omb_suite.launch import placements
from omb_suite.machine import probe
from omb_suite.osu import catalogue
from omb_suite.rfm import site_offers
from omb_suite.rfm.base import OsuRunBase


class OsuStartupBase(OsuRunBase):
    """``MPI_Init`` time or a hello world on ``nodes`` nodes."""

    #: Ranks per node.
    #: :type: :class:`int` :default: ``1``
    tasks_per_node = variable(int, value=1, loggable=False)

    mapping = variable(str, value='node')
    tags = {'startup'}

    @run_after('setup')
    def shape_job(self):
        have = self.topology.nodes
        self.skip_if(self.nodes > have,
                     f'{self.nodes} nodes asked, {self.current_partition.fullname} has {have}')
        self.num_nodes = self.nodes
        self.num_tasks_per_node = self.tasks_per_node
        self.num_tasks = self.nodes * self.tasks_per_node

    def osu_options(self):
        # osu_hello and osu_init take no options in OSU 7.4 (osu_init: -h/-v only)
        return list(self.extra_opts)

    def placing(self) -> placements.Mapping:
        return placements.mapping(self.mapping)

    def launcher_options(self):
        return site_offers.placed_launch(self, self.placing())

    def check_placement(self, places):
        probe.verify_ranks(places, nodes=self.nodes, oversubscribed=True)

    @run_after('sanity')
    def check_process_count(self):
        if self.is_dry_run():
            return
        nprocs = int(self.osu_table.value('nprocs'))
        if nprocs != self.num_tasks:
            raise SanityError(f'{self.benchmark} reports {nprocs} processes, the job has '
                              f'{self.num_tasks}')


class StartupVerdict(rfm.RegressionTestPlugin):
    """The verdict set: one node and every node of the partition."""

    @run_after('setup')
    def only_end_nodes(self):
        ends = (1, self.topology.nodes)
        self.skip_if(self.nodes not in ends, f'{self.nodes} nodes is neither 1 nor all nodes '
                     f'of {self.current_partition.fullname}: --mode explore runs it')


class StartupSweep(rfm.RegressionTestPlugin):
    """The exploration: every node count except what the verdict set measures."""

    @run_after('setup')
    def not_in_verdict(self):
        verdict = (self.benchmark in catalogue.verdict('startup') and self.tasks_per_node == 1
                   and self.nodes in (1, self.topology.nodes))
        self.skip_if(verdict, 'measured by the verdict set (reframe/checks/osu_startup.py)')
