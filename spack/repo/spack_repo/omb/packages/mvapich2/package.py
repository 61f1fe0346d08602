# Copyright the OMB regression suite authors.
#
# SPDX-License-Identifier: BSD-3-Clause
"""MVAPICH2, as the omb regression suite needs it: builtin's recipe plus one variant.

``mpit_pvars`` passes ``--enable-mpit-pvars``. MVAPICH2's default (``none``) compiles out its
MPI_T performance variables, among them the per-algorithm call counters
(``mv2_coll_bcast_binomial``, ...) that are the suite's only evidence of which collective
algorithm ran; ``mv2`` keeps them. Builtin's recipe (spack-packages v2025.11.0) has no way
to pass the option.
"""

from spack_repo.builtin.packages.mvapich2.package import Mvapich2 as BuiltinMvapich2

from spack.package import variant


class Mvapich2(BuiltinMvapich2):
    """MVAPICH2 (builtin's recipe) with its MPI_T performance variables selectable, on by
    default: the omb suite reads the per-algorithm collective counters among them."""

    variant(
        "mpit_pvars",
        default="mv2",
        values=("none", "mv2", "all"),
        multi=False,
        description="MPI_T performance variables (mv2: MVAPICH2's, incl. per-algorithm "
        "collective counters; none compiles them out)",
    )

    def configure_args(self):
        return [
            *super().configure_args(),
            f"--enable-mpit-pvars={self.spec.variants['mpit_pvars'].value}",
        ]
