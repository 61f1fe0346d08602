"""Start-up, multi-pair, multi-process and congestion checks: real outputs, dry runs on the
example GPU system (up to 128 nodes), and local runs with 2 ranks (1 pair)."""

from __future__ import annotations

import re
from functools import partial

import pytest
import rfm_helpers
from rfm_helpers import (
    fake_osu_tree,
    job_scripts,
    launch_line,
    local_registry,
    needs_osu,
    osu_root,
    perflog,
    write_registry,
)
from testdata import DATA, real_output

from omb_suite.osu import parsing

run_reframe = partial(rfm_helpers.run_reframe, checks=(
    'osu_startup.py', 'osu_multipair.py', 'explore/osu_startup.py', 'explore/osu_multipair.py'))

OSU = DATA / 'osu'


def test_real_mbw_mr_reports_pairs_window_and_rates():
    table = parsing.parse_osu_output(real_output(OSU / 'cap_ompi_osu_mbw_mr_m1-1024.txt'),
                                     expect_sizes=parsing.expected_sizes(1, 1024))
    assert (table.meta['pairs'], table.meta['window_size']) == ('1', '64')
    assert table.value('bandwidth', 1024) == 5052.74
    assert table.value('msg_rate', 1) == 9032569.47


def test_real_latency_mp_reports_forked_processes():
    table = parsing.parse_osu_output(real_output(OSU / 'cap_ompi_osu_latency_mp_m1-1024.txt'))
    assert (table.meta['sender_processes'], table.meta['receiver_processes']) == ('2', '2')
    assert table.value('latency', 8) == 0.21


def test_real_startup_outputs():
    init = parsing.parse_osu_output(real_output(OSU / 'cap_ompi_osu_init.txt'))
    assert init.value('nprocs') == 2 and init.value('init_avg') == 313
    hello = parsing.parse_osu_output(real_output(OSU / 'cap_ompi_osu_hello.txt'))
    assert hello.value('nprocs') == 2


def test_fan_in_on_one_node_fails_with_osus_reason():
    with pytest.raises(parsing.OsuParseError, match='more than 1 node'):
        parsing.parse_osu_output(real_output(OSU / 'cap_ompi_osu_bw_fan_in_m1-1024.txt'))


@pytest.fixture
def fake_registry(tmp_path):
    osu = fake_osu_tree(tmp_path / 'osu')
    return write_registry(tmp_path / 'environments.json', [
        {'name': 'test-openmpi', 'mpi_family': 'openmpi', 'osu_root': str(osu),
         'source': 'system'}])


def _script(scripts: dict[str, str], program: str, *needles: str) -> str:
    found = [s for s in scripts.values()
             if re.search(rf'/{program}( |$)', s, re.M) and all(n in s for n in needles)]
    assert len(found) == 1, (program, needles, list(scripts))
    return found[0]


def test_dry_run_on_128_node_partition(tmp_path, fake_registry):
    out = run_reframe(tmp_path, '--system', 'example-gpu:cpu', '--dry-run', '-n',
                      'OsuStartup|OsuMbwMr|OsuMultiLat|OsuCongestion|OsuLatencyMp',
                      '-S', 'max_size=1024', registry=fake_registry)
    assert out.returncode == 0, out.stdout + out.stderr
    scripts = job_scripts(tmp_path)
    init128 = _script(scripts, 'osu_init', '--ntasks=128\n')
    assert '#SBATCH --ntasks-per-node=1' in init128
    assert launch_line(init128, 'osu_init').startswith(
        'srun --mpi=pmix --distribution=cyclic:block --cpu-bind=cores ./omb_rank.sh ')
    # mbw_mr across two nodes: one pair per core, ranks filled node by node
    mbw = _script(scripts, 'osu_mbw_mr', '--ntasks=96\n', '-W 16')
    assert '#SBATCH --ntasks-per-node=48' in mbw
    assert launch_line(mbw, 'osu_mbw_mr').startswith('srun --mpi=pmix --distribution=block:block')
    # '-m :MAX': the environment names no OSU release (every release reads it)
    assert launch_line(mbw, 'osu_mbw_mr').endswith('osu_mbw_mr -m :1024 -W 16')
    assert '--ntasks=48\n' in _script(scripts, 'osu_multi_lat', '--ntasks=48\n')  # 2 sockets
    fan = _script(scripts, 'osu_bw_fan_out', '--ntasks=8\n')
    assert '#SBATCH --ntasks-per-node=1' in fan
    mp = _script(scripts, 'osu_latency_mp', '-t 2:2', '--ntasks-per-node=1')
    assert launch_line(mp, 'osu_latency_mp').endswith('osu_latency_mp -m :1024 -t 2:2')
    # the verdict set starts 1 node and all 128; the sweep every other count
    assert 'measured by the verdict set (reframe/checks/osu_startup.py)' in out.stdout


def test_node_counts_beyond_the_partition_are_skipped(tmp_path, fake_registry):
    out = run_reframe(tmp_path, '--system', 'local', '--dry-run', '-n', 'OsuStartupSweep',
                      registry=fake_registry)
    assert out.returncode == 0, out.stdout + out.stderr
    assert '128 nodes asked, local:default has 1' in out.stdout


@pytest.mark.e2e
@needs_osu()
def test_startup_and_pairs_on_local(tmp_path):
    reg = local_registry(tmp_path, osu_openmpi=osu_root('OSU_ROOT'))
    common = ('--system', 'local', '-p', 'system-openmpi', '-S', 'iterations=100',
              '-S', 'warmup=10', '-S', 'max_size=1024', '-r')
    out = run_reframe(tmp_path, *common, '-n', 'OsuStartupSweep', '-E', 'nodes == 1',
                      '-S', 'tasks_per_node=2', registry=reg)
    assert out.returncode == 0, out.stdout + out.stderr
    out = run_reframe(tmp_path, *common, '-n', 'OsuMbwMr', '-n', 'OsuMultiLat',
                      '-n', 'OsuLatencyMp%placement=intra_socket', registry=reg)
    assert out.returncode == 0, out.stdout + out.stderr
    init = {(r['benchmark'], r['perf_var']): r for r in perflog(tmp_path, 'OsuStartupSweep')}
    assert init['osu_init', 'init_avg']['num_tasks'] == '2'
    assert float(init['osu_init', 'init_avg']['perf_value']) > 0
    mbw = {(r['window_size'], r['perf_var']): r
           for test in ('OsuMbwMr', 'OsuMbwMrSweep') for r in perflog(tmp_path, test)}
    assert float(mbw[('64', 'msg_rate_8')]['perf_value']) > 0
    assert mbw[('16', 'bandwidth_1024')]['placement'] == 'intra_socket'
    assert mbw[('16', 'bandwidth_1024')]['algorithm'] == 'null'
    assert {r['processes'] for r in perflog(tmp_path, 'OsuLatencyMp')} == {'1', '2'}
    assert perflog(tmp_path, 'OsuMultiLat')
