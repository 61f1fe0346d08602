"""A library known to hang after printing its whole result (data/known_hangs.yaml: MPICH
before 4.2 with ch4:ucx, in MPI_Finalize, on two or more nodes), for real on the two-node
mini-cluster: the result is kept and the defect named; the same hang in a library without
the defect (MPICH 4.2), and a result that is not complete, still fail, each saying which it was
(one ReFrame run, three environments).

The stand-in OSU program prints a real two-rank ``osu_barrier -f`` table from rank 0 and then
never exits, as Debian's MPICH 4.0.2 did once in five verdict runs (MPI_Finalize after the
result); Slurm starts it on both nodes with the environment's launcher options, through the
suite's rank wrapper, so placement, limit and sanity are the real ones.

Skipped unless the cluster is up (as the other cluster tests) and Debian's MPICH is installed
(its ``mpichversion`` says ch4:ucx).
"""

from __future__ import annotations

import json
import shutil
from functools import partial
from pathlib import Path

import pytest
import rfm_helpers
from rfm_helpers import mpich_prefix, write_registry

pytestmark = [pytest.mark.cluster, pytest.mark.e2e,
              pytest.mark.skipif(not shutil.which('mpichversion'),
                                 reason='Debian MPICH not installed')]

run_reframe = partial(rfm_helpers.run_reframe, checks=('osu_collectives.py',))

BARRIER = 'osu-micro-benchmarks/mpi/collective/osu_barrier'
WHOLE = ('# OSU MPI Barrier Latency Test v7.3\n'
         '# Avg Latency(us)   Min Latency(us)   Max Latency(us)  Iterations\n'
         '            41.20             40.90             41.50        1000\n')
#: the header only: stopped before the one result row
CUT = WHOLE.rsplit('\n', 2)[0] + '\n'
#: 4 ranks on the compute partition's two 2-core nodes (after the correctness check, as always)
SELECT = ['-n', 'OsuCollective%case=osu_barrier/default%scale=4']


def _hanging_osu(root: Path, printed: str) -> Path:
    """An OSU tree whose osu_barrier prints ``printed`` from rank 0 and never exits."""
    exe = root / 'libexec' / BARRIER
    exe.parent.mkdir(parents=True)
    exe.write_text('#!/bin/sh\nif [ "${SLURM_PROCID:-0}" = 0 ]; then\n'
                   f"printf '%s' '{printed}'\nfi\nexec sleep 600\n")
    exe.chmod(0o755)
    return root


def _case(report: Path, environ: str) -> dict:
    cases = json.loads(report.read_text())['runs'][0]['testcases']
    barrier = [c for c in cases if c['environ'] == environ
               and c['name'].startswith('OsuCollective %case=osu_barrier')]
    assert len(barrier) == 1 and barrier[0]['num_nodes'] == 2, [
        (c['name'], c['environ'], c.get('num_nodes')) for c in cases]
    return barrier[0]


def test_a_hang_after_the_whole_result_is_kept_only_where_the_defect_is_known(
        cluster, work):
    """One run, three environments, each launch stopped at its 10 s limit: MPICH 4.0.2 with
    the whole table passes with the defect named; with the table cut it fails; MPICH 4.2 (the
    fix) with the whole table fails saying the time went after the benchmark, not to the
    network. (Without a partition model the bound is ReFrame's limit less its grace: the
    generated launch line is checked in tests/mpi/test_known_hangs.py.)"""
    mpich_bin = str(mpich_prefix(work))
    runs = (('whole', '4.0.2', WHOLE), ('cut', '4.0.2', CUT), ('fixed', '4.2.0', WHOLE))
    registry = write_registry(work / 'environments.json', [
        {'name': f'{name}-mpich', 'mpi_family': 'mpich', 'mpi_version': version,
         'osu_root': str(_hanging_osu(work / name, text)), 'path': [mpich_bin],
         'source': 'system'} for name, version, text in runs])
    report = work / 'report.json'
    # no correctness run: 'fixed' claims MPICH 4.2 over Debian's 4.0.2 binaries, which the
    # correctness program rightly refuses (it prints MPI_Get_library_version)
    out = run_reframe(work, '--system', 'minicluster:compute', *SELECT, '-S', 'limit_floor_s=10',
                      '-S', 'validation=0', '-r', '--report-file', str(report),
                      registry=registry, extra_env=cluster)
    text = out.stdout + out.stderr
    whole, cut, fixed = (_case(report, f'{name}-mpich') for name, _, _ in runs)

    assert whole['result'] == 'pass', whole['fail_reason']
    assert whole['limit_s'] == 10
    kept = next(line for line in text.splitlines() if 'the result is kept' in line)
    assert 'osu_barrier printed its whole result, then did not exit' in kept
    assert 'pmodels/mpich#6596' in kept and 'pmodels/mpich#6596' in whole['known_defect']

    assert cut['result'] == 'fail'
    assert 'osu_barrier stopped at its time limit of 10 s' in cut['fail_reason']
    assert 'it had printed no result row' in cut['fail_reason']

    assert fixed['result'] == 'fail' and not fixed['known_defect']
    assert 'osu_barrier printed its whole result, then did not exit: stopped at its time ' \
           'limit of 10 s' in fixed['fail_reason']
    assert 'the network was not slow' in fixed['fail_reason']
    for case in (whole, cut, fixed):        # stopped at the limit, well before ReFrame's own
        assert case['time_run'] < 40, case['time_run']
    print(f'\nwhole result, {whole["time_run"]:.0f} s: {kept[:300]}...\n'
          f'cut result, {cut["time_run"]:.0f} s: {cut["fail_reason"]}\n'
          f'MPICH 4.2, {fixed["time_run"]:.0f} s: {fixed["fail_reason"]}')
