"""DP partition selection (Gaussian thresholding) and the approximate-zCDP accounting it needs:
the tail bound against exact sums, the threshold by hand, the release rate of a value one
record makes present, and the accountant's composition of approximate zCDP costs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from sdckit.dp import Accountant, BudgetExhausted, PrivacyCost, rho_for_approx_dp
from sdckit.dp.partition_selection import partition_threshold, select_partitions, tail_bound
from sdckit.errors import ParameterError


def _exact_tail(sigma: float, m: int) -> float:
    z = np.arange(-int(60 * sigma) - 100, int(60 * sigma) + 101, dtype=np.float64)
    f = np.exp(-(z * z) / (2 * sigma * sigma))
    return float(f[z >= m].sum() / f.sum())


@pytest.mark.parametrize("sigma", [0.5, 1.0, 3.0, 49.0, 51.0, 200.0])
def test_tail_bound_is_an_upper_bound(sigma: float) -> None:
    for m in (0, 1, 2, int(3 * sigma) + 1, int(6 * sigma) + 1):
        exact = _exact_tail(sigma, m)
        bound = tail_bound(sigma, m)
        assert bound * (1 + 1e-9) >= exact
        assert bound <= exact * 1.1 + 1e-300  # and tight (within 10%, integral regime)


def test_threshold_by_hand() -> None:
    # sigma = 1: weights exp(-z**2 / 2); N = 2.5066283; P[Z >= 2] = 0.1467834 / N = 0.0585581,
    # P[Z >= 3] = 0.0114477 / N = 0.0045670 (sums of the weights by hand)
    weights = {z: math.exp(-z * z / 2) for z in range(-12, 13)}
    norm = sum(weights.values())
    assert tail_bound(1.0, 2) == pytest.approx(sum(w for z, w in weights.items() if z >= 2) / norm)
    assert tail_bound(1.0, 2) == pytest.approx(0.0585581, rel=1e-5)
    assert partition_threshold(1.0, 0.06) == 3  # P[Z >= 2] <= 0.06 < P[Z >= 1]
    assert partition_threshold(1.0, 0.05) == 4  # P[Z >= 2] > 0.05 >= P[Z >= 3]
    sigma, delta = 30.0, 1e-7
    tau = partition_threshold(sigma, delta)
    assert tail_bound(sigma, tau - 1) <= delta < tail_bound(sigma, tau - 2)


def test_a_value_one_record_makes_present_is_released_at_most_delta_often() -> None:
    """The privacy argument's failure event: a count of 1 clearing the threshold."""
    rng = np.random.default_rng(3)
    trials = 40_000
    release = select_partitions(np.ones(trials, dtype=np.int64), rho=0.5, delta=0.06, seed=rng)
    assert release.parameters["sigma"] == 1.0 and release.parameters["threshold"] == 3
    rate = release.value.mean()
    assert abs(rate - 0.0585581) < 4 * math.sqrt(0.0586 * 0.94 / trials)
    many = select_partitions(np.full(100, 50), rho=0.5, delta=0.06, seed=rng)
    assert many.value.all()  # 50 records: far above the threshold


def test_accountant_composes_approximate_zcdp() -> None:
    acct = Accountant(1.0, 1e-6, composition="zcdp")
    rho = rho_for_approx_dp(1.0, 5e-7)
    acct.charge(PrivacyCost.approximate_zcdp(rho * 0.1, 2.5e-7), "selection a")
    acct.charge(PrivacyCost.approximate_zcdp(rho * 0.1, 2.5e-7), "selection b")
    spent = acct.charge(PrivacyCost.zcdp(rho * 0.8), "the rest")
    assert spent.epsilon == pytest.approx(1.0, rel=1e-9) and spent.rho == pytest.approx(rho)
    with pytest.raises(BudgetExhausted):
        acct.charge(PrivacyCost.zcdp(rho * 0.01))
    # the approximate deltas alone may not exceed the budget's delta
    full = Accountant(1.0, 1e-6, composition="zcdp")
    assert not full.can_afford(PrivacyCost.approximate_zcdp(1e-6, 1e-6))
    with pytest.raises(ParameterError, match="needs a 'zcdp' accountant"):
        Accountant(1.0).charge(PrivacyCost.approximate_zcdp(0.1, 1e-7))
    with pytest.raises(ParameterError, match="approx_delta"):
        PrivacyCost(epsilon=1.0, approx_delta=1e-7)
