"""The privacy accountant: closed forms against hand-computed numbers, budget enforcement.

Reference values were computed by hand (30-digit decimal arithmetic) from the formulas:
zCDP -> (eps, delta): eps = rho + 2 sqrt(rho ln(1/delta)) (Bun & Steinke 2016, Prop. 1.3, an
upper bound on the tight conversion of Canonne, Kamath & Steinke 2020 the code uses);
advanced composition: eps' = sqrt(2k ln(1/delta')) eps0 + k eps0 (e^eps0 - 1) (Dwork,
Rothblum & Vadhan 2010); the privacy filter: K = sum eps_i (e^eps_i - 1) / 2 + sqrt((sum
eps_i^2 + H)(2 + ln(sum eps_i^2 / H + 1)) ln(2/delta_g)), H = eps_g^2 / (28.04 ln(1/delta_g))
(Rogers, Roth, Ullman & Vadhan 2016, Theorem 5.1).
"""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit import dp
from sdckit.dp import Accountant, BudgetExhausted, PrivacyCost
from sdckit.errors import ParameterError, SdcError


def _delta_by_scipy(rho: float, eps: float) -> float:
    """Canonne, Kamath & Steinke's bound minimized numerically, independently of sdckit."""
    import math

    from scipy.optimize import minimize_scalar

    def log_delta(a: float) -> float:
        return (a - 1) * (a * rho - eps) + a * math.log1p(-1 / a) - math.log(a - 1)

    res = minimize_scalar(
        log_delta, bounds=(1 + 1e-9, 1e4), method="bounded", options={"xatol": 1e-12}
    )
    return min(1.0, math.exp(res.fun))


def test_zcdp_conversion_is_tight_and_below_bun_steinke():
    # Bun & Steinke (2016) Prop. 1.3 for rho = 0.5, delta = 1e-5: 0.5 + 2 sqrt(0.5 ln 1e5) =
    # 5.2985259; the tight conversion is smaller and exactly at the bound
    eps = dp.zcdp_to_approx_dp(0.5, 1e-5)
    assert 4.7 < eps < 5.298525912188081
    assert _delta_by_scipy(0.5, eps) <= 1e-5 * (1 + 1e-6)
    assert _delta_by_scipy(0.5, eps * (1 - 1e-6)) > 1e-5
    assert dp.zcdp_to_approx_dp(0.0, 1e-5) == 0.0


def test_rho_for_approx_dp_is_the_inverse():
    # eps = 1, delta = 1e-6: Bun & Steinke give (sqrt(ln(1e6) + 1) - sqrt(ln(1e6)))^2 = 0.017469;
    # the tight conversion allows more (OpenDP / private-pgm report 0.02436 for these values)
    rho = dp.rho_for_approx_dp(1.0, 1e-6)
    assert rho == pytest.approx(0.024356, rel=1e-4)
    assert _delta_by_scipy(rho, 1.0) <= 1e-6 * (1 + 1e-6)
    assert _delta_by_scipy(rho * (1 + 1e-5), 1.0) > 1e-6
    for eps, delta in [(0.1, 1e-9), (1.0, 1e-5), (8.0, 1e-3)]:
        rho = dp.rho_for_approx_dp(eps, delta)
        assert dp.zcdp_to_approx_dp(rho, delta) == pytest.approx(eps, rel=1e-9)
        assert dp.zcdp_delta(rho, eps) <= delta


def test_advanced_composition_hand_computed():
    # k = 10, eps0 = 0.1, delta' = 1e-6: sqrt(20 * 13.8155106) * 0.1 + 10 * 0.1 * 0.1051709
    eps, delta = dp.advanced_composition(0.1, 0.0, 10, 1e-6)
    assert eps == pytest.approx(1.7674290543447575, rel=1e-12)
    assert delta == pytest.approx(1e-6)
    eps, delta = dp.advanced_composition(0.01, 1e-8, 1000, 1e-6)
    assert eps == pytest.approx(1.7627598071107905, rel=1e-12)
    assert delta == pytest.approx(1000 * 1e-8 + 1e-6)


def test_gaussian_and_pure_rho():
    assert dp.gaussian_rho(1.0, 2.0) == 0.125  # 1 / (2 * 4)
    assert dp.gaussian_rho(7.0, 7.0) == 0.5
    assert dp.pure_to_zcdp(0.5) == 0.125  # 0.5^2 / 2


def test_sequential_budget_is_enforced_and_a_refusal_changes_nothing():
    acct = Accountant(epsilon=1.0)
    for eps in (0.3, 0.3, 0.4):  # 0.3 + 0.3 + 0.4 = 1.0000000000000002 in floats: accepted
        acct.charge(PrivacyCost.pure(eps), "q")
    assert acct.spent().epsilon == pytest.approx(1.0)
    with pytest.raises(BudgetExhausted, match="budget exhausted"):
        acct.charge(PrivacyCost.pure(0.01), "one more")
    assert len(acct.ledger) == 3
    assert acct.spent().epsilon == pytest.approx(1.0)
    assert isinstance(BudgetExhausted("x"), SdcError)


def test_sequential_with_delta_adds_deltas():
    acct = Accountant(epsilon=2.0, delta=1e-5)
    acct.charge(PrivacyCost.approximate(0.5, 4e-6))
    acct.charge(PrivacyCost.approximate(0.5, 4e-6))
    assert acct.spent() == (pytest.approx(1.0), pytest.approx(8e-6), None)
    with pytest.raises(BudgetExhausted):
        acct.charge(PrivacyCost.approximate(0.1, 4e-6))  # delta 1.2e-5 > 1e-5


def test_privacy_filter_hand_computed():
    # eps = (0.1, 0.2, 0.1), budget (1, 1e-6): sum eps^2 = 0.06,
    # sum eps (e^eps - 1) / 2 = 0.0326573676235817, H = 1 / (28.04 ln 1e6) = 0.0025813984896770,
    # K = 0.03265736762 + sqrt(0.06258139849 (2 + ln(24.2432...)) ln(2e6)) = 2.2030682516874543
    assert dp.filter_epsilon([0.1, 0.2, 0.1], 1.0, 1e-6) == pytest.approx(
        2.2030682516874543, rel=1e-12
    )
    assert dp.filter_epsilon([], 1.0, 1e-6) == pytest.approx(
        math.sqrt(0.0025813984896770 * 2 * math.log(2e6)), rel=1e-12
    )
    with pytest.raises(ParameterError, match="1/e"):
        dp.filter_epsilon([0.1], 1.0, 0.4)


def test_privacy_filter_lets_many_small_queries_through_and_stops_at_its_bound():
    # budget eps = 2, delta = 1e-5, each query eps_i = 0.01 (pure), chosen one at a time:
    # basic composition stops at 200 queries. The filter's K (hand-computed, 30 digits):
    # K(690) = 1.99857921394810576 <= 2 < K(691) = 2.00014629812861227, so the 691st is
    # refused. (Dwork-Rothblum-Vadhan's bound with delta' = 1e-6 would let 1268 through --
    # 1.4501 at 690 -- but it holds only for k and eps0 fixed in advance.)
    acct = Accountant(2.0, 1e-5, composition="advanced")
    for _ in range(690):
        acct.charge(PrivacyCost.pure(0.01))
    spent = acct.spent()
    assert spent.epsilon == pytest.approx(1.99857921394810576, rel=1e-12)
    assert spent.delta == pytest.approx(5e-6)  # the filter's delta_g / 2
    assert not acct.can_afford(PrivacyCost.pure(0.01))
    with pytest.raises(BudgetExhausted):
        acct.charge(PrivacyCost.pure(0.01))
    assert len(acct.ledger) == 690 and acct.spent() == spent


def test_privacy_filter_with_approximate_costs():
    # (eps_i, delta_i) costs: the filter only (no basic sum); it refuses once
    # sum delta_i > delta_g / 2 even with epsilon to spare
    acct = Accountant(2.0, 1e-5, composition="advanced")
    acct.charge(PrivacyCost.approximate(0.1, 2e-6))
    acct.charge(PrivacyCost.approximate(0.1, 2e-6))
    spent = acct.spent()
    assert spent.epsilon == pytest.approx(dp.filter_epsilon([0.1, 0.1], 2.0, 1e-5))
    assert spent.delta == pytest.approx(4e-6 + 5e-6)
    with pytest.raises(BudgetExhausted):
        acct.charge(PrivacyCost.approximate(0.01, 2e-6))  # 6e-6 > 5e-6


def test_advanced_uses_basic_when_it_is_smaller():
    acct = Accountant(2.0, 1e-5, composition="advanced")
    for _ in range(3):
        acct.charge(PrivacyCost.pure(0.5))
    assert acct.spent() == (pytest.approx(1.5), 0.0, None)


def test_zcdp_budget_hand_computed():
    # eps = 1, delta = 1e-6: rho budget 0.024356 by the tight conversion
    acct = Accountant(1.0, 1e-6, composition="zcdp")
    assert acct.rho_budget == pytest.approx(0.024356, rel=1e-4)
    acct.charge(PrivacyCost.zcdp(0.01))
    spent = acct.spent()
    assert spent.rho == pytest.approx(0.01)
    # below Bun & Steinke's 0.01 + 2 sqrt(0.01 * 13.815510558) = 0.753384, at the tight bound
    assert spent.epsilon < 0.01 + 2 * math.sqrt(0.01 * math.log(1e6))
    assert _delta_by_scipy(0.01, spent.epsilon) <= 1e-6 * (1 + 1e-6)
    acct.charge(PrivacyCost.zcdp(0.0143))
    with pytest.raises(BudgetExhausted):
        acct.charge(PrivacyCost.zcdp(0.0001))  # 0.0244 > 0.024356


def test_zcdp_counts_pure_charges_as_eps_squared_over_two():
    acct = Accountant(1.0, 1e-6, composition="zcdp")
    acct.charge(PrivacyCost.pure(0.1))  # rho = 0.005
    assert acct.spent().rho == pytest.approx(0.005)
    # all charges pure: the plain sum 0.1 is smaller than the converted 0.0995+...
    assert acct.spent().epsilon == pytest.approx(0.1)
    assert acct.spent().delta == 0.0


def test_cost_kinds_that_do_not_compose_are_refused():
    with pytest.raises(ParameterError, match="zcdp"):
        Accountant(1.0).charge(PrivacyCost.zcdp(0.1))
    with pytest.raises(ParameterError, match="no zCDP form"):
        Accountant(1.0, 1e-6, composition="zcdp").charge(PrivacyCost.approximate(0.1, 1e-7))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"epsilon": 0},
        {"epsilon": -1},
        {"epsilon": float("inf")},
        {"epsilon": "1"},
        {"epsilon": 1, "delta": 1.0},
        {"epsilon": 1, "composition": "fancy"},
        {"epsilon": 1, "composition": "zcdp"},  # zCDP -> (eps, delta) needs delta > 0
        {"epsilon": 1, "delta": 0.4, "composition": "advanced"},  # the filter needs < 1/e
    ],
)
def test_bad_accountant_parameters(kwargs):
    with pytest.raises(ParameterError):
        Accountant(**kwargs)


def test_budget_exhausted_is_raised_before_any_noise_is_drawn():
    acct = Accountant(0.5)
    acct.charge(PrivacyCost.pure(0.5))
    rng = np.random.default_rng(5)
    state = rng.bit_generator.state
    with pytest.raises(BudgetExhausted):
        dp.laplace(1.0, 1.0, 0.1, accountant=acct, seed=rng)
    assert rng.bit_generator.state == state  # not a single random number was used


def test_accountant_is_thread_safe():
    acct = Accountant(1.0)
    granted = []

    def worker():
        for _ in range(50):
            try:
                acct.charge(PrivacyCost.pure(0.01))
                granted.append(1)
            except BudgetExhausted:
                pass

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(granted) == 100  # exactly the budget, never more
    assert len(acct.ledger) == 100
    assert acct.spent().epsilon == pytest.approx(1.0)


costs = st.one_of(
    st.floats(0.001, 0.6).map(PrivacyCost.pure),
    st.tuples(st.floats(0.001, 0.6), st.floats(1e-9, 1e-6)).map(
        lambda t: PrivacyCost.approximate(*t)
    ),
)


@settings(max_examples=60, deadline=None)
@given(
    charges=st.lists(costs, max_size=40),
    composition=st.sampled_from(["sequential", "advanced"]),
)
def test_accountant_is_never_overspent(charges, composition):
    acct = Accountant(2.0, 5e-6, composition=composition)
    for cost in charges:
        before = acct.spent()
        affordable = acct.can_afford(cost)
        try:
            acct.charge(cost)
            assert affordable
        except BudgetExhausted:
            assert not affordable
            assert acct.spent() == before
        spent = acct.spent()
        assert spent.epsilon <= 2.0 * (1 + 1e-12) and spent.delta <= 5e-6 * (1 + 1e-12)


@settings(max_examples=40, deadline=None)
@given(rhos=st.lists(st.floats(1e-4, 0.05), max_size=30))
def test_zcdp_accountant_is_never_overspent(rhos):
    acct = Accountant(1.0, 1e-6, composition="zcdp")
    for rho in rhos:
        try:
            acct.charge(PrivacyCost.zcdp(rho))
        except BudgetExhausted:
            pass
        spent = acct.spent()
        assert spent.epsilon <= 1.0 * (1 + 1e-12)
        assert spent.rho <= acct.rho_budget * (1 + 1e-9)
