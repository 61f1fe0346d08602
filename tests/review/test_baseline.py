"""`omb-review baseline` output read back by ReFrame's own external-reference reader."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
import yaml

from omb_review.cli import main
from omb_review.read.ingest import load
from omb_review.read.series import grouped
from omb_review.references import baseline

DATA = Path(__file__).parent / "data"

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
    assert refs.index == ("$partition", "$environ", "benchmark", "placement", "buffers",
                          "num_tasks")
    lat = refs["testsys:cpu"]["gnu-ompi"]["osu_latency"]["intra_socket"]["H H"][2]["latency_8"]
    assert lat == (0.2, -0.5, 0.05, "us")  # lower is better: generous below, tight above
    bw = refs["testsys:cpu"]["gnu-mpich"]["osu_bw"]["intra_socket"]["H H"][2]["bandwidth_65536"]
    assert bw[0] == 16420.0 and bw[1] == -0.05 and bw[2] == 0.5 and bw[3] == "MB/s"


def test_baseline_reuses_index_of_existing_reference_file(multiline, cache, tmp_path):
    """An existing $index that tells the series apart is kept (here: another order, no
    buffers: every record has H H)."""
    out = tmp_path / "testsys.yaml"
    index = ["$partition", "placement", "$environ", "benchmark", "num_tasks"]
    out.write_text(yaml.safe_dump({"FakeOSUPt2pt": {"$index": index}}))
    assert main(["baseline", str(multiline), "--system", "testsys", "-o", str(out),
                 "--cache-dir", str(cache)]) == 0
    refs = _read_with_reframe(out, "FakeOSUPt2pt")
    assert refs.index == tuple(index)
    assert refs["testsys:cpu"]["intra_socket"]["gnu-ompi"]["osu_latency"][2]["latency_1"][3] == "us"


def test_an_existing_index_that_merges_series_is_replaced_and_said(multiline, cache, tmp_path,
                                                                   capsys):
    out = tmp_path / "testsys.yaml"
    out.write_text(yaml.safe_dump({"FakeOSUPt2pt": {"$index": ["$partition", "benchmark"]}}))
    assert main(["baseline", str(multiline), "--system", "testsys", "-o", str(out),
                 "--cache-dir", str(cache)]) == 0
    text = out.read_text()
    assert ("FakeOSUPt2pt: the existing $index [$partition, benchmark] is replaced by "
            "[$partition, $environ, benchmark, placement, buffers, num_tasks]: it gives two "
            "series one key (it lacks $environ, placement, buffers, num_tasks)") in text
    assert "shares a reference key" not in text and "0 shared keys" in capsys.readouterr().out


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


def _relabelled(src: Path, dst: Path, rename: tuple[str, str] = ("", ""), **values: str) -> None:
    """Append ``src``'s records to ``dst`` with ``values`` put in their columns and the test
    name's parameter ``rename[0]`` made ``rename[1]`` (synthetic labels on real measurements;
    ``dst`` gets ``src``'s header if it is new)."""
    header, *rows = src.read_text().splitlines()
    cols = header.split("|")
    out = [] if dst.exists() else [header]
    for row in rows:
        record = dict(zip(cols, row.split("|"), strict=True)) | values
        for name in ("name", "display_name"):
            record[name] = record[name].replace(*rename)
        out.append("|".join(record[c] for c in cols))
    dst.parent.mkdir(parents=True, exist_ok=True)
    with dst.open("a") as f:
        f.write("\n".join(out) + "\n")


def test_no_two_measurements_share_a_key_synthetic_device_buffers_and_all_nodes(tmp_path,
                                                                                capsys):
    """Real osu_latency/osu_bw H H runs (data/trend) and osu_init on 1 node (data/startup, this
    suite's OsuStartup), each beside a copy re-labelled D D and 2 nodes (synthetic labels):
    the $index our reference files have ([$partition, $environ, benchmark, placement] and
    OsuStartup's [.., nodes], not a perflog column) would give both one key; the derived index
    gives every series its own."""
    tree = tmp_path / "perflogs"
    pt2pt = DATA / "trend" / "local" / "default" / "OsuPt2Pt.log"
    startup = DATA / "startup" / "local" / "default" / "OsuStartup.log"
    _relabelled(pt2pt, tree / "local" / "default" / "OsuPt2Pt.log")
    _relabelled(pt2pt, tree / "local" / "default" / "OsuPt2Pt.log",
                ("%buffers=H H", "%buffers=D D"), buffers="D D")
    _relabelled(startup, tree / "local" / "default" / "OsuStartup.log")
    _relabelled(startup, tree / "local" / "default" / "OsuStartup.log",
                ("%nodes=1", "%nodes=2"), num_nodes="2", num_tasks="2")
    out = tmp_path / "local.yaml"
    out.write_text(yaml.safe_dump({
        "OsuPt2Pt": {"$index": ["$partition", "$environ", "benchmark", "placement"]},
        "OsuStartup": {"$index": ["$partition", "$environ", "benchmark", "nodes"]}}))
    assert main(["baseline", str(tree), "--system", "local", "-o", str(out), "--no-cache"]) == 0
    said = capsys.readouterr().out
    ds = load(tree, use_cache=False)
    series = grouped(ds.frame).height
    assert f"wrote {series} references" in said and "0 shared keys" in said
    refs = yaml.safe_load(out.read_text())
    assert refs["OsuPt2Pt"]["$index"] == ["$partition", "$environ", "benchmark", "placement",
                                          "buffers", "num_nodes", "num_tasks"]
    assert refs["OsuStartup"]["$index"] == ["$partition", "$environ", "benchmark", "mapping",
                                            "num_nodes", "num_tasks"]
    lat = refs["OsuPt2Pt"]["local:default"]["system-openmpi"]["osu_latency"]["intra_socket"]
    assert lat["H H"][1][2]["latency_8"] == lat["D D"][1][2]["latency_8"]  # same values
    init = refs["OsuStartup"]["local:default"]["default-mpi"]["osu_init"]["node"]
    assert set(init) == {1, 2} and init[1][1]["init_avg"][0] == init[2][2]["init_avg"][0]
    for test in ("OsuPt2Pt", "OsuStartup"):
        _read_with_reframe(out, test)


def test_one_session_gives_provisional_references_from_osus_own_spread(tmp_path, capsys):
    """data/curves: three real sessions of OsuPt2Pt (references as usual) and one of
    OsuCollective, whose OSU output has min and max latency per size: provisional references,
    their bad-side bound the spread OSU reported (osu_bcast 8 B: avg 0.42 us, max 0.74 us)."""
    out = tmp_path / "local.yaml"
    assert main(["baseline", str(DATA / "curves"), "--system", "local", "-o", str(out),
                 "--no-cache"]) == 0
    text = out.read_text()
    assert "provisional" in capsys.readouterr().out
    refs = _read_with_reframe(out, "OsuCollective")
    bcast = refs["local:default"]["system-openmpi"]["osu_bcast"]["core"][1][2]["default"]
    assert bcast["avg_latency_8"] == (0.42, -0.5, 0.762, "us")
    line = next(ln for ln in text.splitlines() if ln.strip().startswith("avg_latency_8:"))
    assert "PROVISIONAL (1 of 3 runs; bound from OSU's own min/max spread 0.762)" in line
    assert line.split(":", 1)[1].strip().startswith("[0.42, -0.5, 0.762, us]")
    pt2pt = next(ln for ln in text.splitlines() if ln.strip().startswith("latency_8:"))
    assert "PROVISIONAL" not in pt2pt and "# n=3" in pt2pt
    assert "entries are PROVISIONAL: from fewer than 3 runs" in text


def test_too_few_runs_without_provisional_references_is_not_a_success(tmp_path, capsys):
    """--no-provisional: the one-session OsuCollective series are listed with their runs and
    the runs needed, the rest written, exit 4; with only such series nothing is written, 3."""
    out = tmp_path / "local.yaml"
    code = main(["baseline", str(DATA / "curves"), "--system", "local", "-o", str(out),
                 "--no-cache", "--no-provisional"])
    err = capsys.readouterr().err
    assert code == 4 and "PROVISIONAL" not in out.read_text()
    assert "NO REFERENCE local:default system-openmpi mpi=openmpi osu_bcast alg=default" in err
    assert "OsuCollective.avg_latency_8 [us]: 1 runs, 3 needed" in err
    only = tmp_path / "one"
    _relabelled(DATA / "curves" / "local" / "default" / "OsuCollective.log",
                only / "local" / "default" / "OsuCollective.log")
    assert main(["baseline", str(only), "--system", "local", "-o", str(tmp_path / "x.yaml"),
                 "--no-cache", "--no-provisional"]) == 3
    assert "nothing written" in capsys.readouterr().err and not (tmp_path / "x.yaml").exists()


def test_baseline_of_a_perflog_without_system_column_says_what_to_add(tmp_path, capsys):
    """A real site perflog whose format has no system/partition (data/rfm_site_oneline_named):
    references are per system, so the error says which columns the handler must write."""
    data = DATA / "rfm_site_oneline_named"
    assert main(["baseline", str(data), "--system", "sitebox", "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert "systems present: none; 20 records name no system" in err
    assert "%(check_system)s and %(check_partition)s" in err


def test_baseline_of_a_format_without_result_column_uses_its_runs_system_added_by_the_test():
    """The same real site perflog has no `result` column either; with the system and partition
    it lacks set by the test (synthetic columns), its runs with values give references and its
    failed runs (no values) are named, instead of 'no passing records'."""
    frame = load(DATA / "rfm_site_oneline_named", use_cache=False).frame.with_columns(
        system=pl.lit("sitebox").cast(pl.Categorical),
        partition=pl.lit("login").cast(pl.Categorical))
    assert frame["result"].null_count() == frame.height
    refs = baseline.derive(frame, "sitebox", {})
    assert refs.written == 10
    assert len(refs.short) == 10 and all("every run failed" in s for s in refs.short)


def test_a_rate_noisier_than_its_value_gets_reframes_least_lower_bound_and_says_so():
    """A bandwidth whose 5th percentile is far below its median (an idle-then-busy series) would
    need a lower bound below -1, which ReFrame refuses ("invalid low threshold value")."""
    from datetime import datetime, timedelta

    from omb_review.judge.detect import Settings

    t0 = datetime(2026, 1, 1)
    values = [1000.0, 1100.0, 900.0, 20.0, 1050.0, 980.0, 30.0, 1020.0]
    row = {"unit": "MB/s", "perf_var": "bandwidth_1024", "value": values,
           "time": [t0 + timedelta(days=i) for i in range(len(values))]}
    entry = baseline._entry(row, (), None, Settings(), baseline.Limits(), {})
    assert entry.lower == -1.0 and entry.upper == 0.5
    assert "clamped to -1 (ReFrame's least" in entry.evidence


def test_runs_of_another_mode_are_left_out_of_a_reference_and_said():
    """Three nightly runs (OSU's default counts) and one quick run (200/20) before it: the
    reference is for the mode that will be checked against it, the newest run's."""
    from datetime import datetime, timedelta

    from omb_review.judge.detect import Settings

    t0 = datetime(2026, 1, 1)
    row = {"unit": "us", "perf_var": "latency_8", "value": [2.0, 2.1, 1.9, 9.0, 2.0, 2.05],
           "time": [t0 + timedelta(days=i) for i in range(6)],
           "iterations": [None, None, None, "200", None, None],
           "warmup": [None, None, None, "20", None, None]}
    entry = baseline._entry(row, (), None, Settings(), baseline.Limits(), {})
    assert entry.ref == 2.0  # with the quick run: 2.025
    assert "(1 runs of other OSU counts -i/-x 200/20 left out; these ran default/default)" \
        in entry.evidence
