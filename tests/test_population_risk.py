"""Tests for sdckit.models.population_estimators: Pitman, Zayatz, SNB and Dankar's decision rule.

Reference values marked "ARX code" come from running the estimator code of ARX 3.x
(``ModelPitman``/``ModelZayatz``/``ModelSNB`` with the ``de.linearbits.newtonraphson`` solver and
ARX's default solver settings, accuracy 1e-6) on OpenJDK 17 with commons-math 3.6.1; ARX itself
publishes no population-uniqueness figures for Adult.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from sdckit.errors import DataError
from sdckit.models import population_estimators as P
from sdckit.models.population_estimators import (
    class_size_distribution,
    dankar,
    pitman,
    population_uniqueness,
    snb,
    zayatz,
)

# n = 28 records, u = 17 classes, c1 = 12 uniques, c2 = 3 doubletons
SMALL = np.array([1] * 12 + [2] * 3 + [3] + [7])


# ---------------------------------------------------------------------------------------
# Independent direct evaluations (plain sums, no digamma identities)
# ---------------------------------------------------------------------------------------


def direct_loglik(sizes: np.ndarray, theta: float, alpha: float) -> float:
    """Pitman log-likelihood of the sample partition (Hoshino 2001), summed term by term."""
    sizes = np.asarray(sizes)
    u, n = sizes.size, int(sizes.sum())
    value = sum(math.log(theta + i * alpha) for i in range(1, u))
    value -= sum(math.log(theta + i) for i in range(1, n))
    value += sum(math.log(k - alpha) for s in sizes for k in range(1, int(s)))
    return value


def direct_score(sizes: np.ndarray, theta: float, alpha: float) -> tuple[float, float]:
    """d logL / d theta and d logL / d alpha, summed term by term (ARX's iterative variant)."""
    sizes = np.asarray(sizes)
    u, n = sizes.size, int(sizes.sum())
    a = sum(1.0 / (theta + i * alpha) for i in range(1, u))
    b = sum(i / (theta + i * alpha) for i in range(1, u))
    d = sum(1.0 / (theta + i) for i in range(1, n))
    e = sum(1.0 / (k - alpha) for s in sizes for k in range(1, int(s)))
    return a - d, b - e


def series_snb_expectations(a: float, b: float, k: float, f: float) -> tuple[float, float]:
    """E[c1], E[c2] under the SNB model by summing P(F = m + 1) P(f = j | F) over m."""
    m = np.arange(0, 20000)
    pop = stats.nbinom.pmf(m, a, b)  # F - 1 ~ NegBin(a, b)
    big_f = m + 1
    e1 = k * np.sum(pop * stats.binom.pmf(1, big_f, f))
    e2 = k * np.sum(pop * stats.binom.pmf(2, big_f, f))
    return float(e1), float(e2)


# ---------------------------------------------------------------------------------------
# Input handling
# ---------------------------------------------------------------------------------------


def test_class_size_distribution_counts_sizes():
    sizes, counts = class_size_distribution(np.array([3, 1, 1, 2, 1, 3]))
    assert sizes.tolist() == [1, 2, 3]
    assert counts.tolist() == [3, 1, 2]
    assert sizes.dtype == np.int64 and counts.dtype == np.int64


@pytest.mark.parametrize(
    "bad",
    [[], [1, 0, 2], [1, -3], [1.5, 2.0], ["a", "b"], [True, False], [1.0, np.nan]],
)
def test_bad_class_sizes_raise_data_error(bad):
    with pytest.raises(DataError, match="class_sizes"):
        zayatz(np.array(bad), 0.5)


def test_integral_float_class_sizes_are_accepted():
    assert zayatz(np.array([1.0, 1.0, 2.0]), 0.5) == zayatz(np.array([1, 1, 2]), 0.5)


@pytest.mark.parametrize("fraction", [0.0, -0.1, 1.5, math.nan, math.inf, "abc", None, True])
@pytest.mark.parametrize("function", [pitman, zayatz, snb, dankar, population_uniqueness])
def test_bad_sampling_fraction_names_the_option(function, fraction):
    with pytest.raises(DataError, match="--sampling-fraction"):
        function(SMALL, fraction)


# ---------------------------------------------------------------------------------------
# Zayatz (1991)
# ---------------------------------------------------------------------------------------


def test_zayatz_hand_computed_two_uniques_one_doubleton():
    # Sizes [1, 1, 2]: n = 4, u = 3, c1 = 2, c2 = 1; f = 1/2 -> N = 8.
    # P(f=1 | F=1) = n/N = 1/2;  P(f=1 | F=2) = 2 C(6,3) / C(8,4) = 40/70 = 4/7.
    # P(F=1 | f=1) = (2/3 * 1/2) / (2/3 * 1/2 + 1/3 * 4/7) = (1/3) / (1/3 + 4/21) = 7/11.
    # Population uniques = c1 * 7/11 / f = 28/11; divided by N = 8: 7/22.
    assert zayatz(np.array([1, 1, 2]), 0.5) == pytest.approx(7 / 22, rel=1e-14)


def test_zayatz_hand_computed_three_uniques_one_triple():
    # Sizes [1, 1, 1, 3]: n = 6, u = 4, c1 = 3; f = 1/2 -> N = 12.
    # P(f=1 | F=1) = 6/12 = 1/2;  P(f=1 | F=3) = 3 C(9,5) / C(12,6) = 378/924 = 9/22.
    # P(F=1 | f=1) = (3 * 1/2) / (3 * 1/2 + 1 * 9/22) = (3/2) / (42/22) = 11/14.
    # Share = c1 * 11/14 / n = 3 * 11/14 / 6 = 11/28.
    assert zayatz(np.array([1, 1, 1, 3]), 0.5) == pytest.approx(11 / 28, rel=1e-14)


def test_zayatz_truncates_a_fractional_population_like_arx():
    # Sizes [1, 1, 2], f = 0.3: N = 4 / 0.3 = 13.33 -> 13 (ARX casts to int).
    # P(f=1|F=2) / P(f=1|F=1) = 2 (1 - (n-1)/(N-1)) = 2 (1 - 3/12) = 3/2.
    # P(F=1 | f=1) = 2 / (2 + 3/2) = 4/7; share = 2 * 4/7 / 4 = 2/7.
    assert zayatz(np.array([1, 1, 2]), 0.3) == pytest.approx(2 / 7, rel=1e-14)


@pytest.mark.parametrize("population,n", [(12, 6), (100, 7), (50, 50), (3016200, 30162)])
def test_hypergeometric_ratio_matches_scipy(population, n):
    r = P._hypergeometric_one_ratio(8, float(n), float(population))
    sizes = np.arange(1, 9)
    pmf = stats.hypergeom.pmf(1, population, sizes, n)
    np.testing.assert_allclose(r, pmf / pmf[0], rtol=1e-9, atol=1e-300)


# ---------------------------------------------------------------------------------------
# SNB (Chen & Keller-McNulty 1998)
# ---------------------------------------------------------------------------------------


def test_shlosser_estimate_hand_computed():
    # Sizes [1, 1, 2] (c1 = 2, c2 = 1, u = 3), q = f = 1/2:
    # sum i q^2 (1-q^2)^(i-1) c_i = 1/4*2 + 2*1/4*3/4 = 7/8
    # sum (1-q)^i ((1+q)^i - 1) c_i = 1/2*1/2*2 + 1/4*5/4 = 13/16
    # sum (1-q)^i c_i = 1 + 1/4 = 5/4;  sum i q (1-q)^(i-1) c_i = 1 + 1/2 = 3/2
    # K = 3 + 2 * (7/8)/(13/16) * ((5/4)/(3/2))^2 = 3 + 2 * 14/13 * 25/36 = 526/117
    h = P._histogram(np.array([1, 1, 2]))
    assert P._shlosser_classes(h, 0.5) == pytest.approx(float(Fraction(526, 117)), rel=1e-14)
    # ARX 3.x: second denominator as sum((1-q)^i (1+q)^i c_i - 1) = (3/2 - 1) + (9/16 - 1) = 1/16
    # K = 3 + 2 * (7/8)/(1/16) * 25/36 = 3 + 175/9 = 202/9
    assert P._shlosser_classes(h, 0.5, arx_compat=True) == pytest.approx(202 / 9, rel=1e-14)


def test_snb_expectations_hand_computed_geometric_case():
    # a = 1 (geometric population sizes), b = 1/2, f = 1/2, K = 1: x = (1-f)(1-b) = 1/4.
    # E[c1] = f (b/(1-x))^a (1 + a x/(1-x)) = 1/2 * 2/3 * 4/3 = 4/9
    #       (= sum_k 0.5^k * k 0.5^k = sum_k k/4^k = (1/4)/(3/4)^2)
    # E[c2] = a f^2 b^a (1-b)(2-(1-a)x) / (2 (1-x)^(a+2)) = 1/16 / (27/64) = 4/27
    #       (= sum_k 0.5^k C(k,2) 0.5^k = (1/16)/(3/4)^3)
    e1, e2 = P._snb_expected(1.0, 0.5, 1.0, 0.5)
    assert e1 == pytest.approx(4 / 9, rel=1e-14)
    assert e2 == pytest.approx(4 / 27, rel=1e-14)
    # ARX's object function multiplies by (1-x)^(a+2): 1/16 * 27/64 = 27/1024
    assert P._snb_expected(1.0, 0.5, 1.0, 0.5, arx_compat=True)[1] == pytest.approx(27 / 1024)


@pytest.mark.parametrize("a,b,f", [(0.3, 0.2, 0.1), (2.5, 0.6, 0.5), (0.8, 0.05, 0.01)])
def test_snb_expectations_match_the_series(a, b, f):
    expected = series_snb_expectations(a, b, 7.0, f)
    np.testing.assert_allclose(P._snb_expected(a, b, 7.0, f), expected, rtol=1e-9)


def test_snb_jacobian_matches_finite_differences():
    for compat in (False, True):
        system = P._snb_system(500.0, 0.2, 120.0, 30.0, arx_compat=compat)
        x = np.array([0.7, 0.3])
        _, jac, _ = system(x)
        h = 1e-6
        for col in range(2):
            step = np.zeros(2)
            step[col] = h
            numeric = (system(x + step)[0] - system(x - step)[0]) / (2 * h)
            np.testing.assert_allclose(jac[:, col], numeric, rtol=1e-6)


def test_snb_solver_recovers_known_parameters():
    # Round trip: expected c1, c2 for a = 2, b = 0.3, f = 0.2, K = 1000 -> solve -> (2, 0.3).
    c1, c2 = series_snb_expectations(2.0, 0.3, 1000.0, 0.2)
    a, b = P._snb_parameters(1000.0, 0.2, c1, c2)
    assert a == pytest.approx(2.0, rel=1e-8)
    assert b == pytest.approx(0.3, rel=1e-8)


def test_snb_end_to_end_satisfies_the_moment_equations():
    f = 0.1
    h = P._histogram(SMALL)
    k = P._shlosser_classes(h, f)
    a, b = P._snb_parameters(k, f, h.c1, h.c2)
    e1, e2 = series_snb_expectations(a, b, k, f)
    assert e1 == pytest.approx(12, rel=1e-8)
    assert e2 == pytest.approx(3, rel=1e-8)
    # population uniques K b^a, divided by N = n / f
    assert snb(SMALL, f) == pytest.approx(k * b**a / (28 / f), rel=1e-12)


def test_snb_without_doubletons_is_not_available():
    assert math.isnan(snb(np.array([1, 1, 1, 3, 4]), 0.3))


# ---------------------------------------------------------------------------------------
# Pitman (Hoshino 2001)
# ---------------------------------------------------------------------------------------


def test_pitman_starting_values_hand_computed():
    # SMALL: n = 28, u = 17, c1 = 12, c2 = 3 -> c = 12*11/3 = 44
    # theta = (28*17*44 - 12*27*(34+44)) / (2*12*17 + 12*44 - 28*44) = -4328 / -296 = 541/37
    # alpha = (theta (12 - 28) + 27*12) / (28*17) = (-8656/37 + 11988/37) / 476 = 7/37
    theta, alpha = P._pitman_start(P._histogram(SMALL))
    assert theta == pytest.approx(541 / 37, rel=1e-14)
    assert alpha == pytest.approx(7 / 37, rel=1e-14)


def test_pitman_solution_solves_the_ml_equations_and_maximises_the_likelihood():
    theta, alpha = P._pitman_parameters(P._histogram(SMALL))
    assert 0 < alpha < 1
    s1, s2 = direct_score(SMALL, theta, alpha)
    assert abs(s1) < 1e-10 and abs(s2) < 1e-9  # ARX accepts |score| <= 1e-6
    best = direct_loglik(SMALL, theta, alpha)
    for dt, da in [(0.05, 0), (-0.05, 0), (0, 1e-3), (0, -1e-3), (0.05, 1e-3), (-0.05, -1e-3)]:
        assert direct_loglik(SMALL, theta + dt, alpha + da) < best


def test_pitman_share_matches_direct_formula():
    theta, alpha = P._pitman_parameters(P._histogram(SMALL))
    for f in (0.01, 0.1, 0.5):
        population = 28 / f
        expected = math.exp(math.lgamma(theta + 1) - math.lgamma(theta + alpha)) * population**alpha
        assert pitman(SMALL, f) == pytest.approx(expected / population, rel=1e-12)


def test_pitman_accepts_negative_alpha_like_arx():
    # Few singletons: the ML root has alpha < 0 (theta + i alpha > 0 for all i < u).
    sizes = np.array([1] * 6 + [2] * 2 + [3] + [4])
    theta, alpha = P._pitman_parameters(P._histogram(sizes))
    assert alpha < 0 < theta + (sizes.size - 1) * alpha
    s1, s2 = direct_score(sizes, theta, alpha)
    assert abs(s1) < 1e-10 and abs(s2) < 1e-9


@pytest.mark.parametrize("theta,alpha", [(30.0, 0.4), (2.0, 0.9), (500.0, 1e-5), (80.0, -2.5)])
def test_pitman_equations_match_direct_sums(theta, alpha):
    system = P._pitman_system(P._histogram(SMALL))
    values, jac, _ = system(np.array([theta, alpha]))
    np.testing.assert_allclose(values, direct_score(SMALL, theta, alpha), rtol=1e-9, atol=1e-12)
    h = np.array([1e-5 * max(1.0, theta), 1e-6])
    for col in range(2):
        step = np.zeros(2)
        step[col] = h[col]
        numeric = (
            np.array(direct_score(SMALL, theta + step[0], alpha + step[1]))
            - np.array(direct_score(SMALL, theta - step[0], alpha - step[1]))
        ) / (2 * h[col])
        np.testing.assert_allclose(jac[:, col], numeric, rtol=1e-5, atol=1e-9)


def test_pitman_all_singletons_is_not_available():
    assert math.isnan(pitman(np.ones(50, dtype=int), 0.05))


# ---------------------------------------------------------------------------------------
# Limiting cases and Dankar's rule
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("function", [pitman, zayatz, snb])
def test_full_population_gives_the_sample_unique_share(function):
    assert function(SMALL, 1.0) == 12 / 28


def test_no_sample_uniques_means_no_population_uniques():
    result = population_uniqueness(np.array([2, 2, 3, 5]), 0.05)
    assert [result[k] for k in ("pitman", "zayatz", "snb", "dankar")] == [0.0] * 4
    assert result["dankar_model"] == "none"


def _stub(value):
    return lambda: value


@pytest.mark.parametrize(
    "f,p,z,s,expected",
    [
        (0.1, 0.2, 0.3, 0.1, (0.2, "pitman")),  # f <= 0.1: Pitman
        (0.05, math.nan, 0.3, 0.1, (0.3, "zayatz")),  # invalid Pitman -> Zayatz
        (0.05, 0.0, 0.3, 0.1, (0.3, "zayatz")),  # ARX treats 0 as invalid too
        (0.2, 0.2, 0.3, 0.1, (0.1, "snb")),  # f > 0.1: the smaller of Zayatz and SNB
        (0.2, 0.2, 0.1, 0.3, (0.1, "zayatz")),
        (0.2, 0.2, 0.3, 0.3, (0.3, "snb")),  # tie -> SNB (ARX: zayatz < snb ? zayatz : snb)
        (0.2, 0.2, 0.3, math.nan, (0.3, "zayatz")),  # invalid SNB -> Zayatz
    ],
)
def test_dankar_rule(f, p, z, s, expected):
    assert P._dankar_rule(f, 5, _stub(p), _stub(z), _stub(s)) == expected


def test_dankar_public_function_follows_the_rule():
    assert dankar(SMALL, 0.05) == (pitman(SMALL, 0.05), "pitman")
    z, s = zayatz(SMALL, 0.5), snb(SMALL, 0.5)
    assert dankar(SMALL, 0.5) == ((z, "zayatz") if z < s else (s, "snb"))


# ---------------------------------------------------------------------------------------
# Properties over random class-size vectors
# ---------------------------------------------------------------------------------------

class_size_vectors = st.lists(st.integers(1, 25), min_size=1, max_size=120).map(np.array)
fractions = st.floats(1e-3, 1.0)


@settings(max_examples=60, deadline=None)
@given(class_size_vectors, fractions)
def test_estimates_are_shares_and_deterministic(sizes, f):
    result = population_uniqueness(sizes, f)
    for key in ("pitman", "zayatz", "snb", "dankar"):
        value = result[key]
        assert math.isnan(value) or 0.0 <= value <= 1.0
    assert not math.isnan(result["zayatz"])
    c1, n = int(np.sum(sizes == 1)), int(sizes.sum())
    # population uniques drawn into the sample are sample uniques: Zayatz <= c1 / n
    assert result["zayatz"] <= c1 / n + 1e-12
    if result["dankar_model"] != "none":
        assert result["dankar"] == result[result["dankar_model"]]
    again = population_uniqueness(sizes[::-1].copy(), f)  # order of classes is irrelevant
    assert np.array_equal(
        [again[k] for k in ("pitman", "zayatz", "snb", "dankar")],
        [result[k] for k in ("pitman", "zayatz", "snb", "dankar")],
        equal_nan=True,
    )


@settings(max_examples=60, deadline=None)
@given(class_size_vectors, fractions, fractions)
def test_zayatz_grows_with_the_sampling_fraction(sizes, f1, f2):
    lo, hi = sorted((f1, f2))
    assert zayatz(sizes, lo) <= zayatz(sizes, hi) + 1e-12


@settings(max_examples=40, deadline=None)
@given(class_size_vectors)
def test_sample_is_population_limit(sizes):
    result = population_uniqueness(sizes, 1.0)
    share = np.sum(sizes == 1) / sizes.sum()
    assert result["pitman"] == result["zayatz"] == result["snb"] == result["dankar"] == share


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(2, 25), min_size=1, max_size=60).map(np.array), fractions)
def test_without_sample_uniques_every_model_gives_zero(sizes, f):
    result = population_uniqueness(sizes, f)
    assert [result[k] for k in ("pitman", "zayatz", "snb", "dankar")] == [0.0] * 4


# ---------------------------------------------------------------------------------------
# Adult (ARX benchmark), all 9 columns as quasi-identifiers, ungeneralized
# ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def adult_class_sizes(shared_data):
    import pandas as pd

    df = pd.read_csv(shared_data / "arx" / "adult.csv", sep=";")
    return df.groupby(list(df.columns)).size().to_numpy()


def test_adult_class_structure(adult_class_sizes):
    assert adult_class_sizes.size == 19502
    assert int(np.sum(adult_class_sizes == 1)) == 15512
    assert int(adult_class_sizes.sum()) == 30162


# f: (pitman, zayatz, snb, dankar, model) -- regression values of this implementation
ADULT = {
    0.01: (0.14460835312437292, 0.2717127199363312, 0.20467901530264437, "pitman"),
    0.1: (0.2768499388408136, 0.3207402393466188, 0.24997693756829542, "pitman"),
    0.5: (0.43590279805939974, 0.4319494481931897, 0.42702331447378683, "snb"),
}
# ARX code (see module docstring): Pitman and Zayatz shares; SNB is not available there.
ADULT_ARX = {
    0.01: (0.144608353124, 0.271712719936),
    0.1: (0.276849938841, 0.320740239347),
    0.5: (0.435902798059, 0.431949448193),
}


@pytest.mark.parametrize("f", sorted(ADULT))
def test_adult_regression(adult_class_sizes, f):
    p, z, s, model = ADULT[f]
    result = population_uniqueness(adult_class_sizes, f)
    assert result["pitman"] == pytest.approx(p, rel=1e-9)
    assert result["zayatz"] == pytest.approx(z, rel=1e-12)
    assert result["snb"] == pytest.approx(s, rel=1e-9)
    assert result["dankar_model"] == model
    assert result["dankar"] == result[model]


@pytest.mark.parametrize("f", sorted(ADULT_ARX))
def test_adult_agrees_with_arx(adult_class_sizes, f):
    p_arx, z_arx = ADULT_ARX[f]
    assert pitman(adult_class_sizes, f) == pytest.approx(p_arx, rel=1e-9)
    assert zayatz(adult_class_sizes, f) == pytest.approx(z_arx, rel=1e-9)
    # ARX's SNB equations (arx_compat) have no root here, so ARX reports no SNB estimate and
    # its Dankar rule falls back to Zayatz for f > 0.1.
    assert math.isnan(snb(adult_class_sizes, f, arx_compat=True))
    expected_model = "pitman" if f <= 0.1 else "zayatz"
    assert dankar(adult_class_sizes, f, arx_compat=True)[1] == expected_model


def test_adult_arx_snb_where_it_has_a_root(adult_class_sizes):
    # ARX code at f = 0.9: SNB 0.496913336259 (K = 20327.71271, a = 0.5823269, b = 0.7100731);
    # Zayatz 0.499985225096 (N = 33513 after truncation).
    assert snb(adult_class_sizes, 0.9, arx_compat=True) == pytest.approx(0.496913336259, rel=1e-9)
    assert zayatz(adult_class_sizes, 0.9) == pytest.approx(0.499985225096, rel=1e-9)
