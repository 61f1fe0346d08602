"""Start-up OSU checks: ``osu_init`` (time of ``MPI_Init``) and ``osu_hello`` over node counts.

    reframe -C reframe/config/settings.py -c reframe/checks -n OsuStartup -r

``MPI_Init`` should grow about logarithmically with the node count (tree-based wire-up).
Each node count has its own reference in ``reframe/references/<system>.yaml``
(index ``$partition, $environ, benchmark, nodes``): a run far above it fails. Derive them
from your perflogs, e.g. fit ``a + b * log2(nodes)`` to ``init_avg`` (docs/benchmarks.md).
"""

import reframe as rfm
from reframe.core.builtins import parameter, run_after, variable
from reframe.core.exceptions import SanityError

from omb_suite import placement, probe
from omb_suite.bases import OsuRunBase, launch_options


@rfm.simple_test
class OsuStartup(OsuRunBase):
    """``MPI_Init`` time or a hello world on a number of nodes."""

    benchmark = parameter(['osu_init', 'osu_hello'])

    #: Nodes in the job; counts above the partition's ``num_nodes`` (``extras``) are skipped.
    nodes = parameter([1, 2, 4, 8, 16, 32, 64, 128])

    #: Ranks per node.
    #: :type: :class:`int` :default: ``1``
    tasks_per_node = variable(int, value=1, loggable=False)

    mapping = variable(str, value='node')
    tags = {'startup'}

    @run_after('setup')
    def shape_job(self):
        part = self.current_partition
        have = part.extras.get('num_nodes',
                               1 if part.scheduler.registered_name == 'local' else 2)
        self.skip_if(self.nodes > have, f'{self.nodes} nodes asked, {part.fullname} has {have}')
        self.num_nodes = self.nodes
        self.num_tasks_per_node = self.tasks_per_node
        self.num_tasks = self.nodes * self.tasks_per_node

    def sweep(self):
        return None, None  # no message sizes

    def osu_options(self):
        # osu_hello and osu_init take no options in OSU 7.4 (osu_init: -h/-v only)
        return list(self.extra_opts)

    def launcher_options(self):
        return launch_options(self, placement.mapping_options, self.mapping)

    def check_placement(self, places):
        hosts = {p.host for p in places}
        if len(hosts) != self.nodes:
            raise probe.ProbeError(f'{self.nodes} nodes asked, ranks run on {len(hosts)}: '
                                   f'{probe.observed(places)}')

    @run_after('sanity')
    def check_process_count(self):
        if self.is_dry_run():
            return  # no output to check
        nprocs = int(self.osu_table.value('nprocs'))
        if nprocs != self.num_tasks:
            raise SanityError(f'{self.benchmark} reports {nprocs} processes, the job has '
                              f'{self.num_tasks}')
