"""Benchmark of the web app (``sdckit ui``) in a real browser: how long a person waits.

Run ``python benchmarks/bench_ui.py`` (needs the ui and test extras and Debian's Chromium at
/usr/bin/chromium). It starts ``sdckit ui`` as a fresh process, opens the Adult demo and
classifies it (8 quasi-identifiers, occupation sensitive), then times, in Chromium driven by
Playwright, each step's page from navigation until it is interactive (the page's ``load``
event and the element the step is about: preview, classification table with the QI risk,
risk charts and record table, the protect form, a finished run with its solution-space
chart, the compare page): the median of ``--repeat`` visits, the first (cold) visit shown
apart. It then starts a masking job that keeps a worker busy (MDAV, k=5, on 200,000 x 6
numbers) and times the same pages while it runs, and finally opens a 1,000,000-row CSV (8
columns) by its server-side path and times the click until the preview is shown.
"""

from __future__ import annotations

import argparse
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np
import pandas as pd

QIS = ["sex", "age", "race", "marital-status", "education", "native-country", "workclass",
       "salary-class"]  # fmt: skip
ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
        "--no-first-run", "--disable-background-networking", "--disable-component-update",
        "--disable-sync"]  # fmt: skip


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


#: The app's access token (``sdckit ui --token``).
TOKEN = secrets.token_urlsafe(24)


def _get(url: str, timeout: float = 30) -> bytes:
    """GET ``url`` with the token's cookie."""
    request = urllib.request.Request(url, headers={"Cookie": f"sdckit_ui_token={TOKEN}"})
    return urllib.request.urlopen(request, timeout=timeout).read()


def _serve(folder: Path) -> tuple[subprocess.Popen, str]:
    port = _port()
    process = subprocess.Popen(
        [sys.executable, "-m", "sdckit.cli", "ui", "--port", str(port), "--data", str(folder)]
        + ["--token", TOKEN],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            _get(url + "/", timeout=2)
            return process, url
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("sdckit ui did not start")


def _timed(page, url: str, selector: str) -> float:
    t0 = time.perf_counter()
    page.goto(url, wait_until="load")
    page.wait_for_selector(selector, state="attached", timeout=120_000)
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--rows", type=int, default=1_000_000)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    work = Path(tempfile.mkdtemp(prefix="sdckit-bench-ui-"))
    process, url = _serve(work / "projects")
    rows: list[tuple[str, str, float, float]] = []
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=ARGS)
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.goto(f"{url}/?token={TOKEN}")  # enters: the cookie is set
            page.goto(url + "/")
            page.click("#open-demo")
            page.wait_for_selector("#preview")
            pid = page.url.split("/p/")[1].split("/")[0]
            page.goto(f"{url}/p/{pid}/classify")
            for column in [*QIS, "occupation"]:
                role = "sensitive" if column == "occupation" else "quasi_identifying"
                with page.expect_response(lambda r: "/role/" in r.url):
                    page.select_option(f"select.role-select[data-column='{column}']", role)
            page.goto(f"{url}/p/{pid}/protect")
            page.fill("#l", "2")
            page.fill("#suppression", "5")
            page.click("#run-anonymize")
            page.wait_for_selector("#run-final", state="attached", timeout=300_000)
            run_url = page.url
            steps = [
                ("1 data", f"{url}/p/{pid}/data", "#preview"),
                ("2 classify", f"{url}/p/{pid}/classify", "#qi-contributions"),
                ("3 risk", f"{url}/p/{pid}/risk", "#records-table"),
                ("4 protect", f"{url}/p/{pid}/protect", "#anonymize-form"),
                ("5 run (k=5, l=2, 5%)", run_url, "#chart-space .main-svg"),
                ("6 compare", f"{url}/p/{pid}/compare", "#compare-form"),
            ]

            def measure(label: str) -> None:
                for name, address, selector in steps:
                    times = [_timed(page, address, selector) for _ in range(args.repeat + 1)]
                    rows.append((label, name, times[0], statistics.median(times[1:])))

            measure("idle")
            # a job that keeps a worker busy while the pages are used
            rng = np.random.default_rng(0)
            numbers = pd.DataFrame(
                {f"x{i}": rng.normal(50, 10, 200_000).round(2) for i in range(6)}
            )
            numbers_path = work / "numbers.csv"
            numbers.to_csv(numbers_path, index=False)
            page.goto(url + "/")
            page.fill("#server-path", str(numbers_path))
            page.click("#path-button")
            page.wait_for_selector("#preview")
            nid = page.url.split("/p/")[1].split("/")[0]
            page.goto(f"{url}/p/{nid}/protect?kind=mask")
            cols = ", ".join(numbers.columns)
            page.fill(
                "#job-yaml",
                page.input_value("#job-yaml").replace(
                    "methods: []", f"methods:\n- microaggregation: {{columns: [{cols}], k: 5}}"
                ),
            )
            page.click("#run-job")
            page.wait_for_selector("#run-progress")
            busy_run = page.url
            started = time.perf_counter()
            measure("job running")
            still = "running" in _get(busy_run + "/status").decode()
            print(
                f"(masking job still running after {time.perf_counter() - started:.1f} s "
                f"of page visits: {still})"
            )
            # a large file, opened by its path
            rng = np.random.default_rng(1)
            n = args.rows
            big = pd.DataFrame(
                {
                    "id": np.arange(n),
                    "age": rng.integers(17, 90, n),
                    "sex": rng.choice(["M", "F"], n),
                    "zip": rng.integers(10000, 99999, n),
                    "income": rng.normal(40000, 9000, n).round(0),
                    "region": rng.choice(list("ABCDEFGH"), n),
                    "occupation": rng.choice([f"occ{i}" for i in range(14)], n),
                    "score": rng.random(n).round(4),
                }
            )
            big_path = work / "big.csv"
            big.to_csv(big_path, index=False)
            size = big_path.stat().st_size / 1e6
            loads = []
            for _ in range(args.repeat):
                page.goto(url + "/")
                page.fill("#server-path", str(big_path))
                t0 = time.perf_counter()
                page.click("#path-button")
                page.wait_for_selector("#preview")
                loads.append(time.perf_counter() - t0)
            rows.append(
                (
                    "1,000,000 rows",
                    f"open {size:.0f} MB CSV -> preview",
                    loads[0],
                    statistics.median(loads),
                )
            )
            browser.close()
    finally:
        process.terminate()
        process.wait(20)
    print(f"\nsdckit ui, Chromium {ARGS[0]}, median of {args.repeat} visits after the first")
    print(f"{'while':<15} {'page':<34} {'first (s)':>10} {'median (s)':>11}")
    for label, name, first, median in rows:
        print(f"{label:<15} {name:<34} {first:>10.3f} {median:>11.3f}")


if __name__ == "__main__":
    main()
