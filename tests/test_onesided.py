"""One-sided checks: real OSU 7.4 outputs, the generated -w/-s combinations, a local run."""

from __future__ import annotations

import re
from functools import partial

import pytest
import rfm_helpers
from rfm_helpers import (
    OPENMPI,
    fake_osu_tree,
    osu_root_from,
    perflog,
    system_registry,
    write_registry,
)
from testdata import DATA, real_output

from omb_suite import parsing

#: Only the check files these tests need (loading all of them takes much longer).
run_reframe = partial(rfm_helpers.run_reframe, checks=('osu_onesided.py',))

OSU = DATA / 'osu'


@pytest.mark.parametrize('name, window, sync, column, first', [
    ('cap_ompi_osu_put_bw_m1-1024.txt', 'MPI_Win_allocate', 'MPI_Win_flush', 'bandwidth', 35.82),
    ('cap_ompi_osu_get_latency_m1-1024.txt', 'MPI_Win_allocate', 'MPI_Win_flush', 'latency',
     0.11),
    ('cap_ompi_osu_get_acc_latency_m1-1024.txt', 'MPI_Win_create', 'MPI_Win_lock/unlock',
     'latency', 4.92),
    ('cap_ompi_osu_cas_latency.txt', 'MPI_Win_allocate', 'MPI_Win_flush', 'latency', 0.13),
    ('cap_ompi_osu_fop_latency.txt', 'MPI_Win_allocate', 'MPI_Win_flush', 'latency', 0.11),
])
def test_real_one_sided_outputs(name, window, sync, column, first):
    table = parsing.parse_osu_output(real_output(OSU / name))
    assert table.kind == 'one_sided'
    assert table.meta['window_creation'] == window
    assert table.meta['synchronization'] == sync
    assert table.value(column, 1) == first


def test_fop_and_cas_report_one_element():
    for name in ('cap_ompi_osu_cas_latency.txt', 'cap_ompi_osu_fop_latency.txt'):
        assert parsing.parse_osu_output(real_output(OSU / name)).sizes() == [1]


def test_only_accepted_combinations_are_generated(tmp_path):
    osu = fake_osu_tree(tmp_path / 'osu')
    reg = write_registry(tmp_path / 'environments.json', [
        {'name': 'test-openmpi', 'mpi_family': 'openmpi', 'osu_root': str(osu),
         'source': 'system'}])
    out = run_reframe(tmp_path, '--system', 'local', '-l', '-n', 'OsuOneSided', '-E',
                      "placement=='intra_socket'", registry=reg)
    assert out.returncode == 0, out.stdout + out.stderr
    variants = re.findall(r'%variant=(\S+) %placement=intra_socket', out.stdout)
    # OSU 7.4: 8 benchmarks accept 6 syncs, osu_put_bibw only pscw and fence; 3 windows each
    assert len(variants) == len(set(variants)) == (8 * 6 + 2) * 3
    bibw = {v.split('/', 1)[1] for v in variants if v.startswith('osu_put_bibw/')}
    assert bibw == {f'{w}/{s}' for w in ('create', 'allocate', 'dynamic')
                    for s in ('pscw', 'fence')}
    assert 'osu_cas_latency/dynamic/lock_all' in variants


@pytest.mark.e2e
@pytest.mark.skipif(not OPENMPI, reason='Debian Open MPI not installed')
def test_one_sided_runs_on_local(tmp_path):
    root = osu_root_from('OSU_ROOT')
    if not root:
        pytest.skip('OSU not present: set OSU_ROOT=<OSU 7.x prefix built with Open MPI>')
    out = run_reframe(tmp_path, '--system', 'local', '-n', 'OsuOneSided', '-E',
                      "placement=='intra_socket' and variant in ("
                      "('osu_put_latency', 'dynamic', 'pscw'), ('osu_put_bibw', 'create', "
                      "'fence'), ('osu_cas_latency', 'allocate', 'lock'))",
                      '-p', 'system-openmpi', '-S', 'iterations=100', '-S', 'warmup=10',
                      '-S', 'max_size=1024', '-r',
                      registry=system_registry(tmp_path, osu_openmpi=root))
    assert out.returncode == 0, out.stdout + out.stderr
    rows = {(r['benchmark'], r['perf_var']): r for r in perflog(tmp_path, 'OsuOneSided')}
    put = rows[('osu_put_latency', 'latency_8')]
    assert put['algorithm'] == 'dynamic/pscw' and 0 < float(put['perf_value']) < 1000
    assert float(rows[('osu_put_bibw', 'bandwidth_1024')]['perf_value']) > 0
    assert rows[('osu_cas_latency', 'latency_1')]['algorithm'] == 'allocate/lock'
