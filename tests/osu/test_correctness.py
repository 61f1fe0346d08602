"""Our collective correctness program: its verdicts read from real runs (right results, and a
library made to compute a wrong element), incomplete outputs refused; and, with Debian's MPIs,
the program itself against a corrupted MPI_Allreduce."""

from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest
from rfm_helpers import MPICH, OPENMPI
from testdata import DATA, real_output

from omb_suite.machine import probe
from omb_suite.mpi import mpit
from omb_suite.osu import correctness

VERDICT = ['osu_allreduce', 'osu_bcast', 'osu_alltoall', 'osu_allgather', 'osu_reduce',
           'osu_barrier', 'osu_iallreduce']


def capture(name: str) -> str:
    return real_output(DATA / 'correctness' / name)


@pytest.mark.parametrize(('name', 'asked'), [
    ('ompi_verdict_ok.txt', VERDICT),
    ('mpich_all_ok.txt', [*VERDICT, 'osu_gather', 'osu_scatter']),
])
def test_real_runs_with_right_results(name, asked):
    verdicts = correctness.parse(capture(name), asked, ranks=2)
    assert list(verdicts) == asked and correctness.wrong(verdicts) is None


def test_real_wrong_element_is_named():
    verdicts = correctness.parse(capture('ompi_corrupt_allreduce.txt'),
                                 ['osu_allreduce', 'osu_bcast'], ranks=2)
    assert correctness.wrong(verdicts) == ('osu_allreduce wrong 2 elements at 8 B (first: '
                                           'element 1 is 138, not 137)')


def test_incomplete_outputs_are_never_a_pass():
    text = capture('ompi_verdict_ok.txt')
    with pytest.raises(correctness.CorrectnessError, match='no final line'):
        correctness.parse(text.replace('COLLCHECK done ranks=2\n', ''), VERDICT, ranks=2)
    with pytest.raises(correctness.CorrectnessError, match='no verdict for osu_gather'):
        correctness.parse(text, [*VERDICT, 'osu_gather'], ranks=2)
    with pytest.raises(correctness.CorrectnessError, match='ran on 2 ranks, the job has 4'):
        correctness.parse(text, VERDICT, ranks=4)


@pytest.mark.launches
@pytest.mark.skipif(not OPENMPI, reason='Debian Open MPI not installed')
def test_program_finds_a_corrupted_allreduce_under_real_open_mpi(tmp_path):
    src = os.path.join(probe.source_dir(), correctness.SOURCE)
    exe, lib = tmp_path / 'check', tmp_path / 'libcorrupt.so'
    subprocess.run(['mpicc', '-O2', '-Wall', '-Werror', '-o', str(exe), src], check=True)
    subprocess.run(['mpicc', '-shared', '-fPIC', '-o', str(lib),
                    str(DATA / 'defects' / 'corrupt_allreduce.c')], check=True)
    env = {**os.environ, 'OMPI_ALLOW_RUN_AS_ROOT': '1', 'OMPI_ALLOW_RUN_AS_ROOT_CONFIRM': '1'}
    run = ['mpirun', '-np', '2', str(exe), '65536', *VERDICT]
    good = subprocess.run(run, env=env, capture_output=True, text=True, timeout=120)
    assert correctness.wrong(correctness.parse(good.stdout, VERDICT, 2)) is None, good.stderr
    bad = subprocess.run([*run[:3], '-x', f'LD_PRELOAD={lib}', *run[3:]], env=env,
                         capture_output=True, text=True, timeout=120)
    assert correctness.wrong(correctness.parse(bad.stdout, VERDICT, 2)).startswith(
        'osu_allreduce wrong ')


@pytest.mark.launches
@pytest.mark.skipif(not (MPICH and shutil.which('mpicc.mpich')), reason='Debian MPICH missing')
def test_program_builds_and_passes_with_mpich(tmp_path):
    exe = tmp_path / 'check'
    subprocess.run(['mpicc.mpich', '-O2', '-Wall', '-Werror', '-o', str(exe),
                    os.path.join(probe.source_dir(), correctness.SOURCE)], check=True)
    out = subprocess.run(['mpirun.mpich', '-np', '2', str(exe), '4096', *correctness.CHECKABLE],
                         capture_output=True, text=True, timeout=120)
    verdicts = correctness.parse(out.stdout, list(correctness.CHECKABLE), 2)
    assert correctness.wrong(verdicts) is None, out.stderr


@pytest.mark.launches
@pytest.mark.skipif(not (MPICH and shutil.which('mpicc.mpich')), reason='Debian MPICH missing')
def test_the_preloaded_check_runs_after_init_and_chains_with_the_mpit_reader(tmp_path):
    """The library build of the check (-DOMB_PRELOAD), preloaded before our MPI_T reader into a
    program that only calls MPI_Init and MPI_Finalize (the reader's stand-in for OSU): the
    check runs what OMB_COLLCHECK names, and the reader, whose MPI_Init the check's calls
    next, still reports (its 'MPIT done' lines), under real MPICH."""
    src = probe.source_dir()
    lib, reader, prog = (tmp_path / 'libcheck.so', tmp_path / 'libreader.so',
                         tmp_path / 'prog')
    subprocess.run(['mpicc.mpich', '-O2', '-Wall', '-Werror', '-DOMB_PRELOAD', '-shared',
                    '-fPIC', '-o', str(lib), os.path.join(src, correctness.SOURCE), '-ldl'],
                   check=True)
    subprocess.run(['mpicc.mpich', '-O2', '-shared', '-fPIC', '-o', str(reader),
                    os.path.join(src, mpit.READER_SOURCE)], check=True)
    (tmp_path / 'prog.c').write_text('#include <mpi.h>\nint main(int c, char **v) '
                                     '{ MPI_Init(&c, &v); MPI_Finalize(); return 0; }\n')
    subprocess.run(['mpicc.mpich', '-o', str(prog), str(tmp_path / 'prog.c')], check=True)
    out = subprocess.run(['mpirun.mpich', '-np', '2', '-env', 'LD_PRELOAD', f'{lib}:{reader}',
                          '-env', correctness.ASK_VAR, '4096,osu_allreduce,osu_bcast',
                          str(prog)], capture_output=True, text=True, timeout=120)
    verdicts = correctness.parse(out.stdout, ['osu_allreduce', 'osu_bcast'], 2)
    assert correctness.wrong(verdicts) is None, out.stderr
    assert 'COLLCHECK osu_allreduce ok sizes=4-4096' in out.stdout
    assert len(re.findall(r'^MPIT done rank=\d', out.stdout, re.M)) == 2, out.stdout
    # without the variable the library checks nothing (a program of another test)
    quiet = subprocess.run(['mpirun.mpich', '-np', '2', '-env', 'LD_PRELOAD', str(lib),
                            str(prog)], capture_output=True, text=True, timeout=120)
    assert quiet.returncode == 0 and 'COLLCHECK' not in quiet.stdout
