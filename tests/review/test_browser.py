"""The report used as a person would, in a real headless Chromium driven by Playwright: open it,
filter the findings, follow a finding to its charts, hover a point; screenshots are checked.

Trees: a small synthetic one from ``benchmarks/review_bench.py`` (``bench_page`` in conftest:
an injected osu_latency step on alpha:cpu, synthetic, so the finding is known) and our real perflogs
(``tests/review/data/ours``, whose logged reference band is 0-7.35 us around 0.2-0.9 us runs).
"""

from __future__ import annotations

import base64
import shutil
from pathlib import Path

import pytest
from conftest import DATA

from omb_review.cli import main

BROWSER = shutil.which("chromium") or shutil.which("chromium-browser")
playwright = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
pytestmark = pytest.mark.skipif(BROWSER is None, reason="apt-get install chromium")
@pytest.fixture(scope="module")
def browser():
    with playwright.sync_playwright() as p:
        b = p.chromium.launch(executable_path=BROWSER, args=["--no-sandbox"])
        yield b
        b.close()


def _open(browser, page_path: Path):
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(page_path.as_uri())
    page.wait_for_selector("body[data-ready='1']", timeout=60_000)
    return page, errors


def _ink(browser, png: bytes) -> tuple[float, int]:
    """(share of non-white pixels, number of blue-ish data pixels) of a screenshot."""
    page = browser.new_page()
    page.set_content(f"<img id=i src='data:image/png;base64,{base64.b64encode(png).decode()}'>")
    page.wait_for_function("document.getElementById('i').complete")
    ink, blue = page.evaluate("""() => { const i = document.getElementById('i');
      const c = document.createElement('canvas'); c.width = i.naturalWidth;
      c.height = i.naturalHeight; const x = c.getContext('2d'); x.drawImage(i, 0, 0);
      const d = x.getImageData(0, 0, c.width, c.height).data; let ink = 0, blue = 0;
      for (let k = 0; k < d.length; k += 4) {
        if (d[k] + d[k + 1] + d[k + 2] < 720) ink++;
        if (d[k + 2] > 150 && d[k] < 80 && d[k + 1] > 90 && d[k + 1] < 150) blue++; }
      return [ink / (d.length / 4), blue]; }""")
    page.close()
    return ink, blue


def test_filter_follow_a_finding_and_hover_a_point(browser, bench_page, tmp_path):
    page, errors = _open(browser, bench_page)
    top = page.screenshot()
    (tmp_path / "top.png").write_bytes(top)
    assert _ink(browser, top)[0] > 0.02, "the first screen is blank"
    rows = page.locator("#findings-table tbody tr")
    assert rows.count() >= 1 and "alpha" in rows.first.inner_text()
    page.select_option("#filter-system", "beta")  # the step was injected on alpha only
    assert all("alpha" not in t for t in rows.all_inner_texts())
    page.select_option("#filter-system", "alpha")
    page.select_option("#filter-lineage", "gnu-mpich")  # the environment's lineage
    assert all("gnu-ompi" not in t for t in rows.all_inner_texts())
    page.select_option("#filter-lineage", "gnu-ompi")
    row = page.locator("#findings-table tbody tr.regression", has_text="inter_node").first
    assert "osu_latency" in row.inner_text()
    row.click()
    page.wait_for_selector("#detail-ts .scatterlayer .point")
    assert page.evaluate("location.hash").startswith("#f")
    assert "osu_latency inter_node" in page.inner_text("#detail-title")
    assert page.locator("#detail-sizes tr").count() > 2  # per-size detail of the finding
    points = page.locator("#detail-ts .scatterlayer .trace").last.locator("path.point")
    box = points.nth(points.count() - 1).bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    hover = page.wait_for_selector(".hoverlayer .hovertext").text_content()
    assert "job" in hover and "UTC" in hover and "nodes" in hover and "mpi" in hover
    shot = page.locator("#detail").screenshot()
    (tmp_path / "detail.png").write_bytes(shot)
    ink, blue = _ink(browser, shot)
    assert ink > 0.05 and blue > 100, "no data points visible in the finding's charts"
    curve = page.evaluate("document.getElementById('detail-curve').data.map(t => t.name)")
    assert curve[0] == "before" and curve[1].startswith("after")
    assert not errors


def test_views_draw_when_scrolled_to(browser, bench_page):
    page, errors = _open(browser, bench_page)
    for kind in ("libraries", "placements", "algorithms", "scaling", "hockney"):
        card = page.locator(f"#view-{kind} .card").first
        card.scroll_into_view_if_needed()
        page.wait_for_selector(f"#view-{kind} .card .plot[data-drawn='1']")
        assert _ink(browser, card.screenshot())[0] > 0.03, kind
    heat = page.evaluate("document.querySelector('#view-algorithms .plot').data[0]")
    assert heat["type"] == "heatmap" and len(heat["y"]) == 3  # bench: three algorithms
    assert not errors


def test_reference_band_never_hides_our_data(browser, tmp_path):
    """Our real runs log a band of 0-7.35 us around values of 0.2-0.9 us: the axis follows the
    values, so they are not squashed into a line at the bottom."""
    out = tmp_path / "out"
    assert main(["report", str(DATA / "ours"), "-o", str(out), "--no-cache"]) == 0
    page, errors = _open(browser, out / "report.html")
    page.check("#filter-all")  # our runs have no finding: show every curve
    page.locator("#findings-table tbody tr", has_text="osu_latency").first.click()
    page.wait_for_selector("#detail-ts .scatterlayer .point")
    banded = []
    for option in page.locator("#detail-size option").all():
        page.select_option("#detail-size", option.get_attribute("value"))
        data = page.evaluate("document.getElementById('detail-ts').data")
        banded = [v for t in data if t.get("fill") == "tonexty" for v in t["y"]]
        if banded:
            break
    assert banded, "no osu_latency variable with its logged reference band"
    values = [v for t in data if t.get("mode") == "markers" for v in t["y"]]
    band_top = max(banded)
    low, high = page.evaluate("document.getElementById('detail-ts').layout.yaxis.range")
    assert low <= min(values) and max(values) <= high < band_top
    assert (high - low) < 2 * (max(values) - min(values)) + 0.2 * max(values)
    assert not errors
