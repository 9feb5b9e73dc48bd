"""Tests: transparency attacks on rank swapping and univariate microaggregation
(Nin, Herranz & Torra 2008)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from sdckit.errors import DataError, SdcInputError
from sdckit.risk.transparency import (
    intersect_interval_sets,
    microaggregation_attack,
    rank_swap_attack,
    rank_swap_bounds,
)
from seed004_example import COLS, ORIGINAL, PROTECTED  # noqa: E402


def rows_of(positions):
    return {tuple(PROTECTED.iloc[i]) for i in positions}


def single_attribute_set(x_value, j, window=2):
    """B_j(x) via the library's bounds and interval intersection on one attribute."""
    col = PROTECTED[[COLS[j]]].to_numpy(float)
    lo, hi = rank_swap_bounds(np.sort(col[:, 0]), np.array([float(x_value)]), window)
    indptr, indices = intersect_interval_sets(col, lo[:, None], hi[:, None])
    return indices[indptr[0] : indptr[1]]


def test_worked_example_sets_of_record_6_7_10_2():
    x = (6, 7, 10, 2)
    expected = [
        {(4, 1, 10, 10), (5, 5, 8, 1), (6, 7, 6, 3), (7, 3, 5, 6), (8, 4, 2, 2)},
        {(5, 5, 8, 1), (2, 6, 9, 8), (6, 7, 6, 3), (1, 8, 7, 9), (3, 9, 1, 7)},
        {(5, 5, 8, 1), (2, 6, 9, 8), (4, 1, 10, 10)},
        {(5, 5, 8, 1), (8, 4, 2, 2), (6, 7, 6, 3), (9, 2, 4, 4)},
    ]
    for j in range(4):
        got = single_attribute_set(x[j], j)
        assert rows_of(got) == expected[j]
        # on ranks, B_j(x) = protected records with |x'_j - x_j| <= 2
        assert set(got) == set(np.flatnonzero(np.abs(PROTECTED[COLS[j]] - x[j]) <= 2))
    res = rank_swap_attack(ORIGINAL, PROTECTED, COLS, window=2)
    assert rows_of(res.candidates(1)) == {(5, 5, 8, 1)}


def test_worked_example_all_records():
    res = rank_swap_attack(ORIGINAL, PROTECTED, COLS, window=2)
    # brute force: protected records within 2 ranks of the intruder's record on every attribute
    diff = np.abs(ORIGINAL.to_numpy()[:, None, :] - PROTECTED.to_numpy()[None, :, :])
    brute = [np.flatnonzero((diff[i] <= 2).all(axis=1)).tolist() for i in range(10)]
    assert [res.candidates(i).tolist() for i in range(10)] == brute
    assert brute == [[0], [1], [2], [3], [3, 4], [5], [6], [7], [4, 8], [7, 9]]
    assert res.certain_matches == pytest.approx(0.7)
    assert res.contains_true == 1.0 and res.n_empty == 0
    # RSLD inside the 2-sets (all columns have the same sd, so raw squared distances decide):
    # (9,4,6,4): 8 to (9,2,4,4) vs 10 to its own (7,3,5,6); (5,5,5,5): 9 vs own 10;
    # (3,6,9,7): 2 to (2,6,9,8) vs own 16 -> all three wrong, reidentified stays 0.7.
    assert res.reidentified == pytest.approx(0.7)
    assert res.mean_set_size == pytest.approx(1.3)
    same = rank_swap_attack(ORIGINAL, PROTECTED, COLS, p_percent=20)
    assert same.parameter["window"] == 2 and same.certain_matches == pytest.approx(0.7)
    assert json.loads(json.dumps(res.to_dict()))["certain_matches"] == pytest.approx(0.7)


def test_intruder_subset_and_window_zero():
    res = rank_swap_attack(ORIGINAL, PROTECTED, COLS, window=2, intruder_rows=[4, 8])
    assert [res.candidates(i).tolist() for i in range(2)] == [[3, 4], [4, 8]]
    assert res.certain_matches == 0.0
    # window 0 on an unswapped file: every record is certainly matched
    assert rank_swap_attack(ORIGINAL, ORIGINAL, COLS, window=0).certain_matches == 1.0
    # window 0 on the swapped file: most sets are empty (the method assumption is wrong)
    wrong = rank_swap_attack(ORIGINAL, PROTECTED, COLS, window=0)
    assert wrong.contains_true < 1.0 and wrong.n_empty > 0


def rank_swap(values, rng, window):
    """Simple rank swapping: consecutive ranks in blocks of window+1 are permuted at random
    (every value moves by at most `window` ranks)."""
    order = np.argsort(values, kind="stable")
    out = values.copy()
    for start in range(0, len(values), window + 1):
        block = order[start : start + window + 1]
        out[block] = values[rng.permutation(block)]
    return out


@settings(max_examples=30, deadline=None)
@given(
    n=st.integers(5, 60),
    d=st.integers(1, 4),
    window=st.integers(0, 5),
    seed=st.integers(0, 10_000),
    integer=st.booleans(),
)
def test_rank_swap_sets_contain_truth_and_match_brute_force(n, d, window, seed, integer):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d)) * 10
    if integer:
        x = np.round(x / 5)  # ties
    y = np.column_stack([rank_swap(x[:, j], rng, window) for j in range(d)])
    cols = [f"c{j}" for j in range(d)]
    if (y.std(axis=0, ddof=1) == 0).any():
        return
    res = rank_swap_attack(pd.DataFrame(x, columns=cols), pd.DataFrame(y, columns=cols),
                           cols, window=window)  # fmt: skip
    assert res.contains_true == 1.0
    # brute force with ranks: record r is compatible with x on j iff some rank of y[r, j]
    # is within `window` of some rank of x_j in the sorted protected column
    for j_rec in range(n):
        ok = np.ones(n, dtype=bool)
        for j in range(d):
            s = np.sort(y[:, j])
            lo = np.searchsorted(s, x[j_rec, j], "left")
            hi = np.searchsorted(s, x[j_rec, j], "right") - 1
            ylo = np.searchsorted(s, y[:, j], "left")
            yhi = np.searchsorted(s, y[:, j], "right") - 1
            ok &= (ylo <= hi + window) & (yhi >= lo - window)
        assert res.candidates(j_rec).tolist() == np.flatnonzero(ok).tolist()
    assert 0.0 <= res.certain_matches <= res.reidentified <= res.contains_true


def test_microaggregation_attack_hand_example():
    # attribute a: clusters {1,2,3} -> 2 and {10,11,12} -> 11 (k=3);
    # attribute b: clusters {1,2,3} (records 0,3,4) -> 2 and {10,11,12} (1,2,5) -> 11.
    x = pd.DataFrame({"a": [1.0, 2, 3, 10, 11, 12], "b": [1.0, 10, 11, 2, 3, 12]})
    y = pd.DataFrame({"a": [2.0, 2, 2, 11, 11, 11], "b": [2.0, 11, 11, 2, 2, 11]})
    res = microaggregation_attack(x, y, ["a", "b"], k=3)
    # x=1 < c1 -> first cluster only; x=2 = c1 -> first only; c1 < 3 < c2 -> both; etc.
    assert [res.candidates(i).tolist() for i in range(6)] == [
        [0], [0, 1, 2], [1, 2, 5], [0, 3, 4], [3, 4, 5], [5]
    ]  # fmt: skip
    assert res.certain_matches == pytest.approx(2 / 6)
    # inside the 3-sets the own record ties with one other at squared distance 1: 1/2 each
    assert res.reidentified == pytest.approx((1 + 4 * 0.5 + 1) / 6)
    assert res.contains_true == 1.0
    with pytest.raises(DataError, match="fewer than k=4"):
        microaggregation_attack(x, y, ["a", "b"], k=4)


@settings(max_examples=25, deadline=None)
@given(n_groups=st.integers(2, 15), k=st.integers(2, 5), seed=st.integers(0, 10_000))
def test_microaggregation_sets_contain_truth(n_groups, k, seed):
    rng = np.random.default_rng(seed)
    n = n_groups * k
    x = rng.permutation(n * 3).reshape(n, 3).astype(float)  # distinct values
    y = np.empty_like(x)
    for j in range(3):
        order = np.argsort(x[:, j])
        groups = order.reshape(n_groups, k)
        y[groups, j] = x[groups, j].mean(axis=1, keepdims=True)
    assume(all(np.ptp(y[:, j]) > 0 for j in range(3)))  # a constant column is refused
    cols = ["a", "b", "c"]
    res = microaggregation_attack(pd.DataFrame(x, columns=cols), pd.DataFrame(y, columns=cols),
                                  cols, k=k)  # fmt: skip
    assert res.contains_true == 1.0
    assert (res.set_sizes >= 1).all() and (res.set_sizes <= 2 * k).all()


def test_ten_thousand_records_vectorized():
    rng = np.random.default_rng(0)
    n = 10_000
    x = rng.normal(size=(n, 4))
    y = np.column_stack([rank_swap(x[:, j], rng, 50) for j in range(4)])
    cols = list("abcd")
    res = rank_swap_attack(pd.DataFrame(x, columns=cols), pd.DataFrame(y, columns=cols),
                           cols, p_percent=0.5)  # fmt: skip
    assert res.parameter["window"] == 50
    assert res.contains_true == 1.0
    assert res.indptr[-1] == res.set_sizes.sum()


def test_transparency_input_errors():
    with pytest.raises(SdcInputError, match="exactly one"):
        rank_swap_attack(ORIGINAL, PROTECTED, COLS)
    with pytest.raises(SdcInputError, match="exactly one"):
        rank_swap_attack(ORIGINAL, PROTECTED, COLS, p_percent=1, window=2)
    with pytest.raises(SdcInputError, match="window"):
        rank_swap_attack(ORIGINAL, PROTECTED, COLS, window=-1)
    with pytest.raises(DataError, match="intruder file column 'v9' not in protected file"):
        rank_swap_attack(ORIGINAL.assign(v9=1.0), PROTECTED, ["v1", "v9"], window=2)
    with pytest.raises(DataError, match="rows"):
        rank_swap_attack(ORIGINAL, PROTECTED.iloc[:5], COLS, window=2)
    with pytest.raises(DataError, match="constant"):
        rank_swap_attack(ORIGINAL.assign(z=1.0), PROTECTED.assign(z=1.0), ["v1", "z"], window=2)


def test_microaggregation_attack_with_a_tie_across_a_cluster_boundary():
    """Original 0,0,0,0,1,2 with k=3: the optimal clusters are {0,0,0} -> 0 and {0,1,2} -> 1, so
    one of the tied zeros (record 2 here) is published as 1. The rule "x = c_g -> cluster g
    only" would exclude record 2 from its own set (B = {0, 1, 3}); for a tied x the clusters
    with centroid just below and just above x are allowed too: B = [0, 1] = every record."""
    x = pd.DataFrame({"a": [0.0, 0, 0, 0, 1, 2]})
    y = pd.DataFrame({"a": [0.0, 0, 1, 0, 1, 1]})
    res = microaggregation_attack(x, y, ["a"], k=3)
    assert [res.candidates(i).tolist() for i in range(6)] == [
        [0, 1, 2, 3, 4, 5], [0, 1, 2, 3, 4, 5], [0, 1, 2, 3, 4, 5], [0, 1, 2, 3, 4, 5],
        [2, 4, 5], [2, 4, 5],
    ]  # fmt: skip
    assert res.contains_true == 1.0 and res.n_empty == 0


@settings(max_examples=25, deadline=None)
@given(n_groups=st.integers(2, 15), k=st.integers(2, 5), seed=st.integers(0, 10_000))
def test_microaggregation_sets_contain_truth_with_ties(n_groups, k, seed):
    """Few distinct values (many ties), tied values ordered at random before grouping."""
    rng = np.random.default_rng(seed)
    n = n_groups * k
    x = rng.integers(0, max(2, n // 3), size=(n, 3)).astype(float)
    y = np.empty_like(x)
    for j in range(3):
        order = np.lexsort((rng.random(n), x[:, j]))
        groups = order.reshape(n_groups, k)
        y[groups, j] = x[groups, j].mean(axis=1, keepdims=True)
    assume(all(np.ptp(y[:, j]) > 0 for j in range(3)))  # a constant column is refused
    cols = ["a", "b", "c"]
    res = microaggregation_attack(pd.DataFrame(x, columns=cols), pd.DataFrame(y, columns=cols),
                                  cols, k=k)  # fmt: skip
    assert res.contains_true == 1.0
