"""Tests: the optimal suppression within a time limit -- the limit honoured on a table it
cannot solve in time, the simple pattern as its floor, the proven lower bound and gap, the
default limit stated in the details, the CLI table and the report; the attacker cuts at a
fractional point; the warm-started witness LPs against linprog; the MIP start; CTA's gap."""

from __future__ import annotations

import time

import numpy as np
import pandas as pd
import pytest
from scipy import sparse
from scipy.optimize import linprog

from sdckit.core.solver import solve_mip
from sdckit.errors import ParameterError
from sdckit.tables import Dimension, Primary, Table
from sdckit.tables._lp import MinMoveLP
from sdckit.tables.adjustment import DEFAULT_GAP, controlled_adjustment
from sdckit.tables.audit import audit
from sdckit.tables.patterns import AttackerModel, release_unneeded, repair, simple_pattern
from sdckit.tables.suppression import DEFAULT_TIME_LIMIT, suppress

METHODS_HEURISTIC = ("simple", "hypercube", "modular")


def cube(n: int, seed: int, share: float) -> tuple[Table, Primary]:
    """An n x n x n table with margins (cells: lognormal inner values, totals their sums),
    primaries a share of the inner cells with protection 20% of the value."""
    dims = [Dimension.flat(name, [f"{name}{i}" for i in range(n)]) for name in "abc"]
    rng = np.random.default_rng(seed)
    inner = np.round(rng.lognormal(3.0, 1.0, (n, n, n))) + 1.0
    # totals first (node 0), categories after, as Dimension.flat orders them
    full = np.zeros((n + 1,) * 3)
    full[1:, 1:, 1:] = inner
    for axis in range(3):
        idx = [slice(None)] * 3
        idx[axis] = 0
        sl = [slice(None)] * 3
        sl[axis] = slice(1, None)
        full[tuple(idx)] = full[tuple(sl)].sum(axis=axis)
    value = full.ravel()
    freq = np.where(value > 0, np.maximum(1, value // 10), 0).astype(np.int64)
    table = Table(dims, value, freq, freq.copy(), np.zeros((len(value), 1)), value.copy())
    assert np.abs(table.constraints() @ value).max() < 1e-9  # additive
    cand = np.flatnonzero(table.is_inner)
    unsafe = np.zeros(len(value), dtype=bool)
    unsafe[rng.choice(cand, max(1, round(share * len(cand))), replace=False)] = True
    upper = np.where(unsafe, np.maximum(1.0, 0.2 * value), 0.0)
    return table, Primary(unsafe, upper, np.minimum(upper, value), {"test": unsafe})


def test_a_tiny_limit_on_a_hard_table_returns_a_safe_pattern_with_its_gap() -> None:
    table, prim = cube(6, seed=1, share=0.06)
    t0 = time.perf_counter()
    simple = suppress(table, prim, "simple")
    simple_seconds = time.perf_counter() - t0
    limit = 0.05
    t0 = time.perf_counter()
    result = suppress(table, prim, "optimal", time_limit=limit)
    seconds = time.perf_counter() - t0
    d = result.details
    assert d["time_limit"] == limit and d["time_limit_hit"] and not d["optimal"]
    # the independent audit: safe; never dearer than the simple method's pattern
    assert audit(table, result.suppressed, prim).safe
    assert d["secondary_cost"] <= simple.details["secondary_cost"] + 1e-9
    # the proven bound: below the cost found, the gap its relative distance
    assert 0.0 <= d["lower_bound"] <= d["secondary_cost"]
    assert d["gap"] == pytest.approx((d["secondary_cost"] - d["lower_bound"]) / d["secondary_cost"])
    assert d["gap"] > 0
    # the search stops at its limit: the time is the simple incumbent's, not the search's
    assert seconds < 3 * simple_seconds + 2.0


def test_with_time_the_optimal_method_proves_its_optimum_and_states_the_limit() -> None:
    rng = np.random.default_rng(3)
    dims = [Dimension.flat(n, [f"{n}{i}" for i in range(4)]) for n in "rc"]
    inner = rng.integers(1, 40, (4, 4)).astype(float)
    full = np.zeros((5, 5))
    full[1:, 1:] = inner
    full[0, 1:] = inner.sum(axis=0)
    full[1:, 0] = inner.sum(axis=1)
    full[0, 0] = inner.sum()
    value = full.ravel()
    freq = np.full(len(value), 5, dtype=np.int64)
    table = Table(dims, value, freq, freq.copy(), np.zeros((len(value), 1)), value.copy())
    unsafe = np.zeros(len(value), dtype=bool)
    unsafe[[6, 18]] = True
    upper = np.where(unsafe, 0.3 * value, 0.0)
    prim = Primary(unsafe, upper, upper.copy(), {"test": unsafe})
    result = suppress(table, prim, "optimal")
    d = result.details
    assert d["time_limit"] == DEFAULT_TIME_LIMIT
    assert d["optimal"] and not d["time_limit_hit"]
    assert d["lower_bound"] == pytest.approx(d["secondary_cost"], rel=1e-3)
    assert d["gap"] <= 1e-3
    assert audit(table, result.suppressed, prim).safe


def test_cuts_at_a_fractional_point_hold_for_every_protecting_pattern() -> None:
    table, prim = cube(4, seed=2, share=0.1)
    c = np.asarray(table.cost, dtype=float)
    model = AttackerModel(table, prim, c, True)
    safe = repair(table, prim, simple_pattern(table, prim, c), c, method="sequential")
    y = safe.suppressed.astype(float)
    cuts = model.initial_cuts()
    fractional = 0
    for _ in range(15):
        point, value = model.relaxation(cuts, None)
        # the LP value bounds every protecting pattern's objective from below
        assert value <= model.objective(safe.suppressed) + 1e-9
        new, _ = model.separate(point)
        if not new:
            break
        if ((point > 1e-6) & (point < 1 - 1e-6)).any():
            fractional += 1
        for cut in new:
            # violated by the point, satisfied by a protecting pattern
            assert cut.coef @ point[cut.cells] < cut.rhs
            assert cut.coef @ y[cut.cells] >= cut.rhs - 1e-6
        cuts.extend(new)
    assert fractional > 0


def test_the_warm_witness_lp_equals_linprog() -> None:
    rng = np.random.default_rng(5)
    for _ in range(20):
        m, n = 6, 10
        a = sparse.csr_matrix(rng.integers(-1, 2, (m, n)).astype(float))
        up = rng.uniform(1, 10, n)
        down = rng.uniform(0, 10, n)
        lp = MinMoveLP(a, up, down)
        off = rng.random(n) < 0.3
        for k in np.flatnonzero(off):
            lp.publish(int(k))
        for k in np.flatnonzero(~off):
            for sense in (1, -1):
                need = float(rng.uniform(0.5, 5))
                d = lp.solve(int(k), sense, need)
                lo = np.zeros(2 * n)
                hi = np.concatenate([np.where(off, 0, up), np.where(off, 0, down)])
                if sense == 1:
                    lo[k], hi[n + k] = need, 0.0
                else:
                    lo[n + k], hi[k] = need, 0.0
                res = linprog(
                    np.ones(2 * n),
                    A_eq=sparse.hstack([a, -a]),
                    b_eq=np.zeros(m),
                    bounds=np.column_stack([lo, hi]),
                    method="highs",
                )
                if res.status == 2 or lo[k] > hi[k] or lo[n + k] > hi[n + k]:
                    assert d is None
                    continue
                assert d is not None
                assert np.abs(a @ d).max() < 1e-7
                assert sense * d[k] >= need - 1e-7
                assert np.abs(d).sum() == pytest.approx(res.fun, rel=1e-7, abs=1e-7)


def test_the_mip_start_is_the_first_incumbent() -> None:
    # a set cover: min sum c x, every row covered; the start covers, costing 6
    rng = np.random.default_rng(0)
    a = sparse.csr_matrix((rng.random((40, 30)) < 0.15).astype(float))
    a = a[np.flatnonzero(np.diff(a.indptr) > 0)]
    c = rng.integers(1, 10, 30).astype(float)
    rows = a.shape[0]
    args = (c, a, np.ones(rows), np.full(rows, np.inf), np.zeros(30), np.ones(30), np.ones(30))
    start = np.ones(30)
    stopped = solve_mip(*args, node_limit=0, start=start)
    assert stopped.x is not None and stopped.objective <= c.sum() + 1e-9
    best = solve_mip(*args)
    assert best.status == "optimal"
    assert best.bound <= best.objective + 1e-6
    assert (a @ best.x >= 1 - 1e-9).all()
    assert stopped.bound <= best.objective + 1e-6
    none = solve_mip(*args[:5], np.zeros(30), np.ones(30))
    assert none.status == "infeasible" and none.x is None


def test_cta_stops_within_its_gap_and_states_it() -> None:
    rng = np.random.default_rng(4)
    rows, cols = 8, 8
    recs = [
        (f"r{i}", f"c{j}", float(rng.integers(5, 80))) for i in range(rows) for j in range(cols)
    ]
    table = Table.from_microdata(pd.DataFrame(recs, columns=["r", "c", "v"]), ["r", "c"], "v")
    cand = np.flatnonzero(table.is_inner)
    unsafe = np.zeros(table.n_cells, dtype=bool)
    unsafe[rng.choice(cand, 16, replace=False)] = True
    upper = np.where(unsafe, 0.25 * table.value, 0.0)
    prim = Primary(unsafe, upper, upper.copy(), {"test": unsafe})
    loose = controlled_adjustment(table, prim)
    exact = controlled_adjustment(table, prim, gap=0.0)
    assert loose.details["gap_tolerance"] == DEFAULT_GAP
    assert exact.details["gap_tolerance"] == 0.0
    assert exact.details["objective"] <= loose.details["objective"] + 1e-9
    assert loose.details["objective"] <= (1 + DEFAULT_GAP) * exact.details["objective"] + 1e-9
    with pytest.raises(ParameterError, match="gap"):
        controlled_adjustment(table, prim, gap=1.5)


def test_the_removal_pass_stays_safe_when_the_tolerance_is_large() -> None:
    """One huge cell makes the tolerance 4 (1e-7 of the grand total): a witness's moves
    below it still count, so the removal pass never publishes a cell a primary needs (with
    the tolerance itself as the cut-off, primary cells were left a few tenths short)."""
    table, prim = cube(5, seed=4, share=0.08)
    value = table.value.reshape((6, 6, 6)).copy()
    extra = 4e7 - value[1, 1, 1]
    for idx in np.ndindex(2, 2, 2):  # the cell (1, 1, 1) and every total above it
        value[tuple(0 if z == 0 else 1 for z in idx)] += extra
    big = Table(
        table.dimensions,
        value.ravel(),
        table.freq,
        table.freq.copy(),
        np.zeros((table.n_cells, 1)),
        value.ravel().copy(),
    )
    assert np.abs(big.constraints() @ big.value).max() < 1e-6
    c = np.asarray(big.cost, dtype=float)
    unsafe = prim.unsafe & (big.value < 1e6)
    upper = np.where(unsafe, 0.2 * big.value, 0.0)
    prim = Primary(unsafe, upper, np.minimum(upper, big.value), {"test": unsafe})
    pattern = repair(big, prim, simple_pattern(big, prim, c), c, method="sequential")
    released, count = release_unneeded(big, prim, pattern.suppressed, c)
    assert count > 0
    assert audit(big, released, prim).safe


def test_the_optimal_method_is_never_dearer_than_the_cheapest_heuristic() -> None:
    """On a table where the modular heuristic beats simple (320 against 573), the optimal
    method stopped by its limit starts from the modular pattern, says so, and returns
    nothing dearer than any heuristic; the pattern passes the independent audit."""
    table, prim = cube(6, seed=0, share=0.06)
    costs = {m: suppress(table, prim, m).details["secondary_cost"] for m in METHODS_HEURISTIC}
    assert costs["modular"] < costs["simple"]
    result = suppress(table, prim, "optimal", time_limit=2.0)
    d = result.details
    assert d["start"] == "modular"
    assert not d["simple_was_cheaper"]
    assert d["secondary_cost"] <= min(costs.values()) + 1e-9
    assert audit(table, result.suppressed, prim).safe
    assert 0.0 <= d["lower_bound"] <= d["secondary_cost"]
    assert d["gap"] == pytest.approx((d["secondary_cost"] - d["lower_bound"]) / d["secondary_cost"])
    if d["start_kept"]:
        assert not d["optimal"]
    # no time left after the simple pattern: it is the incumbent, and says so
    tiny = suppress(table, prim, "optimal", time_limit=1e-9).details
    assert tiny["start"] == "simple" and tiny["start_kept"] and tiny["simple_was_cheaper"]
    assert tiny["secondary_cost"] == pytest.approx(costs["simple"])


def test_the_primal_heuristic_joins_a_master_pattern_and_keeps_protection() -> None:
    """The incumbent joined with any pattern and cleaned still protects every primary
    (independent audit) and uses only their cells; joined with the primaries alone it
    only removes cells from the incumbent."""
    table, prim = cube(5, seed=0, share=0.08)
    c = np.asarray(table.cost, dtype=float)
    best = repair(table, prim, simple_pattern(table, prim, c), c, method="sequential").suppressed
    model = AttackerModel(table, prim, c, True)
    rng = np.random.default_rng(0)
    for _ in range(3):
        y = model.fixed1 | (rng.random(table.n_cells) < 0.1) & model.free
        out = model.merge_and_release(y, best, None)
        assert audit(table, out, prim).safe
        assert not (out & ~(best | y)).any()
    alone = model.merge_and_release(model.fixed1.copy(), best, None)
    assert audit(table, alone, prim).safe
    assert not (alone & ~best).any()
    assert c[alone].sum() <= c[best].sum()
