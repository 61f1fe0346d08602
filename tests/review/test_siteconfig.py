"""Link peaks declared by partitions of a ReFrame configuration feed the Hockney table."""

from __future__ import annotations

import re

from conftest import DATA, REPO

from omb_review.cli import main
from omb_review.read.siteconfig import link_peaks

SETTINGS = REPO / "reframe/config/settings.py"
SITE = """\
systems:
- name: local
  hostnames: ['.*']
  partitions:
  - name: default
    scheduler: local
    launcher: mpirun
    environs: [builtin]
    extras: {link_peak_mbs: {{ 20000 + 5000 }}}
  - name: other
    scheduler: local
    launcher: mpirun
    environs: [builtin]
"""


def test_our_site_configuration_declares_the_epyc_link_peak():
    peaks = link_peaks([SETTINGS])
    assert peaks["example-epyc:compute"] == peaks["example-epyc:nic_near"] == 25000.0
    assert "local:default" not in peaks  # the local box declares no link


def test_report_takes_the_peak_from_the_configuration(tmp_path):
    config = tmp_path / "site.yaml"  # YAML with a template expression, as ReFrame renders it
    config.write_text(SITE)
    assert link_peaks([config]) == {"local:default": 25000.0}
    out = tmp_path / "report"
    # our real runs: osu_latency 1 B - 64 KiB, intra-socket, on local:default
    assert main(["report", str(DATA / "ours"), "-o", str(out), "--no-cache",
                 "-C", str(config)]) == 0
    html = (out / "report.html").read_text()
    table = html[html.index("% of link peak"):html.index("</table>", html.index("% of link"))]
    rows = [re.findall(r"<td>(.*?)</td>", row) for row in re.findall(r"<tr[^>]*>(.*?)</tr>", table)]
    cells = [(float(r[2]), r[5]) for r in rows if r]  # beta (MB/s), % of link peak
    assert cells and all(pct == f"{100 * beta / 25000:.1f}%" for beta, pct in cells)


def test_unreadable_configuration_says_what_to_give(tmp_path, capsys):
    assert main(["report", str(tmp_path), "-o", str(tmp_path / "out"),
                 "--config", str(tmp_path / "none.py")]) == 2
    err = capsys.readouterr().err
    assert "none.py: no such ReFrame configuration file" in err and "--link-peak" in err


def test_the_results_directory_is_the_one_the_perflog_handler_writes(tmp_path, capsys):
    import subprocess

    example = REPO / "docs/examples/slurm_lmod_site.py"
    assert main(["results-dir", "-C", str(example)]) == 0
    assert capsys.readouterr().out.strip() == "/shared/reframe/perflogs"
    bare = tmp_path / "bare.yaml"  # no perflog handler: ReFrame's own, relative to the prefix
    bare.write_text(SITE.replace("{{ 20000 + 5000 }}", "1"))
    assert main(["results-dir", "-C", str(bare)]) == 2
    assert "'./perflogs' is ReFrame's own default" in capsys.readouterr().err
    # scripts/results-dir.sh, as upgrade.sh and cluster-ci.sh call it
    def where(**env: str) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", str(REPO / "scripts/results-dir.sh")], text=True,
                              capture_output=True, env={"PATH": "/usr/bin:/bin", **env})
    assert where(OMB_RFM_CONFIG=str(example)).stdout.strip() == "/shared/reframe/perflogs"
    refused = where(OMB_RFM_CONFIG=str(example), OMB_RESULTS_DIR=str(tmp_path))
    assert refused.returncode == 2 and "writes to /shared/reframe/perflogs" in refused.stderr
    above = where(OMB_RFM_CONFIG=str(example), OMB_RESULTS_DIR="/shared/reframe")
    assert above.returncode == 0 and above.stdout.strip() == "/shared/reframe"
    assert where(OMB_RESULTS_DIR=str(tmp_path)).stdout.strip() == str(tmp_path)
