"""What a job's node was doing: the NODESTATE lines of job_sources/omb_node_state.sh judged."""

from __future__ import annotations

import subprocess

import pytest

from omb_suite.machine import node_state, probe


def line(t: float, psi: int | str, steal: int = 0, load: float = 2.0, cpus: int = 2,
         busy: int = 0) -> str:
    cpu = f'{1000 + busy},0,100,5000,0,0,0,{steal},0,0'
    return f'NODESTATE t={t} cpus={cpus} load={load} runq=3/100 psi_some_us={psi} cpu={cpu}'


def test_a_quiet_run():
    state = node_state.from_output(line(10, 1_000_000) + '\n' + line(20, 1_100_000, busy=900),
                                   ranks=2)
    assert state.state == 'quiet'
    assert state.cpu_wait == pytest.approx(0.01)
    assert state.column() == 'quiet cpu_wait=0.010 steal=0.000 load=2.00 cpus=2 ranks=2'


def test_a_task_waiting_for_a_cpu_half_the_run_makes_the_node_busy():
    text = '\n'.join([line(10, 0), 'OSU output in between', line(20, 5_000_000, load=3.1)])
    state = node_state.from_output(text, ranks=2)
    assert state.busy
    assert state.reason() == ('the node was busy: some task waited for a CPU during 50 % of the '
                              'run (load 3.1 on 2 CPUs, 2 of them ranks)')


def test_steal_time_makes_the_node_busy():
    state = node_state.from_output(line(10, 0) + '\n' + line(20, 0, steal=2000, busy=2000), 2)
    assert state.busy and 'hypervisor took' in state.reason()


def test_more_ranks_than_cpus_waits_by_its_own_making():
    state = node_state.from_output(line(10, 0) + '\n' + line(20, 9_000_000), ranks=4)
    assert state.state == 'oversubscribed' and not state.busy


def test_without_psi_the_load_beyond_the_ranks_stands_in():
    quiet = node_state.from_output(line(10, '') + '\n' + line(20, '', load=2.2), ranks=2)
    busy = node_state.from_output(line(10, '') + '\n' + line(20, '', load=4.0), ranks=2)
    assert (quiet.state, quiet.cpu_wait, busy.state) == ('quiet', None, 'busy')
    assert busy.column().startswith('busy cpu_wait=na')


def test_one_line_or_none_is_not_a_state():
    assert node_state.from_output(line(10, 0), 2) is None
    assert node_state.from_output('', 2) is None


@pytest.mark.parametrize('text', [None, '', 'null', 'fast cpu_wait=0.1'])
def test_a_column_of_another_form_reads_as_unknown(text):
    assert node_state.parse_column(text) is None


def test_the_column_reads_back():
    state = node_state.NodeState('busy', 0.48, 0.0, 7.9, 2, 2)
    assert node_state.parse_column(state.column()) == node_state.NodeState(
        'busy', 0.48, 0.0, 7.9, 2, 2)


def test_the_script_prints_a_line_this_module_reads(tmp_path):
    script = f'{probe.source_dir()}/{node_state.SCRIPT}'
    out = subprocess.run(['sh', script], capture_output=True, text=True, check=True).stdout
    (shot,) = node_state.parse_snapshots(out)
    assert shot.t > 0 and shot.cpus and len(shot.cpu) >= 8
