"""Helpers of the web app's browser tests: a ``sdckit ui`` server process and Chromium.

The server is the real command (``python -m sdckit.cli ui``) on a free port with a temporary
projects folder and its access token (``--token``: a browser page enters with
:meth:`UIServer.enter`, a plain request carries the cookie, :meth:`UIServer.get`); the
browser is Debian's Chromium driven by Playwright (Playwright's own browser download cannot
work offline: ``executable_path=/usr/bin/chromium``). Screenshots of each step go to
``$SDCKIT_UI_SCREENSHOTS`` (default ``build/ui-screenshots``).
"""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = os.environ.get("SDCKIT_CHROMIUM", "/usr/bin/chromium")
SCREENSHOTS = Path(os.environ.get("SDCKIT_UI_SCREENSHOTS", ROOT / "build" / "ui-screenshots"))
#: A web site's name that the browser resolves to 127.0.0.1 (``CHROMIUM_ARGS``).
REBOUND_HOST = "attacker.test"
#: Chromium's flags on a machine without a screen or network (background services off).
CHROMIUM_ARGS = [
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # a name that resolves to this machine, as a DNS-rebinding attacker's name would
    f"--host-resolver-rules=MAP {REBOUND_HOST} 127.0.0.1",
]


def require_browser() -> None:
    """Skip (or fail, under ``SDCKIT_REQUIRE_BROWSER=1`` as in CI) without the ui extra,
    Playwright or Chromium."""
    missing = []
    for module in ("fastapi", "uvicorn", "python_multipart", "plotly", "playwright"):
        try:
            __import__(module)
        except ImportError:
            missing.append(module)
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        missing.append(f"Chromium ({CHROMIUM}; apt-get install chromium)")
    if missing:
        reason = f"browser tests need: {', '.join(missing)} (pip install -e '.[ui,test]')"
        if os.environ.get("SDCKIT_REQUIRE_BROWSER") == "1":
            pytest.fail(reason)
        pytest.skip(reason)


def free_port() -> int:
    """A TCP port nobody listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class UIServer:
    """``sdckit ui`` in a child process."""

    def __init__(self, data_dir: Path, *extra: str) -> None:
        self.data_dir = data_dir / "projects"
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.token = secrets.token_urlsafe(24)
        self.log = data_dir.parent / f"ui-server-{self.port}.log"
        self._log = self.log.open("w")
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "sdckit.cli",
                "ui",
                "--port",
                str(self.port),
                "--data",
                str(data_dir),
                "--token",
                self.token,
                *extra,
            ],
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"sdckit ui exited: {self.log.read_text()}")
            try:
                self.get("/", timeout=2).read()
                return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"sdckit ui did not answer in 60 s: {self.log.read_text()}")

    def get(self, path: str, timeout: float = 30):
        """GET ``path`` with the token's cookie (an open HTTP response)."""
        request = urllib.request.Request(
            self.url + path, headers={"Cookie": f"sdckit_ui_token={self.token}"}
        )
        return urllib.request.urlopen(request, timeout=timeout)

    def enter(self, page) -> None:
        """Open the start page in a browser page with the token, as the printed address does
        (the server sets its cookie and redirects to the address without it)."""
        page.goto(f"{self.url}/?token={self.token}")
        assert "token" not in page.url

    def alive(self) -> bool:
        """The server process runs and answers."""
        if self.process.poll() is not None:
            return False
        try:
            return self.get("/", timeout=5).status == 200
        except OSError:
            return False

    def stop(self) -> None:
        """Stop the server (SIGTERM, then kill)."""
        self.process.terminate()
        try:
            self.process.wait(15)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self._log.close()


def screenshot(page, name: str) -> Path:
    """Save a full-page screenshot of the current step."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def htmx_settled(page) -> None:
    """Wait until htmx has finished every request and swap on the page.

    htmx inserts swapped content at once but wires its ``hx-*`` attributes only after the
    settle delay (20 ms); until then the new element carries ``htmx-added`` (or
    ``htmx-settling``), and a change made to it sends nothing. A person cannot act inside
    that window, a test on a loaded machine can."""
    page.wait_for_function(
        "() => !document.querySelector("
        "'.htmx-added, .htmx-settling, .htmx-swapping, .htmx-request')"
    )


def wait_for_run(page, timeout_ms: int = 240_000) -> str:
    """Wait on a run page until the run has ended (the page reloads with its outcome); the
    final state."""
    page.wait_for_selector("#run-final", state="attached", timeout=timeout_ms)
    return str(page.get_attribute("#run-final", "data-state"))
