"""Tests: controlled tabular adjustment -- hand-computed optimum, brute force over the
directions, fixed cells, non-negativity, infeasible cases, properties."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import sparse
from scipy.optimize import linprog

from sdckit.errors import ConfigError, DataError, ParameterError
from sdckit.tables import Dimension, FrequencyRule, Primary, Table, primary_cells
from sdckit.tables.adjustment import controlled_adjustment


def table_from_inner(inner: object) -> Table:
    """A flat table over ``inner`` with all its margins (node 0 of every dimension = total)."""
    inner = np.asarray(inner, dtype=float)
    full = inner
    for ax in range(inner.ndim):
        full = np.concatenate([full.sum(axis=ax, keepdims=True), full], axis=ax)
    dims = [Dimension.flat(f"d{j}", [str(k) for k in range(n)]) for j, n in enumerate(inner.shape)]
    v = full.ravel()
    ones = np.ones(v.size, dtype=np.int64)
    return Table(dims, v, ones, ones.copy(), np.zeros((v.size, 1)), np.abs(v))


def _primary(n: int, cells: dict[int, tuple[float, float]]) -> Primary:
    unsafe = np.zeros(n, dtype=bool)
    upper, lower = np.zeros(n), np.zeros(n)
    for i, (u, lo) in cells.items():
        unsafe[i], upper[i], lower[i] = True, u, lo
    return Primary(unsafe, upper, lower, {"manual": unsafe})


def _check(table: Table, primary: Primary, adjusted: np.ndarray, nonnegative: bool = True) -> None:
    a = table.value
    assert np.abs(table.constraints() @ adjusted).max(initial=0.0) < 1e-7
    d = adjusted - a
    p = primary.unsafe
    out = (d[p] >= primary.upper[p] - 1e-7) | (-d[p] >= primary.lower[p] - 1e-7)
    assert out.all()
    if nonnegative:
        assert np.all(adjusted >= -1e-9)


def _brute_force(
    table: Table, primary: Primary, w: np.ndarray, fixed: np.ndarray | None = None
) -> float:
    """The least weighted distance over every choice of directions (one LP each)."""
    a, n = table.value, table.n_cells
    cons = table.constraints()
    prim = np.flatnonzero(primary.unsafe)
    best = np.inf
    for dirs in itertools.product([True, False], repeat=len(prim)):
        lo_p, hi_p = np.zeros(n), np.full(n, np.inf)
        lo_m, hi_m = np.zeros(n), a.copy()
        for i, up in zip(prim, dirs, strict=True):
            if up:
                lo_p[i], hi_m[i] = primary.upper[i], 0.0
            else:
                if primary.lower[i] <= 0:
                    break  # cannot move down
                lo_m[i], hi_p[i] = primary.lower[i], 0.0
        else:
            if fixed is not None:
                hi_p[fixed] = hi_m[fixed] = 0.0
            res = linprog(
                np.concatenate([w, w]),
                A_eq=sparse.hstack([cons, -cons]),
                b_eq=np.zeros(cons.shape[0]),
                bounds=np.column_stack([np.r_[lo_p, lo_m], np.r_[hi_p, hi_m]]),
                method="highs",
            )
            if res.status == 0:
                best = min(best, res.fun)
    return best


def test_hand_computed_one_way_adjustment() -> None:
    # cells [T, a, b, c] = [20, 10, 7, 3]; c primary, UPL 2, LPL 3; weights 1/|value|:
    # c up 2 with T up 2 costs 2/3 + 2/20 = 0.7667 (a down instead: 2/3 + 2/10; b: 2/3 + 2/7);
    # c down 3 costs 1 + 3/20 at best
    t = table_from_inner([10, 7, 3])
    p = _primary(4, {3: (2.0, 3.0)})
    adj = controlled_adjustment(t, p)
    assert adj.adjusted == pytest.approx([22, 10, 7, 5])
    assert adj.adjustment == pytest.approx([2, 0, 0, 2])
    assert adj.direction.tolist() == [0, 0, 0, 1]
    assert adj.details["objective"] == pytest.approx(2 / 3 + 2 / 20)
    assert adj.details["primary_up"] == 1 and adj.details["primary_down"] == 0
    assert adj.details["weights"] == "relative" and adj.details["optimal"]
    assert adj.to_dict()["sum_abs_adjustment"] == pytest.approx(4)
    # the grand total held fixed: a, the cheapest other cell, absorbs it (2/3 + 2/10)
    fixed = np.zeros(4, dtype=bool)
    fixed[0] = True
    adj = controlled_adjustment(t, p, fixed=fixed)
    assert adj.adjusted == pytest.approx([20, 8, 7, 5])
    assert adj.details["objective"] == pytest.approx(2 / 3 + 2 / 10)
    assert adj.details["fixed_cells"] == 1


def test_unit_cost_and_table_cost() -> None:
    t = table_from_inner([10, 7, 3])
    p = _primary(4, {3: (2.0, 3.0)})
    # unit weights: up 2 (+2 elsewhere) = 4 beats down 3 (+3) = 6
    adj = controlled_adjustment(t, p, cost="unit")
    assert adj.details["objective"] == pytest.approx(4)
    assert adj.direction[3] == 1
    t.cost = np.array([1.0, 1.0, 1.0, 10.0])
    # moving c costs 10 per unit: up 2 -> 20 + 2 beats down 3 -> 30 + 3
    adj = controlled_adjustment(t, p, cost="table")
    assert adj.details["objective"] == pytest.approx(22)
    assert adj.details["weights"] == "table"
    adj = controlled_adjustment(t, p, cost=np.array([1.0, 1.0, 1.0, 1.0]))
    assert adj.details["weights"] == "custom"


def test_optimal_against_brute_force_over_directions() -> None:
    t = table_from_inner([[12, 3, 7], [1, 9, 15], [4, 6, 2]])
    cells = {
        t.cell_index({"d0": "0", "d1": "1"}): (2.0, 2.0),
        t.cell_index({"d0": "1", "d1": "0"}): (3.0, 1.0),
        t.cell_index({"d0": "2", "d1": "2"}): (1.5, 1.5),
        t.cell_index({"d0": "2", "d1": "Total"}): (4.0, 4.0),
    }
    p = _primary(t.n_cells, cells)
    for cost in (None, "unit"):
        adj = controlled_adjustment(t, p, cost=cost)
        _check(t, p, adj.adjusted)
        assert adj.details["objective"] == pytest.approx(_brute_force(t, p, adj.weights), abs=1e-9)
    fixed = np.zeros(t.n_cells, dtype=bool)
    fixed[0] = True
    adj = controlled_adjustment(t, p, fixed=fixed)
    assert adj.adjusted[0] == t.value[0]
    assert adj.details["objective"] == pytest.approx(
        _brute_force(t, p, adj.weights, fixed), abs=1e-9
    )


def test_zero_primary_cell_can_only_move_up() -> None:
    # a zero cell has LPL 0 under non-negativity: staying would not protect it
    t = table_from_inner([0, 5, 9])
    p = _primary(4, {1: (2.0, 0.0)})
    adj = controlled_adjustment(t, p, cost="unit")
    assert adj.direction[1] == 1 and adj.adjusted[1] == pytest.approx(2)
    _check(t, p, adj.adjusted)


def test_nonnegativity_bounds_the_downward_move() -> None:
    # [T, a, c] = [13, 10, 3]; c with LPL clipped to 3 (rules.py under non-negativity) may go
    # to 0: 3/3 + 3/13 (T absorbs it) beats up 8: 8/3 + 8/13
    t = table_from_inner([10, 3])
    p = _primary(3, {2: (8.0, 3.0)})
    adj = controlled_adjustment(t, p)
    assert adj.adjusted == pytest.approx([10, 10, 0])
    assert adj.direction[2] == -1
    # a level above the value cannot be reached downwards: the cell goes up
    p = _primary(3, {2: (8.0, 5.0)})
    adj = controlled_adjustment(t, p)
    assert adj.direction[2] == 1 and adj.adjusted == pytest.approx([21, 10, 11])
    # without non-negativity it may go down by 5 to -2 (5/3 + 5/13 < 8/3 + 8/13)
    adj = controlled_adjustment(t, p, nonnegative=False)
    assert adj.direction[2] == -1 and adj.adjusted == pytest.approx([8, 10, -2])


def test_infeasible_adjustment_raises_config_error() -> None:
    # [T, A, B] = [2, 1, 1], T fixed, A and B primary with UPL 3 and LPL 1: A up 3 needs B
    # down 3 (below 0); A down 1 moves B up 1, inside B's interval
    t = table_from_inner([1, 1])
    p = _primary(3, {1: (3.0, 1.0), 2: (3.0, 1.0)})
    fixed = np.array([True, False, False])
    with pytest.raises(ConfigError, match="no controlled tabular adjustment exists.*fixed"):
        controlled_adjustment(t, p, fixed=fixed)
    # releasing the total makes it feasible
    _check(t, p, controlled_adjustment(t, p).adjusted)


def test_argument_errors() -> None:
    t = table_from_inner([1, 4])
    p = _primary(3, {1: (1.0, 1.0)})
    with pytest.raises(ParameterError, match="also held fixed"):
        controlled_adjustment(t, p, fixed=np.array([False, True, False]))
    with pytest.raises(ParameterError, match="boolean mask"):
        controlled_adjustment(t, p, fixed=np.array([0, 1, 0]))
    with pytest.raises(ParameterError, match="unknown CTA cost"):
        controlled_adjustment(t, p, cost="cheap")
    with pytest.raises(ParameterError, match="one entry per cell"):
        controlled_adjustment(t, p, cost=np.ones(2))
    with pytest.raises(ParameterError, match="non-negative"):
        controlled_adjustment(t, p, cost=np.array([1.0, -1.0, 1.0]))
    with pytest.raises(ParameterError, match="one entry per cell"):
        controlled_adjustment(t, _primary(4, {1: (1.0, 1.0)}))
    with pytest.raises(ParameterError, match="time_limit"):
        controlled_adjustment(t, p, time_limit=-1)
    neg = table_from_inner([-1, 4])
    with pytest.raises(DataError, match="nonnegative=False"):
        controlled_adjustment(neg, p)


def test_no_primary_cells_leaves_the_table() -> None:
    t = table_from_inner([[1, 2], [3, 4]])
    adj = controlled_adjustment(t, _primary(t.n_cells, {}))
    assert np.array_equal(adj.adjusted, t.value) and adj.details["objective"] == 0


def test_with_rules_on_microdata() -> None:
    df = pd.DataFrame({"r": list("aaabbbbbc"), "s": list("xyxyxyxyx")})
    t = Table.from_microdata(df, ["r", "s"])
    p = primary_cells(t, [FrequencyRule(threshold=3, safety_range=50)])
    assert p.count > 0
    adj = controlled_adjustment(t, p)
    _check(t, p, adj.adjusted)
    assert (adj.direction[p.unsafe] != 0).all() and (adj.direction[~p.unsafe] == 0).all()


@settings(max_examples=20, deadline=None)
@given(
    data=st.data(),
    rows=st.integers(1, 4),
    cols=st.integers(2, 4),
)
def test_adjusted_table_is_additive_and_protects(data: st.DataObject, rows: int, cols: int) -> None:
    inner = np.array(
        data.draw(
            st.lists(
                st.lists(st.integers(0, 20), min_size=cols, max_size=cols),
                min_size=rows,
                max_size=rows,
            )
        ),
        dtype=float,
    )
    t = table_from_inner(inner)
    mask = data.draw(st.lists(st.booleans(), min_size=t.n_cells, max_size=t.n_cells))
    upl = np.array(data.draw(st.lists(st.integers(1, 5), min_size=t.n_cells, max_size=t.n_cells)))
    unsafe = np.array(mask)
    upper = np.where(unsafe, upl, 0.0)
    lower = np.minimum(upper, t.value)
    p = Primary(unsafe, upper, lower, {})
    adj = controlled_adjustment(t, p)
    _check(t, p, adj.adjusted)
    assert np.allclose(adj.adjustment, adj.adjusted - t.value)


@settings(max_examples=12, deadline=None)
@given(data=st.data(), cols=st.integers(2, 3))
def test_tiny_tables_match_the_brute_force(data: st.DataObject, cols: int) -> None:
    inner = np.array(
        data.draw(
            st.lists(
                st.lists(st.integers(0, 9), min_size=cols, max_size=cols), min_size=2, max_size=2
            )
        ),
        dtype=float,
    )
    t = table_from_inner(inner)
    cells = data.draw(st.lists(st.integers(0, t.n_cells - 1), min_size=1, max_size=4, unique=True))
    levels = data.draw(st.lists(st.integers(1, 4), min_size=len(cells), max_size=len(cells)))
    p = _primary(
        t.n_cells,
        {c: (float(u), float(min(u, t.value[c]))) for c, u in zip(cells, levels, strict=True)},
    )
    adj = controlled_adjustment(t, p, cost="unit")
    _check(t, p, adj.adjusted)
    assert adj.details["objective"] == pytest.approx(_brute_force(t, p, adj.weights), abs=1e-9)
