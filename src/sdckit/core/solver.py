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
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, OptimizeResult
from scipy.optimize import milp as _scipy_milp

try:  # the HiGHS object that scipy.optimize.milp drives (private; optional here)
    from scipy.optimize._highspy import _core as _highs_core
except ImportError:  # pragma: no cover - depends on the SciPy build
    _highs_core = None

__all__ = ["MipResult", "c_stdout_silenced", "milp", "solve_mip"]


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


@dataclass
class MipResult:
    """A mixed-integer program's outcome: ``x`` (the best solution found, None without
    one), ``status`` (``"optimal"`` within the gap, ``"limit"`` stopped by the time or node
    limit, ``"infeasible"``, ``"error"``), ``objective`` (of ``x``; ``inf`` without one),
    ``bound`` (HiGHS's dual bound: no solution is cheaper; ``-inf`` when unknown) and
    ``message``."""

    x: np.ndarray | None
    status: str
    objective: float
    bound: float
    message: str = ""


def solve_mip(
    c: np.ndarray,
    a: sparse.csr_matrix,
    row_lower: np.ndarray,
    row_upper: np.ndarray,
    col_lower: np.ndarray,
    col_upper: np.ndarray,
    integrality: np.ndarray,
    *,
    time_limit: float | None = None,
    mip_rel_gap: float | None = None,
    node_limit: int | None = None,
    start: np.ndarray | None = None,
) -> MipResult:
    """``min c x`` subject to ``row_lower <= a x <= row_upper``, ``col_lower <= x <=
    col_upper``, ``x_j`` integer where ``integrality[j]`` is 1, by HiGHS.

    Unlike :func:`milp` it takes a *start*: a feasible ``start`` is handed to HiGHS as its
    first incumbent (``Highs::setSolution``), so the branch and bound prunes by its cost
    from the first node and a stop at ``time_limit`` never returns anything worse; and it
    reports HiGHS's dual bound (``mip_dual_bound``), with which a caller states the proven
    gap. It drives the HiGHS object bundled with SciPy (the one :func:`milp` drives);
    where that is missing it answers through :func:`milp` (no start). Output on descriptor 1
    is silenced (:func:`c_stdout_silenced`)."""
    n = len(c)
    a = sparse.csr_matrix(a)
    h = _highs_core
    if h is None:  # pragma: no cover - depends on the SciPy build
        options: dict[str, Any] = {}
        if time_limit is not None:
            options["time_limit"] = max(float(time_limit), 0.01)
        if mip_rel_gap is not None:
            options["mip_rel_gap"] = float(mip_rel_gap)
        if node_limit is not None:
            options["node_limit"] = int(node_limit)
        res = milp(
            c,
            integrality=integrality,
            bounds=Bounds(col_lower, col_upper),
            constraints=LinearConstraint(a, row_lower, row_upper) if a.shape[0] else None,
            options=options,
        )
        status = {0: "optimal", 1: "limit", 2: "infeasible"}.get(res.status, "error")
        x = None if res.x is None else np.asarray(res.x, dtype=float)
        bound = getattr(res, "mip_dual_bound", None)
        return MipResult(
            x,
            status,
            float(res.fun) if x is not None else np.inf,
            float(bound) if bound is not None and np.isfinite(bound) else -np.inf,
            str(res.message),
        )
    inf = h.kHighsInf
    csc = a.tocsc()
    csc.sort_indices()
    lp = h.HighsLp()
    lp.num_col_ = n
    lp.num_row_ = a.shape[0]
    lp.a_matrix_.num_col_ = n
    lp.a_matrix_.num_row_ = a.shape[0]
    lp.a_matrix_.format_ = h.MatrixFormat.kColwise
    lp.a_matrix_.start_ = csc.indptr.astype(np.int32)
    lp.a_matrix_.index_ = csc.indices.astype(np.int32)
    lp.a_matrix_.value_ = csc.data.astype(float)
    lp.col_cost_ = np.asarray(c, dtype=float)
    lp.col_lower_ = np.where(np.isfinite(col_lower), col_lower, -inf).astype(float)
    lp.col_upper_ = np.where(np.isfinite(col_upper), col_upper, inf).astype(float)
    lp.row_lower_ = np.where(np.isfinite(row_lower), row_lower, -inf).astype(float)
    lp.row_upper_ = np.where(np.isfinite(row_upper), row_upper, inf).astype(float)
    kinds = np.asarray(integrality)
    lp.integrality_ = [h.HighsVarType.kInteger if k else h.HighsVarType.kContinuous for k in kinds]
    highs = h._Highs()
    highs.setOptionValue("output_flag", False)
    if time_limit is not None:
        highs.setOptionValue("time_limit", max(float(time_limit), 0.01))
    if mip_rel_gap is not None:
        highs.setOptionValue("mip_rel_gap", float(mip_rel_gap))
    if node_limit is not None:
        highs.setOptionValue("mip_max_nodes", int(node_limit))
    with c_stdout_silenced():
        highs.passModel(lp)
        if start is not None:
            sol = h.HighsSolution()
            sol.col_value = np.asarray(start, dtype=float)
            sol.value_valid = True
            highs.setSolution(sol)
        highs.run()
    model = highs.getModelStatus()
    info = highs.getInfo()
    ms = h.HighsModelStatus
    if model == ms.kOptimal:
        status = "optimal"
    elif model in (ms.kInfeasible, ms.kUnboundedOrInfeasible):
        status = "infeasible"
    elif model in (ms.kTimeLimit, ms.kSolutionLimit, ms.kIterationLimit, ms.kInterrupt):
        status = "limit"
    else:
        status = "error"
    x = None
    if status != "infeasible" and info.primal_solution_status == h.kSolutionStatusFeasible:
        x = np.asarray(highs.getSolution().col_value, dtype=float)
    bound = float(info.mip_dual_bound)
    return MipResult(
        x,
        status,
        float(info.objective_function_value) if x is not None else np.inf,
        bound if np.isfinite(bound) and abs(bound) < inf else -np.inf,
        highs.modelStatusToString(model),
    )
