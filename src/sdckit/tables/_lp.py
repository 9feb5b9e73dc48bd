"""Shared linear-programming machinery of the audit and of secondary cell suppression.

Both solve many small LPs of the same shape: over the suppressed cells of one *component*
(cells linked through additivity relations that hold at least one suppressed cell), the
deviations ``d = x - a`` from the true values with ``A_K d = 0`` and per-cell bounds, and one
cell's deviation maximized or minimized. Published cells are constants; since the table is
additive (``A a = 0``) the right-hand side of the deviation system is exactly zero.

:func:`components` splits the suppressed cells into such components
(:func:`scipy.sparse.csgraph.connected_components` on the bipartite cell-relation graph);
:func:`solve_blocks` solves a list of such LPs with HiGHS (:func:`scipy.optimize.linprog`),
several of them per call as one block-diagonal LP (the blocks share no variable, so the
optimum of the sum is the optimum of each block, and the duals of each block's rows are that
block's duals): ``linprog``'s fixed cost per call (a few milliseconds) dominates LPs of a few
hundred variables, so stacking them is several times faster. A stacked call that is not
solved to optimality (one block unbounded) is split in halves until the faulty block is
alone.

:class:`WarmLP` solves many LPs over the *same* system (one component, one objective per
target cell) with one HiGHS instance kept between them: only the objective changes, so each
solve restarts the simplex method from the previous optimal basis (a few pivots) instead of
from scratch, and skips ``linprog``'s per-call set-up. It uses the HiGHS object bundled with
SciPy (``scipy.optimize._highspy._core._Highs``, the class ``linprog`` itself drives); where
that is missing or a solve does not end optimal or unbounded, it answers through
:func:`solve_blocks` instead, so results never depend on it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse
from scipy.optimize import linprog
from scipy.sparse.csgraph import connected_components

from sdckit.errors import VerificationError

try:  # the HiGHS object that scipy.optimize.linprog drives (private; optional here)
    from scipy.optimize._highspy import _core as _highs_core
except ImportError:  # pragma: no cover - depends on the SciPy build
    _highs_core = None

#: A stacked LP holds at most this many variables (beyond that HiGHS's time grows faster
#: than linearly in the number of blocks, measured on 2-D tables).
BATCH_VARIABLES = 3000
#: ... and at most this many blocks.
BATCH_BLOCKS = 64


def _equality_lp(
    h: Any,
    csc: Any,
    cost: np.ndarray,
    lower: np.ndarray,
    upper: np.ndarray,
    options: tuple[tuple[str, Any], ...] = (),
) -> Any:
    """A HiGHS instance holding ``min cost x`` s.t. ``A x = 0``, ``lower <= x <= upper``
    (infinite bounds as HiGHS' infinity), quiet, single-threaded, without presolve (so
    bound and cost changes re-solve warm), plus ``options``; None where this SciPy build's
    HiGHS bindings refuse the model (the callers then answer through ``linprog``)."""
    try:
        csc.sort_indices()
        m, n = csc.shape
        lp = h.HighsLp()
        lp.num_col_ = n
        lp.num_row_ = m
        lp.a_matrix_.num_col_ = n
        lp.a_matrix_.num_row_ = m
        lp.a_matrix_.format_ = h.MatrixFormat.kColwise
        lp.col_cost_ = np.asarray(cost, dtype=float)
        lp.col_lower_ = np.where(np.isfinite(lower), lower, -h.kHighsInf)
        lp.col_upper_ = np.where(np.isfinite(upper), upper, h.kHighsInf)
        lp.row_lower_ = np.zeros(m)
        lp.row_upper_ = np.zeros(m)
        lp.a_matrix_.start_ = csc.indptr.astype(np.int32)
        lp.a_matrix_.index_ = csc.indices.astype(np.int32)
        lp.a_matrix_.value_ = csc.data.astype(float)
        highs = h._Highs()
        for key, val in (("output_flag", False), ("presolve", "off"), ("threads", 1), *options):
            highs.setOptionValue(key, val)
        if highs.passModel(lp) == h.HighsStatus.kError:
            return None
        return highs
    except Exception:  # pragma: no cover - an incompatible SciPy build: use linprog
        return None


@dataclass
class Component:
    """A component: its suppressed ``cells`` and the ``rows`` (relations) touching them, with
    ``a`` the relations restricted to those cells (``len(rows) x len(cells)``, CSR)."""

    cells: np.ndarray
    rows: np.ndarray
    a: sparse.csr_matrix


def components(
    constraints: sparse.csr_matrix | sparse.csc_matrix, cells: np.ndarray
) -> list[Component]:
    """The connected components of ``cells`` (sorted cell indices) under the relations of
    ``constraints`` (CSR, or CSC for faster column slicing): two cells are linked when a
    relation holds both. Components are ordered by their smallest cell; a cell in no
    relation forms a component with no rows."""
    cells = np.asarray(cells, dtype=np.int64)
    k = len(cells)
    if k == 0:
        return []
    sub = constraints[:, cells].tocsr()
    touched = np.flatnonzero(np.diff(sub.indptr) > 0)
    sub = sub[touched].tocsr()
    m = len(touched)
    coo = sub.tocoo()
    # bipartite graph: cells 0..k-1, relations k..k+m-1
    graph = sparse.coo_matrix(
        (np.ones(coo.nnz, dtype=np.int8), (coo.col, coo.row + k)), shape=(k + m, k + m)
    )
    _, labels = connected_components(graph, directed=False)
    cell_lab = labels[:k]
    row_lab = labels[k:]
    # renumber components by their first cell (cells are sorted)
    _, first = np.unique(cell_lab, return_index=True)
    order = np.argsort(first, kind="stable")
    uniq = np.unique(cell_lab)[order]
    out: list[Component] = []
    cell_sort = np.argsort(cell_lab, kind="stable")
    cell_bounds = np.searchsorted(cell_lab[cell_sort], uniq)
    cell_ends = np.searchsorted(cell_lab[cell_sort], uniq, side="right")
    row_sort = np.argsort(row_lab, kind="stable")
    row_lab_sorted = row_lab[row_sort]
    sub_csc = sub.tocsc()
    for lab, lo, hi in zip(uniq, cell_bounds, cell_ends, strict=True):
        local_cells = cell_sort[lo:hi]
        rlo, rhi = np.searchsorted(row_lab_sorted, [lab, lab + 1])
        local_rows = row_sort[rlo:rhi]
        block = sub_csc[:, local_cells].tocsr()[local_rows] if len(local_rows) else None
        out.append(
            Component(
                cells=cells[local_cells],
                rows=touched[local_rows],
                a=block.tocsr() if block is not None else sparse.csr_matrix((0, len(local_cells))),
            )
        )
    return out


def determined(constraints: sparse.csr_matrix, suppressed: np.ndarray) -> np.ndarray:
    """The suppressed cells whose value the published cells determine by *peeling*: a
    relation with a single hidden cell gives its value, which then counts as known, and so
    on (in waves, all such relations at once). Exact: these cells' intervals are their
    values; the remaining hidden cells need LPs."""
    unknown = np.asarray(suppressed, dtype=bool).copy()
    out = np.zeros_like(unknown)
    if constraints.shape[0] == 0:
        return out
    pattern = constraints.copy()
    pattern.data = np.ones_like(pattern.data)
    while True:
        count = pattern @ unknown.astype(np.float64)
        single = np.flatnonzero(np.rint(count) == 1)
        if len(single) == 0:
            return out
        sub = pattern[single]
        hit = sub.indices[unknown[sub.indices]]
        out[hit] = True
        unknown[hit] = False


@dataclass
class Block:
    """One LP: ``optimize d[target]`` (``sense`` +1 maximize, -1 minimize) subject to
    ``a d = 0`` and ``lb <= d <= ub``."""

    a: sparse.csr_matrix
    lb: np.ndarray
    ub: np.ndarray
    target: int
    sense: int


@dataclass
class BlockResult:
    """A solved block: the optimal ``value`` of ``d[target]`` (``±inf`` when unbounded), an
    optimal point ``x`` and the duals ``nu`` of the rows in ``linprog``'s convention for the
    minimization actually solved (``None`` when unbounded)."""

    value: float
    x: np.ndarray | None
    nu: np.ndarray | None


def _stack(blocks: Sequence[Block]) -> tuple[np.ndarray, sparse.csr_matrix, np.ndarray]:
    rows, cols, vals, lbs, ubs = [], [], [], [], []
    c_parts = []
    r0 = c0 = 0
    for b in blocks:
        coo = b.a.tocoo()
        rows.append(coo.row + r0)
        cols.append(coo.col + c0)
        vals.append(coo.data)
        n = b.a.shape[1]
        c = np.zeros(n)
        c[b.target] = -float(b.sense)
        c_parts.append(c)
        lbs.append(b.lb)
        ubs.append(b.ub)
        r0 += b.a.shape[0]
        c0 += n
    a = sparse.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(r0, c0)
    )
    bounds = np.column_stack([np.concatenate(lbs), np.concatenate(ubs)])
    return np.concatenate(c_parts), a, bounds


def _solve(blocks: Sequence[Block], presolve: bool = True) -> list[BlockResult]:
    c, a, bounds = _stack(blocks)
    res = linprog(
        c,
        A_eq=a if a.shape[0] else None,
        b_eq=np.zeros(a.shape[0]) if a.shape[0] else None,
        bounds=bounds,
        method="highs",
        options={"presolve": presolve},
    )
    if res.status == 0:
        out = []
        r0 = c0 = 0
        nu_all = np.asarray(res.eqlin.marginals, dtype=float) if a.shape[0] else np.zeros(0)
        for b in blocks:
            m, n = b.a.shape
            x = np.asarray(res.x[c0 : c0 + n], dtype=float)
            out.append(BlockResult(float(x[b.target]), x, nu_all[r0 : r0 + m]))
            r0 += m
            c0 += n
        return out
    if len(blocks) > 1:
        half = len(blocks) // 2
        return _solve(blocks[:half], presolve) + _solve(blocks[half:], presolve)
    b = blocks[0]
    if res.status == 3:
        return [BlockResult(float(b.sense) * np.inf, None, None)]
    if presolve:  # "unbounded or infeasible" from presolve, or numerical trouble: retry plain
        return _solve(blocks, presolve=False)
    raise VerificationError(
        f"the LP solver failed on a feasibility interval ({res.message}); the deviation "
        "system is feasible by construction, so this is a numerical failure"
    )


def solve_blocks(blocks: Sequence[Block]) -> list[BlockResult]:
    """Solve every block (see the module docstring); results in the order given."""
    out: list[BlockResult] = []
    batch: list[Block] = []
    size = 0
    for b in blocks:
        n = b.a.shape[1]
        if batch and (size + n > BATCH_VARIABLES or len(batch) >= BATCH_BLOCKS):
            out.extend(_solve(batch))
            batch, size = [], 0
        batch.append(b)
        size += n
    if batch:
        out.extend(_solve(batch))
    return out


class WarmLP:
    """The LPs ``optimize d[target]`` subject to ``a d = 0``, ``lb <= d <= ub`` for many
    targets over one system (see the module docstring): :meth:`solve` gives the same
    :class:`BlockResult` as :func:`solve_blocks` on ``Block(a, lb, ub, target, sense)``, each
    solve warm-started from the previous basis (HiGHS's simplex method, no presolve, so the
    basis survives; deterministic for a given sequence of targets)."""

    def __init__(self, a: sparse.csr_matrix, lb: np.ndarray, ub: np.ndarray) -> None:
        self.a = a.tocsr()
        self.lb = np.asarray(lb, dtype=float)
        self.ub = np.asarray(ub, dtype=float)
        self.m, self.n = self.a.shape
        self._highs = None if _highs_core is None or self.m == 0 else self._build()
        self._target = -1

    def _build(self) -> Any:
        h = _highs_core
        assert h is not None
        return _equality_lp(
            h, self.a.tocsc(), np.zeros(self.n), self.lb, self.ub, (("simplex_strategy", 4),)
        )

    def solve(self, target: int, sense: int) -> BlockResult:
        """``max`` (``sense=1``) or ``min`` (``-1``) of ``d[target]``."""
        highs = self._highs
        if highs is not None:
            h = _highs_core
            assert h is not None
            if self._target >= 0:
                highs.changeColCost(self._target, 0.0)
            highs.changeColCost(target, -float(sense))
            self._target = target
            highs.run()
            status = highs.getModelStatus()
            if status == h.HighsModelStatus.kOptimal:
                sol = highs.getSolution()
                x = np.asarray(sol.col_value, dtype=float)
                return BlockResult(float(x[target]), x, np.asarray(sol.row_dual, dtype=float))
            if status == h.HighsModelStatus.kUnbounded:
                return BlockResult(float(sense) * np.inf, None, None)
            # anything else: start afresh next time, answer through linprog now
            highs.clearSolver()
        return solve_blocks([Block(self.a, self.lb, self.ub, target, sense)])[0]


def unbounded_directions(
    comps: Sequence[Component], lb: Sequence[np.ndarray], ub: Sequence[np.ndarray]
) -> list[np.ndarray | None]:
    """For each component whose cells all have a finite lower bound (the usual ``x >= 0``),
    which cells can grow without bound: the support of the recession cone
    ``{r >= 0 (r_c = 0 where ub_c is finite), A_K r = 0}``, found by one LP
    ``max sum t_c, 0 <= t_c <= min(r_c, 1)`` (the cone is closed under addition, so one ray
    reaches every cell any ray reaches). ``None`` for components with a cell unbounded
    below (the caller solves their LPs one by one)."""
    out: list[np.ndarray | None] = [None] * len(comps)
    todo: list[int] = []
    for i, comp in enumerate(comps):
        if np.isfinite(lb[i]).all():
            if np.isfinite(ub[i]).all() or comp.a.shape[0] == 0:
                out[i] = ~np.isfinite(ub[i])  # no relation: an infinite bound is reachable
            else:
                todo.append(i)
    # stacked LP over (r, t): for every component  A r = 0, t - r <= 0, 0 <= t <= 1
    batch: list[int] = []
    size = 0

    def flush(batch: list[int]) -> None:
        if not batch:
            return
        eq_rows, eq_cols, eq_vals = [], [], []
        in_rows, in_cols, in_vals = [], [], []
        lbs, ubs, cs = [], [], []
        r_eq = r_in = c0 = 0
        for i in batch:
            comp = comps[i]
            k = comp.a.shape[1]
            coo = comp.a.tocoo()
            eq_rows.append(coo.row + r_eq)
            eq_cols.append(coo.col + c0)
            eq_vals.append(coo.data)
            idx = np.arange(k)
            in_rows += [idx + r_in, idx + r_in]
            in_cols += [idx + c0 + k, idx + c0]
            in_vals += [np.ones(k), -np.ones(k)]
            ray_ub = np.where(np.isfinite(ub[i]), 0.0, np.inf)
            lbs += [np.zeros(k), np.zeros(k)]
            ubs += [ray_ub, np.where(np.isfinite(ub[i]), 0.0, 1.0)]
            cs += [np.zeros(k), -np.ones(k)]
            r_eq += comp.a.shape[0]
            r_in += k
            c0 += 2 * k
        a_eq = sparse.csr_matrix(
            (np.concatenate(eq_vals), (np.concatenate(eq_rows), np.concatenate(eq_cols))),
            shape=(r_eq, c0),
        )
        a_ub = sparse.csr_matrix(
            (np.concatenate(in_vals), (np.concatenate(in_rows), np.concatenate(in_cols))),
            shape=(r_in, c0),
        )
        res = linprog(
            np.concatenate(cs),
            A_ub=a_ub,
            b_ub=np.zeros(r_in),
            A_eq=a_eq,
            b_eq=np.zeros(r_eq),
            bounds=np.column_stack([np.concatenate(lbs), np.concatenate(ubs)]),
            method="highs",
        )
        if res.status != 0:
            return  # leave these components to the LPs one by one
        c0 = 0
        for i in batch:
            k = comps[i].a.shape[1]
            out[i] = res.x[c0 + k : c0 + 2 * k] > 0.5
            c0 += 2 * k

    for i in todo:
        k = comps[i].a.shape[1]
        if batch and (size + 2 * k > 2 * BATCH_VARIABLES or len(batch) >= BATCH_BLOCKS):
            flush(batch)
            batch, size = [], 0
        batch.append(i)
        size += 2 * k
    flush(batch)
    return out


class MinMoveLP:
    """The least-movement deviation LPs of the removal pass
    (:meth:`sdckit.tables.patterns.AttackerModel.witness`) over one pattern, kept in one
    warm-started HiGHS instance: variables ``u, v >= 0`` per cell of the pattern
    (``d = u - v``, ``u <= up``, ``v <= down``), rows ``a (u - v) = 0``, objective
    ``min sum (u + v)``. :meth:`publish` fixes a cell's deviation at 0 (its bounds) and
    :meth:`solve` asks for a deviation moving one cell by at least ``need`` upwards or
    downwards -- both bound changes only, so each solve restarts the dual simplex method
    from the previous optimal basis (a few pivots) instead of building an LP. Where the
    HiGHS object is missing or a solve ends neither optimal nor infeasible, the same LP goes
    to :func:`scipy.optimize.linprog`, so results never depend on it."""

    def __init__(self, a: sparse.csr_matrix, up: np.ndarray, down: np.ndarray) -> None:
        self.a = a.tocsr()
        self.m, self.n = self.a.shape
        self.up = np.asarray(up, dtype=float)
        self.down = np.asarray(down, dtype=float)
        self.lb = np.zeros(2 * self.n)
        self.ub = np.concatenate([self.up, self.down])
        self._highs = None if _highs_core is None else self._build()

    def _build(self) -> Any:
        h = _highs_core
        assert h is not None
        return _equality_lp(
            h, sparse.hstack([self.a, -self.a], format="csc"), np.ones(2 * self.n), self.lb, self.ub
        )

    def _set(self, col: int, lo: float, hi: float) -> None:
        self.lb[col], self.ub[col] = lo, hi
        if self._highs is not None:
            assert _highs_core is not None
            inf = _highs_core.kHighsInf
            self._highs.changeColBounds(col, lo, hi if np.isfinite(hi) else inf)

    def publish(self, k: int, published: bool = True) -> None:
        """Fix cell ``k``'s deviation at 0 (``published``), or free it again."""
        self._set(k, 0.0, 0.0 if published else float(self.up[k]))
        self._set(self.n + k, 0.0, 0.0 if published else float(self.down[k]))

    def solve(self, k: int, sense: int, need: float) -> np.ndarray | None:
        """The deviation ``d`` of least ``sum |d|`` with ``sense * d[k] >= need``; None when
        none exists. Cell ``k`` must not be published."""
        up_k, down_k = float(self.up[k]), float(self.down[k])
        if sense == 1:
            self._set(k, need, up_k)
            self._set(self.n + k, 0.0, 0.0)
        else:
            self._set(k, 0.0, 0.0)
            self._set(self.n + k, need, down_k)
        try:
            if (sense == 1 and need > up_k) or (sense == -1 and need > down_k):
                return None
            highs = self._highs
            if highs is not None:
                h = _highs_core
                assert h is not None
                highs.run()
                status = highs.getModelStatus()
                if status == h.HighsModelStatus.kOptimal:
                    x = np.asarray(highs.getSolution().col_value, dtype=float)
                    return x[: self.n] - x[self.n :]
                if status == h.HighsModelStatus.kInfeasible:
                    return None
                highs.clearSolver()  # anything else: start afresh next time, linprog now
            res = linprog(
                np.ones(2 * self.n),
                A_eq=sparse.hstack([self.a, -self.a]).tocsr() if self.m else None,
                b_eq=np.zeros(self.m) if self.m else None,
                bounds=np.column_stack([self.lb, self.ub]),
                method="highs",
            )
            if res.status != 0:
                return None
            return np.asarray(res.x[: self.n] - res.x[self.n :], dtype=float)
        finally:
            self._set(k, 0.0, up_k)
            self._set(self.n + k, 0.0, down_k)
