"""The placement probe: its lines from the per-rank wrapper and the MPI probe, and the wrapper
itself under the real Open MPI and Hydra launchers.

tests/data/probe/*.txt are real outputs (first line: the command): ``placement_probe`` (MPI
program) and ``wrapper_*`` (stderr of ``omb_rank.sh``) on this 2-core VM.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest
from rfm_helpers import MPICH, OPENMPI
from testdata import DATA, real_output

from omb_suite.launch import placements
from omb_suite.machine import probe

ROOT_OK = {'OMPI_ALLOW_RUN_AS_ROOT': '1', 'OMPI_ALLOW_RUN_AS_ROOT_CONFIRM': '1'}
WRAPPER = os.path.join(probe.source_dir(), probe.WRAPPER)


def capture(name: str) -> str:
    return real_output(DATA / 'probe' / name)


@pytest.mark.parametrize('name', ['wrapper_ompi_intra_socket.txt',
                                  'wrapper_mpich_intra_socket.txt'])
def test_real_wrapper_lines_of_both_launchers(name):
    places = probe.parse_probe(capture(name), expect_ranks=2)
    assert probe.observed(places) == 'vm:cpu0/s0/n0;vm:cpu1/s0/n0'


def test_a_rank_line_after_another_ranks_unterminated_message_is_read():
    """OSU 7.3 prints "Requested memory limit too low, using [1048576] instead." on stderr
    without a newline (here from -M 4096), so the next rank's PROBE line follows it on the
    same line: real stderr of 4 ranks, all four must be read."""
    places = probe.parse_probe(capture('wrapper_ompi_osu73_mem_limit_too_low.txt'),
                               expect_ranks=4)
    assert [p.rank for p in places] == [0, 1, 2, 3]


def test_mpi_probe_needs_its_final_line_the_wrapper_needs_every_rank():
    text = capture('ompi_intra_socket.txt')
    assert len(probe.parse_probe(text)) == 2
    with pytest.raises(probe.ProbeError, match='cut off'):
        probe.parse_probe(text.replace('PROBE done ranks=2\n', ''))
    with pytest.raises(probe.ProbeError, match=r'ranks \[2, 3\] did not report'):
        probe.parse_probe(capture('wrapper_ompi_intra_socket.txt'), expect_ranks=4)


def test_synthetic_incomplete_and_garbled_outputs_say_what_is_wrong():
    with pytest.raises(probe.ProbeError,
                       match='no PROBE lines: the ranks did not start, or died before'):
        probe.parse_probe('mpirun: command not found\n', expect_ranks=2)
    with pytest.raises(probe.ProbeError, match='without knowing its rank'):
        probe.parse_probe('PROBE rank=? size=? host=a cpus=0 sockets=0 numa=0\n', 1)
    with pytest.raises(probe.ProbeError, match='rank 0 reported twice'):
        probe.parse_probe('PROBE rank=0 size=1 host=a cpus=0 sockets=0 numa=0\n' * 2, 1)
    with pytest.raises(probe.ProbeError, match='garbled probe line'):
        probe.parse_probe('PROBE rank=0 size=1 host=a cpus=0-x sockets=0 numa=0\n', 1)


def test_gpu_bindings_in_the_observed_placement():
    text = ('PROBE rank=0 size=2 host=n1 cpus=0 sockets=0 numa=0\n'   # synthetic GPU node
            'PROBE rank=1 size=2 host=n1 cpus=8 sockets=0 numa=1\n'
            'GPUBIND rank=1 host=n1 visible=0,3 device=3\nGPUBIND rank=0 host=n1 visible=0,3 '
            'device=0\n')
    places, bindings = probe.parse_probe(text, 2), probe.parse_bindings(text)
    assert [(b.rank, b.device) for b in bindings] == [(0, '0'), (1, '3')]
    assert probe.observed(places, bindings) == 'n1:cpu0/s0/n0/gpu0;n1:cpu8/s0/n1/gpu3'


def test_real_gpu_node_two_ranks_one_gpu_share_it():
    """One H100, two ranks: the wrapper reports GPU 0 for both, and the rule refuses it."""
    err = real_output(DATA / 'gpu' / 'h100_openmpi-5.0.11_osu-7.3_latency_DD_rfm_job.err')
    places, bindings = probe.parse_probe(err, 2), probe.parse_bindings(err)
    assert [(b.rank, b.visible, b.device) for b in bindings] == [(0, '0', '0'), (1, '0', '0')]
    with pytest.raises(probe.WrongPlacement, match='ranks 0 and 1 share GPU 0 on vm'):
        probe.verify_gpus(bindings, places)


def _launch(launcher: str, *args: str) -> subprocess.CompletedProcess:
    if not shutil.which(launcher):
        pytest.skip(f'{launcher} not installed')
    return subprocess.run([launcher, *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **ROOT_OK})


@pytest.mark.launches
@pytest.mark.skipif(not (OPENMPI and MPICH), reason='needs Debian Open MPI and MPICH')
@pytest.mark.parametrize(('launcher', 'options'), [
    ('mpirun', ['--map-by', 'core', '--bind-to', 'core']), ('mpirun.mpich', ['-bind-to', 'core'])])
def test_wrapper_sees_the_binding_the_program_runs_with(launcher, options):
    """The wrapper's CPU set is the one the exec'd program has (read from its own status)."""
    out = _launch(launcher, '-np', '2', *options, WRAPPER, 'sh', '-c',
                  'echo "$PMI_RANK$OMPI_COMM_WORLD_RANK $(sed -n '
                  '"s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)"')
    assert out.returncode == 0, out.stderr
    places = probe.parse_probe(out.stderr, expect_ranks=2)
    placements.placement('intra_socket').verify(places)
    seen = dict(line.split() for line in out.stdout.splitlines())
    assert {str(p.rank): ','.join(map(str, sorted(p.cpus))) for p in places} == seen


@pytest.mark.launches
@pytest.mark.parametrize('launcher', ['mpirun', 'mpirun.mpich'])
def test_wrapper_binds_gpus_under_real_launcher(launcher):
    out = _launch(launcher, '-np', '2', WRAPPER, '--gpu', 'cuda', '0,3', 'sh', '-c',
                  'echo "visible=$CUDA_VISIBLE_DEVICES"')
    assert out.returncode == 0, out.stderr
    bindings = probe.parse_bindings(out.stderr)
    probe.verify_gpus(bindings, probe.parse_probe(out.stderr, expect_ranks=2))
    assert [(b.rank, b.device) for b in bindings] == [(0, '0'), (1, '3')]
    assert out.stdout.count('visible=0,3') == 2


def test_wrapper_refuses_gpus_without_local_rank():
    env = {k: v for k, v in os.environ.items() if 'RANK' not in k and not k.startswith('SLURM')}
    out = subprocess.run([WRAPPER, '--gpu', 'rocm', '0', 'true'], capture_output=True,
                         text=True, env=env)
    assert out.returncode == 3 and 'every rank on the same GPU' in out.stderr
    assert 'PROBE rank=? ' in out.stderr   # and no rank variable: the parser says so


def test_wrapper_preloads_only_into_the_program():
    """--preload reaches the program's environment, after the wrapper's own lines, and goes
    first in an LD_PRELOAD the job already had (a missing library: the loader only warns)."""
    out = subprocess.run([WRAPPER, '--preload', '/nonexistent/libreader.so', 'printenv',
                          'LD_PRELOAD'], capture_output=True, text=True,
                         env={**os.environ, 'LD_PRELOAD': '', 'PMI_RANK': '0'})
    assert out.returncode == 0 and out.stdout == '/nonexistent/libreader.so\n'
    assert out.stderr.startswith('PROBE rank=0 ')
    both = subprocess.run([WRAPPER, '--preload', '/a.so', '--gpu', 'cuda', '0', 'printenv',
                           'LD_PRELOAD', 'CUDA_VISIBLE_DEVICES'], capture_output=True, text=True,
                          env={**os.environ, 'LD_PRELOAD': '/b.so', 'MPI_LOCALRANKID': '0'})
    assert both.stdout == '/a.so:/b.so\n0\n'


def test_a_full_node_is_summarised_as_briefly_as_two_ranks():
    """Synthetic: 128 ranks one per CPU on two hosts, then one rank bound to two CPUs."""
    lines = [f'PROBE rank={r} size=257 host=n{r // 128} cpus={r % 128} sockets={r % 128 // 64} '
             f'numa={r % 128 // 16}' for r in range(256)]
    lines.append('PROBE rank=256 size=257 host=n2 cpus=0-1 sockets=0 numa=0')
    places = probe.parse_probe('\n'.join(lines), expect_ranks=257)
    assert probe.observed(places) == ('n0:cpu0..127/s0,1/n0,1,2,3,4,5,6,7;'
                                      'n1:cpu0..127/s0,1/n0,1,2,3,4,5,6,7;n2:cpu0,1/s0/n0')
