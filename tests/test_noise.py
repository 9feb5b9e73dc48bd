"""Additive noise (Brand 2002, Kim 1986), multiplicative noise, rounding, resampling (Heer)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import DataError
from sdckit.masking.noise_addition import noise
from sdckit.masking.other import multiplicative_noise, resampling, rounding


def _corr_data(n=200_000, seed=0):
    rng = np.random.default_rng(seed)
    cov = np.array([[4.0, 1.2, -0.8], [1.2, 1.0, 0.3], [-0.8, 0.3, 2.0]])
    x = rng.multivariate_normal([10.0, -3.0, 100.0], cov, size=n)
    return pd.DataFrame(x, columns=["a", "b", "c"])


def test_uncorrelated_noise_variance_is_alpha_times_variance():
    df = _corr_data()
    res = noise(df, ["a", "b", "c"], alpha=0.25, method="uncorrelated", seed=1)
    e = res.data.to_numpy() - df.to_numpy()
    np.testing.assert_allclose(e.var(axis=0, ddof=1), 0.25 * df.var().to_numpy(), rtol=0.02)
    # independent noise: off-diagonal noise correlation ~ 0
    assert abs(np.corrcoef(e, rowvar=False)[0, 1]) < 0.01
    sd = res.details["noise_sd"]
    assert sd["a"] == pytest.approx(0.5 * df["a"].std())
    np.testing.assert_allclose(res.data.mean(), df.mean(), atol=0.02)


def test_correlated_noise_preserves_correlations():
    df = _corr_data()
    res = noise(df, ["a", "b", "c"], alpha=0.5, method="correlated", seed=2)
    S = df.cov().to_numpy()
    np.testing.assert_allclose(np.array(res.details["noise_covariance"]), 0.5 * S)
    np.testing.assert_allclose(res.data.cov().to_numpy(), 1.5 * S, rtol=0.03, atol=0.01)
    np.testing.assert_allclose(res.data.corr().to_numpy(), df.corr().to_numpy(), atol=0.01)


def test_kim_transformation_parameters_and_unbiased_covariance():
    df = _corr_data()
    alpha = 0.3
    res = noise(df, ["a", "b", "c"], alpha=alpha, method="kim", seed=3)
    c = res.details["c"]
    assert c == pytest.approx(1 / np.sqrt(1.3))
    for col in "abc":
        assert res.details["d"][col] == pytest.approx((1 - c) * df[col].mean())
    # masked mean and covariance are unbiased for the original ones
    np.testing.assert_allclose(res.data.mean(), df.mean(), atol=0.02)
    np.testing.assert_allclose(res.data.cov().to_numpy(), df.cov().to_numpy(), rtol=0.03, atol=0.01)
    # bias adjustment for a sub-domain, as published in details
    dom = (df["a"] > 10).to_numpy()
    g = res.data.to_numpy()[dom]
    d = np.array([res.details["d"][k] for k in "abc"])
    np.testing.assert_allclose((g.mean(axis=0) - d) / c, df.to_numpy()[dom].mean(axis=0), atol=0.03)
    cov_a = np.cov(g, rowvar=False) / c**2 - np.array(res.details["noise_covariance"])
    np.testing.assert_allclose(cov_a, np.cov(df.to_numpy()[dom], rowvar=False), atol=0.05)


def test_kim_exact_unbiasedness_over_repetitions():
    # small n: averaging the masked covariance over many seeds approaches S exactly
    df = _corr_data(n=40, seed=5)
    covs = [
        noise(df, ["a", "b"], 1.0, "kim", seed=s).data[["a", "b"]].cov().to_numpy()
        for s in range(800)
    ]
    np.testing.assert_allclose(
        np.mean(covs, axis=0), df[["a", "b"]].cov().to_numpy(), rtol=0.05, atol=0.03
    )


@pytest.mark.parametrize("method", ["uncorrelated", "correlated", "kim"])
def test_noise_seeded_missing_kept_input_untouched(method):
    df = pd.DataFrame(
        {"a": [1.0, 2.0, np.nan, 4.0, 5.0], "b": [2.0, 1.0, 0.0, 3.0, 9.0], "s": list("vwxyz")}
    )
    copy = df.copy()
    r1 = noise(df, ["a", "b"], 0.1, method, seed=8)
    r2 = noise(df, ["a", "b"], 0.1, method, seed=8)
    pd.testing.assert_frame_equal(r1.data, r2.data)
    pd.testing.assert_frame_equal(df, copy)
    assert np.isnan(r1.data["a"].iloc[2])
    assert r1.data["s"].tolist() == list("vwxyz")
    assert r1.record()["parameters"]["method"] == method


def test_noise_input_errors():
    df = pd.DataFrame({"a": [1.0, 2.0], "s": ["1", "x"]})
    with pytest.raises(DataError, match="column 's' has the non-numeric value 'x' \\(row 2\\)"):
        noise(df, ["a", "s"])
    with pytest.raises(DataError, match="alpha"):
        noise(df, "a", alpha=0)
    with pytest.raises(DataError, match="unknown method 'gauss'"):
        noise(df, "a", method="gauss")
    with pytest.raises(DataError, match="fewer than 2 rows"):
        noise(pd.DataFrame({"a": [1.0, np.nan]}), "a", method="correlated")


# --------------------------------------------------------------------------- multiplicative


def test_multiplicative_noise_mean_one_and_zero_stays_zero():
    n = 200_000
    df = pd.DataFrame({"x": np.full(n, 50.0), "z": np.zeros(n)})
    res = multiplicative_noise(df, ["x", "z"], sd=0.2, seed=4)
    ratio = res.data["x"] / 50.0
    assert abs(ratio.mean() - 1) < 0.002
    assert abs(ratio.std() - 0.2) < 0.002
    assert (res.data["z"] == 0).all()
    pd.testing.assert_frame_equal(res.data, multiplicative_noise(df, ["x", "z"], 0.2, 4).data)
    with pytest.raises(DataError, match="sd"):
        multiplicative_noise(df, "x", sd=-1)


# --------------------------------------------------------------------------- rounding


def test_round_to_base_hand_values():
    df = pd.DataFrame({"x": [12.5, -12.5, 7.0, 2.4, np.nan], "i": [12, 13, 17, 0, 3]})
    res = rounding(df, ["x", "i"], 5)
    assert res.data["x"].tolist()[:4] == [15.0, -10.0, 5.0, 0.0]
    assert np.isnan(res.data["x"].iloc[4])
    assert res.data["i"].tolist() == [10, 15, 15, 0, 5]
    assert res.data["i"].dtype == df["i"].dtype
    assert res.details["n_changed"] == {"x": 4, "i": 4}
    dec = rounding(pd.DataFrame({"x": [0.15, 0.25, 0.349, 1.0]}), "x", 0.1)
    assert dec.data["x"].tolist() == [0.2, 0.3, 0.3, 1.0]


def test_round_to_base_errors():
    with pytest.raises(DataError, match="base"):
        rounding(pd.DataFrame({"x": [1.0]}), "x", 0)
    with pytest.raises(DataError, match="non-numeric"):
        rounding(pd.DataFrame({"x": ["a"]}), "x", 1)


# --------------------------------------------------------------------------- resampling


def test_resample_single_sample_returns_sorted_bootstrap_by_rank():
    df = pd.DataFrame({"x": [5.0, 1.0, 3.0, 9.0, 7.0]})
    res = resampling(df, "x", t=1, seed=0)
    y = res.data["x"].to_numpy()
    boot = np.sort(df["x"].to_numpy()[np.random.default_rng(0).integers(0, 5, 5)])
    # the record of rank j gets the j-th smallest value of the (single) bootstrap sample
    assert y[np.argsort(df["x"].to_numpy())].tolist() == boot.tolist()


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(-1e3, 1e3), min_size=1, max_size=50),
    st.integers(1, 6),
    st.integers(0, 10**6),
)
def test_resample_keeps_order_and_range(vals, t, seed):
    df = pd.DataFrame({"x": vals})
    res = resampling(df, "x", t=t, seed=seed)
    x, y = df["x"].to_numpy(), res.data["x"].to_numpy()
    order = np.argsort(x, kind="stable")
    assert np.all(np.diff(y[order]) >= -1e-9 * (1 + np.abs(y[order][1:])))
    assert y.min() >= x.min() - 1e-9 and y.max() <= x.max() + 1e-9
    np.testing.assert_array_equal(y, resampling(df, "x", t=t, seed=seed).data["x"].to_numpy())


def test_resample_preserves_mean_roughly_and_missing():
    x = np.random.default_rng(3).exponential(10, 50_000)
    x[::1000] = np.nan
    res = resampling(pd.DataFrame({"x": x}), "x", t=5, seed=1)
    y = res.data["x"].to_numpy()
    assert np.array_equal(np.isnan(y), np.isnan(x))
    assert abs(np.nanmean(y) - np.nanmean(x)) < 0.15
    with pytest.raises(DataError, match="t=0"):
        resampling(pd.DataFrame({"x": x}), "x", t=0)
