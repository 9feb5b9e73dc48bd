"""The web app (``sdckit ui``) driven in a real browser: Debian's Chromium via Playwright.

The whole workflow on Adult (load, classify with ARX's hierarchies, k=5 + distinct l=2 with 5%
suppression, run, the same optimum as the command line, export, the exported job file re-run
by ``sdckit anonymize`` writes the same bytes), a masking run, three runs on one R-U map,
progress and cancel, bad input (the command line's message, the server going on), and a web
page of another site that tries to drive the app (DNS rebinding, a cross-site form).
Screenshots of every step are saved (see ``tests/ui_support.py``).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sdckit.datasets import ADULT_COLUMNS
from ui_support import (
    CHROMIUM,
    CHROMIUM_ARGS,
    REBOUND_HOST,
    UIServer,
    htmx_settled,
    require_browser,
    screenshot,
    wait_for_run,
)

QUASI_IDENTIFIERS = tuple(c for c in ADULT_COLUMNS if c != "occupation")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    require_browser()
    srv = UIServer(tmp_path_factory.mktemp("ui") / "projects")
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def browser():
    require_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser, server):
    context = browser.new_context(viewport={"width": 1400, "height": 900}, accept_downloads=True)
    pg = context.new_page()
    pg.set_default_timeout(60_000)
    server.enter(pg)
    yield pg
    context.close()


def open_demo(page, server) -> str:
    """Open the Adult demo project from the start page; its id."""
    page.goto(server.url + "/")
    page.click("#open-demo")
    page.wait_for_selector("#preview")
    return page.url.split("/p/")[1].split("/")[0]


def classify(page, roles: dict[str, str]) -> None:
    """Set roles on the Classify page, one select at a time (each posts and re-renders)."""
    for column, role in roles.items():
        htmx_settled(page)
        with page.expect_response(lambda r, c=column: "/role/" in r.url):
            page.select_option(f"select.role-select[data-column='{column}']", role)
        page.wait_for_selector(
            f"#classify-table tr.role-{role}[data-column='{column}']", state="attached"
        )
        htmx_settled(page)


def adult_roles() -> dict[str, str]:
    return {**{q: "quasi_identifying" for q in QUASI_IDENTIFIERS}, "occupation": "sensitive"}


def download(page, selector: str, target: Path) -> Path:
    with page.expect_download() as info:
        page.click(selector)
    info.value.save_as(target)
    return target


def test_whole_workflow_on_adult_matches_the_command_line(page, server, tmp_path):
    from sdckit.datasets import load_adult
    from sdckit.jobs.anonymize import run_anonymize_job
    from sdckit.jobs.demo import demo_job_path
    from sdckit.risk.analyze import analyze

    # 1 data: the demo, previewed
    open_demo(page, server)
    assert page.locator("#preview tr").count() == 21  # header + 20 rows
    screenshot(page, "01-data")
    page.click("#types-next")
    page.wait_for_selector("#classify-table")

    # 2 classify: roles; the hierarchies of ARX are attached to the demo's columns
    classify(page, adult_roles())
    # the risk panel refreshes after each role change: wait for the one with every QI
    page.wait_for_function(
        "n => document.querySelectorAll('#qi-contributions tr').length === n",
        arg=1 + len(QUASI_IDENTIFIERS),
    )
    page.click("#classify-table a.hierarchy-link >> nth=1")  # age's hierarchy
    page.wait_for_selector("#hierarchy-table")
    assert "level 4" in page.inner_text("#hierarchy-table")
    screenshot(page, "02-classify")

    # 3 risk: the numbers of `sdckit analyze`
    page.click("#to-risk")
    page.wait_for_selector("#risk-summary")
    page.wait_for_selector("#chart-sizes .main-svg")
    expected = analyze(load_adult().data, list(QUASI_IDENTIFIERS), ["occupation"])["prosecutor"]
    assert page.inner_text("#prosecutor") == (f"{expected['max']:.4f} / {expected['average']:.4f}")
    page.wait_for_selector("#records-table")
    page.fill("#min-risk", "1")
    page.press("#min-risk", "Enter")
    page.wait_for_function(
        "() => document.querySelector('#records-count').textContent.includes('"
        f"{int(analyze(load_adult().data, list(QUASI_IDENTIFIERS))['sample_uniques']):,}"
        " records match')"
    )
    screenshot(page, "03-risk")

    # 4 protect: k=5 + distinct 2-diversity of occupation, 5% suppression
    page.click("#nav-protect")
    page.fill("#k", "5")
    page.fill("#l", "2")
    page.fill("#suppression", "5")
    page.fill("#run-label", "k=5 l=2 5%")
    screenshot(page, "04-protect")
    page.click("#run-anonymize")
    assert wait_for_run(page) == "done"
    screenshot(page, "05-run")

    # the same optimum as the command line's demo job
    cli = run_anonymize_job(
        __import__("sdckit.jobs.config", fromlist=["load_job"])
        .load_job(demo_job_path())
        .with_output(path=None, report=None, json=None)
    ).summary
    shown = page.inner_text("#transformation")
    assert shown == ", ".join(f"{k}={v}" for k, v in cli["transformation"].items())
    assert page.inner_text("#suppressed") == f"{cli['suppressed_records']:,}"
    assert page.inner_text("#verified") == "yes"

    # 5 explore: a node of the solution space, and before/after distributions
    page.wait_for_selector("#chart-space .main-svg")
    page.click("#best-nodes button.view-node >> nth=0")
    page.wait_for_selector("#node-preview")
    assert "Transformation" in page.inner_text("#node-title")
    page.select_option("#distribution-column", "age")
    page.wait_for_function(
        "() => (document.querySelector('#distribution .gtitle') || {}).textContent"
        " === 'age: before and after'"
    )
    screenshot(page, "06-explore")

    # 6 export: the job file re-runs to the same bytes
    job = download(page, "#file-job-yaml", tmp_path / "job.yaml")
    release = download(page, "#file-release-csv", tmp_path / "ui_release.csv")
    rerun = tmp_path / "rerun"
    rerun.mkdir()
    shutil.copy(job, rerun / "job.yaml")
    done = subprocess.run(
        [sys.executable, "-m", "sdckit.cli", "anonymize", "--config", "job.yaml", "--quiet"],
        cwd=rerun,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    assert (rerun / "release.csv").read_bytes() == release.read_bytes()


def test_masking_run_and_three_runs_on_the_ru_map(page, server):
    pid = open_demo(page, server)
    page.goto(f"{server.url}/p/{pid}/classify")
    classify(page, adult_roles())

    # a masking run: the job file proposed for the classification (local suppression, k=3)
    page.goto(f"{server.url}/p/{pid}/protect?kind=mask")
    assert "local_suppression" in page.input_value("#job-yaml")
    page.fill("#job-label", "local suppression k=3")
    page.click("#run-job")
    assert wait_for_run(page) == "done"
    assert page.locator("#summary").count() == 1
    screenshot(page, "07-mask")

    for k, suppression in (("2", "0"), ("10", "5")):
        page.goto(f"{server.url}/p/{pid}/protect")
        page.fill("#k", k)
        page.fill("#suppression", suppression)
        page.fill("#run-label", f"k={k} {suppression}%")
        page.click("#run-anonymize")
        assert wait_for_run(page) == "done"

    page.click("#nav-compare")
    assert page.locator("input.compare-check").count() == 3
    page.click("#compare-button")
    assert wait_for_run(page) == "done"
    page.wait_for_selector("#chart-ru .main-svg")
    assert page.locator("#chart-ru .scatterlayer .point").count() == 3
    labels = page.inner_text("#ranking")
    for label in ("local suppression k=3", "k=2 0%", "k=10 5%"):
        assert label in labels
    screenshot(page, "08-compare")


def test_progress_and_cancel_while_the_app_stays_usable(page, server, tmp_path):
    import numpy as np
    import pandas as pd

    # a file on the server: MDAV on 250,000 x 6 numbers keeps a worker busy for many seconds
    # (60,000 rows took about a second once MDAV got faster, and the run could end before the
    # cancel button was pressed); a cancelled run ends at once, so the size costs nothing else
    rng = np.random.default_rng(1)
    data = pd.DataFrame({f"x{i}": rng.normal(50, 10, 250_000).round(2) for i in range(6)})
    path = tmp_path / "numbers.csv"
    data.to_csv(path, index=False)
    page.goto(server.url + "/")
    page.fill("#server-path", str(path))
    page.click("#path-button")
    page.wait_for_selector("#preview")
    pid = page.url.split("/p/")[1].split("/")[0]
    page.goto(f"{server.url}/p/{pid}/protect?kind=mask")
    job = page.input_value("#job-yaml")
    columns = ", ".join(f"x{i}" for i in range(6))
    page.fill(
        "#job-yaml",
        job.replace("methods: []", f"methods:\n- microaggregation: {{columns: [{columns}], k: 5}}"),
    )
    page.click("#run-job")
    page.wait_for_selector("#run-progress")
    assert page.inner_text("#run-state") == "running"
    screenshot(page, "09-running")
    # the server answers other pages while the job runs in its worker
    other = page.context.new_page()
    other.goto(f"{server.url}/p/{pid}/data")
    other.wait_for_selector("#preview")
    other.close()
    page.click("#cancel-run")
    assert wait_for_run(page) == "cancelled"
    assert "nothing was written" in page.inner_text("#run-cancelled")
    folder = next(p for p in (server.data_dir / pid / "runs").iterdir())
    assert not (folder / "release.csv").exists()
    screenshot(page, "10-cancelled")


def test_bad_input_gives_the_command_line_message_and_the_server_goes_on(page, server, tmp_path):
    # a file that is not CSV
    picture = tmp_path / "photo.png"
    picture.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    page.goto(server.url + "/")
    page.set_input_files("#upload-file", str(picture))
    page.click("#upload-button")
    assert "is not a CSV or Parquet file" in page.inner_text("#error-message")
    disguised = tmp_path / "binary.csv"
    disguised.write_bytes(bytes(range(256)) * 8)
    page.goto(server.url + "/")
    page.set_input_files("#upload-file", str(disguised))
    page.click("#upload-button")
    assert "not a UTF-8 text file" in page.inner_text("#error-message") or (
        "binary" in page.inner_text("#error-message")
    )
    screenshot(page, "11-bad-upload")

    # a hierarchy that misses values of its column: the loader's message
    pid = open_demo(page, server)
    page.goto(f"{server.url}/p/{pid}/classify")
    partial = tmp_path / "age_hierarchy.csv"
    partial.write_text("17;15-19;*\n18;15-19;*\n")
    row = "#classify-table tr[data-column='age']"
    page.set_input_files(f"{row} input.hierarchy-file", str(partial))
    page.click(f"{row} button.hierarchy-apply")
    page.wait_for_selector("#error-message")
    message = page.inner_text("#error-message")
    assert "age" in message and "hierarchy" in message.lower()
    htmx_settled(page)
    screenshot(page, "12-bad-hierarchy")
    # a hierarchy built from the data instead: its levels are shown at once
    page.select_option(f"{row} select.builder-select", "interval")
    page.fill(f"{row} input.builder-params", "widths: [5, 10, 20]")
    page.click(f"{row} button.hierarchy-apply")
    page.wait_for_selector("#hierarchy-table")
    assert "level 3" in page.inner_text("#hierarchy-table")
    assert "interval builder" in page.inner_text(f"{row}")

    # k larger than the data: the run fails with the command line's message
    classify(page, adult_roles())
    page.goto(f"{server.url}/p/{pid}/protect")
    page.fill("#k", "100000")
    page.click("#run-anonymize")
    assert wait_for_run(page) == "failed"
    shown = page.inner_text("#run-error")
    job = page.text_content("#job-text")
    folder = tmp_path / "cli"
    folder.mkdir()
    (folder / "job.yaml").write_text(job)
    cli = subprocess.run(
        [sys.executable, "-m", "sdckit.cli", "anonymize", "--config", "job.yaml"],
        cwd=folder,
        capture_output=True,
        text=True,
    )
    assert cli.returncode == 2
    first_line = shown.split("\n")[0]
    cli_text = " ".join(cli.stderr.split())
    # the same message, apart from where the job file lies
    assert " ".join(first_line.split(": ", 1)[1].split()) in cli_text
    screenshot(page, "13-k-too-large")
    assert server.alive()
    assert server.get("/").status == 200


def test_a_page_of_another_site_cannot_drive_the_app(page, server, tmp_path):
    secret = tmp_path / "secret.csv"
    secret.write_text("user,password\nroot,hunter2\n")
    projects = server.data_dir
    before = set(projects.iterdir()) if projects.is_dir() else set()

    # DNS rebinding: the attacker's name resolves to 127.0.0.1, so its page reaches the app's
    # port under the attacker's origin (and Host)
    rebound = page.goto(f"http://{REBOUND_HOST}:{server.port}/")
    assert rebound is not None and rebound.status == 403
    assert "does not answer to the host name" in page.inner_text("body")

    # a cross-site form: a page of another site posts "open this file" to the app
    evil = f"http://{REBOUND_HOST}/form.html"
    form = (
        f'<form id="f" method="post" action="{server.url}/projects/path">'
        f'<input name="path" value="{secret}"></form>'
        "<script>document.getElementById('f').submit()</script>"
    )
    page.route(evil, lambda route: route.fulfill(body=form, content_type="text/html"))
    with page.expect_navigation(url=f"{server.url}/projects/path"):
        page.goto(evil)
    assert "another web site" in page.inner_text("body")
    after = set(projects.iterdir()) if projects.is_dir() else set()
    assert after == before  # nothing was opened
    screenshot(page, "14-cross-site-refused")
