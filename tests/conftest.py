"""Shared test fixtures: paths to the reference data beside the project (../shared/data)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """The reference data directory ``../shared/data`` (tests using it skip when it is absent)."""
    if not SHARED_DATA.is_dir():
        pytest.skip("reference data ../shared/data not present")
    return SHARED_DATA
