"""Device buffers: which variants exist where, the job script of a GPU run (one launch through
the rank wrapper with --gpu), and the skip with evidence for an MPI that is not GPU-aware.

No GPU here: these are dry runs on the example GPU system; the wrapper's GPU binding runs
under the real launchers in tests/machine/test_probe.py.
"""

from __future__ import annotations

import os
import re

import pytest
from rfm_helpers import (
    cuda_aware_mpi_bin,
    fake_osu_tree,
    job_scripts,
    launch_line,
    run_reframe,
    write_registry,
)

from omb_suite.osu import catalogue
from omb_suite.rfm.procurement_check import one_to_all

PT2PT = ('osu_pt2pt.py',)


def test_one_to_all_pairs():
    assert one_to_all(4) == ['0,1', '0,2', '0,3']
    with pytest.raises(ValueError, match='at least 2 GPUs'):
        one_to_all(1)


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
                      registry=gpu_registry, checks=PT2PT)
    assert out.returncode == 0, out.stdout + out.stderr
    scripts = job_scripts(tmp_path)
    assert all(k.startswith('example-gpu/gpu/') for k in scripts), scripts.keys()
    script = scripts[next(k for k in scripts if k.startswith('example-gpu/gpu/ompi-cuda/'))]
    bench = launch_line(script, 'osu_bw')
    assert bench.startswith('srun --mpi=pmix --distribution=block:block --cpu-bind=cores '
                            './omb_rank.sh --gpu cuda 0,1,2,3 /')
    assert bench.endswith('/pt2pt/osu_bw -m 4194304 -d cuda D D')
    assert '#SBATCH --gres=gpu:4' in script
    # Debian's Open MPI is not CUDA-aware: skipped with the evidence instead of a segfault
    assert ('cuda device buffers need a CUDA-aware MPI and it is not: ompi_info: '
            'mpi_built_with_cuda_support=false') in out.stdout


def test_device_buffers_only_on_gpu_partitions(tmp_path, gpu_registry):
    out = run_reframe(tmp_path, '--system', 'example-gpu', '-lC', '-n',
                      'OsuPt2Pt%benchmark=osu_latency%placement=inter_node',
                      registry=gpu_registry, checks=PT2PT)
    assert out.returncode == 0, out.stdout + out.stderr
    cases = re.findall(r'%buffers=(\S \S) /\w+ @example-gpu:(\w+)\+(\S+)', out.stdout)
    assert {b for b, _, _ in cases} == set(catalogue.buffers())
    assert {(p, env) for b, p, env in cases if b == 'D D'} == {('gpu', 'ompi-cuda'),
                                                            ('gpu', 'debian-ompi')}
    assert ('cpu', 'debian-ompi') in {(p, env) for b, p, env in cases if b == 'H H'}


@pytest.mark.parametrize('selection', [('-t', '^device_buffers$'), ('-E', "'D' in buffers")])
def test_only_the_device_buffer_cases_by_tag_or_expression(tmp_path, gpu_registry, selection):
    """The GPU-only selection docs/howto-gpu.md shows (``-n`` cannot match the space in
    ``D D``): every device-buffer case of the partition and no host one."""
    out = run_reframe(tmp_path, '--system', 'example-gpu', '-lC', '-n', 'OsuPt2Pt', *selection,
                      registry=gpu_registry, checks=PT2PT)
    assert out.returncode == 0, out.stdout + out.stderr
    cases = re.findall(r'%buffers=(\S \S) /\w+ @example-gpu:(\w+)\+', out.stdout)
    assert cases and {b for b, _ in cases} == set(catalogue.buffers()) - {'H H'}
    assert {p for _, p in cases} == {'gpu'}


def test_fewer_gpus_than_ranks_per_node_is_skipped_before_the_run(tmp_path, gpu_registry):
    """Two ranks on one GPU (``-S gpu_devices=0``) would fail the binding check after the
    run; the case is skipped before it, saying what the node lacks."""
    out = run_reframe(tmp_path, '--system', 'example-gpu', '--dry-run', '-n', 'OsuPt2Pt', '-E',
                      "benchmark=='osu_latency' and buffers=='D D' and placement=='intra_socket'",
                      '-S', 'gpu_devices=0', registry=gpu_registry, checks=PT2PT)
    assert out.returncode == 0, out.stdout + out.stderr
    assert ('2 ranks per node need a GPU each and example-gpu:gpu gives them 1 (GPUs 0)'
            in out.stdout)
    assert not any('ompi-cuda' in k for k in job_scripts(tmp_path))


def test_one_gpu_workstation_skips_intra_node_device_buffers_synthetic_nvidia_smi(
        tmp_path, gpu_registry):
    """The ``local`` system on a one-GPU host (a stand-in nvidia-smi printing the H100's
    ``9.0``), run for real: the device-buffer cases between two ranks skip with the reason
    instead of failing ``ranks 0 and 1 share GPU 0`` after the run, as on the lent machine
    (docs/dev/gpu-runs.md)."""
    stand_in = tmp_path / 'gpu-bin' / 'nvidia-smi'
    stand_in.parent.mkdir()
    stand_in.write_text('#!/bin/sh\necho 9.0\n')
    stand_in.chmod(0o755)
    path = f'{stand_in.parent}:{os.environ["PATH"]}'
    out = run_reframe(tmp_path, '--system', 'local', '-r', '-n', 'OsuPt2Pt%benchmark=osu_latency',
                      '-E', "buffers=='D D'", registry=gpu_registry, checks=PT2PT,
                      extra_env={'PATH': path})
    assert out.returncode == 0, out.stdout + out.stderr
    assert re.search(r'SKIP .*%buffers=D D .*\+ompi-cuda \[2 ranks per node need a GPU each '
                     r'and local:default gives them 1 \(GPUs 0\)', out.stdout), out.stdout
    assert 'FAIL' not in out.stdout
