"""Audit of a suppression pattern: the interval an intruder can derive for every hidden cell.

An intruder who sees the published cells of a table knows that the hidden (suppressed) cells
satisfy every additivity relation of the table (``A x = 0``, :meth:`Table.constraints`: every
total and sub-total is the sum of its parts, in every dimension and at every hierarchy
level), that the published cells have their values, and any a-priori bounds on the cells
(by default ``x >= 0``). The *feasibility interval* of a suppressed cell ``c`` is
``[min x_c, max x_c]`` over that polyhedron: two linear programs per cell (Hundepool et al.
2012, *Statistical Disclosure Control*, sec. 4.3.2 "The audit"; Fischetti & Salazar 2001,
"Solving the cell suppression problem on tabular data with linear constraints", *Management
Science* 47(7), 1008-1027, sec. 2, the attacker problems; tau-Argus manual, "Audit").

A primary cell with value ``a``, upper and lower protection levels ``UPL``/``LPL``
(:func:`sdckit.tables.rules.primary_cells`) is protected when its interval reaches
``a + UPL`` and ``a - LPL``; every suppressed cell's interval must also have a positive width
(a cell of width 0 is disclosed exactly).

Only the suppressed cells are variables; the published ones are constants moved to the
right-hand side, and since the table is additive the system of deviations ``d = x - a`` of
the hidden cells has a zero right-hand side: ``A_S d = 0``, ``lb - a <= d <= ub - a``. The
hidden cells split into independent components (cells linked through relations that hold at
least one hidden cell; :func:`sdckit.tables._lp.components`), each solved on its own. Two
exact shortcuts save most LPs: one LP per component finds the cells that can grow without
bound (the recession cone of the polyhedron), and every optimal point of an LP is a feasible
table, so a cell that some solution already puts on its a-priori bound needs no LP for that
side. All comparisons use a tolerance of ``1e-7`` times the table's largest absolute value
(at least ``1e-7``).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from sdckit.core.encoding import as_text
from sdckit.errors import DataError, ParameterError, preview
from sdckit.tables._lp import (
    Component,
    WarmLP,
    components,
    determined,
    unbounded_directions,
)
from sdckit.tables.rules import Primary
from sdckit.tables.table import Table

__all__ = [
    "Audit",
    "PRIMARY_STATUSES",
    "PUBLISHED_STATUSES",
    "SECONDARY_STATUSES",
    "audit",
    "audit_cells",
    "cell_bounds",
    "tolerance",
]

#: Relative tolerance of every comparison of the audit (times the table's scale).
RELATIVE_TOLERANCE = 1e-7

#: Status codes read as "primary (suppressed)": sdckit's own and sdcTable's ``u``.
PRIMARY_STATUSES = frozenset({"primary", "u", "unsafe"})
#: Status codes read as "secondary (suppressed)": sdckit's, sdcTable's ``x``.
SECONDARY_STATUSES = frozenset({"secondary", "x", "suppressed"})
#: Status codes read as "published": sdckit's ``safe``/``empty``, sdcTable's ``s``/``z``.
PUBLISHED_STATUSES = frozenset({"safe", "empty", "s", "z", "published"})


@dataclass
class Audit:
    """The audit of a suppression pattern (see the module docstring).

    ``lower``/``upper``: each suppressed cell's feasibility interval (NaN for published
    cells; ``±inf`` where unbounded); ``safe_cells``: per cell, whether it is protected (a
    primary cell: interval reaching ``value - LPL`` and ``value + UPL`` with positive width;
    published primaries are unsafe; every other cell is True, except, when no primary cells
    were given, suppressed cells whose interval has width 0); ``safe``: all cells safe;
    ``exposed``: the unsafe cells' indices; ``details``: counts of the work done.
    """

    suppressed: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    safe_cells: np.ndarray
    safe: bool
    exposed: np.ndarray
    primary: np.ndarray
    tolerance: float
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def width(self) -> np.ndarray:
        """``upper - lower`` (NaN for published cells)."""
        return self.upper - self.lower

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary: ``suppressed``, ``primary``, ``exposed`` (count and the first
        cells' indices), ``zero_width`` (suppressed cells disclosed exactly), ``safe``,
        ``components``, ``lps``, ``tolerance``."""
        width = self.width[self.suppressed]
        return {
            "suppressed": int(self.suppressed.sum()),
            "primary": int(self.primary.sum()),
            "exposed": int(len(self.exposed)),
            "exposed_cells": [int(i) for i in self.exposed[:20]],
            "zero_width": int((width <= self.tolerance).sum()),
            "safe": bool(self.safe),
            "tolerance": float(self.tolerance),
            **{k: v for k, v in self.details.items()},
        }


def tolerance(table: Table) -> float:
    """The audit's absolute tolerance for ``table``: ``1e-7 * max(1, max |value|)``."""
    scale = float(np.abs(table.value).max()) if table.n_cells else 1.0
    return RELATIVE_TOLERANCE * max(1.0, scale)


def cell_bounds(
    table: Table,
    lower_bounds: float | np.ndarray | None,
    upper_bounds: float | np.ndarray | None,
) -> tuple[np.ndarray, np.ndarray]:
    """The a-priori bounds per cell (scalars broadcast, None = unbounded); ParameterError for
    a wrong length or crossed bounds."""
    n = table.n_cells
    out = []
    for name, b, default in (
        ("lower_bounds", lower_bounds, -np.inf),
        ("upper_bounds", upper_bounds, np.inf),
    ):
        if b is None:
            out.append(np.full(n, default))
            continue
        arr = np.asarray(b, dtype=float)
        if arr.ndim == 0:
            arr = np.full(n, float(arr))
        if arr.shape != (n,):
            raise ParameterError(
                f"{name} must be a number or one value per cell ({n}), got shape {arr.shape}"
            )
        if np.isnan(arr).any():
            raise ParameterError(f"{name} has NaN at cell {int(np.flatnonzero(np.isnan(arr))[0])}")
        out.append(arr.copy())
    lo, hi = out
    if (lo > hi).any():
        i = int(np.flatnonzero(lo > hi)[0])
        raise ParameterError(f"cell {i}: lower bound {lo[i]:g} exceeds upper bound {hi[i]:g}")
    return lo, hi


def _check_values_within(
    table: Table, cells: np.ndarray, lo: np.ndarray, hi: np.ndarray, tol: float
) -> None:
    bad = cells[(table.value[cells] < lo[cells] - tol) | (table.value[cells] > hi[cells] + tol)]
    if len(bad):
        i = int(bad[0])
        codes = table.codes().iloc[i].to_dict()
        hint = (
            "; the table has negative cells: pass lower_bounds=None (or the true bounds)"
            if table.value[i] < lo[i]
            else ""
        )
        raise DataError(
            f"the cell {codes} has value {table.value[i]:g}, outside its a-priori bounds "
            f"[{lo[i]:g}, {hi[i]:g}] ({len(bad)} such suppressed cell(s)){hint}"
        )


def _mask(table: Table, suppressed: np.ndarray | Sequence[bool], name: str) -> np.ndarray:
    mask = np.asarray(suppressed)
    if mask.shape != (table.n_cells,):
        raise ParameterError(
            f"{name} must hold one flag per cell ({table.n_cells}), got shape {mask.shape}"
        )
    if mask.dtype != bool:
        if not np.isin(mask, (0, 1)).all():
            raise ParameterError(f"{name} must be a boolean mask over the table's cells")
        mask = mask.astype(bool)
    return mask


def intervals(
    table: Table,
    suppressed: np.ndarray,
    lo: np.ndarray,
    hi: np.ndarray,
    tol: float,
) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
    """The feasibility interval ``[lower, upper]`` of every suppressed cell (NaN elsewhere)
    and counts of the work (``components``, ``lps``); see the module docstring."""
    n = table.n_cells
    lower = np.full(n, np.nan)
    upper = np.full(n, np.nan)
    a = table.value
    # cells alone in a relation (after peeling known ones) are determined: width 0
    fixed = determined(table.constraints(), suppressed)
    lower[fixed] = upper[fixed] = a[fixed]
    cells = np.flatnonzero(suppressed & ~fixed)
    comps = components(table.constraints(), cells)
    # deviation bounds per component
    dlo = [lo[c.cells] - a[c.cells] for c in comps]
    dhi = [hi[c.cells] - a[c.cells] for c in comps]
    # best deviations seen so far (d = 0, the true table, is feasible)
    seen_max = [np.zeros(len(c.cells)) for c in comps]
    seen_min = [np.zeros(len(c.cells)) for c in comps]
    res_max = [np.full(len(c.cells), np.nan) for c in comps]
    res_min = [np.full(len(c.cells), np.nan) for c in comps]
    lps = 0
    with_rows = [i for i, c in enumerate(comps) if c.a.shape[0] > 0]
    for i, c in enumerate(comps):
        if c.a.shape[0] == 0:  # in no relation with another hidden cell... and no relation
            res_max[i] = dhi[i].copy()
            res_min[i] = dlo[i].copy()
    # cells that grow (shrink) without bound: one recession-cone LP per component
    up_free = unbounded_directions(
        [comps[i] for i in with_rows], [dlo[i] for i in with_rows], [dhi[i] for i in with_rows]
    )
    down_free = unbounded_directions(
        [_negated(comps[i]) for i in with_rows],
        [-dhi[i] for i in with_rows],
        [-dlo[i] for i in with_rows],
    )
    lps += 2 * len(with_rows)
    for j, i in enumerate(with_rows):
        if up_free[j] is not None:
            res_max[i][up_free[j]] = np.inf
        if down_free[j] is not None:
            res_min[i][down_free[j]] = -np.inf

    def settle(i: int) -> None:
        # an a-priori bound reached by a feasible point is the optimum
        hit_hi = np.isnan(res_max[i]) & (seen_max[i] >= dhi[i] - tol * 1e-3)
        res_max[i][hit_hi] = dhi[i][hit_hi]
        hit_lo = np.isnan(res_min[i]) & (seen_min[i] <= dlo[i] + tol * 1e-3)
        res_min[i][hit_lo] = dlo[i][hit_lo]

    for i in with_rows:
        # one warm-started HiGHS instance per component: only the objective changes
        c = comps[i]
        lp = WarmLP(c.a, dlo[i], dhi[i])
        for sense in (1, -1):
            target = res_max[i] if sense == 1 else res_min[i]
            for k in range(len(c.cells)):
                if not np.isnan(target[k]):
                    continue
                r = lp.solve(k, sense)
                lps += 1
                target[k] = r.value
                if r.x is not None:
                    np.maximum(seen_max[i], r.x, out=seen_max[i])
                    np.minimum(seen_min[i], r.x, out=seen_min[i])
                    settle(i)
    for i, c in enumerate(comps):
        # an interval never excludes the true value (LP round-off)
        upper[c.cells] = a[c.cells] + np.maximum(res_max[i], 0.0)
        lower[c.cells] = a[c.cells] + np.minimum(res_min[i], 0.0)
    return lower, upper, {"components": len(comps), "lps": lps, "determined": int(fixed.sum())}


def _negated(comp: Component) -> Component:
    """The component with every deviation negated (``-d``): same relations, sign-flipped
    columns, so the cone of the negated system gives the cells unbounded below."""
    return Component(comp.cells, comp.rows, -comp.a)


def audit(
    table: Table,
    suppressed: np.ndarray | Sequence[bool],
    primary: Primary | None = None,
    *,
    lower_bounds: float | np.ndarray | None = 0.0,
    upper_bounds: float | np.ndarray | None = None,
) -> Audit:
    """Audit the pattern ``suppressed`` (one flag per cell) of ``table``.

    Every suppressed cell's feasibility interval is computed (see the module docstring)
    under the published cells, the additivity of the table and the a-priori bounds
    ``lower_bounds``/``upper_bounds`` (scalars or one value per cell; None = unbounded;
    default ``x >= 0``). With ``primary`` (:class:`~sdckit.tables.rules.Primary`), each
    primary cell must be suppressed and its interval reach ``value - LPL`` and
    ``value + UPL`` (within the tolerance) with a positive width; without it, the pattern is
    safe when every suppressed cell's interval has a positive width.

    Raises :class:`~sdckit.errors.ParameterError` for a malformed mask or bounds and
    :class:`~sdckit.errors.DataError` when a suppressed cell's value lies outside its
    bounds (e.g. negative cells with the default ``x >= 0``).
    """
    mask = _mask(table, suppressed, "suppressed")
    lo, hi = cell_bounds(table, lower_bounds, upper_bounds)
    tol = tolerance(table)
    cells = np.flatnonzero(mask)
    _check_values_within(table, cells, lo, hi, tol)
    lower, upper, work = intervals(table, mask, lo, hi, tol)
    a = table.value
    width = upper - lower
    safe_cells = np.ones(table.n_cells, dtype=bool)
    if primary is not None:
        if primary.unsafe.shape != (table.n_cells,):
            raise ParameterError(
                f"primary has {primary.unsafe.shape[0]} cells, the table {table.n_cells}"
            )
        p = np.asarray(primary.unsafe, dtype=bool)
        with np.errstate(invalid="ignore"):
            ok = (
                mask
                & (lower <= a - primary.lower + tol)
                & (upper >= a + primary.upper - tol)
                & (width > tol)
            )
        safe_cells[p] = ok[p]
        prim = p
    else:
        with np.errstate(invalid="ignore"):
            safe_cells[mask] = width[mask] > tol
        prim = np.zeros(table.n_cells, dtype=bool)
    exposed = np.flatnonzero(~safe_cells)
    return Audit(
        suppressed=mask,
        lower=lower,
        upper=upper,
        safe_cells=safe_cells,
        safe=bool(len(exposed) == 0),
        exposed=exposed,
        primary=prim,
        tolerance=tol,
        details=work,
    )


def _status_text(values: Any) -> np.ndarray:
    return np.array([str(v).strip().lower() for v in as_text(pd.Series(values, dtype=object))])


def audit_cells(
    table: Table,
    status: Sequence[str] | np.ndarray | pd.DataFrame,
    primary: Primary | None = None,
    *,
    status_column: str = "status",
    suppressed_statuses: Collection[str] | None = None,
    primary_statuses: Collection[str] | None = None,
    published_statuses: Collection[str] | None = None,
    lower_bounds: float | np.ndarray | None = 0.0,
    upper_bounds: float | np.ndarray | None = None,
) -> Audit:
    """Audit a table protected elsewhere (tau-Argus, sdcTable, ...) from its cell statuses.

    ``status`` is one status per cell in the table's cell order, or a DataFrame with the
    table's dimension columns and ``status_column`` (cells it lacks are published). Status
    codes are read case-insensitively: primary (suppressed) ``primary``/``u``/``unsafe``,
    secondary (suppressed) ``secondary``/``x``/``suppressed``, published
    ``safe``/``empty``/``s``/``z``/``published`` (sdckit's and sdcTable's codes);
    ``primary_statuses``/``suppressed_statuses``/``published_statuses`` replace these sets
    for other tools. Without ``primary`` (the rules' protection levels), the cells with a
    primary status are the primaries and need a positive-width interval. An unknown status
    is a :class:`~sdckit.errors.DataError` naming it.
    """
    prim_codes = {s.lower() for s in (primary_statuses or PRIMARY_STATUSES)}
    sec_codes = {s.lower() for s in (suppressed_statuses or SECONDARY_STATUSES)}
    pub_codes = {s.lower() for s in (published_statuses or PUBLISHED_STATUSES)}
    if isinstance(status, pd.DataFrame):
        names = table.names
        missing = [c for c in [*names, status_column] if c not in status.columns]
        if missing:
            raise DataError(
                f"the status table lacks column(s) {preview(missing)} (columns: "
                f"{preview(list(status.columns))})"
            )
        idx = np.array(
            [
                table.cell_index(dict(zip(names, row, strict=True)))
                for row in status[names].astype(str).itertuples(index=False, name=None)
            ],
            dtype=np.int64,
        )
        text = np.full(table.n_cells, next(iter(sorted(pub_codes))), dtype=object)
        text[idx] = _status_text(status[status_column].to_numpy())
    else:
        text = _status_text(np.asarray(status, dtype=object))
        if text.shape != (table.n_cells,):
            raise ParameterError(
                f"status must hold one code per cell ({table.n_cells}), got {text.shape[0]}"
            )
    known = prim_codes | sec_codes | pub_codes
    unknown = ~np.isin(text, list(known))
    if unknown.any():
        raise DataError(
            f"unknown cell status {str(text[np.flatnonzero(unknown)[0]])!r} "
            f"({int(unknown.sum())} cell(s); statuses "
            f"{preview(sorted(set(text[unknown].tolist())))}); known: primary "
            f"{sorted(prim_codes)}, secondary {sorted(sec_codes)}, published "
            f"{sorted(pub_codes)} -- pass primary_statuses=/suppressed_statuses=/"
            "published_statuses= for another tool's codes"
        )
    is_prim = np.isin(text, list(prim_codes))
    suppressed = is_prim | np.isin(text, list(sec_codes))
    if primary is None:
        zero = np.zeros(table.n_cells)
        primary = Primary(is_prim, zero, zero.copy(), {"status": is_prim})
    return audit(table, suppressed, primary, lower_bounds=lower_bounds, upper_bounds=upper_bounds)
