"""Which node or link is slow: every node of one allocation (``--mode fleet``).

    salloc -N 4 reframe -C reframe/config/settings.py --mode fleet --system CLUSTER:alloc -r

Each node within itself, then every pair in rounds of disjoint pairs; the test fails naming
the slow node, link or switch group, with the drain lines a site would run
(docs/howto-fleet.md).
"""

import reframe as rfm
from reframe.core.builtins import parameter

from omb_suite.rfm.fleet_job import OsuFleetBase


@rfm.simple_test
class OsuFleet(OsuFleetBase):
    benchmark = parameter(['osu_latency', 'osu_bw'])
