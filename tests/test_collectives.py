"""Collective checks: cases, job shapes, real collective outputs, the algorithm tables against
the installed Debian MPIs, dry runs (exact environment per family and algorithm) and, when OSU
is present, real runs on `local`.

Outputs under tests/data/collectives/ are real runs (see its README.md).
"""

from __future__ import annotations

import os
import shutil
from functools import partial
from pathlib import Path

import pytest
import rfm_helpers
from rfm_helpers import fake_osu_tree, job_scripts, two_family_registry, write_registry
from testdata import real_output

from omb_suite import algorithms as alg
from omb_suite import collectives as coll
from omb_suite import parsing, probe

#: Only the check files these tests need (loading all of them takes much longer).
run_reframe = partial(rfm_helpers.run_reframe, checks=('osu_collectives.py',))

DATA = Path(__file__).parent / 'data' / 'collectives'
LOCAL_LIBS = frozenset({('openmpi', '4.1.4'), ('mpich', '4.0.2')})
OMPI_EXCLUDE = 'OMPI_MCA_coll=^han,hcoll,ucc,xhc,acoll,adapt,sm,portals4,fca'
BLOCKING = ['osu_allgather', 'osu_allgatherv', 'osu_allreduce', 'osu_alltoall', 'osu_alltoallv',
            'osu_alltoallw', 'osu_barrier', 'osu_bcast', 'osu_gather', 'osu_gatherv',
            'osu_reduce', 'osu_reduce_scatter', 'osu_reduce_scatter_block', 'osu_scatter',
            'osu_scatterv']


def output(name: str) -> str:
    return real_output(DATA / name)


# ---------------------------------------------------------------- cases


def test_every_osu_74_collective_is_a_check():
    assert coll.collective_benchmarks(nonblocking=False) == BLOCKING
    assert coll.collective_benchmarks(nonblocking=True) == [
        'osu_i' + name.removeprefix('osu_') for name in BLOCKING]


def test_bcast_cases_are_the_libraries_algorithms_by_name():
    names = [a for b, a in coll.cases(['osu_bcast'], LOCAL_LIBS)]
    assert names == ['default', 'binomial', 'nb', 'smp', 'scatter_recursive_doubling_allgather',
                     'scatter_ring_allgather', 'basic_linear', 'chain', 'pipeline',
                     'split_binary_tree', 'binary_tree', 'knomial', 'scatter_allgather',
                     'scatter_allgather_ring']
    assert not any(name.isdigit() for name in names)
    # MPICH 4.1's pipelined_tree is no case when the system has MPICH 4.0.2 only
    assert 'pipelined_tree' in coll.offered_by('bcast')
    assert 'pipelined_tree' not in coll.offered_by('bcast', LOCAL_LIBS)


def test_library_of_unknown_version_offers_every_block_of_its_table():
    assert 'sparbit' in coll.offered_by('allgather', frozenset({('openmpi', None)}))
    assert 'sparbit' not in coll.offered_by('allgather', frozenset({('openmpi', '4.1.4')}))


def test_a_case_runs_only_in_environments_of_families_that_name_it():
    assert coll.environ_features('osu_bcast', 'default') == ['+mpi +osu']
    assert coll.environ_features('osu_bcast', 'chain') == ['+openmpi +osu']
    assert coll.environ_features('osu_bcast', 'binomial') == [
        '+mpich +osu', '+mvapich +osu', '+mvapich2 +osu', '+openmpi +osu']
    assert coll.case_name(('osu_bcast', 'chain')) == 'osu_bcast/chain'


# ---------------------------------------------------------------- scale and mapping

LOCAL = coll.PartitionSize(nodes=1, cores_per_node=2, sockets=1)
CLUSTER = coll.PartitionSize(nodes=64, cores_per_node=128, sockets=2)


def test_scales_and_mappings_are_what_the_partitions_can_hold():
    assert coll.scales_for([LOCAL]) == ['2', '4']            # 4: oversubscribed
    assert coll.scales_for([LOCAL, CLUSTER])[-1] == '8192'
    assert coll.mappings_for([LOCAL]) == ['core']
    assert coll.mappings_for([LOCAL, CLUSTER]) == ['core', 'socket', 'node']


@pytest.mark.parametrize(('ranks', 'mapping', 'size', 'over', 'shape'), [
    (2, 'core', LOCAL, 1, coll.Shape(2, 1)),
    (4, 'core', LOCAL, 2, coll.Shape(4, 1)),
    (256, 'core', CLUSTER, 1, coll.Shape(256, 2)),
    (4, 'node', CLUSTER, 1, coll.Shape(4, 2)),
    (256, 'socket', CLUSTER, 1, coll.Shape(256, 2)),
])
def test_job_shape(ranks, mapping, size, over, shape):
    got = coll.job_shape(ranks, mapping, nodes=size.nodes, cores_per_node=size.cores_per_node,
                         sockets=size.sockets, oversubscribe=over)
    assert got == shape and got.tasks_per_node == -(-ranks // shape.num_nodes)


@pytest.mark.parametrize(('ranks', 'mapping', 'why'), [
    (4, 'core', '4 ranks mapped by core need 2 nodes of 2 cores (oversubscribe=1) but the '
                'partition has 1'),
    (2, 'node', '2 ranks mapped by node need 2 nodes'),
    (2, 'socket', "mapping 'socket' needs 2 sockets per node but the partition has 1"),
    (2, 'diagonal', "unknown mapping 'diagonal'; known: core, socket, node"),
])
def test_job_shape_says_why_not(ranks, mapping, why):
    got = coll.job_shape(ranks, mapping, nodes=1, cores_per_node=2, sockets=1)
    assert isinstance(got, str) and got.startswith(why)


def test_oversubscription_options_per_launcher():
    ompi = ['--map-by', 'core', '--bind-to', 'core']
    assert coll.oversubscribe_options(ompi, 'ompi') == [
        '--oversubscribe', '--map-by', 'core', '--bind-to', 'core:overload-allowed']
    assert coll.oversubscribe_options(['-bind-to', 'core'], 'hydra') == ['-bind-to', 'core']
    assert coll.oversubscribe_options(['--cpu-bind=cores'], 'srun') == [
        '--overcommit', '--cpu-bind=cores']


def test_probe_check_counts_ranks_and_refuses_shared_cpus_unless_oversubscribed():
    places = probe.parse_probe(output('probe_ompi_4ranks_oversubscribed.txt'))
    coll.check_ranks(places, coll.Shape(4, 1), oversubscribed=True)
    with pytest.raises(probe.ProbeError, match='ranks 0 and 2 are both bound to CPU 0 of vm'):
        coll.check_ranks(places, coll.Shape(4, 1), oversubscribed=False)
    with pytest.raises(probe.ProbeError, match='expected 8 ranks, the probe saw 4'):
        coll.check_ranks(places, coll.Shape(8, 1), oversubscribed=True)
    with pytest.raises(probe.ProbeError, match='expected ranks on 2 nodes, they run on 1'):
        coll.check_ranks(places, coll.Shape(4, 2), oversubscribed=True)


# ---------------------------------------------------------------- real outputs


def test_forced_bcast_parses_through_open_mpi_evidence_noise():
    text = output('ompi_bcast_knomial_f_m1-1024.txt')
    table = parsing.parse_osu_output(text, expect_sizes=parsing.expected_sizes(1, 1024))
    assert table.columns == ('size', 'avg_latency', 'min_latency', 'max_latency', 'iterations')
    assert table.value('avg_latency', 8) > 0 and table.value('iterations', 1024) == 100
    assert alg.check_evidence('openmpi', 'bcast', 'knomial', text) == 'tuned:bcast:knomial'
    with pytest.raises(alg.EvidenceError, match='coll_tuned_bcast_algorithm=knomial, not chain'):
        alg.check_evidence('openmpi', 'bcast', 'chain', text)


def test_nonblocking_reduction_with_int_datatype():
    text = output('ompi_iallreduce_ring_f_T_int_m1-1024.txt')
    sizes = parsing.expected_sizes(1, 1024, datatype_size=4)
    table = parsing.parse_osu_output(text, expect_sizes=sizes)
    assert table.sizes() == sizes and sizes[0] == 4
    for column in ('overall', 'compute', 'pure_comm', 'overlap'):
        assert column in table.columns
    assert alg.check_evidence('openmpi', 'iallreduce', 'ring', text) == 'libnbc:iallreduce:ring'


def test_mpich_nonblocking_forced_algorithm():
    text = output('mpich_ibcast_tsp_ring_f_m1-1024.txt')
    assert parsing.parse_osu_output(text).value('overall', 1024) > 0
    assert alg.check_evidence('mpich', 'ibcast', 'tsp_ring', text) == 'mpir:ibcast:tsp_ring'


@pytest.mark.parametrize(('name', 'columns'), [
    ('ompi_barrier_f_default.txt', ('avg_latency', 'min_latency', 'max_latency')),
    ('ompi_ibarrier_f.txt', ('overall', 'compute', 'pure_comm', 'overlap')),
])
def test_barriers_have_one_sizeless_row_reported_as_curve_figures(name, columns):
    table = parsing.parse_osu_output(output(name))
    bench = 'osu_' + name.split('_')[1]
    info = coll.benchmarks.get(bench)
    assert table.sizes() == [] and not coll.takes_data_options(bench)
    assert set(info.curve) == set(columns)
    for figure, (column, _) in info.curve.items():
        assert figure == column and table.value(column) >= 0


def test_validation_of_char_sums_is_broken_in_osu_74_so_reductions_use_int():
    with pytest.raises(parsing.OsuParseError, match=r'data validation failed for sizes 16'):
        parsing.parse_osu_output(output('ompi_reduce_c_char_m1-64.txt'), require_validation=True)
    table = parsing.parse_osu_output(output('ompi_reduce_c_T_int_m1-64.txt'),
                                     expect_sizes=parsing.expected_sizes(1, 64, datatype_size=4),
                                     require_validation=True)
    assert {row['validation'] for row in table.rows} == {'Pass'}


def test_algorithm_that_cannot_apply_is_a_clear_failure():
    text = output('mpich_iallreduce_sched_rsag_not_usable.txt')
    with pytest.raises(alg.EvidenceError, match='could not apply iallreduce algorithm'):
        alg.check_evidence('mpich', 'iallreduce', 'sched_reduce_scatter_allgather', text)
    with pytest.raises(parsing.OsuParseError, match='Fatal error in internal_Iallreduce'):
        parsing.parse_osu_output(text)


# ---------------------------------------------------------------- installed Debian MPIs


def _installed_check(family: str, tool: str) -> None:
    path = os.environ.get('PATH', '')
    if not shutil.which(tool):
        pytest.skip(f'{tool} not found: Debian {family} is not installed')
    version = coll.library_version(family, path)
    offered = coll.installed(family, path)
    assert version and offered, (version, offered)
    for bench in BLOCKING + coll.collective_benchmarks(nonblocking=True):
        collective = coll.collective_of(bench)
        for name in alg.algorithms(family, version, collective)[1:]:
            assert alg.unsupported_reason(family, version, collective, name, offered) is None


def test_open_mpi_table_matches_installed_library():
    _installed_check('openmpi', 'ompi_info')


def test_mpich_table_matches_installed_library():
    _installed_check('mpich', 'mpivars')


# ---------------------------------------------------------------- dry runs


@pytest.fixture
def registry(tmp_path):
    return two_family_registry(tmp_path)


def _exports(script: str) -> list[str]:
    return [line.removeprefix('export ') for line in script.splitlines()
            if line.startswith(('export OMPI_MCA', 'export MPIR_CVAR'))]


def _scripts(tmp: Path, env: str, program: str) -> list[str]:
    return [s for k, s in job_scripts(tmp).items()
            if k.startswith(f'local/default/{env}/') and f'/{program} ' in s]


def test_dry_run_sets_exact_environment_per_family_and_algorithm(tmp_path, registry):
    out = run_reframe(tmp_path, '--system', 'local', '--dry-run', '-n',
                      r'osu_(bcast/(default|chain|binomial)|reduce/default|ibcast/knomial)%',
                      '-E', "scale=='2'", '-S', 'iterations=100', '-S', 'warmup=10',
                      '-S', 'max_size=1024', registry=registry)
    assert out.returncode == 0, out.stdout + out.stderr
    evidence = ['OMPI_MCA_coll_base_verbose=9', 'OMPI_MCA_mpi_show_mca_params=enviro']
    assert sorted(_exports(s) for s in _scripts(tmp_path, 'test-openmpi', 'osu_bcast')) == [
        [OMPI_EXCLUDE, 'OMPI_MCA_coll_tuned_use_dynamic_rules=1',
         'OMPI_MCA_coll_tuned_bcast_algorithm=2', *evidence],          # chain
        [OMPI_EXCLUDE, 'OMPI_MCA_coll_tuned_use_dynamic_rules=1',
         'OMPI_MCA_coll_tuned_bcast_algorithm=6', *evidence],          # binomial
        evidence]                                                      # default
    (ibcast,) = _scripts(tmp_path, 'test-openmpi', 'osu_ibcast')
    assert _exports(ibcast) == [OMPI_EXCLUDE, 'OMPI_MCA_coll_libnbc_ibcast_algorithm=4',
                                *evidence]
    # MPICH has no 'chain': that case is not generated for it
    assert sorted(_exports(s) for s in _scripts(tmp_path, 'test-mpich', 'osu_bcast')) == [
        [], ['MPIR_CVAR_BCAST_INTRA_ALGORITHM=binomial', 'MPIR_CVAR_DEVICE_COLLECTIVES=none',
             'MPIR_CVAR_COLLECTIVE_FALLBACK=error']]
    (reduce,) = _scripts(tmp_path, 'test-openmpi', 'osu_reduce')
    assert _exports(reduce) == evidence
    launch = 'mpirun -np 2 --map-by core --bind-to core '
    lines = reduce.splitlines()
    assert lines[-1].startswith(launch)
    assert lines[-1].endswith('osu_reduce -f -T mpi_int -m 1024 -x 10 -i 100')
    check = next(x for x in lines if x.endswith('> validation.out 2>&1'))
    assert check.startswith(launch) and ' -m 1024 -x 10 -i 100 -c -x 2 -i 10 > ' in check


def test_dry_run_every_mpich_bcast_algorithm(tmp_path, registry):
    out = run_reframe(tmp_path, '--system', 'local', '--dry-run', '-n', r'osu_bcast/',
                      '-p', 'test-mpich', '-E', "scale=='2'", registry=registry)
    assert out.returncode == 0, out.stdout + out.stderr
    forced = sorted(next(x for x in s.splitlines() if 'BCAST_INTRA_ALGORITHM' in x)
                    for s in job_scripts(tmp_path).values() if 'BCAST_INTRA_ALGORITHM' in s)
    assert forced == [f'export MPIR_CVAR_BCAST_INTRA_ALGORITHM={name}' for name in
                      sorted(alg.algorithms('mpich', '4.0.2', 'bcast')[1:])]


def test_dry_run_oversubscribed_four_ranks(tmp_path, registry):
    out = run_reframe(tmp_path, '--system', 'local', '--dry-run', '-n', 'osu_barrier/default',
                      '-p', 'test-openmpi', '-S', 'oversubscribe=2', '-E', "scale=='4'",
                      registry=registry)
    assert out.returncode == 0, out.stdout + out.stderr
    (script,) = [s for s in job_scripts(tmp_path).values() if 'osu_barrier' in s]
    lines = script.splitlines()
    assert 'export OMPI_MCA_mpi_yield_when_idle=1' in lines
    assert lines[-1].startswith('mpirun -np 4 --oversubscribe --map-by core --bind-to '
                                'core:overload-allowed ')
    assert lines[-1].endswith('osu_barrier -f') and 'validation.out' not in script


def test_table_algorithm_the_installed_library_lacks_is_skipped_naming_it(tmp_path):
    if not shutil.which('ompi_info'):
        pytest.skip('ompi_info not found: Debian Open MPI is not installed')
    osu = fake_osu_tree(tmp_path / 'osu')
    registry = write_registry(tmp_path / 'environments.json', [
        {'name': 'claims-5', 'mpi_family': 'openmpi', 'mpi_version': '5.0.3',
         'osu_root': str(osu), 'source': 'system'}])
    out = run_reframe(tmp_path, '--system', 'local', '--dry-run', '-n',
                      'osu_allgather/sparbit', '-E', "scale=='2'", registry=registry)
    assert out.returncode == 0, out.stdout + out.stderr
    assert ("Open MPI 5.0.3 (installed) has no allgather algorithm 'sparbit' (it offers: "
            "linear, bruck, recursive_doubling, ring, neighbor, two_proc); not run") in out.stdout


def test_unknown_datatype_is_a_clear_error(tmp_path, registry):
    out = run_reframe(tmp_path, '--system', 'local', '--dry-run', '-n', 'osu_bcast/default',
                      '-p', 'test-openmpi', '-E', "scale=='2'", '-S', 'datatype=mpi_double',
                      registry=registry)
    assert out.returncode != 0
    assert "datatype 'mpi_double' is not an OSU -T datatype" in out.stdout


# ---------------------------------------------------------------- real runs on local

OSU_OPENMPI = os.environ.get('OSU_ROOT')
needs_osu = pytest.mark.skipif(
    not (shutil.which('ompi_info') and OSU_OPENMPI and Path(OSU_OPENMPI).is_dir()),
    reason='needs Debian Open MPI and OSU_ROOT=<OSU 7.x prefix built with it> (docs/spack.md)')
SHORT = ('-S', 'iterations=100', '-S', 'warmup=10')


def _run_local(tmp: Path, *args: str):
    registry = write_registry(tmp / 'environments.json', [
        {'name': 'system-openmpi', 'mpi_family': 'openmpi', 'osu_root': OSU_OPENMPI,
         'source': 'system'}])
    return run_reframe(tmp, '--system', 'local', *SHORT, *args, '-r', registry=registry)


def _perflog(tmp: Path, test: str) -> list[dict[str, str]]:
    header, *rows = (tmp / 'results/local/default' / f'{test}.log').read_text().splitlines()
    return [dict(zip(header.split('|'), row.split('|'), strict=True)) for row in rows]


@pytest.mark.e2e
@needs_osu
def test_every_open_mpi_bcast_algorithm_runs_with_evidence(tmp_path):
    out = _run_local(tmp_path, '-n', 'osu_bcast/', '-E', "scale=='2'", '-S', 'max_size=65536')
    assert out.returncode == 0, out.stdout + out.stderr
    rows = [r for r in _perflog(tmp_path, 'OsuCollective') if r['perf_var'] == 'avg_latency_8']
    assert sorted(r['algorithm'] for r in rows) == sorted(
        alg.algorithms('openmpi', rows[0]['mpi_version'], 'bcast'))
    for row in rows:
        assert row['result'] == 'pass' and row['num_tasks'] == '2' and row['mapping'] == 'core'
        assert row['algorithm_evidence'] == f"tuned:bcast:{row['algorithm']}"
        assert 0 < float(row['perf_value']) < 1000 and row['perf_unit'] == 'us'


@pytest.mark.e2e
@needs_osu
def test_four_ranks_oversubscribed_blocking_and_nonblocking(tmp_path):
    out = _run_local(tmp_path, '-n', 'osu_(allreduce|ibcast|barrier)/default%', '-E',
                     "scale=='4'", '-S', 'oversubscribe=2', '-S', 'max_size=1024')
    assert out.returncode == 0, out.stdout + out.stderr
    blocking = {r['perf_var']: r for r in _perflog(tmp_path, 'OsuCollective')}
    assert blocking['avg_latency_8']['num_tasks'] == '4'
    assert blocking['avg_latency_8']['placement_observed'].count(';') == 3
    assert 'avg_latency_1' not in blocking            # allreduce runs MPI_INT: from 4 bytes
    assert {'avg_latency', 'min_latency', 'max_latency'} <= set(blocking)   # barrier
    nonblocking = {r['perf_var'] for r in _perflog(tmp_path, 'OsuNonBlockingCollective')}
    assert {'overall_1024', 'compute_1024', 'pure_comm_1024', 'overlap_1024'} <= nonblocking


@pytest.mark.e2e
@needs_osu
def test_wrong_results_fail_the_check(tmp_path):
    out = _run_local(tmp_path, '-n', 'osu_reduce/default%', '-E', "scale=='2'",
                     '-S', 'max_size=64', '-S', 'datatype=mpi_char')
    assert out.returncode != 0
    assert ("osu_reduce algorithm 'default' failed its correctness run (-c, validation.out): "
            "OSU MPI Reduce Latency Test: missing sizes [32, 64]") in out.stdout
    assert 'data validation failed for sizes 16' in out.stdout
