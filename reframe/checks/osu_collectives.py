"""Collective verdict: the main blocking collectives and one non-blocking one with the
library's default algorithm, at the partition's smallest and largest scale; each launch checks
its collective's results (every element of every size) before it measures.

    reframe -C reframe/config/settings.py -c reframe/checks -n OsuCollective -r
    reframe ... -n 'OsuCollective%case=osu_alltoall/default' -r     (no spaces in -n)
    reframe ... -t osu_alltoall -r

Every algorithm, scale and mapping: reframe/checks/explore (--mode explore). See
docs/collectives.md.
"""

import reframe as rfm
from reframe.core.builtins import parameter

from omb_suite.mpi import algorithms
from omb_suite.osu import catalogue
from omb_suite.rfm import OsuCollectiveBase, site_offers
from omb_suite.rfm.collective import CollectiveVerdict


@rfm.simple_test
class OsuCollective(CollectiveVerdict, OsuCollectiveBase):
    """A blocking OSU collective: average, min and max latency per message size."""

    #: (benchmark, 'default'): the verdict set's blocking collectives.
    case = parameter([(b, algorithms.DEFAULT) for b in catalogue.verdict('collective')],
                     fmt='/'.join)

    #: Ranks: each partition's smallest (2) and largest (all its cores) scale.
    scale = parameter(site_offers.verdict_scales())

    #: Ranks fill cores in order.
    mapping = parameter(['core'])

    tags = {'blocking', 'verdict'}


@rfm.simple_test
class OsuNonBlockingCollective(CollectiveVerdict, OsuCollectiveBase):
    """A non-blocking OSU collective: overall, compute, pure communication time and overlap."""

    #: (benchmark, 'default'): the verdict set's non-blocking collective.
    case = parameter([(b, algorithms.DEFAULT) for b in catalogue.verdict('nonblocking')],
                     fmt='/'.join)

    #: Ranks: each partition's smallest (2) and largest (all its cores) scale.
    scale = parameter(site_offers.verdict_scales())

    #: Ranks fill cores in order.
    mapping = parameter(['core'])

    tags = {'nonblocking', 'verdict'}
