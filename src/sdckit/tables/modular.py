"""The modular approach to hierarchical tables (HiTaS; de Wolf 2002, "HiTaS: a heuristic
approach to cell suppression in hierarchical tables", in *Inference Control in Statistical
Databases*, LNCS 2316; tau-Argus's "Modular").

A hierarchical table is cut into non-hierarchical sub-tables: choosing in every dimension a
node that has children, the sub-table holds that node (its total) and its children. Sub-tables
are protected one at a time from the top of the hierarchies down (by the sum of the chosen
nodes' depths), each as a small flat table (:func:`hitas_solver`: a hypercube cover
completed with the attacker LPs of Fischetti & Salazar 2001, and their optimal suppression
on small sub-tables):

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
import time
from collections.abc import Callable

import numpy as np

from sdckit.errors import DataError
from sdckit.tables.dimension import Dimension
from sdckit.tables.patterns import AttackerModel, close_relations, optimal_pattern
from sdckit.tables.rules import Primary
from sdckit.tables.table import Table

__all__ = [
    "CLOSURE_RATIO",
    "EXACT_CELLS",
    "EXACT_MASTERS",
    "EXACT_WHOLE_CELLS",
    "EXACT_NODES",
    "MAX_CUBES",
    "SUBTABLE_SECONDS",
    "cube_cover",
    "hitas_solver",
    "modular_pattern",
    "optimal_solver",
    "sub_tables",
]

#: Cost factor that keeps already published cells out of a sub-table's pattern.
_PUBLISHED_COST = 1e9

#: ``solver(sub_table, sub_primary, sub_cost, published, whole)``: the suppressed cells of one
#: flat sub-table (``whole``: the sub-table is the whole table).
Solver = Callable[[Table, Primary, np.ndarray, np.ndarray, bool], np.ndarray]


#: Default time limit (seconds) of the exact search on one sub-table (tau-Argus's "max. time
#: per sub-table"): none, the work bounds below stop it, so that the pattern is the same on
#: every machine (a time limit given to :func:`~sdckit.tables.suppression.suppress` still
#: applies; after it, the sub-table's best pattern is completed greedily).
SUBTABLE_SECONDS: float | None = None

#: The exact search (:func:`sdckit.tables.patterns.optimal_pattern`) runs on a sub-table
#: with at most this many suppressible cells, or :data:`EXACT_WHOLE_CELLS` when the table is
#: a single sub-table (a flat table); larger ones get the hypercube cover alone (see
#: :func:`hitas_solver`).
EXACT_CELLS = 200
EXACT_WHOLE_CELLS = 5000
#: The exact search's work bound on a sub-table: branch-and-bound nodes per master MILP and
#: masters (a bound by work, not by time, keeps the pattern the same on every machine).
EXACT_NODES = 50
EXACT_MASTERS = 10
#: The simple heuristic's closure of a sub-table is completed (attacker LPs) only when its
#: secondary cells cost less than this share of the completed hypercube cover's: on the 125
#: sub-tables of the 3-D benchmark table the completed closure won 8 times, always from a
#: share between 0.47 and 0.58, and lost 77 times (its completion adds more than the cover).
CLOSURE_RATIO = 0.6
#: At most this many hypercubes are enumerated per primary cell (in many or long dimensions
#: the alternatives per dimension are cut to the cheapest, see :func:`_cube_candidates`).
MAX_CUBES = 20_000


def _cube_candidates(
    model: AttackerModel, shape: tuple[int, ...]
) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Per primary cell ``p`` of a flat sub-table (node 0 of every dimension is its total):
    every hypercube through ``p`` without a locked corner that protects ``p`` at least in
    part, as (corners ``(m, 2^k)``, share of ``p``'s protection ``(m,)``).

    A hypercube picks one other node ``q_d`` per dimension (a sibling, the total, or -- for
    a total -- a child) and moves its ``2^k`` corners by ``±t``; a sibling edge flips the
    sign, a total-child edge keeps it (the total moves with its child), so every relation
    of the sub-table still holds. With the cells' lower bounds (``down``: the value when
    cells are non-negative) the corners moving against ``p`` allow ``t`` up to the least
    of their ``down`` upwards, those moving with ``p`` downwards (Repsilber's GHMiter
    condition; Giessing & Repsilber 2002). The share is the smaller of ``t_up / UPL`` and
    ``t_down / LPL``, capped at 1 (1: the hypercube protects ``p`` alone). Beyond
    :data:`MAX_CUBES` hypercubes per primary, each dimension keeps its cheapest usable
    alternatives."""
    k = len(shape)
    masks = np.array(list(itertools.product((False, True), repeat=k)), dtype=bool)
    out: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for p in np.flatnonzero(model.primary):
        idx = np.array(np.unravel_index(int(p), shape))
        alts, signs = [], []
        for d in range(k):
            if idx[d] == 0:
                alt = np.arange(1, shape[d], dtype=np.int64)
                sign = np.ones(len(alt))
            else:
                sib = np.arange(1, shape[d], dtype=np.int64)
                sib = sib[sib != idx[d]]
                alt = np.concatenate([[0], sib]).astype(np.int64)
                sign = np.concatenate([[1.0], -np.ones(len(sib))])
            alts.append(alt)
            signs.append(sign)
        if any(len(a) == 0 for a in alts):
            continue
        if np.prod([float(len(a)) for a in alts]) > MAX_CUBES:
            # keep per dimension the alternatives whose cell on p's line is usable and cheapest
            per_dim = max(2, int(MAX_CUBES ** (1.0 / k)))
            for d in range(k):
                line = np.tile(idx, (len(alts[d]), 1))
                line[:, d] = alts[d]
                on_line = np.ravel_multi_index(tuple(line.T), shape)
                rank = np.lexsort((model.cost[on_line], model.locked[on_line]))[:per_dim]
                rank = np.sort(rank)
                alts[d], signs[d] = alts[d][rank], signs[d][rank]
        grid = np.meshgrid(*[np.arange(len(a)) for a in alts], indexing="ij")
        pick = np.stack([g.ravel() for g in grid], axis=1)  # (m, k)
        alt = np.stack([alts[d][pick[:, d]] for d in range(k)], axis=1)
        sgn = np.stack([signs[d][pick[:, d]] for d in range(k)], axis=1)
        coords = np.where(masks[None, :, :], alt[:, None, :], idx[None, None, :])
        cells = np.ravel_multi_index(tuple(np.moveaxis(coords, -1, 0)), shape)
        corner_sign = np.prod(np.where(masks[None, :, :], sgn[:, None, :], 1.0), axis=2)
        cap = model.down[cells]
        against = np.where(corner_sign < 0, cap, np.inf).min(axis=1)
        along = np.where(corner_sign > 0, cap, np.inf)
        along[:, 0] = np.inf  # corner 0 is p itself
        along = along.min(axis=1)
        share = np.ones(len(cells))
        if model.need_up[p] > 0:
            share = np.minimum(share, against / model.need_up[p])
        if model.need_down[p] > 0:
            share = np.minimum(share, along / model.need_down[p])
        ok = ~model.locked[cells].any(axis=1) & (share > 1e-9)
        if ok.any():
            out[int(p)] = (cells[ok], share[ok])
    return out


def cube_cover(model: AttackerModel, shape: tuple[int, ...], passes: int = 4) -> np.ndarray:
    """A pattern of hypercubes covering every primary of a flat sub-table (primaries
    included), deterministic: the primaries from the largest value down each take the
    hypercube of least added cost per share of protection (cells already taken are free)
    until their shares reach 1, then each primary in turn drops its hypercubes and chooses
    again given all the others (a 1-opt local search, at most ``passes`` rounds, while the
    cost falls; the cheapest round's pattern is kept). Hypercubes sharing more than ``p``
    may protect less than their shares add up to, and a primary without a hypercube gets
    none: the caller completes the pattern with the exact attacker LPs."""
    cands = _cube_candidates(model, shape)
    order = sorted(cands, key=lambda p: (-float(model.a[p]), p))
    cost = np.where(model.fixed1, 0.0, model.cost)
    use = np.zeros(model.n, dtype=np.int64)  # chosen hypercubes holding each cell
    chosen: dict[int, list[int]] = {}

    def choose(p: int) -> None:
        cells, share = cands[p]
        free = np.ones(len(cells), dtype=bool)
        got = 0.0
        picks = []
        while got < 1.0 - 1e-9 and free.any():
            added = np.where(use[cells] > 0, 0.0, cost[cells]).sum(axis=1)
            score = np.where(free, added / np.minimum(share, 1.0 - got), np.inf)
            h = int(np.argmin(score))  # ties: the first hypercube (a fixed order)
            free[h] = False
            picks.append(h)
            got += float(share[h])
            use[cells[h]] += 1
        chosen[p] = picks

    for p in order:
        choose(p)
    best = float(cost[use > 0].sum())
    best_use = use.copy()
    for _ in range(passes):
        for p in order:
            for h in chosen[p]:
                use[cands[p][0][h]] -= 1
            choose(p)
        now = float(cost[use > 0].sum())
        if now >= best - 1e-9:
            break  # no gain: keep the best round's pattern
        best, best_use = now, use.copy()
    y = model.fixed1.copy()
    y[best_use > 0] = True
    return y


def hitas_solver(
    nonnegative: bool,
    time_limit: float | None = SUBTABLE_SECONDS,
    exact_cells: int = EXACT_CELLS,
    node_limit: int | None = EXACT_NODES,
    max_masters: int | None = EXACT_MASTERS,
    *,
    deadline: float | None = None,
) -> Solver:
    """The sub-table solver of HiTaS (de Wolf 2002; tau-Argus protects each sub-table with
    the model of Fischetti & Salazar 2001), with the published cells locked:

    1. a hypercube cover (:func:`cube_cover`), completed by the exact attacker LPs of
       Fischetti & Salazar one unprotected primary at a time (each violated inequality
       satisfied greedily, never with a locked cell) and pruned of the cells the published
       ones determine: always protecting, deterministic; and the ``simple`` heuristic's
       closure within the sub-table (every relation with a suppressed cell gets a second
       one) completed the same way when it is much cheaper before completion
       (:data:`CLOSURE_RATIO`) and still cheaper after -- it wins where primaries are dense
       (on a flat 100 x 100 table with 5% primaries: cost 227 against the cover's 1,155);
    2. on small sub-tables (at most ``exact_cells`` suppressible cells, or
       :data:`EXACT_WHOLE_CELLS` when the table is a single sub-table), also
       :func:`sdckit.tables.patterns.optimal_pattern` bounded by ``node_limit`` nodes
       per master and ``max_masters`` masters (and ``time_limit`` seconds when given;
       completed greedily when stopped), and the cheaper pattern wins.

    ``deadline`` (``time.perf_counter()`` value; the optimal method's start,
    :func:`~sdckit.tables.suppression.suppress`): the exact search stops by then (its
    ``time_limit`` shortened to the time left) and is skipped after it, so the sub-tables
    left get the completed cover alone; the covers and completions always run.

    Measured on the 3-D table of ``benchmarks/bench_tables.py`` (97,336 cells; 125 sub-tables
    of 9 x 9 x 9 whose margins a higher sub-table published, ~9 primaries each): the exact
    search is a hard MILP there (one master took 20-40 s); at 1 s per sub-table the method
    ran 224 s for a secondary cost of 199,957, its time going to the masters and to
    ``linprog``'s set-up of ~9,000 small attacker LPs. With the hypercube cover the whole
    ``suppress`` call takes ~10 s (2 shared cores, load ~1.7) for a cost of 131,734 (the
    simple heuristic: 195,405); under a profiler the covers take ~1 s, their completions
    and the closures' by the attacker LPs ~13 s (half of it building components and
    cuts with scipy.sparse, a third in HiGHS), the final repair check and audit ~2 s each."""

    def solve(
        sub: Table,
        sub_primary: Primary,
        sub_cost: np.ndarray,
        published: np.ndarray,
        whole: bool = False,
    ) -> np.ndarray:
        model = AttackerModel(sub, sub_primary, sub_cost, nonnegative, published, warm=True)
        cover = model.prune(model.sequential(cube_cover(model, sub.shape)))
        # the simple heuristic within the sub-table: better where primaries are dense and
        # protect each other through longer cycles than hypercubes; its completion is only
        # run when the closed pattern costs well below the completed cover
        closed = model.fixed1.copy()
        start = np.flatnonzero(closed)
        close_relations(model.constraints, model.cell_rows, closed, model.locked, model.cost, start)
        extra = ~model.fixed1  # compare the cells added to the primaries (and fixed ones)
        if sub_cost[closed & extra].sum() < CLOSURE_RATIO * sub_cost[cover & extra].sum():
            closed = model.prune(model.sequential(closed))
            if sub_cost[closed & extra].sum() < sub_cost[cover & extra].sum():
                cover = closed
        if int(model.free.sum()) > (max(exact_cells, EXACT_WHOLE_CELLS) if whole else exact_cells):
            return cover
        limit = time_limit
        if deadline is not None:
            left = deadline - time.perf_counter()
            if left <= 0:
                return cover
            limit = left if limit is None else min(limit, left)
        found = optimal_pattern(
            sub,
            sub_primary,
            sub_cost,
            nonnegative=nonnegative,
            published=published,
            time_limit=limit,
            node_limit=node_limit,
            max_masters=max_masters,
        )
        if found.optimal or sub_cost[found.suppressed].sum() <= sub_cost[cover].sum():
            return found.suppressed
        return cover

    return solve


#: The former name of :func:`hitas_solver`.
optimal_solver = hitas_solver


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
    sub_cost, published, whole)`` returns the suppressed cells of one flat sub-table
    (primaries included) without suppressing a ``published`` cell, or raises
    :class:`~sdckit.errors.DataError` when it cannot."""
    suppressed = primary.unsafe.copy()
    decided = np.zeros(table.n_cells, dtype=bool)  # released or suppressed in a sub-table
    subs = sub_tables(table)
    whole = len(subs) == 1
    for parents, cells in subs:
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
            pattern = solver(sub, sub_primary, cost[cells], published, whole)
        except DataError:  # not protectable within the sub-table's own cells
            sub_cost = np.where(published, cost[cells] * _PUBLISHED_COST + 1.0, cost[cells])
            pattern = solver(sub, sub_primary, sub_cost, np.zeros(len(cells), dtype=bool), whole)
        pattern = np.asarray(pattern, dtype=bool)
        suppressed[cells[pattern]] = True
        decided[cells] = True
    return suppressed
