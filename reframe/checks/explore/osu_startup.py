"""Start-up exploration: ``osu_init`` and ``osu_hello`` over node counts.

    reframe -C reframe/config/settings.py -c reframe/checks --mode explore -n OsuStartupSweep -r

``MPI_Init`` should grow about logarithmically with the node count (tree-based wire-up).
"""

import reframe as rfm
from reframe.core.builtins import parameter

from omb_suite.osu import catalogue
from omb_suite.rfm import OsuStartupBase
from omb_suite.rfm.startup import StartupSweep


@rfm.simple_test
class OsuStartupSweep(StartupSweep, OsuStartupBase):
    """``MPI_Init`` time or a hello world on a number of nodes."""

    benchmark = parameter(catalogue.names('startup'))

    #: Nodes in the job; counts above the partition's node count are skipped.
    nodes = parameter([1, 2, 4, 8, 16, 32, 64, 128])

    tags = {'startup', 'explore'}
