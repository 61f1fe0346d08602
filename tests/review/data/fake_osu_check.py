import os

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import (
    parameter,
    run_before,
    sanity_function,
    variable,
)

DATA = {
    'osu_latency': '/work/shared/osu-outputs/ompi_osu_latency_m0-8.txt',
    'osu_bw': '/work/shared/osu-outputs/ompi_osu_bibw_m1-65536.txt',
}


@rfm.simple_test
class FakeOSUPt2pt(rfm.RunOnlyRegressionTest):
    benchmark = parameter(['osu_latency', 'osu_bw'])
    placement = parameter(['intra_socket', 'inter_node'])
    mapping = variable(str, type(None), value=None, loggable=True)
    algorithm = variable(str, type(None), value=None, loggable=True)
    buffers = variable(str, value='H H', loggable=True)
    mpi_family = variable(str, value='openmpi', loggable=True)
    mpi_version = variable(str, value='4.1.4', loggable=True)
    osu_version = variable(str, value='7.4', loggable=True)
    osu_spec = variable(str, value='osu-micro-benchmarks@7.4', loggable=True)
    mpi_spec = variable(str, value='openmpi@4.1.4', loggable=True)
    spack_lock = variable(str, value='abc123', loggable=True)
    placement_observed = variable(str, value='core0,core1', loggable=True)
    algorithm_evidence = variable(str, type(None), value=None, loggable=True)
    session_tag = variable(str, value=os.environ.get('TAG', 'pre'), loggable=True)
    valid_systems = ['*']
    valid_prog_environs = ['*']
    executable = 'cat'
    num_tasks = 2
    reference = {'testsys:cpu': {'latency_8': (0.2, -0.1, 0.1, 'us'),
                                 'latency_0': (0, None, 0.5, 'us')}}

    @run_before('run')
    def set_args(self):
        self.executable_opts = [DATA[self.benchmark]]
        if os.environ.get('FAILIT') and self.placement == 'inter_node':
            self.executable_opts = ['/dev/null']

    @sanity_function
    def ok(self):
        return sn.assert_found(r'OSU MPI', self.stdout)

    @run_before('performance')
    def set_perf(self):
        unit = 'us' if self.benchmark == 'osu_latency' else 'MB/s'
        metric = 'latency' if self.benchmark == 'osu_latency' else 'bandwidth'
        sizes = [0, 1, 2, 4, 8] if metric == 'latency' else [1, 1024, 65536]
        self.perf_variables = {
            f'{metric}_{s}': sn.make_performance_function(
                sn.extractsingle(rf'^{s}\s+(\S+)', self.stdout, 1, float), unit)
            for s in sizes
        }
