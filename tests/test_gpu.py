"""GPU buffers: the GPU-awareness probe on real tool output, the rank-to-GPU binding wrapper
under real launchers, and dry runs on the example 4-GPU Slurm system."""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
from functools import partial

import pytest
import rfm_helpers
from rfm_helpers import cuda_aware_mpi_bin, fake_osu_tree, job_scripts, write_registry
from testdata import DATA, real_output

from omb_suite import gpu

#: Only the check files these tests need (loading all of them takes much longer).
run_reframe = partial(rfm_helpers.run_reframe, checks=('osu_pt2pt.py',))

OMPI_INFO = DATA / 'gpu' / 'debian_openmpi_4.1.4_ompi_info_parsable_all.txt.gz'
MPICHVERSION = DATA / 'gpu' / 'debian_mpich_4.0.2_mpichversion.txt'
ROOT_OK = {'OMPI_ALLOW_RUN_AS_ROOT': '1', 'OMPI_ALLOW_RUN_AS_ROOT_CONFIRM': '1'}


def test_debian_openmpi_is_not_cuda_aware():
    text = gzip.decompress(OMPI_INFO.read_bytes()).decode()
    support = gpu.openmpi_support(text, 'cuda')
    assert support.aware is False
    assert support.evidence == 'ompi_info: mpi_built_with_cuda_support=false'


def test_debian_openmpi_cannot_tell_rocm():
    text = gzip.decompress(OMPI_INFO.read_bytes()).decode()
    assert gpu.openmpi_support(text, 'rocm').aware is None


def test_cuda_aware_line_as_documented_by_open_mpi():
    # the line Open MPI's FAQ shows for a CUDA-aware build (no such build on this machine)
    line = 'mca:mpi:base:param:mpi_built_with_cuda_support:value:true\n'
    assert gpu.openmpi_support(line, 'cuda').aware is True


def test_debian_mpich_has_no_gpu_support():
    support = gpu.mpich_support(real_output(MPICHVERSION), 'cuda', {})
    assert support.aware is False and '--without-yaksa' in support.evidence


def test_mpich_cvar_disables_gpu_support():
    text = 'MPICH configure: --prefix=/opt/mpich --with-cuda=/usr/local/cuda\n'  # synthetic
    assert gpu.mpich_support(text, 'cuda', {}).aware is True
    assert gpu.mpich_support(text, 'cuda', {'MPIR_CVAR_ENABLE_GPU': '0'}).aware is False
    assert gpu.mpich_support(text, 'rocm', {}).aware is None


@pytest.mark.skipif(not shutil.which('ompi_info'), reason='Open MPI (ompi_info) not installed')
def test_probe_of_this_machines_open_mpi_says_not_cuda_aware():
    support = gpu.gpu_support('openmpi', 'cuda', os.environ['PATH'])
    assert support.aware is False
    assert 'mpi_built_with_cuda_support=false' in support.evidence


def test_one_to_all_pairs():
    assert gpu.one_to_all(4) == ['0,1', '0,2', '0,3']
    with pytest.raises(ValueError, match='at least 2 GPUs'):
        gpu.one_to_all(1)


def test_two_ranks_on_one_gpu_are_caught():
    text = ('GPUBIND rank=0 host=n1 visible=0 device=0\n'      # synthetic: one device for two
            'GPUBIND rank=1 host=n1 visible=0 device=0\n')
    with pytest.raises(gpu.GpuBindingError, match='ranks 0 and 1 share GPU 0 on n1'):
        gpu.verify_bindings(gpu.parse_bindings(text), 2)
    with pytest.raises(gpu.GpuBindingError, match='1 GPUBIND lines for 2 ranks'):
        gpu.verify_bindings(gpu.parse_bindings(text.splitlines()[0]), 2)


@pytest.mark.parametrize('launcher', ['mpirun', 'mpirun.mpich'])
def test_binding_wrapper_under_real_launcher(tmp_path, launcher):
    if not shutil.which(launcher):
        pytest.skip(f'{launcher} not installed')
    wrapper = tmp_path / gpu.BIND_SCRIPT
    wrapper.write_text(gpu.binding_script('cuda'))
    wrapper.chmod(0o755)
    out = subprocess.run([launcher, '-np', '2', str(wrapper), '0,3', 'sh', '-c',
                          'echo "visible=$CUDA_VISIBLE_DEVICES"'], capture_output=True,
                         text=True, timeout=120, env={**os.environ, **ROOT_OK})
    assert out.returncode == 0, out.stderr
    bindings = gpu.parse_bindings(out.stderr)
    gpu.verify_bindings(bindings, 2)
    assert [(b.rank, b.device) for b in bindings] == [(0, '0'), (1, '3')]
    assert out.stdout.count('visible=0,3') == 2


def test_binding_wrapper_refuses_without_local_rank(tmp_path):
    wrapper = tmp_path / gpu.BIND_SCRIPT
    wrapper.write_text(gpu.binding_script('rocm'))
    wrapper.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in gpu.OSU_LOCAL_RANK_VARS}
    out = subprocess.run([str(wrapper), '0', 'true'], capture_output=True, text=True, env=env)
    assert out.returncode == 3 and 'every rank on the same GPU' in out.stderr


@pytest.fixture
def gpu_registry(tmp_path):
    """A CUDA environment whose ompi_info says CUDA-aware, and Debian's Open MPI."""
    osu = fake_osu_tree(tmp_path / 'osu')
    cuda_bin = cuda_aware_mpi_bin(tmp_path)
    return write_registry(tmp_path / 'environments.json', [
        {'name': 'ompi-cuda', 'mpi_family': 'openmpi', 'mpi_version': '5.0.5',
         'osu_root': str(osu), 'osu_version': '7.4', 'cuda': True, 'path': [str(cuda_bin)],
         'source': 'spack'},
        {'name': 'debian-ompi', 'mpi_family': 'openmpi', 'mpi_version': '4.1.4',
         'osu_root': str(osu), 'osu_version': '7.4', 'cuda': True, 'source': 'system'},
    ])


def test_dry_run_device_buffers_on_gpu_partition(tmp_path, gpu_registry):
    out = run_reframe(tmp_path, '--system', 'example-gpu', '--dry-run', '-n', 'OsuPt2Pt', '-E',
                      "benchmark=='osu_bw' and buffers=='D D' and placement=='intra_socket'",
                      registry=gpu_registry)
    assert out.returncode == 0, out.stdout + out.stderr
    scripts = job_scripts(tmp_path)
    assert all(k.startswith('example-gpu/gpu/') for k in scripts), scripts.keys()
    script = scripts[next(k for k in scripts if k.startswith('example-gpu/gpu/ompi-cuda/'))]
    bench = script.splitlines()[-1]
    assert bench.startswith('srun --mpi=pmix --distribution=block:block --cpu-bind=cores '
                            './omb_gpu_bind.sh 0,1,2,3 ')
    assert bench.endswith('/pt2pt/osu_bw -m 4194304 -d cuda D D')
    assert '#SBATCH --gres=gpu:4' in script
    # Debian's Open MPI is not CUDA-aware: skipped with the evidence instead of a segfault
    assert ('cuda device buffers need a CUDA-aware MPI and it is not: ompi_info: '
            'mpi_built_with_cuda_support=false') in out.stdout


def test_device_buffers_only_on_gpu_partitions(tmp_path, gpu_registry):
    out = run_reframe(tmp_path, '--system', 'example-gpu', '-l', '-n',
                      'OsuPt2Pt%benchmark=osu_latency%placement=inter_node',
                      registry=gpu_registry)
    assert out.returncode == 0, out.stdout + out.stderr
    for buffers in gpu.BUFFERS:
        assert f'%placement=inter_node %buffers={buffers} ' in out.stdout
    device = next(x for x in out.stdout.split('\n- ') if '%buffers=D D' in x)
    assert 'example-gpu:gpu+' in device and 'example-gpu:cpu+' not in device
