"""Empirical privacy audits: run a mechanism on two neighbouring datasets many times and bound
its privacy loss from below.

For an output event S, ``P(M(D) in S) <= e^eps P(M(D') in S) + delta``. With Clopper-Pearson
confidence bounds on both probabilities (Bonferroni over all events tried), ``ln((lower(P_D(S))
- delta) / upper(P_D'(S)))`` is, with 99% confidence, a lower bound on the true epsilon: it must
not exceed the declared one. Each audit also checks that the *point* estimate comes close to the
declared epsilon where the mechanism is known to be tight, so that the audit has the power to
catch a miscalibrated mechanism -- the negative control shows it does.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from sdckit import dp
from sdckit.dp import BoundedQuery
from sdckit.dp.randomness import Randomness
from sdckit.dp.selection import exponential_indices, noisy_max_indices
from sdckit.dp.sparse_vector import first_above

N = 200_000
ALPHA = 0.01


def audit(a: np.ndarray, b: np.ndarray, events, delta: float = 0.0) -> tuple[float, float]:
    """(lower confidence bound, best point estimate) of epsilon over ``events`` (boolean
    functions of the outputs), in both directions."""
    rows = []
    for event in events:
        ka, kb = int(np.sum(event(a))), int(np.sum(event(b)))
        rows += [(ka, a.size, kb, b.size), (kb, b.size, ka, a.size)]
    level = ALPHA / (2 * len(rows))
    lower, point = -np.inf, -np.inf
    for k1, n1, k2, n2 in rows:
        p1_low = stats.beta.ppf(level, k1, n1 - k1 + 1) if k1 > 0 else 0.0
        p2_high = stats.beta.ppf(1 - level, k2 + 1, n2 - k2) if k2 < n2 else 1.0
        if p1_low - delta > 0:
            lower = max(lower, np.log((p1_low - delta) / p2_high))
        if k1 >= 200 and k2 >= 200:
            point = max(point, np.log((k1 / n1 - delta) / (k2 / n2)))
    return float(lower), float(point)


def threshold_events(lo: float, hi: float, count: int = 25):
    return [lambda x, t=t: x >= t for t in np.linspace(lo, hi, count)]


def test_count_discrete_laplace_audit():
    eps = 1.0
    zero = dp.discrete_laplace(np.zeros(N, dtype=int), 1, eps, seed=101).value
    one = dp.discrete_laplace(np.ones(N, dtype=int), 1, eps, seed=102).value
    lower, point = audit(zero, one, threshold_events(-6, 6, 13))
    assert lower <= eps
    assert point >= 0.9 * eps  # {x >= 1} has ratio exactly e^eps


def test_audit_catches_an_under_noised_mechanism():
    """Negative control: declaring sensitivity 1/2 for a count (true sensitivity 1) doubles
    the privacy loss; the audit's lower bound exceeds the claimed epsilon."""
    eps = 1.0
    zero = dp.discrete_laplace(np.zeros(N, dtype=int), 0.5, eps, seed=103).value
    one = dp.discrete_laplace(np.ones(N, dtype=int), 0.5, eps, seed=104).value
    lower, _ = audit(zero, one, threshold_events(-6, 6, 13))
    assert lower > eps


def _copies(query: BoundedQuery, n: int) -> BoundedQuery:
    """n copies of a scalar query: one release gives n independent runs of the mechanism."""
    return BoundedQuery(
        query.kind, np.full(n, query.grid_value[0]), query.granularity, query.sensitivity,
        query.l2_sensitivity,
    )  # fmt: skip


def test_bounded_sum_laplace_audit():
    """SUM over [0, 1] of D = {0.3, 1.0} and its neighbour D' = {0.3}: continuous-valued
    answers on the grid; the bound 1 is attained, so the loss reaches epsilon."""
    eps = 1.0
    big = dp.sum_query([0.3, 1.0], 0, 1)
    small = dp.sum_query([0.3], 0, 1)
    a = dp.release(_copies(big, N), epsilon=eps, seed=105).value
    b = dp.release(_copies(small, N), epsilon=eps, seed=106).value
    lower, point = audit(a, b, threshold_events(-3, 5, 33))
    assert lower <= eps
    assert point >= 0.85 * eps


def test_bounded_sum_gaussian_audit():
    """rho-zCDP implies (rho + 2 sqrt(rho ln(1/delta)), delta)-DP: audited at delta = 1e-3."""
    rho, delta = 0.5, 1e-3
    eps = dp.zcdp_to_approx_dp(rho, delta)
    big, small = dp.count_query(range(3)), dp.count_query(range(2))
    a = dp.release(_copies(big, N // 2), rho=rho, mechanism="gaussian", seed=107).value
    b = dp.release(_copies(small, N // 2), rho=rho, mechanism="gaussian", seed=108).value
    lower, point = audit(a, b, threshold_events(-1, 7, 9), delta=delta)
    assert lower <= eps
    assert point > 0.5  # clearly distinguishable, as sigma = 1


def test_randomized_response_audit():
    eps = 1.0
    cats = ["a", "b", "c"]
    from_a = dp.randomized_response(["a"] * N, cats, eps, seed=109).value
    from_b = dp.randomized_response(["b"] * N, cats, eps, seed=110).value
    events = [lambda x, c=c: x == c for c in cats]
    lower, point = audit(from_a, from_b, events)
    assert lower <= eps
    assert point >= 0.9 * eps  # P(a | a) / P(a | b) = e^eps exactly


def test_exponential_mechanism_audit():
    eps = Fraction(1)
    rnd = Randomness(111)
    # per-candidate sensitivity 1 (grid units): scores (0, 0, 0) vs (1, -1, -1)
    a = exponential_indices(np.array([0, 0, 0]), Fraction(1), eps, monotonic=False, size=N,
                            rnd=rnd)  # fmt: skip
    b = exponential_indices(np.array([1, -1, -1]), Fraction(1), eps, monotonic=False, size=N,
                            rnd=rnd)  # fmt: skip
    lower, point = audit(a, b, [lambda x, i=i: x == i for i in range(3)])
    assert lower <= float(eps)
    # P(0 | b) / P(0 | a) = 3 e^0.5 / (e^0.5 + 2 e^-0.5) = 1.7284: ln = 0.5472
    assert point == pytest.approx(0.5472, abs=0.03)


def test_report_noisy_max_audit():
    eps = Fraction(1)
    rnd = Randomness(112)
    scale = 2 * Fraction(1) / eps  # non-monotonic calibration, sensitivity 1 grid step
    a = noisy_max_indices(np.array([0, 0]), scale, N // 2, rnd)
    b = noisy_max_indices(np.array([1, -1]), scale, N // 2, rnd)
    lower, _ = audit(a, b, [lambda x: x == 0, lambda x: x == 1])
    assert lower <= float(eps)


def test_above_threshold_audit():
    eps = Fraction(1)
    rnd = Randomness(113)
    # three queries of sensitivity 1 against threshold 2: answers (0, 1, 2) vs (1, 2, 3)
    a = first_above(np.array([0, 1, 2]), 2, 1, eps, N // 2, rnd)
    b = first_above(np.array([1, 2, 3]), 2, 1, eps, N // 2, rnd)
    lower, point = audit(a, b, [lambda x, i=i: x == i for i in (-1, 0, 1, 2)])
    assert lower <= float(eps)
    assert point > 0.2
