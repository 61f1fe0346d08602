"""Point-to-point verdict: latency, bandwidth and bi-bandwidth between two ranks, for every
placement the partition offers and every buffer location (device buffers on GPU partitions).

    reframe -C reframe/config/settings.py -c reframe/checks -n OsuPt2Pt -r
    reframe ... -n 'OsuPt2Pt%benchmark=osu_latency%placement=intra_socket' -r
"""

import reframe as rfm
from reframe.core.builtins import parameter

from omb_suite.osu import catalogue
from omb_suite.rfm import DeviceBuffers, OsuPt2PtBase, site_offers


@rfm.simple_test
class OsuPt2Pt(DeviceBuffers, OsuPt2PtBase):
    """One OSU point-to-point benchmark between two ranks placed as asked."""

    #: OSU program (the verdict set's point-to-point programs, data/catalogue.yaml).
    benchmark = parameter(catalogue.verdict('pt2pt'))

    #: ``intra_socket``, ``inter_socket`` or ``inter_node`` (see data/placements.yaml).
    placement = parameter(site_offers.placements())

    #: ``H H`` (host) or device buffers ``D D``, ``H D``, ``D H`` (GPU partitions only).
    buffers = parameter(catalogue.buffers())

    tags = {'pt2pt', 'verdict'}
