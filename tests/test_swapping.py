"""Rank swapping (classic, p-buckets, p-distribution), data swapping, targeted record swapping."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import DataError
from sdckit.masking._swapping_kernels import (
    p_buckets_kernel,
    p_distribution_kernel,
    radix_argsort,
    rank_swap_kernel,
    stable_order,
    top,
)
from sdckit.masking.swapping import (
    data_swapping,
    rank_swap_p_buckets,
    rank_swap_p_distribution,
    rank_swapping,
    record_swapping,
)

RANK_METHODS = [rank_swapping, rank_swap_p_buckets, rank_swap_p_distribution]


# --------------------------------------------------------------------------- pure references
# Straightforward O(n * window) transcriptions of the published procedures, used as oracles.


def ref_rank_swap(n: int, w: int, u: np.ndarray) -> list[int]:
    perm, taken = list(range(n)), [False] * n
    for i in range(n):
        if taken[i]:
            continue
        taken[i] = True
        cand = [j for j in range(i + 1, min(n - 1, i + w) + 1) if not taken[j]]
        if cand:
            j = cand[min(int(u[i] * len(cand)), len(cand) - 1)]
            taken[j] = True
            perm[i], perm[j] = j, i
    return perm


def ref_p_buckets(n: int, b: int, u: np.ndarray) -> list[int]:
    K = -(-n // b)
    perm, taken = list(range(n)), [False] * n
    for i in range(n):
        if taken[i]:
            continue
        taken[i] = True
        r = i // b
        free = {
            s: [j for j in range(s * b, min(n, (s + 1) * b)) if not taken[j]] for s in range(r, K)
        }
        valid = [s for s in range(r, K) if free[s]]
        if not valid:
            continue
        valid = [s for s in valid if s - valid[0] <= 60]
        weights = [2.0 ** -(s - r + 1) for s in valid]  # Pr(B_s | B_r) before normalizing
        total = sum(weights)
        target, acc, chosen = u[i, 0] * total, 0.0, valid[-1]
        for s, wt in zip(valid, weights, strict=True):
            acc += wt
            if acc > target:
                chosen = s
                break
        j = free[chosen][min(int(u[i, 1] * len(free[chosen])), len(free[chosen]) - 1)]
        taken[j] = True
        perm[i], perm[j] = j, i
    return perm


def ref_p_distribution(n: int, offsets: np.ndarray) -> list[int]:
    perm, taken = list(range(n)), [False] * n
    for i in range(n):
        if taken[i]:
            continue
        taken[i] = True
        free = [j for j in range(i + 1, n) if not taken[j]]
        if not free:
            continue
        t = min(i + max(int(offsets[i]), 1), n - 1)
        after = [j for j in free if j >= t]
        j = after[0] if after else free[-1]
        taken[j] = True
        perm[i], perm[j] = j, i
    return perm


# --------------------------------------------------------------------------- rank swapping


def test_rank_swap_window_one_is_deterministic_hand_example():
    # n = 5, p = 20 % -> window of 1 rank: ranks (0,1) and (2,3) swap, rank 4 stays.
    # values by rank: 10 (row 0), 20 (row 3), 30 (row 2), 40 (row 4), 50 (row 1)
    df = pd.DataFrame({"x": [10, 50, 30, 20, 40], "y": list("abcde")})
    for seed in range(5):
        res = rank_swapping(df, "x", p_percent=20, seed=seed)
        assert res.data["x"].tolist() == [20, 50, 40, 10, 30]
        assert res.data["x"].dtype == df["x"].dtype
        assert res.data["y"].tolist() == list("abcde")
        assert res.details["x"] == {"n_values": 5, "n_swapped": 4, "window_ranks": 1}
    assert df["x"].tolist() == [10, 50, 30, 20, 40]  # input untouched


def test_rank_swap_two_values_full_window_always_swap():
    res = rank_swapping(pd.DataFrame({"x": [2.5, 1.0]}), "x", p_percent=100, seed=3)
    assert res.data["x"].tolist() == [1.0, 2.5]


def test_rank_swap_partner_is_uniform_over_window():
    # n = 3, p = 100: rank 0 swaps with rank 1 or 2, each with probability 1/2
    df = pd.DataFrame({"x": [0.0, 1.0, 2.0]})
    hits = sum(rank_swapping(df, "x", 100, seed=s).data["x"].iloc[0] == 1.0 for s in range(600))
    assert 0.43 < hits / 600 < 0.57


@pytest.mark.parametrize("n,w", [(1, 1), (2, 1), (10, 3), (150, 40), (300, 299), (257, 64)])
def test_rank_swap_kernel_matches_reference(n, w):
    u = np.random.default_rng(n + w).random(n)
    assert rank_swap_kernel(n, w, u, top(n)).tolist() == ref_rank_swap(n, w, u)


@pytest.mark.parametrize("n,b", [(1, 1), (7, 2), (64, 5), (130, 13), (200, 200)])
def test_p_buckets_kernel_matches_reference(n, b):
    u = np.random.default_rng(n * b).random((n, 2))
    assert p_buckets_kernel(n, b, u, top(n)).tolist() == ref_p_buckets(n, b, u)


@pytest.mark.parametrize("n", [1, 2, 9, 100, 260])
def test_p_distribution_kernel_matches_reference(n):
    rng = np.random.default_rng(n)
    off = np.rint(rng.normal(n / 10, n / 10, n)).astype(np.int64)
    assert p_distribution_kernel(n, off, top(n)).tolist() == ref_p_distribution(n, off)


def test_p_buckets_bucket_probabilities():
    # n = 4, p = 50 -> buckets {0,1}, {2,3}; rank 0 picks its own bucket with
    # (1/2) / (1/2 + 1/4) = 2/3, the next one with 1/3.
    df = pd.DataFrame({"x": [0.0, 1.0, 2.0, 3.0]})
    own = sum(rank_swap_p_buckets(df, "x", 50, seed=s).data["x"].iloc[0] == 1.0 for s in range(900))
    assert abs(own / 900 - 2 / 3) < 0.06


def test_p_distribution_offsets_centered_on_half_window():
    x = pd.DataFrame({"x": np.arange(20000, dtype=float)})
    res = rank_swap_p_distribution(x, "x", p=1.0, seed=7)  # P = 200 ranks
    moved = res.data["x"].to_numpy() - x["x"].to_numpy()
    up = moved[moved > 0]
    assert res.details["x"]["mean_offset_ranks"] == 100.0
    assert 80 < np.median(up) < 130
    assert np.abs(moved).max() < 200 * 5


def test_stable_order_matches_numpy_with_ties_signed_zero_and_inf():
    rng = np.random.default_rng(0)
    v = np.concatenate([[np.inf, -np.inf, -0.0, 0.0] * 500, np.round(rng.normal(size=70000), 1)])
    assert np.array_equal(stable_order(v), np.argsort(v, kind="stable"))
    keys = rng.integers(0, 2**63, 1000, dtype=np.uint64)
    assert np.array_equal(radix_argsort(keys), np.argsort(keys, kind="stable"))


values = st.lists(
    st.one_of(st.integers(-5, 5).map(float), st.floats(-1e6, 1e6), st.just(np.nan)),
    min_size=1,
    max_size=80,
)


@settings(max_examples=60, deadline=None)
@given(values, st.floats(0.5, 100), st.integers(0, 2**32 - 1))
def test_rank_methods_preserve_marginals_and_missing(vals, p, seed):
    df = pd.DataFrame({"x": vals, "z": range(len(vals))})
    x = df["x"].to_numpy()
    for method in RANK_METHODS:
        res = method(df, "x", p, seed=seed)
        y = res.data["x"].to_numpy()
        assert np.array_equal(np.isnan(y), np.isnan(x))
        assert np.array_equal(np.sort(y[~np.isnan(y)]), np.sort(x[~np.isnan(x)]))
        assert res.data["z"].tolist() == list(range(len(vals)))
        again = method(df, "x", p, seed=seed).data["x"].to_numpy()
        assert np.array_equal(again, y, equal_nan=True)


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 300), st.floats(0.5, 100), st.integers(0, 10**6))
def test_rank_swap_never_moves_beyond_window(n, p, seed):
    x = pd.DataFrame({"x": np.random.default_rng(seed).permutation(n).astype(float)})
    res = rank_swapping(x, "x", p, seed=seed)
    w = res.details["x"]["window_ranks"]
    assert w == int(np.floor(p * n / 100 + 1e-9))
    # values are the ranks themselves, so |new - old| is the rank distance
    assert np.abs(res.data["x"].to_numpy() - x["x"].to_numpy()).max() <= w


def test_rank_swap_columns_are_independent_and_seeded():
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"a": rng.normal(size=500), "b": rng.normal(size=500)})
    r1 = rank_swapping(df, ["a", "b"], 10, seed=42)
    r2 = rank_swapping(df, ["a", "b"], 10, seed=42)
    r3 = rank_swapping(df, ["a", "b"], 10, seed=43)
    pd.testing.assert_frame_equal(r1.data, r2.data)
    assert not r1.data.equals(r3.data)
    assert r1.record()["parameters"] == {"columns": ["a", "b"], "p_percent": 10.0}


@pytest.mark.parametrize("bad", [0, -1, 100.5, "five", None])
def test_rank_swap_rejects_p_outside_percent_range(bad):
    with pytest.raises(DataError, match="percentage"):
        rank_swapping(pd.DataFrame({"x": [1.0, 2.0]}), "x", bad)


def test_rank_swap_non_numeric_column_is_named():
    df = pd.DataFrame({"x": [1.0, 2.0], "s": ["a", "b"]})
    with pytest.raises(DataError, match="'s'.*'a'.*row 1"):
        rank_swapping(df, ["x", "s"], 5)
    with pytest.raises(DataError, match="not found"):
        rank_swapping(df, ["nope"], 5)


# --------------------------------------------------------------------------- data swapping


def test_data_swap_rate_one_pairs_every_record_hand_counts():
    df = pd.DataFrame(
        {"g": ["a"] * 4 + ["b"] * 3, "v": [1, 2, 3, 4, 5, 6, 7], "w": list("pqrstuv")}
    )
    res = data_swapping(df, ["v", "w"], ["g"], rate=1.0, seed=0)
    # group a: 2 pairs, group b (3 records): 1 pair -> 3 pairs, 6 records
    assert res.details["n_pairs"] == 3
    assert res.details["n_records_swapped"] == 6
    assert res.details["n_records_changed"] == 6
    out = res.data
    # swapped together: the (v, w) pairs are kept intact
    assert sorted(zip(out["v"], out["w"], strict=True)) == sorted(
        zip(df["v"], df["w"], strict=True)
    )
    assert (out["g"] == df["g"]).all()
    assert sorted(out.loc[out.g == "a", "v"]) == [1, 2, 3, 4]
    assert (out.loc[out.g == "a", "v"].to_numpy() != [1, 2, 3, 4]).all()


def test_data_swap_rate_zero_changes_nothing():
    df = pd.DataFrame({"g": [1, 1, 2, 2], "v": ["x", "y", "z", "t"]})
    res = data_swapping(df, "v", "g", rate=0.0, seed=1)
    pd.testing.assert_frame_equal(res.data, df)
    assert res.details["n_pairs"] == 0


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(0, 2), st.sampled_from("abc"), st.integers(0, 3)),
        min_size=1,
        max_size=60,
    ),
    st.floats(0, 1),
    st.integers(0, 10**6),
)
def test_data_swap_preserves_crosstab_with_matching_variables(rows, rate, seed):
    df = pd.DataFrame(rows, columns=["m", "s1", "s2"])
    df["other"] = range(len(df))
    res = data_swapping(df, ["s1", "s2"], ["m"], rate=rate, seed=seed)
    before = df.value_counts(["m", "s1", "s2"]).sort_index()
    after = res.data.value_counts(["m", "s1", "s2"]).sort_index()
    pd.testing.assert_series_equal(before, after)
    assert res.data["other"].tolist() == list(range(len(df)))
    pd.testing.assert_frame_equal(res.data, data_swapping(df, ["s1", "s2"], ["m"], rate, seed).data)


@pytest.mark.parametrize("bad", [-0.1, 1.5, "x"])
def test_data_swap_rejects_rate(bad):
    with pytest.raises(DataError, match="rate"):
        data_swapping(pd.DataFrame({"a": [1], "b": [2]}), "a", "b", rate=bad)


def test_data_swap_rejects_overlap():
    with pytest.raises(DataError, match="both swapped and matched"):
        data_swapping(pd.DataFrame({"a": [1], "b": [2]}), ["a", "b"], "b")


# --------------------------------------------------------------------------- record swapping


def _households(rows):
    """rows: (hid, region, hsize, occ) per household -> one record per member."""
    recs = []
    for hid, region, hsize, occ in rows:
        for _ in range(hsize):
            recs.append({"hid": hid, "region": region, "hsize": hsize, "occ": occ})
    return pd.DataFrame(recs)


def test_record_swap_hand_example_risky_household_moves():
    # Region R1: h1 (occ a), h2 (occ a), h3 (occ rare, hsize 2) -> h3's (occ, region) count is
    # 2 < k=3 (its 2 members) -> h3 must be swapped; the only hsize-2 household in R2 is h5.
    df = _households(
        [
            ("h1", "R1", 3, "a"),
            ("h2", "R1", 1, "a"),
            ("h3", "R1", 2, "rare"),
            ("h4", "R2", 3, "a"),
            ("h5", "R2", 2, "b"),
            ("h6", "R2", 1, "b"),
            ("h7", "R2", 1, "a"),
        ]
    )
    res = record_swapping(
        df,
        "hid",
        similar=["hsize"],
        hierarchy=["region"],
        quasi_identifiers=["occ"],
        swap_rate=0.0,
        k_anonymity=3,
        seed=11,
    )
    region = res.data.groupby("hid")["region"].first().to_dict()
    # only h3 is risky: its count 2 < 3; (a, R1): 4, (a, R2): 4, (b, R2): 3
    assert res.details["risky_households_per_level"] == {"region": 1}
    assert region == {
        "h1": "R1",
        "h2": "R1",
        "h3": "R2",
        "h4": "R2",
        "h5": "R1",
        "h6": "R2",
        "h7": "R2",
    }
    assert res.details["n_swapped_households"] == 2
    assert res.details["n_swapped_records"] == 4
    assert res.details["n_without_donor"] == 0
    assert (res.data[["hid", "hsize", "occ"]] == df[["hid", "hsize", "occ"]]).all().all()


def test_record_swap_without_donor_leaves_household_and_reports_it():
    # h3 is risky but R2 has no household of size 2; (a, R2) has 3 records: not risky
    df = _households(
        [
            ("h1", "R1", 3, "a"),
            ("h2", "R1", 1, "a"),
            ("h3", "R1", 2, "rare"),
            ("h4", "R2", 1, "a"),
            ("h5", "R2", 1, "a"),
            ("h6", "R2", 1, "a"),
        ]
    )
    res = record_swapping(df, "hid", "hsize", "region", "occ", swap_rate=0.0, k_anonymity=3, seed=1)
    pd.testing.assert_frame_equal(res.data, df)
    assert res.details["n_without_donor"] == 1
    assert res.details["households_without_donor"] == ["h3"]


def _synthetic(nh=3000, seed=0):
    rng = np.random.default_rng(seed)
    hsize = rng.integers(1, 5, nh)
    hid = np.repeat(np.arange(nh), hsize)
    n = len(hid)
    nuts1 = np.repeat(rng.integers(1, 4, nh), hsize)
    nuts2 = nuts1 * 10 + np.repeat(rng.integers(1, 4, nh), hsize)
    return pd.DataFrame(
        {
            "hid": hid,
            "nuts1": nuts1,
            "nuts2": nuts2,
            "hsize": np.repeat(hsize, hsize),
            "age": rng.integers(0, 8, n),
            "nat": rng.choice(["x", "y", "z"], n, p=[0.9, 0.08, 0.02]),
        }
    )


def test_record_swap_hits_the_swap_rate_and_preserves_household_tables():
    df = _synthetic()
    res = record_swapping(
        df,
        "hid",
        ["hsize"],
        ["nuts1", "nuts2"],
        ["age", "nat"],
        swap_rate=0.1,
        k_anonymity=0,
        seed=5,
    )
    # k_anonymity = 0: no risky household; 3000 * 0.1 / 2 = 150 swaps exactly
    assert res.details["target_swaps"] == 150
    assert res.details["n_swapped_households"] == 300
    hh_before = df.groupby("hid").first()
    hh_after = res.data.groupby("hid").first()
    moved = (hh_before[["nuts1", "nuts2"]] != hh_after[["nuts1", "nuts2"]]).any(axis=1)
    assert moved.sum() == 300
    # swaps exchange whole geographies between households of equal size and different nuts2
    tab = ["nuts1", "nuts2", "hsize"]
    pd.testing.assert_series_equal(
        hh_before.value_counts(tab).sort_index(), hh_after.value_counts(tab).sort_index()
    )
    pd.testing.assert_series_equal(
        df.value_counts(["nuts2"]).sort_index(), res.data.value_counts(["nuts2"]).sort_index()
    )
    assert (res.data.groupby("hid")["nuts2"].nunique() == 1).all()
    again = record_swapping(
        df,
        "hid",
        ["hsize"],
        ["nuts1", "nuts2"],
        ["age", "nat"],
        swap_rate=0.1,
        k_anonymity=0,
        seed=5,
    )
    pd.testing.assert_frame_equal(res.data, again.data)


def test_record_swap_swaps_all_risky_households_with_donors():
    df = _synthetic(seed=3)
    res = record_swapping(
        df,
        "hid",
        ["hsize"],
        ["nuts1", "nuts2"],
        ["age", "nat"],
        swap_rate=0.02,
        k_anonymity=3,
        seed=2,
    )
    risky = sum(res.details["risky_households_per_level"].values())
    assert risky > 0
    hh_before = df.groupby("hid")["nuts2"].first()
    hh_after = res.data.groupby("hid")["nuts2"].first()
    # recompute risk independently: households with a member whose (age, nat, nuts1) or
    # (age, nat, nuts1, nuts2) count is below 3 must have moved (donors are plentiful)
    c1 = df.groupby(["age", "nat", "nuts1"])["hid"].transform("size")
    c2 = df.groupby(["age", "nat", "nuts1", "nuts2"])["hid"].transform("size")
    must = set(df.loc[(c1 < 3) | (c2 < 3), "hid"])
    assert len(must) == risky
    assert res.details["n_without_donor"] == 0
    assert all(hh_before[h] != hh_after[h] for h in must)


def test_record_swap_errors_name_the_problem():
    df = _households([("h1", "R1", 2, "a"), ("h2", "R2", 1, "a")])
    bad = df.copy()
    bad.loc[1, "region"] = "R2"
    with pytest.raises(DataError, match="'region' differs within household 'h1'"):
        record_swapping(bad, "hid", "hsize", "region", "occ")
    with pytest.raises(DataError, match="swap_rate"):
        record_swapping(df, "hid", "hsize", "region", "occ", swap_rate=2)
    with pytest.raises(DataError, match="k_anonymity"):
        record_swapping(df, "hid", "hsize", "region", "occ", k_anonymity=-1)
    with pytest.raises(DataError, match="not found"):
        record_swapping(df, "hid", "hsize", "county", "occ")
