"""Tests of sdckit.masking.microaggregation.

Exact checks: published MDAV information loss (Census, Tarragona, EIA), the V-MDAV worked
example, hand-computed small cases, identical partitions to plain reference implementations
written here from the published algorithm statements (same tie rule), optimality of the
univariate method against brute force over all partitions. Properties with hypothesis.
"""

from __future__ import annotations

import itertools
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from sdckit.errors import DataError
from sdckit.masking._mdav_kernels import mdav_labels
from sdckit.masking.microaggregation import (
    _gower_embedding,
    categorical_microaggregation,
    fuzzy_microaggregation,
    individual_ranking,
    individual_ranking_partition,
    information_loss,
    kanonymity_microaggregation,
    mdav,
    mdav_partition,
    optimal_univariate,
    optimal_univariate_partition,
    vmdav,
    vmdav_partition,
)

# --------------------------------------------------------------------------------------------
# plain reference implementations (slow, straight from the algorithm statements)
# --------------------------------------------------------------------------------------------


def _farthest(d: np.ndarray, ids: np.ndarray) -> int:
    """Record with the largest distance; ties: lowest row index."""
    return int(ids[d == d.max()].min())


def _group_around(dist, pivot: int, ids: np.ndarray, k: int) -> np.ndarray:
    """Pivot plus its k-1 nearest among ids, ranked by (distance, row index)."""
    others = ids[ids != pivot]
    d = dist(pivot, others)
    return np.concatenate(([pivot], others[np.lexsort((others, d))[: k - 1]]))


def ref_mdav(n: int, k: int, dist, dist_to_centroid) -> np.ndarray:
    """MDAV (Domingo-Ferrer & Torra 2005) with a pluggable distance.

    dist(i, ids) -> distances of records ids to record i; dist_to_centroid(ids) -> distances
    of ids to the centroid of ids. s is sought among records not in r's group.
    """
    labels = np.full(n, -1)
    rem = np.arange(n)
    g = 0
    while len(rem) >= 3 * k:
        r = _farthest(dist_to_centroid(rem), rem)
        grp = _group_around(dist, r, rem, k)
        labels[grp] = g
        rem = np.setdiff1d(rem, grp)
        s = _farthest(dist(r, rem), rem)
        grp = _group_around(dist, s, rem, k)
        labels[grp] = g + 1
        rem = np.setdiff1d(rem, grp)
        g += 2
    if len(rem) >= 2 * k:
        r = _farthest(dist_to_centroid(rem), rem)
        grp = _group_around(dist, r, rem, k)
        labels[grp] = g
        rem = np.setdiff1d(rem, grp)
        g += 1
    labels[rem] = g
    return labels


def ref_mdav_euclid(z: np.ndarray, k: int) -> np.ndarray:
    def dist(i, ids):
        return ((z[ids] - z[i]) ** 2).sum(axis=1)

    def dcen(ids):
        return ((z[ids] - z[ids].mean(axis=0)) ** 2).sum(axis=1)

    return ref_mdav(len(z), k, dist, dcen)


def ref_vmdav(z: np.ndarray, k: int, gamma: float) -> np.ndarray:
    """V-MDAV (Solanas & Martinez-Balleste 2006) as stated in vmdav_partition's docstring."""
    n = len(z)
    labels = np.full(n, -1)
    dc = ((z - z.mean(axis=0)) ** 2).sum(axis=1)
    un = np.arange(n)

    def dist(i, ids):
        return ((z[ids] - z[i]) ** 2).sum(axis=1)

    g = 0
    while len(un) >= 2 * k:
        e = _farthest(dc[un], un)
        members = list(_group_around(dist, e, un, k))
        un = np.setdiff1d(un, members)
        while len(members) < 2 * k - 1 and len(un):
            din = np.array([min(dist(m, [u])[0] for m in members) for u in un])
            emin = int(un[np.lexsort((un, din))[0]])
            others = un[un != emin]
            d_out = np.sqrt(dist(emin, others).min()) if len(others) else np.inf
            if not np.sqrt(din.min()) < gamma * d_out:
                break
            members.append(emin)
            un = others
        labels[members] = g
        g += 1
    if len(un) >= k:
        labels[un] = g
    else:
        for u in un:
            cents = [z[labels == h].mean(axis=0) for h in range(g)]
            d = [((z[u] - c) ** 2).sum() for c in cents]
            labels[u] = int(np.argmin(d))
    return labels


def canonical(labels: np.ndarray) -> list[tuple[int, ...]]:
    """Partition as a sorted list of sorted row tuples (label numbering ignored)."""
    groups: dict[int, list[int]] = {}
    for i, lab in enumerate(labels):
        groups.setdefault(int(lab), []).append(i)
    return sorted(tuple(v) for v in groups.values())


def sse(x: np.ndarray, labels: np.ndarray) -> float:
    x = x.reshape(len(x), -1)
    return float(
        sum(((x[labels == g] - x[labels == g].mean(axis=0)) ** 2).sum() for g in set(labels))
    )


def set_partitions(items: list[int]):
    """All set partitions of items (Bell-number many; only for tiny lists)."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for part in set_partitions(rest):
        for i in range(len(part)):
            yield part[:i] + [[first, *part[i]]] + part[i + 1 :]
        yield [[first], *part]


# --------------------------------------------------------------------------------------------
# MDAV
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "p", "k", "seed"), [(300, 2, 3, 0), (500, 3, 5, 1), (1000, 5, 3, 2), (600, 10, 4, 3)]
)
def test_mdav_identical_to_reference_random(n, p, k, seed):
    z = np.random.default_rng(seed).normal(size=(n, p))
    assert np.array_equal(mdav_partition(z, k), ref_mdav_euclid(z, k))


@pytest.mark.parametrize(("k", "seed"), [(2, 3), (3, 4), (4, 5)])
def test_mdav_identical_to_reference_with_ties(k, seed):
    # small integer grid: many exactly tied distances; sums are exact, so only the tie rule
    # decides, and both implementations must decide the same way
    z = np.random.default_rng(seed).integers(0, 4, size=(400, 2)).astype(float)
    assert np.array_equal(mdav_partition(z, k), ref_mdav_euclid(z, k))


@pytest.mark.parametrize(
    ("n", "p", "k", "seed", "grid"),
    [(3000, 4, 5, 7, False), (2600, 2, 3, 8, True), (2200, 10, 5, 9, False)],
)
def test_mdav_identical_to_reference_large(n, p, k, seed, grid):
    # from 2,048 records on, the record farthest from the centroid is sought in the outer
    # shell of a past full pass (triangle-inequality bound, mdav_labels); the partition must
    # still be the plain reference's, ties included (integer grid: exact sums, many ties)
    rng = np.random.default_rng(seed)
    z = rng.integers(0, 6, size=(n, p)).astype(float) if grid else rng.normal(size=(n, p))
    assert np.array_equal(mdav_partition(z, k), ref_mdav_euclid(z, k))


def test_mdav_l1_identical_to_reference_large():
    # the L1 (Gower) metric of categorical microaggregation through the outer-shell search:
    # multiples of 1/8, so every sum is exact and only the tie rule decides
    z = np.random.default_rng(10).integers(0, 9, size=(2500, 3)) / 8.0

    def dist(i, ids):
        return np.abs(z[ids] - z[i]).sum(axis=1)

    def dcen(ids):
        return np.abs(z[ids] - z[ids].mean(axis=0)).sum(axis=1)

    assert np.array_equal(mdav_labels(np.ascontiguousarray(z), 4, 1), ref_mdav(2500, 4, dist, dcen))


def test_mdav_hand_example_1d():
    # centroid 11.33; farthest is 22 -> {20,21,22}; farthest from 22 is 1 -> {1,2,3}; rest
    df = pd.DataFrame({"x": [1, 2, 3, 10, 11, 12, 20, 21, 22]})
    res = mdav(df, "x", k=3)
    assert res.data["x"].tolist() == [2, 2, 2, 11, 11, 11, 21, 21, 21]
    assert res.details["groups"][0]["group_size_counts"] == {"3": 3}
    assert res.details["n_groups"] == 3


def test_mdav_tie_rule_hand_example():
    # n = 2k: centroid 1; rows 0 and 1 tie as farthest -> row 0 (lower index); its nearest:
    # rows 2 and 3 tie at distance 1 -> row 2. Groups {0, 2} and {1, 3}.
    x = np.array([[0.0], [2.0], [1.0], [1.0]])
    assert canonical(mdav_partition(x, 2)) == [(0, 2), (1, 3)]
    res = mdav(pd.DataFrame({"x": x[:, 0]}), k=2, standardize=False)
    assert res.data["x"].tolist() == [0.5, 1.5, 0.5, 1.5]


def test_mdav_last_group_absorbs_remainder():
    x = np.arange(11, dtype=float)[:, None]
    sizes = sorted(np.bincount(mdav_partition(x, 3)))
    assert sizes == [3, 3, 5]


def test_mdav_median_centroid():
    df = pd.DataFrame({"x": [1, 2, 10, 50, 51, 60]})
    res = mdav(df, k=3, centroid="median")
    assert res.data["x"].tolist() == [2, 2, 2, 51, 51, 51]


def test_mdav_attribute_groups_aggregated_separately():
    df = pd.DataFrame(
        {
            "v1": [0, 1, 2, 10, 11, 12],
            "v2": [0, 2, 4, 20, 22, 24],
            "v3": [0, 10, 1, 11, 2, 12],
            "v4": [5, 15, 6, 16, 7, 17],
        }
    )
    res = mdav(df, k=3, groups=[["v1", "v2"], ["v3", "v4"]])
    assert res.data["v1"].tolist() == [1, 1, 1, 11, 11, 11]
    assert res.data["v2"].tolist() == [2, 2, 2, 22, 22, 22]
    assert res.data["v3"].tolist() == [1, 11, 1, 11, 1, 11]
    assert res.data["v4"].tolist() == [6, 16, 6, 16, 6, 16]
    assert res.parameters["groups"] == [["v1", "v2"], ["v3", "v4"]]
    assert [g["n_groups"] for g in res.details["groups"]] == [2, 2]
    json.dumps(res.record())


def test_mdav_does_not_modify_input_and_keeps_other_columns():
    df = pd.DataFrame({"a": [3, 1, 2, 8, 9, 7], "b": [1.0, 2, 3, 4, 5, 6], "s": list("uvwxyz")})
    before = df.copy()
    res = mdav(df, ["a", "b"], k=3)
    pd.testing.assert_frame_equal(df, before)
    assert res.data["s"].tolist() == list("uvwxyz")
    assert list(res.data.columns) == list(df.columns)


PUBLISHED = {
    "sdcMicro_CASCrefmicrodata.csv": [5.69, 7.49, 9.09, 14.16],
    "sdcMicro_Tarragona.csv": [16.93, 19.55, 22.46, 33.19],
    "EIA_11cols_benchmark.csv": [0.48, 0.67, 1.67, 3.84],
}


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_mdav_reproduces_published_information_loss(shared_data, name):
    # Domingo-Ferrer & Torra (2005) tables: MDAV on all columns jointly (EIA: the 11 columns
    # including UTILITYID; without it k=3 gives 0.59, not 0.48)
    df = pd.read_csv(shared_data / "sdcmicro" / name)
    got = []
    for k in (3, 4, 5, 10):
        res = mdav(df, k=k)
        il = information_loss(df, res.data)
        assert res.details["groups"][0]["information_loss"] == pytest.approx(il, rel=1e-12)
        got.append(round(il, 2))
    assert got == PUBLISHED[name]


# --------------------------------------------------------------------------------------------
# V-MDAV
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("n", "p", "k", "gamma", "seed"),
    [(300, 2, 3, 0.2, 0), (400, 3, 4, 1.1, 1), (250, 2, 3, 5.0, 2), (301, 1, 5, 0.2, 3)],
)
def test_vmdav_identical_to_reference(n, p, k, gamma, seed):
    z = np.random.default_rng(seed).normal(size=(n, p))
    assert np.array_equal(vmdav_partition(z, k, gamma), ref_vmdav(z, k, gamma))


def test_vmdav_worked_example_natural_groups():
    # Solanas & Martinez-Balleste (2006) example: 9 records in two natural clusters, k = 3.
    # MDAV's fixed size forces a scattered group; V-MDAV finds the two clusters (4 + 5).
    s = np.array(
        [
            (2.4, 3), (1.68, 4.9), (3.18, 5.54), (5.32, 3.6), (18.68, 11.49),
            (20.14, 9.56), (19.85, 10.33), (21.28, 10.9), (23, 11.5),
        ]
    )  # fmt: skip
    assert canonical(vmdav_partition(s, 3, 0.2)) == [(0, 1, 2, 3), (4, 5, 6, 7, 8)]
    assert canonical(mdav_partition(s, 3)) == [(0, 1, 2), (3, 4, 5), (6, 7, 8)]
    df = pd.DataFrame(s, columns=["a", "b"])
    assert sse(s, vmdav_partition(s, 3)) < sse(s, mdav_partition(s, 3))
    res = vmdav(df, k=3)
    assert res.details["groups"][0]["group_size_counts"] == {"4": 1, "5": 1}
    assert res.data["a"].iloc[0] == pytest.approx(np.mean(s[:4, 0]))


def test_vmdav_gamma_zero_gives_fixed_sizes():
    z = np.random.default_rng(7).normal(size=(100, 2))
    sizes = np.bincount(vmdav_partition(z, 4, 0.0))
    assert set(sizes[:-1]) == {4} and 4 <= sizes[-1] <= 7


# --------------------------------------------------------------------------------------------
# optimal univariate, individual ranking
# --------------------------------------------------------------------------------------------


def test_optimal_univariate_hand_example():
    df = pd.DataFrame({"x": [13, 1, 11, 2, 12, 3, 10]})
    res = optimal_univariate(df, "x", k=3)
    assert res.data["x"].tolist() == [11.5, 2, 11.5, 2, 11.5, 2, 11.5]
    assert res.details["group_sizes_in_value_order"] == [3, 4]
    assert res.details["sse"] == pytest.approx(2 + 5)


@pytest.mark.parametrize(("n", "k", "seed"), [(6, 2, 0), (7, 2, 1), (8, 3, 2), (9, 3, 3)])
def test_optimal_univariate_matches_brute_force(n, k, seed):
    rng = np.random.default_rng(seed)
    x = np.round(rng.exponential(size=n) * 10, 1)
    best = min(
        sum(float(((x[g] - x[g].mean()) ** 2).sum()) for g in part)
        for part in set_partitions(list(range(n)))
        if min(len(g) for g in part) >= k
    )
    labels = optimal_univariate_partition(x, k)
    assert sse(x, labels) == pytest.approx(best, abs=1e-9)
    # groups are runs of consecutive sorted values of k..2k-1
    sizes = np.bincount(labels)
    assert sizes.min() >= k and sizes.max() <= 2 * k - 1
    order = np.argsort(x, kind="stable")
    assert np.all(np.diff(labels[order]) >= 0)


def test_optimal_univariate_beats_or_equals_fixed_size():
    x = np.random.default_rng(11).lognormal(size=200)
    assert sse(x, optimal_univariate_partition(x, 3)) <= sse(x, individual_ranking_partition(x, 3))


def test_individual_ranking_hand_example():
    df = pd.DataFrame({"x": [5, 1, 4, 2, 3, 9, 7], "y": [1, 1, 1, 1, 1, 1, 2]})
    res = individual_ranking(df, ["x", "y"], k=3)
    assert res.data["x"].tolist() == [6.25, 2, 6.25, 2, 2, 6.25, 6.25]
    assert res.data["y"].tolist() == [1, 1, 1, 1.25, 1.25, 1.25, 1.25]
    assert res.details["groups"][0]["group_size_counts"] == {"3": 1, "4": 1}


# --------------------------------------------------------------------------------------------
# categorical (Gower) microaggregation, k-anonymity
# --------------------------------------------------------------------------------------------


def test_categorical_identical_to_reference_gower_mdav():
    # ordinal with 5 levels (steps of 1/4) and numeric with range 16: all Gower sums exact,
    # so the plain reference (Gower from its definition) must give the same partition
    rng = np.random.default_rng(5)
    n = 300
    levels = ["a", "b", "c", "d", "e"]
    df = pd.DataFrame(
        {
            "ord": rng.choice(levels, n),
            "num": np.r_[0, 16, rng.integers(0, 17, n - 2)].astype(float),
        }
    )
    rank = pd.Index(levels).get_indexer(df["ord"]) / 4.0
    num = df["num"].to_numpy() / 16.0

    def dist(i, ids):
        return np.abs(rank[ids] - rank[i]) + np.abs(num[ids] - num[i])

    def dcen(ids):
        return np.abs(rank[ids] - rank[ids].mean()) + np.abs(num[ids] - num[ids].mean())

    ref = ref_mdav(n, 3, dist, dcen)
    feats, _ = _gower_embedding(df, ["ord", "num"], {"ord": levels}, "test")
    assert np.array_equal(mdav_labels(feats, 3, 1), ref)
    res = categorical_microaggregation(df, k=3, order={"ord": levels})
    # the masked records reveal the partition: same representatives within a reference group
    for g in range(ref.max() + 1):
        rows = res.data[ref == g]
        assert rows["num"].nunique() == 1 and rows["ord"].nunique() == 1
        assert rows["num"].iloc[0] == pytest.approx(df["num"][ref == g].mean())
    assert res.details["n_groups"] == n // 3


def test_categorical_hand_example_mode_median_mean():
    df = pd.DataFrame(
        {
            "city": ["b", "a", "a", "b", "z", "z", "y", "z"],
            "edu": ["low", "mid", "low", "high", "high", "high", "mid", "high"],
            "inc": [10.0, 12, 11, 13, 90, 95, 91, 100],
        }
    )
    before = df.copy()
    res = categorical_microaggregation(
        df, ["city", "edu", "inc"], k=4, order={"edu": ["low", "mid", "high"]}
    )
    pd.testing.assert_frame_equal(df, before)
    # groups by Gower: {0,1,2,3} (inc 10..13, cities a/b) and {4,5,6,7}
    assert res.details["group_size_counts"] == {"4": 2}
    # mode tie a/b (2 each) -> first in sorted order "a"; lower median of low,mid,low,high -> low
    assert res.data["city"].tolist() == ["a"] * 4 + ["z"] * 4
    assert res.data["edu"].tolist() == ["low"] * 4 + ["high"] * 4
    assert res.data["inc"].tolist() == [11.5] * 4 + [94.0] * 4
    assert res.details["attribute_types"] == {"city": "nominal", "edu": "ordinal", "inc": "numeric"}


def test_gower_embedding_equals_gower_distance():
    rng = np.random.default_rng(2)
    df = pd.DataFrame(
        {
            "nom": rng.choice(["x", "y", "z", "w"], 50),
            "ord": rng.choice(["1", "2", "3"], 50),
            "num": rng.normal(size=50),
        }
    )
    feats, _ = _gower_embedding(df, ["nom", "ord", "num"], {"ord": ["1", "2", "3"]}, "t")
    rng_num = df["num"].max() - df["num"].min()
    for i, j in rng.integers(0, 50, size=(40, 2)):
        a, b = df.iloc[i], df.iloc[j]
        gower = (
            (a["nom"] != b["nom"])
            + abs(int(a["ord"]) - int(b["ord"])) / 2
            + abs(a["num"] - b["num"]) / rng_num
        ) / 3
        assert np.abs(feats[i] - feats[j]).sum() / 3 == pytest.approx(gower, abs=1e-12)
    # distance to the average record for a nominal attribute is 1 - share of the category
    onehot = feats[:, :4]
    share = df["nom"].value_counts(normalize=True)
    d = np.abs(onehot - onehot.mean(axis=0)).sum(axis=1)
    assert np.allclose(d, 1 - share[df["nom"]].to_numpy())


def test_kanonymity_microaggregation_numeric_and_mixed(shared_data):
    df = pd.read_csv(shared_data / "sdcmicro" / "sdcMicro_testdata.csv")
    for qis, k in [(["age", "income"], 3), (["age", "urbrur", "sex"], 5)]:
        res = kanonymity_microaggregation(df, qis, k=k)
        counts = res.data.groupby(qis).size()
        assert counts.min() >= k
        assert res.details["min_equivalence_class_size"] == counts.min()
    df2 = df.assign(region=np.where(df["urbrur"] == 1, "north", "south"))
    res = kanonymity_microaggregation(df2, ["region", "age", "income"], k=4)
    assert res.data.groupby(["region", "age", "income"]).size().min() >= 4
    assert res.parameters["via"] == "categorical_microaggregation"


# --------------------------------------------------------------------------------------------
# fuzzy microaggregation
# --------------------------------------------------------------------------------------------


def test_fuzzy_two_clear_clusters_returns_cluster_means():
    df = pd.DataFrame({"x": [0.0, 1, 2, 100, 101, 102], "y": [5.0, 6, 7, 50, 51, 52]})
    res = fuzzy_microaggregation(df, k=3, seed=1)
    assert res.details["n_clusters"] == 2
    assert np.allclose(res.data["x"], [1, 1, 1, 101, 101, 101], atol=1e-3)
    assert np.allclose(res.data["y"], [6, 6, 6, 51, 51, 51], atol=1e-3)
    assert res.details["membership_summary"]["mean_max_membership"] > 0.999
    json.dumps(res.record())


def test_fuzzy_seed_reproducible_and_values_are_centres():
    z = np.random.default_rng(3).normal(size=(120, 2))
    df = pd.DataFrame(z, columns=["a", "b"])
    r1 = fuzzy_microaggregation(df, k=4, m=1.5, seed=42)
    r2 = fuzzy_microaggregation(df, k=4, m=1.5, seed=42)
    r3 = fuzzy_microaggregation(df, k=4, m=1.5, seed=43)
    pd.testing.assert_frame_equal(r1.data, r2.data)
    assert not r1.data.equals(r3.data)
    distinct = r1.data.drop_duplicates()
    assert len(distinct) <= r1.details["n_clusters"] == 30
    assert sum(int(v) * int(c) for v, c in r1.details["drawn_cluster_size_counts"].items()) == 120


# --------------------------------------------------------------------------------------------
# information loss, bad input
# --------------------------------------------------------------------------------------------


def test_information_loss_hand_value():
    orig = pd.DataFrame({"x": [0.0, 2.0, 4.0, 6.0]})
    masked = pd.DataFrame({"x": [1.0, 1.0, 5.0, 5.0]})
    # SSE = 4 (in x units), SST = 20 -> IL = 20 (scale cancels)
    assert information_loss(orig, masked) == pytest.approx(20.0)


def test_bad_input_errors():
    df = pd.DataFrame({"a": [1.0, 2, 3, 4], "b": ["1", "2", "x", "4"], "c": [1.0] * 4})
    with pytest.raises(DataError, match=r"'b'.*'x'.*row 3"):
        mdav(df, ["a", "b"], k=2)
    with pytest.raises(DataError, match="k must be at least 1"):
        mdav(df, ["a"], k=0)
    with pytest.raises(DataError, match=r"k=5 is larger than the number of records \(4\)"):
        vmdav(df, ["a"], k=5)
    with pytest.raises(DataError, match="'c' has zero variance"):
        mdav(df, ["a", "c"], k=2)
    with pytest.raises(DataError, match="missing"):
        mdav(pd.DataFrame({"a": [1.0, np.nan, 3, 4]}), k=2)
    with pytest.raises(DataError, match="centroid"):
        mdav(df, ["a"], k=2, centroid="mode")
    with pytest.raises(DataError, match="in no group"):
        mdav(df, ["a", "c"], k=2, groups=[["a"]])
    with pytest.raises(DataError, match="gamma"):
        vmdav(df, ["a"], k=2, gamma=-1)
    with pytest.raises(DataError, match="fuzzifier m must be > 1"):
        fuzzy_microaggregation(df, ["a"], k=2, m=1.0)
    with pytest.raises(DataError, match="order list"):
        categorical_microaggregation(df, ["b"], k=2, order={"b": ["1", "2", "4"]})
    with pytest.raises(DataError, match="k must be a whole number"):
        individual_ranking(df, ["a"], k=2.5)
    with pytest.raises(DataError, match="not found"):
        optimal_univariate(df, "zz", k=2)


# --------------------------------------------------------------------------------------------
# properties
# --------------------------------------------------------------------------------------------


@st.composite
def data_and_k(draw, max_p=3):
    k = draw(st.integers(1, 5))
    n = draw(st.integers(k, 40))
    p = draw(st.integers(1, max_p))
    x = draw(arrays(np.float64, (n, p), elements=st.integers(-20, 20).map(float)))
    return x, k


PROP = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROP
@given(data_and_k())
def test_property_partitions_sizes(xk):
    x, k = xk
    lab = mdav_partition(x, k)
    sizes = np.bincount(lab)
    assert len(sizes) == len(x) // k and sizes.min() >= k and sizes.max() <= 2 * k - 1
    assert np.array_equal(lab, mdav_partition(x, k))  # deterministic
    lab = vmdav_partition(x, k, 0.5)
    assert np.array_equal(lab, vmdav_partition(x, k, 0.5))
    sizes = np.bincount(lab)
    assert sizes.min() >= k and sizes.max() <= 3 * k - 2
    for f in (optimal_univariate_partition, individual_ranking_partition):
        sizes = np.bincount(f(x[:, 0], k))
        assert sizes.min() >= k and sizes.max() <= 2 * k - 1


@PROP
@given(data_and_k())
def test_property_means_preserved_and_input_untouched(xk):
    x, k = xk
    df = pd.DataFrame(x, columns=[f"c{j}" for j in range(x.shape[1])])
    before = df.copy()
    results = [
        mdav(df, k=k, standardize=False),
        vmdav(df, k=k, standardize=False),
        optimal_univariate(df, "c0", k=k),
        individual_ranking(df, k=k),
        categorical_microaggregation(df, k=k),
    ]
    for res in results:
        pd.testing.assert_frame_equal(df, before)
        assert np.allclose(res.data.mean().to_numpy(), df.mean().to_numpy(), atol=1e-9)
        d = res.details if "min_group_size" in res.details else res.details["groups"][0]
        assert d["min_group_size"] >= k
        json.dumps(res.record())


@PROP
@given(data_and_k(max_p=2))
def test_property_kanonymity(xk):
    x, k = xk
    df = pd.DataFrame(x, columns=["a", "b"][: x.shape[1]])
    res = categorical_microaggregation(df, k=k)  # no standardization: constant columns ok
    assert res.data.groupby(list(df.columns)).size().min() >= k


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(2, 4))
def test_property_fuzzy_seed_reproducible(seed, k):
    df = pd.DataFrame(np.random.default_rng(seed % 97).normal(size=(24, 2)), columns=["a", "b"])
    a = fuzzy_microaggregation(df, k=k, seed=seed, max_iter=20)
    b = fuzzy_microaggregation(df, k=k, seed=seed, max_iter=20)
    pd.testing.assert_frame_equal(a.data, b.data)
    assert a.details == b.details


def test_set_partitions_count():
    # Bell numbers: guards the brute force used above
    assert [sum(1 for _ in set_partitions(list(range(n)))) for n in range(1, 7)] == [
        1, 2, 5, 15, 52, 203,
    ]  # fmt: skip
    assert list(itertools.islice(set_partitions([0]), 2)) == [[[0]]]


def test_fuzzy_default_gives_a_usable_and_random_release(shared_data):
    # CASC Census, 5 numeric attributes, k=3: the default m=1.5 keeps IL1s near MDAV's (0.134
    # vs 0.092; m=2 gives 0.322) while a real share of records is drawn to another cluster
    from sdckit.utility.numeric import il1s

    census = pd.read_csv(shared_data / "sdcmicro" / "sdcMicro_CASCrefmicrodata.csv")
    cols = list(census.columns[:5])
    res = fuzzy_microaggregation(census, cols, k=3, seed=1)
    assert il1s(census, res.data, cols) < 0.2
    assert res.details["membership_summary"]["share_assigned_to_max_membership"] < 0.9
    flat = fuzzy_microaggregation(census, cols, k=3, m=2.0, seed=1)
    assert il1s(census, flat.data, cols) > 2 * il1s(census, res.data, cols)


def test_information_loss_of_values_whose_spread_overflows_is_a_data_error():
    """A value near 1e300 made the standard deviation overflow to inf, every z-score 0 and
    IL = 0 / 0: a ZeroDivisionError (exit 1 from a mask job). Now a DataError names the column,
    and a mask job reports IL as unavailable with that reason."""
    original = pd.DataFrame({"x": [1.0, 3.0, 1e300, 7.0, 9.0], "y": [2.0, 4, 5, 8, 1]})
    with pytest.raises(DataError, match=r"column 'x' has values so large .*1e\+300"):
        information_loss(original, original.copy(), ["x", "y"])


# --------------------------------------------------------------------------------------------
# the plan: the same checks and messages as the methods, read through ColumnStats
# --------------------------------------------------------------------------------------------


def test_plan_checks_the_data_with_the_methods_messages():
    """The plan (what the Spark engine reads from its statistics) refuses what the methods
    refuse, with their messages: the first missing number in row order, then column order."""
    from sdckit.masking.microaggregation import Microaggregation, mdav
    from sdckit.masking.stats import PandasStats

    df = pd.DataFrame(
        {
            "x": [1.0, 2.0, 3.0, np.nan, 5.0, 6.0],
            "y": [1.0, np.nan, 3.0, 4.0, 5.0, 6.0],
            "t": ["a", "b", None, "a", "b", "a"],
            "g": ["u", "u", "u", "v", "v", "v"],
        }
    )
    with pytest.raises(DataError) as local:
        mdav(df, ["x", "y"], 2)
    with pytest.raises(DataError) as planned:
        Microaggregation(["x", "y"], k=2, strata=["g"]).plan(PandasStats(df))
    assert str(planned.value) == str(local.value)
    assert "column 'y' has a missing or infinite value in row 2 (" in str(local.value)
    with pytest.raises(DataError) as local:
        categorical_microaggregation(df, ["t", "y"], 2)
    with pytest.raises(DataError) as planned:
        Microaggregation(["t", "y"], k=2, method="kanonymity", strata=["g"]).plan(PandasStats(df))
    assert str(planned.value) == str(local.value)
    assert str(local.value).startswith("categorical_microaggregation: column 't' has a missing")


def test_plan_names_the_variant_function_and_the_strata():
    from sdckit.masking.microaggregation import Microaggregation
    from sdckit.masking.stats import PandasStats

    df = pd.DataFrame({"x": [1.0, 2.0, 3.0, 4.0], "t": list("abab"), "g": list("uuvv")})
    stats = PandasStats(df)
    plan = Microaggregation(["x", "t"], k=2, method="kanonymity", strata=["g"]).plan(stats)
    assert (plan.function, plan.numbers, plan.strata) == (
        "categorical_microaggregation",
        False,
        ["g"],
    )
    assert plan.out_kinds({"x": "double", "t": "string"}) == {"x": "double", "t": "string"}
    plan = Microaggregation(["x"], k=2, method="kanonymity", block_by=["x"], block_size=2).plan(
        stats
    )
    assert (plan.function, plan.numbers, plan.strata) == ("mdav", True, ["x"])
    plan = Microaggregation(["x"], k=2, method="fuzzy", strata=["g"]).plan(stats)
    assert (plan.function, plan.random) == ("fuzzy_microaggregation", True)
    with pytest.raises(DataError, match="'nope' not found"):
        Microaggregation(["x"], k=2, strata=["nope"]).plan(stats)
