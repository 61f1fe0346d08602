"""Point-to-point exploration: the programs outside the verdict set (multi-threaded latency,
the MPI-4 persistent variants), for every placement and buffer location.

    reframe -C reframe/config/settings.py -c reframe/checks --mode explore -n OsuPt2PtMore -r
"""

import reframe as rfm
from reframe.core.builtins import parameter

from omb_suite.osu import catalogue
from omb_suite.rfm import DeviceBuffers, OsuPt2PtBase, site_offers


@rfm.simple_test
class OsuPt2PtMore(DeviceBuffers, OsuPt2PtBase):
    """One OSU point-to-point benchmark between two ranks placed as asked."""

    #: OSU program (catalogue kind ``pt2pt`` not in the verdict set); persistent ones need
    #: OSU 7.1+.
    benchmark = parameter([b for b in catalogue.names('pt2pt')
                           if b not in catalogue.verdict('pt2pt')])

    #: ``intra_socket``, ``inter_socket`` or ``inter_node`` (see data/placements.yaml).
    placement = parameter(site_offers.placements())

    #: ``H H`` (host) or device buffers ``D D``, ``H D``, ``D H`` (GPU partitions only).
    buffers = parameter(catalogue.buffers())

    tags = {'pt2pt', 'explore'}
