"""Procurement mode: the OSU point-to-point runs of a procurement, exactly as its rules say.

    reframe -C reframe/config/settings.py -c reframe/checks --mode procurement -r
    omb-procurement perflogs/ --system <system>

Rules reproduced (docs/gpu-and-procurement.md): ``osu_bw`` and ``osu_bibw`` with
``-m 67108864:67108864``, ``osu_latency`` with ``-m 0:0``; GPU runs with ``-d cuda D D``
(``rocm`` on AMD). Cases:

- ``gpu_intra_node``: one node, two ranks, GPU 0 with each other GPU of the node, one run per
  pair (``CUDA_VISIBLE_DEVICES=0,k``), all in one job;
- ``gpu_inter_node``: two nodes, one rank and one GPU (0) per node;
- ``cpu_intra_socket``, ``cpu_inter_socket``: two cores of one node (the two together are
  "CPU intra-node"; the inter-socket pair is the one with the lowest peak);
- ``cpu_inter_node``: one core on each of two nodes.

Every pair is a performance variable (``gpus0,3_bandwidth_67108864``); the figure
(``bandwidth_67108864``) is the worst pair: lowest bandwidth, highest latency.
``omb-procurement`` prints the table the procurement asks for from the perflogs.
"""


import reframe as rfm
import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.builtins import parameter, run_after, run_before, sanity_function, variable
from reframe.core.exceptions import SanityError

from omb_suite import gpu, parsing, probe
from omb_suite.bases import OsuPt2PtBase

#: Message size per benchmark (bytes), from the procurement rules.
SIZES = {'osu_bw': 67108864, 'osu_bibw': 67108864, 'osu_latency': 0}
METRIC = {'osu_bw': 'bandwidth', 'osu_bibw': 'bandwidth', 'osu_latency': 'latency'}
CASES = {'cpu_intra_socket': 'intra_socket', 'cpu_inter_socket': 'inter_socket',
         'cpu_inter_node': 'inter_node', 'gpu_intra_node': 'intra_socket',
         'gpu_inter_node': 'inter_node'}


@rfm.simple_test
class OsuProcurement(OsuPt2PtBase):
    """One procurement benchmark in one case; GPU cases run every pair of GPUs asked for."""

    benchmark = parameter(list(SIZES))
    case = parameter(list(CASES))

    #: Message size of ``osu_latency``: ``None`` = the rules' 0 bytes, except with OSU 7.x,
    #: which never sends 0-byte messages (``-m 0:0`` prints no row): there 1 byte, visible
    #: as ``latency_1`` in the perflog and the table.
    #: :type: :class:`int` or ``None`` :default: ``None``
    latency_size = variable(int, type(None), value=None, loggable=False)

    #: Probe the MPI library for GPU awareness before a GPU case (see ``omb_suite.gpu``).
    #: :type: :class:`bool` :default: ``True``
    gpu_aware_check = variable(typ.Bool, value=True, loggable=False)

    placement = variable(str)
    buffers = variable(str, value='H H')
    gpu = variable(str, type(None), value=None, loggable=False)
    runs = variable(list, value=[None], loggable=False)
    tags = {'procurement'}

    @run_after('init')
    def describe_case(self):
        self.placement = CASES[self.case]
        if self.case.startswith('gpu'):
            self.buffers = 'D D'
            self.valid_systems = ['+gpu']
            self.valid_prog_environs = ['+mpi +osu +cuda', '+mpi +osu +rocm']

    @run_after('setup')
    def list_gpu_runs(self):
        """Device lists, one run each: 0,1 0,2 ... (intra-node) or 0 (inter-node)."""
        if self.buffers != 'D D':
            return
        env = self.current_environ
        self.gpu = gpu.gpu_kind(env.features)
        count = gpu.gpus_per_node(self.current_partition)
        self.skip_if(self.case == 'gpu_intra_node' and count < 2,
                     f'{self.current_partition.fullname} has {count} GPU(s) per node: no pair')
        self.runs = gpu.one_to_all(count) if self.case == 'gpu_intra_node' else ['0']
        if self.gpu_aware_check:
            gpu.skip_unless_gpu_aware(self, self.gpu)

    def size(self) -> int:
        if self.benchmark != 'osu_latency':
            return SIZES[self.benchmark]
        if self.latency_size is not None:
            return self.latency_size
        major = (self.osu_version or '').split('.')[0]
        return 1 if major.isdigit() and int(major) >= 7 else 0

    def sweep(self):
        return self.size(), self.size()

    def expected_sizes(self):
        return [self.size()]

    def reported_sizes(self):
        return [self.size()]

    @sanity_function
    def validate(self):
        try:
            return sn.evaluate(super().validate())
        except SanityError as err:
            if self.size() == 0 and 'no data rows' in str(err):
                raise SanityError(f'{err}: OSU 7.x never sends 0-byte messages; record the '
                                  'OSU version (omb-setup) or use -S latency_size=1') from None
            raise

    def osu_options(self):
        opts = super().osu_options()
        return opts + (['-d', self.gpu, 'D', 'D'] if self.gpu else [])

    def run_output(self, devices: str | None) -> str:
        return f'osu_gpus{devices}.out' if devices else self.stdout.evaluate()

    @run_before('run')
    def run_every_pair(self):
        """First pair: the job's main command; the others follow it, one output each."""
        if not self.gpu:
            return
        osu = [self.executable, *self.executable_opts]
        self.executable = gpu.install_binding_script(self.stagedir, self.gpu)
        self.executable_opts = [self.runs[0], *osu]
        launcher = self.job.launcher.run_command(self.job)
        self.postrun_cmds = [*self.postrun_cmds, *(
            f'{launcher} {self.executable} {devs} {" ".join(osu)} > '
            f'{self.run_output(devs)} 2>&1' for devs in self.runs[1:])]

    def check_placement(self, places):
        super().check_placement(places)
        if not self.gpu:
            return
        err = self._read(self.stderr.evaluate())
        bindings = gpu.parse_bindings(err)
        try:
            gpu.verify_bindings(bindings, self.num_tasks)
        except gpu.GpuBindingError as exc:
            raise probe.ProbeError(f'GPUs {self.runs[0]}: {exc}') from None
        self.placement_observed = gpu.observed_with_gpus(places, bindings)

    def _run_value(self, devices: str) -> float:
        if devices == self.runs[0]:
            return float(self.osu_table.value(METRIC[self.benchmark], self.size()))
        text = self._read(self.run_output(devices))
        try:
            gpu.verify_bindings(gpu.parse_bindings(text), self.num_tasks)
            table = parsing.parse_osu_output(text, expect_sizes=[self.size()])
        except (gpu.GpuBindingError, parsing.OsuParseError) as err:
            raise SanityError(f'{self.benchmark} on GPUs {devices}: {err}') from None
        return float(table.value(METRIC[self.benchmark], self.size()))

    def _worst(self) -> float:
        values = [self._run_value(d) for d in self.runs] if self.gpu else [
            float(self.osu_table.value(METRIC[self.benchmark], self.size()))]
        return max(values) if self.benchmark == 'osu_latency' else min(values)

    @run_before('performance')
    def set_perf_variables(self):
        """The figure (worst pair) and, for GPU cases, every pair."""
        metric = METRIC[self.benchmark]
        unit = 'us' if metric == 'latency' else 'MB/s'
        perf = {f'{metric}_{self.size()}': sn.make_performance_function(self._worst, unit)}
        for devs in (self.runs if self.gpu else []):
            perf[f'gpus{devs}_{metric}_{self.size()}'] = sn.make_performance_function(
                self._run_value, unit, devs)
        self.perf_variables = perf
