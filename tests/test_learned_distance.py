"""Tests: worst-case linkage with learned distances (Abril, Navarro-Arribas & Torra 2012)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import SdcInputError
from sdckit.risk.learned_distance import (
    feature_matrix,
    learned_distance_linkage,
    learned_distances,
)


def noisy_attribute_case(n=40, seed=0):
    """Attributes a, b: tiny noise; attribute 'noise': replaced by independent noise."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3))
    y = x + 0.002 * rng.normal(size=(n, 3))
    y[:, 2] = rng.normal(size=n)
    cols = ["a", "b", "noise"]
    return pd.DataFrame(x, columns=cols), pd.DataFrame(y, columns=cols)


def standardized(x, y):
    xv, yv = x.to_numpy(float), y.to_numpy(float)
    mean, sd = xv.mean(axis=0), xv.std(axis=0, ddof=1)
    return (xv - mean) / sd, (yv - mean) / sd


def check_constraints(res, x, y):
    """Every record the MILP counts as linked satisfies d(a_i,b_j) - d(a_i,b_i) >= eps."""
    zx, zy = standardized(x, y)
    n, d = zx.shape
    s = (zx[:, None, :] - zy[None, :, :]) ** 2
    dist = learned_distances(res.family, s.reshape(-1, d), res.parameters).reshape(n, n)
    own = np.diag(dist)
    for i in np.flatnonzero(res.k < 0.5):
        others = np.delete(dist[i] - own[i], i)
        assert others.min() >= res.epsilon * (1 - 1e-4) - 1e-7


def test_noise_attribute_gets_no_weight_and_linkage_is_perfect():
    x, y = noisy_attribute_case()
    res = learned_distance_linkage(x, y, family="weighted_mean", time_limit=30)
    assert res.optimal and res.exact
    assert res.linked_share == 1.0 and res.milp_linked_share == 1.0
    assert res.euclidean_share < 1.0  # the noise column spoils plain Euclidean linkage
    assert res.weights["noise"] < 1e-3
    assert sum(res.weights.values()) == pytest.approx(1.0)
    assert min(res.weights.values()) >= 0.0
    check_constraints(res, x, y)
    out = json.loads(json.dumps(res.to_dict()))
    assert out["linked_share"] == 1.0 and out["mahalanobis_share"] is not None


def test_families_constraints_and_choquet_dominates():
    x, y = noisy_attribute_case(n=30, seed=4)
    y["a"] += np.random.default_rng(9).normal(scale=0.3, size=30)  # make the task harder
    results = {
        fam: learned_distance_linkage(x, y, family=fam, time_limit=30)
        for fam in ("weighted_mean", "owa", "choquet")
    }
    for res in results.values():
        assert res.optimal
        check_constraints(res, x, y)
        assert res.linked_share >= res.milp_linked_share - 1e-12
    owa = results["owa"].parameters
    assert owa.sum() == pytest.approx(1.0) and (owa >= 0).all()
    mu = results["choquet"].weights
    assert mu["a+b+noise"] == pytest.approx(1.0)
    for small, big in (("a", "a+b"), ("b", "a+b"), ("noise", "a+noise"), ("a+b", "a+b+noise")):
        assert mu[small] <= mu[big] + 1e-9  # monotone fuzzy measure
    # the Choquet integral contains weighted means (additive mu) and OWA (symmetric mu)
    best = max(results["weighted_mean"].milp_linked_share, results["owa"].milp_linked_share)
    assert results["choquet"].milp_linked_share >= best - 1e-12


def test_choquet_feature_hand_example():
    # s = (0.3, 0.1, 0.2): ascending 0.1 (attr 1), 0.2 (attr 2), 0.3 (attr 0), so
    # C = 0.1 mu({0,1,2}) + 0.1 mu({0,2}) + 0.1 mu({0}); subset index = bitmask - 1.
    row = feature_matrix("choquet", np.array([[0.3, 0.1, 0.2]])).toarray()[0]
    expected = np.zeros(7)
    expected[[7 - 1, 5 - 1, 1 - 1]] = 0.1
    assert row == pytest.approx(expected)
    # OWA: descending order
    assert feature_matrix("owa", np.array([[0.3, 0.1, 0.2]])).toarray()[0] == pytest.approx(
        [0.3, 0.2, 0.1]
    )


@settings(max_examples=40, deadline=None)
@given(
    s=st.lists(st.floats(0, 10), min_size=3, max_size=3),
    w=st.lists(st.floats(0.01, 1), min_size=3, max_size=3),
)
def test_choquet_reduces_to_weighted_mean_and_owa(s, w):
    s = np.array([s])
    w = np.array(w) / np.sum(w)
    masks = np.arange(1, 8)
    bits = (masks[:, None] >> np.arange(3)) & 1
    additive = bits @ w  # mu(A) = sum of weights in A
    assert learned_distances("choquet", s, additive)[0] == pytest.approx(
        learned_distances("weighted_mean", s, w)[0]
    )
    cum = np.concatenate([[0], np.cumsum(w)])
    symmetric = cum[bits.sum(axis=1)]  # mu(A) = sum of the first |A| OWA weights
    assert learned_distances("choquet", s, symmetric)[0] == pytest.approx(
        learned_distances("owa", s, w)[0]
    )


def test_constraint_generation_reaches_the_complete_optimum():
    x, y = noisy_attribute_case(n=50, seed=2)
    y["b"] += np.random.default_rng(1).normal(scale=0.2, size=50)
    full = learned_distance_linkage(x, y, time_limit=30)
    lazy = learned_distance_linkage(x, y, time_limit=30, n_candidates=2)
    assert lazy.exact and full.exact
    assert lazy.n_constraints < full.n_constraints
    assert lazy.milp_linked_share == pytest.approx(full.milp_linked_share)
    check_constraints(lazy, x, y)


def test_learned_distance_input_errors():
    x, y = noisy_attribute_case(n=10)
    with pytest.raises(SdcInputError, match="family"):
        learned_distance_linkage(x, y, family="minkowski")
    with pytest.raises(SdcInputError, match="time_limit"):
        learned_distance_linkage(x, y, time_limit=0)
    wide = pd.DataFrame(np.random.default_rng(0).normal(size=(10, 11)))
    wide.columns = [f"c{k}" for k in range(11)]
    with pytest.raises(SdcInputError, match="Choquet"):
        learned_distance_linkage(wide, wide, family="choquet")
