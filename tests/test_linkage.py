"""Tests: distance-based and probabilistic record linkage, interval disclosure, sdcMicro dRisk,
and the 2001 disclosure-risk score."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.spatial.distance import cdist

from sdckit.errors import DataError, SdcInputError
from sdckit.risk.interval_disclosure import (
    interval_disclosure,
    rank_interval_bounds,
    sdcmicro_drisk,
)
from sdckit.risk.linkage import distance_linkage, score_disclosure_risk
from sdckit.risk.probabilistic_linkage import (
    em_fellegi_sunter,
    fellegi_sunter_thresholds,
    probabilistic_linkage,
)


def frame(rows, cols=("v1", "v2")):
    return pd.DataFrame(np.asarray(rows, dtype=float), columns=list(cols))


# --------------------------------------------------------------------------------------------
# distance-based record linkage
# --------------------------------------------------------------------------------------------
def test_herranz_example_1_nearest_neighbour_links_one_of_four():
    # Herranz, Nin, Rodriguez & Tassa (2015), Example 1 (also sdcMicro's recordLinkage test):
    # x1=(1,0) is nearest to y1=(0,0) (distance 1 < 2.33); x2=(0,1), x3=(-1,0), x4=(0,-1) are
    # all at distance 1 from y1 but 1.1 from their own record, so only x1 links correctly.
    # (The global Hungarian assignment of sdcMicro links all four.)
    x = frame([(1, 0), (0, 1), (-1, 0), (0, -1)])
    y = frame([(0, 0), (0, 2.1), (-2.1, 0), (0, -2.1)])
    res = distance_linkage(x, y, ["v1", "v2"])
    assert res.dbrl == 0.25
    assert res.nearest.tolist() == [0, 0, 0, 0]
    assert res.n_at_min.tolist() == [1, 1, 1, 1]


def test_herranz_example_2_one_dimension():
    # Example 2: x=(1,2,3,4), y=(2,3,4,-0.1): x1->y1 (|1-2|=1 < 1.1) correct, x2->y1, x3->y2,
    # x4->y3 wrong: DBRL = 1/4.
    x = pd.DataFrame({"v": [1.0, 2, 3, 4]})
    y = pd.DataFrame({"v": [2.0, 3, 4, -0.1]})
    res = distance_linkage(x, y, "v")
    assert res.dbrl == 0.25
    assert res.nearest.tolist() == [0, 0, 1, 2]


def test_ties_count_fractionally():
    # sdcMicro's n_best example: x=(0,1), y=(0,0): both protected records are at the minimal
    # distance for both intruder records, the true one among them: 1/2 + 1/2 -> DBRL 0.5.
    res = distance_linkage(pd.DataFrame({"a": [0.0, 1]}), pd.DataFrame({"a": [0.0, 0]}), "a")
    assert res.n_at_min.tolist() == [2, 2]
    assert res.credit.tolist() == [0.5, 0.5]
    assert res.dbrl == 0.5
    assert res.n_tied == 2 and res.n_unique_correct == 0


def test_three_way_tie_and_wrong_tie():
    # x0=0 sees y0=y1=y2=1 (t=3, true among them -> 1/3); x1=3 is at distance 2 from all
    # four (t=4 -> 1/4); x2=4 is nearest to y3=5 (wrong); x3=5 matches y3 exactly.
    res = distance_linkage(
        pd.DataFrame({"a": [0.0, 3, 4, 5]}), pd.DataFrame({"a": [1.0, 1, 1, 5]}), "a"
    )
    assert res.credit.tolist() == pytest.approx([1 / 3, 1 / 4, 0, 1])
    assert res.n_at_min.tolist() == [3, 4, 1, 1]
    assert res.dbrl == pytest.approx((1 / 3 + 1 / 4 + 1) / 4)


def test_intruder_rows_subset():
    x = frame([(1, 0), (0, 1), (-1, 0), (0, -1)])
    y = frame([(0, 0), (0, 2.1), (-2.1, 0), (0, -2.1)])
    assert distance_linkage(x, y, intruder_rows=[0, 1]).dbrl == 0.5
    assert distance_linkage(x, y, intruder_rows=np.array([False, True, True, True])).dbrl == 0
    with pytest.raises(SdcInputError, match="outside"):
        distance_linkage(x, y, intruder_rows=[7])


def brute_force_dbrl(x, y, rows, metric="euclidean", weights=None, vi=None):
    """Reference: full distance matrix, fractional ties (independent of the kd-tree code)."""
    mean, sd = x.mean(axis=0), x.std(axis=0, ddof=1)
    zx, zy = (x - mean) / sd, (y - mean) / sd
    if metric == "euclidean":
        dist = cdist(zx[rows], zy)
    elif metric == "weighted":
        dist = cdist(zx[rows], zy, metric="minkowski", p=2, w=weights)
    else:
        dist = cdist(zx[rows], zy, metric="mahalanobis", VI=vi(zx, zy))
    dmin = dist.min(axis=1, keepdims=True)
    tied = dist <= dmin + 1e-9 * (1 + dmin)
    own = tied[np.arange(len(rows)), rows]
    return float((own / tied.sum(axis=1)).mean())


@settings(max_examples=40, deadline=None)
@given(
    n=st.integers(3, 25),
    d=st.integers(1, 4),
    noise=st.sampled_from([0.0, 0.3, 1.0]),
    rounding=st.booleans(),
    seed=st.integers(0, 10_000),
)
def test_dbrl_matches_brute_force(n, d, noise, rounding, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, d)) * 3
    if rounding:  # integer data produce many exact ties
        x = np.round(x)
    x[:2] = x[:2] + np.arange(d)  # avoid constant columns
    x[0] = x[1] + 1
    y = x + noise * rng.normal(size=(n, d))
    if rounding:
        y = np.round(y)
    cols = [f"c{k}" for k in range(d)]
    xo, yo = pd.DataFrame(x, columns=cols), pd.DataFrame(y, columns=cols)
    rows = np.arange(n)
    if x.std(axis=0, ddof=1).min() == 0:
        return
    got = distance_linkage(xo, yo, cols)
    assert got.dbrl == pytest.approx(brute_force_dbrl(x, y, rows), abs=1e-12)
    assert 0.0 <= got.dbrl <= 1.0
    w = rng.uniform(0.1, 3.0, size=d)
    got_w = distance_linkage(xo, yo, cols, metric="weighted", weights=w)
    assert got_w.dbrl == pytest.approx(brute_force_dbrl(x, y, rows, "weighted", w), abs=1e-12)


def test_mahalanobis_matches_cdist_with_original_and_pooled_covariance():
    rng = np.random.default_rng(3)
    base = rng.normal(size=(200, 3))
    x = base @ np.array([[1.0, 0.9, 0.2], [0.0, 0.5, 0.1], [0.0, 0.0, 0.3]])
    y = x + rng.normal(scale=0.2, size=x.shape)
    cols = ["a", "b", "c"]
    xo, yo = pd.DataFrame(x, columns=cols), pd.DataFrame(y, columns=cols)
    rows = np.arange(200)

    def vi_orig(zx, zy):
        return np.linalg.inv(np.cov(zx, rowvar=False))

    def vi_pooled(zx, zy):
        return np.linalg.inv((np.cov(zx, rowvar=False) + np.cov(zy, rowvar=False)) / 2)

    def vi_diff(zx, zy):
        return np.linalg.inv(np.cov(zx - zy, rowvar=False))

    for cov, vi in (("original", vi_orig), ("pooled", vi_pooled), ("difference", vi_diff)):
        got = distance_linkage(xo, yo, cols, metric="mahalanobis", covariance=cov).dbrl
        assert got == pytest.approx(brute_force_dbrl(x, y, rows, "mahalanobis", vi=vi))
    # the noise covariance ("difference", Torra et al. 2006) is the best metric here
    diff = distance_linkage(xo, yo, cols, metric="mahalanobis", covariance="difference").dbrl
    assert diff >= distance_linkage(xo, yo, cols).dbrl


def test_weighted_zero_weight_ignores_a_column():
    # Column b is scrambled; with weight 0 on b the linkage uses a alone and is perfect.
    x = pd.DataFrame({"a": [1.0, 2, 3, 4, 5], "b": [1.0, 2, 3, 4, 5]})
    y = pd.DataFrame({"a": [1.1, 2.1, 3.1, 4.1, 5.1], "b": [5.0, 4, 3, 2, 1]})
    assert distance_linkage(x, y, metric="weighted", weights={"a": 1, "b": 0}).dbrl == 1.0
    assert distance_linkage(x, y).dbrl < 1.0


def test_rows_are_aligned_by_label():
    x = frame([(1, 0), (0, 1), (-1, 0), (0, -1)])
    y = frame([(0, 0), (0, 2.1), (-2.1, 0), (0, -2.1)])
    shuffled = y.iloc[[2, 0, 3, 1]]
    assert distance_linkage(x, shuffled).dbrl == 0.25
    assert json.loads(json.dumps(distance_linkage(x, y).to_dict()))["dbrl"] == 0.25


def test_linkage_input_errors():
    x = pd.DataFrame({"a": [1.0, 2, 3], "b": [1.0, 1, 1], "s": ["u", "v", "w"]})
    y = x.copy()
    with pytest.raises(DataError, match="column 'zz' not in the original file"):
        distance_linkage(x, y, ["zz"])
    with pytest.raises(DataError, match=r"intruder file column 'a' not in protected file"):
        distance_linkage(x, y.drop(columns="a"), ["a"])
    with pytest.raises(DataError, match="3 rows but the protected file has 2"):
        distance_linkage(x, y.iloc[:2], ["a"])
    with pytest.raises(DataError, match="'s' .* is not numeric"):
        distance_linkage(x, y, ["a", "s"])
    with pytest.raises(DataError, match="'b'.*constant"):
        distance_linkage(x, y, ["a", "b"])
    with pytest.raises(DataError, match="missing or infinite"):
        distance_linkage(x, y.assign(a=[1.0, np.nan, 3]), ["a"])
    with pytest.raises(DataError, match="row labels"):
        distance_linkage(x, y.set_index(pd.Index([5, 6, 7])), ["a"])
    with pytest.raises(SdcInputError, match="metric"):
        distance_linkage(x, y, ["a"], metric="manhattan")
    with pytest.raises(SdcInputError, match="weights"):
        distance_linkage(x, y, ["a"], metric="weighted")
    with pytest.raises(SdcInputError, match=">= 0"):
        distance_linkage(x, y, ["a"], metric="weighted", weights=[-1])
    singular = pd.DataFrame({"a": [1.0, 2, 3, 4], "b": [2.0, 4, 6, 8]})
    with pytest.raises(DataError, match="singular"):
        distance_linkage(singular, singular, metric="mahalanobis")


# --------------------------------------------------------------------------------------------
# score
# --------------------------------------------------------------------------------------------
def test_score_disclosure_risk():
    assert score_disclosure_risk(0.8, 0.4, 0.1) == pytest.approx(0.2 + 0.1 + 0.05)
    assert score_disclosure_risk(1, 1, 1) == 1.0
    with pytest.raises(SdcInputError, match="prl"):
        score_disclosure_risk(0.5, 1.5, 0.1)


# --------------------------------------------------------------------------------------------
# interval disclosure
# --------------------------------------------------------------------------------------------
def test_rank_interval_hand_example():
    # n=20 values 1..20, protected = original + 1. Rank interval half-width h = p*20/200.
    # p=10 (h=1): value x+1 has rank x (0-based), ranks x-1..x+1 -> values [x, x+2] contain x;
    # the top record (x=20 -> 21, rank 19.5) gets ranks 19..19 widened to [20, 21]: all 20 in.
    # p=5..9 (0.5 <= h < 1): ranks {x} only -> [x+1, x+1] misses x, except the top record
    # (ranks [19, 20] -> value 20): 1/20. p=1..4 (h < 0.5): the top record has no rank -> 0.
    x = pd.DataFrame({"a": np.arange(1.0, 21), "b": np.arange(1.0, 21)})
    y = pd.DataFrame({"a": np.arange(2.0, 22), "b": np.arange(1.0, 21)})
    rec = interval_disclosure(x, y)
    expected = {**dict.fromkeys(range(1, 5), 0.0), **dict.fromkeys(range(5, 10), 0.05), 10: 1.0}
    assert rec.by_percent == pytest.approx({float(k): v for k, v in expected.items()})
    assert rec.interval_disclosure == pytest.approx(0.125)
    assert rec.by_column == pytest.approx({"a": 0.125, "b": 1.0})
    val = interval_disclosure(x, y, unit="value")
    assert val.interval_disclosure == pytest.approx((0.125 + 1.0) / 2)
    assert json.loads(json.dumps(rec.to_dict()))["by_percent"]["10"] == 1.0


def test_rank_interval_bounds_ties_and_outside_values():
    s = np.array([1.0, 2, 2, 2, 5, 6, 7, 8, 9, 10])
    # value 2 occupies ranks 1..3 -> centre 2; p=20 -> h=1 -> ranks 1..3 -> [2, 2]
    lo, hi = rank_interval_bounds(s, np.array([2.0, 3.0, 0.0, 11.0]), 20)
    # 3 lies between ranks 3 and 4 (r=3.5): ranks 3..4 -> [2, 5]; 0 (r=-0.5): rank 0 ->
    # [0, 1]; 11 (r=9.5): rank 9 -> [10, 11]
    assert lo.tolist() == [2.0, 2.0, 0.0, 10.0]
    assert hi.tolist() == [2.0, 5.0, 1.0, 11.0]


@settings(max_examples=30, deadline=None)
@given(n=st.integers(2, 30), seed=st.integers(0, 1000), integer=st.booleans())
def test_interval_disclosure_invariants(n, seed, integer):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3))
    if integer:
        x = np.round(x * 2)
    y = x + rng.normal(scale=0.5, size=x.shape)
    xo, yo = pd.DataFrame(x, columns=list("abc")), pd.DataFrame(y, columns=list("abc"))
    rec = interval_disclosure(xo, yo).interval_disclosure
    val = interval_disclosure(xo, yo, unit="value").interval_disclosure
    assert 0.0 <= rec <= val <= 1.0
    # identity masking discloses everything; wider intervals never disclose less
    assert interval_disclosure(xo, xo).interval_disclosure == 1.0
    shares = interval_disclosure(xo, yo, percents=[1, 5, 20, 60]).by_percent
    assert list(shares.values()) == sorted(shares.values())


def test_sdcmicro_drisk_hand_example():
    # Each protected column is a permutation of (-1, 0, 1) + c: sd = 1 exactly, k = 0.5 ->
    # intervals x' +- 0.5 (bounds inclusive, as sdcMicro tests x < lower | x > upper).
    xm = pd.DataFrame({"a": [-1.0, 0, 1], "b": [10.0, 11, 9], "c": [0.0, 1, -1]})
    x = xm.copy()
    x.loc[0, "a"] += 0.5  # on the bound: inside
    x.loc[1, ["a"]] += 0.6  # one attribute outside
    x.loc[2, ["a", "b"]] += 2.0  # two attributes outside
    # sdcMicro >= 5.5.2 (the default): every attribute inside -> row 0 only -> 1/3
    assert sdcmicro_drisk(x, xm, k=0.5) == pytest.approx(1 / 3)
    # sdcMicro < 5.5.2: 0 or 1 attributes outside -> rows 0 and 1 -> 2/3
    assert sdcmicro_drisk(x, xm, k=0.5, rule="at_most_one_outside") == pytest.approx(2 / 3)
    # a missing original value is not counted as outside (rowSums(..., na.rm=TRUE)): row 2
    # now has one attribute (a) outside
    x.loc[2, "b"] = np.nan
    assert sdcmicro_drisk(x, xm, k=0.5) == pytest.approx(1 / 3)
    assert sdcmicro_drisk(x, xm, k=0.5, rule="at_most_one_outside") == pytest.approx(1.0)
    x.loc[[1, 2], "a"] = np.nan  # rows 1 and 2 have nothing outside left
    assert sdcmicro_drisk(x, xm, k=0.5) == pytest.approx(1.0)
    # single attribute, k = 0: row 0 (moved by 0.5) is outside, rows 1 and 2 (missing) are
    # not -> 2/3; the old rule: every record has at most one attribute outside -> 1.0
    assert sdcmicro_drisk(x, xm, ["a"], k=0.0) == pytest.approx(2 / 3)
    assert sdcmicro_drisk(x, xm, ["a"], k=0.0, rule="at_most_one_outside") == 1.0
    with pytest.raises(SdcInputError, match="k="):
        sdcmicro_drisk(x, xm, k=-1)
    with pytest.raises(SdcInputError, match="rule="):
        sdcmicro_drisk(x, xm, rule="one")


# --------------------------------------------------------------------------------------------
# probabilistic record linkage
# --------------------------------------------------------------------------------------------
def test_fellegi_sunter_thresholds_hand_example():
    # m=(0.9, 0.8), u=(0.1, 0.2): patterns (1,1) m=.72 u=.02 w=ln 36; (1,0) m=.18 u=.08
    # w=ln 2.25; (0,1) m=.08 u=.18 w=-ln 2.25; (0,0) m=.02 u=.72 w=-ln 36.
    bits = np.array([[1.0, 1], [1, 0], [0, 1], [0, 0]])
    m, u = np.array([0.9, 0.8]), np.array([0.1, 0.2])
    up, low, lp, npm = fellegi_sunter_thresholds(bits, m, u, 0.05, 0.05)
    assert up == pytest.approx(np.log(36), abs=1e-8) and lp == pytest.approx(0.02)
    assert low == pytest.approx(-np.log(36), abs=1e-8) and npm == pytest.approx(0.02)
    up, low, lp, npm = fellegi_sunter_thresholds(bits, m, u, 0.12, 0.12)
    assert up == pytest.approx(np.log(2.25), abs=1e-8) and lp == pytest.approx(0.10)
    assert low == pytest.approx(-np.log(2.25), abs=1e-8) and npm == pytest.approx(0.10)
    up, low, _, _ = fellegi_sunter_thresholds(bits, m, u, 0.01, 0.0)
    assert up == np.inf and low == -np.inf


def test_em_recovers_mixture_parameters_from_exact_counts():
    # counts = N * (p m(gamma) + (1-p) u(gamma)) exactly: the MLE is the generating model.
    m = np.array([0.9, 0.8, 0.95, 0.7])
    u = np.array([0.1, 0.3, 0.05, 0.2])
    p = 0.05
    bits = ((np.arange(16)[:, None] >> np.arange(4)) & 1).astype(float)
    pm = np.prod(np.where(bits == 1, m, 1 - m), axis=1)
    pu = np.prod(np.where(bits == 1, u, 1 - u), axis=1)
    counts = 1e6 * (p * pm + (1 - p) * pu)
    mh, uh, ph, _, conv, _ = em_fellegi_sunter(bits, counts, 0.01, True, 20000, 1e-12)
    assert conv
    assert mh == pytest.approx(m, abs=1e-5)
    assert uh == pytest.approx(u, abs=1e-5)
    assert ph == pytest.approx(p, abs=1e-6)


def test_em_with_fixed_u_recovers_m_and_p_from_exact_counts():
    m = np.array([0.9, 0.8, 0.95, 0.7])
    u = np.array([0.1, 0.3, 0.05, 0.2])
    p = 0.05
    bits = ((np.arange(16)[:, None] >> np.arange(4)) & 1).astype(float)
    pm = np.prod(np.where(bits == 1, m, 1 - m), axis=1)
    pu = np.prod(np.where(bits == 1, u, 1 - u), axis=1)
    counts = 1e6 * (p * pm + (1 - p) * pu)
    mh, uh, ph, _, conv, _ = em_fellegi_sunter(bits, counts, 0.01, True, 20000, 1e-12, fixed_u=u)
    assert conv
    assert uh == pytest.approx(u, abs=1e-15)
    assert mh == pytest.approx(m, abs=1e-5)
    assert ph == pytest.approx(p, abs=1e-6)


def test_prl_random_pair_u_matches_brute_force_and_survives_blocking():
    rng = np.random.default_rng(5)
    x = pd.DataFrame(rng.normal(size=(300, 3)), columns=list("abc"))
    y = x + 0.1 * rng.normal(size=x.shape)
    res = probabilistic_linkage(x, y, u_estimate="random_pairs", u_sample=400_000)
    # exact u_k: agreement rate (|a - b| <= 0.1 sd of the original) over all pairs i != j
    tol = 0.1 * x.std().to_numpy()
    agree = np.abs(x.to_numpy()[:, None, :] - y.to_numpy()[None, :, :]) <= tol
    off = ~np.eye(300, dtype=bool)
    exact = agree[off].mean(axis=0)
    assert list(res.u.values()) == pytest.approx(exact, abs=0.004)
    full = probabilistic_linkage(x, y, u_estimate="random_pairs")
    blocked = probabilistic_linkage(
        x, y, blocking="sorted_neighbourhood", window=5, u_estimate="random_pairs"
    )
    blocked_em = probabilistic_linkage(x, y, blocking="sorted_neighbourhood", window=5)
    assert blocked.n_pairs < full.n_pairs
    # EM's u on blocked (near-neighbour) pairs makes PRL collapse (0.06 here vs 0.56 for the
    # full comparison); random-pair u keeps the thresholds on the full comparison's scale
    assert blocked_em.prl < 0.2 < full.prl - 0.3
    assert abs(blocked.prl - full.prl) <= 0.1
    with pytest.raises(SdcInputError, match="u_estimate"):
        probabilistic_linkage(x, y, u_estimate="sample")
    with pytest.raises(SdcInputError, match="u_sample"):
        probabilistic_linkage(x, y, u_estimate="random_pairs", u_sample=0)


def test_prl_perfect_on_unperturbed_distinct_data():
    rng = np.random.default_rng(0)
    x = pd.DataFrame(rng.permutation(np.arange(60.0).reshape(20, 3)), columns=list("abc"))
    res = probabilistic_linkage(x, x.copy(), tolerances={"a": 0, "b": 0, "c": 0})
    assert res.prl == 1.0 and res.prl_best == 1.0
    assert res.counts["pairs"] == 400 and res.counts["linked_true"] == 20
    assert res.counts["linked"] == 20
    assert all(v > 0.99 for v in res.m.values()) and all(v < 0.01 for v in res.u.values())
    json.dumps(res.to_dict())


def test_prl_blocking_and_categorical_comparison():
    x = pd.DataFrame(
        {
            "region": ["n", "n", "s", "s", "s", "e"],
            "job": ["a", "b", "a", "b", "c", "a"],
            "inc": [10.0, 20, 30, 40, 50, 60],
        }
    )
    res = probabilistic_linkage(x, x.copy(), ["job", "inc"], blocking=["region"])
    # blocks n (2x2), s (3x3), e (1x1) -> 4 + 9 + 1 = 14 candidate pairs, all true pairs in
    assert res.counts["pairs"] == 14 and res.counts["true_pairs_in_candidates"] == 6
    assert res.columns == ["job", "inc"] and res.prl == 1.0
    res = probabilistic_linkage(x, x.copy(), ["region", "job", "inc"], blocking=["region"])
    assert res.columns == ["job", "inc"]


def test_prl_sorted_neighbourhood_and_caps():
    rng = np.random.default_rng(1)
    x = pd.DataFrame(rng.normal(size=(300, 3)), columns=list("abc"))
    y = x + rng.normal(scale=0.01, size=x.shape)
    res = probabilistic_linkage(x, y, blocking="sorted_neighbourhood", window=3)
    assert res.n_pairs <= 300 * 6 * 3
    assert res.counts["true_pairs_in_candidates"] >= 290
    assert 0.0 <= res.prl <= res.counts["true_pairs_in_candidates"] / 300
    with pytest.raises(DataError, match="max_pairs"):
        probabilistic_linkage(x, y, max_pairs=10_000)


def test_prl_same_seed_same_output_and_ties():
    # two identical respondents: their pairs tie; the seed decides, deterministically.
    x = pd.DataFrame({"a": [1.0, 1, 2, 3, 4, 5], "b": [1.0, 1, 5, 2, 9, 7]})
    r1 = probabilistic_linkage(x, x.copy(), tolerances={"a": 0, "b": 0}, seed=5)
    r2 = probabilistic_linkage(x, x.copy(), tolerances={"a": 0, "b": 0}, seed=5)
    assert r1.links.tolist() == r2.links.tolist()
    assert r1.prl in (4 / 6, 1.0)
    assert r1.links[2:].tolist() == [2, 3, 4, 5]


def test_prl_input_errors():
    x = pd.DataFrame({"a": [1.0, 2, 3], "k": [1.0, 1, 1]})
    with pytest.raises(DataError, match="intruder file column 'zz' not in protected file"):
        probabilistic_linkage(x.assign(zz=1.0), x, ["a", "zz"])
    with pytest.raises(DataError, match="constant"):
        probabilistic_linkage(x, x, ["a", "k"])
    with pytest.raises(SdcInputError, match="max_p_lp_given_u"):
        probabilistic_linkage(x, x, ["a"], max_p_lp_given_u=2)
    with pytest.raises(DataError, match="blocking column"):
        probabilistic_linkage(x, x, ["a"], blocking=["nope"])


@pytest.mark.slow
def test_census_noise_linkage_measures(shared_data):
    census = pd.read_csv(shared_data / "sdcmicro" / "sdcMicro_CASCrefmicrodata.csv")
    rng = np.random.default_rng(0)
    noisy = census + rng.normal(size=census.shape) * census.std().to_numpy() * 0.1
    dbrl = distance_linkage(census, noisy).dbrl
    assert 0.9 < dbrl <= 1.0  # 10% noise on 13 attributes barely protects
    prl = probabilistic_linkage(census, noisy)
    assert prl.counts["pairs"] == 1080 * 1080 and prl.converged
    assert 0.0 < prl.prl <= 1.0
    ident = interval_disclosure(census, census).interval_disclosure
    assert ident == 1.0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_nearest_with_ties_equals_brute_force(seed):
    # integer grids: many exact ties (equal distances) and duplicate targets; the count of
    # targets at the minimal distance and the credit must be those of a full distance matrix
    from sdckit.risk.linkage import TIE_RTOL, nearest_with_ties

    rng = np.random.default_rng(seed)
    targets = rng.integers(0, 4, size=(600, 3)).astype(float)
    queries = targets[:300] + rng.choice([0.0, 0.5, 1.0], size=(300, 3))
    truth = np.arange(300)
    nearest, n_at_min, credit = nearest_with_ties(queries, truth, targets)
    d = np.sqrt(((queries[:, None, :] - targets[None, :, :]) ** 2).sum(axis=2))
    dmin = d.min(axis=1)
    at_min = d <= (dmin + TIE_RTOL * (1.0 + dmin))[:, None]
    assert np.array_equal(n_at_min, at_min.sum(axis=1))
    expected = np.where(at_min[truth, truth], 1.0 / at_min.sum(axis=1), 0.0)
    assert np.array_equal(credit, expected)
    assert at_min[np.arange(300), nearest].all()
    assert (n_at_min > 1).sum() > 100  # the case is about ties


def test_prl_blocking_on_columns_compares_only_records_that_agree_on_them():
    # two blocking columns (a text and a number, one value missing): the candidate pairs are
    # exactly the (original, protected) pairs with equal values on both, missing = missing
    rng = np.random.default_rng(11)
    n = 60
    x = pd.DataFrame(
        {
            "region": rng.choice(["n", "s", None], n),
            "size": rng.integers(1, 4, n),
            "a": rng.normal(size=n),
            "b": rng.normal(size=n),
        }
    )
    y = x.copy()
    y[["a", "b"]] += 0.05 * rng.normal(size=(n, 2))
    y.loc[::7, "size"] = 9  # some protected records leave their block
    res = probabilistic_linkage(x, y, columns=["a", "b"], blocking=["region", "size"])
    kx = list(zip(x["region"].fillna("~"), x["size"], strict=True))
    ky = list(zip(y["region"].fillna("~"), y["size"], strict=True))
    expected = sum(1 for i in range(n) for j in range(n) if kx[i] == ky[j])
    assert res.n_pairs == expected
    assert res.blocking == ["region", "size"]
