"""Controlled rounding: every cell to an adjacent multiple of a base, the table kept additive.

Each cell value ``a`` is published as one of the two multiples of the base ``b`` around it,
``floor_b(a) = b * floor(a / b)`` or ``floor_b(a) + b``; a value that already is a multiple
of the base stays as it is (*zero-restricted* rounding, so a zero stays zero). Unlike
independent rounding of every cell, the rounded cells satisfy all the additivity relations
of the table (``A r = 0``, :meth:`~sdckit.tables.table.Table.constraints`): every published
total is the sum of its published parts.

Cox (1987), "A constructive procedure for unbiased controlled rounding", *JASA* 82(398),
520-524, shows that a zero-restricted controlled rounding always exists for a two-way table
with its margins (and constructs a random, unbiased one); for tables of three or more
dimensions, and for two-way tables with hierarchies in both dimensions, it need not exist
(the tests hold an example of each). Like
tau-Argus's controlled rounding (Salazar-González et al. 2004, "Getting the best results in
controlled rounding with the least effort", *PSD 2004*, LNCS 3050, 58-72; tau-Argus manual,
sec. "Controlled rounding"), this module looks for the rounding *closest* to the table: the
mixed integer program with one binary ``z_i`` per cell that is not a multiple,

    minimize    sum_i |r_i - a_i| = sum_i rem_i + sum_i z_i (b - 2 rem_i)
    subject to  A r = 0,   r_i = floor_b(a_i) + b z_i,   z_i in {0, 1},

with ``rem_i = a_i - floor_b(a_i)``, solved with HiGHS (:func:`scipy.optimize.milp`). The
result is deterministic (no randomness; it is not Cox's unbiased random rounding).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sdckit.errors import ConfigError, ParameterError, VerificationError
from sdckit.tables.table import Table

__all__ = ["Rounding", "controlled_rounding"]

#: Relative tolerance under which a value counts as a multiple of the base.
MULTIPLE_TOLERANCE = 1e-9


@dataclass
class Rounding:
    """A controlled rounding of a table.

    ``rounded``: every cell's published value (a multiple of ``base``); ``deviation``:
    ``rounded - value`` per cell (``|deviation| < base``, 0 for multiples of the base);
    ``details``: the summary (see :meth:`to_dict`).
    """

    rounded: np.ndarray
    deviation: np.ndarray
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary: ``base``, ``sum_abs_deviation``, ``max_abs_deviation``,
        ``sum_rel_deviation``, ``max_rel_deviation`` (relative to ``max(|value|, 1)``),
        ``cells_changed``, ``cells_up``, ``cells_down``, ``binaries`` (cells not a multiple
        of the base), ``optimal`` (False when the time limit stopped the search first),
        ``mip_gap`` (HiGHS's relative gap of the rounding returned) and ``solve_seconds``."""
        return dict(self.details)


def controlled_rounding(table: Table, base: float, *, time_limit: float | None = None) -> Rounding:
    """Round every cell of ``table`` to an adjacent multiple of ``base``, additively.

    Zero-restricted (a multiple of ``base`` stays as it is) and closest to the table (the
    total absolute deviation is minimal), see the module docstring. ``time_limit`` (seconds)
    bounds the search; the best rounding found by then is returned (``details["optimal"]``
    False). Raises :class:`~sdckit.errors.ParameterError` for a base that is not a positive
    number and :class:`~sdckit.errors.ConfigError` when no controlled rounding to ``base``
    exists (possible for tables of three or more dimensions and for two-way tables with
    hierarchies in both dimensions) or none was found in time.
    """
    from scipy import sparse
    from scipy.optimize import Bounds, LinearConstraint

    from sdckit.core.solver import milp

    b = _check_base(base)
    if time_limit is not None and not (np.isfinite(time_limit) and time_limit > 0):
        raise ParameterError(f"time_limit must be a positive number of seconds, got {time_limit!r}")
    t0 = time.perf_counter()
    a = np.asarray(table.value, dtype=np.float64)
    q = a / b
    nearest = np.rint(q)
    multiple = np.abs(q - nearest) <= MULTIPLE_TOLERANCE * np.maximum(1.0, np.abs(q))
    low = np.where(multiple, nearest, np.floor(q)) * b  # floor_b(a); the value itself if multiple
    free = np.flatnonzero(~multiple)
    rem = a[free] - low[free]

    cons = table.constraints()
    # A (low + b z) = 0  <=>  A[:, free] z = -(A low) / b, an integer right-hand side
    rhs = -(cons @ low) / b
    rhs_int = np.rint(rhs)
    a_free = sparse.csr_matrix(cons[:, free])
    involved = np.diff(a_free.indptr) > 0
    bad_fixed = ~involved & (np.abs(rhs_int) > 0)
    if bad_fixed.any():  # a relation among multiples only that does not add up
        raise ConfigError(_infeasible_message(b, "a relation among multiples of the base"))
    z = np.zeros(len(free))
    optimal = True  # no binaries: nothing to search
    gap: float | None = 0.0
    if len(free):
        c = b - 2.0 * rem
        options: dict[str, Any] = {"disp": False}
        if time_limit is not None:
            options["time_limit"] = float(time_limit)
        rows = np.flatnonzero(involved)
        constraints = (
            [LinearConstraint(a_free[rows], rhs_int[rows], rhs_int[rows])] if len(rows) else []
        )
        res = milp(
            c,
            integrality=np.ones(len(free)),
            bounds=Bounds(0.0, 1.0),
            constraints=constraints,
            options=options,
        )
        if res.status == 2:
            raise ConfigError(_infeasible_message(b, "the additivity relations"))
        if res.x is None:
            raise ConfigError(
                f"no controlled rounding to base {b:g} was found within the time limit "
                f"({time_limit} s; HiGHS: {res.message}); raise time_limit, or use another "
                "base or method"
            )
        optimal = res.status == 0
        g = getattr(res, "mip_gap", None)
        gap = float(g) if g is not None and np.isfinite(g) else None
        z = np.rint(res.x)
    rounded = low.copy()
    rounded[free] += b * z
    deviation = rounded - a
    _verify(table, rounded, deviation, b)
    rel = np.abs(deviation) / np.maximum(np.abs(a), 1.0)
    details = {
        "base": b,
        "sum_abs_deviation": float(np.abs(deviation).sum()),
        "max_abs_deviation": float(np.abs(deviation).max(initial=0.0)),
        "sum_rel_deviation": float(rel.sum()),
        "max_rel_deviation": float(rel.max(initial=0.0)),
        "cells_changed": int((np.abs(deviation) > 0).sum()),
        "cells_up": int((deviation > 0).sum()),
        "cells_down": int((deviation < 0).sum()),
        "binaries": len(free),
        "optimal": bool(optimal),
        "mip_gap": gap,
        "solve_seconds": time.perf_counter() - t0,
    }
    return Rounding(rounded, deviation, details)


def _check_base(base: float) -> float:
    try:
        b = float(base)
    except (TypeError, ValueError):
        raise ParameterError(f"the rounding base must be a positive number, got {base!r}") from None
    if not (np.isfinite(b) and b > 0):
        raise ParameterError(f"the rounding base must be a positive number, got {base!r}")
    return b


def _infeasible_message(base: float, where: str) -> str:
    return (
        f"no zero-restricted controlled rounding to base {base:g} exists for this table "
        f"({where} cannot all hold; this can happen for tables of three or more dimensions "
        "or with hierarchies in two dimensions, never for a two-way table with its margins); try "
        "another base, publish the table as two-way sub-tables, or protect it with cell "
        "suppression or controlled tabular adjustment (method cta) instead"
    )


def _verify(table: Table, rounded: np.ndarray, deviation: np.ndarray, base: float) -> None:
    """The rounding's own check: multiples within one base, additive (a bug otherwise)."""
    cons = table.constraints()
    scale = np.maximum(1.0, np.abs(cons) @ np.abs(rounded)) if cons.shape[0] else 1.0
    ok = bool(np.all(np.abs(deviation) < base * (1 + 1e-9)))
    ok = ok and (cons.shape[0] == 0 or bool(np.all(np.abs(cons @ rounded) <= 1e-9 * scale)))
    if not ok:
        raise VerificationError(
            f"controlled rounding to base {base:g}: the solver's rounding is not additive or "
            "moves a cell by a base or more (a bug in sdckit)"
        )
