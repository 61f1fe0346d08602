"""Collective exploration: every blocking, persistent, neighbourhood and non-blocking OSU
collective, per algorithm (as the library names it), per scale, per mapping.

    reframe -C reframe/config/settings.py -c reframe/checks --mode explore -n OsuCollectiveSweep -r
    reframe ... -n 'OsuCollectiveSweep%case=osu_bcast/knomial' -E 'scale == 4' -r

Cases are named ``<benchmark>/<algorithm>``; the algorithms are those of the MPI libraries of
the selected system's environments, scales (powers of two) and mappings those its partitions
can hold. What the verdict set measures is skipped here. See docs/collectives.md.
"""

import reframe as rfm
from reframe.core.builtins import parameter

from omb_suite.mpi import algorithms
from omb_suite.osu import catalogue
from omb_suite.rfm import OsuCollectiveBase, site_offers
from omb_suite.rfm.collective import CollectiveSweep


@rfm.simple_test
class OsuCollectiveSweep(CollectiveSweep, OsuCollectiveBase):
    """A blocking OSU collective: average, min and max latency per message size."""

    #: (benchmark, algorithm): 'default' and every algorithm the system's MPIs name for it.
    case = parameter(algorithms.cases(catalogue.names('collective'), site_offers.libraries()),
                     fmt='/'.join)

    #: Number of ranks (powers of two up to the largest partition's core count).
    scale = parameter(site_offers.all_scales())

    #: ``core``, ``socket`` or ``node`` (round-robin), where a partition can tell them apart.
    mapping = parameter(site_offers.mappings())

    tags = {'blocking', 'explore'}


@rfm.simple_test
class OsuNonBlockingSweep(CollectiveSweep, OsuCollectiveBase):
    """A non-blocking OSU collective: overall, compute, pure communication time and overlap."""

    #: (benchmark, algorithm): 'default' and every algorithm the system's MPIs name for it.
    case = parameter(algorithms.cases(catalogue.names('nonblocking'), site_offers.libraries()),
                     fmt='/'.join)

    #: Number of ranks (powers of two up to the largest partition's core count).
    scale = parameter(site_offers.all_scales())

    #: ``core``, ``socket`` or ``node`` (round-robin), where a partition can tell them apart.
    mapping = parameter(site_offers.mappings())

    tags = {'nonblocking', 'explore'}
