"""OSU's own limits (data/osu_limits.yaml, read from OSU 7.3's sources): the sizes it really
runs at a rank count, the -M the suite passes, its loops and the rank counts it refuses."""

from __future__ import annotations

import pytest
from testdata import DATA

from omb_suite.osu import catalogue
from omb_suite.osu import limits as osu_limits
from omb_suite.osu.parsing import parse_osu_output

MiB = 2**20


def plan(bench='osu_alltoall', ranks=2, hi=MiB, *, user=None, per_node=2, memory=None,
         osu='7.4'):
    return osu_limits.plan_sweep(bench, ranks, 1, hi, user_mem_limit=user,
                                 ranks_per_node=per_node, node_memory=memory, osu_version=osu)


def test_every_collective_of_the_catalogue_has_a_cap_rule():
    for name in catalogue.names(*catalogue.COLLECTIVE_KINDS):
        assert osu_limits.cap_kind(name) in ('per_rank', 'total', 'none'), name


@pytest.mark.parametrize('bench, base, kind', [
    ('osu_alltoall', 'alltoall', 'per_rank'), ('osu_iallgatherv', 'allgatherv', 'per_rank'),
    ('osu_gather_persistent', 'gather', 'per_rank'),
    ('osu_ineighbor_alltoallw', 'neighbor_alltoallw', 'per_rank'),
    ('osu_allreduce', 'allreduce', 'total'), ('osu_ibcast', 'bcast', 'total'),
    ('osu_barrier', 'barrier', 'none'), ('osu_latency', 'latency', 'none')])
def test_the_check_mem_limit_branch_of_each_program(bench, base, kind):
    assert osu_limits.base_name(bench) == base
    assert osu_limits.cap_kind(bench) == kind


def test_the_2_rank_reproduction_stops_at_512_KiB_and_says_why():
    """-S extra_opts=-M,1048576 on osu_alltoall at 2 ranks: OSU runs up to 512 KiB."""
    got = plan(user=osu_limits.mem_limit_in(['-M', '1048576']))
    assert got.sizes[-1] == 512 * 1024 and got.not_measured == [MiB]
    assert got.mem_limit is None
    assert '-M 1048576 / 2 ranks' in got.reason and 'command line' in got.reason


def test_1024_ranks_without_declared_memory_keep_osus_default_and_report_the_cap():
    got = plan(ranks=1024, per_node=128)
    assert got.sizes[-1] == 512 * 1024 and got.not_measured == [MiB]
    assert 'memory_per_node_gib' in got.reason


def test_declared_memory_raises_M_as_far_as_the_node_allows_and_never_beyond():
    enough = plan(ranks=1024, per_node=128, memory=2048 * 2**30)
    assert enough.mem_limit == 1024 * MiB and enough.not_measured == []
    short = plan(ranks=1024, per_node=128, memory=512 * 2**30)
    assert short.not_measured == [MiB] and 'would not fit 512 GiB' in short.reason
    for got in (enough, short):
        top = osu_limits.largest_size('osu_alltoall', 1024, MiB, got.mem_limit)
        assert osu_limits.node_bytes('osu_alltoall', 1024, 128, top) <= 0.5 * (
            2048 if got is enough else 512) * 2**30


def test_a_node_too_small_for_osus_default_gets_a_lower_M():
    got = plan(ranks=1024, per_node=128, memory=128 * 2**30)
    assert got.mem_limit is not None and got.mem_limit < osu_limits.default_mem_limit()
    assert got.not_measured[0] < MiB


def test_total_kinds_are_capped_by_M_itself_and_M_below_1_MiB_is_raised_by_osu():
    assert osu_limits.largest_size('osu_allreduce', 4096, 64 * MiB, None) == 64 * MiB
    assert osu_limits.largest_size('osu_allreduce', 2, 4 * MiB, 2 * MiB) == 2 * MiB
    assert osu_limits.largest_size('osu_alltoall', 2, MiB, 1000) == MiB // 2


def test_the_M_of_a_command_line():
    assert osu_limits.mem_limit_in(['-f', '-M', '5', '--mem-limit=7']) == 7
    assert osu_limits.mem_limit_in(['-M8']) == 8 and osu_limits.mem_limit_in(['-f']) is None
    with pytest.raises(ValueError, match='not a number'):
        osu_limits.mem_limit_in(['-M', 'lots'])


def test_the_caps_rank_0_announced_in_real_osu_7_3_runs():
    """Real runs (tests/data/osu/cap73_*): the per-rank branch prints the new largest size;
    the total branch prints the size asked for, glued to the table, and stops at -M."""
    alltoall = (DATA / 'osu' / 'cap73_ompi_osu_alltoall_f_M1048576_np2.txt').read_text()
    assert osu_limits.announced_cap('osu_alltoall', alltoall, MiB) == 512 * 1024
    assert parse_osu_output(alltoall).sizes()[-1] == 512 * 1024
    allreduce = (DATA / 'osu' / 'cap73_ompi_osu_allreduce_f_m2097152_M1048576_np2.txt')
    text = allreduce.read_text()
    assert '2097152Increase' in text
    assert osu_limits.announced_cap('osu_allreduce', text, MiB) == MiB
    assert osu_limits.largest_size('osu_allreduce', 2, 2 * MiB, MiB) == MiB
    assert osu_limits.announced_cap('osu_alltoall', '# OSU MPI', None) is None


def test_osu_switches_to_its_large_counts_above_8_KiB_and_x_i_set_both():
    assert osu_limits.loop('osu_alltoall', [8192, 16384]) == [(8192, 100, 1000),
                                                              (16384, 10, 100)]
    assert osu_limits.loop('osu_latency', [1, 16384]) == [(1, 100, 10000), (16384, 10, 1000)]
    assert osu_limits.loop('osu_bw', [1, 16384]) == [(1, 10, 100), (16384, 2, 20)]
    assert osu_limits.loop('osu_bcast', [1, MiB], 5, 50) == [(1, 5, 50), (MiB, 5, 50)]
    assert osu_limits.loop('osu_init', [1]) == []



@pytest.mark.parametrize(('benchmark', 'version', 'large_at_8192'), [
    ('osu_latency', '8.0b', True), ('osu_multi_lat', '8.0', True),
    ('osu_latency_mt', '8.0b2', True), ('osu_latency_mp', '8.0', True),
    ('osu_latency', '7.3', False), ('osu_latency', '7.4', False), ('osu_latency', None, False),
    ('osu_bw', '8.0b', False), ('osu_allreduce', '8.0b', False),
    ('osu_put_latency', '8.0b', False), ('osu_partitioned_latency', '8.0b', True)])
def test_osu_8_point_to_point_latency_takes_8192_itself_as_large(benchmark, version,
                                                                 large_at_8192):
    """OSU 8.0b2's pt2pt_entry.c (``msg_bytes >= LARGE_MESSAGE_SIZE`` for its latency
    programs; one-sided and collectives have their own loops); the real counted runs are
    tests/test_iterations.py's."""
    assert osu_limits.large_message_size() == 8192
    assert osu_limits.is_large(8192, benchmark, version) is large_at_8192
    assert not osu_limits.is_large(4096, benchmark, version)
    assert osu_limits.is_large(16384, benchmark, version)
    counts = [n for _, _, n in osu_limits.loop(benchmark, [4096, 8192], osu_version=version)]
    assert (counts[0] != counts[1]) is large_at_8192

def test_osu_partitioned_latency_runs_no_size_below_one_byte_per_partition():
    """8.0b2 cuts each size into -q partitions (default 8) and skips a size that gives a
    partition no element (omb_pt2pt_core.c); run: its sweep starts at 8 B, with -q 1 at 1 B
    (tests/data/osu80/cap80_mpich_osu_partitioned_latency_*.txt)."""
    name = 'osu_partitioned_latency'
    assert osu_limits.partitions(name, []) == 8
    assert osu_limits.partitions(name, ['-q', '4', '--partitions=2']) == 2
    assert osu_limits.partitions(name, ['-q1']) == 1
    assert osu_limits.partitions('osu_latency', ['-q', '4']) == 1
    with pytest.raises(ValueError, match='not a number of partitions'):
        osu_limits.partitions(name, ['-q', '0'])
    got = osu_limits.plan_sweep(name, 2, 1, 4 * MiB, user_mem_limit=None, ranks_per_node=2,
                                node_memory=None, osu_version='8.0b', datatype_size=8)
    assert got.sizes[0] == 8 and got.sizes[-1] == 4 * MiB and len(got.sizes) == 20
    assert osu_limits.loop_kind(name) == 'latency'


def test_rank_counts_osu_refuses():
    assert 'exactly two' in osu_limits.refused('osu_latency', 4)
    assert 'at least 3' in osu_limits.refused('osu_neighbor_alltoall', 2)
    assert osu_limits.refused('osu_alltoall', 1024) is None


def test_osu_75_gets_no_M_and_the_suite_stops_the_sweep_where_the_node_holds_its_buffers():
    """Where 7.4 would raise -M (1024 ranks, one per node), 7.5 has none: the full sweep runs."""
    old = plan(ranks=1024, per_node=1, memory=512 * 2**30)
    new = plan(ranks=1024, per_node=1, memory=512 * 2**30, osu='7.5')
    assert old.mem_limit == 1024 * MiB and old.not_measured == []
    assert new.mem_limit is None and new.not_measured == [] and new.max_size is None
    short = plan(ranks=1024, per_node=128, memory=512 * 2**30, osu='8.0b')
    assert short.mem_limit is None and short.max_size == short.sizes[-1] == 512 * 1024
    assert short.not_measured == [MiB]
    assert short.reason == ('the suite stops osu_alltoall at 524288 B (-m): the buffers of '
                            '1048576 B (384 GiB per node) would not fit 512 GiB per node; '
                            'OSU 8.0b has no -M (from 7.5)')
    assert osu_limits.node_bytes('osu_alltoall', 1024, 128, short.max_size) <= 256 * 2**30


def test_osu_75_without_declared_memory_runs_the_whole_sweep():
    got = plan(ranks=1024, per_node=128, osu='7.5.1')
    assert got.sizes[-1] == MiB and got.not_measured == [] and got.max_size is None


def test_an_osu_of_unknown_release_gets_no_M_and_stops_where_either_would():
    got = plan(ranks=1024, per_node=128, memory=2048 * 2**30, osu=None)
    assert got.mem_limit is None and got.max_size == 512 * 1024
    assert 'release is unknown' in got.reason
    told = plan(ranks=2, user=1048576, osu=None)      # the user's -M says this OSU has one
    assert told.sizes[-1] == 512 * 1024 and 'command line' in told.reason
