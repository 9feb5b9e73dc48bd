"""Tests: the audit of suppression patterns -- feasibility intervals computed by hand on small
tables, exposure, bounds, statuses from other tools, and agreement with a naive LP per cell."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from sdckit.core.hierarchy_builders import order_hierarchy
from sdckit.errors import DataError, ParameterError
from sdckit.tables import Primary, Table
from sdckit.tables.audit import audit, audit_cells


def two_by_two() -> Table:
    """Inner cells 10 20 / 30 40 with margins (rows r1 r2, columns c1 c2)."""
    df = pd.DataFrame({"r": ["r1", "r1", "r2", "r2"], "c": ["c1", "c2", "c1", "c2"]})
    df["v"] = [10, 20, 30, 40]
    return Table.from_microdata(df, ["r", "c"], "v")


def cell(t: Table, **codes: str) -> int:
    return t.cell_index(codes)


def primary_of(t: Table, cells: list[int], upl: float, lpl: float | None = None) -> Primary:
    unsafe = np.zeros(t.n_cells, dtype=bool)
    unsafe[cells] = True
    upper = np.where(unsafe, upl, 0.0)
    lower = np.where(unsafe, upl if lpl is None else lpl, 0.0)
    return Primary(unsafe, upper, lower, {"test": unsafe})


def naive_intervals(
    t: Table, suppressed: np.ndarray, nonnegative: bool = True
) -> tuple[np.ndarray, np.ndarray]:
    """Independent audit: every cell a variable, published ones fixed by their bounds, one
    plain LP per suppressed cell and direction."""
    a = t.constraints().toarray()
    lb = np.where(suppressed, 0.0 if nonnegative else -np.inf, t.value)
    ub = np.where(suppressed, np.inf, t.value)
    lower = np.full(t.n_cells, np.nan)
    upper = np.full(t.n_cells, np.nan)
    for c in np.flatnonzero(suppressed):
        for sign in (1.0, -1.0):
            obj = np.zeros(t.n_cells)
            obj[c] = sign
            res = linprog(
                obj,
                A_eq=a,
                b_eq=np.zeros(len(a)),
                bounds=np.column_stack([lb, ub]),
                method="highs",
            )
            value = res.fun * sign if res.status == 0 else -sign * np.inf
            if sign > 0:
                lower[c] = value
            else:
                upper[c] = value
    return lower, upper


# -- hand-computed intervals ---------------------------------------------------------------------
def test_inner_cells_of_a_two_by_two_table() -> None:
    # x11 + x12 = 30, x21 + x22 = 70, x11 + x21 = 40, x12 + x22 = 60, x >= 0:
    # x11 = t, x12 = 30 - t, x21 = 40 - t, x22 = 30 + t with 0 <= t <= 30
    t = two_by_two()
    result = audit(t, t.is_inner)
    expected = {
        ("r1", "c1"): (0, 30),
        ("r1", "c2"): (0, 30),
        ("r2", "c1"): (10, 40),
        ("r2", "c2"): (30, 60),
    }
    for (r, c), (lo, hi) in expected.items():
        i = cell(t, r=r, c=c)
        assert result.lower[i] == pytest.approx(lo, abs=1e-9)
        assert result.upper[i] == pytest.approx(hi, abs=1e-9)
    assert np.isnan(result.lower[~t.is_inner]).all() and np.isnan(result.upper[~t.is_inner]).all()
    assert result.safe and len(result.exposed) == 0
    summary = result.to_dict()
    assert summary["suppressed"] == 4 and summary["exposed"] == 0 and summary["safe"] is True


def test_a_suppressed_grand_total_is_recomputed_from_the_margins() -> None:
    t = two_by_two()
    mask = t.is_inner.copy()
    mask[cell(t, r="Total", c="Total")] = True
    result = audit(t, mask)
    g = cell(t, r="Total", c="Total")
    assert result.lower[g] == pytest.approx(100) and result.upper[g] == pytest.approx(100)
    assert not result.safe and result.exposed.tolist() == [g]  # width 0


def test_a_one_dimensional_table() -> None:
    # Total 100 = a 20 + b 30 + c 50
    df = pd.DataFrame({"d": ["a", "b", "c"], "v": [20, 30, 50]})
    t = Table.from_microdata(df, ["d"], "v")
    a, b, total = cell(t, d="a"), cell(t, d="b"), cell(t, d="Total")
    mask = np.zeros(t.n_cells, dtype=bool)
    mask[[a, b]] = True
    r = audit(t, mask)  # a + b = 50
    assert (r.lower[a], r.upper[a], r.lower[b], r.upper[b]) == pytest.approx((0, 50, 0, 50))
    # with the total hidden too, a and b are only bounded below
    mask[total] = True
    r = audit(t, mask)
    assert r.lower[a] == pytest.approx(0) and r.upper[a] == np.inf
    assert r.lower[total] == pytest.approx(50) and r.upper[total] == np.inf
    # an a-priori upper bound of 25 on a: a in [0, 25], b = 50 - a in [25, 50]
    mask[total] = False
    ub = np.full(t.n_cells, np.inf)
    ub[a] = 25
    r = audit(t, mask, upper_bounds=ub)
    assert (r.lower[a], r.upper[a], r.lower[b], r.upper[b]) == pytest.approx((0, 25, 25, 50))
    # without the non-negativity both are unbounded
    r = audit(t, mask, lower_bounds=None)
    assert r.lower[a] == -np.inf and r.upper[a] == np.inf


def test_a_primary_alone_in_its_row_is_exposed() -> None:
    t = two_by_two()
    p = cell(t, r="r1", c="c1")
    mask = np.zeros(t.n_cells, dtype=bool)
    mask[[p, cell(t, r="r2", c="c1")]] = True  # a column pair: the rows give both away
    result = audit(t, mask, primary_of(t, [p], 1.0))
    assert result.lower[p] == pytest.approx(10) and result.upper[p] == pytest.approx(10)
    assert not result.safe and result.exposed.tolist() == [p]
    assert not result.safe_cells[p] and result.safe_cells[cell(t, r="r2", c="c1")]
    # a published primary is exposed as well
    result = audit(t, np.zeros(t.n_cells, dtype=bool), primary_of(t, [p], 1.0))
    assert result.exposed.tolist() == [p]


def test_protection_levels_decide_the_primary_cells() -> None:
    t = two_by_two()
    p = cell(t, r="r1", c="c1")  # interval [0, 30] when the inner cells are hidden
    assert audit(t, t.is_inner, primary_of(t, [p], 20.0, 10.0)).safe  # reaches 30 and 0
    result = audit(t, t.is_inner, primary_of(t, [p], 20.5, 10.0))
    assert not result.safe and result.exposed.tolist() == [p]
    assert not audit(t, t.is_inner, primary_of(t, [p], 5.0, 10.5)).safe


def test_a_hierarchical_dimension() -> None:
    # region: NS = N + S; * = NS + E; values N 10, S 5, E 7. Hiding N and S: N + S = NS = 15
    h = order_hierarchy(["N", "S", "E"], groups=[{"NS": ["N", "S"], "EE": ["E"]}], name="r")
    df = pd.DataFrame({"region": ["N", "S", "E"], "v": [10, 5, 7]})
    t = Table.from_microdata(df, {"region": h}, "v")
    n, s, ns = cell(t, region="N"), cell(t, region="S"), cell(t, region="NS")
    mask = np.zeros(t.n_cells, dtype=bool)
    mask[[n, s]] = True
    r = audit(t, mask)
    assert (r.lower[n], r.upper[n], r.lower[s], r.upper[s]) == pytest.approx((0, 15, 0, 15))
    # hiding the sub-total as well: NS = * - E = 15 is known, nothing changes
    mask[ns] = True
    r = audit(t, mask)
    assert (r.lower[ns], r.upper[ns]) == pytest.approx((15, 15))
    assert r.upper[n] == pytest.approx(15) and not r.safe  # NS has width 0


# -- another tool's statuses -----------------------------------------------------------------------
def test_audit_cells_reads_sdctable_statuses() -> None:
    t = two_by_two()
    status = np.array(["s"] * t.n_cells, dtype=object)
    status[t.is_inner] = "x"
    status[cell(t, r="r1", c="c1")] = "u"
    result = audit_cells(t, status)
    assert result.safe and result.primary.sum() == 1 and result.suppressed.sum() == 4
    # the same from a cells table, by codes; cells it lacks are published
    frame = t.codes()
    frame["status"] = status
    frame = frame[frame["status"] != "s"]
    again = audit_cells(t, frame)
    assert np.array_equal(again.suppressed, result.suppressed)
    assert np.allclose(again.upper[t.is_inner], result.upper[t.is_inner])
    # with the rules' protection levels
    strict = audit_cells(t, status, primary_of(t, [cell(t, r="r1", c="c1")], 25.0))
    assert not strict.safe


def test_unknown_statuses_and_bad_masks_are_clear_errors() -> None:
    t = two_by_two()
    with pytest.raises(DataError, match="unknown cell status 'q'"):
        audit_cells(t, ["q"] + ["s"] * (t.n_cells - 1))
    assert audit_cells(t, ["Q"] + ["s"] * (t.n_cells - 1), primary_statuses={"q"}).primary[0]
    with pytest.raises(ParameterError, match="one flag per cell"):
        audit(t, np.zeros(3, dtype=bool))
    with pytest.raises(ParameterError, match="lower bound"):
        audit(t, t.is_inner, lower_bounds=5.0, upper_bounds=1.0)


def test_negative_cells_need_explicit_bounds() -> None:
    df = pd.DataFrame({"d": ["a", "b", "c"], "v": [-20, 30, 50]})
    t = Table.from_microdata(df, ["d"], "v")
    mask = np.zeros(t.n_cells, dtype=bool)
    mask[[cell(t, d="a"), cell(t, d="b")]] = True
    with pytest.raises(DataError, match="lower_bounds=None"):
        audit(t, mask)
    r = audit(t, mask, lower_bounds=None)
    assert r.safe and r.lower[cell(t, d="a")] == -np.inf


# -- agreement with a naive LP per cell ----------------------------------------------------------
@settings(max_examples=25, deadline=None)
@given(
    rows=st.integers(2, 4),
    cols=st.integers(2, 4),
    seed=st.integers(0, 10_000),
    share=st.floats(0.2, 0.8),
)
def test_intervals_match_a_naive_lp_per_cell(rows: int, cols: int, seed: int, share: float):
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        [(f"r{i}", f"c{j}", float(rng.integers(0, 30))) for i in range(rows) for j in range(cols)],
        columns=["r", "c", "v"],
    )
    t = Table.from_microdata(df, ["r", "c"], "v")
    mask = rng.random(t.n_cells) < share
    result = audit(t, mask)
    lower, upper = naive_intervals(t, mask)
    sup = mask
    assert np.allclose(result.lower[sup], lower[sup], atol=1e-6)
    assert np.array_equal(np.isinf(result.upper[sup]), np.isinf(upper[sup]))
    fin = sup & np.isfinite(upper)
    assert np.allclose(result.upper[fin], upper[fin], atol=1e-6)
    width = upper - lower
    assert np.array_equal(result.safe_cells[sup], width[sup] > result.tolerance)
