"""Sampling, global recoding, grouping of categories, top/bottom coding."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import DataError
from sdckit.masking.recoding import global_recoding, group_categories, sampling, top_bottom_coding

# --------------------------------------------------------------------------- sampling


def test_simple_random_sample_size_rows_and_seed():
    df = pd.DataFrame({"x": range(10)}, index=[f"r{i}" for i in range(10)])
    res = sampling(df, fraction=0.5, seed=1)
    assert len(res.data) == 5
    assert set(res.data.index) <= set(df.index)
    assert list(res.data.index) == sorted(res.data.index, key=lambda s: int(s[1:]))
    assert res.details["fraction"] == 0.5
    pd.testing.assert_frame_equal(res.data, sampling(df, fraction=0.5, seed=1).data)
    assert len(sampling(df, n=3, seed=2).data) == 3


def test_stratified_allocation_by_largest_remainder_hand_example():
    # strata sizes 5, 3, 2; fraction 0.5 -> 5 records; quotas 2.5, 1.5, 1.0 -> 3, 1, 1
    df = pd.DataFrame({"s": list("aaaaabbbcc"), "x": range(10)})
    res = sampling(df, fraction=0.5, strata="s", seed=0)
    counts = res.data["s"].value_counts().to_dict()
    assert counts == {"a": 3, "b": 1, "c": 1}
    st_ = res.details["strata"]
    assert [(d["stratum"], d["N"], d["n"]) for d in st_] == [
        ({"s": "a"}, 5, 3),
        ({"s": "b"}, 3, 1),
        ({"s": "c"}, 2, 1),
    ]
    assert [d["fraction"] for d in st_] == [0.6, 1 / 3, 0.5]
    assert [d["weight"] for d in st_] == [5 / 3, 3.0, 2.0]


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(0, 3), min_size=1, max_size=60), st.floats(0.01, 1), st.integers(0, 10**6)
)
def test_stratified_sample_total_and_within_strata(strata, f, seed):
    df = pd.DataFrame({"s": strata})
    res = sampling(df, fraction=f, strata=["s"], seed=seed)
    assert len(res.data) == int(np.floor(f * len(df) + 0.5))
    N = df["s"].value_counts()
    for d in res.details["strata"]:
        quota = f * len(df) * N[d["stratum"]["s"]] / len(df)
        assert abs(d["n"] - quota) < 1 + 1e-9
        assert (res.data["s"] == d["stratum"]["s"]).sum() == d["n"]


def test_sample_errors():
    df = pd.DataFrame({"x": range(4)})
    with pytest.raises(DataError, match="exactly one"):
        sampling(df)
    with pytest.raises(DataError, match="exactly one"):
        sampling(df, fraction=0.5, n=2)
    with pytest.raises(DataError, match="fraction=0"):
        sampling(df, fraction=0)
    with pytest.raises(DataError, match="exceeds the 4 records"):
        sampling(df, n=5)
    with pytest.raises(DataError, match="not found"):
        sampling(df, fraction=0.5, strata="region")


# --------------------------------------------------------------------------- global recoding


def test_global_recode_breaks_hand_labels():
    df = pd.DataFrame({"age": [0, 17, 18, 64, 65, 120, None]})
    res = global_recoding(df, "age", method="breaks", breaks=[0, 18, 65, 120])
    got = res.data["age"].astype(object).tolist()
    assert got[:6] == ["[0, 18)", "[0, 18)", "[18, 65)", "[18, 65)", "[65, 120]", "[65, 120]"]
    assert pd.isna(got[6])
    assert res.data["age"].cat.ordered
    assert res.details["counts"] == [2, 2, 2]
    assert df["age"].iloc[0] == 0  # input untouched


def test_global_recode_methods_hand_breaks():
    df = pd.DataFrame({"x": [20, 25, 31, 40]})
    ew = global_recoding(df, "x", "equal_width", bins=2)
    assert ew.details["breaks"] == [20.0, 30.0, 40.0]
    assert ew.data["x"].astype(str).tolist() == ["[20, 30)", "[20, 30)", "[30, 40]", "[30, 40]"]
    ef = global_recoding(pd.DataFrame({"x": range(1, 9)}), "x", "equal_frequency", bins=4)
    assert ef.details["breaks"] == [1.0, 2.75, 4.5, 6.25, 8.0]
    assert ef.details["counts"] == [2, 2, 2, 2]
    lg = global_recoding(pd.DataFrame({"x": [1, 5, 10, 50, 100]}), "x", "log_equidistant", bins=2)
    assert lg.details["breaks"] == pytest.approx([1.0, 10.0, 100.0])
    assert lg.data["x"].astype(str).tolist() == [
        "[1, 10)",
        "[1, 10)",
        "[10, 100]",
        "[10, 100]",
        "[10, 100]",
    ]
    lab = global_recoding(df, "x", "equal_width", bins=2, labels=["young", "old"])
    assert lab.data["x"].astype(str).tolist() == ["young", "young", "old", "old"]
    assert lab.details["intervals"] == ["[20, 30)", "[30, 40]"]


def test_global_recode_errors_name_value_and_row():
    df = pd.DataFrame({"x": [5, 50, 500]})
    with pytest.raises(DataError, match="value 500 of column 'x' \\(row 3\\) lies outside"):
        global_recoding(df, "x", "breaks", breaks=[0, 100])
    with pytest.raises(DataError, match="strictly increasing"):
        global_recoding(df, "x", "breaks", breaks=[0, 100, 50])
    with pytest.raises(DataError, match="positive values.*-1"):
        global_recoding(pd.DataFrame({"x": [-1, 3]}), "x", "log_equidistant", bins=2)
    with pytest.raises(DataError, match="3 labels for 2 intervals"):
        global_recoding(df, "x", "equal_width", bins=2, labels=["a", "b", "c"])
    with pytest.raises(DataError, match="needs bins"):
        global_recoding(df, "x", "equal_width")
    with pytest.raises(DataError, match="unknown method"):
        global_recoding(df, "x", "quantiles", bins=2)
    with pytest.raises(DataError, match="non-numeric"):
        global_recoding(pd.DataFrame({"x": ["a"]}), "x", "equal_width", bins=2)


# --------------------------------------------------------------------------- grouping


def test_group_categories_both_mapping_forms():
    df = pd.DataFrame({"c": [1, 2, 3, None, 2]})
    r1 = group_categories(df, "c", {1: "low", 2: "low", 3: "high"})
    r2 = group_categories(df, "c", {"low": [1, 2], "high": ["3"]})
    assert r1.data["c"].tolist()[:3] == ["low", "low", "high"]
    assert pd.isna(r1.data["c"].iloc[3])
    pd.testing.assert_series_equal(r1.data["c"], r2.data["c"])
    assert r1.details["n_changed"] == 4


def test_group_categories_unmapped_are_listed():
    df = pd.DataFrame({"c": list("abcdc")})
    with pytest.raises(DataError, match="categories 'c', 'd' of column 'c' are not in the mapping"):
        group_categories(df, "c", {"a": "x", "b": "x"})
    with pytest.raises(DataError, match="mapped to both"):
        group_categories(df, "c", {"x": ["a"], "y": ["a", "b", "c", "d"]})


# --------------------------------------------------------------------------- top/bottom coding


def test_top_bottom_code_threshold_and_mean():
    df = pd.DataFrame({"x": [1, 2, 3, 100, 200]})
    t = top_bottom_coding(df, "x", top=50)
    assert t.data["x"].tolist() == [1, 2, 3, 50, 50]
    assert t.details["top"] == {"threshold": 50.0, "replacement": 50.0, "n_coded": 2}
    m = top_bottom_coding(df, "x", top=50, bottom=2, replace="mean")
    assert m.data["x"].tolist() == [1, 2, 3, 150, 150]  # nothing strictly below 2 but 1
    assert m.details["bottom"] == {"threshold": 2.0, "replacement": 1.0, "n_coded": 1}
    assert m.data["x"].sum() == df["x"].sum()
    q = top_bottom_coding(pd.DataFrame({"x": np.arange(101.0)}), "x", top_quantile=0.9)
    assert q.details["top"]["threshold"] == 90.0
    assert q.data["x"].max() == 90.0 and q.details["top"]["n_coded"] == 10


def test_top_bottom_code_errors():
    df = pd.DataFrame({"x": [1.0, 2.0]})
    with pytest.raises(DataError, match="at least one"):
        top_bottom_coding(df, "x")
    with pytest.raises(DataError, match="not both"):
        top_bottom_coding(df, "x", top=1, top_quantile=0.9)
    with pytest.raises(DataError, match="top_quantile=1.5"):
        top_bottom_coding(df, "x", top_quantile=1.5)
    with pytest.raises(DataError, match="exceeds the top"):
        top_bottom_coding(df, "x", top=1, bottom=2)
    with pytest.raises(DataError, match="replace"):
        top_bottom_coding(df, "x", top=1, replace="median")


def test_stratified_allocation_ties_are_exact():
    # quotas 1/3, 1/3, 7/3: the remainders are equal (1/3 each); in floating point 7/3 - 2
    # exceeds 1/3 and the largest stratum took the extra record (n = 3 for a quota of 1.97)
    df = pd.DataFrame({"s": [0, 1, 2, 2, 2, 2, 2, 2, 2]})
    res = sampling(df, fraction=0.28125, strata=["s"], seed=0)
    assert [d["n"] for d in res.details["strata"]] == [1, 0, 2]


def test_group_categories_names_at_most_ten_unmapped_and_counts_the_rest():
    from sdckit.masking.stats import PandasStats

    df = pd.DataFrame({"c": [f"v{i % 25}" for i in range(60)] + [None]})
    stats = PandasStats(df)
    assert stats.values_outside("c", {"v0", "v2"}, 3) == (23, ["v1", "v3", "v4"])
    assert stats.values_outside("c", {f"v{i}" for i in range(25)}, 3) == (0, [])
    with pytest.raises(DataError) as ei:
        group_categories(df, "c", {"v0": "x", "v1": "x"})
    assert str(ei.value) == (
        "group_categories: categories 'v2', 'v3', 'v4', 'v5', 'v6', 'v7', 'v8', 'v9', 'v10', "
        "'v11', ... (+13 more) of column 'c' are not in the mapping; map every category (to "
        "itself to keep it)"
    )
    with pytest.raises(DataError, match="^group_categories: category 'v24' of column 'c' is not"):
        group_categories(df, "c", {f"v{i}": "x" for i in range(24)})
