"""The HTML report opened in a real headless browser: every figure must decode and show."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from omb_review.cli import main

BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"]
BENCH = Path(__file__).parents[2] / "benchmarks" / "review_bench.py"


def _generator():
    spec = importlib.util.spec_from_file_location("review_bench", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.generate


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    """Report over a small synthetic tree that has every kind of figure (collectives too)."""
    tmp = tmp_path_factory.mktemp("browser")
    _generator()(tmp / "perflogs", nights=30)
    out = tmp / "report"
    assert main(["report", str(tmp / "perflogs"), "-o", str(out), "--no-cache",
                 "--max-figures", "2", "--link-peak", "alpha:cpu=12500"]) == 0
    return out / "report.html"


def test_report_has_every_kind_of_figure(report):
    html = report.read_text()
    for heading in ("Time series", "vs message size", "Repeated runs", "Over scales",
                    "Latency maps", "Hockney model"):
        section = html.split(heading, 1)[1].split("<h2>", 1)[0]
        assert "data:image/png;base64," in section, heading


@pytest.mark.skipif(BROWSER is None, reason="chromium not installed (apt-get install chromium)")
def test_report_renders_in_headless_chromium(report, tmp_path):
    dom = subprocess.run([BROWSER, *FLAGS, "--virtual-time-budget=10000", "--dump-dom",
                          report.as_uri()], capture_output=True, text=True, timeout=120).stdout
    shown = re.search(r'data-figures-rendered="(\d+)"', dom)
    total = re.search(r'data-figures="(\d+)"', dom)
    assert shown and total, "the page script did not run"
    assert int(total[1]) >= 10 and shown[1] == total[1]
    shot = tmp_path / "shot.png"
    subprocess.run([BROWSER, *FLAGS, "--virtual-time-budget=10000", f"--screenshot={shot}",
                    "--window-size=1200,6000", report.as_uri()],
                   capture_output=True, timeout=120, check=True)
    from matplotlib.image import imread

    pixels = imread(shot)[..., :3]
    blue = (abs(pixels - (0x1F / 255, 0x77 / 255, 0xB4 / 255)).max(axis=-1) < 0.08).sum()
    assert blue > 300, "no matplotlib-blue data points visible in the screenshot"
