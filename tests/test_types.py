"""The type checker over the packages whose annotations it verifies clean.

mypy runs on :data:`TYPED_PACKAGES` with the project's configuration (``[tool.mypy]`` in
``pyproject.toml``); a wrong annotation or an unguarded ``None`` there fails the suite. A
new package joins the list once it passes.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TYPED_PACKAGES = [
    "core",
    "models",
    "masking",
    "risk",
    "report",
    "commands",
    "evaluation",
    "utility",
    "algorithms",
    "dp",
    "server",
    "tables",
    "spark",
    "jobs",
    "synthesis",
    "ui",
]


def test_typed_packages_pass_mypy(tmp_path: Path) -> None:
    pytest.importorskip("mypy")
    paths = [str(ROOT / "src" / "sdckit" / p) for p in TYPED_PACKAGES]
    res = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
         "--cache-dir", str(tmp_path / "mypy"), *paths],
        capture_output=True, text=True, cwd=ROOT, timeout=600,
    )  # fmt: skip
    assert res.returncode == 0, res.stdout[-4000:]
