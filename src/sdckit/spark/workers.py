"""The executors' Python: which one runs sdckit's code on the executors, and a check, right
after the session starts, that it can import sdckit and what sdckit needs there.

PySpark (4.x, ``pyspark/core/context.py``) takes the Python its workers run from the
environment variable ``PYSPARK_PYTHON`` of the driver process when the SparkContext is made
(``python3`` when unset); ``spark.pyspark.python`` in the conf is read only by
``spark-submit``, which sdckit does not go through. :func:`use_worker_python` therefore sets
the environment from the conf before the session starts. :func:`check_workers` runs one
tiny task on a Python worker (``spark.range``-sized: one partition, one row) that imports
the modules and returns their versions, so that a cluster whose executors lack sdckit is
refused before the first real stage with the fix, instead of a ``ModuleNotFoundError``
deep in a task's stack trace.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from sdckit.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

__all__ = ["WORKER_MODULES", "check_workers", "use_worker_python", "worker_python"]

#: What a Python worker imports to run sdckit's functions (its package and runtime needs).
WORKER_MODULES: tuple[str, ...] = ("sdckit", "numpy", "pandas", "pyarrow")

#: The sessions whose workers passed the check: (application id, worker Python) -> versions.
_CHECKED: dict[tuple[str, str], dict[str, str]] = {}

_FIX = (
    "name a Python that has sdckit with --spark-conf spark.pyspark.python=/path/to/"
    "python-with-sdckit (or spark.pyspark.python under the job's spark: conf:), or ship a "
    "packed environment (venv-pack or conda-pack) with --spark-conf "
    "spark.archives=env.tar.gz#env --spark-conf spark.pyspark.python=./env/bin/python"
)


def worker_python(settings: Mapping[str, str], master: str) -> str | None:
    """The Python the executors run: ``spark.pyspark.python`` of the settings, else
    ``$PYSPARK_PYTHON``, else for a ``local`` master this process's own interpreter; ``None``
    on a cluster where neither is given (Spark's default, ``python3`` of the executors)."""
    given = settings.get("spark.pyspark.python") or os.environ.get("PYSPARK_PYTHON")
    if given:
        return str(given)
    return sys.executable if str(master).startswith("local") else None


def use_worker_python(settings: Mapping[str, str], master: str) -> None:
    """Set ``PYSPARK_PYTHON`` (and ``PYSPARK_DRIVER_PYTHON`` from
    ``spark.pyspark.driver.python``, as ``spark-submit`` does) for a session about to start,
    from :func:`worker_python`. The driver itself is the Python running sdckit."""
    python = worker_python(settings, master)
    if python:
        os.environ["PYSPARK_PYTHON"] = python
    driver = settings.get("spark.pyspark.driver.python")
    if driver:
        os.environ["PYSPARK_DRIVER_PYTHON"] = str(driver)


def _probe() -> Callable[[Any], tuple[str, str, dict[str, str]]]:
    """The task's function, made here so that it is pickled by value (the worker must run
    it without sdckit): the worker's interpreter, its version, and per module its version
    or ``"missing: <the ImportError>"``."""

    def probe(_: Any) -> tuple[str, str, dict[str, str]]:
        import importlib
        import sys as wsys

        found = {}
        for name in ("sdckit", "numpy", "pandas", "pyarrow"):
            try:
                found[name] = str(getattr(importlib.import_module(name), "__version__", "?"))
            except Exception as exc:  # ImportError, or a module broken in that Python
                found[name] = f"missing: {type(exc).__name__}: {exc}"
        return wsys.executable, wsys.version.split()[0], found

    return probe


def _failure(exc: Exception) -> str:
    """What went wrong in the check's task, from Spark's exception text: the module a
    worker could not import, a Python that does not run, or the first line."""
    text = str(exc)
    module = re.search(r"No module named '([^']+)'", text)
    if module:
        return f"cannot import {module.group(1)!r} (ModuleNotFoundError)"
    program = re.search(r"Cannot run program \"([^\"]+)\"[^\n]*", text)
    if program:
        return f"does not run: {program.group(0)[:300]}"
    lines = [ln.strip() for ln in text.splitlines() if "Error" in ln or "Exception" in ln]
    return f"failed: {(lines or [' '.join(text.split())])[0][:300]}"


def check_workers(session: SparkSession) -> dict[str, str]:
    """Check, once per session, that a Python worker imports :data:`WORKER_MODULES`: the
    versions it found (with ``python``, the worker's interpreter and version). A worker that
    cannot is a ConfigError naming its Python, the missing module and the fix; the session
    is then stopped, so that a later start may name another Python."""
    sc = session.sparkContext
    python = str(getattr(sc, "pythonExec", None) or "python3")
    key = (str(sc.applicationId), python)
    if key in _CHECKED:
        return _CHECKED[key]
    try:
        executable, version, found = sc.parallelize([0], 1).map(_probe()).collect()[0]
    except Exception as exc:  # the task failed: the worker did not start or import
        session.stop()  # (a later start may then name another Python)
        raise ConfigError(
            f"the Spark executors' Python {python!r} {_failure(exc)}: sdckit runs "
            f"Python code on the executors, which need {', '.join(WORKER_MODULES)}; "
            f"{_FIX}"
        ) from None
    missing = {name: why for name, why in found.items() if why.startswith("missing: ")}
    if missing:
        why = next(iter(missing.values()))
        named = python if executable == python else f"{python} ({executable})"
        session.stop()  # (a later start may then name another Python)
        raise ConfigError(
            f"the Spark executors' Python {named!r} cannot import "
            f"{', '.join(map(repr, missing))} ({why.removeprefix('missing: ')}): sdckit runs "
            f"Python code on the executors, which need {', '.join(WORKER_MODULES)}; {_FIX}"
        )
    _CHECKED[key] = {**found, "python": f"{executable} {version}"}
    return _CHECKED[key]
