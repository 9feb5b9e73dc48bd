"""DP mechanisms: output distributions, grid outputs, costs, randomness labels, validation."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from sdckit import dp
from sdckit.dp import Accountant, BudgetExhausted, PrivacyCost
from sdckit.dp.randomness import Randomness
from sdckit.dp.selection import exponential_indices, noisy_max_indices
from sdckit.dp.sparse_vector import first_above
from sdckit.errors import DataError, ParameterError


def dlap_pmf(scale: float, z: np.ndarray) -> np.ndarray:
    p = math.exp(-1.0 / scale)
    return (1 - p) / (1 + p) * p ** np.abs(z)


# --- additive noise --------------------------------------------------------------------------


def test_laplace_vector_output_is_laplace_noise_on_the_grid():
    d = 50_000
    truth = np.linspace(-3.0, 3.0, d)
    res = dp.laplace(truth, sensitivity=d, epsilon=2.0, seed=21)  # L1 sensitivity d
    step = res.parameters["granularity"]
    assert step == 2.0**-10  # largest power of two <= d / (1024 d)
    assert np.all(res.value / step == np.round(res.value / step))  # every output on the grid
    # grid sensitivity ceil(d / step) + d - 1, noise scale (that / eps) * step, ~ d / eps
    assert res.parameters["grid_sensitivity"] == d * 1024 + d - 1
    assert res.parameters["scale"] == pytest.approx((d * 1024 + d - 1) / 2.0 * step, rel=1e-9)
    noise = res.value - truth
    assert stats.kstest(noise, stats.laplace(scale=res.parameters["scale"]).cdf).pvalue > 1e-3
    assert res.cost == PrivacyCost.pure(2.0) and res.randomness == "seeded"


def test_laplace_scalar_rounds_once_and_keeps_scale():
    res = dp.laplace(0.1, sensitivity=1.0, epsilon=0.5, seed=2, granularity=2**-4)
    assert res.parameters["grid_sensitivity"] == 16
    assert res.parameters["scale"] == 2.0  # 16 / 0.5 grid steps of 1/16
    assert (res.value * 16) == round(res.value * 16)
    assert isinstance(res.value, float)


def test_gaussian_vector_output_is_gaussian_noise():
    d = 40_000
    res = dp.gaussian(np.zeros(d), sensitivity=1.0, rho=0.5, granularity=2**-6, seed=22)
    # grid L2 sensitivity 1/g + ceil(sqrt(d)) = 64 + 200; sigma = that / sqrt(2 rho) * g
    assert res.parameters["grid_sensitivity"] == 264.0
    assert res.parameters["sigma"] == pytest.approx(264 / 64, rel=1e-5)
    assert stats.kstest(res.value, stats.norm(scale=res.parameters["sigma"]).cdf).pvalue > 1e-3
    assert res.cost.rho == 0.5 and res.cost.epsilon is None


def test_gaussian_from_epsilon_delta_states_both_costs():
    res = dp.gaussian(3.0, 1.0, epsilon=1.0, delta=1e-6, seed=1)
    assert res.cost.epsilon == 1.0 and res.cost.delta == 1e-6
    assert res.cost.rho == pytest.approx(dp.rho_for_approx_dp(1.0, 1e-6))
    # a scalar's grid sensitivity is ceil(1 / g) = 1024 steps; sigma ~ 1 / sqrt(2 rho)
    assert res.parameters["sigma"] == pytest.approx(1 / math.sqrt(2 * res.cost.rho), rel=1e-5)


def test_discrete_laplace_mechanism_distribution():
    res = dp.discrete_laplace(np.zeros(100_000, dtype=int), 2, 0.5, seed=23)
    assert res.value.dtype == np.int64
    scale = res.parameters["scale"]
    assert scale == 4.0  # 2 / 0.5, already dyadic: exact
    support = np.arange(-30, 31)
    observed = np.array(
        [np.sum(res.value == z) for z in support] + [np.sum(np.abs(res.value) > 30)]
    )
    probs = dlap_pmf(scale, support)
    expected = np.append(probs, 1 - probs.sum()) * res.value.size
    assert stats.chisquare(observed, expected).pvalue > 1e-3


@pytest.mark.parametrize("scale", [0.05, 0.3, 1.0, 2.5, 10.0, 123.0])
def test_discrete_laplace_variance_is_the_sum_over_the_pmf(scale):
    from sdckit.dp.mechanisms import discrete_laplace_variance

    # sum of z**2 P(z) over |z| <= 60 b + 60: the rest is below exp(-60) relative
    z = np.arange(-int(60 * scale) - 60, int(60 * scale) + 61, dtype=np.float64)
    exact = float(np.sum(z * z * dlap_pmf(scale, z)))
    assert discrete_laplace_variance(scale) == pytest.approx(exact, rel=1e-12)
    assert discrete_laplace_variance(Fraction(scale)) == discrete_laplace_variance(scale)
    assert discrete_laplace_variance(scale) == pytest.approx(
        stats.dlaplace(1.0 / scale).var(), rel=1e-9
    )
    assert discrete_laplace_variance(scale) < 2 * scale**2  # the continuous Laplace's


def test_discrete_laplace_variance_limits():
    from sdckit.dp.mechanisms import discrete_laplace_variance

    # b = 1: 2 e**-1 / (1 - e**-1)**2 = 1.8413..., not 2 b**2 = 2
    assert discrete_laplace_variance(1) == pytest.approx(
        2 * math.exp(-1) / (1 - math.exp(-1)) ** 2, rel=1e-15
    )
    # large b: 2 b**2 - 1/6 + O(b**-2), kept to full precision by expm1
    assert discrete_laplace_variance(1e6) == pytest.approx(2e12 - 1 / 6, abs=1e-3)
    assert discrete_laplace_variance(1e-3) == 0.0  # P(Z != 0) = 2 e**-1000 underflows
    with pytest.raises(ParameterError, match="scale"):
        discrete_laplace_variance(0)


def test_discrete_gaussian_mechanism_distribution():
    res = dp.discrete_gaussian(np.full(100_000, 7), 1, rho=0.02, seed=24)
    assert res.parameters["sigma"] == pytest.approx(5.0)  # 1 / sqrt(0.04)
    z = res.value - 7
    support = np.arange(-15, 16)
    w = np.exp(-(support.astype(float) ** 2) / 50.0)
    norm = np.exp(-(np.arange(-200, 201) ** 2) / 50.0).sum()
    observed = np.append([np.sum(z == k) for k in support], np.sum(np.abs(z) > 15))
    expected = np.append(w / norm, 1 - w.sum() / norm) * z.size
    assert stats.chisquare(observed, expected).pvalue > 1e-3


def test_discrete_mechanisms_return_ints_for_int_input():
    assert isinstance(dp.discrete_laplace(5, 1, 1.0, seed=1).value, int)
    assert isinstance(dp.discrete_gaussian(5, 1, rho=1.0, seed=1).value, int)


def test_randomness_label():
    assert dp.laplace(1.0, 1, 1.0).randomness == "csprng"
    assert dp.laplace(1.0, 1, 1.0, seed=3).randomness == "seeded"
    assert dp.laplace(1.0, 1, 1.0, seed=np.random.default_rng(3)).randomness == "seeded"


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    values=st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=5),
    eps=st.floats(0.05, 5.0),
)
def test_same_seed_same_release(seed, values, eps):
    a = dp.laplace(values, 10.0, eps, seed=seed).value
    b = dp.laplace(values, 10.0, eps, seed=seed).value
    assert np.array_equal(a, b)
    c = dp.gaussian(values, 10.0, rho=eps, seed=seed).value
    assert np.array_equal(c, dp.gaussian(values, 10.0, rho=eps, seed=seed).value)


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: dp.laplace(float("nan"), 1, 1), DataError),
        (lambda: dp.laplace([[1.0]], 1, 1), DataError),
        (lambda: dp.laplace(1.0, 0, 1), ParameterError),
        (lambda: dp.laplace(1.0, 1, -1), ParameterError),
        (lambda: dp.laplace(1.0, 1, True), ParameterError),
        (lambda: dp.laplace(1.0, 1, 1, granularity=0.3), ParameterError),
        (lambda: dp.laplace(1.0, 1, 1, seed="abc"), ParameterError),
        (lambda: dp.laplace(1.0, 1, 1, accountant="budget"), ParameterError),
        (lambda: dp.laplace(1e300, 1, 1), DataError),
        (lambda: dp.discrete_laplace(2.5, 1, 1), DataError),
        (lambda: dp.gaussian(1.0, 1), ParameterError),
        (lambda: dp.gaussian(1.0, 1, rho=0.1, epsilon=1, delta=1e-6), ParameterError),
        (lambda: dp.gaussian(1.0, 1, epsilon=1, delta=0), ParameterError),
        (lambda: dp.discrete_gaussian(1, 1, epsilon=1), ParameterError),
        (lambda: dp.exponential([1, 2], 1, 1, candidates=["a"]), DataError),
        (lambda: dp.exponential([1, 2], 1, 1, monotonic="yes"), ParameterError),
        (lambda: dp.randomized_response(["z"], ["a", "b"], 1.0), DataError),
        (lambda: dp.randomized_response(["a"], ["a"], 1.0), ParameterError),
        (lambda: dp.randomized_response(["a"], ["a", "a"], 1.0), ParameterError),
    ],
)
def test_bad_input_raises_clear_errors(call, error):
    with pytest.raises(error):
        call()


# --- the accountant through the mechanisms ---------------------------------------------------

MECHANISMS = {
    "laplace": lambda acct, rng: dp.laplace(1.0, 1, 0.5, accountant=acct, seed=rng),
    "discrete_laplace": lambda acct, rng: dp.discrete_laplace(1, 1, 0.5, accountant=acct, seed=rng),
    "gaussian": lambda acct, rng: dp.gaussian(
        1.0, 1, epsilon=0.5, delta=1e-7, accountant=acct, seed=rng
    ),
    "discrete_gaussian": lambda acct, rng: dp.discrete_gaussian(
        1, 1, epsilon=0.5, delta=1e-7, accountant=acct, seed=rng
    ),
    "exponential": lambda acct, rng: dp.exponential([1, 2], 1, 0.5, accountant=acct, seed=rng),
    "report_noisy_max": lambda acct, rng: dp.report_noisy_max(
        [1, 2], 1, 0.5, accountant=acct, seed=rng
    ),
    "randomized_response": lambda acct, rng: dp.randomized_response(
        ["a"], ["a", "b"], 0.5, accountant=acct, seed=rng
    ),
    "above_threshold": lambda acct, rng: dp.above_threshold(
        [1, 2], 5, 0.5, accountant=acct, seed=rng
    ),
    "AboveThreshold": lambda acct, rng: dp.AboveThreshold(5, 0.5, accountant=acct, seed=rng),
}


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_every_mechanism_charges_and_refuses_before_drawing(name):
    acct = Accountant(1.0, 1e-6)
    MECHANISMS[name](acct, 1)
    MECHANISMS[name](acct, 2)
    assert acct.spent().epsilon == pytest.approx(1.0)
    assert len(acct.ledger) == 2
    rng = np.random.default_rng(9)
    state = rng.bit_generator.state
    with pytest.raises(BudgetExhausted):
        MECHANISMS[name](acct, rng)
    assert rng.bit_generator.state == state
    assert len(acct.ledger) == 2


def test_rho_gaussian_needs_a_zcdp_accountant():
    with pytest.raises(ParameterError, match="zcdp"):
        dp.gaussian(1.0, 1, rho=0.1, accountant=Accountant(1.0))
    acct = Accountant(1.0, 1e-6, composition="zcdp")
    dp.gaussian(1.0, 1, rho=0.01, accountant=acct)
    dp.laplace(1.0, 1, 0.1, accountant=acct)  # pure charges count as eps^2 / 2
    assert acct.spent().rho == pytest.approx(0.015)


# --- selection -------------------------------------------------------------------------------


def test_exponential_mechanism_distribution():
    scores = np.array([0, 3, 1, 5, 5])  # grid units, sensitivity 2
    eps = Fraction(1)
    draws = exponential_indices(
        scores, Fraction(2), eps, monotonic=False, size=100_000, rnd=Randomness(31)
    )
    weights = np.exp(scores / 4.0)  # exp(eps u / (2 * 2))
    observed = np.bincount(draws, minlength=5)
    assert stats.chisquare(observed, weights / weights.sum() * draws.size).pvalue > 1e-3


def test_exponential_mechanism_monotonic_uses_the_full_epsilon():
    scores = np.array([0, 1, 2])
    draws = exponential_indices(
        scores, Fraction(1), Fraction(1, 2), monotonic=True, size=60_000, rnd=Randomness(32)
    )
    weights = np.exp(scores * 0.5)
    assert stats.chisquare(np.bincount(draws), weights / weights.sum() * draws.size).pvalue > 1e-3


def test_exponential_public_api_picks_candidates():
    res = dp.exponential([0.0, 100.0, 0.0], 1.0, 5.0, candidates=["a", "b", "c"], seed=1)
    assert res.value == "b"  # P(other) ~ 2 exp(-250)
    assert res.parameters["granularity"] == 2.0**-10


def test_report_noisy_max_distribution_two_candidates():
    scale = 3.0
    draws = noisy_max_indices(np.array([0, 2]), Fraction(3), 100_000, Randomness(33))
    # index 1 wins iff 2 + Z1 > Z0 (index 0 wins ties): P(Z0 - Z1 <= 1)
    z = np.arange(-400, 401)
    pmf = dlap_pmf(scale, z)
    diff = np.convolve(pmf, pmf[::-1])  # pmf of Z0 - Z1 on -800..800
    p_one = diff[np.arange(-800, 801) <= 1].sum()
    assert stats.binomtest(int(draws.sum()), draws.size, p_one).pvalue > 1e-3


def test_report_noisy_max_public_api():
    res = dp.report_noisy_max([1.0, 50.0, 2.0], 1.0, 2.0, seed=4)
    assert res.value == 1 and res.parameters["scale"] == 1.0  # 2 * 1 / 2


# --- randomized response ------------------------------------------------------------------


def test_randomized_response_distribution_and_estimator():
    cats = ["a", "b", "c", "d"]
    eps = 1.0
    res = dp.randomized_response(["a"] * 100_000, cats, eps, seed=41)
    p = math.e / (math.e + 3)
    q = 1 / (math.e + 3)
    observed = [np.sum(res.value == c) for c in cats]
    assert stats.chisquare(observed, np.array([p, q, q, q]) * 100_000).pvalue > 1e-3
    assert res.parameters["keep_probability"] == pytest.approx(p)
    truth = np.array(["a"] * 50_000 + ["b"] * 30_000 + ["d"] * 20_000, dtype=object)
    reports = dp.randomized_response(truth, cats, eps, seed=42).value
    shares = dp.estimate_frequencies(reports, cats, eps)
    np.testing.assert_allclose(shares.to_numpy(), [0.5, 0.3, 0.0, 0.2], atol=0.015)


def test_randomized_response_scalar():
    res = dp.randomized_response("b", ["a", "b"], 10.0, seed=1)
    assert res.value in ("a", "b")


# --- sparse vector ------------------------------------------------------------------------


def test_above_threshold_single_query_probability():
    # answer 3, threshold 5 (grid units), sensitivity 1, eps = 1: rho ~ DLap(2), nu ~ DLap(4)
    hits = first_above(np.array([3]), 5, 1, Fraction(1), 100_000, Randomness(51))
    z = np.arange(-300, 301)
    rho, nu = dlap_pmf(2.0, z), dlap_pmf(4.0, z)
    diff = np.convolve(nu, rho[::-1])  # nu - rho on -600..600
    p_above = diff[np.arange(-600, 601) >= 2].sum()  # 3 + nu >= 5 + rho
    assert stats.binomtest(int(np.sum(hits == 0)), hits.size, p_above).pvalue > 1e-3


def test_above_threshold_interactive_halts_after_the_first_above():
    acct = Accountant(1.0)
    run = dp.AboveThreshold(10.0, 1.0, accountant=acct, seed=3)
    assert acct.spent().epsilon == 1.0  # charged once, up front
    answers = [run.query(v) for v in [-100.0, -100.0, 1000.0]]
    assert answers == [False, False, True] and run.halted
    with pytest.raises(BudgetExhausted):
        run.query(0.0)
    assert len(acct.ledger) == 1


def test_above_threshold_function():
    res = dp.above_threshold([-50.0, -40.0, 200.0, 300.0], 0.0, 1.0, seed=5)
    assert res.value == 2
    assert dp.above_threshold([-500.0, -400.0], 0.0, 1.0, seed=5).value is None


def test_noise_source_ignores_the_seed_unless_told_it_is_insecure():
    """A release made from a job draws its noise from the CSPRNG whatever the seed; only
    insecure_reproducible_noise draws it from the seed, under a kind that says so."""
    from sdckit.dp.randomness import INSECURE_KIND, noise_source

    assert noise_source(7).kind == "csprng"
    assert noise_source(np.random.default_rng(7)).kind == "csprng"
    draws = [dp.discrete_gaussian([0] * 20, 1, rho=0.01, seed=noise_source(7)).value for _ in "ab"]
    assert not np.array_equal(*draws)
    insecure = [noise_source(7, insecure_reproducible_noise=True) for _ in "ab"]
    assert insecure[0].kind == INSECURE_KIND
    released = [dp.discrete_gaussian([0] * 20, 1, rho=0.01, seed=r) for r in insecure]
    np.testing.assert_array_equal(released[0].value, released[1].value)
    assert released[0].randomness == INSECURE_KIND
    with pytest.raises(ParameterError, match="needs a seed"):
        noise_source(None, insecure_reproducible_noise=True)
    with pytest.raises(ParameterError, match="true or false"):
        noise_source(7, insecure_reproducible_noise="yes")


def test_largest_laplace_scale_and_the_epsilon_floor():
    """MAX_LAPLACE_SCALE is exactly the largest scale laplace_noise draws (its dyadic rounding
    stays below 2**51), and laplace_epsilon_floor is the epsilon that reaches it."""
    from sdckit.dp._numbers import floor_log2
    from sdckit.dp.mechanisms import (
        MAX_LAPLACE_SCALE,
        laplace_epsilon_floor,
        laplace_noise,
        laplace_scale,
    )

    assert MAX_LAPLACE_SCALE == 2**51 - 2**19
    assert laplace_scale(MAX_LAPLACE_SCALE) == MAX_LAPLACE_SCALE
    assert floor_log2(laplace_scale(MAX_LAPLACE_SCALE + Fraction(1, 2**40))) == 51
    assert laplace_noise(3, MAX_LAPLACE_SCALE, Randomness(7)).shape == (3,)
    with pytest.raises(ParameterError, match="too large"):
        laplace_noise(1, MAX_LAPLACE_SCALE + Fraction(1, 2**40), Randomness(7))
    assert laplace_epsilon_floor(Fraction(1280000)) == Fraction(1280000) / MAX_LAPLACE_SCALE
