"""Two ranks placed as a placement says: point-to-point, one-sided and multi-process checks.

:class:`PlacedPair` takes the placement object named by ``self.placement`` (``intra_socket``,
``inter_socket``, ``inter_node``; :mod:`omb_suite.launch.placements`) and asks it everything: the
job shape (or why the partition cannot offer it), the launcher options on this partition
(:func:`.site_offers.placed_launch`) and whether the observed ranks satisfy it.
:class:`OsuPt2PtBase` is an OSU run between such a pair.
"""

from __future__ import annotations

import reframe as rfm
from reframe.core.builtins import run_after

from omb_suite.launch import placements
from omb_suite.machine.topology import of_partition
from omb_suite.osu import limits as osu_limits
from omb_suite.osu import versions as osu_versions
from omb_suite.rfm import site_offers
from omb_suite.rfm.base import OsuRunBase


class PlacedPair(rfm.RegressionTestPlugin):
    """Job resources, launcher options and verification of two ranks placed as
    ``self.placement`` says; skipped where the partition cannot offer it.

    The child defines ``placement`` (usually ``parameter(site_offers.placements())``)
    and a loggable ``num_nodes`` variable.
    """

    def placing(self) -> placements.Placement:
        return placements.placement(self.placement)

    @run_after('setup')
    def shape_pair(self):
        where = self.placing()
        part = self.current_partition
        why = where.unmet_on(of_partition(part))
        self.skip_if(why is not None, f'{why}: {where.doc} is not possible on {part.fullname}')
        self.num_tasks = where.num_tasks
        self.num_tasks_per_node = where.tasks_per_node
        self.num_nodes = where.nodes

    def launcher_options(self) -> list[str]:
        return site_offers.placed_launch(self, self.placing())

    def check_placement(self, places):
        self.placing().verify(places)


class OsuPt2PtBase(PlacedPair, OsuRunBase):
    """An OSU benchmark between two ranks with a verified placement."""

    def datatype_bytes(self) -> int:
        """The unit of the sizes OSU runs: one byte per partition (``-q``, 8 by default for
        ``osu_partitioned_latency``, whose sizes below it hold no element; 1 for the others)."""
        return osu_limits.partitions(self.benchmark, list(self.extra_opts))

    @run_after('setup')
    def skip_program_defects(self):
        """A program this OSU release cannot run (``data/osu_versions.yaml`` defects with
        ``programs``); after the base's ``find_benchmark``, which reads the release."""
        broken = osu_versions.program_defect(self.benchmark, self.osu_version)
        self.skip_if(broken is not None, f'OSU {self.osu_version}: {broken}; not run')
