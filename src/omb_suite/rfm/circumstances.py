"""The circumstances of every OSU run, in its perflog record: what its node was doing
(``node_state``) and the ReFrame session it belongs to (``session_id``); a reference missed while
the node was busy says so instead of passing for a regression of the MPI.

``session_id`` is this ReFrame process's start and process id (``20261128T194101-4242``): the
runs of one ``reframe`` command share it, those of ``--reruns`` included, so ``omb-review``
tells sessions apart even when they share a ``session_tag`` (three ``upgrade=pre`` sessions).

The job runs ``job_sources/omb_node_state.sh`` just before and just after the benchmark's launch
(its first node; on a cluster that is the node the batch script runs on); the pair is judged by
:mod:`omb_suite.machine.node_state` and logged in the perflog column ``node_state``, which
``omb-review`` reads. When the performance check fails on a busy node, the failure reads::

    the node was busy: other work took 34 % of its CPU time during the run (load 3.1 on 2
    CPUs, 2 of them ranks); this run does not measure the MPI, run it again on a quiet node: ...

The mixin augments the performance stage as a ``special=True`` test would (ReFrame forbids a
test class to override a stage, not a mixin before it): ReFrame's own check runs, and logs every
value, first; only the message of its failure gains the node's state.
"""

from __future__ import annotations

import os
import shutil
from datetime import datetime, timezone

import reframe as rfm
from reframe.core.builtins import run_before, variable
from reframe.core.exceptions import PerformanceError

from omb_suite.machine import node_state, probe

#: Launchers whose ranks are children of the job's shell (their CPU time is the job's).
FORKING = ('mpirun', 'mpiexec', 'local')
#: This ReFrame session (one process): its start and process id.
SESSION_ID = f'{datetime.now(timezone.utc):%Y%m%dT%H%M%S}-{os.getpid()}'


class RunCircumstances(rfm.RegressionTestPlugin):
    """``node_state`` and ``session_id`` of each run (perflog columns), and busy nodes named in
    failures."""

    #: The ReFrame session this run belongs to (perflog column ``session_id``).
    session_id = variable(str, value=SESSION_ID)

    #: What the job's first node was doing during the launch (perflog column ``node_state``:
    #: ``quiet cpu_wait=0.004 steal=0.000 load=2.05 cpus=2 ranks=2``, or ``busy ...``);
    #: ``None`` until the job ran, or where its lines are missing.
    node_state = variable(str, type(None), value=None)

    @run_before('run', always_last=True)
    def snapshot_around_the_launch(self):
        """The snapshots last before the launch and first after it (after the other hooks'
        commands, so a module guard or a build step is not counted)."""
        script = os.path.join(self.stagedir, node_state.SCRIPT)
        shutil.copyfile(os.path.join(probe.source_dir(), node_state.SCRIPT), script)
        snap = (f'{{ times; sh ./{node_state.SCRIPT}; }} >> {node_state.OUTPUT} 2>/dev/null '
                '|| true')
        self.prerun_cmds = [*self.prerun_cmds, snap]
        # the launch's exit status stays $? after it: the launch mark (cost.py) reports it
        self.postrun_cmds = [f'omb_rc=$?; {snap}; (exit $omb_rc)', *self.postrun_cmds]

    def ranks_on_first_node(self) -> int:
        """The job's ranks on the CPUs its first node's snapshot sees: those of the nodes that
        share one machine (the partition's ``extras: {nodes_per_machine: N}``, the
        mini-cluster's namespaces), else of one node."""
        nodes = max(getattr(self, 'num_nodes', 1) or 1, 1)
        per_node = self.num_tasks_per_node or self.job.num_tasks_per_node or \
            -(-(self.num_tasks or 1) // nodes)
        sharing = int(self.current_partition.extras.get('nodes_per_machine', 1))
        return int(per_node) * min(nodes, max(sharing, 1))

    def measured_node_state(self) -> node_state.NodeState | None:
        try:
            with open(os.path.join(self.stagedir, node_state.OUTPUT)) as fp:
                text = fp.read()
        except OSError:
            return None
        launcher = self.current_partition.launcher_type.registered_name
        return node_state.from_output(text, self.ranks_on_first_node(), launcher in FORKING)

    @run_before('sanity')
    def read_node_state(self):
        if self.is_dry_run():
            return
        state = self.measured_node_state()
        self.node_state = state.column() if state else None

    def check_performance(self):
        try:
            super().check_performance()
        except PerformanceError as err:
            state = node_state.parse_column(self.node_state)
            if state is None or not state.busy:
                raise
            raise PerformanceError(f'{state.reason()}; this run does not measure the MPI, run '
                                   f'it again on a quiet node: {err}') from None
