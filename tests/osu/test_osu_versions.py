"""OSU's behaviour per release (omb_suite.osu.versions, data/osu_versions.yaml): options, default
datatypes, the release of an installed tree, and a release newer than the data."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from rfm_helpers import fake_osu_tree, job_scripts, needs_osu, run_reframe, write_registry
from testdata import REPO

from omb_suite.osu import catalogue
from omb_suite.osu import versions as osu_versions

OSU80 = REPO / 'tests' / 'data' / 'osu80'


@pytest.mark.parametrize(('version', 'numbers'), [
    ('7.4', (7, 4)), ('7.5.1', (7, 5, 1)), ('8.0b', (8, 0)), ('8.0b2', (8, 0)), ('v7.3', (7, 3)),
])
def test_release_numbers_end_at_a_letter(version, numbers):
    assert osu_versions.release(version) == numbers


def test_a_version_that_is_no_number_is_refused_saying_so():
    with pytest.raises(ValueError, match='not an OSU release number'):
        osu_versions.release('latest')


@pytest.mark.parametrize(('version', 'mem_limit', 'buckets'), [
    ('7.3', True, False), ('7.4', True, False), ('7.5', False, False), ('7.5.1', False, True),
    ('8.0b', False, True), ('8.0b2', False, True), ('9.1', False, True), (None, False, False),
])
def test_options_per_release(version, mem_limit, buckets):
    assert osu_versions.supports(version, 'mem_limit') is mem_limit
    assert osu_versions.supports(version, 'iteration_buckets') is buckets
    assert osu_versions.supports(version, 'size_powers') is buckets


def test_an_unknown_feature_name_is_an_error_naming_the_known_ones():
    with pytest.raises(KeyError, match='mem_limit'):
        osu_versions.supports('7.4', 'mem-limit')


def test_every_fact_names_its_source_and_what_was_not_run_here_says_so():
    for name in osu_versions.feature_names():
        assert osu_versions.fact(name)['source'], name
    assert 'not run here' in osu_versions.fact('iteration_buckets')['source']
    assert osu_versions.fact('iteration_buckets')['order'] == ['size', 'above', 'up_to']


@pytest.mark.parametrize(('benchmark', 'version', 'datatype'), [
    ('osu_allreduce', '7.4', 'MPI_CHAR'), ('osu_allreduce', '7.5', 'MPI_INT'),
    ('osu_reduce_scatter_block', '8.0b', 'MPI_INT'), ('osu_ireduce', '8.0b2', 'MPI_INT'),
    ('osu_bcast', '8.0b', 'MPI_CHAR'), ('osu_latency', '7.5.1', 'MPI_CHAR'),
    ('osu_allreduce', None, None),
])
def test_default_datatype_per_benchmark_and_release(benchmark, version, datatype):
    assert osu_versions.default_datatype(benchmark, version) == datatype


def test_the_int_reductions_are_programs_of_the_catalogue():
    names = set(catalogue.catalogue())
    for entry in osu_versions._data()['datatypes']:
        for listed in (entry.get('benchmarks') or {}).values():
            assert set(listed) <= names, set(listed) - names


def test_a_reduction_asked_for_mpi_char_runs_signed_char_from_75():
    assert osu_versions.reduction_char('7.4') == 'MPI_CHAR'
    assert osu_versions.reduction_char('8.0b') == 'MPI_SIGNED_CHAR'


def test_a_release_newer_than_the_data_is_named_once_and_taken_as_the_newest_known():
    assert osu_versions.as_known('9.0') == osu_versions.newest_known()
    assert osu_versions.as_known('8.0.1') == '8.0.1'
    first = osu_versions.unknown_note('9.0.7')
    assert first and 'OSU 9.0.7 is newer' in first and 'osu_versions.yaml' in first
    assert osu_versions.unknown_note('9.0.7') is None
    assert osu_versions.unknown_note('8.0b2') is None
    assert osu_versions.default_datatype('osu_allreduce', '9.0.7') == 'MPI_INT'


def test_the_release_is_read_from_the_title_as_80_prints_it():
    """The title line of a real 8.0b2 run (tests/data/osu80): the bytes the program holds."""
    assert osu_versions.banner_version(OSU80 / 'cap80_ompi_osu_latency_version.txt') == '8.0b'
    assert osu_versions.banner_version(OSU80 / 'missing') is None


@needs_osu()
def test_the_release_of_a_real_osu_tree_is_read_from_its_osu_latency():
    found = sorted(Path(os.environ['OSU_ROOT']).rglob('osu_latency'))
    assert osu_versions.banner_version(found[0]) in {'7.3', '7.4'}


def test_a_program_80_does_not_install_is_known():
    assert osu_versions.lacks('osu_scatter_persistent', '8.0b')
    assert not osu_versions.lacks('osu_scatter_persistent', '7.4')
    assert not osu_versions.lacks('osu_scatter_persistent', None)
    assert not osu_versions.lacks('osu_scatterv_persistent', '8.0b')


def test_a_program_80_built_without_what_it_needs_is_told_by_the_line_it_holds():
    """The stub's line as a real 8.0b2 stub printed it (Open MPI 4.1.4 has no MPI-4)."""
    stub = OSU80 / 'cap80_ompi_osu_allreduce_persistent_m1-1024.txt'
    assert osu_versions.not_built(stub) == 'MPI-4 persistent collectives'
    assert osu_versions.not_built(OSU80 / 'cap80_ompi_osu_allreduce_m1-1024.txt') is None


def test_a_dry_run_with_osu_9_names_the_release_once_and_passes_what_80_accepts(tmp_path):
    """Synthetic registry: OSU '9.1' (newer than the data) over a fake OSU tree."""
    osu = fake_osu_tree(tmp_path / 'osu')
    registry = write_registry(tmp_path / 'environments.json', [
        {'name': 'site-openmpi', 'mpi_family': 'openmpi', 'mpi_version': '4.1.4',
         'osu_root': str(osu), 'osu_version': '9.1', 'source': 'system'}])
    out = run_reframe(tmp_path, '--system', 'local', '--dry-run', '-n', 'OsuPt2Pt|OsuCollective',
                      registry=registry)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert out.stdout.count('OSU 9.1 is newer than the releases the suite knows') == 1
    launches = [x for s in job_scripts(tmp_path).values() for x in s.splitlines()
                if './omb_rank.sh' in x]
    assert len(launches) > 5 and not any(' -M ' in x for x in launches)
    assert all(' -m :' in x for x in launches if '-m' in x.split())


def test_a_defect_of_a_release_is_named_for_it_only():
    assert 'MPI_ERR_RMA_RANGE' in osu_versions.defect('8.0b', 'dynamic_window')
    assert osu_versions.defect('7.4', 'dynamic_window') is None
    assert osu_versions.defect(None, 'dynamic_window') is None
    assert 'osu_latency_mp' in osu_versions.defect('8.0b2', 'forked_processes')
    assert 'hangs' in osu_versions.program_defect('osu_latency_mt', '8.0b')
    assert osu_versions.program_defect('osu_latency_mt', '7.4') is None
    assert osu_versions.program_defect('osu_latency', '8.0b') is None
    assert osu_versions.program_defect('osu_latency_mt', None) is None


def test_a_hand_built_osu_9_is_read_from_its_titles_named_once_and_gets_no_M(tmp_path):
    """Synthetic tree: every program holds the title line '# OSU MPI Latency Test v9.0' (as a
    hand-built tree's binaries hold theirs) and the registry names no release."""
    osu = fake_osu_tree(tmp_path / 'osu')
    for exe in osu.rglob('osu_*'):
        exe.write_text('#!/bin/sh\n# OSU MPI Latency Test v9.0\nexit 0\n')
    registry = write_registry(tmp_path / 'environments.json', [
        {'name': 'site-openmpi', 'mpi_family': 'openmpi', 'mpi_version': '4.1.4',
         'osu_root': str(osu), 'source': 'system'}])
    out = run_reframe(tmp_path, '--system', 'local', '--dry-run', '-n', 'OsuPt2Pt|OsuCollective',
                      registry=registry)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert out.stdout.count('OSU 9.0 is newer than the releases the suite knows') == 1
    launches = [x for s in job_scripts(tmp_path).values() for x in s.splitlines()
                if './omb_rank.sh' in x]
    assert len(launches) > 5 and not any(' -M ' in x for x in launches)
    assert all(' -m :' in x for x in launches if '-m' in x.split())
    assert all('osu=9.0' in s for s in job_scripts(tmp_path).values() if 'omb-plan' in s)


def test_a_program_that_hangs_on_80_is_skipped_with_the_defects_words(tmp_path):
    """Synthetic registry: OSU '8.0b' over a fake tree; osu_latency_mt (threaded_receivers)
    is skipped before its job is written, osu_latency_persistent is not."""
    osu = fake_osu_tree(tmp_path / 'osu')
    registry = write_registry(tmp_path / 'environments.json', [
        {'name': 'site-openmpi', 'mpi_family': 'openmpi', 'mpi_version': '4.1.4',
         'osu_root': str(osu), 'osu_version': '8.0b', 'source': 'system'}])
    out = run_reframe(tmp_path, '--system', 'local', '--dry-run', '--mode', 'quick', '-n',
                      'osu_latency_mt|osu_latency_persistent', registry=registry,
                      checks=('explore/osu_pt2pt_more.py',))
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    skipped = [x for x in out.stdout.splitlines() if 'SKIP' in x]
    assert len(skipped) == 1 and 'osu_latency_mt' in skipped[0], out.stdout[-3000:]
    assert 'receiver threads together wait for twice the pings' in skipped[0]
    assert not any('/osu_latency_mt ' in s for s in job_scripts(tmp_path).values())
