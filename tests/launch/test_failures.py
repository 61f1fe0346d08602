"""Failure causes from real launcher/scheduler output."""

from testdata import DATA, real_output

from omb_suite.launch.failures import failure_cause, with_cause


def test_real_node_failure_names_the_node():
    # stderr of `srun` when node2 died under it on the mini-cluster
    err = ('srun: error: Node failure on node2\n'
           'srun: Job step aborted: Waiting up to 7 seconds for job step to finish.\n')
    assert failure_cause(err) == 'node failure: srun: error: Node failure on node2'


def test_real_time_limit_and_killed_tasks():
    text = real_output(DATA / 'osu' /
                       'slurm_ompi_osu_bcast_4ranks_2nodes_oversubscribed_killed.txt')
    assert failure_cause(text).startswith('cancelled: slurmstepd-node1: error: *** STEP 12.0')
    assert failure_cause('srun: error: node1: tasks 0-1: Killed\n') == (
        'task killed: srun: error: node1: tasks 0-1: Killed')


def test_real_peer_disconnect_names_the_peer_host():
    text = real_output(DATA / 'osu' / (
        'slurm_ompi_osu_latency_internode_salloc_mpirun_both-bound-core0_killed.txt'))
    assert failure_cause(text) == 'peer lost: Peer host:  node1'


def test_clean_output_has_no_cause():
    assert failure_cause(real_output(DATA / 'osu' / 'ompi_osu_latency_default.txt')) is None


def test_real_rank_crash_under_open_mpi_names_the_signal():
    # a non-CUDA-aware Open MPI 5 handed device buffers (H100, tests/data/gpu/README.md)
    err = real_output(DATA / 'gpu' / 'h100_openmpi-5.0.11_osu-7.3_latency_DD_rfm_job.err')
    assert failure_cause(err) == 'rank crashed: [vm:09913] Signal: Segmentation fault (11)'
    assert with_cause('ranks share a GPU', err) == (
        'ranks share a GPU [job: rank crashed: [vm:09913] Signal: Segmentation fault (11)]')
    assert with_cause('no table', 'clean\n') == 'no table'


def test_real_rank_death_under_mpich_hydra_names_the_signal():
    # a rank of MPICH 4.0.2 killed by hydra (tests/data/launch/README.md)
    text = (DATA / 'launch' / 'mpich-4.0.2_hydra_rank_killed.out').read_text()
    assert failure_cause(text) == ('rank died: YOUR APPLICATION TERMINATED WITH THE EXIT '
                                   'STRING: Killed (signal 9)')


def test_real_mpich_abort_without_hydra_banner_names_the_assertion():
    # every rank of MPICH 4.0.2 aborted itself, no banner (the canary run of the fixed writer)
    text = (DATA / 'tuning' / 'mpich' / '4.0.2-alltoall-4' / 'canary.out').read_text()
    assert 'TERMINATED WITH THE EXIT STRING' not in text
    assert failure_cause(text) == ('rank aborted: Assertion failed in file '
                                   'src/mpi/coll/mpir_coll.c at line 2868: 0')
    assert failure_cause('x\nAbort(1) on node 3: Internal error\n') == (
        'rank aborted: Abort(1) on node 3: Internal error')


def test_ucx_signal_handler_line_is_a_crash():
    # the line MPICH 4.0.2 over UCX printed in test_e2e_local's crashed-probe run
    line = ('[vm:13140:0:13140] Caught signal 11 (Segmentation fault: address not mapped to '
            'object at address (nil))')
    assert failure_cause(f'noise\n{line}\n') == f'rank crashed: {line}'


def test_open_mpi_launcher_line_names_a_crash_when_the_rank_report_is_lost():
    # what Open MPI 4.1.4's mpirun printed after the crashed-probe run's ranks died
    line = ('mpirun noticed that process rank 1 with PID 0 on node vm exited on signal 11 '
            '(Segmentation fault).')
    assert failure_cause(f'---\n{line}\n---\n') == f'rank crashed: {line}'
