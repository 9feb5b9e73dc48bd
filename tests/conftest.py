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


@pytest.fixture(scope="session")
def spark():
    """A local[2] Spark session for the Spark engine's tests (one per test process; skipped
    when PySpark or Java is missing: install the extra with pip install -e '.[spark]')."""
    pytest.importorskip("pyspark")
    from sdckit.errors import ConfigError
    from sdckit.spark.session import spark_session

    try:
        # the JVM's quick compiler only: test jobs are short, full JIT costs more than it saves
        session = spark_session(
            "local[2]",
            {
                "spark.driver.memory": "1g",
                "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1",
            },
        )
    except ConfigError as exc:
        pytest.skip(str(exc))
    yield session


@pytest.fixture
def no_spark(monkeypatch):
    """Starting Spark fails the test."""
    pytest.importorskip("pyspark")
    import sdckit.spark.session as session

    def refuse(*args, **kwargs):
        raise AssertionError("Spark was started")

    monkeypatch.setattr(session, "spark_session", refuse)
