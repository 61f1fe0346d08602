"""Point-to-point OSU checks: latency, bandwidth, bi-bandwidth, multi-threaded latency
and the persistent variants (OSU 7.x), for every placement the partition can offer.

    reframe -C reframe/config/settings.py -c reframe/checks -n OsuPt2Pt -r
"""

import reframe as rfm
from reframe.core.builtins import parameter

from omb_suite import benchmarks, placement
from omb_suite.bases import OsuPt2PtBase
from omb_suite.gpu import BUFFERS, DeviceBuffers

#: Run by reframe/checks/osu_multipair.py (many pairs, forked processes), not here.
MULTI = ('osu_mbw_mr', 'osu_multi_lat', 'osu_latency_mp')


@rfm.simple_test
class OsuPt2Pt(DeviceBuffers, OsuPt2PtBase):
    """One OSU point-to-point benchmark between two ranks placed as asked."""

    #: OSU program (catalogue group ``pt2pt``); persistent ones need OSU 7.0+.
    benchmark = parameter([b for b in benchmarks.names('pt2pt') if b not in MULTI])

    #: ``intra_socket``, ``inter_socket`` or ``inter_node`` (see data/placements.yaml).
    placement = parameter(placement.placement_names())

    #: ``H H`` (host) or device buffers ``D D``, ``H D``, ``D H`` (GPU partitions only).
    buffers = parameter(BUFFERS)

    tags = {'pt2pt'}
