"""The benchmarks' one timing helper: median wall and CPU time of repeated runs.

CPU time (``time.process_time``) is reported beside wall time because the benchmark machine
may be shared: under load, wall time grows while CPU time stays near the idle figure.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def timed(run: Callable[[], T], repeat: int = 3) -> tuple[float, float, T]:
    """Median wall seconds, median CPU seconds of ``repeat`` runs of ``run()``, last result."""
    walls, cpus = [], []
    res = None
    for _ in range(max(int(repeat), 1)):
        t0, c0 = time.perf_counter(), time.process_time()
        res = run()
        walls.append(time.perf_counter() - t0)
        cpus.append(time.process_time() - c0)
    return statistics.median(walls), statistics.median(cpus), res


def timed_wall(run: Callable[[], T], repeat: int = 3) -> tuple[float, T]:
    """Median wall seconds of ``repeat`` runs of ``run()`` and the last result."""
    wall, _, res = timed(run, repeat)
    return wall, res
