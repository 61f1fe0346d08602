"""OSU collective checks: every blocking and non-blocking collective, per algorithm, per scale
(rank count), per process mapping.

    reframe -C reframe/config/settings.py -c reframe/checks -n osu_bcast -r
    reframe ... -n OsuCollective -E "algorithm in ('default', 'knomial') and scale == '4'" -r

Cases are named ``<benchmark>/<algorithm>`` (``%case=osu_bcast/chain``). The algorithms are
those of the MPI libraries of the selected system's environments; scales (powers of two) and
mappings are those its partitions can hold. See docs/collectives.md.
"""

import reframe as rfm
from reframe.core.builtins import parameter
from reframe.core.runtime import runtime

from omb_suite import collectives as coll
from omb_suite.collectives import OsuCollectiveBase

_SYSTEM = runtime().system
_LIBRARIES = coll.system_libraries(_SYSTEM)
_SIZES = [coll.partition_size(part) for part in _SYSTEM.partitions]


@rfm.simple_test
class OsuCollective(OsuCollectiveBase):
    """A blocking OSU collective: average, min and max latency per message size."""

    #: (benchmark, algorithm): 'default' and every algorithm the system's MPIs name for it.
    case = parameter(coll.cases(coll.collective_benchmarks(nonblocking=False), _LIBRARIES),
                     fmt=coll.case_name)

    #: Number of ranks (powers of two up to the largest partition's core count).
    scale = parameter(coll.scales_for(_SIZES))

    #: ``core``, ``socket`` or ``node`` (round-robin), where a partition can tell them apart.
    mapping = parameter(coll.mappings_for(_SIZES))

    tags = {'blocking'}


@rfm.simple_test
class OsuNonBlockingCollective(OsuCollectiveBase):
    """A non-blocking OSU collective: overall, compute, pure communication time and overlap."""

    #: (benchmark, algorithm): 'default' and every algorithm the system's MPIs name for it.
    case = parameter(coll.cases(coll.collective_benchmarks(nonblocking=True), _LIBRARIES),
                     fmt=coll.case_name)

    #: Number of ranks (powers of two up to the largest partition's core count).
    scale = parameter(coll.scales_for(_SIZES))

    #: ``core``, ``socket`` or ``node`` (round-robin), where a partition can tell them apart.
    mapping = parameter(coll.mappings_for(_SIZES))

    tags = {'nonblocking'}
