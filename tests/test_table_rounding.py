"""Tests: controlled rounding -- hand-computed optimum, zero restriction, additivity,
infeasible three-way tables, determinism."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.core.hierarchy_builders import order_hierarchy
from sdckit.errors import ConfigError, ParameterError
from sdckit.tables import Dimension, Table
from sdckit.tables.rounding import controlled_rounding


def table_from_inner(inner: np.ndarray) -> Table:
    """A flat table over ``inner`` with all its margins (node 0 of every dimension = total)."""
    inner = np.asarray(inner, dtype=float)
    full = inner
    for ax in range(inner.ndim):
        full = np.concatenate([full.sum(axis=ax, keepdims=True), full], axis=ax)
    dims = [Dimension.flat(f"d{j}", [str(k) for k in range(n)]) for j, n in enumerate(inner.shape)]
    v = full.ravel()
    ones = np.ones(v.size, dtype=np.int64)
    return Table(dims, v, ones, ones.copy(), np.zeros((v.size, 1)), np.abs(v))


def _check(table: Table, rounded: np.ndarray, base: float) -> None:
    a = table.value
    assert np.allclose(rounded / base, np.rint(rounded / base))
    assert np.all(np.abs(rounded - a) < base)
    multiple = np.isclose(a / base, np.rint(a / base))
    assert np.array_equal(rounded[multiple], a[multiple])
    assert np.abs(table.constraints() @ rounded).max(initial=0.0) < 1e-9


def test_hand_computed_two_way_rounding() -> None:
    # inner [[3, 8], [6, 2]], base 5; cells [T,1,2] x [T,1,2]:
    #   19  9 10 | 11  3  8 | 8  6  2      (the column-2 total 10 is a multiple: it stays)
    # column 2: r12 + r22 = 10 -> (10, 0) [deviation >= 16 overall] or (5, 5):
    # (5, 5) forces r11 = r21 = 5, row totals 10, column-1 total 10, grand total 20: 14
    t = table_from_inner([[3, 8], [6, 2]])
    r = controlled_rounding(t, 5)
    assert r.rounded.tolist() == [20, 10, 10, 10, 5, 5, 10, 5, 5]
    assert r.deviation.tolist() == [1, 1, 0, -1, 2, -3, 2, -1, 3]
    assert r.details["sum_abs_deviation"] == 14
    assert r.details["max_abs_deviation"] == 3
    assert r.details["binaries"] == 8 and r.details["optimal"]
    assert r.details["cells_up"] == 5 and r.details["cells_down"] == 3
    # relative to max(|value|, 1): the cell 2 rounded to 5 moves by 3/2
    assert r.details["max_rel_deviation"] == pytest.approx(3 / 2)
    assert r.to_dict()["base"] == 5
    _check(t, r.rounded, 5)


def test_rounding_is_the_optimum_of_a_brute_force_enumeration() -> None:
    t = table_from_inner([[3, 8], [6, 2]])
    a, cons = t.value, t.constraints()
    best = np.inf
    free = np.flatnonzero(a % 5 != 0)
    for bits in itertools.product([0, 1], repeat=len(free)):
        r = np.floor(a / 5) * 5
        r[free] += 5 * np.array(bits)
        r[a % 5 == 0] = a[a % 5 == 0]
        if np.abs(cons @ r).max() == 0:
            best = min(best, np.abs(r - a).sum())
    assert controlled_rounding(t, 5).details["sum_abs_deviation"] == best == 14


def test_zero_restriction_keeps_multiples_and_zeros() -> None:
    t = table_from_inner([[0, 5, 7], [10, 3, 0], [1, 0, 4]])
    r = controlled_rounding(t, 5)
    _check(t, r.rounded, 5)
    inner = t.is_inner
    zeros = inner & (t.value == 0)
    assert zeros.sum() == 3 and np.all(r.rounded[zeros] == 0)
    assert r.rounded[t.cell_index({"d0": "1", "d1": "0"})] == 10


def test_non_integer_values_and_base() -> None:
    t = table_from_inner([[0.4, 1.3], [2.25, 0.5]])
    r = controlled_rounding(t, 0.5)
    _check(t, r.rounded, 0.5)
    # 0.5 is a multiple of the base and stays
    assert r.rounded[t.cell_index({"d0": "1", "d1": "1"})] == 0.5


def test_already_rounded_table_is_unchanged() -> None:
    t = table_from_inner([[10, 20], [5, 0]])
    r = controlled_rounding(t, 5)
    assert np.array_equal(r.rounded, t.value)
    assert r.details["binaries"] == 0 and r.details["sum_abs_deviation"] == 0


def test_hierarchical_table_from_microdata() -> None:
    h = order_hierarchy(["a", "b", "c"], groups=[{"ab": ["a", "b"], "cc": ["c"]}], name="r")
    df = pd.DataFrame({"r": list("aabbbcccc"), "s": list("xyxyxyxyx"), "v": range(1, 10)})
    t = Table.from_microdata(df, {"r": h, "s": None}, "v")
    r = controlled_rounding(t, 4)
    _check(t, r.rounded, 4)


def test_one_dimensional_table() -> None:
    t = table_from_inner([1, 1, 1])
    r = controlled_rounding(t, 2)
    _check(t, r.rounded, 2)
    # total 3 -> 2 or 4; the parts must add up to it: sum |dev| = 1 + 1 + 1 + 1 = 4
    assert r.details["sum_abs_deviation"] == 4


def test_infeasible_three_way_table_raises_config_error() -> None:
    # base 2, a 3x3x3 table of 0/1: seven 1-cells on a cycle of odd length, each pair of
    # neighbours alone on a line whose total (2) is even and stays; every such line makes the
    # two cells round opposite ways (0 and 2), impossible around an odd cycle
    inner = np.zeros((3, 3, 3))
    cycle = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (2, 1, 0), (2, 1, 1), (0, 1, 1), (0, 0, 1)]
    for c in cycle:
        inner[c] = 1
    with pytest.raises(ConfigError, match="no zero-restricted controlled rounding to base 2"):
        controlled_rounding(table_from_inner(inner), 2)
    # base 3 is fine for the same table
    _check(table_from_inner(inner), controlled_rounding(table_from_inner(inner), 3).rounded, 3)


def test_infeasible_two_way_table_with_two_hierarchies() -> None:
    # both dimensions hierarchical (ab|cde x wx|yz); base 2 has no controlled rounding
    counts = {"a": [1, 0, 2, 2], "b": [0, 2, 0, 0], "c": [0, 0, 1, 2], "d": [1, 0, 0, 3]}
    counts["e"] = [0, 1, 1, 0]
    rows = [
        (r, s) for r, c in counts.items() for s, k in zip("wxyz", c, strict=True) for _ in range(k)
    ]
    df = pd.DataFrame(rows, columns=["r", "s"])
    hr = order_hierarchy(
        list("abcde"), groups=[{"ab": ["a", "b"], "cde": ["c", "d", "e"]}], name="r"
    )
    hs = order_hierarchy(list("wxyz"), groups=[{"wx": ["w", "x"], "yz": ["y", "z"]}], name="s")
    t = Table.from_microdata(df, {"r": hr, "s": hs})
    with pytest.raises(ConfigError, match="base 2 exists"):
        controlled_rounding(t, 2)
    # one hierarchical dimension crossed with a flat one rounds
    t1 = Table.from_microdata(df, {"r": hr, "s": None})
    _check(t1, controlled_rounding(t1, 2).rounded, 2)


@pytest.mark.parametrize("base", [0, -5, float("nan"), "five", None])
def test_bad_base(base: object) -> None:
    with pytest.raises(ParameterError, match="base must be a positive number"):
        controlled_rounding(table_from_inner([1, 2]), base)  # type: ignore[arg-type]


def test_bad_time_limit() -> None:
    with pytest.raises(ParameterError, match="time_limit"):
        controlled_rounding(table_from_inner([1, 2]), 5, time_limit=0)


def test_seeded_table_rounds_deterministically() -> None:
    def run() -> np.ndarray:
        inner = np.random.default_rng(42).integers(0, 30, size=(12, 9))
        return controlled_rounding(table_from_inner(inner), 5, time_limit=30).rounded

    first, second = run(), run()
    assert np.array_equal(first, second)


@settings(max_examples=25, deadline=None)
@given(
    inner=st.integers(1, 4).flatmap(
        lambda r: st.integers(1, 4).flatmap(
            lambda c: st.lists(
                st.lists(st.integers(0, 30), min_size=c, max_size=c), min_size=r, max_size=r
            )
        )
    ),
    base=st.sampled_from([2, 3, 5, 10]),
)
def test_two_way_rounding_exists_and_is_controlled(inner: list[list[int]], base: int) -> None:
    t = table_from_inner(np.array(inner))
    r = controlled_rounding(t, base)
    _check(t, r.rounded, base)
    assert np.allclose(r.deviation, r.rounded - t.value)
