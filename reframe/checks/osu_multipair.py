"""Multi-pair verdict: aggregate bandwidth and message rate of as many pairs as the
placement's cores hold (``osu_mbw_mr``, window 64), for every placement the partition offers.

    reframe -C reframe/config/settings.py -c reframe/checks -n OsuMbwMr -r
"""

import reframe as rfm
from reframe.core.builtins import parameter

from omb_suite.osu import catalogue
from omb_suite.rfm import OsuMbwMrBase, site_offers


@rfm.simple_test
class OsuMbwMr(OsuMbwMrBase):
    """``osu_mbw_mr``: aggregate bandwidth and message rate of N pairs."""

    #: Where the two halves of the pairs sit: ``inter_node``, ``inter_socket``, ``intra_socket``.
    placement = parameter(site_offers.placements())

    #: Messages in flight per pair before the receiver replies (``-W``).
    window_size = parameter([catalogue.verdict_window_size()])

    tags = {'multi-pair', 'verdict'}
