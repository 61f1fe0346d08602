"""A plain osu_latency check as a site would have kept it from ReFrame 3 to ReFrame 4.

Runs OSU 7.x's osu_latency with 2 ranks through mpirun ($OSU_ROOT: an OSU install prefix).
The same class, file and name under ReFrame 3.12, 4.0 and 4.10; the variables below are
logged by the 4.10 perflog format (ReFrame 3 and 4.0 formats do not name them).
"""

import os

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import performance_function, run_before, sanity_function, variable

_LOGGED = {'loggable': True} if rfm.VERSION.startswith('4') else {}


@rfm.simple_test
class OsuLatencyHistory(rfm.RunOnlyRegressionTest):
    valid_systems = ['*']
    valid_prog_environs = ['*']
    executable = 'mpirun'
    num_tasks = 1
    benchmark = variable(str, value='osu_latency', **_LOGGED)
    placement = variable(str, value='intra_socket', **_LOGGED)
    session_tag = variable(str, value=os.environ.get('TAG', ''), **_LOGGED)

    @run_before('run')
    def set_args(self):
        prefix = os.environ['OSU_ROOT']
        self.executable_opts = ['-np', '2', f'{prefix}/libexec/osu-micro-benchmarks/mpi/pt2pt/'
                                'osu_latency', '-m', '1:8', '-i', '5000', '-x', '500']

    @sanity_function
    def ran(self):
        return sn.assert_found(r'OSU MPI Latency Test', self.stdout)

    @performance_function('us')
    def latency_1(self):
        return sn.extractsingle(r'^1\s+(\S+)', self.stdout, 1, float)

    @performance_function('us')
    def latency_8(self):
        return sn.extractsingle(r'^8\s+(\S+)', self.stdout, 1, float)
