"""Privacy accounting: one :class:`Accountant` shared by every mechanism of a session.

A mechanism states its cost as a :class:`PrivacyCost` and charges the accountant *before* it
draws any noise; a charge that would exceed the budget raises :class:`BudgetExhausted` and
leaves the accountant unchanged. The accountant is thread-safe (one lock around check and
record), so a query server can share it between threads.

Three composition rules, chosen when the accountant is created:

* ``"sequential"`` -- basic composition: ``k`` mechanisms, each ``(eps_i, delta_i)``-DP, are
  together ``(sum eps_i, sum delta_i)``-DP (Dwork, McSherry, Nissim & Smith 2006; Dwork &
  Roth 2014, *The Algorithmic Foundations of Differential Privacy*, Theorem 3.16). With
  ``delta = 0`` this is pure epsilon-DP accounting.
* ``"advanced"`` -- the privacy filter of Rogers, Roth, Ullman & Vadhan (2016), "Privacy
  odometers and filters: pay-as-you-go composition", NeurIPS, Theorem 5.1. The costs charged
  to an accountant are chosen adaptively -- the analyst picks the next epsilon after seeing
  the answers, and how many queries to ask -- and the advanced composition theorem of Dwork,
  Rothblum & Vadhan (2010, Theorem III.3; :func:`advanced_composition`) holds only for a
  number ``k`` of mechanisms and a per-mechanism ``eps0`` fixed in advance. Theorem 5.1 is
  the stopping rule valid for adaptive costs: the interaction is ``(epsilon_g, delta_g)``-DP
  (``0 < delta_g < 1/e``) when a charge is refused as soon as ``sum delta_i > delta_g / 2``
  or ``K > epsilon_g``, with (:func:`filter_epsilon`)

      K = sum_i eps_i (e**eps_i - 1) / 2
          + sqrt((sum_i eps_i**2 + H) (2 + ln(sum_i eps_i**2 / H + 1)) ln(2 / delta_g)),
      H = epsilon_g**2 / (28.04 ln(1 / delta_g)).

  When every charge is pure, basic composition also holds for adaptive costs (the privacy
  loss of every outcome is at most ``sum eps_i``, whatever chose the ``eps_i``): the
  accountant then uses whichever of ``sum eps_i`` and ``K`` is smaller. (Where ``K`` is
  used, the transcript so far is one the Theorem 5.1 filter alone would also have let
  through, and where the sum is used its loss is at most ``epsilon_g`` on every outcome.)
* ``"zcdp"`` -- zero-concentrated DP (Bun & Steinke 2016, "Concentrated differential privacy:
  simplifications, extensions, and lower bounds", TCC): rho adds up over mechanisms
  (their Lemma 1.7); an ``eps``-DP mechanism is ``eps**2 / 2``-zCDP (Proposition 1.4); the
  (discrete) Gaussian mechanism with L2 sensitivity ``D`` and parameter ``sigma`` is
  ``D**2 / (2 sigma**2)``-zCDP (Proposition 1.6; Canonne, Kamath & Steinke 2020, Theorem 4
  for the discrete one); and ``rho``-zCDP implies ``(epsilon, delta)``-DP by the tight
  conversion of Canonne, Kamath & Steinke (2020), Corollary 13 (:func:`zcdp_delta`; never
  more than Bun & Steinke's ``rho + 2 sqrt(rho ln(1/delta))``, Proposition 1.3). If every
  charge was pure, the basic sum of epsilons is used when smaller. A mechanism that is
  rho-zCDP except on an event of probability ``delta_z`` -- *approximate* zCDP (Bun & Steinke
  2016, sec. 8, Definition 8.1; e.g. a partition selection by a noisy threshold, whose only
  failure is releasing a value that one record makes present) -- is charged with
  :meth:`PrivacyCost.approximate_zcdp`: the rhos and the ``delta_z`` add up under
  composition (their Lemma 8.2), and the total is ``(epsilon(rho, delta - sum delta_z),
  delta)``-DP (the conversion on the event, plus its failure probability).

Float budgets: ``0.1 + 0.2 > 0.3`` in binary floating point, so budget comparisons allow a
relative excess of 1e-12 (:data:`RELATIVE_SLACK`) -- far below any meaningful privacy loss.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal, NamedTuple

from sdckit.dp._numbers import exact, open_probability, positive
from sdckit.errors import ParameterError, SdcInputError, short_repr

__all__ = [
    "Accountant",
    "BudgetExhausted",
    "PrivacyCost",
    "Spent",
    "RELATIVE_SLACK",
    "advanced_composition",
    "filter_epsilon",
    "zcdp_delta",
    "zcdp_to_approx_dp",
    "rho_for_approx_dp",
    "gaussian_rho",
    "pure_to_zcdp",
]

#: Relative excess over the budget tolerated in comparisons (floating-point rounding only).
RELATIVE_SLACK = 1e-12

Composition = Literal["sequential", "advanced", "zcdp"]
_COMPOSITIONS = ("sequential", "advanced", "zcdp")


class BudgetExhausted(SdcInputError):
    """A mechanism asked for more privacy budget than its accountant has left.

    Raised before any noise is drawn; nothing was released and the accountant is unchanged.
    """


# --- closed forms ------------------------------------------------------------------------


def zcdp_delta(rho: float, epsilon: float) -> float:
    """The smallest delta for which rho-zCDP implies ``(epsilon, delta)``-DP, by the bound

    ``delta = inf_{a > 1} exp((a - 1)(a rho - epsilon) + a ln(1 - 1/a)) / (a - 1)``

    (Canonne, Kamath & Steinke 2020, "The discrete Gaussian for differential privacy",
    NeurIPS, Corollary 13: the conversion of concentrated to approximate DP through the
    privacy-loss distribution; Asoodeh, Liao, Calmon, Kosut & Sankar 2021 give the same
    bound). The log of the objective has the derivative ``(2a - 1) rho - epsilon +
    ln(1 - 1/a)``, increasing in ``a``: its root is found by bisection. Tighter than Bun &
    Steinke (2016), Proposition 1.3.
    """
    r = float(rho)
    e = float(epsilon)
    if r <= 0:
        return 0.0
    lo, hi = 1.0 + 1e-9, max((e + 1.0) / (2.0 * r) + 2.0, 2.0)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if (2 * mid - 1) * r - e + math.log1p(-1.0 / mid) < 0:
            lo = mid
        else:
            hi = mid
    a = hi
    log_delta = (a - 1) * (a * r - e) + a * math.log1p(-1.0 / a) - math.log(a - 1)
    return min(1.0, math.exp(min(log_delta, 0.0)))


def _bs_epsilon(r: float, d: float) -> float:
    return r + 2.0 * math.sqrt(r * math.log(1.0 / d))


def zcdp_to_approx_dp(rho: float, delta: float) -> float:
    """The epsilon of (epsilon, delta)-DP implied by rho-zCDP: the smallest epsilon with
    :func:`zcdp_delta` ``<= delta`` (bisection between 0 and Bun & Steinke's 2016
    ``rho + 2 sqrt(rho ln(1/delta))``, Proposition 1.3, which it never exceeds); the returned
    epsilon always satisfies the bound."""
    r = float(exact(rho, "rho"))
    if r < 0:
        raise ParameterError(f"rho must be >= 0, got {short_repr(rho)}")
    d = open_probability(delta, "delta")
    if r == 0:
        return 0.0
    lo, hi = 0.0, _bs_epsilon(r, d)
    if zcdp_delta(r, hi) > d:  # rounding at the edge: keep the classical bound
        return hi
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if zcdp_delta(r, mid) <= d:
            hi = mid
        else:
            lo = mid
    return hi


def rho_for_approx_dp(epsilon: float, delta: float) -> float:
    """The largest rho whose zCDP guarantee converts to ``(epsilon, delta)``-DP by
    :func:`zcdp_delta` (bisection; the result always satisfies the bound). It is at least Bun
    & Steinke's (2016, Proposition 1.3) ``(sqrt(ln(1/delta) + epsilon) - sqrt(ln(1/delta)))**2``
    (0.01747 for epsilon 1, delta 1e-6; the tight conversion gives 0.02439)."""
    e = float(positive(epsilon, "epsilon"))
    d = open_probability(delta, "delta")
    log_term = math.log(1.0 / d)
    # (sqrt(L + e) - sqrt(L))**2 written as (e / (sqrt(L + e) + sqrt(L)))**2: no cancellation
    lo = (e / (math.sqrt(log_term + e) + math.sqrt(log_term))) ** 2
    if zcdp_delta(lo, e) > d:  # rounding at the edge: keep the classical bound
        return lo
    hi = 2.0 * lo
    while zcdp_delta(hi, e) <= d:
        lo, hi = hi, 2.0 * hi
    for _ in range(100):
        mid = 0.5 * (lo + hi)
        if zcdp_delta(mid, e) <= d:
            lo = mid
        else:
            hi = mid
    return lo


def advanced_composition(
    epsilon: float, delta: float, k: int, delta_slack: float
) -> tuple[float, float]:
    """``(eps', delta')`` of ``k`` mechanisms each ``(epsilon, delta)``-DP, advanced composition.

    Dwork, Rothblum & Vadhan (2010), Theorem III.3 (Dwork & Roth 2014, Theorem 3.20):
    ``eps' = sqrt(2 k ln(1/delta_slack)) epsilon + k epsilon (e**epsilon - 1)`` and
    ``delta' = k delta + delta_slack``. The mechanisms may be chosen adaptively, but ``k`` and
    ``epsilon`` must be fixed in advance; for costs chosen as the answers come in, use the
    privacy filter (:func:`filter_epsilon`, the ``"advanced"`` :class:`Accountant`).
    """
    e = float(exact(epsilon, "epsilon"))
    d = float(exact(delta, "delta"))
    if e < 0 or not 0 <= d < 1:
        raise ParameterError(f"need epsilon >= 0 and 0 <= delta < 1, got {epsilon!r}, {delta!r}")
    if isinstance(k, bool) or not isinstance(k, int) or k < 0:
        raise ParameterError(f"k must be an integer >= 0, got {short_repr(k)}")
    slack = open_probability(delta_slack, "delta_slack")
    eps = math.sqrt(2.0 * k * math.log(1.0 / slack)) * e + k * e * math.expm1(e)
    return eps, k * d + slack


def _filter_k(squares: float, excess: float, epsilon: float, delta: float) -> float:
    """Rogers et al.'s ``K`` from ``sum eps_i**2`` and ``sum eps_i (e**eps_i - 1) / 2``
    (:func:`filter_epsilon`)."""
    h = epsilon * epsilon / (28.04 * math.log(1.0 / delta))
    spread = (squares + h) * (2.0 + math.log1p(squares / h)) * math.log(2.0 / delta)
    return excess + math.sqrt(spread)


def filter_epsilon(epsilons: Iterable[float], epsilon: float, delta: float) -> float:
    """The statistic ``K`` of the privacy filter of Rogers, Roth, Ullman & Vadhan (2016),
    Theorem 5.1, for the costs ``epsilons`` charged so far and the budget ``(epsilon, delta)``:

    ``K = sum_i eps_i (e**eps_i - 1) / 2 + sqrt((sum_i eps_i**2 + H) (2 + ln(sum_i eps_i**2 /
    H + 1)) ln(2 / delta))``, ``H = epsilon**2 / (28.04 ln(1 / delta))``.

    The filter lets the interaction go on while ``K <= epsilon`` and ``sum delta_i <= delta /
    2``; the whole interaction is then ``(epsilon, delta)``-DP even though each ``eps_i`` (and
    the number of them) was chosen after the earlier answers. Needs ``0 < delta < 1/e``.
    """
    eg = float(positive(epsilon, "epsilon"))
    dg = open_probability(delta, "delta")
    if dg >= math.exp(-1.0):
        raise ParameterError(
            f"the privacy filter needs delta < 1/e (Rogers et al. 2016, Theorem 5.1), got {dg:g}"
        )
    squares = excess = 0.0
    for value in epsilons:
        e = float(exact(value, "epsilon_i"))
        if not (math.isfinite(e) and e >= 0):
            raise ParameterError(f"each epsilon_i must be a finite number >= 0, got {value!r}")
        squares += e * e
        excess += e * math.expm1(e) / 2.0
    return _filter_k(squares, excess, eg, dg)


def gaussian_rho(sensitivity: float, sigma: float) -> float:
    """zCDP parameter of the (discrete) Gaussian mechanism: ``rho = sensitivity**2 / (2 sigma**2)``.

    Bun & Steinke (2016), Proposition 1.6; Canonne, Kamath & Steinke (2020), Theorem 4 (the
    discrete Gaussian on integer-valued queries gives the same rho).
    """
    d = float(positive(sensitivity, "sensitivity"))
    s = float(positive(sigma, "sigma"))
    return d * d / (2.0 * s * s)


def pure_to_zcdp(epsilon: float) -> float:
    """``epsilon``-DP implies ``epsilon**2 / 2``-zCDP (Bun & Steinke 2016, Proposition 1.4)."""
    e = float(positive(epsilon, "epsilon"))
    return e * e / 2.0


# --- costs and the accountant ---------------------------------------------------------------


@dataclass(frozen=True)
class PrivacyCost:
    """What one mechanism call costs, in every currency that applies to it.

    ``epsilon``/``delta``: the call is ``(epsilon, delta)``-DP (``epsilon`` None when only a
    zCDP statement is made). ``rho``: the call is ``rho``-zCDP (None when no such statement is
    made, as for a generic ``(epsilon, delta > 0)`` mechanism). Build one with :meth:`pure`,
    :meth:`approximate` or :meth:`zcdp`.
    """

    epsilon: float | None
    delta: float = 0.0
    rho: float | None = None
    #: the delta of approximate zCDP: the call is ``rho``-zCDP except with this probability
    approx_delta: float = 0.0

    def __post_init__(self) -> None:
        if self.epsilon is None and self.rho is None:
            raise ParameterError("a privacy cost needs an epsilon or a rho")
        for name in ("epsilon", "rho"):
            value = getattr(self, name)
            if value is not None and (not math.isfinite(value) or value < 0):
                raise ParameterError(f"cost {name} must be a finite number >= 0, got {value!r}")
        if not 0 <= self.delta < 1:
            raise ParameterError(f"cost delta must be in [0, 1), got {self.delta!r}")
        if not 0 <= self.approx_delta < 1 or (self.approx_delta and self.rho is None):
            raise ParameterError(
                f"cost approx_delta must be in [0, 1) with a rho, got {self.approx_delta!r}"
            )

    @classmethod
    def pure(cls, epsilon: Any) -> PrivacyCost:
        """An epsilon-DP call; it is also ``epsilon**2/2``-zCDP (Bun & Steinke 2016, Prop. 1.4)."""
        e = float(positive(epsilon, "epsilon"))
        return cls(epsilon=e, delta=0.0, rho=e * e / 2.0)

    @classmethod
    def approximate(cls, epsilon: Any, delta: Any) -> PrivacyCost:
        """An ``(epsilon, delta)``-DP call with no zCDP statement."""
        return cls(
            epsilon=float(positive(epsilon, "epsilon")), delta=open_probability(delta, "delta")
        )

    @classmethod
    def zcdp(cls, rho: Any) -> PrivacyCost:
        """A ``rho``-zCDP call (converted to (epsilon, delta) by the accountant only)."""
        return cls(epsilon=None, delta=0.0, rho=float(positive(rho, "rho")))

    @classmethod
    def approximate_zcdp(cls, rho: Any, delta: Any) -> PrivacyCost:
        """A ``delta``-approximately ``rho``-zCDP call (module docstring; a 'zcdp' accountant
        composes it)."""
        return cls(
            epsilon=None,
            delta=0.0,
            rho=float(positive(rho, "rho")),
            approx_delta=open_probability(delta, "delta"),
        )

    def describe(self) -> str:
        """A short text such as ``epsilon=0.5`` or ``rho=0.125`` for messages and reports."""
        parts = []
        if self.epsilon is not None:
            parts.append(f"epsilon={self.epsilon:g}")
        if self.delta:
            parts.append(f"delta={self.delta:g}")
        if self.epsilon is None and self.rho is not None:
            parts.append(f"rho={self.rho:g}")
        if self.approx_delta:
            parts.append(f"approx_delta={self.approx_delta:g}")
        return ", ".join(parts)


class Spent(NamedTuple):
    """The privacy loss of everything charged so far: ``(epsilon, delta)``-DP overall; ``rho``
    is the zCDP total under ``"zcdp"`` composition (None otherwise). Under ``"advanced"``,
    where the privacy filter decides, ``epsilon`` is its statistic ``K`` and ``delta``
    ``sum delta_i + delta_g / 2`` (:func:`filter_epsilon`): what the filter holds within the
    budget, which then covers the whole interaction (Rogers et al. 2016, Theorem 5.1)."""

    epsilon: float
    delta: float
    rho: float | None


@dataclass(frozen=True)
class _Totals:
    """Running aggregates of the charges: exact sums of the float costs (Fractions), maxima."""

    count: int = 0
    epsilon: Fraction = Fraction(0)
    delta: Fraction = Fraction(0)
    rho: Fraction = Fraction(0)
    approx_delta: Fraction = Fraction(0)
    #: ``sum eps_i**2`` and ``sum eps_i (e**eps_i - 1) / 2`` (the privacy filter's sums)
    epsilon_squares: Fraction = Fraction(0)
    epsilon_excess: Fraction = Fraction(0)
    all_pure: bool = True

    def plus(self, cost: PrivacyCost) -> _Totals:
        """The aggregates with ``cost`` added (a zero stands for a currency the cost lacks)."""
        eps = 0.0 if cost.epsilon is None else cost.epsilon
        return _Totals(
            count=self.count + 1,
            epsilon=self.epsilon + Fraction(eps),
            delta=self.delta + Fraction(cost.delta),
            rho=self.rho + Fraction(0.0 if cost.rho is None else cost.rho),
            approx_delta=self.approx_delta + Fraction(cost.approx_delta),
            epsilon_squares=self.epsilon_squares + Fraction(eps) ** 2,
            epsilon_excess=self.epsilon_excess + Fraction(eps * math.expm1(eps) / 2.0),
            all_pure=self.all_pure and cost.epsilon is not None and cost.delta == 0,
        )


def _within(value: float, limit: float) -> bool:
    return value <= limit * (1.0 + RELATIVE_SLACK) + 1e-300


class Accountant:
    """The privacy budget of a session, charged by every mechanism before it draws noise.

    ``Accountant(epsilon=1.0)`` is a pure epsilon-DP budget with sequential composition.
    ``Accountant(epsilon, delta, composition="advanced")`` is the privacy filter of Rogers,
    Roth, Ullman & Vadhan (2016), Theorem 5.1 (``delta < 1/e``), valid when each cost is
    chosen after the earlier answers; with pure charges only, the basic sum where it is
    smaller. ``Accountant(epsilon, delta, composition="zcdp")`` accounts in zero-concentrated
    DP and holds the total rho to the largest whose ``(epsilon, delta)``-DP conversion by
    Canonne, Kamath & Steinke (2020), Corollary 13 (:func:`zcdp_delta`), fits the budget --
    :attr:`rho_budget`, larger than Bun & Steinke's ``rho + 2 sqrt(rho ln(1/delta)) <=
    epsilon`` allows (see the module docstring for the theorems). Thread-safe.
    """

    def __init__(
        self,
        epsilon: float,
        delta: float = 0.0,
        *,
        composition: Composition = "sequential",
    ) -> None:
        self._epsilon = float(positive(epsilon, "epsilon"))
        d = exact(delta, "delta")
        if not 0 <= d < 1:
            raise ParameterError(f"delta must be in [0, 1), got {short_repr(delta)}")
        self._delta = float(d)
        if composition not in _COMPOSITIONS:
            raise ParameterError(
                f"composition must be one of {', '.join(_COMPOSITIONS)}, got "
                f"{short_repr(composition)}"
            )
        self._composition: Composition = composition
        if composition in ("advanced", "zcdp") and self._delta == 0:
            raise ParameterError(
                f"composition {composition!r} gives (epsilon, delta)-DP with delta > 0: give the "
                "accountant a delta such as 1e-6, or use composition='sequential' for pure DP"
            )
        if composition == "advanced" and self._delta >= math.exp(-1.0):
            raise ParameterError(
                f"composition 'advanced' (the privacy filter of Rogers et al. 2016, Theorem 5.1) "
                f"needs delta < 1/e, got {self._delta:g}"
            )
        self._ledger: list[tuple[str, PrivacyCost]] = []
        self._totals = _Totals()
        self._lock = threading.Lock()

    # -- the budget -------------------------------------------------------------------

    @property
    def epsilon(self) -> float:
        """The epsilon of the total budget."""
        return self._epsilon

    @property
    def delta(self) -> float:
        """The delta of the total budget."""
        return self._delta

    @property
    def composition(self) -> Composition:
        """The composition rule: ``"sequential"``, ``"advanced"`` or ``"zcdp"``."""
        return self._composition

    @property
    def rho_budget(self) -> float | None:
        """Under ``"zcdp"``: the largest total rho allowed, the largest whose conversion by
        Canonne, Kamath & Steinke (2020), Corollary 13 gives ``(epsilon, delta)``-DP
        (:func:`rho_for_approx_dp`; at least Bun & Steinke's 2016, Prop. 1.3,
        ``(sqrt(L + eps) - sqrt(L))**2`` with ``L = ln(1/delta)``); else None."""
        if self._composition != "zcdp":
            return None
        return rho_for_approx_dp(self._epsilon, self._delta)

    @property
    def ledger(self) -> tuple[tuple[str, PrivacyCost], ...]:
        """Every charge so far, in order: ``(label, cost)``."""
        with self._lock:
            return tuple(self._ledger)

    # -- charging ---------------------------------------------------------------------

    def _check_kind(self, cost: PrivacyCost, label: str) -> None:
        if cost.approx_delta and self._composition != "zcdp":
            raise ParameterError(
                f"{label}: an approximate zCDP cost ({cost.describe()}) needs a 'zcdp' accountant"
            )
        if self._composition == "zcdp":
            if cost.rho is None:
                raise ParameterError(
                    f"{label}: an (epsilon={cost.epsilon:g}, delta={cost.delta:g}) cost has no "
                    "zCDP form; a 'zcdp' accountant takes pure-DP and zCDP mechanisms only"
                )
        elif cost.epsilon is None:
            raise ParameterError(
                f"{label}: this mechanism was given rho (zCDP) and a {self._composition!r} "
                "accountant composes (epsilon, delta) costs: use Accountant(epsilon, delta, "
                "composition='zcdp'), or give the mechanism epsilon and delta instead of rho"
            )

    def _total(self, totals: _Totals) -> Spent:
        if totals.count == 0:
            return Spent(0.0, 0.0, 0.0 if self._composition == "zcdp" else None)
        if self._composition == "zcdp":
            rho = float(totals.rho)
            left = self._delta - float(totals.approx_delta)  # approximate zCDP (docstring)
            if left <= 0:
                return Spent(math.inf, float(totals.approx_delta), rho)
            best = Spent(zcdp_to_approx_dp(rho, left), self._delta, rho)
            if totals.all_pure and float(totals.epsilon) <= best.epsilon:
                best = Spent(float(totals.epsilon), 0.0, rho)
            return best
        basic = Spent(float(totals.epsilon), float(totals.delta), None)
        if self._composition == "sequential":
            return basic
        # the privacy filter (module docstring): K, with sum delta_i + delta / 2 as its delta
        k = _filter_k(
            float(totals.epsilon_squares), float(totals.epsilon_excess), self._epsilon, self._delta
        )
        if totals.all_pure and basic.epsilon <= k:
            return basic
        return Spent(k, float(totals.delta) + self._delta / 2, None)

    def _fits(self, spent: Spent) -> bool:
        return _within(spent.epsilon, self._epsilon) and _within(spent.delta, self._delta)

    def spent(self) -> Spent:
        """The privacy loss of all charges so far, under this accountant's composition rule."""
        with self._lock:
            return self._total(self._totals)

    def can_afford(self, cost: PrivacyCost) -> bool:
        """Whether ``cost`` would fit in what is left (nothing is charged)."""
        if not isinstance(cost, PrivacyCost):
            raise ParameterError(f"cost must be a PrivacyCost, got {short_repr(cost)}")
        self._check_kind(cost, "cost")
        with self._lock:
            return self._fits(self._total(self._totals.plus(cost)))

    def charge(self, cost: PrivacyCost, label: str = "mechanism") -> Spent:
        """Record ``cost`` if it fits in the budget and return the new total; else raise.

        Raises :class:`BudgetExhausted` (nothing recorded) when the composed loss would exceed
        ``(epsilon, delta)``; :class:`~sdckit.errors.ParameterError` when the cost cannot be
        composed under this rule (a rho-only cost on an (epsilon, delta) accountant, an
        (epsilon, delta > 0) cost on a zCDP one). Check and record happen under one lock.
        """
        if not isinstance(cost, PrivacyCost):
            raise ParameterError(f"cost must be a PrivacyCost, got {short_repr(cost)}")
        self._check_kind(cost, label)
        with self._lock:
            before = self._total(self._totals)
            updated = self._totals.plus(cost)
            after = self._total(updated)
            if not self._fits(after):
                raise BudgetExhausted(
                    f"privacy budget exhausted: {label} ({cost.describe()}) would bring the "
                    f"total to epsilon={after.epsilon:.6g}, delta={after.delta:.3g} over the "
                    f"budget epsilon={self._epsilon:g}, delta={self._delta:g} "
                    f"({self._composition} composition; spent so far epsilon="
                    f"{before.epsilon:.6g}, delta={before.delta:.3g}). Nothing was released."
                )
            self._ledger.append((label, cost))
            self._totals = updated
            return after

    def __repr__(self) -> str:
        spent = self.spent()
        return (
            f"Accountant(epsilon={self._epsilon:g}, delta={self._delta:g}, "
            f"composition={self._composition!r}; spent epsilon={spent.epsilon:.6g}, "
            f"delta={spent.delta:.3g})"
        )
