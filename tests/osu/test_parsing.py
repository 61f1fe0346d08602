"""Tests of omb_suite.osu.parsing on real OSU outputs (tests/data/osu, see its README.md).

Hand-made corruptions of real outputs are in tests whose names contain `synthetic`.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from omb_suite.osu.parsing import (
    OsuParseError,
    OsuTable,
    expected_sizes,
    parse_osu_output,
    parse_size_arg,
)

DATA = Path(__file__).parents[1] / "data" / "osu"
ALL_OUTPUTS = sorted(path.name for path in DATA.glob("*.txt"))

# Real outputs that must fail, with a piece of the message users need to see.
FAILING = {
    "mpich_osu_bcast_cvar_bogus_error.txt": "Invalid MPIR_CVAR_BCAST_INTRA_ALGORITHM value",
    "ompi_osu_bcast_np1_error.txt": "This test requires at least two processes",
    "ompi_osu_latency_np3_error.txt": "This test requires exactly two processes",
    "ompi_osu_latency_bad_option.txt": "column header at line 5 but no data rows",
    "slurm_ompi_osu_bcast_4ranks_2nodes_oversubscribed_killed.txt": "CANCELLED AT",
    "slurm_ompi_osu_latency_internode_salloc_mpirun_both-bound-core0_killed.txt": (
        "peer process has unexpectedly disconnected"
    ),
    "cap_ompi_osu_bw_fan_in_m1-1024.txt": "Please run this benchmark on more than 1 node",
    "cap_ompi_osu_barrier_c_z.txt": "Invalid option [-c]",
    "cap_ompi_osu_put_latency_c_m1-64.txt": "Invalid option [-c]",
    "cap_ompi_osu_mbw_mr_version_flag.txt": "no column header and no data rows",
    "cap_ompi_osu_latency_T_all_m1-8.txt": "a second table starts at line 10",
}
NOT_STARTED = {name for name, text in FAILING.items() if "two processes" in text or "[-c]" in text}
NOT_STARTED |= {"mpich_osu_bcast_cvar_bogus_error.txt", "cap_ompi_osu_bw_fan_in_m1-1024.txt"}

# Real outputs whose size list does not follow from the -m option of their command.
IRREGULAR_SIZES = {
    "slurm_ompi_osu_bcast_4ranks_2nodes_oversubscribed_killed.txt",  # killed
    "cap_ompi_osu_allreduce_c_m1-1024.txt",  # stops at the first validation failure
    "cap_ompi_osu_fop_latency.txt",  # atomics: one row, the datatype's size
    "cap_ompi_osu_cas_latency.txt",
    # OSU's own -M cap stops these below -m (tests/osu/test_osu_limits.py reads them)
    "cap73_ompi_osu_alltoall_f_M1048576_np2.txt",
    "cap73_ompi_osu_allreduce_f_m2097152_M1048576_np2.txt",
}


def read(name: str) -> str:
    return (DATA / name).read_text()


def parse(name: str, **kwargs) -> OsuTable:
    return parse_osu_output(read(name), **kwargs)


def command_sizes(name: str, table: OsuTable) -> list[int]:
    """The sizes OSU 7 prints for the command on the file's first line."""
    command = read(name).splitlines()[0]
    match = re.search(r" -m (\S+)", command)
    low, high = parse_size_arg(match[1]) if match else (None, None)
    default_max = 1 << 20 if table.kind in ("collective", "nonblocking") else 1 << 22
    datatype_size = 4 if table.meta.get("datatype") == "MPI_INT" else 1
    low = 1 if low is None else low
    return expected_sizes(low, default_max if high is None else high, datatype_size=datatype_size)


@pytest.mark.parametrize("name", ALL_OUTPUTS)
def test_real_output_parses_or_fails_with_its_cause(name):
    if name in FAILING:
        with pytest.raises(OsuParseError) as error:
            parse(name)
        assert FAILING[name] in str(error.value)
        if name in NOT_STARTED:
            assert "no '# OSU MPI ... Test' header" in str(error.value)
        return
    table = parse(name)
    assert table.rows, name
    assert table.version in ("5.8", "7.3", "7.4")
    assert all(set(row) == set(table.columns) for row in table.rows)
    assert set(table.units) == set(table.columns)


@pytest.mark.parametrize(
    "name",
    [
        name
        for name in ALL_OUTPUTS
        if name not in FAILING and name not in IRREGULAR_SIZES and "size" in parse(name).columns
    ],
)
def test_expected_sizes_match_every_real_table(name):
    table = parse(name)
    sizes = command_sizes(name, table)
    assert table.sizes() == sizes
    assert parse(name, expect_sizes=sizes).sizes() == sizes


def test_osu74_skips_size_zero_for_min_zero():
    # Real: `osu_latency -m 0:8` on OSU 7.4 starts at 1 (0-byte messages have no elements).
    for name in ("ompi_osu_latency_m0-8.txt", "mpich_osu_latency_m0-8.txt"):
        assert parse(name).sizes() == expected_sizes(0, 8) == [1, 2, 4, 8]
    assert parse("cap_ompi_osu_multi_lat_m0-1024.txt").sizes()[0] == 1


def test_expected_sizes_progression():
    assert expected_sizes(1, 16) == [1, 2, 4, 8, 16]
    assert expected_sizes(3, 20) == [3, 6, 12]
    assert expected_sizes(0, 4, zero_row=True) == [0, 1, 2, 4]
    assert expected_sizes(1, 64, datatype_size=4) == [4, 8, 16, 32, 64]
    assert expected_sizes(67108864, 67108864) == [67108864]
    assert expected_sizes(8, 1) == []
    with pytest.raises(ValueError, match="bad size range"):
        expected_sizes(-1, 8)


@pytest.mark.parametrize(
    ("arg", "expected"),
    [("8", (None, 8)), ("2:128", (2, 128)), ("2:", (2, None)), (":64", (None, 64))],
)
def test_parse_size_arg(arg, expected):
    assert parse_size_arg(arg) == expected


@pytest.mark.parametrize("arg", ["", ":", "a:b", "1:2:3", "1 2", "-4"])
def test_parse_size_arg_rejects_garbage(arg):
    with pytest.raises(ValueError, match="MIN:MAX"):
        parse_size_arg(arg)


@pytest.mark.parametrize(
    ("name", "max_size", "missing", "cause"),
    [
        (
            "slurm_ompi_osu_bcast_4ranks_2nodes_oversubscribed_killed.txt",
            65536,
            "missing sizes [8192, 16384, 32768, 65536] (truncated?)",
            "last row: size 4096 at line 18; the output says: 'slurmstepd-node1: error: ***",
        ),
        (
            "slurm_ompi_osu_latency_internode_salloc_mpirun_both-bound-core0_killed.txt",
            4096,
            "missing sizes [128, 256, 512, 1024, 2048, 4096]",
            "An MPI communication peer process has unexpectedly disconnected",
        ),
        (
            "cap_ompi_osu_allreduce_c_m1-1024.txt",
            1024,
            "missing sizes [32, 64, 128, 256, 512, 1024]",
            "DATA VALIDATION ERROR",
        ),
    ],
)
def test_truncated_real_runs_name_missing_sizes_and_cause(name, max_size, missing, cause):
    with pytest.raises(OsuParseError) as error:
        parse(name, expect_sizes=expected_sizes(1, max_size))
    message = str(error.value)
    assert missing in message and cause in message


def test_killed_run_fails_even_without_expected_sizes():
    with pytest.raises(OsuParseError, match="the run failed; last row: size 64 at line 15"):
        parse("slurm_ompi_osu_latency_internode_salloc_mpirun_both-bound-core0_killed.txt")


def test_fatal_line_wins_over_earlier_hint_synthetic():
    text = read("ompi_osu_latency_m0-8.txt")
    text = text.replace("# Datatype", "Warning! Limiting max message size to: 8.\n# Datatype")
    with pytest.raises(
        OsuParseError, match=r"the run failed.*'srun: error: node1: task 0: Killed'"
    ):
        parse_osu_output(text + "srun: error: node1: task 0: Killed\n")
    assert parse_osu_output(text).sizes() == [1, 2, 4, 8]


def test_mpich_abort_is_quoted_with_line_number():
    with pytest.raises(OsuParseError) as error:
        parse("mpich_osu_bcast_cvar_bogus_error.txt")
    assert "(no_such_algorithm)' (line 2)" in str(error.value)


def test_latency_values_and_api():
    table = parse("ompi_osu_latency_default.txt")
    assert (table.title, table.version, table.kind) == ("OSU MPI Latency Test", "7.4", "latency")
    assert table.columns == ("size", "latency")
    assert table.units == {"size": "bytes", "latency": "us"}
    assert table.meta == {"datatype": "MPI_CHAR"}
    assert table.value("latency", 1) == 0.44
    assert table.value("latency", 4194304) == 614.30
    assert table.column("latency")[1048576] == 104.44
    assert isinstance(table.rows[0]["size"], int)


def test_value_errors_name_what_is_missing():
    table = parse("ompi_osu_latency_m0-8.txt")
    with pytest.raises(OsuParseError, match=r"no row for size 16 \(sizes: \[1, 2, 4, 8\]\)"):
        table.value("latency", 16)
    with pytest.raises(OsuParseError, match=r"no column 'p99' \(columns: size, latency\)"):
        table.value("p99", 8)
    with pytest.raises(OsuParseError, match="give a message size"):
        table.value("latency")


def test_seed_osu58_allgather():
    table = parse("seed_osu58_allgather_64nodes.txt", expect_sizes=expected_sizes(1, 1 << 20))
    assert (table.version, table.kind, table.columns) == (
        "5.8",
        "collective",
        ("size", "avg_latency"),
    )
    assert table.meta == {}  # OSU 5.8 prints no Datatype line
    assert table.value("avg_latency", 1048576) == 5553244.52


def test_seed_osu73_bcast():
    table = parse("seed_osu73_bcast_128ranks.txt", expect_sizes=expected_sizes(1, 1 << 20))
    assert (table.version, table.kind) == ("7.3", "collective")
    assert table.value("avg_latency", 16384) == 116.96


def test_collective_full_format():
    table = parse("mpich_osu_allreduce_f.txt")
    assert table.columns == ("size", "avg_latency", "min_latency", "max_latency", "iterations")
    assert table.rows[-1] == {
        "size": 1048576, "avg_latency": 450.91, "min_latency": 450.82,
        "max_latency": 451.00, "iterations": 100,
    }  # fmt: skip
    assert table.units["iterations"] == ""


def test_sizeless_tables_use_key_zero():
    barrier = parse("ompi_osu_barrier_f.txt")
    assert barrier.kind == "collective" and barrier.sizes() == []
    assert barrier.value("avg_latency") == 0.20 and barrier.column("iterations") == {0: 1000}
    with pytest.raises(OsuParseError, match="no Size column"):
        barrier.value("avg_latency", 8)
    ibarrier = parse("mpich_osu_ibarrier.txt")
    assert ibarrier.kind == "nonblocking"
    assert ibarrier.columns == ("overall", "compute", "pure_comm", "overlap")
    assert ibarrier.value("overlap") == 6.81 and ibarrier.units["overlap"] == "%"


def test_nonblocking_full_format():
    full = ("overall", "compute", "coll_init", "mpi_test", "mpi_wait", "pure_comm", "min_comm")
    table = parse("ompi_osu_ibcast_f.txt")
    assert table.columns == ("size", *full, "max_comm", "overlap")
    assert table.value("overlap", 1024) == 15.70 and table.value("coll_init", 1) == 0.22
    assert parse("cap_ompi_osu_ibarrier_f.txt").columns == (*full, "max_comm", "overlap")
    short = parse("cap_ompi_osu_iallreduce_m1-1024.txt")
    assert short.columns == ("size", "overall", "compute", "pure_comm", "overlap")
    assert short.value("overlap", 4) == 38.47


def test_mbw_mr_bandwidth_and_message_rate():
    table = parse("cap_ompi_osu_mbw_mr_m1-1024.txt")
    assert table.kind == "mbw_mr" and table.columns == ("size", "bandwidth", "msg_rate")
    assert table.units["msg_rate"] == "messages/s" and table.units["bandwidth"] == "MB/s"
    assert table.meta["pairs"] == "1" and table.meta["window_size"] == "64"
    assert table.value("msg_rate", 1024) == 4934315.78


def test_tail_latencies():
    latency = parse("cap_ompi_osu_latency_z_m1-1024.txt")
    assert latency.columns == ("size", "latency", "p50", "p90", "p99")
    assert latency.value("p99", 1) == 2.07 and latency.units["p99"] == "us"
    bandwidth = parse("cap_ompi_osu_bw_z_m1-1024.txt")
    assert bandwidth.units["p50"] == "MB/s" and bandwidth.value("p90", 1024) == 5218.25
    bcast = parse("cap_ompi_osu_bcast_f_z50-99_m1-64.txt")
    assert bcast.columns[-3:] == ("iterations", "p50", "p99")
    assert parse("cap_ompi_osu_barrier_z.txt").value("p99") == 4.04


def test_validation_column_pass():
    table = parse("cap_ompi_osu_latency_c_m1-1024.txt", require_validation=True)
    assert {row["validation"] for row in table.rows} == {"Pass"}
    mbw = parse("cap_ompi_osu_mbw_mr_c_m1-1024.txt", require_validation=True)
    assert mbw.columns == ("size", "bandwidth", "msg_rate", "validation")
    ibcast = parse("cap_ompi_osu_ibcast_c_z_m1-64.txt", require_validation=True)
    assert ibcast.columns[-4:] == ("validation", "p50", "p90", "p99")
    with pytest.raises(OsuParseError, match="holds Pass/Fail"):
        table.column("validation")


def test_validation_failure_names_sizes():
    with pytest.raises(OsuParseError, match=r"validation failed for sizes 16 \(line 10\)"):
        parse("cap_ompi_osu_allreduce_c_m1-1024.txt", require_validation=True)
    assert parse("cap_ompi_osu_allreduce_c_m1-1024.txt").rows[-1]["validation"] == "Fail"


def test_require_validation_without_c_column():
    with pytest.raises(OsuParseError, match="no Validation column: run the benchmark with -c"):
        parse("ompi_osu_latency_default.txt", require_validation=True)


ONE_SIDED_WIN = {"window_creation": "MPI_Win_allocate", "synchronization": "MPI_Win_flush"}


@pytest.mark.parametrize(
    ("name", "kind", "meta"),
    [
        ("cap_ompi_osu_multi_lat_m0-1024.txt", "multi_lat", {}),
        ("cap_ompi_osu_latency_mt_m1-1024.txt", "latency_mt", {"receiver_threads": "2"}),
        ("cap_ompi_osu_latency_mp_m1-1024.txt", "latency_mp", {"sender_processes": "2"}),
        ("cap_ompi_osu_get_latency_m1-1024.txt", "one_sided", ONE_SIDED_WIN),
        ("cap_ompi_osu_acc_latency_m1-1024.txt", "one_sided", ONE_SIDED_WIN),
        ("cap_ompi_osu_fop_latency.txt", "one_sided", ONE_SIDED_WIN),
        ("cap_ompi_osu_cas_latency.txt", "one_sided", ONE_SIDED_WIN),
        ("ompi_osu_put_latency_m1-1024.txt", "one_sided", ONE_SIDED_WIN),
        (
            "cap_ompi_osu_get_acc_latency_m1-1024.txt",
            "one_sided",
            {"window_creation": "MPI_Win_create", "synchronization": "MPI_Win_lock/unlock"},
        ),
    ],
)
def test_point_to_point_latency_kinds(name, kind, meta):
    table = parse(name)
    assert table.kind == kind
    assert table.columns == ("size", "latency") and table.units["latency"] == "us"
    assert meta.items() <= table.meta.items()


def test_bandwidth_kinds():
    assert parse("ompi_osu_bibw_m1-65536.txt").kind == "bibw"
    bandwidth = parse("slurm_ompi_osu_bw_internode_srun_pmix.txt")
    assert bandwidth.kind == "bandwidth" and bandwidth.columns == ("size", "bandwidth")
    assert bandwidth.value("bandwidth", 262144) == 3779.85


def test_one_sided_bandwidth():
    table = parse("cap_ompi_osu_put_bw_m1-1024.txt")
    assert (table.title, table.columns) == ("OSU MPI_Put Bandwidth Test", ("size", "bandwidth"))
    assert table.value("bandwidth", 1024) == 21246.47


def test_latency_mt_complete_table_passes_despite_improper_exit():
    # OSU 7.4 osu_latency_mt exits with status 1 after a full table (Open MPI: "exiting
    # improperly"); the exit status is the check's business, the numbers are complete.
    table = parse("cap_ompi_osu_latency_mt_m1-1024.txt", expect_sizes=expected_sizes(1, 1024))
    assert table.value("latency", 1024) == 0.40


def test_init_and_hello():
    for name in ("ompi_osu_init.txt", "cap_ompi_osu_init.txt"):
        init = parse(name)
        assert init.kind == "init" and init.columns == (
            "nprocs",
            "init_min",
            "init_max",
            "init_avg",
        )
        assert init.units["init_avg"] == "ms" and init.value("nprocs") == 2
    assert parse("ompi_osu_init.txt").value("init_avg") == 231
    hello = parse("ompi_osu_hello.txt")
    assert (hello.kind, hello.columns, hello.value("nprocs")) == ("hello", ("nprocs",), 2)


def test_init_and_hello_without_result_line_synthetic():
    with pytest.raises(OsuParseError, match="no 'nprocs: N, min: X ms"):
        parse_osu_output("# OSU MPI Init Test v7.4\n")
    with pytest.raises(OsuParseError, match="no 'This is a test with N processes' line"):
        parse_osu_output(read("ompi_osu_hello.txt").replace("This is a test with", "x"))


# --- hand-made corruptions of real outputs (synthetic) ---------------------------------------


def test_truncated_mid_row_synthetic():
    text = read("ompi_osu_latency_default.txt")
    cut = text[: text.index("1.51") - 3]  # "2048   " then the output stops
    with pytest.raises(OsuParseError, match=r"garbled data row at line 17: 1 fields for 2 columns"):
        parse_osu_output(cut)


def test_truncated_between_rows_synthetic():
    text = read("ompi_osu_latency_default.txt")
    cut = text[: text.index("2048 ")]
    assert parse_osu_output(cut).sizes()[-1] == 1024  # nothing can tell, unless sizes expected
    with pytest.raises(OsuParseError, match=r"missing sizes \[2048, .*, 4194304\] \(truncated\?\)"):
        parse_osu_output(cut, expect_sizes=expected_sizes(0, 1 << 22))


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("0.42", "0.4Z", r"garbled value '0.4Z' in column 'latency' at line 7"),
        ("0.42", "nan", r"garbled value 'nan' in column 'latency' at line 7"),
        ("\n8 ", "\n8x ", r"garbled value '8x' in column 'size' at line 9"),
        ("0.41", "0.41   0.3", r"garbled data row at line 8: 3 fields for 2 columns"),
        ("16    ", "8     ", r"size 8 appears twice \(lines 9 and 10\)"),
        ("Avg Latency(us)", "Avg Latency(us)  Jitter(us)", r"unknown column label 'Jitter\(us\)'"),
        ("# OSU MPI Latency Test v7.4\n", "", r"no '# OSU MPI \.\.\. Test' header"),
        ("\n64 ", "\n# stray comment\n64 ", r"unexpected line 12 inside the table"),
    ],
)
def test_corrupted_output_synthetic(old, new, message):
    text = read("ompi_osu_latency_default.txt")
    assert old in text
    with pytest.raises(OsuParseError, match=message):
        parse_osu_output(text.replace(old, new, 1))


def test_not_osu_output_synthetic():
    with pytest.raises(OsuParseError) as error:
        parse_osu_output("bash: osu_latency: command not found\n")
    assert "'bash: osu_latency: command not found' (line 1)" in str(error.value)
    with pytest.raises(OsuParseError, match=r"no '# OSU MPI \.\.\. Test' header"):
        parse_osu_output("")


def test_two_outputs_in_one_text_synthetic():
    text = read("ompi_osu_latency_m0-8.txt") + read("ompi_osu_bw_m64M.txt")
    with pytest.raises(OsuParseError, match=r"2 benchmark headers \(lines 3, 12\)"):
        parse_osu_output(text)


def test_expect_sizes_on_sizeless_table_synthetic():
    with pytest.raises(OsuParseError, match="no Size column, so no expected sizes"):
        parse("ompi_osu_barrier_f.txt", expect_sizes=[1, 2])


def test_osu5_device_buffers_and_size_zero_synthetic():
    # OSU 5.x-7.2 point-to-point format (printf of print_header in osu_util.c): device buffer
    # line, "Latency (us)" label and a 0-byte row; the numbers come from a real 7.4 run.
    text = (
        "# OSU MPI-CUDA Latency Test v5.9\n"
        "# Send Buffer on DEVICE (D) and Receive Buffer on DEVICE (D)\n"
        "# Size          Latency (us)\n"
        "0                       0.19\n"
        "1                       0.20\n"
        "2                       0.20\n"
    )
    table = parse_osu_output(text, expect_sizes=expected_sizes(0, 2, zero_row=True))
    assert (table.kind, table.columns, table.sizes()) == ("latency", ("size", "latency"), [0, 1, 2])
    assert table.meta == {"accel": "CUDA", "send_buffer": "DEVICE (D)", "recv_buffer": "DEVICE (D)"}


def test_one_sided_device_buffers_synthetic():
    text = (
        read("cap_ompi_osu_put_bw_m1-1024.txt")
        .replace(
            "# OSU MPI_Put Bandwidth Test v7.4",
            "# OSU MPI_Put-ROCM Bandwidth Test v7.4",
        )
        .replace(
            "# Size      Bandwidth",
            "# Rank 0 Memory on DEVICE (D) and Rank 1 Memory on HOST (H)\n# Size      Bandwidth",
        )
    )
    table = parse_osu_output(text)
    assert table.kind == "one_sided" and table.meta["accel"] == "ROCM"
    assert (table.meta["send_buffer"], table.meta["recv_buffer"]) == ("DEVICE (D)", "HOST (H)")


def test_mbw_mr_window_varied_is_refused_synthetic():
    text = read("cap_ompi_osu_mbw_mr_m1-1024.txt").replace("window size: 64", "window size: varied")
    with pytest.raises(OsuParseError, match="window-varied output"):
        parse_osu_output(text)
