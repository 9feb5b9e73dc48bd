"""HiGHS (through SciPy) without its stray output on the process's standard output.

Every mixed-integer program of sdckit goes through :func:`milp`, SciPy's
:func:`scipy.optimize.milp` run inside :func:`c_stdout_silenced`, so that a JSON summary or a
CSV written to standard output is never corrupted by the solver.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
from collections.abc import Iterator
from typing import Any

from scipy.optimize import OptimizeResult
from scipy.optimize import milp as _scipy_milp

__all__ = ["c_stdout_silenced", "milp"]


@contextlib.contextmanager
def c_stdout_silenced() -> Iterator[None]:
    """Send the process's file descriptor 1 to ``os.devnull`` while HiGHS runs.

    HiGHS 1.12 (bundled with SciPy 1.17) prints a leftover debug line,
    ``HighsMipSolverData::transformNewIntegerFeasibleSolution tmpSolver.run();``, to the C
    ``stdout`` even with ``disp=False`` (ERGO-Code/HiGHS issue 2783), which corrupted the
    output of ``sdckit evaluate`` and ``sdckit table`` (also with ``--quiet``). Python's
    buffers are flushed before, and C's ``stdio`` buffers (full buffering when stdout is a
    pipe) before the descriptor is restored, so nothing of HiGHS leaks and nothing of ours is lost.
    """
    for stream in (sys.stdout, sys.__stdout__):
        with contextlib.suppress(Exception):
            stream.flush()  # type: ignore[union-attr]
    try:
        libc = ctypes.CDLL(None)
        libc.fflush(None)
    except (OSError, AttributeError):  # no C library handle (e.g. some Windows builds)
        libc = None
    try:
        saved = os.dup(1)
    except OSError:  # no descriptor 1 (detached process): nothing to protect
        yield
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        yield
    finally:
        if libc is not None:
            with contextlib.suppress(Exception):
                libc.fflush(None)
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


def milp(*args: Any, **kwargs: Any) -> OptimizeResult:
    """:func:`scipy.optimize.milp` (HiGHS) with the same arguments, its C-level output on
    descriptor 1 silenced (see :func:`c_stdout_silenced`)."""
    with c_stdout_silenced():
        return _scipy_milp(*args, **kwargs)
