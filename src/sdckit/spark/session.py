"""The Spark session a job runs in: ``spark:`` of a job file, or ``--spark-master``.

``local[2]`` by default (two cores of this machine); the same job runs on a cluster by
changing ``master`` (``spark://host:7077``, ``yarn``, ``k8s://...``) and adding ``conf``
entries (``spark.executor.memory`` ...). PySpark needs Java 17 or newer on the driver.
"""

from __future__ import annotations

import os
import shutil
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from sdckit.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

#: Settings every sdckit session gets unless the job's ``conf`` says otherwise: no web UI (a
#: batch job), Arrow for collecting frequency sets, few shuffle partitions for small data
#: (Spark's adaptive execution coalesces or splits them by size).
DEFAULT_CONF: dict[str, str] = {
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.adaptive.enabled": "true",
    "spark.sql.shuffle.partitions": "8",
    "spark.sql.session.timeZone": "UTC",
}


def require_pyspark() -> None:
    """ConfigError saying how to install the engine when PySpark or Java is missing."""
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise ConfigError(
            "engine 'spark' needs PySpark: install the extra with pip install -e '.[spark]' "
            "(Java 17 or newer must be on the PATH or in JAVA_HOME)"
        ) from None
    java_home = os.environ.get("JAVA_HOME")
    if not (shutil.which("java") or (java_home and os.path.exists(java_home))):
        raise ConfigError(
            "engine 'spark' needs Java 17 or newer: install it (Debian: apt-get install -y "
            "openjdk-17-jre-headless) or set JAVA_HOME"
        )


def spark_session(
    master: str = "local[2]",
    conf: Mapping[str, Any] | None = None,
    app_name: str = "sdckit",
) -> SparkSession:
    """Start (or join) the Spark session: ``master`` and ``conf`` as the job gives them.

    A session already running in this process is reused (Spark allows one per JVM); its
    master is then the one it was started with.
    """
    require_pyspark()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # pyspark's pandas-version notice
        from pyspark.sql import SparkSession

        builder = SparkSession.builder.master(str(master)).appName(app_name)
        settings = {**DEFAULT_CONF, **{str(k): str(v) for k, v in (conf or {}).items()}}
        for key, value in settings.items():
            builder = builder.config(key, value)
        try:
            session = builder.getOrCreate()
        except Exception as exc:  # the JVM did not start: say what to check
            raise ConfigError(
                f"cannot start Spark with master {master!r}: {' '.join(str(exc).split())[:400]}; "
                "check the master URL and that Java 17 or newer is installed"
            ) from exc
    session.sparkContext.setLogLevel("ERROR")
    return session
