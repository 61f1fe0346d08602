"""What a job's node was doing: the `times` and NODESTATE lines of the job judged."""

from __future__ import annotations

import subprocess

import pytest

from omb_suite.machine import node_state, probe


def shot(t: float, busy: int, children: float | None, steal: int = 0, psi: int | str = 0,
         load: float = 2.0, cpus: int = 2) -> str:
    """The job's lines at one moment: its shell's `times`, then a NODESTATE line (jiffies at
    100 Hz: ``busy`` of them this guest's work)."""
    cpu = f'{busy},0,0,90000,0,0,0,{steal},0,0'
    times = '' if children is None else f'0m0.01s 0m0.00s\n0m{children:.3f}s 0m0.000s\n'
    return (f'{times}NODESTATE t={t} cpus={cpus} hz=100 load={load} runq=3/100 '
            f'psi_some_us={psi} cpu={cpu}')


def test_a_quiet_launch_whose_ranks_are_the_shells_children():
    """10 s, 2 ranks spinning on 2 CPUs (2000 jiffies), 19.6 s of it the job's: quiet."""
    state = node_state.from_output(shot(10, 0, 0.0) + '\n' + shot(20, 2000, 19.6, psi=400000),
                                   ranks=2)
    assert state.state == 'quiet' and state.other == pytest.approx(0.02)
    assert state.cpu_wait == pytest.approx(0.04)
    assert state.column() == ('quiet other=0.020 cpu_wait=0.040 steal=0.000 load=2.00 cpus=2 '
                              'ranks=2')


def test_another_process_taking_a_third_of_the_cpus_makes_the_node_busy():
    text = '\n'.join([shot(10, 0, 0.0), 'OSU output in between',
                      shot(20, 2000, 13.3, load=3.1)])
    state = node_state.from_output(text, ranks=2)
    assert state.busy and state.other == pytest.approx(0.335)
    assert state.reason() == ('the node was busy: other work took 34 % of its CPU time during '
                              'the run (load 3.1 on 2 CPUs, 2 of them ranks)')


def test_ranks_the_shell_does_not_fork_leave_the_load_to_judge():
    """srun: the job shell's children are srun's client, the ranks are the step daemon's:
    the CPU of other work is not measurable, the load beyond the ranks decides."""
    quiet = node_state.from_output(shot(10, 0, 0.0) + '\n' + shot(20, 2000, 0.2, load=2.3),
                                   ranks=2, forked=False)
    busy = node_state.from_output(shot(10, 0, 0.0) + '\n' + shot(20, 2000, 0.2, load=3.4),
                                  ranks=2, forked=False)
    assert (quiet.state, quiet.other, busy.state) == ('quiet', None, 'busy')


def test_ranks_starved_by_another_process_are_still_the_job():
    """Real figures (a busy loop beside a 2-rank osu_latency, mpirun): the ranks got 15.3 of
    the 51 CPU seconds of the launch, the loop the rest."""
    text = ('0m0.000s 0m0.002s\n0m0.001s 0m0.000s\nNODESTATE t=1795898666.116599819 cpus=2 '
            'hz=100 load=2.85 runq=3/173 psi_some_us=1875429291 cpu=532449,27928,294226,155760,'
            '1435,0,3727,5063,0,0\n0m0.000s 0m0.003s\n0m12.814s 0m2.497s\nNODESTATE '
            't=1795898691.632933187 cpus=2 hz=100 load=3.40 runq=4/173 psi_some_us=1900259026 '
            'cpu=536402,27928,295339,155760,1435,0,3761,5067,0,0')
    state = node_state.from_output(text, ranks=2)
    assert state.busy and state.other == pytest.approx(0.70, abs=0.01)


def test_the_jobs_own_start_up_waiting_for_cpus_is_not_busy():
    """A short launch whose ranks waited for each other's start-up (PSI 60 %): its CPU was
    its own."""
    state = node_state.from_output(shot(10, 0, 0.0) + '\n' + shot(11, 200, 1.95,
                                                                     psi=600000), ranks=2)
    assert state.state == 'quiet' and state.cpu_wait == pytest.approx(0.6)


def test_steal_time_makes_the_node_busy():
    state = node_state.from_output(shot(10, 0, 0.0) + '\n' + shot(20, 2000, 20.0, steal=400),
                                   ranks=2)
    assert state.busy and 'hypervisor took' in state.reason()


def test_more_ranks_than_cpus_waits_by_its_own_making():
    state = node_state.from_output(shot(10, 0, 0.0) + '\n' + shot(20, 2000, 5.0), ranks=4)
    assert state.state == 'oversubscribed' and not state.busy


def test_without_the_shells_times_the_load_beyond_the_ranks_stands_in():
    quiet = node_state.from_output(shot(10, 0, None) + '\n' + shot(20, 2000, None, load=2.2),
                                   ranks=2)
    busy = node_state.from_output(shot(10, 0, None) + '\n' + shot(20, 2000, None, load=4.0),
                                  ranks=2)
    assert (quiet.state, quiet.other, busy.state) == ('quiet', None, 'busy')
    assert busy.column().startswith('busy other=na')


def test_one_snapshot_or_none_is_not_a_state():
    assert node_state.from_output(shot(10, 0, 0.0), 2) is None
    assert node_state.from_output('', 2) is None


@pytest.mark.parametrize('text', [None, '', 'null', 'fast cpu_wait=0.1'])
def test_a_column_of_another_form_reads_as_unknown(text):
    assert node_state.parse_column(text) is None


def test_the_column_reads_back():
    state = node_state.NodeState('busy', 0.48, 0.0, 7.9, 2, 2, 0.33)
    assert node_state.parse_column(state.column()) == state


def test_the_job_scripts_lines_are_what_this_module_reads(tmp_path):
    """As circumstances.py writes it: the shell's `times`, then the script, twice around a
    command that spins one CPU for a second (the shell's child; on a busy machine it gets
    less than the whole second)."""
    script = f'{probe.source_dir()}/{node_state.SCRIPT}'
    snap = f'{{ times; sh {script}; }} >> {tmp_path}/out'
    spin = 'timeout 1 sh -c "while :; do :; done"'
    subprocess.run(['bash', '-c', f'{snap}; {spin}; {snap}'], check=True)
    before, after = node_state.parse_snapshots((tmp_path / 'out').read_text())
    assert after.children - before.children > 0.2 and after.hz and len(after.cpu) >= 8
