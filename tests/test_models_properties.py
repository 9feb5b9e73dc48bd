"""Property tests: the vectorized model evaluations against plain per-class references."""

from __future__ import annotations

import math
from collections import Counter
from itertools import combinations
from unittest.mock import patch

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog
from scipy.stats import poisson

from sdckit.core.frequency import frequency_set
from sdckit.core.hierarchy import Hierarchy
from sdckit.models import (
    DeltaPresence,
    KAnonymity,
    KMap,
    LDiversity,
    LKCPrivacy,
    TCloseness,
    presence,
)

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
# Sensitive values whose text order differs from their numeric order ("10" < "5").
S_VALUES = [1, 5, 10, 20, 100]


@st.composite
def tables(draw, min_rows=1, max_rows=30):
    """Random rows: QIs qa (4 values), qb (3 values), sensitive s (numbers)."""
    n = draw(st.integers(min_rows, max_rows))
    qa = draw(st.lists(st.integers(0, 3), min_size=n, max_size=n))
    qb = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    s = draw(st.lists(st.sampled_from(S_VALUES), min_size=n, max_size=n))
    return pd.DataFrame({"qa": [f"a{v}" for v in qa], "qb": [f"b{v}" for v in qb], "s": s})


@st.composite
def qa_hierarchies(draw):
    """A random 3-level hierarchy over a0..a3: leaf -> one of two groups -> *."""
    groups = draw(st.lists(st.integers(0, 1), min_size=4, max_size=4))
    return Hierarchy([[f"a{i}", f"g{g}", "*"] for i, g in enumerate(groups)], "qa")


@st.composite
def s_hierarchies(draw):
    """A random hierarchy over the sensitive values: leaf -> g1 -> g2 -> *."""
    g1 = draw(st.lists(st.integers(0, 2), min_size=5, max_size=5))
    g2 = draw(st.lists(st.integers(0, 1), min_size=3, max_size=3))
    return Hierarchy(
        [[str(v), f"c{a}", f"d{g2[a]}", "*"] for v, a in zip(S_VALUES, g1, strict=True)], "s"
    )


def classes_of(fs, df):
    """Rows grouped by the class of ``fs`` they fall in (list indexed by class)."""
    rc = fs.row_class()
    return [df.iloc[np.flatnonzero(rc == c)] for c in range(fs.n_classes)]


# ------------------------------------------------------------------ l-diversity


@SETTINGS
@given(df=tables(), l=st.integers(1, 4), c=st.floats(0.5, 4.0), el=st.floats(1.0, 4.0))
def test_l_diversity_equals_per_class_reference(df, l, c, el):
    fs = frequency_set(df, ["qa", "qb"], sensitive=["s"])
    groups = classes_of(fs, df)
    distinct = [len(set(g["s"])) for g in groups]
    ent = []
    rec_ok = []
    for g in groups:
        counts = Counter(g["s"]).values()
        n = sum(counts)
        ent.append(-sum(f / n * math.log(f / n) for f in counts))
        r = sorted(counts, reverse=True)
        rec_ok.append(len(r) >= l and r[0] < c * sum(r[l - 1 :]))
    m_d = LDiversity("s", l)
    assert m_d.distinct_values(fs).tolist() == distinct
    assert m_d.evaluate(fs).violating.tolist() == [d < l for d in distinct]
    m_e = LDiversity("s", el, "entropy")
    np.testing.assert_allclose(m_e.entropies(fs), ent, atol=1e-12)
    expect_e = [
        d >= math.ceil(el) and h >= math.log(el) - 1e-12 for d, h in zip(distinct, ent, strict=True)
    ]
    assert m_e.evaluate(fs).violating.tolist() == [not ok for ok in expect_e]
    m_r = LDiversity("s", l, "recursive", c=c)
    assert m_r.evaluate(fs).violating.tolist() == [not ok for ok in rec_ok]


# ------------------------------------------------------------------ t-closeness


def emd_lp(p: np.ndarray, q: np.ndarray, dist: np.ndarray) -> float:
    """Earth Mover's Distance by linear programming (the transport problem)."""
    m = len(p)
    a_eq = np.zeros((2 * m, m * m))
    for i in range(m):
        a_eq[i, i * m : (i + 1) * m] = 1.0  # flow out of i = p_i
        a_eq[m + i, i::m] = 1.0  # flow into i = q_i
    res = linprog(
        dist.ravel(), A_eq=a_eq, b_eq=np.concatenate([p, q]), bounds=(0, None), method="highs"
    )
    assert res.status == 0
    return float(res.fun)


def ground_distances(values: list, distance: str, hierarchy: Hierarchy | None) -> np.ndarray:
    m = len(values)
    if distance == "equal":
        return 1.0 - np.eye(m)
    if distance == "ordered":
        rank = np.argsort(np.argsort(values))
        return np.abs(rank[:, None] - rank[None, :]) / max(m - 1, 1)
    leaf = hierarchy.leaf_index([str(v) for v in values])
    height = hierarchy.height - 1
    d = np.zeros((m, m))
    for h in range(height, 0, -1):  # lowest level where the two leaves meet
        codes = hierarchy.levels[h][leaf]
        same = codes[:, None] == codes[None, :]
        d[same] = h / height
    d[np.eye(m, dtype=bool)] = 0.0
    return d


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    df=tables(max_rows=20),
    hierarchy=s_hierarchies(),
    distance=st.sampled_from(["equal", "ordered", "hierarchical"]),
)
def test_t_closeness_equals_lp_earth_movers_distance(df, hierarchy, distance):
    fs = frequency_set(df, ["qa", "qb"], sensitive=["s"])
    model = TCloseness("s", 0.3, distance, hierarchy if distance == "hierarchical" else None)
    model.prepare(fs)
    got = model.distances(fs)
    values = sorted(set(df["s"]))
    q = np.array([np.mean(df["s"] == v) for v in values])
    dist = ground_distances(values, distance, hierarchy)
    expected = [
        emd_lp(np.array([np.mean(g["s"] == v) for v in values]), q, dist)
        for g in classes_of(fs, df)
    ]
    np.testing.assert_allclose(got, expected, atol=1e-9)
    assert model.evaluate(fs).violating.tolist() == [e > 0.3 + 1e-12 for e in got]


@SETTINGS
@given(df=tables(min_rows=2), data=st.data())
def test_t_closeness_keeps_the_overall_distribution_after_select(df, data):
    fs = frequency_set(df, ["qa", "qb"], sensitive=["s"])
    mask = np.array(
        data.draw(st.lists(st.booleans(), min_size=fs.n_classes, max_size=fs.n_classes))
    )
    for distance in ("equal", "ordered"):
        model = TCloseness("s", 0.2, distance)
        model.prepare(fs)
        np.testing.assert_allclose(
            model.distances(fs.select(mask)), model.distances(fs)[mask], atol=1e-12
        )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    df=tables(min_rows=2),
    qa=qa_hierarchies(),
    s_h=s_hierarchies(),
    distance=st.sampled_from(["equal", "ordered", "hierarchical"]),
    t=st.sampled_from([0.0, 0.05, 0.1, 0.2, 0.3, 0.5]),
)
def test_t_closeness_finer_violation_bound_is_sound(df, qa, s_h, distance, t):
    """At every finer node, the violating records are at least the coarser node's bound.

    Checked on all pairs (fine <= coarse) of the 3 x 2 lattice of qa x qb, with the EMD's
    convexity as the only argument (TCloseness.finer_violations). Also: the distance of each
    single-value class (used for D_max(C)) equals the LP reference, and is at most 1.
    """
    qb = Hierarchy([[f"b{i}", "*"] for i in range(3)], "qb")
    base = frequency_set(df, ["qa", "qb"], sensitive=["s"], hierarchies={"qa": qa, "qb": qb})
    model = TCloseness("s", t, distance, s_h if distance == "hierarchical" else None)
    model.prepare(base)
    values = sorted(set(df["s"]))
    q = np.array([np.mean(df["s"] == v) for v in values])
    dist = ground_distances(values, distance, s_h)
    point = [emd_lp(np.eye(len(values))[i], q, dist) for i in range(len(values))]
    present = np.asarray(base.sensitive_values["s"], dtype=object)
    order = [values.index(type(values[0])(v)) for v in present]
    np.testing.assert_allclose(model._point_distance, np.asarray(point)[order], atol=1e-9)
    assert model._max_distance == pytest.approx(max(point), abs=1e-9)
    assert model._max_distance <= 1.0 + 1e-12
    nodes = [(a, b) for a in range(3) for b in range(2)]
    results = {}
    for node in nodes:
        fs = base.rollup(node)
        res = model.evaluate(fs)
        bound = model.finer_violations(fs, res)
        assert bound == model.finer_violations(fs)  # reusing the distances changes nothing
        results[node] = (int(fs.counts[res.violating].sum()), bound)
        # the bound holds at the node itself
        assert bound <= results[node][0] + 1e-9
    for coarse in nodes:
        for fine in nodes:
            if fine[0] <= coarse[0] and fine[1] <= coarse[1]:
                assert results[fine][0] >= results[coarse][1] - 1e-9, (fine, coarse)


def largest_t_close_share_lp(p: np.ndarray, q: np.ndarray, t: float) -> float:
    """Reference: max w s.t. some a with w a <= p, sum a = 1 has 1/2 |a - q|_1 <= t (an LP).

    Variables u = w a (0 <= u <= p), w, and s_i >= q_i w - u_i, s_i >= 0 with
    sum s <= t w: since sum u = w, sum_i max(0, q_i w - u_i) = w * D(a, q).
    """
    m = len(p)
    # x = [u (m), s (m), w]
    c = np.zeros(2 * m + 1)
    c[-1] = -1.0
    a_ub = np.zeros((m + 1, 2 * m + 1))
    for i in range(m):  # q_i w - u_i - s_i <= 0
        a_ub[i, i], a_ub[i, m + i], a_ub[i, -1] = -1.0, -1.0, q[i]
    a_ub[m, m : 2 * m] = 1.0  # sum s - t w <= 0
    a_ub[m, -1] = -t
    a_eq = np.zeros((1, 2 * m + 1))
    a_eq[0, :m] = 1.0  # sum u = w
    a_eq[0, -1] = -1.0
    bounds = [(0, pi) for pi in p] + [(0, None)] * m + [(0, 1)]
    res = linprog(c, A_ub=a_ub, b_ub=np.zeros(m + 1), A_eq=a_eq, b_eq=[0.0], bounds=bounds)
    assert res.status == 0
    return float(res.x[-1])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    classes=st.lists(
        st.lists(st.integers(0, 6), min_size=4, max_size=4).filter(lambda r: sum(r) > 0),
        min_size=1,
        max_size=6,
    ),
    t=st.sampled_from([0.0, 0.05, 0.1, 0.2, 0.3, 0.5]),
)
def test_t_close_share_equals_lp(classes, t):
    """The equal-distance share (TCloseness._t_close_share) is the LP optimum, class by class."""
    rows = [
        (f"g{c}", f"v{v}")
        for c, row in enumerate(classes)
        for v, k in enumerate(row)
        for _ in range(k)
    ]
    df = pd.DataFrame(rows, columns=["g", "s"])
    fs = frequency_set(df, ["g"], sensitive=["s"])
    model = TCloseness("s", t)
    model.prepare(fs)
    h = fs.sensitive["s"].toarray().astype(float)
    got = model._t_close_share(fs.sensitive["s"])
    for c in range(fs.n_classes):
        expected = largest_t_close_share_lp(h[c] / h[c].sum(), model._overall, t)
        assert got[c] == pytest.approx(expected, abs=1e-6)


def test_t_closeness_finer_violation_bound_by_hand():
    """Classes {x, x}, {x, y}, {y, y}; q = (1/2, 1/2); equal distance; t = 0.2.

    D = 1/2 (|p_x - 1/2| + |p_y - 1/2|): 1/2, 0, 1/2. D_max(C) = 1/2 (the point mass of
    x or y). Bound = 2 (1/2 - 0.2) / (1/2 - 0.2) + the same = 4 records: the two violating
    classes, which every finer node (single records, D = 1/2 each) still violates.
    """
    df = pd.DataFrame({"g": ["a", "a", "b", "b", "c", "c"], "s": ["x", "x", "x", "y", "y", "y"]})
    fs = frequency_set(df, ["g"], sensitive=["s"])
    model = TCloseness("s", 0.2)
    model.prepare(fs)
    np.testing.assert_allclose(model.distances(fs), [0.5, 0.0, 0.5], atol=1e-15)
    assert model._max_distance == pytest.approx(0.5, abs=1e-15)
    res = model.evaluate(fs)
    assert res.violating.tolist() == [True, False, True]
    bound = model.finer_violations(fs, res)
    assert bound == pytest.approx(4.0, rel=1e-6)
    assert bound <= 4.0  # the slack only ever lowers the bound
    # a monotonic model's bound is its own violating records (2-anonymity: none here)
    k2 = KAnonymity(2)
    assert k2.finer_violations(fs, k2.evaluate(fs)) == 0.0
    k3 = KAnonymity(3)
    assert k3.finer_violations(fs, k3.evaluate(fs)) == 6.0


# ------------------------------------------------------------------ monotonicity, selection


@SETTINGS
@given(df=tables(), hierarchy=qa_hierarchies(), k=st.integers(1, 5), l=st.integers(1, 3))
def test_k_anonymity_and_distinct_l_violations_are_monotone_under_rollup(df, hierarchy, k, l):
    qb = Hierarchy([[f"b{i}", "*"] for i in range(3)], "qb")
    fine = frequency_set(df, ["qa", "qb"], sensitive=["s"], hierarchies={"qa": hierarchy, "qb": qb})
    for model in (KAnonymity(k), LDiversity("s", l)):
        assert model.monotonic
        v_fine = model.evaluate(fine).violating
        for levels in [(1, 0), (2, 0), (0, 1), (1, 1), (2, 1)]:
            coarse = fine.rollup(levels)
            v_coarse = model.evaluate(coarse).violating
            # a class that satisfies the model still does in its coarser class
            assert not (v_coarse[coarse.parent_map] & ~v_fine).any()
            # and rolling up further from there agrees with rolling up at once
            top = coarse.rollup((2, 1))
            assert np.array_equal(
                model.evaluate(top).violating, model.evaluate(fine.rollup((2, 1))).violating
            )


@SETTINGS
@given(df=tables(), k=st.integers(1, 6), l=st.integers(1, 3))
def test_selecting_non_violating_classes_satisfies_the_model(df, k, l):
    fs = frequency_set(df, ["qa", "qb"], sensitive=["s"])
    for model in (KAnonymity(k), LDiversity("s", l)):
        res = model.evaluate(fs)
        kept = fs.select(~res.violating)
        again = model.evaluate(kept)
        assert again.satisfied and kept.n_classes == int((~res.violating).sum())
        assert kept.n_records == int(fs.counts[~res.violating].sum())


# ------------------------------------------------------------------ LKC-privacy


@SETTINGS
@given(
    df=tables(),
    L=st.integers(1, 2),
    K=st.integers(1, 4),
    C=st.sampled_from([0.34, 0.5, 0.75, 1.0]),
    data=st.data(),
)
def test_lkc_equals_row_based_reference(df, L, K, C, data):  # noqa: N803
    present = sorted(set(df["s"]))
    sens = data.draw(st.lists(st.sampled_from(present), min_size=1, max_size=2, unique=True))
    fs = frequency_set(df, ["qa", "qb"], sensitive=["s"])
    res = LKCPrivacy(L, K, C, {"s": sens}).evaluate(fs)
    qis = ["qa", "qb"]
    bad_row = np.zeros(len(df), dtype=bool)
    for i in range(len(df)):
        for size in range(1, min(L, 2) + 1):
            for subset in combinations(qis, size):
                match = np.ones(len(df), dtype=bool)
                for col in subset:
                    match &= (df[col] == df[col].iloc[i]).to_numpy()
                n = int(match.sum())
                conf = max(float(np.sum(df["s"][match] == s)) / n for s in sens)
                if n < K or conf > C:
                    bad_row[i] = True
    assert np.array_equal(res.violating[fs.row_class()], bad_row)


# ------------------------------------------------------------------ population models


@SETTINGS
@given(pop=tables(min_rows=3, max_rows=30), hierarchy=qa_hierarchies(), data=st.data())
def test_delta_presence_and_k_map_equal_pandas_join(pop, hierarchy, data):
    take = np.array(data.draw(st.lists(st.booleans(), min_size=len(pop), max_size=len(pop))))
    if not take.any():
        take[0] = True
    sample = pop[take].reset_index(drop=True)
    base = frequency_set(sample, ["qa", "qb"], hierarchies={"qa": hierarchy})
    dp = DeltaPresence(0.2, 0.6, pop)
    dp.prepare(base)
    km = KMap(3, population=pop)
    km.prepare(base)
    # levels in any order: the population's roll-ups are cached between evaluations
    for level in data.draw(st.permutations([0, 1, 2])):
        fs = base.rollup((level, 0))
        gen = {v: hierarchy.generalize([v], level)[0] for v in pop["qa"].unique()}
        pop_sizes = pop.assign(qa=pop["qa"].map(gen)).groupby(["qa", "qb"]).size()
        labels = fs.labels()
        pcount = np.array(
            [pop_sizes[(a, b)] for a, b in zip(labels["qa"], labels["qb"], strict=True)]
        )
        delta = fs.counts / pcount
        empty = len(pop_sizes) - fs.n_classes
        for key_limit in (presence._KEY_LIMIT, 1):  # binary search on keys; grouping codes
            with patch.object(presence, "_KEY_LIMIT", key_limit):
                np.testing.assert_allclose(dp.deltas(fs), delta)
                res = dp.evaluate(fs)
                assert res.violating.tolist() == ((delta < 0.2) | (delta > 0.6)).tolist()
                assert res.details["empty_population_classes"] == empty
                assert km.evaluate(fs).violating.tolist() == (pcount < 3).tolist()


@pytest.mark.parametrize("delta_max", [0.0, 0.1, 0.15, 0.2, 0.25, 1 / 3, 0.5, 1 / 7, 0.7, 1.0])
def test_delta_presence_population_bound_is_the_fewest_safe_population(delta_max):
    """``m`` of minimal_population_class_size: every population class smaller than ``m`` has
    ``1 / p > delta_max`` in floating point (any released count violates), and ``m`` itself
    does not (or, with delta_max = 0, every class violates)."""
    pop = pd.DataFrame({"qa": ["a0", "a1", "a1", "a2"] * 3, "qb": ["x", "y", "x", "y"] * 3})
    base = frequency_set(pop.iloc[:4], ["qa", "qb"])
    dp = DeltaPresence(0.0, delta_max, pop)
    assert dp.minimal_population_class_size() is None  # not prepared
    dp.prepare(base)
    bound = dp.minimal_population_class_size()
    if delta_max == 1.0:
        assert bound is None  # every population class of one record or more can hold
        return
    assert bound is not None
    classes, fewest = bound
    assert classes.n_records == len(pop)
    if delta_max == 0.0:
        assert fewest == len(pop) + 1
        return
    assert 1.0 / fewest <= delta_max
    assert all(1.0 / p > delta_max for p in range(1, fewest))
    km = KMap(4, population=pop)
    km.prepare(base)
    assert km.minimal_population_class_size() == (km._index.classes, 4)
    km1 = KMap(1, population=pop)
    km1.prepare(base)
    assert km1.minimal_population_class_size() is None


@pytest.mark.parametrize("estimator", ["poisson", "zero_truncated_poisson"])
def test_derived_k_is_the_estimators_quantile(estimator):
    """ARX's loops equal closed quantiles: Poisson ``ppf(1 - alpha) + 2``; zero-truncated
    Poisson: the smallest ``x >= 1`` with ``(F(x) - F(0)) / (1 - F(0)) >= 1 - alpha``, + 1."""
    for k in (1, 2, 5, 20, 50):
        for f in (0.01, 0.1, 0.5, 1.0):
            for alpha in (0.01, 0.05, 0.2):
                m = KMap(k, estimator=estimator, sampling_fraction=f, significance_level=alpha)
                dist = poisson(f * k)
                if estimator == "poisson":
                    expected = int(dist.ppf(1 - alpha)) + 2
                else:
                    x = np.arange(1, 400)
                    trunc = (dist.cdf(x) - dist.pmf(0)) / (1 - dist.pmf(0))
                    expected = int(x[np.argmax(trunc >= 1 - alpha - 1e-15)]) + 1
                assert m.estimated_k == expected
                assert m.derived_k == min(k, expected)
