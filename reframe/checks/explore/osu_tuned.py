"""A library's tuning file (written by ``omb-review tune``) against its default, in one job.

    omb-review tune perflogs -o tuning/
    reframe -C reframe/config/settings.py -c reframe/checks/explore -n OsuTunedCollective \\
        -S tuning_dir=tuning -r

The file is proven read and applied by the library's own output where it can show it, and the
check fails where the load is slower than the default beyond the noise, for every collective
the load touches (blocking and non-blocking) and at the scales the sweep skipped too. See
docs/tuning.md.
"""

import reframe as rfm
from reframe.core.builtins import parameter

from omb_suite.mpi import algorithms
from omb_suite.osu import catalogue
from omb_suite.rfm import OsuCollectiveBase, site_offers
from omb_suite.rfm.tuned import TunedComparison, scales_with_validation


@rfm.simple_test
class OsuTunedCollective(TunedComparison, OsuCollectiveBase):
    """A blocking OSU collective with the tuning file, against the library's default."""

    #: (benchmark, 'default'): the blocking collectives; those the load does not touch and
    #: the verdict set does not hold are skipped (the recommendation's ``touches``).
    case = parameter([(b, algorithms.DEFAULT) for b in catalogue.names('collective')],
                     fmt='/'.join)

    #: Number of ranks: the sweep's (powers of two up to the largest partition's core count),
    #: one above each and the non-power-of-two between them (validation beyond the sweep).
    scale = parameter(scales_with_validation(site_offers.all_scales()))

    #: ``core``, ``socket`` or ``node`` (round-robin), where a partition can tell them apart.
    mapping = parameter(site_offers.mappings())

    tags = {'blocking', 'explore', 'tuning'}


@rfm.simple_test
class OsuTunedNonBlocking(TunedComparison, OsuCollectiveBase):
    """A non-blocking OSU collective with the tuning file, against the library's default
    (its pure communication time compared)."""

    #: (benchmark, 'default'): the non-blocking collectives; those the load does not touch
    #: and the verdict set does not hold are skipped (``-S measure_untouched=1`` runs them).
    case = parameter([(b, algorithms.DEFAULT) for b in catalogue.names('nonblocking')],
                     fmt='/'.join)

    #: As :class:`OsuTunedCollective`'s.
    scale = parameter(scales_with_validation(site_offers.all_scales()))

    #: ``core``, ``socket`` or ``node`` (round-robin), where a partition can tell them apart.
    mapping = parameter(site_offers.mappings())

    tags = {'nonblocking', 'explore', 'tuning'}
