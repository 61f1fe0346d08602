"""The OSU catalogue against what OSU 7.4 really installs: a real install tree when one is
named ($OSU_ROOT, $OSU_ROOT_MPICH), and the committed listings of 7.4's programs
(tests/data/osu-programs/osu74_*.txt: `find libexec/osu-micro-benchmarks/mpi -name 'osu_*'`
of the hand-built OSU 7.4 with Debian MPICH 4.0.2, 77 programs, and Open MPI 4.1.4, 63) and
of 8.0b2's (osu80b2_programs.txt: the same 77 lines with either MPI, as 8.0 builds stubs)."""

from __future__ import annotations

from pathlib import Path

import pytest
from rfm_helpers import osu_root
from testdata import DATA, REPO

from omb_suite.osu import binaries, catalogue, versions


def listing(name: str) -> dict[str, str]:
    """Program -> install group from a committed listing ('./pt2pt/persistent/osu_bw_...')."""
    paths = (DATA / 'osu-programs' / name).read_text().split()
    return {Path(p).name: str(Path(p).parent).removeprefix('./') for p in paths}


MPICH_74 = listing('osu74_programs_mpich.txt')
OPENMPI_74 = listing('osu74_programs_openmpi.txt')
OSU_80B2 = listing('osu80b2_programs.txt')


def test_catalogue_is_every_program_osu_74_installs_with_mpi_4():
    assert len(MPICH_74) == 77
    assert {n: b.group for n, b in catalogue.catalogue().items()
            if b.missing_from('7.4') is None} == MPICH_74


def test_catalogue_is_every_program_osu_80b2_installs():
    # 8.0b2 lacks osu_scatter_persistent (data/osu_versions.yaml missing_programs) and
    # installs the persistent and congestion point-to-point programs in pt2pt/ itself
    assert len(OSU_80B2) == 77
    assert set(OSU_80B2) == {n for n, b in catalogue.catalogue().items()
                             if b.missing_from('8.0b2') is None
                             and not versions.lacks(n, '8.0b2')}
    assert set(OSU_80B2) - set(MPICH_74) == {'osu_partitioned_latency'}
    assert {n: versions.install_group(catalogue.get(n).group, '8.0b2')
            for n in OSU_80B2} == OSU_80B2
    assert {n: versions.install_group(catalogue.get(n).group, '7.4') for n in MPICH_74} == MPICH_74


def test_without_mpi_4_only_the_persistent_collectives_are_missing():
    missing = set(MPICH_74) - set(OPENMPI_74)
    assert len(OPENMPI_74) == 63 and len(missing) == 14
    assert {catalogue.get(n).needs for n in missing} == {'mpi-4 persistent collectives'}
    assert all(catalogue.get(n).needs is None for n in OPENMPI_74)


@pytest.mark.parametrize('var', ['OSU_ROOT', 'OSU_ROOT_MPICH'])
def test_catalogue_covers_a_real_install(var):
    root = osu_root(var)
    if not root:
        pytest.skip(f'{var} not set: compared with the committed 7.4 listings only')
    installed = binaries.list_benchmarks(root)
    assert set(installed) <= set(catalogue.catalogue())
    for name, path in installed.items():
        release = versions.banner_version(path)
        group = versions.install_group(catalogue.get(name).group, release)
        assert path.parent.as_posix().endswith(group), (name, release)


def test_every_program_has_a_check_kind_and_metrics_or_figures():
    kinds = {'pt2pt', 'multi_pair', 'multi_process', 'congestion', 'one_sided', 'startup',
             'collective', 'nonblocking'}
    for bench in catalogue.catalogue().values():
        assert bench.kind in kinds, bench.name
        assert bench.metrics or bench.curve or bench.name == 'osu_hello', bench.name


def test_neighbourhood_collectives_need_three_ranks_and_barriers_take_no_data():
    assert catalogue.get('osu_neighbor_allgather').min_ranks == 3
    assert catalogue.get('osu_ineighbor_alltoallw').nonblocking
    assert not catalogue.get('osu_barrier_persistent').data_options
    assert not catalogue.get('osu_ibarrier').has_sizes
    assert catalogue.get('osu_fop_latency').fixed_size


def test_one_sided_cases_are_only_what_osu_accepts():
    cases = catalogue.one_sided_cases()
    # OSU 7.4: 8 benchmarks accept 6 syncs, osu_put_bibw only pscw and fence; 3 windows each
    assert len(cases) == len(set(cases)) == (8 * 6 + 2) * 3
    assert {(w, s) for b, w, s in cases if b == 'osu_put_bibw'} == {
        (w, s) for w in ('create', 'allocate', 'dynamic') for s in ('pscw', 'fence')}
    assert catalogue.rma_syncs()['lock_all'] == 'MPI_Win_lock_all/unlock_all'


def test_verdict_set_names_catalogue_programs_of_its_kinds():
    for kind in ('pt2pt', 'collective', 'nonblocking', 'startup', 'multi_pair'):
        for name in catalogue.verdict(kind):
            assert catalogue.get(name).kind == kind, name
    assert {'osu_allreduce', 'osu_bcast', 'osu_alltoall', 'osu_allgather', 'osu_reduce',
            'osu_barrier'} <= set(catalogue.verdict('collective'))


def test_unknown_program_and_datatype_say_where_to_add_them():
    with pytest.raises(KeyError, match='add it there'):
        catalogue.get('osu_nonesuch')
    with pytest.raises(ValueError, match="'mpi_double' is not an OSU -T datatype"):
        catalogue.datatype_size('mpi_double')
    assert catalogue.datatype_size('') == 1 and catalogue.datatype_size('MPI_INT') == 4


def test_every_program_names_the_check_that_runs_it():
    assert catalogue.check_of('osu_latency') == 'OsuPt2Pt'
    assert catalogue.check_of('osu_latency_mt') == 'OsuPt2PtMore'
    assert catalogue.check_of('osu_allreduce') == 'OsuCollective'
    assert catalogue.check_of('osu_gather') == 'OsuCollectiveSweep'
    assert catalogue.check_of('osu_neighbor_alltoall') == 'OsuCollectiveSweep'
    assert catalogue.check_of('osu_iallreduce') == 'OsuNonBlockingCollective'
    assert catalogue.check_of('osu_put_latency') == 'OsuOneSided'
    assert catalogue.check_of('osu_hello') == 'OsuStartupSweep'
    checks = {catalogue.check_of(name) for name in catalogue.catalogue()}
    defined = {line.split('(')[0].removeprefix('class ')
               for path in (REPO / 'reframe' / 'checks').rglob('*.py')
               for line in path.read_text().splitlines() if line.startswith('class ')}
    assert checks <= defined, checks - defined


@pytest.mark.parametrize('name, version, missing', [
    ('osu_bw_fan_in', '7.3', True), ('osu_bw_fan_in', '7.4', False),
    ('osu_latency_persistent', '7.1-1', False), ('osu_latency_persistent', '7.0.1', True),
    ('osu_alltoallw', '6.2', False), ('osu_latency', None, False),
    ('osu_partitioned_latency', '7.4', True), ('osu_partitioned_latency', '7.5', False)])
def test_program_newer_than_the_installed_osu_is_known_missing(name, version, missing):
    reason = catalogue.get(name).missing_from(version)
    assert (reason is not None) == missing
    if missing:
        assert f'OSU {version} has no {name}' in reason
