"""Suppression patterns: the attacker model and the functions that find and complete a pattern.

A *pattern* of suppressed cells protects a primary cell ``p`` (value ``a_p``, protection
levels ``UPL_p``/``LPL_p`` from :func:`sdckit.tables.rules.primary_cells`) when an intruder
who knows the published cells, the additivity of the table and that cells are non-negative
can only bound ``x_p`` by an interval reaching ``a_p + UPL_p`` and ``a_p - LPL_p`` (Hundepool
et al. 2012, *Statistical Disclosure Control*, sec. 4.3; tau-Argus manual, "Secondary cell
suppression"). The dispatcher :func:`sdckit.tables.suppression.suppress` picks the method and
audits every pattern before returning it.

* :class:`AttackerModel` -- the model of Fischetti & Salazar (2001), "Solving the cell
  suppression problem on tabular data with linear constraints", *Management Science* 47(7),
  1008-1027: a binary ``y_c`` per cell (1 = suppressed; primaries fixed to 1, empty cells to
  0) and, for every primary and direction, the *attacker LP* at the current pattern; its dual
  gives a linear inequality in ``y`` that every protecting pattern satisfies. It is shared by
  the optimal method, the repair, the modular method (:mod:`sdckit.tables.modular`) and the
  singleton protection (:mod:`sdckit.tables.singletons`).
* :func:`optimal_pattern` -- a master MILP (:func:`scipy.optimize.milp`, HiGHS) minimizes the
  cost under the inequalities found so far; the attacker LPs at its solution either prove the
  solution protects every primary (it is then optimal) or yield violated inequalities, and
  the loop repeats (constraint generation; :func:`optimal_pattern` derives the inequality).
* :func:`simple_pattern` -- a fast deterministic heuristic: every relation holding a
  suppressed cell gets a second one (among the non-empty cells of the relation, the one
  completing the most other relations, then the cheapest), primaries first in cell order,
  until no relation holds a single suppressed cell (:func:`close_relations`).

:func:`repair` completes any pattern by additions only: either the optimal loop with the
pattern's cells fixed to 1 (the cheapest additions), or -- what
:func:`~sdckit.tables.suppression.suppress` uses after the heuristics, and the optimal method
after its time limit -- the unprotected primaries one at a time, each violated inequality
satisfied greedily. Empty cells (no contributor, value 0) are known zeros: never chosen.
Every step is deterministic (HiGHS is, ties are broken by cell order), so the same input
gives the same pattern.

Limits: the master MILP is a covering problem that HiGHS may take long to solve on tables
of a few thousand cells with high protection levels (then use ``time_limit``, or the
heuristics); the audit's two LPs per suppressed cell dominate on patterns of thousands of
cells (each component's LPs share one warm-started HiGHS instance,
:class:`sdckit.tables._lp.WarmLP`).
"""

from __future__ import annotations

import heapq
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from scipy import sparse
from scipy.optimize import linprog

from sdckit.core.solver import solve_mip
from sdckit.errors import DataError, ParameterError
from sdckit.tables._lp import (
    Block,
    BlockResult,
    Component,
    MinMoveLP,
    WarmLP,
    components,
    determined,
    solve_blocks,
)
from sdckit.tables.audit import tolerance
from sdckit.tables.rules import Primary
from sdckit.tables.table import Table

__all__ = [
    "MIP_GAP",
    "AttackerModel",
    "Pattern",
    "cell_costs",
    "check_primary",
    "close_relations",
    "optimal_pattern",
    "repair",
    "resolve_nonnegative",
    "simple_pattern",
]

#: Relative optimality gap of the master MILP (HiGHS's default): "optimal" means within it.
MIP_GAP = 1e-4
#: Batches of attacker LPs (variables per stacked LP, blocks per stacked LP).
_BATCH_VARIABLES = 3000
_BATCH_BLOCKS = 64
#: A pattern of at most this many cells is split into components whole (see
#: ``AttackerModel._components_of``).
_SMALL_PATTERN = 2000
#: A witness's cells are those it moves by more than this share of the tolerance. Not the
#: tolerance itself: on a table whose grand total is in the millions the tolerance is
#: several tenths, and a witness leaning on moves below it lost them when those cells were
#: published unchecked -- the removal pass left primaries short of their levels by a few
#: tenths (10 primaries on the 97,336-cell benchmark table).
_MOVED = 1e-3
#: Fractional master values below this count as 0 in the separation of an LP point.
_FRACTION_FLOOR = 1e-6


@dataclass
class Pattern:
    """A suppression pattern (``suppressed``, primaries included) and how it was found:
    ``optimal`` (minimum cost proven), ``iterations`` (master MILPs solved), ``cuts``
    (inequalities generated), ``lps`` (attacker LPs solved), ``completed`` (cells added by the
    greedy completion after a time limit), ``time_limit_hit``, ``lower_bound`` (a proven
    lower bound on the cost of the cells suppressed besides the fixed ones; 0 when unknown)
    and ``cut_rounds`` (LP-relaxation rounds of cuts)."""

    suppressed: np.ndarray
    optimal: bool = False
    iterations: int = 0
    cuts: int = 0
    lps: int = 0
    completed: int = 0
    time_limit_hit: bool = False
    lower_bound: float = 0.0
    cut_rounds: int = 0


# -- the attacker model ------------------------------------------------------------------------
@dataclass
class _Cut:
    """``sum coef[i] * y[cells[i]] >= rhs`` over the cells not fixed when it was made (the
    fixed ones are moved to ``rhs``); ``primary`` is the cell it protects."""

    cells: np.ndarray
    coef: np.ndarray
    rhs: float
    primary: int


class AttackerModel:
    """The attacker model of Fischetti & Salazar (2001) for one table: the deviation
    ``d_c = x_c - a_c`` of a suppressed cell may reach ``up[c]`` upwards and ``down[c]``
    downwards (``a_c`` when cells are non-negative, else a large bound ``M``); a published
    one stays 0. ``fixed1`` are the cells that must be suppressed (primaries and those
    given), empty cells are never suppressed. ``warm``: each component's attacker LPs share
    one warm-started HiGHS instance (:class:`~sdckit.tables._lp.WarmLP`; faster on small
    components, the modular method's sub-tables) instead of being stacked into few
    ``linprog`` calls; the inequalities differ where the LPs have several optimal duals."""

    def __init__(
        self,
        table: Table,
        primary: Primary,
        cost: np.ndarray,
        nonnegative: bool,
        published: np.ndarray | None = None,
        warm: bool = False,
    ) -> None:
        self.table = table
        self.warm = warm
        self.n = table.n_cells
        self.a = np.asarray(table.value, dtype=float)
        self.constraints = table.constraints().tocsr()
        self.cell_rows = self.constraints.T.tocsr()
        self.by_column = self.constraints.tocsc()  # fast column slices for components()
        self.tol = tolerance(table)
        self.empty = (table.freq == 0) & (self.a == 0)
        self.primary = np.asarray(primary.unsafe, dtype=bool)
        if (self.primary & self.empty).any():
            i = int(np.flatnonzero(self.primary & self.empty)[0])
            raise DataError(
                f"the primary cell {_codes(table, i)} is empty (no contributor, value 0); "
                "an empty cell is a known zero and cannot be protected by suppression"
            )
        self.fixed1 = self.primary.copy()
        # cells that may not be suppressed: empty ones, and those the caller publishes
        self.locked = self.empty.copy()
        if published is not None:
            self.locked |= _fixed_mask(table, published) & ~self.primary
        self.free = ~self.fixed1 & ~self.locked
        upl = np.where(self.primary, primary.upper, 0.0)
        lpl = np.where(self.primary, primary.lower, 0.0)
        if (
            not (np.isfinite(upl).all() and np.isfinite(lpl).all())
            or (upl < 0).any()
            or (lpl < 0).any()
        ):
            raise ParameterError("protection levels must be finite and non-negative")
        # a primary cell without protection levels still needs a positive-width interval
        tiny = self.primary & (upl + lpl <= 2 * self.tol)
        upl = np.where(tiny, 10 * self.tol, upl)
        if nonnegative:
            over = self.primary & (lpl > self.a + self.tol)
            if over.any():
                i = int(np.flatnonzero(over)[0])
                raise ParameterError(
                    f"the primary cell {_codes(table, i)} has lower protection "
                    f"{lpl[i]:g} above its value {self.a[i]:g}, but cells are non-negative: "
                    "no pattern protects it (cap LPL at the value)"
                )
        self.need_up = upl
        self.need_down = lpl
        big = 2.0 * (
            np.abs(self.a).max(initial=0.0) + max(upl.max(initial=0.0), lpl.max(initial=0.0))
        )
        self.big = max(big, 1.0)
        self.up = np.full(self.n, self.big)
        self.down = np.maximum(self.a, 0.0) if nonnegative else np.full(self.n, self.big)
        # a tiny cost for zero-cost cells: among equally cheap patterns, the fewest cells
        positive = cost[cost > 0]
        eps = 1e-3 * (positive.min() if len(positive) else 1.0)
        self.cost = np.where(cost > 0, cost, eps)
        self.lps = 0
        self.masters = 0
        #: whether the last :meth:`separate` stopped at its deadline before every LP ran
        self.interrupted = False
        #: the dual bound of the last master MILP on its objective (``-inf`` when unknown)
        self.master_bound = -np.inf

    def fix(self, cells: np.ndarray) -> None:
        """Cells that must be suppressed from now on (besides the primaries)."""
        self.fixed1 = self.primary | (np.asarray(cells, dtype=bool) & ~self.empty)
        self.free = ~self.fixed1 & ~self.locked

    # -- inequalities --------------------------------------------------------------------------
    def cut_from_reduced_costs(
        self, cells: np.ndarray, r: np.ndarray, rhs: float, p: int
    ) -> _Cut | None:
        """The inequality ``sum_c (up_c r_c^+ + down_c r_c^-) y_c >= rhs`` (see
        :func:`optimal_pattern`), fixed cells moved to the right-hand side, coefficients
        capped at it; None when the fixed cells already satisfy it."""
        coef = self.up[cells] * np.maximum(r, 0.0) + self.down[cells] * np.maximum(-r, 0.0)
        rhs = rhs - float(coef[self.fixed1[cells]].sum())
        if rhs <= self.tol / 2:
            return None
        keep = self.free[cells] & (coef > 0)
        cells, coef = cells[keep], np.minimum(coef[keep], rhs)
        order = np.argsort(cells)
        return _Cut(cells[order], coef[order], rhs, p)

    def initial_cuts(self, primaries: np.ndarray | None = None) -> list[_Cut]:
        """For every primary cell ``p`` and every relation ``R`` holding it: some other cell of
        ``R`` is suppressed (else ``x_p`` is determined), and the two single-relation attacker
        inequalities (the dual with the multiplier of ``R`` alone, ``gamma_R = ±1/A_Rp``)."""
        out: list[_Cut] = []
        a_mat = self.constraints
        prims = np.flatnonzero(self.primary) if primaries is None else primaries
        for p in prims:
            p = int(p)
            rows = self.cell_rows.indices[self.cell_rows.indptr[p] : self.cell_rows.indptr[p + 1]]
            coefs = self.cell_rows.data[self.cell_rows.indptr[p] : self.cell_rows.indptr[p + 1]]
            for row, a_rp in zip(rows, coefs, strict=True):
                lo, hi = a_mat.indptr[row], a_mat.indptr[row + 1]
                cells, vals = a_mat.indices[lo:hi], a_mat.data[lo:hi]
                others = cells != p
                if not (self.fixed1[cells[others]]).any():
                    free = cells[others & self.free[cells]]
                    if len(free) == 0:
                        raise DataError(
                            f"the primary cell {_codes(self.table, p)} is the only "
                            "non-empty cell of a relation besides cells that may not be "
                            "suppressed; it cannot be protected"
                        )
                    out.append(_Cut(np.sort(free), np.ones(len(free)), 1.0, p))
                for sense, need in ((1, self.need_up[p]), (-1, self.need_down[p])):
                    if need <= 0:
                        continue
                    r = -sense * vals / a_rp
                    r[~others] = 0.0
                    cut = self.cut_from_reduced_costs(cells, r, float(need), p)
                    if cut is not None:
                        out.append(cut)
        return out

    # -- separation ------------------------------------------------------------------------------
    def separate(
        self,
        y: np.ndarray,
        primaries: np.ndarray | None = None,
        deadline: float | None = None,
    ) -> tuple[list[_Cut], list[int]]:
        """The attacker LPs of the primaries (default all) at the pattern ``y``: the violated
        inequalities, and the primaries found unprotected for which no violated inequality
        could be formed (numerical trouble; the caller adds a neighbour).

        ``y`` may be fractional (a point of the master's LP relaxation, Fischetti & Salazar
        2001, sec. 4): the attacker LP then bounds each cell by ``y_c`` times its capacity,
        ``-LB_c y_c <= d_c <= UB_c y_c``, and its dual gives the same valid inequality, now
        violated by the fractional point. ``deadline`` (``time.perf_counter()`` value): no
        LP is started after it (the cuts found so far are returned)."""
        y = np.asarray(y)
        if y.dtype == bool:
            on = y
            weight = on.astype(float)
        else:  # a fractional point (the master's LP relaxation): bounds scaled by y_c
            weight = np.clip(np.asarray(y, dtype=float), 0.0, 1.0)
            weight[weight < _FRACTION_FLOOR] = 0.0
            on = weight > 0
        if primaries is None:
            comps = components(self.by_column, np.flatnonzero(on))
        else:
            comps = self._components_of(on, primaries)
        want = np.zeros(self.n, dtype=bool)
        want[np.flatnonzero(self.primary) if primaries is None else primaries] = True
        tasks: list[tuple[int, int, int, float]] = []  # (component, local index, sense, need)
        for i, comp in enumerate(comps):
            for local in np.flatnonzero(want[comp.cells]).tolist():
                p = int(comp.cells[local])
                if self.need_up[p] > 0:
                    tasks.append((i, local, 1, float(self.need_up[p])))
                if self.need_down[p] > 0:
                    tasks.append((i, local, -1, float(self.need_down[p])))
        lo = [-self.down[c.cells] * weight[c.cells] for c in comps]
        hi = [self.up[c.cells] * weight[c.cells] for c in comps]
        seen_max = [np.zeros(len(c.cells)) for c in comps]
        seen_min = [np.zeros(len(c.cells)) for c in comps]
        slack = self.tol / 2

        def proven(task: tuple[int, int, int, float]) -> bool:
            i, k, sense, need = task
            if sense == 1:
                return bool(seen_max[i][k] >= need - slack)
            return bool(-seen_min[i][k] >= need - slack)

        cuts: list[_Cut] = []
        stalled: list[int] = []
        self.interrupted = False

        def take(task: tuple[int, int, int, float], res: BlockResult) -> None:
            i, k, sense, need = task
            if res.x is not None:
                np.maximum(seen_max[i], res.x, out=seen_max[i])
                np.minimum(seen_min[i], res.x, out=seen_min[i])
            if sense * res.value >= need - slack or res.nu is None:
                return
            comp = comps[i]
            p = int(comp.cells[k])
            cut = self._dual_cut(comp.rows, res.nu, p, sense, need)
            if cut is None or float(cut.coef @ weight[cut.cells]) >= cut.rhs - slack:
                stalled.append(p)
            else:
                cuts.append(cut)

        if self.warm:
            lps: dict[int, WarmLP] = {}  # one warm-started HiGHS instance per component
            for task in tasks:
                if deadline is not None and time.perf_counter() > deadline:
                    self.interrupted = True
                    break
                if proven(task):
                    continue
                i, k, sense, _ = task
                if i not in lps:
                    lps[i] = WarmLP(comps[i].a, lo[i], hi[i])
                self.lps += 1
                take(task, lps[i].solve(k, sense))
            return cuts, sorted(set(stalled))
        pos = 0
        while pos < len(tasks):
            if deadline is not None and time.perf_counter() > deadline:
                self.interrupted = True
                break
            blocks: list[Block] = []
            owners: list[tuple[int, int, int, float]] = []
            size = 0
            while pos < len(tasks) and size < _BATCH_VARIABLES and len(blocks) < _BATCH_BLOCKS:
                task = tasks[pos]
                pos += 1
                if proven(task):
                    continue
                i, k, sense, _ = task
                blocks.append(Block(comps[i].a, lo[i], hi[i], k, sense))
                owners.append(task)
                size += len(comps[i].cells)
            if not blocks:
                continue
            results = solve_blocks(blocks)
            self.lps += len(blocks)
            for task, res in zip(owners, results, strict=True):
                take(task, res)
        return cuts, sorted(set(stalled))

    def _components_of(self, y: np.ndarray, primaries: np.ndarray) -> list[Component]:
        """The components of ``y`` holding ``primaries`` only (grown from them by a breadth
        first search over relations, so a local check does not pay for the whole table;
        patterns of at most :data:`_SMALL_PATTERN` cells are split whole, which is cheaper)."""
        if int(np.count_nonzero(y)) <= _SMALL_PATTERN:
            want = np.zeros(self.n, dtype=bool)
            want[np.asarray(primaries, dtype=np.int64)] = True
            return [c for c in components(self.by_column, np.flatnonzero(y)) if want[c.cells].any()]
        seen = np.zeros(self.n, dtype=bool)
        frontier = np.unique(np.asarray(primaries, dtype=np.int64))
        seen[frontier] = True
        while len(frontier):
            rows = (
                np.unique(
                    np.concatenate(
                        [
                            self.cell_rows.indices[
                                self.cell_rows.indptr[c] : self.cell_rows.indptr[c + 1]
                            ]
                            for c in frontier
                        ]
                    )
                )
                if len(frontier)
                else np.zeros(0, np.int64)
            )
            sub = self.constraints[rows]
            nxt = np.unique(sub.indices)
            nxt = nxt[y[nxt] & ~seen[nxt]]
            seen[nxt] = True
            frontier = nxt
        return components(self.by_column, np.flatnonzero(seen))

    def _dual_cut(
        self, rows: np.ndarray, nu: np.ndarray, p: int, sense: int, need: float
    ) -> _Cut | None:
        """The inequality of the attacker LP's dual. ``linprog`` minimized ``c d`` with
        ``c = -sense e_p``; its row duals ``nu`` give the reduced costs ``c - A^T nu``, and the
        maximization's ``alpha - beta = r = A^T nu - c`` over every cell (published cells
        included: their ``r`` is what suppressing them would add)."""
        if len(rows) == 0:
            cells = np.array([p], dtype=np.int64)
            r = np.array([float(sense)])
        else:
            sub = self.constraints[rows]
            cells = np.unique(sub.indices)
            r = np.asarray(sub[:, cells].T @ nu, dtype=float).ravel()
            r[np.searchsorted(cells, p)] += sense
        return self.cut_from_reduced_costs(cells, r, need, p)

    # -- master ------------------------------------------------------------------------------------
    def lonely(self, y: np.ndarray) -> list[tuple[int, int]]:
        """``(cell, relation)`` pairs where a suppressed free cell is the only suppressed
        cell of a relation. Such a cell is recomputed exactly from the published cells, so
        it protects nothing: dropping it changes no interval and lowers the cost. Hence some
        optimal pattern satisfies every *link* ``y_c <= sum_{j in R, j != c} y_j`` (the
        "bridgeless" inequalities of Fischetti & Salazar), and the master adds the violated
        ones; they keep it from buying cells that the cell's other relations pin down."""
        if self.constraints.shape[0] == 0:
            return []
        pattern = abs(self.constraints)
        count = np.rint(pattern @ y.astype(np.float64))
        rows = np.flatnonzero(count == 1)
        if len(rows) == 0:
            return []
        sub = self.constraints[rows]
        hit = sub.indices[y[sub.indices]]  # one per row, in row order
        keep = self.free[hit]
        return list(zip(hit[keep].tolist(), rows[keep].tolist(), strict=True))

    def master(
        self,
        cuts: list[_Cut],
        time_limit: float | None,
        gap: float = MIP_GAP,
        links: list[tuple[int, int]] | None = None,
        node_limit: int | None = None,
        start: np.ndarray | None = None,
    ) -> tuple[np.ndarray | None, bool]:
        """The cheapest pattern satisfying ``cuts`` and ``links`` (see :meth:`lonely`) with
        the fixed cells suppressed: (pattern, or None without an incumbent at the time
        limit; optimality proven). ``start``: a pattern satisfying them (a protecting one
        does), HiGHS's first incumbent, so a stop at the time limit returns nothing dearer.
        The MILP's dual bound is kept in :attr:`master_bound` (in :meth:`objective` terms).
        DataError when no pattern satisfies them."""
        self.masters += 1
        support, mat, rhs = self._master_matrix(cuts, links)
        first = None
        if start is not None:
            first = np.asarray(start, dtype=bool)[support].astype(float)
            if (mat @ first < rhs - self.tol / 2).any():
                first = None  # not feasible for these rows: no start
        res = solve_mip(
            self.cost[support],
            mat,
            rhs,
            np.full(len(rhs), np.inf),
            self.fixed1[support].astype(float),
            np.ones(len(support)),
            np.ones(len(support)),
            time_limit=None if time_limit is None else max(time_limit, 0.01),
            mip_rel_gap=gap,
            node_limit=node_limit,
            start=first,
        )
        if res.status == "infeasible":
            raise DataError(
                "no suppression pattern protects every primary cell (the attacker "
                "inequalities are infeasible)"
            )
        outside = self.fixed1.copy()
        outside[support] = False
        self.master_bound = res.bound + float(self.cost[outside].sum())
        if res.x is None:
            return None, False
        y = self.fixed1.copy()
        y[support[res.x > 0.5]] = True
        return y, res.status == "optimal"

    def objective(self, y: np.ndarray) -> float:
        """The master's objective of the pattern ``y``: its cells' costs, zero-cost cells
        at the tiny cost that makes the fewest cells win ties."""
        return float(self.cost[np.asarray(y, dtype=bool)].sum())

    def relaxation(
        self, cuts: list[_Cut], time_limit: float | None
    ) -> tuple[np.ndarray, float] | None:
        """The master's LP relaxation under ``cuts`` (``0 <= y <= 1``, fixed cells at 1):
        its optimal point and value (a lower bound on every protecting pattern's
        :meth:`objective`, the cuts being valid); None when not solved in time."""
        if not cuts:
            return self.fixed1.astype(float), self.objective(self.fixed1)
        support, mat, rhs = self._master_matrix(cuts, None)
        options: dict[str, Any] = {}
        if time_limit is not None:
            options["time_limit"] = max(time_limit, 0.01)
        res = linprog(
            self.cost[support],
            A_ub=-mat,
            b_ub=-rhs,
            bounds=np.column_stack([self.fixed1[support].astype(float), np.ones(len(support))]),
            method="highs",
            options=options,
        )
        if res.status != 0:
            return None
        y = self.fixed1.astype(float)
        y[support] = np.clip(res.x, 0.0, 1.0)
        outside = self.fixed1.copy()
        outside[support] = False
        return y, float(res.fun) + float(self.cost[outside].sum())

    def _master_matrix(
        self, cuts: list[_Cut], links: list[tuple[int, int]] | None
    ) -> tuple[np.ndarray, sparse.csr_matrix, np.ndarray]:
        """The master's rows ``mat y[support] >= rhs`` for ``cuts`` and ``links``."""
        r_cells = [c.cells for c in cuts]
        r_vals = [c.coef for c in cuts]
        rhs = [c.rhs for c in cuts]
        for c, row in links or []:
            members = self.constraints.indices[
                self.constraints.indptr[row] : self.constraints.indptr[row + 1]
            ]
            others = members[members != c]
            if self.fixed1[others].any():
                continue
            others = others[self.free[others]]
            r_cells.append(np.concatenate([others, [c]]))
            r_vals.append(np.concatenate([np.ones(len(others)), [-1.0]]))
            rhs.append(0.0)
        support = np.unique(np.concatenate(r_cells))
        col = np.full(self.n, -1, dtype=np.int64)
        col[support] = np.arange(len(support))
        rows = np.concatenate([np.full(len(x), i) for i, x in enumerate(r_cells)])
        mat = sparse.csr_matrix(
            (np.concatenate(r_vals), (rows, col[np.concatenate(r_cells)])),
            shape=(len(r_cells), len(support)),
        )
        return support, mat, np.array(rhs)

    # -- one primary at a time ---------------------------------------------------------------------
    def neighbour(self, y: np.ndarray, p: int) -> int | None:
        """The cheapest free published cell in a relation with a suppressed cell of ``p``'s
        component (ties: lowest index)."""
        comp = self._components_of(y, np.array([p]))[0]
        rows = comp.rows
        if len(rows) == 0:
            rows = self.cell_rows.indices[self.cell_rows.indptr[p] : self.cell_rows.indptr[p + 1]]
        cand = np.unique(self.constraints[rows].indices) if len(rows) else np.zeros(0, int)
        cand = cand[self.free[cand] & ~y[cand]]
        if len(cand) == 0:
            return None
        return int(cand[np.lexsort((cand, self.cost[cand]))[0]])

    def greedy_cover(self, y: np.ndarray, cut: _Cut) -> int:
        """Satisfy ``cut`` by suppressing its free cells with the best coefficient per cost
        (ties: lowest index); returns the number of cells added."""
        lhs = float(cut.coef[y[cut.cells]].sum())
        free = ~y[cut.cells]
        cells, coef = cut.cells[free], cut.coef[free]
        added = 0
        for j in np.lexsort((cells, self.cost[cells] / coef)):
            if lhs >= cut.rhs - self.tol / 2:
                break
            y[cells[j]] = True
            lhs += coef[j]
            added += 1
        return added

    def sequential(self, y: np.ndarray, primaries: np.ndarray | None = None) -> np.ndarray:
        """:meth:`sequential_until` without a deadline."""
        out = self.sequential_until(y, primaries, None)
        assert out is not None
        return out

    def sequential_until(
        self, y: np.ndarray, primaries: np.ndarray | None = None, deadline: float | None = None
    ) -> np.ndarray | None:
        """Protect the primaries left unprotected by ``y`` one at a time, in cell order, with
        every cell suppressed so far kept (suppressing more only widens every interval, so
        cells protected earlier stay protected): while the attacker LPs find the cell
        unprotected, each violated inequality is satisfied greedily (:meth:`greedy_cover`)
        and the cells added get partners in their relations as in :func:`simple_pattern`
        (a cell alone in a relation is pinned by it and protects nothing). A few MILP
        rounds per primary instead of the greedy step were measured slower and no cheaper
        on a 100,000-cell table. ``primaries``: only these (default all). ``deadline``
        (``time.perf_counter()`` value): None once it has passed (the pattern is then not
        finished; the caller has another)."""
        y = y | self.fixed1
        cuts, stalled = self.separate(y, primaries, deadline)
        if self.interrupted:
            return None
        for p in sorted({c.primary for c in cuts} | set(stalled)):
            while True:
                new, stuck = self.separate(y, np.array([p]), deadline)
                if self.interrupted:
                    return None
                if not new and not stuck:
                    break
                before = y.copy()
                for cut in new:
                    self.greedy_cover(y, cut)
                if stuck and not new:
                    c = self.neighbour(y, p)
                    if c is not None:
                        y[c] = True
                added = np.flatnonzero(y & ~before)
                if len(added) == 0:
                    raise DataError(
                        f"the primary cell {_codes(self.table, p)} cannot be protected: "
                        "no cell left to suppress widens its interval enough"
                    )
                close_relations(self.constraints, self.cell_rows, y, self.locked, self.cost, added)
        return y

    def witness(self, y: np.ndarray, p: int, sense: int) -> np.ndarray | None:
        """A sparse proof that the pattern ``y`` protects the primary ``p`` in direction
        ``sense`` (1 up, -1 down): the cells on which a deviation ``d`` with ``A d = 0``,
        within the suppressed cells' bounds, moves ``p`` by its protection level -- the
        one of least total movement ``sum |d_c|`` (an LP in ``d = u - v``, ``u, v >= 0``),
        so it runs over few cells (a cycle of four in a two-way table); ``None`` when no
        such deviation exists (``p`` is unprotected). Any pattern that keeps these cells
        suppressed keeps ``p`` protected."""
        need = float(self.need_up[p] if sense == 1 else self.need_down[p])
        if need <= 0:
            return np.zeros(0, dtype=np.int64)
        comp = self._components_of(np.asarray(y, dtype=bool), np.array([p]))[0]
        m = len(comp.cells)
        k = int(np.searchsorted(comp.cells, p))
        row = np.zeros(2 * m)
        row[k], row[m + k] = -sense, sense  # -sense (u_p - v_p) <= -(need - slack)
        a = comp.a
        res = linprog(
            np.ones(2 * m),
            A_ub=row[None, :],
            b_ub=[-(need - self.tol / 2)],
            A_eq=sparse.hstack([a, -a]).tocsr() if a.shape[0] else None,
            b_eq=np.zeros(a.shape[0]) if a.shape[0] else None,
            bounds=np.column_stack(
                [np.zeros(2 * m), np.concatenate([self.up[comp.cells], self.down[comp.cells]])]
            ),
            method="highs",
        )
        self.lps += 1
        if res.status != 0:
            return None
        d = res.x[:m] - res.x[m:]
        return comp.cells[np.abs(d) > _MOVED * self.tol]

    def release(
        self,
        y: np.ndarray,
        candidates: np.ndarray | None = None,
        deadline: float | None = None,
    ) -> np.ndarray:
        """Publish every suppressed free cell (``candidates``: only these) whose publication
        leaves each primary protected, the dearest first (ties: cell order): a greedy
        removal pass over a protecting pattern ``y``, the cleanup step of suppression
        heuristics (Fischetti & Salazar 2001 end their heuristic with it; tau-Argus's
        manual notes the over-protection of the hypercube method it would remove).

        Each primary and direction keeps a :meth:`witness` of its protection. A cell no
        witness uses is published with no LP (every witness stays feasible with it fixed
        at 0); for a cell some witnesses use, their LPs are solved again without it: the
        cell stays suppressed when one finds its primary unprotected, else the new
        witnesses replace the old. The result equals the plain greedy pass (every
        primary's protection checked for each cell in turn), protects every primary and
        costs at most what ``y`` costs; cells are only removed. ``deadline``
        (``time.perf_counter()`` value): the cells not tried by then stay suppressed (the
        pattern protects at every step)."""
        out = np.asarray(y, dtype=bool).copy()
        pool = out & self.free
        if candidates is not None:
            pool &= np.asarray(candidates, dtype=bool)
        cells = np.flatnonzero(pool)
        if len(cells) == 0:
            return out
        proofs: dict[tuple[int, int], np.ndarray] = {}
        users: dict[int, set[tuple[int, int]]] = {}
        # the witness LPs of each component of the pattern (publishing cells only splits
        # components) in one warm-started HiGHS instance: a published cell is a column
        # fixed at 0
        comps = components(self.by_column, np.flatnonzero(out))
        lps = [MinMoveLP(k.a, self.up[k.cells], self.down[k.cells]) for k in comps]
        owner = np.full(self.n, -1, dtype=np.int64)
        slot = np.full(self.n, -1, dtype=np.int64)
        for i, k in enumerate(comps):
            owner[k.cells] = i
            slot[k.cells] = np.arange(len(k.cells))

        def witness(p: int, sense: int) -> np.ndarray | None:
            need = float(self.need_up[p] if sense == 1 else self.need_down[p])
            if need <= 0:
                return np.zeros(0, dtype=np.int64)
            self.lps += 1
            i = int(owner[p])
            d = lps[i].solve(int(slot[p]), sense, need - self.tol / 2)
            return None if d is None else comps[i].cells[np.abs(d) > _MOVED * self.tol]

        def publish(c: int, published: bool = True) -> None:
            lps[int(owner[c])].publish(int(slot[c]), published)

        def keep(task: tuple[int, int], proof: np.ndarray) -> None:
            for cell in proofs.get(task, np.zeros(0, np.int64)).tolist():
                users[cell].discard(task)
            proofs[task] = proof
            for cell in proof.tolist():
                users.setdefault(cell, set()).add(task)

        for p in np.flatnonzero(self.primary).tolist():
            for sense in (1, -1):
                proof = witness(p, sense)
                if proof is None:
                    raise ValueError(f"release: the pattern leaves the primary cell {p} exposed")
                keep((p, sense), proof)
        for c in cells[np.lexsort((cells, -self.cost[cells]))].tolist():
            if deadline is not None and time.perf_counter() > deadline:
                break
            out[c] = False
            publish(c)
            fresh = {}
            for task in sorted(users.get(c, ())):
                proof = witness(*task)
                if proof is None:
                    out[c] = True
                    publish(c, False)
                    break
                fresh[task] = proof
            if out[c]:
                continue
            for task, proof in fresh.items():
                keep(task, proof)
        return out

    def merge_and_release(
        self, y: np.ndarray, best: np.ndarray, deadline: float | None
    ) -> np.ndarray:
        """The protecting pattern ``best`` joined with the master's pattern ``y`` (a
        superset of a protecting pattern protects: suppressing more only widens every
        interval), then cleaned (:meth:`release`, until ``deadline``): first the cells
        ``y`` does not use, the dearest first, then the others. The primal heuristic of the
        anytime search (:func:`optimal_pattern`): the master's cells satisfy every
        inequality found so far at no more than the lower bound's cost, and the removal
        pass trades the incumbent's dear cells for them where that keeps every primary
        protected."""
        both = self.prune(np.asarray(best, dtype=bool) | np.asarray(y, dtype=bool))
        out = self.release(both, ~np.asarray(y, dtype=bool), deadline)
        return self.prune(self.release(out, None, deadline))

    def prune(self, y: np.ndarray) -> np.ndarray:
        """Drop the suppressed free cells that the published cells determine (peeling): they
        protect nothing, every interval stays the same."""
        out = y.copy()
        out[determined(self.constraints, y) & self.free] = False
        return out


def _codes(table: Table, i: int) -> dict[str, str]:
    if i < 0:
        return {}
    return {k: str(v) for k, v in table.codes().iloc[i].to_dict().items()}


def cell_costs(table: Table, cost: np.ndarray | None) -> np.ndarray:
    c = np.asarray(table.cost if cost is None else cost, dtype=float)
    if c.shape != (table.n_cells,):
        raise ParameterError(f"cost must hold one value per cell ({table.n_cells}), got {c.shape}")
    if not np.isfinite(c).all() or (c < 0).any():
        i = int(np.flatnonzero(~np.isfinite(c) | (c < 0))[0])
        raise ParameterError(f"cost must be finite and non-negative; cell {i} costs {c[i]!r}")
    return c


def resolve_nonnegative(table: Table, nonnegative: bool | None) -> bool:
    if nonnegative is None:
        return bool((table.value >= 0).all())
    if nonnegative and (table.value < 0).any():
        raise ParameterError("nonnegative=True but the table has negative cells")
    return bool(nonnegative)


def check_primary(table: Table, primary: Primary) -> None:
    if np.asarray(primary.unsafe).shape != (table.n_cells,):
        raise ParameterError(
            f"primary has {np.asarray(primary.unsafe).shape[0]} cells, the table {table.n_cells}"
        )


# -- patterns -----------------------------------------------------------------------------------
def optimal_pattern(
    table: Table,
    primary: Primary,
    cost: np.ndarray | None = None,
    fixed: np.ndarray | None = None,
    *,
    time_limit: float | None = None,
    nonnegative: bool | None = None,
    published: np.ndarray | None = None,
    node_limit: int | None = None,
    max_masters: int | None = None,
    start: np.ndarray | None = None,
    cut_rounds: int = 0,
) -> Pattern:
    """The minimum-cost suppression pattern protecting every primary cell (Fischetti &
    Salazar 2001); ``fixed`` cells are suppressed whatever it costs (used by :func:`repair`).

    **The attacker LP.** For a pattern ``y`` and a primary cell ``p``, the intruder's largest
    value of ``x_p`` is ``a_p + max d_p`` over the deviations ``d = x - a`` with ``A d = 0``
    and ``-LB_c y_c <= d_c <= UB_c y_c`` (a published cell cannot move; a suppressed one can
    go down to 0, ``LB_c = a_c``, or up by ``UB_c = M``, twice the largest cell value plus
    protection level). Its dual, with ``gamma`` for the relations and ``alpha, beta >= 0``
    for the upper and lower bounds, is ``min sum_c (UB_c alpha_c + LB_c beta_c) y_c``
    subject to ``A^T gamma + alpha - beta = e_p``. (In the original variables
    ``a_c - LB_c y_c <= x_c <= a_c + UB_c y_c`` the dual objective is
    ``sum_c (alpha_c - beta_c) a_c + sum_c (UB_c alpha_c + LB_c beta_c) y_c``
    ``= (e_p - A^T gamma) a + ... = a_p + sum_c (UB_c alpha_c + LB_c beta_c) y_c`` since
    ``A a = 0``.) By weak duality *any* dual-feasible ``(gamma, alpha, beta)`` bounds
    ``max d_p`` for *every* pattern, so every protecting pattern satisfies

        ``sum_c (UB_c alpha_c + LB_c beta_c) y_c >= UPL_p``,

    and the optimal dual at a pattern that leaves ``p`` unprotected gives an inequality that
    this pattern violates. The lower direction (``min x_p <= a_p - LPL_p``) is the same with
    ``-e_p`` and ``LPL_p``. Any ``gamma`` with ``alpha = r^+``, ``beta = r^-``,
    ``r = e_p - A^T gamma`` is dual feasible, so the inequalities are valid whatever the LP
    solver's accuracy. As the ``y`` are binary, coefficients above the right-hand side are
    lowered to it (still valid, tighter). ``M`` only limits the attacker of the model: a
    pattern protecting against it protects against the unbounded one too.

    **The loop.** The master MILP starts with, for every relation holding a primary cell,
    "another cell of the relation is suppressed" and the single-relation inequalities, plus
    the inequalities of the attacker LPs at the all-primaries pattern; then master
    (:func:`scipy.optimize.milp`) -> attacker LPs for every primary at its solution -> add the
    violated inequalities, until none is violated: the master's solution is then a
    protecting pattern of minimum cost (``optimal=True``). When ``time_limit`` (seconds) is
    reached first, the last master solution is completed one primary at a time (each with
    its own cheapest additions; ``optimal=False``).

    Attacker LPs run per component of the suppressed cells, stacked into few HiGHS calls;
    a feasible point of one LP that already reaches another primary's target spares that
    primary's LP. ``nonnegative`` (default: whether every cell is >= 0) sets ``LB_c``.
    ``published`` cells (besides the empty ones) may not be suppressed (the modular method's
    cells released by a higher sub-table); :class:`~sdckit.errors.DataError` when the
    primaries cannot be protected without them. ``node_limit`` (branch-and-bound nodes per
    master) and ``max_masters`` bound the search by work instead of time, so that a stopped
    search gives the same pattern on every machine (stopped, it is completed as after the
    time limit).

    **Anytime.** ``start``: a pattern that protects every primary (the ``simple`` method's,
    say) -- the incumbent from the first master on: each master gets it as HiGHS's first
    solution, so whatever stops the search the pattern returned costs at most as much;
    after every master whose pattern leaves a primary unprotected, that pattern joined with
    the incumbent and cleaned (:meth:`AttackerModel.merge_and_release`) replaces the
    incumbent when cheaper (a primal heuristic; measured on the 8x8x8 and hier x 10 x 10
    tables of ``benchmarks/bench_tables.py`` it lowered the modular start's cost by 6% and
    4-5% within 15 s, where completing the master's pattern one primary at a time and cleaning it
    cost a quarter more than the start).
    ``cut_rounds``: before the first MILP, up to that many rounds of the master's LP
    relaxation, each point separated by the attacker LPs with capacities scaled by the
    fractional ``y`` (Fischetti & Salazar 2001, sec. 4: the same inequalities, cut at
    fractional points); they make the first MILPs far tighter. The clock is checked before
    every LP batch, master and completion: ``time_limit`` bounds the whole search (with a
    start, no completion runs past it). ``Pattern.lower_bound`` is the best proven lower
    bound on the cost of the cells added to the fixed ones (the LP relaxations' and the
    masters' dual bounds: the inequalities are valid for every protecting pattern).
    """
    check_primary(table, primary)
    c = cell_costs(table, cost)
    model = AttackerModel(table, primary, c, resolve_nonnegative(table, nonnegative), published)
    if fixed is not None:
        model.fix(_fixed_mask(table, fixed))
    t0 = time.perf_counter()
    deadline = None if time_limit is None else t0 + time_limit

    def remaining() -> float | None:
        return None if deadline is None else deadline - time.perf_counter()

    def out_of_time() -> bool:
        r = remaining()
        return r is not None and r <= 0

    best: np.ndarray | None = None
    best_obj = np.inf
    if start is not None:
        best = _fixed_mask(table, start) | model.fixed1
        best_obj = model.objective(best)
    lower = model.objective(model.fixed1)
    cuts = model.initial_cuts()
    links: list[tuple[int, int]] = []
    optimal = False
    hit = False
    rounds = 0

    def proven(bound: float) -> bool:
        return best is not None and best_obj <= bound + MIP_GAP * max(abs(bound), 1e-9)

    # rounds of cuts at the master's LP relaxation
    while rounds < cut_rounds and not proven(lower):
        if out_of_time():
            hit = True
            break
        relaxed = model.relaxation(cuts, remaining())
        if relaxed is None:
            break
        point, value = relaxed
        lower = max(lower, value)
        rounds += 1
        new, _ = model.separate(point, deadline=deadline)
        if not new:
            break
        cuts.extend(new)
    if proven(lower):
        optimal = True
    # the all-fixed pattern first: protecting already, it is optimal
    y = model.fixed1.copy()
    y_minimal = True  # y is the cheapest pattern satisfying the inequalities so far
    while not optimal and not hit:
        new, stalled = model.separate(y, deadline=deadline)
        if model.interrupted:
            hit = True
            break
        if not new and not stalled:  # y protects every primary
            if model.objective(y) < best_obj:
                best, best_obj = y, model.objective(y)
            optimal = y_minimal
            break
        if best is not None and model.masters > 0 and not out_of_time():
            # a primal heuristic at a master's pattern that protects not every primary (the
            # anytime search): joined with the incumbent and cleaned, kept when cheaper
            found = model.merge_and_release(y, best, deadline)
            if model.objective(found) < best_obj:
                best, best_obj = found, model.objective(found)
        if not y_minimal or (stalled and not new):
            break  # a stopped master's pattern, or numerical trouble: completed below
        cuts.extend(new)
        links.extend(model.lonely(y))
        if out_of_time() or (max_masters is not None and model.masters >= max_masters):
            hit = True
            break
        solved, y_minimal = model.master(cuts, remaining(), MIP_GAP, links, node_limit, best)
        lower = max(lower, model.master_bound)
        if solved is None:
            hit = True
            break
        y = solved
        if not y_minimal:
            hit = True
    iterations = model.masters
    n_cuts = len(cuts)
    completed = 0
    if not optimal and (best is None or not out_of_time()):
        # complete the last master's pattern (with a start: only within the time limit)
        before = int(y.sum())
        done = model.sequential_until(y, None, deadline if best is not None else None)
        if done is not None:
            done = model.prune(done)
            if model.objective(done) < best_obj:
                best, best_obj = done, model.objective(done)
                completed = int(done.sum()) - before
    assert best is not None
    best = model.prune(best)
    fixed_obj = model.objective(model.fixed1)
    slack = float((model.cost - c)[model.free].sum())  # the tiny costs of zero-cost cells
    bound = max(0.0, lower - fixed_obj - slack)
    if optimal:
        bound = max(bound, float(c[best & ~model.fixed1].sum()) / (1.0 + MIP_GAP))
    return Pattern(
        suppressed=best,
        optimal=optimal,
        iterations=iterations,
        cuts=n_cuts,
        lps=model.lps,
        completed=completed,
        time_limit_hit=hit,
        lower_bound=bound,
        cut_rounds=rounds,
    )


def simple_pattern(table: Table, primary: Primary, cost: np.ndarray | None = None) -> np.ndarray:
    """The ``simple`` heuristic's pattern (not yet audited).

    Suppressed cells are taken in cell order (a min-heap, so a cell suppressed later but
    with a lower index comes first); every relation of the cell that holds fewer than two
    suppressed cells gets another non-empty published cell of the relation, which is queued
    in turn, until no relation holds a single suppressed cell (or none can be added). The
    cell chosen is the one that leaves the fewest relations with a single suppressed cell
    (the relations it completes count against those it starts), then the cheapest, then the
    lowest index: taking the cheapest cell alone starts a new lonely relation at almost every
    step and, in three or more dimensions, cascades through much of the table, while
    completing relations closes cycles (rectangles in two dimensions), which is what
    protects a cell."""
    check_primary(table, primary)
    c = cell_costs(table, cost)
    a_mat = table.constraints().tocsr()
    empty = (table.freq == 0) & (table.value == 0)
    s = np.asarray(primary.unsafe, dtype=bool).copy()
    close_relations(a_mat, a_mat.T.tocsr(), s, empty, c, np.flatnonzero(s))
    return s


def close_relations(
    a_mat: sparse.csr_matrix,
    cell_rows: sparse.csr_matrix,
    s: np.ndarray,
    locked: np.ndarray,
    cost: np.ndarray,
    start: np.ndarray,
) -> int:
    """Give every relation of the cells ``start`` (and of the cells this adds) a second
    suppressed cell, in place, never a ``locked`` one (see :func:`simple_pattern`); returns
    the cells added."""
    count = np.asarray(abs(a_mat) @ s.astype(np.int64)).ravel()
    heap = [int(i) for i in start]
    heapq.heapify(heap)
    added = 0
    while heap:
        cell = heapq.heappop(heap)
        for row in cell_rows.indices[cell_rows.indptr[cell] : cell_rows.indptr[cell + 1]]:
            if count[row] >= 2:
                continue
            members = a_mat.indices[a_mat.indptr[row] : a_mat.indptr[row + 1]]
            cand = members[~s[members] & ~locked[members]]
            if len(cand) == 0:
                continue
            # relations each candidate would start (count 0) minus those it completes (1)
            starts, ends = cell_rows.indptr[cand], cell_rows.indptr[cand + 1]
            lens = ends - starts
            idx = np.concatenate(
                [cell_rows.indices[a:b] for a, b in zip(starts, ends, strict=True)]
            )
            cnt = count[idx]
            delta = (cnt == 0).astype(np.int64) - (cnt == 1).astype(np.int64)
            score = np.add.reduceat(delta, np.concatenate([[0], np.cumsum(lens)[:-1]]))
            pick = int(cand[np.lexsort((cand, cost[cand], score))[0]])
            s[pick] = True
            added += 1
            count[cell_rows.indices[cell_rows.indptr[pick] : cell_rows.indptr[pick + 1]]] += 1
            heapq.heappush(heap, pick)
    return added


def repair(
    table: Table,
    primary: Primary,
    suppressed: np.ndarray,
    cost: np.ndarray | None = None,
    *,
    method: str = "optimal",
    time_limit: float | None = None,
    nonnegative: bool | None = None,
) -> Pattern:
    """Complete ``suppressed`` (primaries are added) into a pattern that protects every
    primary cell, adding cells only; a protecting pattern comes back unchanged.

    ``method="optimal"``: the cheapest set of additions, :func:`optimal_pattern` with the
    pattern's cells fixed to 1 (within ``time_limit``, then as below). ``"sequential"``: the
    unprotected primaries one at a time in cell order; for each, every violated attacker
    inequality is satisfied by the cells with the best coefficient per cost and the cells
    added get partners in their relations, until its attacker LPs find it protected. Not
    optimal, but the work grows with the number of unprotected primaries rather than with
    the table, which suits the heuristics' patterns on large tables. Added cells that the
    published ones determine are dropped at the end (they protect nothing)."""
    check_primary(table, primary)
    fixed = _fixed_mask(table, suppressed) | np.asarray(primary.unsafe, dtype=bool)
    if method == "optimal":
        return optimal_pattern(
            table, primary, cost, fixed, time_limit=time_limit, nonnegative=nonnegative
        )
    if method != "sequential":
        raise ParameterError(f"repair method must be 'optimal' or 'sequential', got {method!r}")
    model = AttackerModel(
        table, primary, cell_costs(table, cost), resolve_nonnegative(table, nonnegative)
    )
    model.fix(fixed)
    y = model.prune(model.sequential(model.fixed1.copy()))
    return Pattern(
        suppressed=y,
        optimal=False,
        iterations=0,
        cuts=0,
        lps=model.lps,
        completed=int(y.sum()) - int(model.fixed1.sum()),
    )


def release_unneeded(
    table: Table,
    primary: Primary,
    suppressed: np.ndarray,
    cost: np.ndarray | None = None,
    *,
    nonnegative: bool | None = None,
    deadline: float | None = None,
) -> tuple[np.ndarray, int]:
    """``suppressed`` (a pattern protecting every primary) with each secondary cell published
    whose release keeps every primary protected, the dearest first
    (:meth:`AttackerModel.release`), then the cells the published ones determine dropped
    (:meth:`AttackerModel.prune`); and how many cells were published. A heuristic's
    pattern -- hypercubes, the simple rule, a completion after a time limit -- often holds
    secondaries that protect nothing any more once the others are in place; the optimal
    method's proven optimum holds none. ``deadline`` (``time.perf_counter()`` value): the
    cells not tried by then stay suppressed."""
    check_primary(table, primary)
    model = AttackerModel(
        table, primary, cell_costs(table, cost), resolve_nonnegative(table, nonnegative)
    )
    y = _fixed_mask(table, suppressed) | model.fixed1
    out = model.prune(model.release(y, None, deadline))
    return out, int(y.sum()) - int(out.sum())


def _fixed_mask(table: Table, cells: np.ndarray) -> np.ndarray:
    mask = np.asarray(cells)
    if mask.shape != (table.n_cells,):
        raise ParameterError(
            f"the pattern must hold one flag per cell ({table.n_cells}), got shape {mask.shape}"
        )
    return mask.astype(bool)
