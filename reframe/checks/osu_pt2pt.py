"""Point-to-point OSU checks: latency, bandwidth, bi-bandwidth, multi-threaded latency
and the persistent variants (OSU 7.x), for every placement the partition can offer.

    reframe -C reframe/config/settings.py -c reframe/checks -n OsuPt2Pt -r
"""

from reframe.core.builtins import parameter

import reframe as rfm
from omb_suite import benchmarks, placement
from omb_suite.bases import OsuPt2PtBase


@rfm.simple_test
class OsuPt2Pt(OsuPt2PtBase):
    """One OSU point-to-point benchmark between two ranks placed as asked."""

    #: OSU program (catalogue group ``pt2pt``); persistent ones need OSU 7.0+.
    benchmark = parameter(benchmarks.names('pt2pt'))

    #: ``intra_socket``, ``inter_socket`` or ``inter_node`` (see data/placements.yaml).
    placement = parameter(placement.placement_names())

    tags = {'pt2pt'}
