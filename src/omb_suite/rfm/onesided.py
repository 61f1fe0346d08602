"""One-sided (RMA) OSU runs: one benchmark with one window creation (``-w``) and one
synchronization (``-s``) mode, between two placed ranks.

The child's ``case`` parameter is a (benchmark, window, sync) triple from
:func:`omb_suite.osu.catalogue.one_sided_cases` (only the combinations OSU accepts). The window
and sync are logged in their own perflog columns (``rma_window``, ``rma_sync``): each pair is
its own series for ``omb-review``.
"""

from __future__ import annotations

from reframe.core.builtins import run_after, variable

from omb_suite.osu import catalogue
from omb_suite.osu import versions as osu_versions
from omb_suite.rfm.pt2pt import OsuPt2PtBase


class OsuOneSidedBase(OsuPt2PtBase):
    """One OSU one-sided benchmark with one window creation and synchronization mode."""

    #: Messages per synchronization epoch of the bandwidth tests (``-W``); ``None`` keeps
    #: OSU's default (64).
    #: :type: :class:`int` or ``None`` :default: ``None``
    window_size = variable(int, type(None), value=None)

    benchmark = variable(str, value='')
    rma_window = variable(str)
    rma_sync = variable(str)
    tags = {'one-sided'}

    @run_after('init')
    def unpack_case(self):
        self.benchmark, self.rma_window, self.rma_sync = self.case
        self.tags = self.tags | {self.benchmark}

    @run_after('setup')
    def skip_osu_defects(self):
        """A window mode the installed OSU cannot run (``data/osu_versions.yaml`` defects)."""
        broken = osu_versions.defect(self.osu_version, 'dynamic_window')
        self.skip_if(self.rma_window == 'dynamic' and broken is not None,
                     f'OSU {self.osu_version}: {broken}; not run')

    def osu_options(self):
        opts = [*super().osu_options(), '-w', self.rma_window, '-s', self.rma_sync]
        if self.window_size is not None and self.benchmark.endswith(('_bw', '_bibw')):
            opts += ['-W', str(self.window_size)]
        return opts

    @run_after('sanity')
    def check_rma_mode(self):
        """OSU prints the modes it used: they must be the ones asked for."""
        self.expect_meta(window_creation=catalogue.rma_windows()[self.rma_window],
                         synchronization=catalogue.rma_syncs()[self.rma_sync])
