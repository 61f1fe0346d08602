"""The ReFrame layer: every ReFrame class of the suite, each in a module named after what it
runs. Check files under ``reframe/checks/`` only subclass these and declare parameters.

Imports flow one way: checks -> ``omb_suite.rfm`` -> the pure modules of ``omb_suite``
(catalogue, parsing, placements, probe, topology, mpilib, algorithms, evidence) -> data.
"""

from omb_suite.rfm import budget_selection, listing, reframe_speed
from omb_suite.rfm.base import OsuRunBase
from omb_suite.rfm.collective import OsuCollectiveBase
from omb_suite.rfm.gpu import DeviceBuffers
from omb_suite.rfm.multipair import (
    OsuCongestionBase,
    OsuLatencyMpBase,
    OsuMbwMrBase,
    OsuPairsBase,
)
from omb_suite.rfm.onesided import OsuOneSidedBase
from omb_suite.rfm.placement_probe import PlacementProbeBase, PlacementProbeBuild
from omb_suite.rfm.procurement_check import OsuProcurementBase
from omb_suite.rfm.pt2pt import OsuPt2PtBase, PlacedPair
from omb_suite.rfm.startup import OsuStartupBase

__all__ = [
    'DeviceBuffers', 'OsuCollectiveBase', 'OsuCongestionBase',
    'OsuLatencyMpBase', 'OsuMbwMrBase', 'OsuOneSidedBase', 'OsuPairsBase', 'OsuProcurementBase',
    'OsuPt2PtBase',
    'OsuRunBase', 'OsuStartupBase', 'PlacedPair', 'PlacementProbeBase', 'PlacementProbeBuild',
]

# ReFrame walks the whole stack for every suppressed deprecation of every log record
# (measured: a quarter of a small run); see reframe_speed for what is skipped and why.
reframe_speed.apply()
# `reframe -l` prints the predicted cost of what it lists (listing: in memory, no dry run)
listing.apply()
# `-S budget=NODE_MINUTES`, `-S campaign=NAME`: the selection within a budget (budget_selection)
budget_selection.apply()
