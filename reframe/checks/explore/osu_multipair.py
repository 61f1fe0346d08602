"""Multi-pair, multi-process and congestion exploration.

- ``OsuMbwMrSweep``: ``osu_mbw_mr`` with other windows than the verdict set's;
- ``OsuMultiLat``: ping-pong latency of N pairs at once;
- ``OsuLatencyMp``: ping-pong between two ranks that fork child processes;
- ``OsuCongestion``: ``osu_bw_fan_in``/``_fan_out`` over several nodes (OSU 7.4+).

    reframe -C reframe/config/settings.py -c reframe/checks --mode explore -n OsuMultiLat -r
"""

import reframe as rfm
from reframe.core.builtins import parameter, variable

from omb_suite.osu import catalogue
from omb_suite.rfm import (
    OsuCongestionBase,
    OsuLatencyMpBase,
    OsuMbwMrBase,
    OsuPairsBase,
    site_offers,
)


@rfm.simple_test
class OsuMbwMrSweep(OsuMbwMrBase):
    """``osu_mbw_mr`` with other windows (``-W``) than the verdict set's 64."""

    #: Where the two halves of the pairs sit: ``inter_node``, ``inter_socket``, ``intra_socket``.
    placement = parameter(site_offers.placements())

    #: Messages in flight per pair before the receiver replies (``-W``).
    window_size = parameter([1, 16, 256])

    tags = {'multi-pair', 'explore'}


@rfm.simple_test
class OsuMultiLat(OsuPairsBase):
    """``osu_multi_lat``: ping-pong latency of N pairs at once."""

    benchmark = variable(str, value='osu_multi_lat')

    #: Where the two halves of the pairs sit: ``inter_node``, ``inter_socket``, ``intra_socket``.
    placement = parameter(site_offers.placements())

    tags = {'multi-pair', 'explore'}


@rfm.simple_test
class OsuLatencyMp(OsuLatencyMpBase):
    """``osu_latency_mp``: ping-pong between two ranks that fork child processes."""

    #: ``intra_socket``, ``inter_socket`` or ``inter_node`` (see data/placements.yaml).
    placement = parameter(site_offers.placements())

    #: Child processes forked by each side (``-t N:N``).
    processes = parameter([1, 2])

    tags = {'multi-process', 'explore'}


@rfm.simple_test
class OsuCongestion(OsuCongestionBase):
    """``osu_bw_fan_in``/``osu_bw_fan_out`` over several nodes (OSU 7.4+)."""

    benchmark = parameter(catalogue.names('congestion'))

    #: Nodes in the job (at least 2); counts above the partition's ``num_nodes`` are skipped.
    nodes = parameter([2, 4, 8])

    tags = {'congestion', 'explore'}
