"""Controlled tabular adjustment (CTA): the closest additive table that protects every
sensitive cell by moving it out of its protection interval.

Instead of suppressing cells, CTA (Dandekar & Cox 2002, "Synthetic tabular data: an
alternative to complementary cell suppression", manuscript, EIA; Castro 2006,
"Minimum-distance controlled perturbation methods for large-scale tabular data protection",
*European Journal of Operational Research* 171, 39-52; Hundepool et al. 2012, sec. 4.6)
publishes a full table ``a + d`` in which every primary (sensitive) cell ``i`` lies outside
its protection interval: moved *up* by at least its upper protection level ``UPL_i`` or
*down* by at least its lower one ``LPL_i``, the direction chosen by a binary ``y_i`` (1 up,
0 down). Among all such tables the one closest to the original in the weighted L1 distance
is published; it keeps every additivity relation. The mixed integer program, with the
adjustment split into ``d+ , d- >= 0`` per cell:

    minimize    sum_i w_i (d+_i + d-_i)
    subject to  A (d+ - d-) = 0                       (A a = 0: the table stays additive)
                d+_i >= UPL_i y_i,  d+_i <= M y_i      (primary i up, or not up at all)
                d-_i >= LPL_i (1 - y_i),  d-_i <= M (1 - y_i)
                d-_i <= a_i                            (with ``nonnegative``: a + d >= 0)
                d+_i = d-_i = 0                        (cells held ``fixed``)

solved with HiGHS (:func:`scipy.optimize.milp`); the directions it chooses are then fixed and
the adjustment re-solved as a linear program (no big-M there), so the published numbers do
not carry the MIP solver's integrality tolerances.

The bound ``M`` is the total protection asked, ``S = sum_i max(UPL_i, LPL_i)`` over the
primary cells. For tables whose additivity matrix is totally unimodular -- one-way tables
(hierarchical or not) and two-way tables with their margins -- some optimal adjustment moves
no cell by more than ``S`` (decompose it into conformal circuits of ``ker A``, whose entries
are 0 and +-1; each circuit of an optimal solution passes through a primary cell held exactly
at its level, so the circuits' total weight, and with it every cell's move, is at most
``S``): the program is then exact, and ``M`` is as small as it can safely be, which keeps
HiGHS's relaxation tight. For other tables (three or more dimensions, hierarchical two-way
tables) the adjustment is optimal among those moving no primary cell by more than ``S``;
if none exists the program is solved again with ``M = S + sum |a|`` before the problem is
declared infeasible.

Weights ``w`` (``cost``): by default ``1 / max(|a_i|, 1)`` -- the distance is the sum of
*relative* changes, so a large cell absorbs more of the adjustment than a small one (Castro
2006 uses the same ``1/a_i`` weights); ``"unit"`` weighs every unit of change alike,
``"table"`` uses the table's cost (``Table.cost``), or give an array of non-negative weights.

A primary cell that cannot move down -- ``LPL_i = 0`` (e.g. a zero cell under
non-negativity) or, with ``nonnegative``, ``LPL_i > a_i`` -- must move up: staying put would
not take it out of its protection interval.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sdckit.errors import ConfigError, DataError, ParameterError, VerificationError
from sdckit.tables.rules import Primary
from sdckit.tables.table import Table

__all__ = ["DEFAULT_GAP", "Adjustment", "controlled_adjustment"]

#: Relative tolerance of the checks on the solution (protection reached, additivity).
_TOL = 1e-7
#: The default relative optimality gap of the CTA program: HiGHS stops once the distance of
#: its best adjustment is within 1% of its proven lower bound. The LP relaxation is tight
#: here (its bound is typically within 1-2% of the optimum), so a good adjustment is found
#: at the root while closing the last 1% takes the branch and bound 10-20 times longer
#: (measured on a 21 x 21 table with 120 primaries: 0.6% at 1 s, 0.01% at 17-24 s).
DEFAULT_GAP = 0.01


@dataclass
class Adjustment:
    """A controlled tabular adjustment of a table.

    ``adjusted``: every cell's published value; ``adjustment``: ``adjusted - value`` per cell;
    ``direction``: ``+1`` for a primary cell moved up, ``-1`` down, ``0`` for other cells;
    ``weights``: the distance's weight per cell; ``details``: see :meth:`to_dict`.
    """

    adjusted: np.ndarray
    adjustment: np.ndarray
    direction: np.ndarray
    weights: np.ndarray
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary: ``objective`` (the weighted distance), ``sum_abs_adjustment``,
        ``max_abs_adjustment``, ``sum_rel_adjustment``, ``max_rel_adjustment`` (relative to
        ``max(|value|, 1)``), ``cells_changed``, ``primary_up``, ``primary_down``,
        ``weights`` (the cost's name), ``nonnegative``, ``fixed_cells``, ``optimal`` (within
        ``gap_tolerance`` of the smallest distance; False when the time limit stopped the
        search first), ``mip_gap`` (HiGHS's relative gap of the directions chosen),
        ``gap_tolerance`` and ``solve_seconds``."""
        return dict(self.details)


def controlled_adjustment(
    table: Table,
    primary: Primary,
    *,
    cost: str | np.ndarray | None = None,
    nonnegative: bool = True,
    fixed: np.ndarray | None = None,
    time_limit: float | None = None,
    gap: float = DEFAULT_GAP,
) -> Adjustment:
    """The closest additive table with every primary cell outside its protection interval.

    ``primary``: the primary cells and their protection levels
    (:func:`~sdckit.tables.rules.primary_cells`); ``cost``: the distance's weights (module
    docstring; default relative change); ``nonnegative``: no published cell below 0;
    ``fixed``: a boolean mask of cells that must keep their value (``fixed[0]`` is the grand
    total -- every dimension's node 0); ``time_limit`` (seconds) bounds the search, the best
    adjustment found by then is returned (``details["optimal"]`` False); ``gap``: the
    relative optimality gap at which the search stops (:data:`DEFAULT_GAP`; ``1e-4`` for
    HiGHS's own default) -- the distance returned is then at most ``1 + gap`` times the
    smallest (``details["gap_tolerance"]``; ``details["mip_gap"]`` is the gap reached).

    Raises :class:`~sdckit.errors.ParameterError` for inconsistent arguments,
    :class:`~sdckit.errors.DataError` for negative cells under ``nonnegative``, and
    :class:`~sdckit.errors.ConfigError` when no adjustment exists (fixed cells and
    non-negativity leave the primary cells no room) or none was found in time.
    """
    t0 = time.perf_counter()
    n = table.n_cells
    a = np.asarray(table.value, dtype=np.float64)
    unsafe, upl, lpl = _levels(primary, n)
    w, w_name = _weights(table, cost)
    fix = _fixed(fixed, n)
    if time_limit is not None and not (np.isfinite(time_limit) and time_limit > 0):
        raise ParameterError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
    if not (np.isfinite(gap) and 0 <= gap < 1):
        raise ParameterError(f"gap must be a relative gap in [0, 1), got {gap!r}")
    if nonnegative and (a < 0).any():
        i = int(np.flatnonzero(a < 0)[0])
        raise DataError(
            f"the cell {table.codes().iloc[i].to_dict()} is {a[i]:g} < 0 but nonnegative=True "
            "asks for a non-negative adjusted table; pass nonnegative=False"
        )
    if (fix & unsafe).any():
        i = int(np.flatnonzero(fix & unsafe)[0])
        raise ParameterError(
            f"the primary cell {table.codes().iloc[i].to_dict()} is also held fixed; a primary "
            "cell must move out of its protection interval, so release it from `fixed`"
        )
    down_ok = (lpl > 0) & ((lpl <= a) if nonnegative else True)
    prim = np.flatnonzero(unsafe)
    # the big-M: the total protection asked (exact for totally unimodular tables, see above)
    demand = float(np.maximum(upl, lpl).sum())
    tight = max(demand, 1.0)
    loose = tight + float(np.abs(a).sum())
    res = _solve_mip(table, a, w, prim, upl, lpl, down_ok, fix, nonnegative, tight, time_limit, gap)
    if res.status == 2:  # retry with a far larger bound before saying "infeasible"
        left = None if time_limit is None else max(time_limit - (time.perf_counter() - t0), 1.0)
        res = _solve_mip(table, a, w, prim, upl, lpl, down_ok, fix, nonnegative, loose, left, gap)
    if res.status == 2:
        raise ConfigError(_infeasible_message(nonnegative, int(fix.sum())))
    if res.x is None:
        raise ConfigError(
            f"no controlled tabular adjustment was found within the time limit ({time_limit} s; "
            f"HiGHS: {res.message}); raise time_limit"
        )
    optimal = res.status == 0
    g = getattr(res, "mip_gap", None)
    reached = float(g) if g is not None and np.isfinite(g) else None
    k = len(prim)
    up = np.rint(res.x[2 * n :]).astype(bool)
    d = _polish(table, a, w, prim, up, upl, lpl, fix, nonnegative)
    if d is None:  # cannot happen for a MIP solution; fall back on the MIP's own values
        d = res.x[:n] - res.x[n : 2 * n]
    adjusted = a + d
    direction = np.zeros(n, dtype=np.int64)
    direction[prim] = np.where(up, 1, -1)
    _verify(table, adjusted, prim, up, upl, lpl, nonnegative, fix)
    rel = np.abs(d) / np.maximum(np.abs(a), 1.0)
    details = {
        "objective": float(w @ np.abs(d)),
        "sum_abs_adjustment": float(np.abs(d).sum()),
        "max_abs_adjustment": float(np.abs(d).max(initial=0.0)),
        "sum_rel_adjustment": float(rel.sum()),
        "max_rel_adjustment": float(rel.max(initial=0.0)),
        "cells_changed": int((np.abs(d) > _TOL * np.maximum(1.0, np.abs(a))).sum()),
        "primary_up": int(up.sum()),
        "primary_down": int(k - up.sum()),
        "weights": w_name,
        "nonnegative": bool(nonnegative),
        "fixed_cells": int(fix.sum()),
        "optimal": bool(optimal),
        "mip_gap": reached,
        "gap_tolerance": float(gap),
        "solve_seconds": time.perf_counter() - t0,
    }
    return Adjustment(adjusted, d, direction, w, details)


# -- helpers ---------------------------------------------------------------------------------
def _solve_mip(
    table: Table,
    a: np.ndarray,
    w: np.ndarray,
    prim: np.ndarray,
    upl: np.ndarray,
    lpl: np.ndarray,
    down_ok: np.ndarray,
    fix: np.ndarray,
    nonnegative: bool,
    big: float,
    time_limit: float | None,
    gap: float = DEFAULT_GAP,
) -> Any:
    """The CTA mixed integer program (module docstring) with big-M ``big``, by HiGHS."""
    from scipy import sparse
    from scipy.optimize import Bounds, LinearConstraint

    from sdckit.core.solver import milp

    n, k = len(a), len(prim)
    # variables: d+ (n), d- (n), y (k)
    lb = np.zeros(2 * n + k)
    ub = np.full(2 * n + k, np.inf)
    if nonnegative:
        ub[n : 2 * n] = a
    ub[:n][fix] = 0.0
    ub[n : 2 * n][fix] = 0.0
    ub[2 * n :] = 1.0
    lb[2 * n :][~down_ok[prim]] = 1.0  # these can only move up
    c = np.concatenate([w, w, np.zeros(k)])
    cons = table.constraints()
    blocks = []
    if cons.shape[0]:
        eq = sparse.hstack([cons, -cons, sparse.csr_matrix((cons.shape[0], k))], format="csr")
        blocks.append(LinearConstraint(eq, 0.0, 0.0))
    if k:
        r = np.arange(k)
        ones, y_cols = np.ones(k), 2 * n + r

        def rows(var_cols: np.ndarray, y_coef: np.ndarray) -> sparse.csr_matrix:
            return sparse.csr_matrix(
                (
                    np.concatenate([ones, y_coef]),
                    (np.concatenate([r, r]), np.concatenate([var_cols, y_cols])),
                ),
                shape=(k, 2 * n + k),
            )

        m_up = np.full(k, big)
        m_down = np.minimum(big, a[prim]) if nonnegative else m_up
        # d+_i - UPL_i y_i >= 0  and  d+_i - M y_i <= 0
        blocks.append(LinearConstraint(rows(prim, -upl[prim]), 0.0, np.inf))
        blocks.append(LinearConstraint(rows(prim, -m_up), -np.inf, 0.0))
        # d-_i + LPL_i y_i >= LPL_i  and  d-_i + M y_i <= M
        blocks.append(LinearConstraint(rows(n + prim, lpl[prim]), lpl[prim], np.inf))
        blocks.append(LinearConstraint(rows(n + prim, m_down), -np.inf, m_down))
    options: dict[str, Any] = {"disp": False, "mip_rel_gap": float(gap)}
    if time_limit is not None:
        options["time_limit"] = float(time_limit)
    integrality = np.concatenate([np.zeros(2 * n), np.ones(k)])
    return milp(
        c, integrality=integrality, bounds=Bounds(lb, ub), constraints=blocks, options=options
    )


def _levels(primary: Primary, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    unsafe = np.asarray(primary.unsafe, dtype=bool)
    upl = np.asarray(primary.upper, dtype=np.float64)
    lpl = np.asarray(primary.lower, dtype=np.float64)
    if not (unsafe.shape == upl.shape == lpl.shape == (n,)):
        raise ParameterError(
            f"the primary cells and protection levels must have one entry per cell ({n}); "
            "compute them with primary_cells(table, rules) on this table"
        )
    if (
        not (np.isfinite(upl).all() and np.isfinite(lpl).all())
        or (upl < 0).any()
        or (lpl < 0).any()
    ):
        raise ParameterError("protection levels must be finite and non-negative")
    return unsafe, np.where(unsafe, upl, 0.0), np.where(unsafe, lpl, 0.0)


def _weights(table: Table, cost: str | np.ndarray | None) -> tuple[np.ndarray, str]:
    n = table.n_cells
    if cost is None or (isinstance(cost, str) and cost == "relative"):
        return 1.0 / np.maximum(np.abs(table.value), 1.0), "relative"
    if isinstance(cost, str):
        if cost == "unit":
            return np.ones(n), "unit"
        if cost == "table":
            w, name = np.asarray(table.cost, dtype=np.float64), "table"
        else:
            raise ParameterError(
                f"unknown CTA cost {cost!r}; use 'relative' (default), 'unit', 'table' or an "
                "array of weights per cell"
            )
    else:
        w, name = np.asarray(cost, dtype=np.float64), "custom"
    if w.shape != (n,):
        raise ParameterError(f"the CTA weights must have one entry per cell ({n}), got {w.shape}")
    if not np.isfinite(w).all() or (w < 0).any():
        raise ParameterError("the CTA weights must be finite and non-negative")
    return w, name


def _fixed(fixed: np.ndarray | None, n: int) -> np.ndarray:
    if fixed is None:
        return np.zeros(n, dtype=bool)
    f = np.asarray(fixed)
    if f.dtype != bool or f.shape != (n,):
        raise ParameterError(f"`fixed` must be a boolean mask with one entry per cell ({n})")
    return f


def _polish(
    table: Table,
    a: np.ndarray,
    w: np.ndarray,
    prim: np.ndarray,
    up: np.ndarray,
    upl: np.ndarray,
    lpl: np.ndarray,
    fix: np.ndarray,
    nonnegative: bool,
) -> np.ndarray | None:
    """The optimal adjustment for fixed directions: a linear program without big-M."""
    from scipy import sparse
    from scipy.optimize import linprog

    n = len(a)
    lo_p, hi_p = np.zeros(n), np.full(n, np.inf)
    lo_m, hi_m = np.zeros(n), np.full(n, np.inf)
    if nonnegative:
        hi_m = a.copy()
    lo_p[prim[up]] = upl[prim[up]]
    hi_m[prim[up]] = 0.0
    lo_m[prim[~up]] = lpl[prim[~up]]
    hi_p[prim[~up]] = 0.0
    hi_p[fix] = hi_m[fix] = 0.0
    cons = table.constraints()
    kw: dict[str, Any] = {}
    if cons.shape[0]:
        kw = {"A_eq": sparse.hstack([cons, -cons], format="csr"), "b_eq": np.zeros(cons.shape[0])}
    res = linprog(
        np.concatenate([w, w]),
        bounds=np.column_stack([np.concatenate([lo_p, lo_m]), np.concatenate([hi_p, hi_m])]),
        method="highs",
        **kw,
    )
    if res.status != 0:
        return None
    d = res.x[:n] - res.x[n:]
    # snap tiny solver residue so that unmoved cells keep their exact value
    d[np.abs(d) <= 1e-12 * np.maximum(1.0, np.abs(a))] = 0.0
    return d


def _infeasible_message(nonnegative: bool, n_fixed: int) -> str:
    why = []
    if n_fixed:
        why.append(f"{n_fixed} cell(s) held fixed")
    if nonnegative:
        why.append("non-negative cells")
    because = f" with {' and '.join(why)}" if why else ""
    return (
        "no controlled tabular adjustment exists: the primary cells cannot all leave their "
        f"protection intervals while the table stays additive{because}; release fixed cells, "
        "pass nonnegative=False, lower the protection levels, or use cell suppression"
    )


def _verify(
    table: Table,
    adjusted: np.ndarray,
    prim: np.ndarray,
    up: np.ndarray,
    upl: np.ndarray,
    lpl: np.ndarray,
    nonnegative: bool,
    fix: np.ndarray,
) -> None:
    """CTA's own check of its output: additive, primaries out, bounds kept (a bug if not)."""
    a = table.value
    tol = _TOL * np.maximum(1.0, np.abs(a))
    d = adjusted - a
    ok = bool(np.all(d[prim[up]] >= upl[prim[up]] - tol[prim[up]]))
    ok &= bool(np.all(-d[prim[~up]] >= lpl[prim[~up]] - tol[prim[~up]]))
    ok &= bool(np.all(np.abs(d[fix]) <= tol[fix]))
    if nonnegative:
        ok &= bool(np.all(adjusted >= -tol))
    cons = table.constraints()
    if cons.shape[0]:
        scale = np.maximum(1.0, np.abs(cons) @ np.abs(adjusted))
        ok &= bool(np.all(np.abs(cons @ adjusted) <= 1e-6 * scale))
    if not ok:
        raise VerificationError(
            "controlled tabular adjustment: the solver's table is not additive or leaves a "
            "primary cell inside its protection interval (a bug in sdckit)"
        )
