"""One-sided (RMA) OSU checks: put/get latency and bandwidth, accumulate, fetch-and-op and
compare-and-swap, for every window creation and synchronization each benchmark accepts.

    reframe -C reframe/config/settings.py -c reframe/checks -n OsuOneSided -r

The window/synchronization pair is logged in the perflog's ``algorithm`` column
(e.g. ``allocate/flush``): it is how the RMA transfer is done, and it keeps each pair a
separate series for ``omb-review``.
"""

import reframe as rfm
from reframe.core.builtins import parameter, run_after, variable
from reframe.core.exceptions import SanityError

from omb_suite import placement
from omb_suite.bases import OsuPt2PtBase

#: ``-w``: every one-sided benchmark of OSU 7.4 accepts all three (MPI >= 3).
WINDOWS = ('create', 'allocate', 'dynamic')

#: ``-s`` per benchmark (OSU 7.4 ``process_one_sided_options``): "active" benchmarks
#: (``synctype = ACTIVE_SYNC``, only osu_put_bibw) reject the passive-target modes.
ACTIVE = ('pscw', 'fence')
ALL = ('lock', 'flush', 'flush_local', 'lock_all', *ACTIVE)
SYNCS = {
    'osu_put_latency': ALL, 'osu_get_latency': ALL, 'osu_put_bw': ALL, 'osu_get_bw': ALL,
    'osu_put_bibw': ACTIVE, 'osu_acc_latency': ALL, 'osu_get_acc_latency': ALL,
    'osu_fop_latency': ALL, 'osu_cas_latency': ALL,
}

#: What OSU prints in its ``# Window creation:`` / ``# Synchronization:`` header lines.
WINDOW_NAMES = {'create': 'MPI_Win_create', 'allocate': 'MPI_Win_allocate',
                'dynamic': 'MPI_Win_create_dynamic'}
SYNC_NAMES = {'lock': 'MPI_Win_lock/unlock', 'flush': 'MPI_Win_flush',
              'flush_local': 'MPI_Win_flush_local', 'lock_all': 'MPI_Win_lock_all/unlock_all',
              'pscw': 'MPI_Win_post/start/complete/wait', 'fence': 'MPI_Win_fence'}

#: Benchmarks that always move one element (OSU ignores -m): never asked for a sweep.
SINGLE_ELEMENT = ('osu_fop_latency', 'osu_cas_latency')

COMBINATIONS = [(bench, win, sync) for bench, syncs in SYNCS.items()
                for win in WINDOWS for sync in syncs]


@rfm.simple_test
class OsuOneSided(OsuPt2PtBase):
    """One OSU one-sided benchmark with one window creation and synchronization mode."""

    #: ``(benchmark, window, sync)``: only the combinations the benchmark accepts.
    variant = parameter(COMBINATIONS, fmt=lambda v: '/'.join(v))

    #: ``intra_socket``, ``inter_socket`` or ``inter_node`` (see data/placements.yaml).
    placement = parameter(placement.placement_names())

    #: Messages per synchronization epoch of the bandwidth tests (``-W``); ``None`` keeps
    #: OSU's default (64).
    #: :type: :class:`int` or ``None`` :default: ``None``
    window_size = variable(int, type(None), value=None, loggable=False)

    benchmark = variable(str)
    algorithm = variable(str)
    window = variable(str, loggable=False)
    sync = variable(str, loggable=False)
    tags = {'one-sided'}

    @run_after('init')
    def unpack_variant(self):
        self.benchmark, self.window, self.sync = self.variant
        self.algorithm = f'{self.window}/{self.sync}'

    def sweep(self):
        return (None, 1) if self.benchmark in SINGLE_ELEMENT else super().sweep()

    def osu_options(self):
        opts = [*super().osu_options(), '-w', self.window, '-s', self.sync]
        if self.window_size is not None and self.benchmark.endswith(('_bw', '_bibw')):
            opts += ['-W', str(self.window_size)]
        return opts

    @run_after('sanity')
    def check_rma_mode(self):
        """OSU prints the modes it used: they must be the ones asked for."""
        if self.is_dry_run():
            return  # no output to check
        meta = self.osu_table.meta
        want = {'window_creation': WINDOW_NAMES[self.window],
                'synchronization': SYNC_NAMES[self.sync]}
        for key, value in want.items():
            if meta.get(key) != value:
                raise SanityError(f'{self.benchmark} ran with {key.replace("_", " ")} '
                                  f'{meta.get(key)!r}, asked for {value!r} ({self.algorithm})')
