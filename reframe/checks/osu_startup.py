"""Start-up verdict: ``MPI_Init`` time (``osu_init``) on one node and on every node of the
partition.

    reframe -C reframe/config/settings.py -c reframe/checks -n OsuStartup -r
"""

import reframe as rfm
from reframe.core.builtins import parameter

from omb_suite.osu import catalogue
from omb_suite.rfm import OsuStartupBase, site_offers
from omb_suite.rfm.startup import StartupVerdict


@rfm.simple_test
class OsuStartup(StartupVerdict, OsuStartupBase):
    """``MPI_Init`` time on 1 node and on all nodes."""

    benchmark = parameter(catalogue.verdict('startup'))

    #: One node and each partition's node count.
    nodes = parameter(site_offers.end_nodes())

    tags = {'startup', 'verdict'}
