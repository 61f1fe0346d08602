"""OSU 7.3 outputs (tests/data/osu/cap73_*, real runs, see its README.md): osu_mbw_mr prints
its title twice and its datatype after the column header; point-to-point tables print
"Latency (us)" and the datatype after the header, as 7.1/7.2 do."""

from __future__ import annotations

from pathlib import Path

import pytest

from omb_suite.osu.parsing import OsuParseError, expected_sizes, parse_osu_output, split_outputs

DATA = Path(__file__).parents[1] / "data" / "osu"
MBW_MR = ("cap73_ompi_osu_mbw_mr_W64.txt", "cap73_mpich_osu_mbw_mr_W64.txt")


def read(name: str) -> str:
    return (DATA / name).read_text()


@pytest.mark.parametrize("name", MBW_MR)
def test_osu73_mbw_mr_repeated_title_is_one_header(name):
    text = read(name)
    lines = text.splitlines()
    assert lines[1] == lines[2] == "# OSU MPI Multiple Bandwidth / Message Rate Test v7.3"
    table = parse_osu_output(text, expect_sizes=expected_sizes(1, 4194304))
    assert (table.version, table.kind) == ("7.3", "mbw_mr")
    assert table.columns == ("size", "bandwidth", "msg_rate")
    assert table.meta == {"pairs": "1", "window_size": "64", "datatype": "MPI_CHAR"}
    assert table.sizes() == expected_sizes(1, 4194304)
    (output,) = split_outputs(text)
    assert output.first_line == 1 and output.parse().rows == table.rows


def test_osu73_mbw_mr_after_another_output_splits_in_two():
    latency = read("cap73_ompi_osu_latency_m1-1024.txt")
    outputs = split_outputs(latency + read(MBW_MR[1]))
    assert [o.parse().kind for o in outputs] == ["latency", "mbw_mr"]
    assert outputs[1].first_line == len(latency.splitlines()) + 2  # after its `$ ` command


def test_osu73_mbw_mr_run_twice_is_two_outputs_synthetic():
    # The same title again after a table is a second run, not a repeat: two outputs.
    text = read(MBW_MR[0]) + read(MBW_MR[0])
    with pytest.raises(OsuParseError, match=r"2 benchmark headers \(lines 2, 32\)"):
        parse_osu_output(text)
    assert [len(o.parse().rows) for o in split_outputs(text)] == [23, 23]


def test_title_again_after_a_crash_is_a_second_run_synthetic():
    # A run that died after its title, run again: the crash's lines stand between the titles.
    lines = read(MBW_MR[0]).splitlines()
    crashed = [lines[1], "[node:123] *** Process received signal ***"]
    outputs = split_outputs("\n".join([*crashed, *lines[1:]]))
    assert [o.first_line for o in outputs] == [1, 3]
    with pytest.raises(OsuParseError, match="no column header"):
        outputs[0].parse()
    assert outputs[1].parse().sizes() == expected_sizes(1, 4194304)


@pytest.mark.parametrize(
    "second",
    ["# OSU MPI Bandwidth Test v7.3", "# OSU MPI Multiple Bandwidth / Message Rate Test v7.4"],
)
def test_different_second_title_is_still_refused_synthetic(second):
    lines = read(MBW_MR[0]).splitlines()
    lines[2] = second
    with pytest.raises(OsuParseError, match=r"2 benchmark headers \(lines 2, 3\)"):
        parse_osu_output("\n".join(lines))


def test_osu73_point_to_point_layout():
    for lib in ("ompi", "mpich"):
        table = parse_osu_output(read(f"cap73_{lib}_osu_latency_m1-1024.txt"))
        assert (table.version, table.columns) == ("7.3", ("size", "latency"))
        assert table.units["latency"] == "us" and table.meta["datatype"] == "MPI_CHAR"
        assert table.sizes() == expected_sizes(1, 1024)
