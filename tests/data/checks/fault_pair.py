"""Test-only checks for the node-failure test on the mini-cluster.

``SlowPair``: one task on each node that stays busy for a while (long enough for the
test to kill a node under it); ``QuickPair``: one task on node1 only (the rest of the
suite, which must go on).
"""

import os

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, run_after, sanity_function

from omb_suite.launch.failures import failure_cause


@rfm.simple_test
class FaultPair(rfm.RunOnlyRegressionTest):
    shape = parameter(['slow_inter_node', 'quick_one_node'])
    valid_systems = ['minicluster:compute']
    valid_prog_environs = ['*']
    executable = 'bash'
    time_limit = '90s'

    @run_after('init')
    def set_shape(self):
        if self.shape == 'slow_inter_node':
            self.num_tasks, self.num_tasks_per_node = 2, 1
            self.executable_opts = ['-c', '"hostname; sleep ${FAULT_SLEEP:-25}; echo done"']
        else:
            self.num_tasks, self.num_tasks_per_node = 1, 1
            self.executable_opts = ['-c', '"hostname; echo done"']

    @sanity_function
    def all_done(self):
        with open(os.path.join(self.stagedir, self.stderr.evaluate())) as fp:
            cause = failure_cause(fp.read())
        return sn.assert_eq(sn.count(sn.findall(r'^done$', self.stdout)), self.num_tasks,
                            msg=f'{{1}} of {{0}} tasks finished ({cause})')
