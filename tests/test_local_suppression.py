"""Local suppression to k-anonymity with sdcMicro's "missing matches everything" rule."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import DataError
from sdckit.masking.suppression import local_suppression, wildcard_frequencies


def brute_fk(df: pd.DataFrame, keys) -> np.ndarray:
    """O(n^2) reference: records agreeing on every key where both are non-missing."""
    vals = df[list(keys)].astype(object).where(df[list(keys)].notna(), None).to_numpy()
    n = len(vals)
    out = np.zeros(n, dtype=int)
    for i in range(n):
        for j in range(n):
            out[i] += all(
                a is None or b is None or a == b for a, b in zip(vals[i], vals[j], strict=True)
            )
    return out


def test_wildcard_frequencies_hand_example():
    df = pd.DataFrame({"a": [1, 1, 2, None], "b": ["x", None, "x", "y"]})
    # row0 (1,x): rows 0,1 ; row1 (1,NA): rows 0,1 ; row2 (2,x): row 2 ; row3 (NA,y): row 3
    # row1 vs row3: b is missing in row1, a is missing in row3 -> they match as well
    assert wildcard_frequencies(df, ["a", "b"]).tolist() == [2, 3, 1, 2]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from([0, 1, 2, None]),
            st.sampled_from(["p", "q", None]),
            st.sampled_from([7, 8, None]),
        ),
        min_size=1,
        max_size=25,
    )
)
def test_wildcard_frequencies_match_brute_force(rows):
    df = pd.DataFrame(rows, columns=["a", "b", "c"])
    assert wildcard_frequencies(df, ["a", "b", "c"]).tolist() == brute_fk(df, "abc").tolist()


def test_francdat_sdcmicro_example(shared_data):
    # sdcMicro: localSuppression(francdat, keyVar = c(4, 5, 6)), k = 2.
    # Records 4 (3,1,5), 5 (3,1,4), 6 (3,1,1), 7 (2,1,5) are unique. Default importance:
    # Key2 and Key3 have 2 categories, Key4 has 3 -> Key4 is suppressed first. Record 4 loses
    # Key4 (its nearest records 5, 6 differ there); then 5 and 6 match (3,1,NA): skipped;
    # record 7 loses Key4 too (nearest records 2, 3 (2,1,1) differ there).
    fr = pd.read_csv(shared_data / "sdcmicro" / "sdcMicro_francdat.csv")
    res = local_suppression(fr, ["Key2", "Key3", "Key4"], k=2)
    assert res.details["suppressions"] == {"Key2": 0, "Key3": 0, "Key4": 2}
    assert res.details["importance"] == {"Key2": 1, "Key3": 2, "Key4": 3}
    assert res.data["Key4"].isna().tolist() == [
        False,
        False,
        False,
        True,
        False,
        False,
        True,
        False,
    ]
    assert (brute_fk(res.data, ["Key2", "Key3", "Key4"]) >= 2).all()
    pd.testing.assert_frame_equal(res.data.drop(columns="Key4"), fr.drop(columns="Key4"))


@pytest.mark.parametrize(
    "importance,expected",
    [
        ([1, 2], {"a": 0, "b": 1}),  # b least important: suppress b of (b, x); (b, y) then matches
        ([2, 1], {"a": 1, "b": 1}),  # a least important: (NA, x), then b of (b, y)
    ],
)
def test_importance_decides_which_key_is_suppressed(importance, expected):
    df = pd.DataFrame({"a": ["a", "a", "b", "b"], "b": ["x", "x", "x", "y"]})
    res = local_suppression(df, ["a", "b"], k=2, importance=importance)
    assert res.details["suppressions"] == expected
    assert (brute_fk(res.data, "ab") >= 2).all()
    by_dict = local_suppression(
        df, ["a", "b"], k=2, importance=dict(zip("ab", importance, strict=True))
    )
    pd.testing.assert_frame_equal(res.data, by_dict.data)


def test_integer_keys_become_nullable_and_other_columns_stay():
    df = pd.DataFrame({"k1": [1, 1, 2], "k2": [5, 5, 5], "v": [0.5, 1.5, 2.5]})
    res = local_suppression(df, ["k1", "k2"], k=2)
    assert str(res.data["k1"].dtype) == "Int64"
    assert res.data["k1"].isna().tolist() == [False, False, True]
    assert res.data["v"].tolist() == [0.5, 1.5, 2.5]
    assert df["k1"].tolist() == [1, 1, 2]


keyrows = st.lists(
    st.tuples(
        st.integers(0, 3),
        st.sampled_from("xyz"),
        st.integers(0, 2),
        st.sampled_from(["u", "v", None]),
    ),
    min_size=2,
    max_size=40,
)


@settings(max_examples=50, deadline=None)
@given(keyrows, st.integers(1, 4))
def test_result_is_k_anonymous_and_only_suppresses(rows, k):
    df = pd.DataFrame(rows, columns=["a", "b", "c", "d"])
    k = min(k, len(df))
    res = local_suppression(df, ["a", "b", "c", "d"], k=k)
    out = res.data
    assert (brute_fk(out, "abcd") >= k).all()
    total = 0
    for c in "abcd":
        before, after = df[c], out[c]
        kept = after.notna()
        assert (after[kept].astype(object) == before[kept].astype(object)).all()
        assert not (before.isna() & after.notna()).any()
        added = int((after.isna() & before.notna()).sum())
        assert res.details["suppressions"][c] == added
        total += added
    assert res.details["total_suppressions"] == total


@settings(max_examples=30, deadline=None)
@given(keyrows, st.integers(1, 3), st.integers(1, 3))
def test_combinations_make_every_small_subset_k_anonymous(rows, k, m):
    df = pd.DataFrame(rows, columns=["a", "b", "c", "d"])
    k = min(k, len(df))
    res = local_suppression(df, list("abcd"), k=k, combinations_up_to=m)
    for size in range(1, m + 1):
        for sub in combinations("abcd", size):
            assert (brute_fk(res.data, sub) >= k).all()
    assert len(res.details["subsets"]) == len(list(combinations("abcd", m)))


def test_testdata_k3_is_reached(shared_data):
    td = pd.read_csv(shared_data / "sdcmicro" / "sdcMicro_testdata.csv")
    keys = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
    res = local_suppression(td, keys, k=3)
    assert wildcard_frequencies(res.data, keys).min() >= 3
    assert 0 < res.details["total_suppressions"] < 0.1 * len(td) * len(keys)
    assert wildcard_frequencies(td, keys).min() < 3


def test_input_errors():
    df = pd.DataFrame({"a": [1, 2, 3], "b": list("xyz")})
    with pytest.raises(DataError, match="k=4 exceeds the 3 records"):
        local_suppression(df, ["a", "b"], k=4)
    with pytest.raises(DataError, match="k=0"):
        local_suppression(df, ["a", "b"], k=0)
    with pytest.raises(DataError, match="importance has 1 entries for 2 keys"):
        local_suppression(df, ["a", "b"], importance=[1])
    with pytest.raises(DataError, match="importance of key 'b' is 5"):
        local_suppression(df, ["a", "b"], importance=[1, 5])
    with pytest.raises(DataError, match="combinations_up_to=3"):
        local_suppression(df, ["a", "b"], combinations_up_to=3)
    with pytest.raises(DataError, match="not found"):
        local_suppression(df, ["a", "zz"])
