"""Speed and size of ``omb-review report`` on the bench tree, against ``check`` in the same run.

    python benchmarks/report_bench.py [--dir /tmp/omb-report-bench] [--nights 200] [--keep]
                                      [--repeat 3]

Generates the synthetic tree of ``review_bench.py`` (200 nights: 393,600 records, 1,968 series;
620 nights: 1.22 M), warms the cache once, then per round times in fresh processes:

- ``check``: the cached read plus the regression gate (what the report needs before drawing);
- ``report``: the same plus findings, chart data, comparison views and the page (its stages'
  seconds are printed, from ``OMB_REVIEW_TIMINGS=1``);
- ``paint``: the page opened in headless Chromium (Playwright, ``/usr/bin/chromium``): first
  contentful paint and the time until every script ran (``load``), from the page's own
  performance entries.

The summary prints medians, ``report / check`` (the report's own cost), the page's size and
the targets: report <= 8 s and <= 20 MB at 393,600 records, <= 20 s at 1.2 M, first paint
<= 3 s.  Timings are wall-clock seconds, with the CPU seconds of each command beside them: on a
shared machine the wall clock follows the load, the CPU seconds much less (say how busy it was).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from review_bench import generate

TARGET_S = {200: 8.0, 620: 20.0}  # report seconds per tree size (nights)
TARGET_MIB = 20.0
TARGET_PAINT_S = 3.0
BROWSER = os.environ.get("CHROMIUM", "/usr/bin/chromium")


def _cpu() -> float:
    use = resource.getrusage(resource.RUSAGE_CHILDREN)
    return use.ru_utime + use.ru_stime


def _cli(args: list[str]) -> tuple[float, float, str]:
    """(wall seconds, CPU seconds, stderr) of one omb-review command in a fresh process."""
    t0, c0 = time.perf_counter(), _cpu()
    done = subprocess.run([sys.executable, "-m", "omb_review.cli", *args], capture_output=True,
                          text=True, env={**os.environ, "OMB_REVIEW_TIMINGS": "1"})
    if done.returncode not in (0, 1):  # 1: check found the injected regression
        raise RuntimeError(f"omb-review {args[0]} failed:\n{done.stderr[-2000:]}")
    return time.perf_counter() - t0, _cpu() - c0, done.stderr


def paint(page_path: Path) -> dict:
    """First contentful paint and all-scripts-done (ms) of the page in headless Chromium."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=BROWSER, args=["--no-sandbox"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(page_path.as_uri(), timeout=120_000)
        page.wait_for_selector("body[data-ready='1']", timeout=120_000)
        fcp = page.evaluate("performance.getEntriesByName('first-contentful-paint')[0]"
                            ".startTime")
        load = page.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd")
        browser.close()
    return {"paint": fcp / 1000, "load": load / 1000}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/omb-report-bench"))
    parser.add_argument("--nights", type=int, default=200)
    parser.add_argument("--keep", action="store_true", help="reuse an existing tree")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    root, cache, out = args.dir / "perflogs", args.dir / "cache", args.dir / "out"
    if not (args.keep and root.is_dir()):
        shutil.rmtree(args.dir, ignore_errors=True)
        print(f"generated {generate(root, args.nights)} records")
    common = [str(root), "--cache-dir", str(cache)]
    _cli(["check", *common, "--json", str(args.dir / "warm.json")])  # warms the cache
    rounds: dict[str, list[float]] = {}
    for _ in range(args.repeat):
        measured = {}
        measured["check"], measured["check_cpu"], _ = _cli(
            ["check", *common, "--json", str(args.dir / "check.json")])
        measured["report"], measured["report_cpu"], err = _cli(
            ["report", *common, "-o", str(out)])
        measured |= paint(out / "report.html")
        for name, value in measured.items():
            rounds.setdefault(name, []).append(value)
        print(json.dumps({k: round(v, 2) for k, v in measured.items()}))
        print("  report stages: " + "; ".join(
            line.split("report: ", 1)[1] for line in err.splitlines() if "report: " in line))
    summary(rounds, (out / "report.html").stat().st_size / 2**20, args.nights)


def summary(rounds: dict[str, list[float]], mib: float, nights: int) -> None:
    med = {k: statistics.median(v) for k, v in rounds.items()}
    limit = TARGET_S.get(nights)
    print(f"\ncheck  {med['check']:6.2f} s  (CPU {med['check_cpu']:.2f} s)")
    print(f"report {med['report']:6.2f} s  (CPU {med['report_cpu']:.2f} s; "
          f"{med['report'] / med['check']:.2f} x check)"
          + (f"  target <= {limit:g} s: {'met' if med['report'] <= limit else 'MISSED'}"
             if limit else ""))
    print(f"page   {mib:6.1f} MiB  target <= {TARGET_MIB:g}: "
          f"{'met' if mib <= TARGET_MIB else 'MISSED'}")
    print(f"paint  {med['paint']:6.2f} s  (all scripts done {med['load']:.2f} s)  target <= "
          f"{TARGET_PAINT_S:g} s: {'met' if med['paint'] <= TARGET_PAINT_S else 'MISSED'}")


if __name__ == "__main__":
    main()
