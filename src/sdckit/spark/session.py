"""The Spark session a job runs in: ``spark:`` of a job file, or ``--spark-master``.

``local[2]`` by default (two cores of this machine); the same job runs on a cluster by
changing ``master`` (``spark://host:7077``, ``yarn``, ``k8s://...``) and adding ``conf``
entries (``spark.executor.memory`` ...). PySpark needs Java 17 or newer on the driver.

Spark's own output stays off the terminal, so that a command prints only its own lines (and
nothing with ``--quiet``): the driver JVM that this module starts logs through
:data:`LOG4J_CONFIG` (log4j2: warnings and errors), and its standard output and error -- the
log, the JVM's own warnings such as ``Using incubator modules``, the output of Python workers
in local mode -- go to :func:`spark_log_path`. A JVM that does not start is reported with the
end of that file.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sdckit.errors import ConfigError
from sdckit.spark.workers import check_workers, use_worker_python

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


#: The log4j2 settings of the driver JVM (shipped with the package).
LOG4J_CONFIG = Path(__file__).with_name("log4j2.properties")
#: The environment variable naming the file the driver JVM's output goes to.
LOG_ENV = "SDCKIT_SPARK_LOG"


def spark_log_path() -> Path:
    """The file the driver JVM writes its log and output to: ``$SDCKIT_SPARK_LOG``, else
    ``sdckit-spark-<user>.log`` in the temporary folder (rewritten by every session start)."""
    given = os.environ.get(LOG_ENV)
    if given:
        return Path(given).expanduser()
    user = os.getuid() if hasattr(os, "getuid") else os.environ.get("USERNAME", "user")
    return Path(tempfile.gettempdir()) / f"sdckit-spark-{user}.log"


def _java_options(given: str | None) -> str:
    """``spark.driver.extraJavaOptions`` with sdckit's log4j2 settings first (a
    ``-Dlog4j2.configurationFile`` the job gives comes later and wins)."""
    path = str(LOG4J_CONFIG)
    own = (
        f'"-Dlog4j2.configurationFile={path}"'
        if " " in path
        else f"-Dlog4j2.configurationFile={path}"
    )
    return f"{own} {given}".strip() if given else own


def _log_error(path: Path | None) -> str:
    """The last error line of the Spark log (a line naming an exception or error, not a stack
    frame) and where the log is, for a message; ``""`` without a log."""
    if path is None:
        return ""
    try:
        lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return ""
    heads = [ln.strip() for ln in lines if ln.strip() and not ln[0].isspace()]
    errors = [ln for ln in heads if "Exception" in ln or "Error" in ln or " ERROR " in ln]
    found = (errors or heads or [""])[-1][:400]
    return f"; Spark said: {found} (the whole log: {str(path)!r})" if found else ""


def _joins_a_running_jvm() -> bool:
    """Whether this process already has a driver JVM (a session started earlier, or one
    given by ``PYSPARK_GATEWAY_PORT``), which a new session joins."""
    from pyspark import SparkContext

    return (
        SparkContext._active_spark_context is not None
        or getattr(SparkContext, "_gateway", None) is not None
        or "PYSPARK_GATEWAY_PORT" in os.environ
    )


def _start_driver(settings: Mapping[str, str], master: str, app_name: str, log: Path) -> None:
    """Start the driver JVM with its output going to ``log`` (PySpark's ``launch_gateway``
    with ``popen_kwargs``, the hook PySpark gives for this; the output is dropped when
    ``log`` cannot be written) and create the SparkContext on it."""
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    conf = SparkConf(loadDefaults=False).setMaster(master).setAppName(app_name)
    conf.setAll(list(settings.items()))
    try:
        out = open(log, "w", encoding="utf-8")  # noqa: SIM115 - handed to the JVM, closed here
    except OSError:
        gateway = launch_gateway(conf, {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL})
    else:
        with out:
            gateway = launch_gateway(conf, {"stdout": out, "stderr": out})
    SparkContext(conf=conf, gateway=gateway)


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
    python_workers: bool = True,
) -> SparkSession:
    """Start (or join) the Spark session: ``master`` and ``conf`` as the job gives them.

    A session already running in this process is reused (Spark allows one per JVM); its
    master is then the one it was started with. The executors' Python is
    ``spark.pyspark.python`` of ``conf`` (else ``$PYSPARK_PYTHON``, else this interpreter on
    a local master: :func:`sdckit.spark.workers.use_worker_python`). With
    ``python_workers`` (a job that runs Python on the executors) it is checked to import
    sdckit before the session is returned (:func:`sdckit.spark.workers.check_workers`, once
    per session: a ConfigError with the fix otherwise).
    """
    require_pyspark()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)  # pyspark's pandas-version notice
        from pyspark.sql import SparkSession

        builder = SparkSession.builder.master(str(master)).appName(app_name)
        settings = {**DEFAULT_CONF, **{str(k): str(v) for k, v in (conf or {}).items()}}
        key = "spark.driver.extraJavaOptions"
        settings[key] = _java_options(settings.get(key))
        for name, value in settings.items():
            builder = builder.config(name, value)
        log = None if _joins_a_running_jvm() else spark_log_path()
        try:
            use_worker_python(settings, str(master))  # (read when a SparkContext is made)
            if log is not None:
                _start_driver(settings, str(master), app_name, log)
            session = builder.getOrCreate()
        except Exception as exc:  # the JVM did not start: say what to check
            raise ConfigError(
                f"cannot start Spark with master {master!r}: {' '.join(str(exc).split())[:400]}; "
                f"check the master URL and that Java 17 or newer is installed{_log_error(log)}"
            ) from exc
    session.sparkContext.setLogLevel("ERROR")
    if python_workers:
        check_workers(session)
    return session
