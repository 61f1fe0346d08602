"""The check gate on the real sample: clean history passes, an injected 10% step fails (one
session decides: --confirm 1)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from omb_review.cli import main
from omb_review.report.page import read_payload


def _inject(root: Path, factor: float, environ: str | None = "gnu-ompi") -> None:
    """Make the latest session's latencies of ``environ`` (``None``: of every library)
    ``factor`` slower (synthetic, in the real files). One library slower is its regression;
    every library of the session slower is the machine's (the canary)."""
    log = root / "testsys" / "cpu" / "FakeOSUPt2pt.log"
    lines = log.read_text().splitlines()
    header = lines[0].split("|")
    t, v, u = header.index("job_completion_time"), header.index("perf_value"), \
        header.index("perf_unit")
    e = header.index("environ")
    last = max(line.split("|")[t] for line in lines[1:])
    for n, line in enumerate(lines[1:], 1):
        f = line.split("|")
        if f[t] == last and f[u] == "us" and f[v] != "null" and environ in (None, f[e]):
            f[v] = f"{float(f[v]) * factor:.2f}"
            lines[n] = "|".join(f)
    log.write_text("\n".join(lines) + "\n")


def test_check_passes_on_real_history(multiline, cache, tmp_path, capsys):
    out = tmp_path / "check.json"
    assert main(["check", str(multiline), "--latest", "1", "--cache-dir", str(cache),
                 "--json", str(out)]) == 0
    assert json.loads(out.read_text())["counts"]["regression"] == 0


def test_every_library_slower_in_the_same_session_is_shared_not_a_regression(
        multiline, cache, tmp_path, capsys):
    _inject(multiline, 1.10, environ=None)
    out = tmp_path / "check.json"
    code = main(["check", str(multiline), "--latest", "1", "--confirm", "1", "--cache-dir",
                 str(cache), "--json", str(out)])
    printed = capsys.readouterr().out
    assert code == 5 and "REGRESSION" not in printed
    assert "SHARED testsys:cpu gnu-ompi" in printed and "SHARED testsys:cpu gnu-mpich" in printed
    assert "the machine or the system changed" in printed
    assert main(["check", str(multiline), "--latest", "1", "--confirm", "1", "--cache-dir",
                 str(cache), "--json", str(out), "--no-canary"]) == 1


def test_check_fails_and_names_series_after_10pct_slower_latency(multiline, cache, tmp_path,
                                                                 capsys):
    _inject(multiline, 1.10)
    out = tmp_path / "check.json"
    code = main(["check", str(multiline), "--latest", "1", "--confirm", "1", "--cache-dir",
                 str(cache), "--json", str(out)])
    printed = capsys.readouterr().out
    assert code == 1
    assert "REGRESSION testsys:cpu gnu-ompi" in printed and "FakeOSUPt2pt: 1 B-8 B" in printed
    assert "8 B +10.0%" in printed
    flagged = [s for s in json.loads(out.read_text())["series"] if s["status"] == "regression"]
    assert {s["placement"] for s in flagged} == {"intra_socket"}  # inter_node failed: no value
    assert all(s["first_bad_run"]["session_tag"] == "post" for s in flagged)


def test_real_sample_regression_is_one_finding_per_curve(multiline, cache, tmp_path):
    _inject(multiline, 1.10)
    out = tmp_path / "check.json"
    code = main(["check", str(multiline), "--latest", "1", "--confirm", "1", "--cache-dir",
                 str(cache), "--json", str(out)])
    result = json.loads(out.read_text())
    assert code == 1
    flagged = [s for s in result["series"] if s["status"] == "regression"]
    curves = {f["curve"] for f in result["findings"] if f["status"] == "regression"}
    assert len(flagged) > len(curves) == len(result["findings"])
    for f in result["findings"]:
        assert f["first_bad_run"]["session_tag"] == "post"
        assert len(f["series"]) == len(f["sizes"]) + len(f["figures"])


def test_report_writes_one_html_file(multiline, cache, tmp_path):
    out = tmp_path / "report"
    assert main(["report", str(multiline), "-o", str(out), "--cache-dir", str(cache),
                 "--split-tag", "post", "--link-peak", "testsys:cpu=25000"]) == 0
    html = (out / "report.html").read_text()
    assert list(out.iterdir()) == [out / "report.html"] and read_payload(out / "report.html")[
        "charts"]
    assert "% of link peak" in html and "Hockney" in html
    # this sample's latency curves are flat (0.2 us up to 8 B): no bandwidth term to fit
    assert "not resolved (sizes too small)" in html and "<td>inf" not in html


def test_missing_directory_says_what_to_do(tmp_path, capsys):
    assert main(["check", str(tmp_path / "nothere"), "--no-cache"]) == 2
    assert "give the perflog directory" in capsys.readouterr().err


def test_frame_has_no_regression_rows_without_values(multiline, cache):
    from omb_review.read.ingest import load

    f = load(multiline, cache_dir=cache).frame
    assert f.filter(pl.col("result") == "pass")["value"].null_count() == 0
