"""Multi-pair, multi-process and congestion OSU checks.

- ``OsuMbwMr`` / ``OsuMultiLat``: ``osu_mbw_mr`` (aggregate bandwidth and message rate,
  window size ``-W``) and ``osu_multi_lat`` with N pairs. OSU pairs rank ``i`` with rank
  ``i + N``, so ranks are filled in order (mapping ``core``) and the ``span`` says where the
  two halves sit:
  ``inter_node`` (first half on one node, second half on the other), ``inter_socket`` (one
  full socket each) or ``intra_socket`` (both halves in one socket). The probe verifies it.
- ``OsuLatencyMp``: ``osu_latency_mp``, ping-pong while each side forks child processes.
- ``OsuCongestion``: ``osu_bw_fan_in``/``osu_bw_fan_out`` (OSU 7.4+): one rank per node talks
  to the ranks of all other nodes (needs the same tasks per node on at least 2 nodes).

The benchmark-specific knob (window size, forked processes) is logged in the perflog's
``algorithm`` column (``window=64``, ``processes=2``) so each value is its own series.
"""

import reframe as rfm
from reframe.core.builtins import parameter, run_after, variable
from reframe.core.exceptions import SanityError

from omb_suite import placement, probe
from omb_suite.bases import OsuPt2PtBase, OsuRunBase, launch_options

SPANS = ('inter_node', 'inter_socket', 'intra_socket')


def _topology(part) -> tuple[int, int, int]:
    """(nodes, sockets per node, cores per socket) of a partition."""
    proc = part.processor
    cores = (proc.num_cpus_per_socket or proc.num_cpus or 2) // (proc.num_cpus_per_core or 1)
    nodes = part.extras.get('num_nodes', 1 if part.scheduler.registered_name == 'local' else 2)
    return nodes, proc.num_sockets or 1, cores


def verify_pairs(span: str, places: list[probe.RankPlace]) -> None:
    """Rank ``i`` and ``i + N/2`` are on different nodes, sockets, or in one socket."""
    half = len(places) // 2
    for a, b in zip(places[:half], places[half:], strict=True):
        if span == 'inter_node' and a.host == b.host:
            bad = f'ranks {a.rank} and {b.rank} share host {a.host}'
        elif span != 'inter_node' and a.host != b.host:
            bad = f'ranks {a.rank} and {b.rank} run on hosts {a.host} and {b.host}'
        elif span == 'inter_socket' and (a.sockets & b.sockets or len(a.sockets) != 1):
            bad = f'ranks {a.rank} and {b.rank} are not on two sockets'
        elif span == 'intra_socket' and len(a.sockets | b.sockets) != 1:
            bad = f'ranks {a.rank} and {b.rank} are not confined to one socket'
        else:
            continue
        raise probe.ProbeError(f'pairs span {span!r} does not hold: {bad} '
                               f'(observed: {probe.observed(places)})')


class _FilledInOrder(OsuRunBase):
    """Ranks filled core by core (mapping ``core``), so consecutive ranks share a node."""

    def launcher_options(self):
        return launch_options(self, placement.mapping_options, 'core')


class _Pairs(_FilledInOrder):
    """N pairs running the same benchmark at once, halves placed by ``span``."""

    #: Where the two halves of the pairs sit: ``inter_node``, ``inter_socket``, ``intra_socket``.
    span = parameter(SPANS)

    #: Pairs for ``span=inter_node`` (``None``: one per core of a node). Socket spans use
    #: the socket's cores (the mapping fills them in order).
    #: :type: :class:`int` or ``None`` :default: ``None``
    pairs = variable(int, type(None), value=None, loggable=False)

    placement = variable(str)
    tags = {'multi-pair'}

    @run_after('setup')
    def shape_pairs(self):
        self.placement = self.span
        nodes, sockets, cores = _topology(self.current_partition)
        have, need, what = {'inter_node': (nodes, 2, 'nodes'),
                            'inter_socket': (sockets, 2, 'sockets'),
                            'intra_socket': (cores, 2, 'cores per socket')}[self.span]
        self.skip_if(have < need, f'span {self.span!r} needs {need} {what}, '
                     f'{self.current_partition.fullname} has {have}')
        pairs = {'inter_node': self.pairs or cores * sockets, 'inter_socket': cores,
                 'intra_socket': cores // 2}[self.span]
        self.num_nodes = 2 if self.span == 'inter_node' else 1
        self.num_tasks = 2 * pairs
        self.num_tasks_per_node = self.num_tasks // self.num_nodes

    def check_placement(self, places):
        verify_pairs(self.span, places)


@rfm.simple_test
class OsuMbwMr(_Pairs):
    """``osu_mbw_mr``: aggregate bandwidth and message rate of N pairs."""

    benchmark = variable(str, value='osu_mbw_mr')

    #: Messages in flight per pair before the receiver replies (``-W``).
    window_size = parameter([64, 16])

    algorithm = variable(str)

    @run_after('init')
    def log_window(self):
        self.algorithm = f'window={self.window_size}'

    def osu_options(self):
        return [*super().osu_options(), '-W', str(self.window_size)]

    @run_after('sanity')
    def check_pairs(self):
        if self.is_dry_run():
            return  # no output to check
        meta = self.osu_table.meta
        want = {'pairs': str(self.num_tasks // 2), 'window_size': str(self.window_size)}
        for key, value in want.items():
            if meta.get(key) != value:
                raise SanityError(f'osu_mbw_mr reports {key} {meta.get(key)}, expected {value}')


@rfm.simple_test
class OsuMultiLat(_Pairs):
    """``osu_multi_lat``: ping-pong latency of N pairs at once."""

    benchmark = variable(str, value='osu_multi_lat')


@rfm.simple_test
class OsuLatencyMp(OsuPt2PtBase):
    """``osu_latency_mp``: ping-pong between two ranks that fork child processes."""

    benchmark = variable(str, value='osu_latency_mp')

    #: ``intra_socket``, ``inter_socket`` or ``inter_node`` (see data/placements.yaml).
    placement = parameter(placement.placement_names())

    #: Child processes forked by each side (``-t N:N``).
    processes = parameter([1, 2])

    algorithm = variable(str)
    tags = {'multi-process'}

    @run_after('init')
    def log_processes(self):
        self.algorithm = f'processes={self.processes}'

    def osu_options(self):
        # `-t N` alone sets only the receiver's children: give both sides explicitly
        return [*super().osu_options(), '-t', f'{self.processes}:{self.processes}']

    @run_after('sanity')
    def check_processes(self):
        if self.is_dry_run():
            return  # no output to check
        meta = self.osu_table.meta
        forked = (meta.get('sender_processes'), meta.get('receiver_processes'))
        if forked != (str(self.processes),) * 2:
            raise SanityError(f'osu_latency_mp forked {forked[0]} (sender) and {forked[1]} '
                              f'(receiver) processes, asked for {self.processes} each')


@rfm.simple_test
class OsuCongestion(_FilledInOrder):
    """``osu_bw_fan_in``/``osu_bw_fan_out`` over several nodes (OSU 7.4+)."""

    benchmark = parameter(['osu_bw_fan_in', 'osu_bw_fan_out'])

    #: Nodes in the job (at least 2); counts above the partition's ``num_nodes`` are skipped.
    nodes = parameter([2, 4, 8])

    #: Ranks per node (the same on every node, as OSU requires).
    #: :type: :class:`int` :default: ``1``
    tasks_per_node = variable(int, value=1, loggable=False)

    tags = {'congestion'}

    @run_after('setup')
    def shape_job(self):
        have, _, _ = _topology(self.current_partition)
        self.skip_if(self.nodes > have, f'{self.nodes} nodes asked, '
                     f'{self.current_partition.fullname} has {have}')
        self.num_nodes = self.nodes
        self.num_tasks_per_node = self.tasks_per_node
        self.num_tasks = self.nodes * self.tasks_per_node

    def check_placement(self, places):
        hosts = {p.host for p in places}
        if len(hosts) != self.nodes:
            raise probe.ProbeError(f'{self.benchmark} asked for {self.nodes} nodes, the ranks '
                                   f'run on {len(hosts)}: {probe.observed(places)}')
