"""The OSU parser on outputs written elsewhere (tests/data/osu-world, see its README.md):
every file parses or is refused with the cause `expected.yaml` names. Files made here from
real ones carry `constructed` in their names."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from omb_suite.osu.parsing import OsuParseError, expected_sizes, parse_osu_output, split_outputs

WORLD = Path(__file__).parents[1] / "data" / "osu-world"
EXPECTED = yaml.safe_load((WORLD / "expected.yaml").read_text())


def outcomes(name: str) -> tuple[list, list[str]]:
    """Parsed tables and refusal messages of every output in one corpus file."""
    tables, refused = [], []
    for output in split_outputs((WORLD / name).read_text()):
        try:
            tables.append(output.parse())
        except OsuParseError as err:
            refused.append(str(err))
    return tables, refused


def test_every_corpus_file_has_an_expected_outcome():
    files = {
        str(p.relative_to(WORLD))
        for p in WORLD.rglob("*")
        if p.is_file() and p.suffix not in (".md", ".yaml")
    }
    assert files == set(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_corpus_file_parses_or_is_refused_with_its_cause(name):
    tables, refused = outcomes(name)
    assert len(tables) == EXPECTED[name]["parsed"]
    want = EXPECTED[name].get("refused", [])
    assert len(refused) == len(want), refused
    for message, piece in zip(refused, want, strict=True):
        assert piece in message


def test_osu72_datatype_after_the_header_is_metadata_not_a_second_table():
    (table,), _ = outcomes("aks-infiniband-install/test_README_lines85-110.txt")
    assert (table.version, table.columns) == ("7.2", ("size", "latency"))
    assert table.meta["datatype"] == "MPI_CHAR"
    assert table.sizes() == expected_sizes(1, 1 << 22)
    (gpu,), _ = outcomes("github-threads/EESSI-software-layer-pr716_osu_bw_cuda_v7.2.txt")
    assert (gpu.meta["accel"], gpu.meta["datatype"], gpu.meta["send_buffer"]) == (
        "CUDA", "MPI_CHAR", "DEVICE (D)")


def test_osu72_second_datatype_is_refused_constructed():
    _, (message,) = outcomes("constructed/constructed_v7.2_latency_T_all_second_datatype.txt")
    assert "a second table starts at line 8 ('# Datatype: MPI_INT.'" in message


def test_osu70_layout_without_datatype_constructed():
    (table,), _ = outcomes("constructed/constructed_v7.0_latency_no_datatype.txt")
    assert table.version == "7.0" and "datatype" not in table.meta
    assert table.sizes() == expected_sizes(0, 1 << 22, zero_row=True)


def test_osu5_gpu_buffer_lines():
    (device,), _ = outcomes("abci2.0benchmark/pt2pt_inter_anode_job01.sh.7249071.gpu.latency")
    assert (device.kind, device.meta["send_buffer"]) == ("multi_lat", "DEVICE (D)")
    (mixed,), _ = outcomes("constructed/constructed_v5.7_multi_lat_host_to_device.txt")
    assert (mixed.meta["send_buffer"], mixed.meta["recv_buffer"]) == ("HOST (H)", "DEVICE (D)")


def test_reframe3_job_outputs_hold_complete_tables():
    latency = [
        table
        for name in EXPECTED
        if name.startswith("stackhpc-hpc-tests/") and name.endswith("_Osu_latency.out")
        for table in outcomes(name)[0]
    ]
    assert [t.version for t in latency] == ["5.6.2", "5.6.3"]
    assert all(t.sizes() == expected_sizes(0, 1 << 22, zero_row=True) for t in latency)


def test_wrapper_log_is_split_into_every_benchmark():
    tables, refused = outcomes("metrics-operator-experiments/run1_size-4.log")
    assert not refused and len(tables) == 22
    kinds = {t.kind for t in tables}
    assert {"one_sided", "nonblocking", "collective", "init", "hello", "mbw_mr"} <= kinds
    ibarrier = next(t for t in tables if t.title == "OSU MPI Non-blocking Barrier Latency Test")
    # OSU 5.x prints this header without '#'
    assert ibarrier.columns == ("overall", "compute", "pure_comm", "overlap")


def test_refusal_in_a_concatenation_names_lines_of_the_whole_file_constructed():
    name = "constructed/constructed_v5.6.2_concatenation_with_failed_run.txt"
    tables, (message,) = outcomes(name)
    assert [t.title for t in tables] == ["OSU MPI Bandwidth Test"]
    assert "'This test requires exactly two processes' (line 27)" in message


def test_wrapper_and_launcher_lines_around_a_table_constructed():
    (stamped,), _ = outcomes("constructed/constructed_v5.6.2_wrapper_timestamps.txt")
    assert "comments" not in stamped.meta  # '### Ending timestamp' ends the table
    assert stamped.sizes() == expected_sizes(0, 1 << 22, zero_row=True)
    (table,), _ = outcomes("constructed/constructed_v5.6.2_launcher_lines_around_table.txt")
    assert table.sizes() == expected_sizes(1, 1 << 22)
    assert "comments" not in table.meta  # the binding report and warning are no metadata


def test_table_cut_before_a_trailer_is_refused_constructed():
    _, (message,) = outcomes("constructed/constructed_v5.6.2_cut_mid_row_then_trailer.txt")
    assert "garbled data row at line 20: 1 fields for 2 columns" in message


def test_releases_before_the_known_layouts_say_so_and_later_ones_are_read_line_by_line():
    """A release after the newest known is read with the known layouts (the suite names it
    once: omb_suite.osu.versions.unknown_note); what it prints differently is refused."""
    _, (older,) = outcomes("constructed/constructed_v3.9_latency_title.txt")
    assert older.startswith("OSU MPI Latency Test (line 1): OSU 3.9 is older than the layouts")
    (newer,), _ = outcomes("constructed/constructed_v7.6_latency_title.txt")
    assert newer.version == "7.6" and newer.columns == ("size", "latency")


def test_osu4_and_early_osu5_tables_are_read_like_5_6():
    tables, refused = outcomes("latency-test-comet/osu_20151019_comet-21-01-18_lines1-54.out")
    assert not refused and [t.version for t in tables] == ["4.4.1", "4.4.1"]
    assert all(t.sizes() == expected_sizes(0, 1 << 22, zero_row=True) for t in tables)
    assert tables[0].columns == ("size", "latency") and tables[0].value("latency", 0) == 1.04
    (v50,), _ = outcomes("github-threads/ofi-cray-libfabric-cray-pr859_osu_latency_v5.0.txt")
    assert v50.version == "5.0" and v50.value("latency", 4194304) == 497.37


def test_osu4_and_5_threads_one_sided_and_portals():
    (acc,), _ = outcomes("github-threads/open-mpi-ompi-issue5946_osu_acc_latency_v5.3.txt")
    assert (acc.version, acc.kind, acc.meta) == ("5.3", "one_sided", {
        "window_creation": "MPI_Win_allocate", "synchronization": "MPI_Win_flush"})
    for name in ("ompi-portals4-mtl", "mpich-portals4"):
        (table,), _ = outcomes(f"github-threads/open-mpi-ompi-issue215_osu_latency_v4.4_{name}.txt")
        assert table.version == "4.4" and table.sizes() == expected_sizes(0, 2048, zero_row=True)


def test_a_hang_is_caught_by_the_sizes_the_run_asked_for():
    name = "github-threads/ofiwg-libfabric-issue4525_osu_alltoall_v5.4.1_hang.txt"
    (output,) = split_outputs((WORLD / name).read_text())
    assert output.parse().sizes()[-1] == 256  # '..... never progresses' is no row
    with pytest.raises(OsuParseError, match=r"missing sizes \[512, .*1048576\] \(truncated\?\)"):
        output.parse(expect_sizes=expected_sizes(1, 1 << 20))


def test_a_crash_ends_the_table_and_is_the_reason():
    _, (message,) = outcomes(
        "github-threads/open-mpi-ompi-issue5946_osu_acc_latency_v5.3_internode_segfault.txt")
    # the backtrace line '    0  /home/.../libucs.so.0(+0x232e9) [...]' is no garbled row
    assert message.startswith("OSU MPI_Accumulate latency Test: the run failed; last row: size 0")


def test_open_mpi_tag_and_timestamp_prefixes_are_removed():
    _, (tagged,) = outcomes(
        "github-threads/open-mpi-ompi-issue9876_osu_get_acc_latency_v5.5_tag-output_segfault.txt")
    assert tagged.startswith("OSU MPI_Get_accumulate latency Test: column header at line 4")
    assert "'[n15:142503] *** Process received signal ***' (line 5)" in tagged
    _, (stamped,) = outcomes(
        "github-threads/openucx-ucx-issue5205_osu_get_acc_latency_v5.6.2_timestamp-tag-output_hang.txt")
    assert stamped.startswith("OSU MPI_Get_accumulate latency Test: column header at line 4")


@pytest.mark.parametrize(("title", "message"), [
    ("# OSU MPI Latency Test", "the title has no version, so its layout is unknown"),
    ("# OSU MPI Latency Test (Version 3.1.1)", "OSU 3.1.1 is older than the layouts"),
    ("# OSU MPI Latency Test v4.0", None),
])
def test_versions_at_the_edges_of_the_known_layouts_synthetic(title, message):
    lines = (WORLD / "constructed" / "constructed_v4.2_latency_title.txt").read_text().splitlines()
    text = "\n".join([title, *lines[1:]])
    if message is None:
        assert parse_osu_output(text).version == "4.0"
        return
    with pytest.raises(OsuParseError, match=re.escape(message)):
        parse_osu_output(text)


def test_open_mpi_error_handler_report_is_the_reason():
    """Open MPI's MPI_ERRORS_ARE_FATAL report (a real run of a deliberately wrong tuning
    file) stops the table at 8 KiB; the reason quoted is the report, not a later line."""
    text = (Path(__file__).parents[1] / "data" / "tuning" / "openmpi"
            / "ompi4.1.4_allreduce_np2_canary.txt").read_text()
    with pytest.raises(OsuParseError) as err:
        parse_osu_output(text, expect_sizes=expected_sizes(4, 262144))
    assert "'[vm:27157] *** An error occurred in MPI_Allreduce' (line 47)" in str(err.value)
