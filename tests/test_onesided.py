"""One-sided checks: real OSU 7.4 outputs, the generated -w/-s combinations, a local run."""

from __future__ import annotations

from functools import partial

import pytest
import rfm_helpers
from rfm_helpers import local_registry, needs_osu, osu_root, perflog
from testdata import DATA, real_output

from omb_suite.osu import parsing

run_reframe = partial(rfm_helpers.run_reframe, checks=('explore/osu_onesided.py',))

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


@pytest.mark.e2e
@needs_osu()
def test_one_sided_runs_on_local_and_logs_window_and_sync(tmp_path):
    out = run_reframe(tmp_path, '--system', 'local', '-n', 'OsuOneSided', '-E',
                      "placement=='intra_socket' and case in ("
                      "('osu_put_latency', 'dynamic', 'pscw'), ('osu_put_bibw', 'create', "
                      "'fence'), ('osu_cas_latency', 'allocate', 'lock'))",
                      '-p', 'system-openmpi', '-S', 'iterations=100', '-S', 'warmup=10',
                      '-S', 'max_size=1024', '-r',
                      registry=local_registry(tmp_path, osu_openmpi=osu_root('OSU_ROOT')))
    assert out.returncode == 0, out.stdout + out.stderr
    rows = {(r['benchmark'], r['perf_var']): r for r in perflog(tmp_path, 'OsuOneSided')}
    put = rows[('osu_put_latency', 'latency_8')]
    assert (put['rma_window'], put['rma_sync'], put['algorithm']) == ('dynamic', 'pscw', 'null')
    assert 0 < float(put['perf_value']) < 1000
