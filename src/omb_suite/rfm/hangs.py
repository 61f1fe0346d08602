"""Library defects that keep a run from exiting (:mod:`omb_suite.mpi.known_hangs`) applied to a
ReFrame test (:class:`KnownHangs`): which library this run uses, whether it may hang after
its whole result, what a run stopped at its limit then means, and which runs are skipped.

Attributes the test must offer: ``benchmark``, ``mpi_family``, ``mpi_version``,
``num_nodes``, ``search_path()``.
"""

from __future__ import annotations

import reframe as rfm
from reframe.core.builtins import run_after, variable
from reframe.core.exceptions import SanityError

from omb_suite.mpi import known_hangs, mpilib


class KnownHangs(rfm.RegressionTestPlugin):
    """The library's known hangs: the run as they match it, and the treatment of a hang that
    comes after the whole result (the result stands, the defect is named)."""

    #: The library defect a passing run met (``data/known_hangs.yaml``): it printed its
    #: whole result, then did not exit ('' = none).
    known_defect = variable(str, value='')

    @run_after('setup', always_last=True)
    def skip_known_hang(self):
        """A library known to hang in this program at this node count in most runs is not
        run (it would sit until its limit): skipped with the defect. Last of setup: the
        job's node count is known then."""
        reason = known_hangs.known_hang(self.library_run())
        self.skip_if(reason is not None, reason or '')

    def library_run(self) -> known_hangs.Run:
        """This run as :mod:`omb_suite.mpi.known_hangs` matches it: program, library, nodes."""
        return known_hangs.Run(self.benchmark, self.mpi_family, self.mpi_version,
                               mpilib.library_device(self.mpi_family, self.search_path()),
                               self.num_nodes)

    def hang_after_result(self) -> str | None:
        """The library defect that can keep this run from exiting after its whole result
        (:func:`omb_suite.mpi.known_hangs.hang_after_result`), or None."""
        return known_hangs.hang_after_result(self.library_run())

    def accept_hang_after_result(self, stopped: str, whole_result: bool) -> None:
        """A run stopped at its limit fails (``stopped`` says why), unless it printed its
        whole result and its library is known to hang after that (``data/known_hangs.yaml``):
        then the result stands and the defect is named (log, run report ``known_defect``)."""
        defect = self.hang_after_result() if whole_result else None
        if defect is None:
            raise SanityError(stopped)
        self.known_defect = defect
        self.logger.warning(f'{self.display_name}: {stopped}; the result is kept: {defect}')
