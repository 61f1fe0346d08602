"""Placement probe: proves that every placement puts ranks where it says, where no OSU is
installed yet (it needs only MPI). Every OSU check proves its own placement in its launch.

    reframe -C reframe/config/settings.py -c reframe/checks -n PlacementProbe -r
"""

import reframe as rfm
from reframe.core.builtins import parameter

from omb_suite.launch import placements
from omb_suite.rfm import PlacementProbeBase


@rfm.simple_test
class PlacementProbe(PlacementProbeBase):
    """Run the MPI probe alone with one placement and verify it."""

    placement = parameter(placements.placement_names())
    valid_prog_environs = ['+mpi -osu']
