"""One-sided (RMA) exploration: put/get latency and bandwidth, accumulate, fetch-and-op and
compare-and-swap, for every window creation and synchronization each benchmark accepts.

    reframe -C reframe/config/settings.py -c reframe/checks --mode explore -n OsuOneSided -r
"""

import reframe as rfm
from reframe.core.builtins import parameter

from omb_suite.osu import catalogue
from omb_suite.rfm import OsuOneSidedBase, site_offers


@rfm.simple_test
class OsuOneSided(OsuOneSidedBase):
    """One OSU one-sided benchmark with one window creation and synchronization mode."""

    #: ``(benchmark, window, sync)``: only the combinations the benchmark accepts.
    case = parameter(catalogue.one_sided_cases(), fmt='/'.join)

    #: ``intra_socket``, ``inter_socket`` or ``inter_node`` (see data/placements.yaml).
    placement = parameter(site_offers.placements())
