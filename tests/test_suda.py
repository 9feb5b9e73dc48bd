"""SUDA2 minimal sample uniques, SUDA and DIS-SUDA scores against hand counts and sdcMicro."""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from risk_support import near_unique_keys
from sdckit.core.encoding import encode
from sdckit.errors import ConfigError, DataError
from sdckit.risk.suda import suda2, suda_weights


def _codes(df: pd.DataFrame) -> np.ndarray:
    return np.column_stack([encode(df[c]).codes for c in df.columns])


# Hand example, 3 text keys. Value counts: A a4 b2 c1; B u4 v3; C 1:3 2:4.
#   r0, r1 (a,u,1): identical -> no MSU
#   r2 (a,v,2): MSU {A,B} (a,v)                          -> score 1! = 1
#   r3 (b,u,2): MSUs {A,B} (b,u), {A,C} (b,2)              -> 1 + 1 = 2
#   r4 (b,v,1): MSUs {A,B}, {A,C}, {B,C}                   -> 3
#   r5 (a,u,2): every pair occurs elsewhere; MSU {A,B,C}     -> 0! = 1
#   r6 (c,v,2): MSU {A} (c is unique); (v,2) also in r2     -> 2! = 2
HAND = pd.DataFrame(
    {
        "A": ["a", "a", "a", "b", "b", "a", "c"],
        "B": ["u", "u", "v", "u", "v", "u", "v"],
        "C": ["1", "1", "2", "2", "1", "2", "2"],
    }
)
HAND_SCORES = [0, 0, 1, 2, 3, 1, 2]


def test_hand_example_msus_and_scores():
    res = suda2(_codes(HAND))
    np.testing.assert_array_equal(res.score, HAND_SCORES)
    assert res.msu_count_by_size.tolist() == [1, 6, 1]
    assert res.msu_counts.tolist() == [
        [0, 0, 0],
        [0, 0, 0],
        [0, 1, 0],
        [0, 2, 0],
        [0, 3, 0],
        [0, 0, 1],
        [1, 0, 0],
    ]
    assert (res.n_sample_uniques, res.n_pair_records) == (5, 2)
    assert res.to_dict()["records_with_score"] == 5
    assert res.to_dict()["score_sum"] == 9.0


def test_hand_example_dis_scores():
    res = suda2(_codes(HAND), dis_fraction=0.01)
    # DIS = U f / (U f + P (1 - f)), U = 5, P = 2; Q = 1 + (8 - 3)/20; U/DIS - U = 198
    dis_global = 5 * 0.01 / (5 * 0.01 + 2 * 0.99)
    excess = 5 / dis_global - 5
    assert excess == pytest.approx(198.0)
    s = np.array([1.0, 2.0, 3.0, 1.0, 2.0])
    adjust = np.sum(s**-1.25)
    expected = 1 / (1 + excess / (s**1.25 * adjust))
    # sdcMicro evaluates DIS, Q and U/DIS - U in single precision
    np.testing.assert_allclose(res.dis_score[2:], expected, rtol=2e-6)
    np.testing.assert_array_equal(res.dis_score[:2], 0.0)
    assert res.to_dict()["dis_sum"] == pytest.approx(expected.sum(), rel=2e-6)


def test_text_coding_and_order_do_not_matter():
    relabelled = HAND.replace({"a": "zz", "c": "0", "u": "q", "1": "x", "2": "b"})
    np.testing.assert_array_equal(suda2(_codes(relabelled)).score, HAND_SCORES)
    cols = HAND[["C", "A", "B"]]
    np.testing.assert_array_equal(suda2(_codes(cols)).score, HAND_SCORES)


def test_missing_code_cannot_be_part_of_an_msu():
    codes = _codes(HAND)
    missing_a = int(codes[6, 0])  # treat r6's unique value "c" as the missing code of A
    res = suda2(codes, missing_codes=[missing_a, None, None])
    np.testing.assert_array_equal(res.score, [0, 0, 1, 2, 3, 1, 0])


def test_max_size_limits_the_search():
    res = suda2(_codes(HAND), max_size=2)
    np.testing.assert_array_equal(res.score, [0, 0, 1, 2, 3, 0, 2])
    assert res.msu_count_by_size.tolist() == [1, 6]


def test_suda_weights_are_factorials():
    assert suda_weights(7).tolist() == [720, 120, 24, 6, 2, 1, 1]


# Published sdcMicro examples (tests/testthat/test_suda2.R, original scores).
def test_sdcmicro_book_example():
    tab = pd.DataFrame(
        {
            "age": ["20s"] * 7 + ["60s"],
            "gender": ["male"] * 4 + ["female"] * 3 + ["male"],
            "income": ["50k+", "50k+"] + ["50k-"] * 6,
            "education": ["highschool"] * 4
            + ["university", "highschool", "middleschool", "university"],
        }
    )
    assert suda2(_codes(tab)).score.tolist() == [0, 0, 0, 0, 4, 2, 6, 8]


def test_sdcmicro_guideline_example():
    tab = pd.DataFrame(
        {
            "Residence": ["Urban"] * 4 + ["Rural"] + ["Urban"] * 5,
            "Gender": [
                "Female",
                "Female",
                "Female",
                "Male",
                "Female",
                "Male",
                "Female",
                "Male",
                "Female",
                "Female",
            ],
            "Education": [
                "Secondary incomplete",
                "Secondary incomplete",
                "Primary incomplete",
                "Secondary complete",
                "Secondary complete",
                "Secondary complete",
                "Primary complete",
                "Post-secondary",
                "Secondary incomplete",
                "Secondary incomplete",
            ],
            "Labor": [
                "Employed",
                "Employed",
                "Non-LF",
                "Employed",
                "Unemployed",
                "Employed",
                "Non-LF",
                "Unemployed",
                "Non-LF",
                "Non-LF",
            ],
        }
    )
    assert suda2(_codes(tab)).score.tolist() == [0, 0, 6, 0, 12, 0, 6, 10, 0, 0]


def test_sdcmicro_issue_275_example():
    # MSUs by hand: a2 (r0); b3, c6 (r1); (a1, b0), (a1, c0) (r2); weights 2! and 1!
    tab = pd.DataFrame({"a": [2, 1, 1], "b": [0, 3, 0], "c": [0, 6, 0]})
    res = suda2(_codes(tab))
    assert res.score.tolist() == [2, 4, 2]
    assert res.msu_counts.tolist() == [[1, 0, 0], [2, 0, 0], [0, 2, 0]]


def test_sdcmicro_testdata2_published_scores(shared_data):
    data = pd.read_csv(shared_data / "sdcmicro" / "sdcMicro_testdata2.csv")
    five = suda2(_codes(data[["urbrur", "roof", "walls", "water", "sex"]]))
    assert five.score[0] == 2
    seven = suda2(_codes(data[["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]]))
    assert seven.score[0] == 180


def test_sdcmicro_testdata_regression(shared_data):
    data = pd.read_csv(shared_data / "sdcmicro" / "sdcMicro_testdata.csv")
    keys = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
    res = suda2(_codes(data[keys]))
    fk = data.groupby(keys)["sex"].transform("size").to_numpy()
    np.testing.assert_array_equal(res.score > 0, fk == 1)  # scored records = sample uniques
    assert res.n_sample_uniques == 157
    assert res.n_pair_records == int((fk == 2).sum())
    # pinned values of this implementation (no published sdcMicro output for this data)
    assert res.msu_count_by_size.tolist() == [1, 11, 94, 86, 35, 7, 1]
    assert res.to_dict()["score_sum"] == 4890.0
    assert res.to_dict()["dis_sum"] == pytest.approx(9.831090921275111, rel=1e-9)


def _brute_force(rows: list[tuple[int, ...]], missing: int | None = None) -> list[list[int]]:
    """MSU counts by size per record, straight from the definition."""
    m = len(rows[0])
    out = []
    for r in rows:
        counts = [0] * m
        unique_sets = []
        for k in range(1, m + 1):
            for subset in combinations(range(m), k):
                matches = sum(all(o[j] == r[j] for j in subset) for o in rows)
                if matches == 1:
                    unique_sets.append(set(subset))
                    minimal = not any(u < set(subset) for u in unique_sets)
                    if minimal and not any(r[j] == missing for j in subset):
                        counts[k - 1] += 1
        out.append(counts)
    return out


#: rows of 1 to 4 key variables with codes 0-2 (code 2 the missing one where asked)
_KEY_ROWS = st.integers(1, 4).flatmap(
    lambda m: st.lists(st.tuples(*[st.integers(0, 2)] * m), min_size=1, max_size=12)
)


@settings(max_examples=80, deadline=None)
@given(_KEY_ROWS, st.booleans())
def test_matches_brute_force_definition(rows, with_missing):
    codes = np.array(rows, dtype=np.int64)
    m = codes.shape[1]
    missing = 2 if with_missing else None
    res = suda2(codes, missing_codes=[missing] * m if with_missing else None)
    expected = np.array(_brute_force(rows, missing))
    np.testing.assert_array_equal(res.msu_counts, expected)
    weights = np.array([math.factorial(m - k) for k in range(1, m + 1)], dtype=float)
    np.testing.assert_array_equal(res.score, expected @ weights)
    assert np.all((res.dis_score >= 0) & (res.dis_score <= 1))
    assert np.all((res.dis_score > 0) == (res.score > 0))
    # the column order of the key variables does not matter
    reversed_cols = suda2(codes[:, ::-1], missing_codes=[missing] * m if with_missing else None)
    np.testing.assert_array_equal(reversed_cols.score, res.score)


def test_parameter_validation():
    codes = _codes(HAND)
    for bad in (0, 1, -0.5, 1.5):
        with pytest.raises(ConfigError, match="dis_fraction"):
            suda2(codes, dis_fraction=bad)
    for bad in (0, 4):
        with pytest.raises(ConfigError, match="max_size"):
            suda2(codes, max_size=bad)
    with pytest.raises(ConfigError, match="missing_codes has 1 entries"):
        suda2(codes, missing_codes=[0])
    with pytest.raises(DataError, match="integers"):
        suda2(codes.astype(float))
    with pytest.raises(DataError, match="negative"):
        suda2(codes - 5)
    with pytest.raises(DataError, match="2-D"):
        suda2(codes[:, 0])


def test_too_many_subsets_is_a_config_error():
    wide = np.zeros((2, 40), dtype=np.int64)
    with pytest.raises(ConfigError, match="max_size"):
        suda2(wide)
    assert suda2(wide, max_size=2).score.tolist() == [0, 0]  # duplicates: no MSUs


def test_high_cardinality_matches_pandas_reference():
    # large value ranges take the sort-based grouping path; reference: pandas group sizes
    rng = np.random.default_rng(7)
    frame = pd.DataFrame(
        {
            "a": rng.integers(0, 300, 700),
            "b": rng.integers(0, 400, 700),
            "c": rng.integers(0, 3, 700),
        }
    )
    res = suda2(frame.to_numpy().astype(np.int64))
    cols = list(frame.columns)
    unique = {}
    expected = np.zeros((len(frame), 3), dtype=np.int64)
    for k in (1, 2, 3):
        for subset in combinations(cols, k):
            size = frame.groupby(list(subset))["a"].transform("size").to_numpy()
            unique[subset] = size == 1
            minimal = np.ones(len(frame), dtype=bool)
            for drop in subset if k > 1 else ():
                minimal &= ~unique[tuple(c for c in subset if c != drop)]
            expected[:, k - 1] += unique[subset] & minimal
    np.testing.assert_array_equal(res.msu_counts, expected)


def test_adult_regression(shared_data):
    adult = pd.read_csv(shared_data / "arx" / "adult.csv", sep=";")
    res = suda2(_codes(adult))
    fk = adult.groupby(list(adult.columns))["sex"].transform("size").to_numpy()
    np.testing.assert_array_equal(res.score > 0, fk == 1)
    # pinned values of this implementation (30,162 x 9 keys)
    assert res.msu_count_by_size.tolist() == [2, 1204, 14890, 26029, 15983, 4172, 498, 31, 0]
    assert res.to_dict()["score_sum"] == 20402731.0


def _pandas_msu_counts(frame: pd.DataFrame) -> np.ndarray:
    """MSU counts by size from pandas group sizes of every key subset (independent)."""
    cols = list(frame.columns)
    unique: dict[tuple[str, ...], np.ndarray] = {}
    out = np.zeros((len(frame), len(cols)), dtype=np.int64)
    for k in range(1, len(cols) + 1):
        for subset in combinations(cols, k):
            size = frame.groupby(list(subset))[cols[0]].transform("size").to_numpy()
            unique[subset] = size == 1
            minimal = np.ones(len(frame), dtype=bool)
            for drop in subset if k > 1 else ():
                minimal &= ~unique[tuple(c for c in subset if c != drop)]
            out[:, k - 1] = out[:, k - 1] + (unique[subset] & minimal)
    return out


@pytest.mark.parametrize("kernel", [False, True], ids=["numpy", "numba"])
def test_near_unique_equals_reference_and_pinned_values(kernel, monkeypatch):
    # the subset walk skips records already unique on a parent; the numba kernel groups
    # from KERNEL_ROWS records on: both must give the definition's MSUs exactly
    import sdckit.risk.subsets as subsets

    monkeypatch.setattr(subsets, "KERNEL_ROWS", 0 if kernel else 10**9)
    frame = near_unique_keys()
    res = suda2(_codes(frame))
    np.testing.assert_array_equal(res.msu_counts, _pandas_msu_counts(frame))
    # the values of the level-wise implementation this walk replaced (sdckit ce1818a)
    assert res.msu_count_by_size.tolist() == [115, 4778, 6854, 167, 0]
    assert res.n_sample_uniques == 2996
    summary = res.to_dict()
    assert summary["records_with_score"] == 2996
    assert summary["score_sum"] == 45303.0
    assert summary["dis_sum"] == pytest.approx(2654.199409726342, rel=1e-12)
    # frequency-set form (distinct rows with counts) gives the same record scores
    keys, counts = np.unique(_codes(frame), axis=0, return_counts=True)
    by_class = suda2(keys, counts=counts)
    assert by_class.to_dict() == pytest.approx(summary, rel=1e-12)


@settings(max_examples=40, deadline=None)
@given(_KEY_ROWS, st.booleans())
def test_kernel_matches_brute_force_definition(rows, with_missing):
    import sdckit.risk.subsets as subsets

    codes = np.array(rows, dtype=np.int64)
    m = codes.shape[1]
    missing = 2 if with_missing else None
    saved, subsets.KERNEL_ROWS = subsets.KERNEL_ROWS, 0
    try:
        res = suda2(codes, missing_codes=[missing] * m if with_missing else None)
    finally:
        subsets.KERNEL_ROWS = saved
    np.testing.assert_array_equal(res.msu_counts, np.array(_brute_force(rows, missing)))
