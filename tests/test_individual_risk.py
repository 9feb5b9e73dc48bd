"""Individual (Benedetti-Franconi) and household risk against sdcMicro and closed forms."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.core.encoding import encode
from sdckit.errors import DataError
from sdckit.risk.individual import household_risk, individual_risk


def _codes(df: pd.DataFrame) -> np.ndarray:
    return np.column_stack([encode(df[c]).codes for c in df.columns])


# sdcMicro tests/testthat/test_indivRisk.R, "data frame with weight, method = approx" (without
# missing values): keys A, B, C and weights of 8 records; published rk printed to 8 digits.
SDCMICRO_A = [2, 3, 2, 2, 3, 3, 1, 2]
SDCMICRO_B = [3, 3, 3, 3, 3, 3, 4, 3]
SDCMICRO_C = [1, 3, 1, 2, 1, 1, 1, 1]
SDCMICRO_W = [18.0, 45.5, 39.0, 17.0, 92.0, 8.0, 123.5, 51.0]
SDCMICRO_RK = [
    0.01369863,
    0.08579129,
    0.01369863,
    0.17707583,
    0.01877883,
    0.01877883,
    0.03931625,
    0.01369863,
]


def test_reproduces_sdcmicro_indivrisk_published_values():
    keys = np.column_stack([SDCMICRO_A, SDCMICRO_B, SDCMICRO_C]).astype(np.int64)
    res = individual_risk(keys, np.array(SDCMICRO_W))
    np.testing.assert_allclose(res.risk, SDCMICRO_RK, rtol=1e-6, atol=5e-9)
    # records 1, 3, 8 share (2, 3, 1): f = 3, F = 18 + 39 + 51
    assert res.fk.tolist() == [3, 1, 3, 1, 2, 2, 1, 3]
    assert res.Fk[0] == pytest.approx(108.0)
    assert res.Fk[4] == pytest.approx(100.0)
    assert res.expected_reidentifications == pytest.approx(sum(SDCMICRO_RK), rel=1e-6)
    assert res.global_risk == pytest.approx(sum(SDCMICRO_RK) / 8, rel=1e-6)


def test_closed_forms_for_f_1_2_3():
    # groups: "s" single (F = 50), "p" pair (F = 10 + 30), "t" triple (F = 20 * 3)
    df = pd.DataFrame({"k": ["s", "p", "p", "t", "t", "t"]})
    w = np.array([50.0, 10.0, 30.0, 20.0, 20.0, 20.0])
    res = individual_risk(_codes(df), w, weight_column="w")
    p1, p2, p3 = 1 / 50, 2 / 40, 3 / 60
    r1 = p1 / (1 - p1) * math.log(1 / p1)
    r2 = p2 / (1 - p2) - (p2 / (1 - p2)) ** 2 * math.log(1 / p2)
    r3 = p3 / (3 - (1 - p3))
    np.testing.assert_allclose(res.risk, [r1, r2, r2, r3, r3, r3], rtol=1e-12)
    assert res.fk.tolist() == [1, 2, 2, 3, 3, 3]
    np.testing.assert_allclose(res.Fk, [50, 40, 40, 60, 60, 60])
    assert res.min == pytest.approx(r3)
    assert res.max == pytest.approx(r1)
    assert res.median == pytest.approx((r2 + r3) / 2)
    assert res.expected_reidentifications == pytest.approx(r1 + 2 * r2 + 3 * r3)
    assert res.to_dict() == {
        "min": res.min,
        "median": res.median,
        "max": res.max,
        "global_risk": res.global_risk,
        "expected_reidentifications": res.expected_reidentifications,
    }


def test_unit_weights_give_one_over_f():
    # sdcMicro: rk[fk == Fk] <- 1/fk
    df = pd.DataFrame({"a": list("abbcccc"), "b": ["x"] * 7})
    res = individual_risk(_codes(df), np.ones(7))
    np.testing.assert_array_equal(res.risk, [1, 0.5, 0.5, 0.25, 0.25, 0.25, 0.25])
    assert res.expected_reidentifications == pytest.approx(3.0)  # one per combination


@pytest.mark.parametrize("q", [1e-3, 0.049, 0.051, 0.2])
def test_stable_forms_match_closed_forms_away_from_p_equal_1(q):
    # F chosen so that 1 - p = q: stable evaluation (series below 0.05) equals the closed form
    for f in (1, 2, 3):
        F = f / (1 - q)
        keys = np.zeros((f, 1), dtype=np.int64)
        res = individual_risk(keys, np.full(f, F / f))
        p = f / F
        if f == 1:
            expected = p / (1 - p) * math.log(1 / p)
        elif f == 2:
            expected = p / (1 - p) - (p / (1 - p)) ** 2 * math.log(1 / p)
        else:
            expected = p / (f - (1 - p))
        assert res.risk[0] == pytest.approx(expected, rel=1e-8)


def test_weights_barely_above_one_tend_to_one_over_f():
    # the closed form for f = 2 cancels catastrophically here; the limit is 1/f
    for f in (1, 2, 3):
        res = individual_risk(np.zeros((f, 1), dtype=np.int64), np.full(f, 1 + 1e-12))
        assert res.risk[0] == pytest.approx(1 / f, rel=1e-9)


def test_weight_validation_names_column_and_row():
    keys = np.zeros((3, 1), dtype=np.int64)
    for bad, shown in ((0.0, "0.0"), (-2.0, "-2.0"), (np.nan, "nan"), (np.inf, "inf")):
        with pytest.raises(DataError, match=r"'wt'.*row 2.*" + shown):
            individual_risk(keys, np.array([1.0, bad, 3.0]), weight_column="wt")
    with pytest.raises(DataError, match="'wt'.*row 3"):
        individual_risk(keys, np.array(["1", "2", "x"], dtype=object), weight_column="wt")
    with pytest.raises(DataError, match="2 values but there are 3 records"):
        individual_risk(keys, np.array([1.0, 2.0]), weight_column="wt")


def test_key_code_validation():
    with pytest.raises(DataError, match="2-D"):
        individual_risk(np.zeros(3, dtype=np.int64), np.ones(3))
    with pytest.raises(DataError, match="integers"):
        individual_risk(np.zeros((3, 1)), np.ones(3))
    with pytest.raises(DataError, match="no records"):
        individual_risk(np.zeros((0, 2), dtype=np.int64), np.ones(0))


def test_household_risk_by_hand():
    r = np.array([0.1, 0.5, 0.2, 1.0, 0.3])
    hid = np.array(["A", "B", "A", "C", "C"], dtype=object)
    res = household_risk(r, hid)
    np.testing.assert_allclose(res.risk, [0.28, 0.5, 0.28, 1.0, 1.0], rtol=1e-14)
    assert res.n_households == 3
    assert res.expected_reidentifications == pytest.approx(0.28 * 2 + 0.5 + 2.0)
    assert res.global_risk == pytest.approx(3.06 / 5)
    assert res.to_dict()["n_households"] == 3


def test_household_risk_tiny_and_above_one():
    tiny = household_risk(np.full(3, 1e-20), np.zeros(3, dtype=np.int64))
    np.testing.assert_allclose(tiny.risk, 3e-20, rtol=1e-12)  # 1 - prod(1 - r) ~ sum r
    # weights below 1 can give r > 1; sdcMicro computes 1 - prod(1 - r) as it is
    over = household_risk(np.array([1.5, 0.5, 1.5, 1.5]), np.array([1, 1, 2, 2]))
    np.testing.assert_allclose(over.risk, [1.25, 1.25, 0.75, 0.75], rtol=1e-14)


def test_household_validation():
    with pytest.raises(DataError, match="'hh'.*row 2"):
        household_risk(np.array([0.1, 0.2]), np.array([1.0, np.nan]), household_column="hh")
    with pytest.raises(DataError, match="'hh' has 1 values"):
        household_risk(np.array([0.1, 0.2]), np.array([1]), household_column="hh")
    with pytest.raises(DataError, match="row 1"):
        household_risk(np.array([np.nan, 0.2]), np.array([1, 1]))


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 3), st.integers(0, 2), st.floats(1.0, 500.0)),
        min_size=1,
        max_size=40,
    ),
    st.randoms(use_true_random=False),
)
def test_properties(rows, rnd):
    keys = np.array([[a, b] for a, b, _ in rows], dtype=np.int64)
    w = np.array([x for _, _, x in rows])
    res = individual_risk(keys, w)
    # with weights >= 1 (F >= f), 0 < r <= 1/f (Franconi & Polettini's bounds)
    assert np.all(res.risk > 0)
    assert np.all(res.risk <= 1 / res.fk + 1e-12)
    assert res.expected_reidentifications == pytest.approx(res.risk.sum())
    order = list(range(len(rows)))
    rnd.shuffle(order)
    shuffled = individual_risk(keys[order], w[order])
    np.testing.assert_allclose(shuffled.risk, res.risk[order], rtol=1e-12)
    # household risk: at least the largest member risk, at most 1; singletons keep r
    hid = keys[:, 0]
    hh = household_risk(res.risk, hid)
    for h in np.unique(hid):
        members = hid == h
        assert hh.risk[members].min() >= res.risk[members].max() - 1e-12
        assert hh.risk[members].max() <= 1 + 1e-12
        if members.sum() == 1:
            assert hh.risk[members][0] == pytest.approx(res.risk[members][0], rel=1e-12)


TESTDATA_KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]


def test_sdcmicro_testdata_regression(shared_data):
    data = pd.read_csv(shared_data / "sdcmicro" / "sdcMicro_testdata.csv")
    res = individual_risk(
        _codes(data[TESTDATA_KEYS]),
        data["sampling_weight"].to_numpy(),
        weight_column="sampling_weight",
    )
    # independent computation with pandas groupby and the closed forms
    grouped = data.groupby(TESTDATA_KEYS)
    fk = grouped["sex"].transform("size").to_numpy()
    Fk = grouped["sampling_weight"].transform("sum").to_numpy()
    p = fk / Fk
    ref = np.where(
        fk == 1,
        p / (1 - p) * np.log(1 / p),
        np.where(fk == 2, p / (1 - p) - (p / (1 - p)) ** 2 * np.log(1 / p), p / (fk - (1 - p))),
    )
    np.testing.assert_allclose(res.risk, ref, rtol=1e-10)
    np.testing.assert_array_equal(res.fk, fk)
    # observations violating 2- / 3-anonymity (sdcMicro print: fk < 2, fk < 3)
    assert int((res.fk < 2).sum()) == 157
    assert int((res.fk < 3).sum()) == 281
    # pinned values of this implementation (no published sdcMicro output for these 7 keys)
    assert res.expected_reidentifications == pytest.approx(10.778298918734833, rel=1e-10)
    assert res.global_risk == pytest.approx(10.778298918734833 / 4580, rel=1e-10)
    hh = household_risk(res.risk, data["ori_hid"].to_numpy(), household_column="ori_hid")
    ref_hh = pd.Series(ref).groupby(data["ori_hid"]).transform(lambda x: 1 - np.prod(1 - x))
    np.testing.assert_allclose(hh.risk, ref_hh.to_numpy(), rtol=1e-10)
    assert hh.expected_reidentifications == pytest.approx(51.81292743596054, rel=1e-10)
