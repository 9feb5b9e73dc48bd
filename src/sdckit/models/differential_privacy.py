"""(epsilon, delta)-differential privacy by sampling and safe k-anonymization (SafePub).

Li, Qardaji & Su (2012), "On sampling, anonymization, and differential privacy or,
k-anonymization meets differential privacy", ASIACCS, Theorem 5: an algorithm that draws each
record independently with probability ``beta``, generalizes the sample with a
data-independent full-domain transformation and suppresses every equivalence class of fewer
than ``k`` sampled records ("(k, beta)-SDGS", a strongly safe k-anonymization) satisfies
``(epsilon, delta)``-differential privacy for every ``epsilon >= -ln(1 - beta)`` with

    delta = d(k, beta, epsilon) = max_{n >= n_m} sum_{j > gamma n}^{n} f(j; n, beta),
    gamma = (e**epsilon - 1 + beta) / e**epsilon,   n_m = ceil(k / gamma - 1),

``f(j; n, beta)`` the binomial probability mass function.

Bild, Kuhn & Prasser (2018), "SafePub: a truthful data anonymization algorithm with strong
privacy guarantees", PoPETs 2018(1), 67-87, Section 4: for the part ``epsilon_anon`` of the
budget, ``beta = 1 - e**(-epsilon_anon)`` (the largest sampling probability the theorem
allows) and ``k`` a class size with ``d(k, beta, epsilon_anon) <= delta``, computed as the
authors' reference implementation, ARX's ``dp.ParameterCalculation.calculateK``, does
(:func:`safepub_parameters`: one more than the smallest ``k'`` with ``d(k') < delta``); the
remaining ``epsilon_search`` pays for the differentially private choice of the
transformation (:mod:`sdckit.algorithms.safepub`), so the release is
``(epsilon_anon + epsilon_search, delta)``-DP. ARX implements this as ``EDDifferentialPrivacy``
with ``dp.ParameterCalculation``.

The supremum over ``n`` is computed exactly as ARX does: ``a_n = P(Bin(n, beta) > gamma n)``
is bounded by the Chernoff bound ``c_n = exp(-n (gamma ln(gamma / beta) - (gamma - beta)))``
(Mitzenmacher & Upfal 2005, Theorem 4.4, with ``(1 + d) = gamma / beta``), which decreases in
``n`` (``gamma > beta`` always holds), so once the running maximum reaches ``c_n`` no later
term can exceed it. Binomial tails come from :func:`scipy.stats.binom.sf` (relative accuracy
about 1e-15).

:class:`DifferentialPrivacy` is the privacy model: its predicate on a frequency set is
k-anonymity with the derived ``k`` (every released class holds at least ``k`` records), which
is what an independent check of a SafePub release can verify; the guarantee itself also needs
the random sampling and the private search, so only the ``safepub`` algorithm accepts it.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from typing import Annotated, ClassVar

import numpy as np
from pydantic import Field, model_validator

from sdckit.core.frequency import FrequencySet
from sdckit.core.spec import Number
from sdckit.errors import ParameterError
from sdckit.models.base import ModelResult, PrivacyModel

__all__ = [
    "DifferentialPrivacy",
    "SafePubParameters",
    "safepub_delta",
    "safepub_parameters",
    "sampling_probability",
]

#: The sampling probability is a multiple of 2**-BETA_BITS (drawn exactly from integers).
BETA_BITS = 53
#: Largest n the supremum over n may need (a budget needing more is refused).
_MAX_N = 50_000_000
_CHUNK = 4096


def sampling_probability(epsilon_anon: float) -> float:
    """The sampling probability ``beta`` for ``epsilon_anon``: ``1 - e**(-epsilon_anon)``
    (Bild et al. 2018, Section 4; Li et al. 2012, Theorem 5: ``epsilon >= -ln(1 - beta)``),
    rounded *down* to a multiple of ``2**-53`` so that records can be drawn with exactly this
    probability from uniform integers and ``-ln(1 - beta) <= epsilon_anon`` still holds.
    """
    eps = float(epsilon_anon)
    if not math.isfinite(eps) or eps <= 0:
        raise ParameterError(f"epsilon_anon must be a finite number > 0, got {epsilon_anon!r}")
    # -expm1(-eps) is within one ulp of 1 - e**-eps; one step down makes it a lower bound
    beta = float(np.nextafter(-math.expm1(-eps), 0.0))
    units = math.floor(Fraction(beta) * (1 << BETA_BITS))
    if units < 1:
        raise ParameterError(
            f"epsilon_anon ({eps:g}) is too small: the sampling probability 1 - e**-epsilon "
            "rounds to 0"
        )
    return units / float(1 << BETA_BITS)


def _gamma(epsilon: float, beta: float) -> float:
    """``gamma = (e**epsilon - 1 + beta) / e**epsilon`` (Li et al. 2012, Theorem 5)."""
    return (math.expm1(epsilon) + beta) / math.exp(epsilon)


def _chernoff_rate(gamma: float, beta: float) -> float:
    """``gamma ln(gamma / beta) - (gamma - beta)``: ``a_n <= exp(-n * rate)`` (ARX
    ``ParameterCalculation.calculateC``; Mitzenmacher & Upfal 2005, Theorem 4.4)."""
    return gamma * math.log(gamma / beta) - (gamma - beta)


def _tail(n: np.ndarray, gamma: float, beta: float) -> np.ndarray:
    """``a_n = sum_{j > gamma n}^{n} f(j; n, beta) = P(Bin(n, beta) > floor(gamma n))``."""
    from scipy.stats import binom

    return np.asarray(binom.sf(np.floor(gamma * n), n, beta), dtype=np.float64)


def _n_min(k: int, gamma: float) -> int:
    """``n_m = ceil(k / gamma - 1)`` (Li et al. 2012, Theorem 5), at least 0."""
    return max(0, math.ceil(k / gamma - 1.0))


def safepub_delta(k: int, beta: float, epsilon: float) -> float:
    """``d(k, beta, epsilon) = max_{n >= n_m} sum_{j > gamma n}^{n} f(j; n, beta)``.

    Li, Qardaji & Su (2012), Theorem 5, with ``gamma = (e**epsilon - 1 + beta) / e**epsilon``
    and ``n_m = ceil(k / gamma - 1)``; the supremum is exact (module docstring: the search
    stops once the running maximum reaches the decreasing Chernoff bound, as ARX's
    ``ParameterCalculation.calculateDelta`` does).
    """
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ParameterError(f"k must be an integer >= 1, got {k!r}")
    if not 0 < beta < 1:
        raise ParameterError(f"beta must be strictly between 0 and 1, got {beta!r}")
    if not epsilon > 0 or -math.log1p(-beta) > epsilon * (1 + 1e-12):
        raise ParameterError(
            f"epsilon ({epsilon!r}) must be >= -ln(1 - beta) = {-math.log1p(-beta):.6g}"
        )
    gamma = _gamma(epsilon, beta)
    rate = _chernoff_rate(gamma, beta)
    start = _n_min(int(k), gamma)
    best = 0.0
    while start < _MAX_N:
        n = np.arange(start, start + _CHUNK, dtype=np.float64)
        running = np.maximum.accumulate(np.maximum(_tail(n, gamma, beta), best))
        bound = np.exp(-n * rate)
        done = np.flatnonzero(running >= bound)
        if done.size:
            return float(running[done[0]])
        best = float(running[-1])
        start += _CHUNK
    raise ParameterError(  # pragma: no cover - needs an absurdly small epsilon
        "the differential-privacy parameters need binomial tails beyond n = 50,000,000; "
        "increase epsilon"
    )


class SafePubParameters(tuple):
    """``(beta, k, delta_k)``: the sampling probability, the smallest class size and the
    ``d(k, beta, epsilon_anon)`` it achieves (``<= delta``)."""

    __slots__ = ()

    def __new__(cls, beta: float, k: int, delta_k: float) -> SafePubParameters:
        return super().__new__(cls, (beta, k, delta_k))

    @property
    def beta(self) -> float:
        """The sampling probability."""
        return self[0]

    @property
    def k(self) -> int:
        """The smallest class size released."""
        return self[1]

    @property
    def delta_k(self) -> float:
        """``d(k, beta, epsilon_anon)``, at most the requested delta."""
        return self[2]


@lru_cache(maxsize=256)
def safepub_parameters(epsilon_anon: float, delta: float) -> SafePubParameters:
    """``beta = 1 - e**(-epsilon_anon)`` and ``k`` as ARX's ``ParameterCalculation`` computes
    it (Bild et al. 2018, Section 4; Li et al. 2012, Theorem 5). ``beta`` is
    :func:`sampling_probability` (rounded down to ``2**-53``).

    The condition is that of ARX's ``calculateK``, the reference implementation of the
    paper's authors: starting from ``k = 1`` it computes ``delta_k = d(k, beta, epsilon_anon)``
    and then increments ``k``, until ``delta_k < delta`` (strictly). The ``k`` it returns is
    therefore ``k' + 1``, ``k'`` the smallest integer with ``d(k', beta, epsilon_anon) <
    delta``. ``d`` is non-increasing in ``k`` (``a_n`` does not depend on ``k`` and ``n_m``
    grows with it), so ``d(k) <= d(k') < delta``: the guarantee holds, with classes one record
    larger than the least the bound needs. (ARX evaluates ``d`` in interval arithmetic and
    tests ``delta_k < delta`` on the intervals' bounds; here ``d`` comes from
    :func:`scipy.stats.binom.sf`, about 1e-15 relative, so the two could differ only for a
    ``delta`` within about 1e-14 of some ``d(k')``.)

    The terms ``a_n`` are computed once up to the first ``N`` whose Chernoff bound is
    ``<= delta`` (every later term is below its own, strictly smaller, bound, so ``< delta``)
    and ``k'`` is the smallest with ``max_{n_m(k') <= n <= N} a_n < delta``.
    """
    eps = float(epsilon_anon)
    d = float(delta)
    if not math.isfinite(eps) or eps <= 0:
        raise ParameterError(f"epsilon_anon must be a finite number > 0, got {epsilon_anon!r}")
    if not 0 < d < 1:
        raise ParameterError(f"delta must be strictly between 0 and 1, got {delta!r}")
    beta = sampling_probability(eps)
    gamma = _gamma(eps, beta)
    rate = _chernoff_rate(gamma, beta)
    last = math.ceil(math.log(1.0 / d) / rate)  # c_last <= delta
    if last > _MAX_N:
        raise ParameterError(
            f"epsilon ({eps:g}) and delta ({d:g}) need binomial tails beyond n = "
            f"{_MAX_N:,}; increase epsilon or delta"
        )
    n = np.arange(0, last + 1, dtype=np.float64)
    a = _tail(n, gamma, beta)
    suffix = np.maximum.accumulate(a[::-1])[::-1]  # suffix[i] = max_{n >= i, n <= last} a_n
    k_hi = math.floor(gamma * (last + 2)) + 1  # n_m(k_hi) > last: nothing left to bound
    ks = np.arange(1, k_hi + 1)
    n_m = np.maximum(0, np.ceil(ks / gamma - 1.0)).astype(np.int64)
    worst = np.where(n_m <= last, suffix[np.minimum(n_m, last)], 0.0)
    k = int(ks[np.flatnonzero(worst < d)[0]]) + 1  # ARX's calculateK (docstring)
    return SafePubParameters(beta, k, safepub_delta(k, beta, eps))


class DifferentialPrivacy(PrivacyModel):
    """``(epsilon, delta)``-differential privacy by SafePub (Bild, Kuhn & Prasser 2018).

    ``epsilon`` is the whole budget; ``epsilon_search`` of it pays for the private choice of
    the transformation (ARX ``ARXConfiguration.setDPSearchBudget``, default 0.1) and
    ``epsilon_anon = epsilon - epsilon_search`` for the random sampling and the suppression
    of classes smaller than :attr:`k` (module docstring: the formulas). As a predicate on a
    frequency set it is k-anonymity with that ``k`` (ARX ``EDDifferentialPrivacy.isAnonymous``);
    only the ``safepub`` algorithm accepts it, since the guarantee needs the sampling and the
    private search as well.

    Parameters
    ----------
    epsilon : float
        The whole privacy budget (finite, > 0).
    delta : float
        The probability with which the epsilon bound may fail.
    epsilon_search : float
        The part of ``epsilon`` that pays for the private search (below ``epsilon``).

    Examples
    --------
    >>> DifferentialPrivacy(epsilon=1.0, delta=1e-5).to_entry()
    {'differential_privacy': {'epsilon': 1.0, 'delta': 1e-05, 'epsilon_search': 0.1}}
    """

    spec_name: ClassVar[str] = "differential_privacy"
    spec_label: ClassVar[str] = "differential privacy"
    monotonic: ClassVar[bool] = True
    monotonic_with_generalization: ClassVar[bool] = True

    epsilon: Annotated[Number, Field(gt=0)]
    delta: Annotated[Number, Field(gt=0, lt=1)]
    epsilon_search: Annotated[Number, Field(gt=0)] = 0.1

    @model_validator(mode="after")
    def _split(self) -> DifferentialPrivacy:
        if not math.isfinite(self.epsilon):
            raise ValueError("parameter 'epsilon' must be finite")
        if self.epsilon_search >= self.epsilon:
            raise ValueError(
                f"parameter 'epsilon_search' ({self.epsilon_search:g}) must be smaller than "
                f"'epsilon' ({self.epsilon:g}): the rest pays for the sampling"
            )
        return self

    @property
    def epsilon_anon(self) -> float:
        """``epsilon - epsilon_search``: the budget of the sampling and k-anonymization."""
        return float(self.epsilon) - float(self.epsilon_search)

    @property
    def parameters(self) -> SafePubParameters:
        """``(beta, k, delta_k)`` for :attr:`epsilon_anon` and ``delta``."""
        return safepub_parameters(self.epsilon_anon, float(self.delta))

    @property
    def beta(self) -> float:
        """The sampling probability ``1 - e**(-epsilon_anon)`` (rounded down to 2**-53)."""
        return self.parameters.beta

    @property
    def k(self) -> int:
        """The smallest class size the release may contain."""
        return self.parameters.k

    @property
    def name(self) -> str:
        return f"({self.epsilon:g}, {self.delta:g})-differential privacy (k={self.k})"

    def minimal_class_size(self) -> int:
        return self.k

    def evaluate(self, fs: FrequencySet) -> ModelResult:
        """Flag classes with fewer than :attr:`k` records (k-anonymity with the derived k)."""
        counts = fs.counts
        k = self.k
        violating = counts < k
        details = {
            "k": k,
            "beta": self.beta,
            "epsilon": self.epsilon,
            "epsilon_anon": self.epsilon_anon,
            "epsilon_search": self.epsilon_search,
            "delta": self.delta,
            "n_classes": fs.n_classes,
            "min_class_size": int(counts.min()) if counts.size else 0,
            "violating_classes": int(np.count_nonzero(violating)),
            "violating_records": int(counts[violating].sum()),
        }
        return self._result(violating, details)
