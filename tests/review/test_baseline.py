"""`omb-review baseline` output read back by ReFrame's own external-reference reader."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from omb_review.cli import main

pipeline = pytest.importorskip("reframe.core.pipeline", reason="ReFrame is not installed")


def _read_with_reframe(path: Path, test: str) -> pipeline._ReferenceDict:
    """What a check with ``reference = {'$ref': path}`` gets: ReFrame's reader and validation."""
    refs = pipeline._ReferenceDict({}, test=None)
    refs._ReferenceDict__test_entry_name = test  # set by resolve_external_references()
    data = refs._read_ref_file(str(path))
    return pipeline._ReferenceDict(data, test=None)  # validates the nested tuple types


def test_baseline_yaml_loads_in_reframe_with_evidence(multiline, cache, tmp_path):
    out = tmp_path / "testsys.yaml"
    code = main(["baseline", str(multiline), "--system", "testsys", "-o", str(out),
                 "--cache-dir", str(cache)])
    assert code == 0
    text = out.read_text()
    assert "# n=" in text and "median=" in text
    refs = _read_with_reframe(out, "FakeOSUPt2pt")
    assert refs.index == ("$partition", "$environ", "benchmark", "placement")
    lat = refs["testsys:cpu"]["gnu-ompi"]["osu_latency"]["intra_socket"]["latency_8"]
    assert lat == (0.2, -0.5, 0.05, "us")  # lower is better: generous below, tight above
    bw = refs["testsys:cpu"]["gnu-mpich"]["osu_bw"]["intra_socket"]["bandwidth_65536"]
    assert bw[0] == 16420.0 and bw[1] == -0.05 and bw[2] == 0.5 and bw[3] == "MB/s"


def test_baseline_reuses_index_of_existing_reference_file(multiline, cache, tmp_path):
    out = tmp_path / "testsys.yaml"
    out.write_text(yaml.safe_dump({"FakeOSUPt2pt": {"$index": ["$partition", "benchmark"]}}))
    assert main(["baseline", str(multiline), "--system", "testsys", "-o", str(out),
                 "--cache-dir", str(cache)]) == 0
    refs = _read_with_reframe(out, "FakeOSUPt2pt")
    assert refs.index == ("$partition", "benchmark")
    assert refs["testsys:cpu"]["osu_latency"]["latency_1"][3] == "us"


def test_baseline_unknown_system_is_a_clear_error(multiline, cache, capsys):
    assert main(["baseline", str(multiline), "--system", "nope", "--cache-dir", str(cache)]) == 2
    assert "--system" in capsys.readouterr().err


def test_baseline_indexes_the_knob_that_splits_a_test(tmp_path):
    """Real multi-pair, multi-process and one-sided runs from before these had perflog
    columns (data/oldcolumns): the window size, the forked processes and the one-sided
    window/synchronisation are index entries (check attributes ReFrame resolves), so the
    two windows of OsuMbwMr get a reference each instead of sharing one."""
    out = tmp_path / "local.yaml"
    data = Path(__file__).parent / "data" / "oldcolumns"
    assert main(["baseline", str(data), "--system", "local", "-o", str(out),
                 "--no-cache"]) == 0
    text = out.read_text()
    assert "shares a reference" not in text
    refs = yaml.safe_load(text)
    assert refs["OsuMbwMr"]["$index"][-1] == "window_size"
    assert refs["OsuLatencyMp"]["$index"][-1] == "processes"
    assert refs["OsuOneSided"]["$index"][-2:] == ["rma_window", "rma_sync"]
