"""Procurement rules: the OSU point-to-point runs of a procurement, exactly as its rules say.

Rules reproduced (docs/gpu-and-procurement.md): ``osu_bw`` and ``osu_bibw`` with
``-m 67108864:67108864``, ``osu_latency`` with ``-m 0:0``; GPU runs with ``-d cuda D D``
(``rocm`` on AMD). Scenarios (the child's ``scenario`` parameter, a key of :data:`SCENARIOS`):

- ``gpu_intra_node``: one node, two ranks, GPU 0 with each other GPU of the node, one launch
  per pair, all in one job;
- ``gpu_inter_node``: two nodes, one rank and one GPU (0) per node;
- ``cpu_intra_socket``, ``cpu_inter_socket``: two cores of one node (the two together are
  "CPU intra-node"; the inter-socket pair is the one with the lowest peak);
- ``cpu_inter_node``: one core on each of two nodes.

Every GPU pair is a performance variable (``gpus0,3_bandwidth_67108864``); the figure
(``bandwidth_67108864``) is the worst pair: lowest bandwidth, highest latency.
``omb-procurement`` prints the table the procurement asks for from the perflogs.
"""

from __future__ import annotations

import reframe.utility.sanity as sn
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_after, run_before, sanity_function, variable
from reframe.core.exceptions import SanityError

from omb_suite.launch.failures import with_cause
from omb_suite.machine import probe
from omb_suite.osu import parsing
from omb_suite.rfm.gpu import DeviceBuffers
from omb_suite.rfm.pt2pt import OsuPt2PtBase

#: Message size per benchmark (bytes), from the procurement rules.
SIZES = {'osu_bw': 67108864, 'osu_bibw': 67108864, 'osu_latency': 0}
METRIC = {'osu_bw': 'bandwidth', 'osu_bibw': 'bandwidth', 'osu_latency': 'latency'}
#: Scenario -> placement of the pair.
SCENARIOS = {'cpu_intra_socket': 'intra_socket', 'cpu_inter_socket': 'inter_socket',
             'cpu_inter_node': 'inter_node', 'gpu_intra_node': 'intra_socket',
             'gpu_inter_node': 'inter_node'}


def one_to_all(num_gpus: int) -> list[str]:
    """The procurement's intra-node pairs: GPU 0 with each other GPU, as device lists."""
    if num_gpus < 2:
        raise ValueError(f'one-to-all pairs need at least 2 GPUs per node, not {num_gpus}')
    return [f'0,{k}' for k in range(1, num_gpus)]


class OsuProcurementBase(DeviceBuffers, OsuPt2PtBase):
    """One procurement benchmark in one scenario; GPU scenarios run every pair asked for."""

    #: Message size of ``osu_latency``: ``None`` = the rules' 0 bytes, except with OSU 7.x,
    #: which never sends 0-byte messages (``-m 0:0`` prints no row): there 1 byte, visible
    #: as ``latency_1`` in the perflog and the table.
    #: :type: :class:`int` or ``None`` :default: ``None``
    latency_size = variable(int, type(None), value=None, loggable=False)

    placement = variable(str, value='')
    buffers = variable(str, value='H H')
    runs = variable(typ.List[str], value=[], loggable=False)
    tags = {'procurement'}

    @run_after('init')
    def describe_scenario(self):
        self.placement = SCENARIOS[self.scenario]
        self.tags = self.tags | {self.placement}
        if self.scenario.startswith('gpu'):
            self.buffers = 'D D'
            self.restrict_to_gpus()

    @run_after('setup')
    def list_gpu_runs(self):
        """Device lists, one launch each: 0,1 0,2 ... (intra-node) or 0 (inter-node)."""
        if not self.on_device:
            return
        count = self.topology.gpus_per_node
        self.skip_if(self.scenario == 'gpu_intra_node' and count < 2,
                     f'{self.current_partition.fullname} has {count} GPU(s) per node: no pair')
        self.runs = one_to_all(count) if self.scenario == 'gpu_intra_node' else ['0']
        self.gpu_devices = self.runs[0]

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

    def run_output(self, devices: str) -> tuple[str, str]:
        return f'osu_gpus{devices}.out', f'osu_gpus{devices}.err'

    @run_before('run')
    def run_every_pair(self):
        """First pair: the job's main launch; the others follow it, one output each."""
        launcher = self.job.launcher.run_command(self.job)
        osu = ' '.join([self.osu_program, *self.osu_options()])
        self.postrun_cmds = [*self.postrun_cmds, *(
            f'{launcher} {self.executable} --gpu {self.gpu} {devs} {osu} '
            f'> {self.run_output(devs)[0]} 2> {self.run_output(devs)[1]}'
            for devs in self.runs[1:])]

    def _run_value(self, devices: str) -> float:
        if devices == self.runs[0]:
            return float(self.osu_table.value(METRIC[self.benchmark], self.size()))
        out, err = (self.read_output(name) for name in self.run_output(devices))
        try:
            places = probe.parse_probe(err, expect_ranks=self.num_tasks)
            self.placing().verify(places)
            probe.verify_gpus(probe.parse_bindings(err), places)
            table = parsing.parse_osu_output(out, expect_sizes=[self.size()])
        except (probe.ProbeError, probe.WrongPlacement, parsing.OsuParseError) as exc:
            raise SanityError(with_cause(f'{self.benchmark} on GPUs {devices}: {exc}', err)) \
                from None
        return float(table.value(METRIC[self.benchmark], self.size()))

    def _worst(self) -> float:
        values = [self._run_value(d) for d in self.runs] if self.on_device else [
            float(self.osu_table.value(METRIC[self.benchmark], self.size()))]
        return max(values) if self.benchmark == 'osu_latency' else min(values)

    def performance_variables(self) -> dict:
        """The figure (worst pair) and, for GPU scenarios, every pair."""
        metric = METRIC[self.benchmark]
        unit = 'us' if metric == 'latency' else 'MB/s'
        perf = {f'{metric}_{self.size()}': sn.make_performance_function(self._worst, unit)}
        for devs in (self.runs if self.on_device else []):
            perf[f'gpus{devs}_{metric}_{self.size()}'] = sn.make_performance_function(
                self._run_value, unit, devs)
        return perf
