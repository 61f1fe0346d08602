"""OSU tables inside documentation pages (tests/data/osu-world, real pages): a table ends at
the page's code fence, Markdown heading or, in an indented block, the first line left of it."""

from __future__ import annotations

from pathlib import Path

import pytest

from omb_suite.osu.parsing import OsuParseError, expected_sizes, parse_osu_output, split_outputs

WORLD = Path(__file__).parents[1] / "data" / "osu-world"
WI4MPI = WORLD / "wi4mpi-tutorial" / "doc_tutorials_isc2023_preload_lines78-end.md.txt"
SARUS = WORLD / "sarus-docs" / "doc_cookbook_osu_mb_osu_mb_lines41-end.rst.txt"


def tables(path: Path) -> list:
    return [output.parse() for output in split_outputs(path.read_text())]


def test_markdown_page_headings_are_no_table_comments():
    found = tables(WI4MPI)
    assert [t.kind for t in found] == ["init", "bibw", "collective"] * 2 + ["hello"] * 2
    allreduce = found[5]
    assert allreduce.sizes() == [4, 8, 16, 32, 64]
    # '## Wi4MPI Preload mode with Slurm' and '### From MPICH...' follow its fence
    assert all("comments" not in t.meta for t in found)


def test_rst_page_prose_after_an_indented_table_is_not_a_row():
    latency, alltoall = tables(SARUS)
    assert (latency.version, latency.sizes()) == (
        "5.3.2", expected_sizes(0, 1 << 22, zero_row=True))
    # the page's prose has a line '16 nodes is slightly higher...' at column 0
    assert alltoall.sizes() == expected_sizes(1, 1 << 20)
    assert alltoall.value("avg_latency", 1048576) == 733.93


def test_rows_after_a_fence_belong_to_the_page_synthetic():
    block = "\n".join(WI4MPI.read_text().splitlines()[42:48])  # allreduce 5.6.2, 4 rows
    assert block.startswith("# OSU MPI Allreduce") and block.endswith("0.92")
    page = f"{block}\n```\n\nScaling, in us:\n\n```\n64 2.5\n128 3.1\n```\n"
    assert parse_osu_output(page).sizes() == [4, 8, 16, 32]
    with pytest.raises(OsuParseError, match="size 64 appears twice"):
        parse_osu_output(f"{block}\n64 2.5\n64 2.6\n")  # without the fence: read, refused


def test_a_line_left_of_an_indented_table_is_skipped_and_the_rows_go_on_synthetic():
    lines = SARUS.read_text().splitlines()
    block = lines[13:39]  # '   # OSU MPI Latency Test v5.3.2' and its 24 rows, indented
    prose = "16 nodes is slightly higher than the one computed for the container benchmark."
    text = "\n".join([*block[:10], prose, *block[10:]])  # at column 0, between rows
    assert parse_osu_output(text).sizes() == expected_sizes(0, 1 << 22, zero_row=True)
    with pytest.raises(OsuParseError, match="garbled data row"):
        parse_osu_output("\n".join(line.strip() for line in text.splitlines()))
