"""Two ranks placed as a placement says: point-to-point, one-sided and multi-process checks.

:class:`PlacedPair` shapes the job from ``self.placement`` (``intra_socket``,
``inter_socket``, ``inter_node``) and skips where the partition cannot offer it;
:class:`OsuPt2PtBase` is an OSU run between such a pair, its placement verified.
"""

from __future__ import annotations

import reframe as rfm
from reframe.core.builtins import run_after

from omb_suite import placements
from omb_suite.rfm.base import OsuRunBase
from omb_suite.topology import of_partition


class PlacedPair(rfm.RegressionTestPlugin):
    """Job resources of two ranks placed as ``self.placement`` says, skipped where impossible.

    The child defines ``placement`` (usually ``parameter(placements.placement_names())``)
    and a loggable ``num_nodes`` variable.
    """

    @run_after('setup')
    def shape_pair(self):
        where = placements.get_placement(self.placement)
        part = self.current_partition
        why = placements.unmet_needs(where, of_partition(part))
        self.skip_if(why is not None, f'{why}: {where.doc} is not possible on {part.fullname}')
        self.num_tasks = where.num_tasks
        self.num_tasks_per_node = where.tasks_per_node
        self.num_nodes = where.num_nodes


class OsuPt2PtBase(PlacedPair, OsuRunBase):
    """An OSU benchmark between two ranks with a verified placement."""

    def launcher_options(self):
        return self.place_with(placements.placement_options, self.placement)

    def check_placement(self, places):
        placements.verify_pair(self.placement, places)
