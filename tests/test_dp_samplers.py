"""Exact DP samplers (Canonne, Kamath & Steinke 2020): goodness of fit against the exact pmfs.

Each sampler draws 10**5 values with a fixed seed and a chi-square test compares the counts with
the exact distribution (cells pooled so that every expected count is >= 20); the p-value must
exceed 1e-3. A sampler off by a few percent anywhere fails these tests.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from sdckit.dp import samplers
from sdckit.dp.randomness import Randomness
from sdckit.errors import ParameterError

N = 100_000


def chi_square_p(draws: np.ndarray, pmf, lo: int, hi: int) -> float:
    """p-value of draws against ``pmf`` on the integers, cells below lo / above hi pooled."""
    support = np.arange(lo, hi + 1)
    probs = np.array([pmf(int(z)) for z in support])
    expected = [1.0 - probs.sum()]  # the tails, pooled in one cell
    observed = [int(np.sum((draws < lo) | (draws > hi)))]
    inside = draws[(draws >= lo) & (draws <= hi)] - lo
    counts = np.bincount(inside, minlength=hi - lo + 1)
    acc_e, acc_o = 0.0, 0
    for e, o in zip(probs * draws.size, counts, strict=True):
        acc_e, acc_o = acc_e + e, acc_o + o
        if acc_e >= 20:
            expected.append(acc_e / draws.size)
            observed.append(acc_o)
            acc_e, acc_o = 0.0, 0
    expected[0] += acc_e / draws.size
    observed[0] += acc_o
    exp_counts = np.array(expected) * draws.size
    if exp_counts[0] < 20:  # merge a tiny tail cell into the next
        exp_counts[1] += exp_counts[0]
        observed[1] += observed[0]
        exp_counts, observed = exp_counts[1:], observed[1:]
    return float(stats.chisquare(observed, exp_counts).pvalue)


def dlap_pmf(scale: float):
    p = math.exp(-1.0 / scale)
    return lambda z: (1 - p) / (1 + p) * p ** abs(z)


def dgauss_pmf(sigma2: float):
    width = int(40 * math.sqrt(sigma2)) + 40
    norm = sum(math.exp(-(z * z) / (2 * sigma2)) for z in range(-width, width + 1))
    return lambda z: math.exp(-(z * z) / (2 * sigma2)) / norm


@pytest.mark.parametrize("gamma", [0, Fraction(1, 3), 1, Fraction(7, 3), 4.25])
def test_bernoulli_exp_matches_exp_minus_gamma(gamma):
    draws = samplers.bernoulli_exp(gamma, N, seed=11)
    assert draws.dtype == bool
    p = math.exp(-float(gamma))
    if gamma == 0:
        assert draws.all()
    else:
        assert stats.binomtest(int(draws.sum()), N, p).pvalue > 1e-3


def test_bernoulli_exp_big_rationals_take_the_exact_bignum_path():
    # numerator and denominator beyond 2**63: the lazy binary-expansion comparison
    gamma = Fraction(10**30 + 1, 3 * 10**29)
    draws = samplers.bernoulli_exp(gamma, N, seed=12)
    assert stats.binomtest(int(draws.sum()), N, math.exp(-float(gamma))).pvalue > 1e-3


@pytest.mark.parametrize("scale", [Fraction(1, 2), 1, 2.5, 40])
def test_geometric_pmf(scale):
    draws = samplers.geometric(scale, N, seed=13)
    assert draws.min() >= 0
    p = math.exp(-1.0 / float(scale))
    hi = int(np.quantile(draws, 0.999))
    assert chi_square_p(draws, lambda y: (1 - p) * p**y if y >= 0 else 0.0, 0, hi) > 1e-3


@pytest.mark.parametrize("scale", [1, Fraction(3, 2), 0.3, 10, 1000.5])
def test_discrete_laplace_pmf(scale):
    draws = samplers.discrete_laplace(scale, N, seed=14)
    hi = int(np.quantile(np.abs(draws), 0.999))
    assert chi_square_p(draws, dlap_pmf(float(scale)), -hi, hi) > 1e-3


def test_discrete_laplace_from_the_csprng():
    draws = samplers.discrete_laplace(2, N)  # OS randomness: a different sample each run
    assert chi_square_p(draws, dlap_pmf(2.0), -20, 20) > 1e-6


def test_discrete_laplace_scale_with_a_huge_numerator():
    # scale = t/s with t > 2**63: uniform draws below t go through Python integers
    scale = Fraction(10**20 + 7, 10**19)
    draws = samplers.discrete_laplace(scale, 5_000, seed=15)
    assert chi_square_p(draws, dlap_pmf(float(scale)), -40, 40) > 1e-3


@pytest.mark.parametrize("sigma2", [Fraction(1, 4), 1, 2.5, 20, 1000])
def test_discrete_gaussian_pmf(sigma2):
    draws = samplers.discrete_gaussian(sigma2, N, seed=16)
    hi = int(5 * math.sqrt(float(sigma2))) + 1
    assert chi_square_p(draws, dgauss_pmf(float(sigma2)), -hi, hi) > 1e-3


def test_discrete_gaussian_large_sigma_bignum_path():
    # sigma = 50000: the acceptance exponent's denominator 2 sigma^2 t^2 exceeds 2**63
    sigma = 50_000.0
    draws = samplers.discrete_gaussian(sigma * sigma, 50_000, seed=17)
    # at this sigma, P(Z <= k) = Phi((k + 1/2) / sigma) up to ~exp(-2 pi^2 sigma^2)
    edges = np.arange(-3.0, 3.01, 0.25) * sigma
    observed = np.histogram(draws, bins=np.concatenate([[-np.inf], edges, [np.inf]]))[0]
    cdf = stats.norm.cdf(np.concatenate([[-np.inf], np.floor(edges) - 0.5, [np.inf]]) / sigma)
    assert stats.chisquare(observed, np.diff(cdf) * draws.size).pvalue > 1e-3


def test_small_batches_take_the_one_at_a_time_path_with_the_same_distribution():
    assert samplers.SCALAR_BATCH >= 4
    rng = np.random.default_rng(19)  # one generator, its stream continues across calls
    lap = np.concatenate(
        [samplers.discrete_laplace(Fraction(3, 2), 4, seed=rng) for _ in range(2500)]
    )
    assert chi_square_p(lap, dlap_pmf(1.5), -12, 12) > 1e-3
    gau = np.concatenate([samplers.discrete_gaussian(2.5, 4, seed=rng) for _ in range(2500)])
    assert chi_square_p(gau, dgauss_pmf(2.5), -8, 8) > 1e-3
    csprng = np.concatenate([samplers.discrete_laplace(3, 2) for _ in range(2500)])
    assert chi_square_p(csprng, dlap_pmf(3.0), -20, 20) > 1e-6


def test_exp_weighted_index_distribution():
    gammas = [0, 1, 2, Fraction(1, 2), 5]
    draws = samplers.exp_weighted_index(gammas, N, seed=18)
    weights = np.exp(-np.array([float(g) for g in gammas]))
    observed = np.bincount(draws, minlength=len(gammas))
    assert stats.chisquare(observed, weights / weights.sum() * N).pvalue > 1e-3


@pytest.mark.parametrize("bound", [3, 5, 1000, (1 << 62) - 1])
def test_csprng_uniform_integers_are_uniform(bound):
    draws = Randomness(None).below(bound, 60_000)
    assert draws.min() >= 0 and draws.max() < bound
    k = min(bound, 10)  # the values themselves, or tenths of the range
    cells = draws if bound <= 10 else np.minimum((draws / bound * 10).astype(np.int64), 9)
    observed = np.bincount(cells, minlength=k)
    assert stats.chisquare(observed).pvalue > 1e-6


def test_csprng_uniform_integers_with_one_bound_per_lane():
    bounds = np.array([2, 3, 7, 1000] * 20_000, dtype=np.int64)
    draws = Randomness(None).below(bounds, bounds.size)
    assert np.all((draws >= 0) & (draws < bounds))
    sevens = draws[bounds == 7]
    assert stats.chisquare(np.bincount(sevens, minlength=7)).pvalue > 1e-6


def test_below_int_handles_any_size():
    for rnd in (Randomness(None), Randomness(3)):
        big = 3 * (1 << 100) + 1
        values = [rnd.below_int(big) for _ in range(200)]
        assert all(0 <= v < big for v in values)
        assert max(values) > big // 2  # not stuck in the low bits


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32), scale=st.fractions(Fraction(1, 8), Fraction(50)))
def test_same_seed_same_draws(seed, scale):
    assert np.array_equal(
        samplers.discrete_laplace(scale, 50, seed=seed),
        samplers.discrete_laplace(scale, 50, seed=seed),
    )
    assert np.array_equal(
        samplers.discrete_gaussian(scale, 50, seed=seed),
        samplers.discrete_gaussian(scale, 50, seed=seed),
    )
    rng_a, rng_b = np.random.default_rng(seed), np.random.default_rng(seed)
    assert np.array_equal(
        samplers.bernoulli_exp(scale, 50, seed=rng_a), samplers.bernoulli_exp(scale, 50, seed=rng_b)
    )


def test_different_seeds_differ():
    a = samplers.discrete_laplace(10, 100, seed=1)
    b = samplers.discrete_laplace(10, 100, seed=2)
    assert not np.array_equal(a, b)


@pytest.mark.parametrize(
    "call",
    [
        lambda: samplers.discrete_laplace(0, 5),
        lambda: samplers.discrete_laplace(-1, 5),
        lambda: samplers.discrete_laplace(float("nan"), 5),
        lambda: samplers.discrete_laplace(True, 5),
        lambda: samplers.discrete_laplace(2.0**45, 5),
        lambda: samplers.discrete_gaussian("1", 5),
        lambda: samplers.bernoulli_exp(-1, 5),
        lambda: samplers.geometric(1, -1),
        lambda: samplers.geometric(1, 2.0),
        lambda: samplers.discrete_laplace(1, 5, seed="x"),
        lambda: samplers.discrete_laplace(1, 5, seed=-3),
        lambda: samplers.exp_weighted_index([], 5),
    ],
)
def test_bad_parameters_raise_parameter_error(call):
    with pytest.raises(ParameterError):
        call()


def test_discrete_laplace_speed():
    """The query-server target: 10**5 discrete Laplace draws in well under a second."""
    start = time.perf_counter()
    samplers.discrete_laplace(Fraction(7, 2), N)  # CSPRNG, the default
    elapsed = time.perf_counter() - start
    assert elapsed < 1.5, f"10^5 discrete Laplace draws took {elapsed:.2f} s"
