"""GPU buffers for OSU checks: the ``buffers`` parameter, the GPU-awareness probe and the
rank-to-GPU binding.

- :class:`DeviceBuffers` (a ReFrame plugin) adds ``buffers`` = ``H H``, ``D D``, ``H D``,
  ``D H``. Device-buffer variants exist only on partitions with the ``gpu`` feature and
  environments with ``+cuda`` or ``+rocm``, and pass ``-d cuda|rocm <send> <recv>`` to OSU.
- Before a device-buffer run the MPI library is probed (:func:`gpu_support`): a library that
  is not CUDA/ROCm-aware would segfault on the first device pointer, so the test is skipped
  with the evidence instead.
- Binding: every rank of a job gets the node's device list in ``CUDA_VISIBLE_DEVICES`` (or
  ``ROCR_VISIBLE_DEVICES``); OSU itself picks ``devices[local_rank % len(devices)]``
  (``init_accel`` in OSU 7.x). All devices stay visible so that CUDA IPC between the ranks of a
  node keeps working. A wrapper script (:func:`binding_script`) exports the list, computes the
  device OSU will use with OSU's own local-rank rule and prints one ``GPUBIND`` line per rank;
  the check verifies that no two ranks of a host share a device and records the binding in
  the perflog's ``placement_observed`` (``host:cpu0/s0/n0/gpu0;...``).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache

import reframe as rfm
import reframe.utility.typecheck as typ
from reframe.core.builtins import run_after, run_before, variable

from omb_suite import probe

#: Send/receive buffer locations (OSU's ``-d <kind> <send> <recv>``), host first.
BUFFERS = ('H H', 'D D', 'H D', 'D H')

#: Environment variable that lists the devices a process may use, per GPU kind.
VISIBLE = {'cuda': 'CUDA_VISIBLE_DEVICES', 'rocm': 'ROCR_VISIBLE_DEVICES'}

BIND_SCRIPT = 'omb_gpu_bind.sh'

#: Local-rank variables in the order OSU 7.4's ``omb_get_local_rank`` reads them.
OSU_LOCAL_RANK_VARS = ('MV2_COMM_WORLD_LOCAL_RANK', 'MVP_COMM_WORLD_LOCAL_RANK',
                       'OMPI_COMM_WORLD_LOCAL_RANK', 'MPI_LOCALRANKID', 'SLURM_PROCID',
                       'LOCAL_RANK')
_RANK_VARS = ('OMPI_COMM_WORLD_RANK', 'PMI_RANK', 'PMIX_RANK', 'MV2_COMM_WORLD_RANK',
              'SLURM_PROCID')

_OMPI_RE = re.compile(r'^mca:[^:]+:base:param:(?:mpi|opal)_built_with_(cuda|rocm)_support'
                      r':value:(true|false)\s*$', re.M)
_MPICH_GPU_FLAGS = {'cuda': ('--with-cuda',), 'rocm': ('--with-hip', '--with-rocm')}
_BIND_RE = re.compile(r'^GPUBIND rank=(\d+) host=(\S+) visible=(\S+) device=(\S+)\s*$', re.M)


class GpuBindingError(ValueError):
    """The ``GPUBIND`` lines are missing or show two ranks sharing one device."""


@dataclass(frozen=True)
class GpuSupport:
    """Whether an MPI library accepts device pointers; ``aware=None``: cannot tell."""

    aware: bool | None
    evidence: str


def gpu_kind(env_features: list[str] | tuple[str, ...]) -> str | None:
    """``cuda`` or ``rocm`` from an environment's features (``+cuda``/``+rocm``)."""
    return next((k for k in ('cuda', 'rocm') if k in env_features), None)


def openmpi_support(ompi_info: str, kind: str) -> GpuSupport:
    """Read ``ompi_info --parsable --all``: ``mpi_built_with_<kind>_support:value:true``
    (Open MPI 4 prints it as ``opal_built_with_..._support``, a synonym)."""
    found = {k: v == 'true' for k, v in _OMPI_RE.findall(ompi_info)}
    if kind not in found:
        return GpuSupport(None, f'ompi_info does not report mpi_built_with_{kind}_support '
                                f'(Open MPI older than {"5.0" if kind == "rocm" else "1.7"}?)')
    state = 'true' if found[kind] else 'false'
    return GpuSupport(found[kind], f'ompi_info: mpi_built_with_{kind}_support={state}')


def mpich_support(mpichversion: str, kind: str, env: Mapping[str, str]) -> GpuSupport:
    """Read ``mpichversion``'s configure line (``--with-cuda``/``--with-hip``, or
    ``--without-yaksa``, which removes all GPU support) and ``MPIR_CVAR_ENABLE_GPU``."""
    if env.get('MPIR_CVAR_ENABLE_GPU', '1').strip() in ('0', 'false', 'no'):
        return GpuSupport(False, 'MPIR_CVAR_ENABLE_GPU=0 disables MPICH\'s GPU support')
    line = next((x for x in mpichversion.splitlines() if 'configure' in x), '')
    if not line:
        return GpuSupport(None, 'mpichversion printed no configure line')
    if '--without-yaksa' in line:
        return GpuSupport(False, 'MPICH configured --without-yaksa (no GPU support)')
    flags = _MPICH_GPU_FLAGS[kind]
    for flag in flags:
        if re.search(rf'{flag}(?:=(?!no\b)\S+)?(?:\s|$)', line):
            return GpuSupport(True, f'MPICH configured {flag}')
    if any(f'--without-{f[len("--with-"):]}' in line for f in flags):
        return GpuSupport(False, f'MPICH configured --without-{flags[0][len("--with-"):]}')
    return GpuSupport(None, f'MPICH configure line names none of {", ".join(flags)} '
                            '(GPU support may still be auto-detected)')


def cray_mpich_support(env: Mapping[str, str]) -> GpuSupport:
    enabled = env.get('MPICH_GPU_SUPPORT_ENABLED') == '1'
    return GpuSupport(enabled, f'MPICH_GPU_SUPPORT_ENABLED={env.get("MPICH_GPU_SUPPORT_ENABLED")}')


@cache
def _run(tool: str, *args: str) -> str:
    try:
        out = subprocess.run([tool, *args], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as err:
        return f'failed to run {tool}: {err}'
    return out.stdout + out.stderr


def gpu_support(family: str | None, kind: str, search_path: str,
                env: Mapping[str, str] | None = None) -> GpuSupport:
    """Probe the MPI library found on ``search_path`` for CUDA/ROCm awareness."""
    env = os.environ if env is None else env
    family = family or 'unknown'
    if family.startswith('cray'):
        return cray_mpich_support(env)
    tool = 'ompi_info' if family == 'openmpi' else 'mpichversion'
    args = ('--parsable', '--all') if family == 'openmpi' else ()
    if family not in ('openmpi', 'mpich'):
        return GpuSupport(None, f'no GPU-awareness probe for MPI family {family!r}')
    found = shutil.which(tool, path=search_path)
    if not found:
        return GpuSupport(None, f'{tool} not found on the environment\'s PATH')
    text = _run(found, *args)
    result = (openmpi_support(text, kind) if family == 'openmpi'
              else mpich_support(text, kind, env))
    return GpuSupport(result.aware, f'{result.evidence} ({found})')


def one_to_all(num_gpus: int) -> list[str]:
    """The procurement's intra-node pairs: GPU 0 with each other GPU, as device lists."""
    if num_gpus < 2:
        raise ValueError(f'one-to-all pairs need at least 2 GPUs per node, not {num_gpus}')
    return [f'0,{k}' for k in range(1, num_gpus)]


def binding_script(kind: str) -> str:
    """Shell wrapper: ``omb_gpu_bind.sh DEVICES PROGRAM ARGS...`` (see the module doc)."""
    osu_rank = ' '.join(OSU_LOCAL_RANK_VARS)
    ranks = ' '.join(_RANK_VARS)
    return f'''#!/bin/sh
# Written by omb_suite.gpu: export the node's device list, report the device OSU will pick
# (devices[local_rank % count], local rank read as OSU 7.x reads it), run the benchmark.
devices=$1; shift
first() {{ for v in "$@"; do eval "x=\\${{$v:-}}"; [ -n "$x" ] && {{ echo "$x"; return; }}; done; }}
local_rank=$(first {osu_rank})
rank=$(first {ranks})
if [ -z "$local_rank" ]; then
  echo "omb_gpu_bind: no local-rank variable set by the launcher ({osu_rank}):" \\
       "OSU would put every rank on the same GPU" >&2
  exit 3
fi
count=$(echo "$devices" | tr ',' '\\n' | grep -c .)
device=$(echo "$devices" | cut -d, -f$((local_rank % count + 1)))
export {VISIBLE[kind]}="$devices"
echo "GPUBIND rank=${{rank:-?}} host=$(hostname) visible=$devices device=$device" >&2
exec "$@"
'''


@dataclass(frozen=True)
class Binding:
    rank: int
    host: str
    visible: str
    device: str


def parse_bindings(text: str) -> list[Binding]:
    """The ``GPUBIND`` lines of a job's output, by rank."""
    found = {int(r): Binding(int(r), h, v, d) for r, h, v, d in _BIND_RE.findall(text)}
    return [found[r] for r in sorted(found)]


def verify_bindings(bindings: list[Binding], num_tasks: int) -> None:
    """Every rank reported a device and no two ranks of one host share it."""
    if len(bindings) != num_tasks:
        raise GpuBindingError(f'{len(bindings)} GPUBIND lines for {num_tasks} ranks: the '
                              f'binding wrapper {BIND_SCRIPT} did not run for every rank')
    seen: dict[tuple[str, str], int] = {}
    for b in bindings:
        if (b.host, b.device) in seen:
            raise GpuBindingError(f'ranks {seen[b.host, b.device]} and {b.rank} share GPU '
                                  f'{b.device} on {b.host} (visible devices {b.visible})')
        seen[b.host, b.device] = b.rank


def observed_with_gpus(places: list[probe.RankPlace], bindings: list[Binding]) -> str:
    """``placement_observed`` with each rank's GPU: ``host:cpu0/s0/n0/gpu0;...``."""
    gpus = {b.rank: b.device for b in bindings}
    return ';'.join(f'{probe.observed([p])}/gpu{gpus.get(p.rank, "?")}' for p in places)


def gpus_per_node(partition) -> int:
    """GPUs per node from the partition's ``devices`` (``type: gpu``) configuration."""
    return sum(d.num_devices for d in partition.select_devices('gpu'))


def skip_unless_gpu_aware(test: rfm.RegressionTest, kind: str) -> None:
    """Skip ``test`` (in ``setup``) unless its environment's MPI is ``kind``-aware."""
    env = test.current_environ
    path = os.pathsep.join([*(env.extras.get('env_path') or []), os.environ.get('PATH', '')])
    support = gpu_support(env.extras.get('mpi_family'), kind, path)
    verdict = 'it is not' if support.aware is False else 'cannot tell whether it is'
    test.skip_if(not support.aware,
                 f'{kind} device buffers need a {kind.upper()}-aware MPI and {verdict}: '
                 f'{support.evidence}; use an MPI built with {kind}, or -S gpu_aware_check=0 '
                 'to run anyway')


def install_binding_script(stagedir: str, kind: str) -> str:
    """Write the binding wrapper into the stage directory; return how to call it."""
    path = os.path.join(stagedir, BIND_SCRIPT)
    with open(path, 'w') as fp:
        fp.write(binding_script(kind))
    os.chmod(path, 0o755)
    return f'./{BIND_SCRIPT}'


class DeviceBuffers(rfm.RegressionTestPlugin):
    """Host or device buffers for OSU checks (``OsuRunBase`` children).

    The test declares ``buffers = parameter(gpu.BUFFERS)`` itself, after its own parameters
    (ReFrame lists inherited parameters first, and display names such as
    ``OsuPt2Pt %benchmark=osu_bw %placement=inter_node %buffers=D D`` keep their order).
    Needs ``num_tasks`` and the OSU ``executable`` by the end of ``setup`` (as
    :class:`omb_suite.bases.OsuRunBase` provides), ``osu_options()`` and ``check_placement()``.
    """

    #: Probe that the MPI library is GPU-aware before a device-buffer run, and skip if not.
    #: ``-S gpu_aware_check=0`` trusts the library (when the probe cannot tell).
    #: :type: :class:`bool` :default: ``True``
    gpu_aware_check = variable(typ.Bool, value=True, loggable=False)

    gpu = variable(str, type(None), value=None, loggable=False)
    gpu_devices = variable(str, value='', loggable=False)

    @run_after('init')
    def restrict_to_gpus(self):
        if 'D' in self.buffers:
            self.valid_systems = ['+gpu']
            self.valid_prog_environs = ['+mpi +osu +cuda', '+mpi +osu +rocm']

    @run_after('setup')
    def require_gpu_aware_mpi(self):
        if 'D' not in self.buffers:
            return
        self.gpu = gpu_kind(self.current_environ.features)
        count = gpus_per_node(self.current_partition)
        self.skip_if(count == 0, f'partition {self.current_partition.fullname} has the gpu '
                     'feature but no devices entry of type gpu with num_devices')
        self.gpu_devices = ','.join(map(str, range(count)))
        if self.gpu_aware_check:
            skip_unless_gpu_aware(self, self.gpu)

    def osu_options(self) -> list[str]:
        opts = super().osu_options()
        if 'D' in self.buffers:
            opts += ['-d', self.gpu, *self.buffers.split()]
        return opts

    @run_before('run')
    def bind_ranks_to_gpus(self):
        """Run OSU through the binding wrapper (after ``prepare_run`` set the options)."""
        if 'D' not in self.buffers:
            return
        wrapper = install_binding_script(self.stagedir, self.gpu)
        self.executable_opts = [self.gpu_devices, self.executable, *self.executable_opts]
        self.executable = wrapper

    def check_placement(self, places):
        super().check_placement(places)
        if 'D' not in self.buffers:
            return
        bindings = parse_bindings(self._read(self.stderr.evaluate()))
        try:
            verify_bindings(bindings, self.num_tasks)
        except GpuBindingError as err:
            raise probe.ProbeError(str(err)) from None
        self.placement_observed = observed_with_gpus(places, bindings)
