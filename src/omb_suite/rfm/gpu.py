"""Device buffers for OSU checks: the ``buffers`` parameter's GPU side.

- Device-buffer variants (``D D``, ``H D``, ``D H``) exist only on partitions with the
  ``gpu`` feature and environments with ``+cuda`` or ``+rocm``, and pass
  ``-d cuda|rocm <send> <recv>`` to OSU.
- Before a device-buffer run the MPI library is asked whether it is GPU-aware
  (:func:`omb_suite.mpi.mpilib.gpu_support`): one that is not would segfault on the first device
  pointer, so the test is skipped with the evidence instead.
- Binding: the per-rank wrapper gives every rank the node's device list in
  ``CUDA_VISIBLE_DEVICES`` (``ROCR_VISIBLE_DEVICES``) and reports the device OSU will pick
  (``devices[local_rank % count]``, OSU 7.x's rule); all devices stay visible so that IPC
  between the ranks of a node keeps working. The check verifies that no two ranks of a host
  share a device and records the binding in ``placement_observed`` (``host:cpu0/s0/n0/gpu0``).
"""

from __future__ import annotations

import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_after, run_before, variable
from reframe.core.exceptions import SanityError

from omb_suite.launch.failures import with_cause
from omb_suite.machine import probe
from omb_suite.mpi import mpilib
from omb_suite.rfm import environ_facts


def gpu_kind(env_features: list[str] | tuple[str, ...]) -> str | None:
    """``cuda`` or ``rocm`` from an environment's features (``+cuda``/``+rocm``)."""
    return next((k for k in ('cuda', 'rocm') if k in env_features), None)


def skip_unless_gpu_aware(test: rfm.RegressionTest, kind: str) -> None:
    """Skip ``test`` (in ``setup``) unless its environment's MPI is ``kind``-aware."""
    support = mpilib.gpu_support(environ_facts.mpi_library(test.current_environ)[0], kind,
                                 test.search_path())
    verdict = 'it is not' if support.aware is False else 'cannot tell whether it is'
    test.skip_if(not support.aware,
                 f'{kind} device buffers need a {kind.upper()}-aware MPI and {verdict}: '
                 f'{support.evidence}; use an MPI built with {kind}, or -S gpu_aware_check=0 '
                 'to run anyway')


class DeviceBuffers(rfm.RegressionTestPlugin):
    """Host or device buffers for OSU checks (:class:`~omb_suite.rfm.base.OsuRunBase`
    children whose ``buffers`` says where the send and receive buffers live).

    The test declares ``buffers`` itself (a parameter of ``catalogue.buffers()``, or a
    variable), after its own parameters, so display names keep their order.
    """

    #: Ask the MPI library whether it is GPU-aware before a device-buffer run, and skip if
    #: not. ``-S gpu_aware_check=0`` trusts the library (when the probe cannot tell).
    #: :type: :class:`bool` :default: ``True``
    gpu_aware_check = variable(typ.Bool, value=True, loggable=False)

    gpu = variable(str, type(None), value=None, loggable=False)
    gpu_devices = variable(str, value='', loggable=False)

    @property
    def on_device(self) -> bool:
        return 'D' in self.buffers

    @run_after('init')
    def restrict_to_gpus(self):
        """Device-buffer cases run only where a GPU is, and are tagged ``device_buffers``
        (``-t '^device_buffers$'`` selects them: ``-n`` cannot match the space in ``D D``)."""
        if self.on_device:
            self.tags = self.tags | {'device_buffers'}
            self.valid_systems = ['+gpu']
            self.valid_prog_environs = [
                f'+mpi +{kind} {need}' for kind in ('cuda', 'rocm')
                for need in (f'+osu +{environ_facts.REGISTERED}',
                             f'-{environ_facts.REGISTERED}')]

    @run_after('setup')
    def require_gpu_aware_mpi(self):
        if not self.on_device:
            return
        self.gpu = gpu_kind(self.current_environ.features)
        count = self.topology.gpus_per_node
        self.skip_if(count == 0, f'partition {self.current_partition.fullname} has the gpu '
                     'feature but no devices entry of type gpu with num_devices')
        self.gpu_devices = self.gpu_devices or ','.join(map(str, range(count)))
        if self.gpu_aware_check:
            skip_unless_gpu_aware(self, self.gpu)

    @run_before('run')
    def need_one_gpu_per_rank(self):
        """Skip where the ranks of a node outnumber the GPUs they are given: OSU would put
        two of them on one GPU, which the binding check
        (:func:`omb_suite.machine.probe.verify_gpus`) fails after the run. Before the run,
        when the job shape is known."""
        if not self.on_device:
            return
        per_node = self.num_tasks_per_node or self.num_tasks
        devices = [d for d in self.gpu_devices.split(',') if d.strip()]
        self.skip_if(per_node > len(devices),
                     f'{per_node} ranks per node need a GPU each and '
                     f'{self.current_partition.fullname} gives them {len(devices)} '
                     f'(GPUs {self.gpu_devices or "none"}): run this case on nodes with '
                     f'{per_node} GPUs, or -S gpu_devices=<{per_node} GPU ids> where the '
                     'partition declares fewer than it has')

    def osu_options(self) -> list[str]:
        opts = super().osu_options()
        return opts + (['-d', self.gpu, *self.buffers.split()] if self.on_device else [])

    def wrapper_options(self) -> list[str]:
        return ['--gpu', self.gpu, self.gpu_devices] if self.on_device else []

    def verify_placement(self, stderr: str) -> None:
        super().verify_placement(stderr)
        if not self.on_device:
            return
        places = probe.parse_probe(stderr, expect_ranks=self.num_tasks)
        bindings = probe.parse_bindings(stderr)
        try:
            probe.verify_gpus(bindings, places)
        except probe.WrongPlacement as err:
            raise SanityError(with_cause(str(err), stderr)) from None
        self.placement_observed = probe.observed(places, bindings)
