"""Real outputs of every OSU 8.0b2 program family (tests/data/osu80): point-to-point, blocking,
non-blocking, persistent and neighbourhood collectives, one-sided, start-up, multi-pair,
congestion and the launchers. Each is read, or refused with the line that says why; the
datatype each printed is what data/osu_versions.yaml says 8.0 uses."""

from __future__ import annotations

import pytest
from testdata import REPO

from omb_suite.osu import catalogue
from omb_suite.osu import versions as osu_versions
from omb_suite.osu.parsing import launcher_summary, parse_osu_output, split_outputs

DATA = REPO / 'tests' / 'data' / 'osu80'
FILES = sorted(p.name for p in DATA.glob('cap80_*.txt'))
SINGLE = [n for n in FILES if '_omb_' not in n]

#: Outputs OSU 8.0b2 printed no whole table in, and what the refusal quotes (a pattern).
#: Open MPI 4.1.4 (cap80_ompi_*) unless named cap80_mpich_*.
REFUSED = {
    # Open MPI 4.1.4 has no MPI-4 persistent collectives or partitioned point-to-point: 8.0
    # builds those programs anyway, as stubs that only say so
    # builds those programs anyway, as stubs that only say so (which of the two lines comes
    # first is the ranks' race)
    **{f'cap80_ompi_osu_{c}_persistent_{s}.txt':
       'All persistent tests require _ENABLE_MPI4_|exited with 207: This test was not launched'
       for c, s in (('allgather', 'm1-1024'), ('allgatherv', 'm1-1024'),
                    ('alltoallw', 'm1-1024'), ('gather', 'm1-1024'), ('allreduce', 'm1-1024'),
                    ('alltoall', 'm1-1024'), ('alltoallv', 'm1-1024'), ('barrier', 'f'),
                    ('bcast', 'm1-1024'), ('gatherv', 'm1-1024'), ('reduce', 'm1-1024'),
                    ('reduce_scatter', 'm1-1024'), ('scatterv', 'm1-1024'))},
    'cap80_ompi_osu_partitioned_latency_m1-1024.txt':
        'This test requires _MPI4_PARTITION_PT2PT_|exited with 207',
    # 7.5 removed -M
    'cap80_ompi_osu_latency_M.txt': r'Invalid option \[-M\]',
    'cap80_ompi_osu_alltoall_M.txt': r'Invalid option \[-M\]',
    # the congestion programs want two nodes
    'cap80_ompi_osu_bw_fan_in_m1-1024.txt': 'exited with 206: Invalid processes count',
    'cap80_ompi_osu_bw_fan_out_m1-1024.txt': 'Please run this benchmark on more than 1 node',
    # --version prints the title and stops
    'cap80_ompi_osu_latency_version.txt': 'exited with 202: -v or --version was passed',
    # osu_latency_mp's forked processes end the Open MPI job ("exiting improperly")
    'cap80_ompi_osu_latency_mp_m1-1024.txt': 'exiting improperly',
    # 8.0b2's -z prints the percentiles on lines of their own: garbled rows
    'cap80_ompi_osu_latency_z.txt': 'garbled data row at line 6',
    # 8.0b2 misreads -m without a colon (data/osu_versions.yaml max_size_alone)
    'cap80_ompi_osu_latency_m16.txt': 'no data rows',
    'cap80_mpich_osu_latency_m16.txt': 'Segmentation fault',
    # MPICH 4.0.2
    'cap80_mpich_osu_latency_M.txt': r'Invalid option \[-M\]',
    'cap80_mpich_osu_bw_fan_in_m1-1024.txt': 'exited with 206: Invalid processes count',
    'cap80_mpich_osu_bw_fan_out_m1-1024.txt': 'exited with 206: Invalid processes count',
    'cap80_mpich_osu_latency_version.txt': 'exited with 202: -v or --version was passed',
    'cap80_mpich_osu_latency_mp_m1-1024.txt': 'no column header and no data rows',
}


def command(name: str) -> tuple[str, list[str]]:
    """The program and options of the run (its file's first line)."""
    words = (DATA / name).read_text().splitlines()[0].split()
    at = next(i for i, w in enumerate(words) if w.startswith('$OSU_'))
    return words[at].rsplit('/', 1)[1], words[at + 1:]


def test_every_refusal_listed_is_a_file_here():
    assert set(REFUSED) <= set(FILES)


@pytest.mark.parametrize('name', SINGLE)
def test_each_80_output_is_read_or_refused_with_its_line(name):
    text = (DATA / name).read_text()
    if name in REFUSED:
        with pytest.raises(Exception, match=REFUSED[name]):
            parse_osu_output(text)
        return
    table = parse_osu_output(text)
    assert table.version == '8.0b'
    program, options = command(name)
    assert table.rows, name
    if '-T' not in options and 'datatype' in table.meta:
        assert f"{table.meta['datatype']}" == osu_versions.default_datatype(program, '8.0b')


@pytest.mark.parametrize('name', ['cap80_ompi_osu_latency_mt_m1-1024.txt',
                                  'cap80_mpich_osu_latency_mt_m1-1024.txt',
                                  'cap80_mpich_osu_latency_z.txt'])
def test_a_run_that_printed_one_size_is_refused_for_the_sizes_it_lacks(name):
    """osu_latency_mt hung after size 1 (stopped by `timeout` after 120 s); 8.0b2's -z
    prints its percentiles on lines that are no rows."""
    _, options = command(name)
    hi = int(options[options.index('-m') + 1].split(':')[1])
    with pytest.raises(Exception, match='missing'):
        parse_osu_output((DATA / name).read_text(),
                         expect_sizes=[1 << n for n in range(hi.bit_length())])


def test_partitioned_latency_prints_the_non_blocking_table_from_its_partition_count():
    """MPICH 4.0.2 has MPI-4 partitioned point-to-point: -m 1:1024 runs 8 B (one byte per
    default partition) to 1024 B, with the non-blocking columns (catalogue metrics)."""
    name = 'cap80_mpich_osu_partitioned_latency_m1-1024.txt'
    table = parse_osu_output((DATA / name).read_text(),
                             expect_sizes=[8 << n for n in range(8)])
    assert table.meta['partitions'] == '8' and table.sizes()[0] == 8
    assert set(catalogue.get('osu_partitioned_latency').metrics) <= set(table.columns)
    one = parse_osu_output((DATA / 'cap80_mpich_osu_partitioned_latency_q1_m1-64.txt').read_text())
    assert one.meta['partitions'] == '1' and one.sizes() == [1 << n for n in range(7)]


def test_the_reductions_print_mpi_int_and_start_at_4_bytes():
    for program in ('osu_allreduce', 'osu_reduce', 'osu_reduce_scatter',
                    'osu_reduce_scatter_block', 'osu_iallreduce', 'osu_ireduce',
                    'osu_ireduce_scatter', 'osu_ireduce_scatter_block'):
        table = parse_osu_output((DATA / f'cap80_ompi_{program}_m1-1024.txt').read_text())
        assert table.meta['datatype'] == 'MPI_INT' and table.sizes()[0] == 4, program
    char = parse_osu_output((DATA / 'cap80_ompi_osu_allreduce_T_mpi_char.txt').read_text())
    assert char.meta['datatype'] == osu_versions.reduction_char('8.0b') == 'MPI_SIGNED_CHAR'


def test_iteration_buckets_run_the_third_count_up_to_the_size_and_the_second_above():
    """-i 8192:200:20 on osu_allreduce -f: 20 iterations up to 8 KiB, 200 above."""
    table = parse_osu_output((DATA / 'cap80_ompi_osu_allreduce_buckets_f.txt').read_text())
    counts = table.column('iterations')
    assert {counts[s] for s in counts if s <= 8192} == {20}
    assert {counts[s] for s in counts if s > 8192} == {200}
    assert osu_versions.fact('iteration_buckets')['order'] == ['size', 'above', 'up_to']


def test_the_launchers_tables_are_split_and_read_and_their_summary_names_what_did_not_run():
    text = (DATA / 'cap80_ompi_omb_coll_m1-64.txt').read_text()
    outputs = split_outputs(text)
    read, refused = [], []
    for output in outputs:
        try:
            read.append(output.parse())
        except Exception as err:
            refused.append(str(err))
    # 8.0b2's launcher passes -m to the barriers too: one size-less row per size, refused
    assert len(refused) == 2 and all('size 0 appears twice' in r for r in refused)
    assert len(read) == len(outputs) - 2 == 38
    summary = launcher_summary(text)
    persistent = [n for n in catalogue.names('collective') if n.endswith('_persistent')]
    assert {e.test for e in summary} == set(persistent) - {'osu_scatter_persistent'}
    assert all(e.section == 'not launched' for e in summary)
    assert str(summary[0]) == ('osu_allgather_persistent: not launched by OSU\'s launcher '
                               '(All persistent tests require _ENABLE_MPI4_)')


def test_a_launcher_killed_by_one_of_its_programs_reads_the_tables_before():
    """omb_pt2pt with Open MPI: osu_latency_mp's forked processes end the whole launch."""
    outputs = split_outputs((DATA / 'cap80_ompi_omb_pt2pt_m1-64.txt').read_text())
    titles = [o.parse().title for o in outputs[:-1]]
    assert 'OSU MPI Latency Test Test' in titles and len(titles) == 8
    with pytest.raises(Exception, match='exiting improperly'):
        outputs[-1].parse()


def test_colour_sequences_are_removed_before_reading():
    """FORCE_COLOR=1: 8.0b2 colours its launcher's summary (stderr), not the tables."""
    text = (DATA / 'cap80_ompi_omb_coll_subset_color.txt').read_text()
    assert '\x1b[34m1 test(s) were not launched:' in text
    outputs = split_outputs(text)
    assert [o.parse().title for o in outputs[:2]] == [
        'OSU MPI Allreduce Latency Test', 'OSU MPI Broadcast Latency Test']
    with pytest.raises(Exception, match='size 0 appears twice'):
        outputs[2].parse()  # the launcher's -m makes its barrier print one row per size
    (entry,) = launcher_summary(text)
    assert (entry.test, entry.status) == ('osu_bcast_persistent',
                                          'All persistent tests require _ENABLE_MPI4_')


def test_a_largest_size_without_colon_runs_no_size_in_80_and_with_colon_all():
    """data/osu_versions.yaml max_size_alone: 8.0b2 -m 16 prints no row, -m :16 five."""
    with pytest.raises(Exception, match='no data rows'):
        parse_osu_output((DATA / 'cap80_ompi_osu_latency_m16.txt').read_text())
    table = parse_osu_output((DATA / 'cap80_ompi_osu_latency_m_colon16.txt').read_text())
    assert table.sizes() == [1, 2, 4, 8, 16]
    assert not osu_versions.supports('8.0b', 'max_size_alone')
    assert osu_versions.supports('7.4', 'max_size_alone')


def test_the_comma_list_of_iteration_buckets_runs_its_last_count_at_every_size():
    """-i 1024:300,8192:50,65536:7 in 8.0b2: 7 everywhere (the suite never writes it)."""
    table = parse_osu_output((DATA / 'cap80_ompi_osu_allreduce_bucket_list_f.txt').read_text())
    assert set(table.column('iterations').values()) == {7}


def test_a_warmup_count_after_the_iterations_sets_the_iterations_in_80():
    """-i 20 -x 2 ran 2 timed iterations, -x 2 -i 20 ran 20: the suite writes -x first."""
    def iterations(name: str) -> set[int]:
        table = parse_osu_output((DATA / name).read_text())
        return set(table.column('iterations').values())
    assert iterations('cap80_ompi_osu_allreduce_f_i20_x2.txt') == {2}
    assert iterations('cap80_ompi_osu_allreduce_f_x2_i20.txt') == {20}
    assert osu_versions.fact('iteration_buckets')['x_before_i'] is True
