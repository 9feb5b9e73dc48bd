"""The modular approach to hierarchical tables (HiTaS; de Wolf 2002, "HiTaS: a heuristic
approach to cell suppression in hierarchical tables", in *Inference Control in Statistical
Databases*, LNCS 2316; tau-Argus's "Modular").

A hierarchical table is cut into non-hierarchical sub-tables: choosing in every dimension a
node that has children, the sub-table holds that node (its total) and its children. Sub-tables
are protected one at a time from the top of the hierarchies down (by the sum of the chosen
nodes' depths), each by the optimal suppression of a small flat table:

* its primary cells are the table's primaries in it, plus the cells already suppressed while
  protecting a higher sub-table (they are the sub-table's marginal cells; left alone here they
  could be recomputed from their parts), which get the least protection;
* its cells already published by a higher sub-table may not be suppressed (they are released
  already): the solver may not use them; only when the sub-table's primaries cannot be
  protected without them is it solved again with those cells at a prohibitive cost, so it
  uses them only where nothing else protects a primary -- the global audit-and-repair of the
  caller then completes the pattern.

The pattern is the union of the sub-tables' patterns; :func:`sdckit.tables.suppression.suppress`
audits it on the whole table and repairs it before release, as for every heuristic.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable

import numpy as np

from sdckit.errors import DataError
from sdckit.tables.dimension import Dimension
from sdckit.tables.rules import Primary
from sdckit.tables.table import Table

__all__ = ["SUBTABLE_SECONDS", "modular_pattern", "optimal_solver", "sub_tables"]

#: Cost factor that keeps already published cells out of a sub-table's pattern.
_PUBLISHED_COST = 1e9

Solver = Callable[[Table, Primary, np.ndarray, np.ndarray], np.ndarray]


#: Default time limit (seconds) of the optimal method on one sub-table (tau-Argus's "max.
#: time per sub-table"); after it, the sub-table's best pattern is completed greedily.
SUBTABLE_SECONDS = 1.0


def optimal_solver(nonnegative: bool, time_limit: float | None = SUBTABLE_SECONDS) -> Solver:
    """The sub-table solver of HiTaS: :func:`sdckit.tables.suppression.optimal_pattern` with
    the published cells locked and ``time_limit`` seconds per sub-table. When the limit stops
    the search before optimality, the sub-table is also protected one primary at a time from
    its primaries alone (the attacker inequalities satisfied greedily, locked cells never
    used) and the cheaper of the two patterns is kept: on a 3-D table of 97,336 cells
    (``benchmarks/bench_tables.py``, 1 s per sub-table) this cut the secondary cost from
    246,648 to 199,957 (at 0.2 s per sub-table the greedy pattern won in 81 of 125)."""
    from sdckit.tables.suppression import _Model, optimal_pattern

    def solve(
        sub: Table, sub_primary: Primary, sub_cost: np.ndarray, published: np.ndarray
    ) -> np.ndarray:
        found = optimal_pattern(
            sub,
            sub_primary,
            sub_cost,
            nonnegative=nonnegative,
            published=published,
            time_limit=time_limit,
        )
        if found.optimal:
            return found.suppressed
        model = _Model(sub, sub_primary, sub_cost, nonnegative, published)
        greedy = model.prune(model.sequential(model.fixed1.copy()))
        if sub_cost[greedy].sum() < sub_cost[found.suppressed].sum():
            return greedy
        return found.suppressed

    return solve


def sub_tables(table: Table) -> list[tuple[tuple[int, ...], np.ndarray]]:
    """Every sub-table: the chosen parent node per dimension and the sub-table's cells (in the
    sub-table's own row-major order: parent first, then the children), top-down."""
    families = []
    for d in table.dimensions:
        families.append([int(p) for p in np.flatnonzero(~d.is_leaf)])
    out = []
    for parents in itertools.product(*families):
        axes = [
            np.concatenate([[p], d.children[p]]).astype(np.int64)
            for p, d in zip(parents, table.dimensions, strict=True)
        ]
        grid = np.meshgrid(*axes, indexing="ij")
        cells = np.ravel_multi_index(tuple(g.ravel() for g in grid), table.shape)
        out.append((tuple(parents), cells))
    depth = [
        sum(int(d.depth[p]) for p, d in zip(parents, table.dimensions, strict=True))
        for parents, _ in out
    ]
    order = np.argsort(np.array(depth), kind="stable")
    return [out[i] for i in order]


def _flat_table(table: Table, parents: tuple[int, ...], cells: np.ndarray) -> Table:
    """The sub-table as a :class:`Table` of flat dimensions (totals = the parent codes)."""
    dims = []
    for p, d in zip(parents, table.dimensions, strict=True):
        kids = d.children[p]
        dims.append(Dimension.flat(d.name, [str(c) for c in d.codes[kids]], total=str(d.codes[p])))
    return Table(
        dimensions=dims,
        value=table.value[cells],
        freq=table.freq[cells],
        contributors=table.contributors[cells],
        top=table.top[cells],
        cost=table.cost[cells],
        response=table.response,
        holding=table.holding,
        negative_contributions=table.negative_contributions,
    )


def modular_pattern(
    table: Table,
    primary: Primary,
    cost: np.ndarray,
    solver: Solver,
    *,
    min_protection: float = 1.0,
) -> np.ndarray:
    """The HiTaS pattern (see the module docstring); ``solver(sub_table, sub_primary,
    sub_cost, published)`` returns the suppressed cells of one flat sub-table (primaries
    included) without suppressing a ``published`` cell, or raises
    :class:`~sdckit.errors.DataError` when it cannot."""
    suppressed = primary.unsafe.copy()
    decided = np.zeros(table.n_cells, dtype=bool)  # released or suppressed in a sub-table
    for parents, cells in sub_tables(table):
        must = suppressed[cells]
        if not must.any():
            decided[cells] = True
            continue
        sub = _flat_table(table, parents, cells)
        is_primary = primary.unsafe[cells]
        upper = np.where(is_primary, primary.upper[cells], np.where(must, min_protection, 0.0))
        lower = np.where(
            is_primary,
            primary.lower[cells],
            np.where(must, np.minimum(min_protection, np.maximum(sub.value, 0.0)), 0.0),
        )
        sub_primary = Primary(must, upper, lower, {"sub-table": must})
        published = decided[cells] & ~must
        try:
            pattern = solver(sub, sub_primary, cost[cells], published)
        except DataError:  # not protectable within the sub-table's own cells
            sub_cost = np.where(published, cost[cells] * _PUBLISHED_COST + 1.0, cost[cells])
            pattern = solver(sub, sub_primary, sub_cost, np.zeros(len(cells), dtype=bool))
        pattern = np.asarray(pattern, dtype=bool)
        suppressed[cells[pattern]] = True
        decided[cells] = True
    return suppressed
