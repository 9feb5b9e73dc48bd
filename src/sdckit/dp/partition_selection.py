"""Differentially private partition selection: which values of a column to release, found with
budget instead of read from the data.

Each record holds one value of the column, so adding or removing a record changes one value's
count by 1. :func:`select_partitions` adds discrete Gaussian noise of variance ``sigma**2 =
1 / (2 rho)`` to the count of every value present and releases the values whose noisy count
reaches the threshold ``tau`` -- the Gaussian thresholding of Wilson, Zhang, Lam, Desfontaines,
Simmons-Marengo & Gipson (2020), "Differentially private SQL with bounded user contribution",
PoPETs, sec. 3 (there with Laplace noise; Korolova, Kenthapadi, Mishra & Ntoulas 2009,
"Releasing search queries and clicks privately", WWW, introduced the noisy threshold).

**Privacy.** Take neighbours ``D = D' + r``. If ``r``'s value ``v`` is present in ``D'``, one
noisy count moves by 1: the discrete Gaussian makes that ``rho``-zCDP (Canonne, Kamath &
Steinke 2020, Theorem 4) and thresholding is post-processing. If ``v`` is absent from ``D'``
(count 1 in ``D``), then conditioned on ``v`` not being released the output of ``D`` has the
law of the output of ``D'`` (the other counts and their noise are the same), so the output of
``D`` is the mixture ``(1 - p) M(D') + p M''`` with ``p = P[1 + Z >= tau] = P[Z >= tau - 1]``:
the release is ``p``-approximately ``rho``-zCDP (Bun & Steinke 2016, "Concentrated
differential privacy", TCC, Definition 8.1), charged as
:meth:`~sdckit.dp.accountant.PrivacyCost.approximate_zcdp` and composed by the zCDP
:class:`~sdckit.dp.accountant.Accountant`. ``tau`` is the smallest integer with
``P[Z >= tau - 1] <= delta``, computed for the variance the sampler actually uses
(:func:`partition_threshold`).

**The tail bound.** With ``f(z) = exp(-z**2 / (2 sigma**2))``, ``P[Z >= m] = S(m) / N`` with
``S(m) = sum_{z >= m} f(z)`` and ``N = sum_z f(z)``. For ``sigma < 50`` both sums are taken
term by term (up to ``m + 40 sigma + 50``, where ``f`` is below ``exp(-800)``; a geometric
bound covers the rest). Otherwise ``f`` decreases on ``[0, inf)``, so comparing sums with
integrals gives ``S(m) <= f(m) + sigma sqrt(2 pi) Q(m / sigma)`` (``Q`` the standard normal
tail) and ``N >= sigma sqrt(2 pi) - 1``: an upper bound on the tail, hence a threshold that is
never too low. A relative margin of ``1e-9`` absorbs floating-point rounding.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any

import numpy as np

from sdckit.core.monotone import first_holding
from sdckit.dp._numbers import integer_array, open_probability, positive
from sdckit.dp.accountant import Accountant, PrivacyCost
from sdckit.dp.mechanisms import gaussian_noise, gaussian_sigma2
from sdckit.dp.randomness import Seed
from sdckit.dp.release import Release, start

__all__ = ["partition_threshold", "select_partitions", "tail_bound"]

_MARGIN = 1e-9
_DIRECT_SIGMA = 50.0


def tail_bound(sigma: float, m: int) -> float:
    """An upper bound on ``P[Z >= m]`` for ``Z`` discrete Gaussian with parameter ``sigma``
    and an integer ``m >= 0`` (module docstring)."""
    s2 = 2.0 * sigma * sigma
    if sigma < _DIRECT_SIGMA:
        top = int(m + 40 * sigma + 50)
        z = np.arange(0, top + 1, dtype=np.float64)
        f = np.exp(-(z * z) / s2)
        norm = 2.0 * f.sum() - 1.0  # a lower bound on N (terms beyond top left out)
        # terms beyond top: ratio of consecutive terms <= exp(-(2 top + 1) / s2) < 1
        ratio = math.exp(-(2 * top + 1) / s2)
        rest = f[-1] * ratio / (1.0 - ratio)
        head = float(f[m:].sum()) if m <= top else 0.0
        return min(1.0, (head + rest) / norm)
    root = sigma * math.sqrt(2.0 * math.pi)
    q = 0.5 * math.erfc(m / (sigma * math.sqrt(2.0)))
    return min(1.0, (math.exp(-(m * m) / s2) + root * q) / (root - 1.0))


def partition_threshold(sigma: float, delta: float) -> int:
    """The smallest integer ``tau >= 1`` with ``P[Z >= tau - 1] <= delta`` (by
    :func:`tail_bound`, with a relative margin of 1e-9)."""

    def ok(m: int) -> bool:
        return tail_bound(sigma, m) * (1.0 + _MARGIN) <= delta

    hi = 1
    while not ok(hi):
        hi *= 2
    # tail_bound(sigma, 0) >= 1/2 > delta: 0 fails
    return first_holding(ok, 0, hi) + 1


def select_partitions(
    counts: Any,
    *,
    rho: Any,
    delta: Any,
    accountant: Accountant | None = None,
    seed: Seed = None,
) -> Release:
    """Which of the values with ``counts`` (each ``>= 1``: the values present, one count per
    value, each record counted once) to release: ``value`` is a boolean array, True where the
    noisy count reaches the threshold. Costs ``delta``-approximate ``rho``-zCDP (module
    docstring), charged to ``accountant`` (a ``"zcdp"`` one) before any noise is drawn."""
    answers = integer_array(counts, "select_partitions: counts")
    r = positive(rho, "select_partitions: rho")
    d = open_probability(delta, "select_partitions: delta")
    cost = PrivacyCost.approximate_zcdp(float(r), d)
    rnd = start("partition_selection", cost, accountant, seed)
    sigma2 = gaussian_sigma2(Fraction(1) / (2 * r))
    sigma = float(sigma2) ** 0.5
    tau = partition_threshold(sigma, d)
    noisy = answers + gaussian_noise(answers.size, sigma2, rnd)
    return Release(
        value=noisy >= tau,
        mechanism="partition_selection",
        cost=cost,
        randomness=rnd.kind,
        parameters={"sigma": sigma, "threshold": tau, "rho": float(r), "delta": d},
    )
