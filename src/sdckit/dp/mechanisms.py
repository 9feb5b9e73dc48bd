"""Additive-noise mechanisms: Laplace, discrete Laplace, Gaussian, discrete Gaussian.

All noise is sampled exactly on the integers (:mod:`sdckit.dp.samplers`); none is computed in
floating point (Mironov 2012).

**Integer-valued queries** (counts, histograms, sums of integers) get integer noise directly:

* :func:`discrete_laplace` -- ``q(D) + Z``, ``P(Z = z) ∝ exp(-epsilon |z| / sensitivity)``, is
  epsilon-DP for an integer-valued ``q`` of L1 sensitivity ``sensitivity`` (the geometric
  mechanism of Ghosh, Roughgarden & Sundararajan 2009; Canonne, Kamath & Steinke 2020,
  sec. 2): the output probabilities on neighbours differ by the factor
  ``exp(epsilon |q(D) - q(D')|_1 / sensitivity) <= exp(epsilon)``.
* :func:`discrete_gaussian` -- ``P(Z = z) ∝ exp(-z**2 / (2 sigma**2))`` with
  ``sigma**2 = sensitivity**2 / (2 rho)`` is rho-zCDP for L2 sensitivity ``sensitivity``
  (Canonne, Kamath & Steinke 2020, Theorem 4; the same rho as the continuous Gaussian).

**Real-valued queries** (:func:`laplace`, :func:`gaussian`) are released on a grid of step
``granularity = 2**j``: the answer is rounded to the nearest grid point, ``k = round(q(D) /
granularity)``, integer noise is added and the result scaled back,
``granularity * (k + Z)``. The privacy argument runs on the grid: the rounded query ``k`` is an
integer-valued function, so the discrete mechanisms above apply with *its* sensitivity, which the
rounding can enlarge (``round`` is non-decreasing and ``round(x + n) = round(x) + n`` for
integers ``n``, see :func:`sdckit.dp._numbers.round_to_grid`):

* one number with sensitivity ``D``: ``|k(D) - k(D')| <= ceil(D / granularity)``;
* ``d`` numbers with L1 sensitivity ``D``: ``sum_i ceil(|x_i - y_i| / g) < D / g + d``, hence at
  most ``ceil(D / g) + d - 1`` grid units;
* ``d`` numbers with L2 sensitivity ``D``: the rounding errors differ by less than 1 per
  coordinate, so ``||k(D) - k(D')||_2 < D / g + sqrt(d)``.

The noise is calibrated to that grid sensitivity, so the release is exactly epsilon-DP
(rho-zCDP); the price is a noise scale larger by at most the factor ``1 + d g / D`` -- with the
default ``granularity`` (the largest power of two ``<= D / (1024 d)``) about 0.1%. This is the
"discretize, then add discrete noise" construction of Canonne, Kamath & Steinke (2020),
sec. 5 and of Balcer & Vadhan (2018), "Differential privacy on finite computers"; the output
lies on the grid, so the set of reachable outputs does not depend on the data, unlike
floating-point Laplace (Mironov 2012).

Noise scales are rounded *up* to dyadic rationals with 32 significant bits (variance ``sigma**2``
with 20) before sampling: more noise than the calibration asks for, by a relative 2**-31
(2**-19), never less.
"""

from __future__ import annotations

import math
from fractions import Fraction
from math import isqrt
from typing import Any

import numpy as np

from sdckit.dp._numbers import (
    DYADIC_BITS,
    ceil_fraction,
    dyadic_at_least,
    finite_array,
    floor_log2,
    grid_step,
    integer_array,
    open_probability,
    positive,
    power_of_two_at_most,
    round_to_grid,
)
from sdckit.dp.accountant import Accountant, PrivacyCost, rho_for_approx_dp
from sdckit.dp.randomness import Randomness, Seed
from sdckit.dp.release import Release, start
from sdckit.dp.samplers import _discrete_gaussian, _discrete_laplace
from sdckit.errors import ParameterError

__all__ = ["laplace", "discrete_laplace", "gaussian", "discrete_gaussian", "gaussian_budget"]

#: The default grid is at least this many steps per unit of sensitivity (per coordinate).
STEPS_PER_SENSITIVITY = 1024
_MAX_LOG2_SCALE = 50
#: The largest discrete Laplace scale (grid steps) :func:`laplace_noise` draws: the largest
#: ``m / 2**k`` with ``m < 2**DYADIC_BITS`` below ``2**(_MAX_LOG2_SCALE + 1)``, so that its
#: rounding up (:func:`laplace_scale`) stays below ``2**(_MAX_LOG2_SCALE + 1)``.
MAX_LAPLACE_SCALE = Fraction(2**DYADIC_BITS - 1) * Fraction(2) ** (
    _MAX_LOG2_SCALE + 1 - DYADIC_BITS
)


# --- noise in grid units (shared with the queries and the selection mechanisms) ------------


def laplace_noise(size: int, scale: Fraction, rnd: Randomness) -> np.ndarray:
    """``size`` draws of discrete Laplace noise of scale ``>= scale`` (rounded up to 32 bits)."""
    used = dyadic_at_least(scale)
    if scale > MAX_LAPLACE_SCALE:
        raise ParameterError(
            f"noise scale {float(used):.3g} grid steps is too large (epsilon too small for the "
            "sensitivity): choose a larger epsilon or a coarser granularity"
        )
    return _discrete_laplace(used.numerator, used.denominator, size, rnd)


def laplace_scale(scale: Fraction) -> Fraction:
    """The discrete Laplace scale :func:`laplace_noise` actually uses for ``scale``."""
    return dyadic_at_least(scale)


def laplace_epsilon_floor(sensitivity: Fraction) -> Fraction:
    """The smallest epsilon whose discrete Laplace noise :func:`laplace_noise` can draw for
    ``sensitivity`` grid steps: the scale ``sensitivity / epsilon`` (Ghosh, Roughgarden &
    Sundararajan 2009) may be at most :data:`MAX_LAPLACE_SCALE`."""
    return Fraction(sensitivity) / MAX_LAPLACE_SCALE


def discrete_laplace_variance(scale: float | Fraction) -> float:
    """The exact variance of the discrete Laplace of scale ``b`` (``P(Z = z) ∝ exp(-|z| / b)``
    on the integers): ``2 p / (1 - p)**2`` with ``p = exp(-1/b)``.

    The two-sided geometric distribution (Ghosh, Roughgarden & Sundararajan 2009; the discrete
    Laplace of Canonne, Kamath & Steinke 2020) is the difference of two independent geometric
    variables ``P(G = g) = (1 - p) p**g`` on ``{0, 1, ...}``, each of variance
    ``p / (1 - p)**2``. It is below the continuous Laplace's ``2 b**2``:
    ``2 p / (1 - p)**2 = 1 / (2 sinh(1/(2b))**2) = 2 b**2 - 1/6 + O(b**-2)``. Computed with
    ``expm1`` (``1 - p = -expm1(-1/b)``), accurate for every ``b``.
    """
    b = float(scale)
    if not b > 0:
        raise ParameterError(f"scale must be > 0, got {scale!r}")
    return 2.0 * math.exp(-1.0 / b) / math.expm1(-1.0 / b) ** 2


def gaussian_sigma2(sigma2: Fraction) -> Fraction:
    """The sigma² :func:`gaussian_noise` actually uses for ``sigma2`` (rounded up, 20 bits)."""
    return dyadic_at_least(sigma2, 20)


def gaussian_noise(size: int, sigma2: Fraction, rnd: Randomness) -> np.ndarray:
    """``size`` draws of discrete Gaussian noise with sigma² ``>= sigma2`` (rounded up, 20 bits)."""
    used = gaussian_sigma2(sigma2)
    if floor_log2(used) > 2 * _MAX_LOG2_SCALE:
        raise ParameterError(
            f"noise variance {float(used):.3g} grid steps² is too large (rho too small for the "
            "sensitivity): choose a larger rho or a coarser granularity"
        )
    return _discrete_gaussian(used.numerator, used.denominator, size, rnd)


def gaussian_budget(
    rho: Any = None, epsilon: Any = None, delta: Any = None, *, name: str = "gaussian"
) -> tuple[Fraction, PrivacyCost]:
    """The zCDP parameter and the cost of a Gaussian-type mechanism (rho, or epsilon and delta).

    With ``rho`` the cost is rho-zCDP. With ``epsilon`` and ``delta`` the noise is calibrated to
    ``rho = (sqrt(ln(1/delta) + epsilon) - sqrt(ln(1/delta)))**2``, whose zCDP guarantee
    implies (epsilon, delta)-DP (Bun & Steinke 2016, Prop. 1.3); the cost then states both.
    """
    if rho is not None:
        if epsilon is not None or delta is not None:
            raise ParameterError(f"{name}: give either rho, or epsilon and delta, not both")
        r = positive(rho, f"{name}: rho")
        return r, PrivacyCost.zcdp(float(r))
    if epsilon is None or delta is None:
        raise ParameterError(
            f"{name}: give its privacy parameter: rho (zCDP, e.g. rho=0.5), or epsilon and delta "
            "(e.g. epsilon=1.0, delta=1e-6)"
        )
    e = float(positive(epsilon, f"{name}: epsilon"))
    d = open_probability(delta, f"{name}: delta")
    r_float = rho_for_approx_dp(e, d)
    return Fraction(r_float), PrivacyCost(epsilon=e, delta=d, rho=r_float)


def _shape_output(values: np.ndarray, scalar: bool) -> Any:
    return values[0].item() if scalar else values


def _grid_values(grid: np.ndarray, step: Fraction) -> np.ndarray:
    """``step * grid`` as floats (exact while ``|grid| < 2**53``; ``step`` is a power of two)."""
    return np.ldexp(grid.astype(np.float64), floor_log2(step))


def _default_step(sensitivity: Fraction, size: int) -> Fraction:
    return power_of_two_at_most(sensitivity / (STEPS_PER_SENSITIVITY * size))


def _step(value: Any, sensitivity: Fraction, size: int) -> Fraction:
    if value is None:
        return _default_step(sensitivity, size)
    return grid_step(value)


# --- mechanisms ---------------------------------------------------------------------------


def discrete_laplace(
    value: Any,
    sensitivity: Any,
    epsilon: Any,
    *,
    accountant: Accountant | None = None,
    seed: Seed = None,
) -> Release:
    """epsilon-DP integer-valued query: ``value + Z``, ``P(Z=z) ∝ exp(-eps |z| / sensitivity)``.

    ``value``: the exact answer (an integer or a 1-d sequence of integers); ``sensitivity``: its
    L1 sensitivity over neighbouring datasets (> 0); the geometric mechanism (Ghosh,
    Roughgarden & Sundararajan 2009), noise from Canonne, Kamath & Steinke (2020),
    Algorithm 2. Returns a :class:`Release` whose value is an int (or an int64 array).
    """
    answers = integer_array(value, "discrete_laplace: value")
    sens = positive(sensitivity, "discrete_laplace: sensitivity")
    eps = positive(epsilon, "discrete_laplace: epsilon")
    cost = PrivacyCost.pure(float(eps))
    rnd = start("discrete_laplace", cost, accountant, seed)
    noise = laplace_noise(answers.size, sens / eps, rnd)
    return Release(
        value=_shape_output(answers + noise, np.ndim(value) == 0),
        mechanism="discrete_laplace",
        cost=cost,
        randomness=rnd.kind,
        parameters={"scale": float(laplace_scale(sens / eps)), "sensitivity": float(sens)},
    )


def laplace(
    value: Any,
    sensitivity: Any,
    epsilon: Any,
    *,
    granularity: Any = None,
    accountant: Accountant | None = None,
    seed: Seed = None,
) -> Release:
    """epsilon-DP real-valued query with Laplace-type noise of scale ``sensitivity / epsilon``.

    The Laplace mechanism (Dwork, McSherry, Nissim & Smith 2006) implemented without floating
    point noise: ``value`` (a number or 1-d sequence) is rounded to the grid of step
    ``granularity`` (a power of two, default the largest ``<= sensitivity / (1024 d)``) and
    discrete Laplace noise calibrated to the grid's L1 sensitivity ``ceil(sensitivity/g) + d - 1``
    is added (module docstring: the privacy argument). The output is ``granularity`` times an
    integer; ``parameters["scale"]`` is the noise scale in the units of ``value`` (at most 0.1%
    above ``sensitivity / epsilon`` with the default grid).
    """
    answers = finite_array(value, "laplace: value")
    sens = positive(sensitivity, "laplace: sensitivity")
    eps = positive(epsilon, "laplace: epsilon")
    step = _step(granularity, sens, answers.size)
    grid = round_to_grid(answers, step, "laplace: value")
    grid_sensitivity = ceil_fraction(sens / step) + answers.size - 1
    cost = PrivacyCost.pure(float(eps))
    rnd = start("laplace", cost, accountant, seed)
    scale = Fraction(grid_sensitivity) / eps
    noisy = grid + laplace_noise(answers.size, scale, rnd)
    return Release(
        value=_shape_output(_grid_values(noisy, step), np.ndim(value) == 0),
        mechanism="laplace",
        cost=cost,
        randomness=rnd.kind,
        parameters={
            "scale": float(laplace_scale(scale) * step),
            "sensitivity": float(sens),
            "granularity": float(step),
            "grid_sensitivity": grid_sensitivity,
        },
    )


def discrete_gaussian(
    value: Any,
    sensitivity: Any,
    *,
    rho: Any = None,
    epsilon: Any = None,
    delta: Any = None,
    accountant: Accountant | None = None,
    seed: Seed = None,
) -> Release:
    """rho-zCDP release of an integer-valued query with discrete Gaussian noise.

    ``sigma**2 = sensitivity**2 / (2 rho)`` for L2 sensitivity ``sensitivity`` (Canonne, Kamath
    & Steinke 2020, Theorem 4); give ``rho``, or ``epsilon`` and ``delta`` (calibrated through
    the zCDP conversion, :func:`gaussian_budget`). Noise: their Algorithm 3.
    """
    answers = integer_array(value, "discrete_gaussian: value")
    sens = positive(sensitivity, "discrete_gaussian: sensitivity")
    r, cost = gaussian_budget(rho, epsilon, delta, name="discrete_gaussian")
    rnd = start("discrete_gaussian", cost, accountant, seed)
    sigma2 = sens * sens / (2 * r)
    noise = gaussian_noise(answers.size, sigma2, rnd)
    return Release(
        value=_shape_output(answers + noise, np.ndim(value) == 0),
        mechanism="discrete_gaussian",
        cost=cost,
        randomness=rnd.kind,
        parameters={
            "sigma": float(gaussian_sigma2(sigma2)) ** 0.5,
            "sensitivity": float(sens),
            "rho": float(r),
        },
    )


def _ceil_sqrt(n: int) -> int:
    root = isqrt(n)
    return root if root * root == n else root + 1


def gaussian(
    value: Any,
    sensitivity: Any,
    *,
    rho: Any = None,
    epsilon: Any = None,
    delta: Any = None,
    granularity: Any = None,
    accountant: Accountant | None = None,
    seed: Seed = None,
) -> Release:
    """rho-zCDP real-valued query, Gaussian-type noise with ``sigma = sensitivity / sqrt(2 rho)``.

    The Gaussian mechanism (Bun & Steinke 2016, Prop. 1.6) implemented on a grid: ``value``
    (a number or 1-d sequence, L2 sensitivity ``sensitivity``) is rounded to the grid of step
    ``granularity`` and discrete Gaussian noise (Canonne, Kamath & Steinke 2020) calibrated to
    the grid's L2 sensitivity is added: ``ceil(sensitivity / g)`` for one number,
    ``sensitivity / g + ceil(sqrt(d))`` for ``d`` numbers (module docstring). Give ``rho``, or
    ``epsilon`` and ``delta``. ``parameters["sigma"]`` is sigma in the units of ``value``.
    """
    answers = finite_array(value, "gaussian: value")
    sens = positive(sensitivity, "gaussian: sensitivity")
    r, cost = gaussian_budget(rho, epsilon, delta, name="gaussian")
    d = answers.size
    step = _step(granularity, sens, d)
    grid = round_to_grid(answers, step, "gaussian: value")
    if d == 1:
        grid_sensitivity = Fraction(ceil_fraction(sens / step))
    else:
        grid_sensitivity = sens / step + _ceil_sqrt(d)
    rnd = start("gaussian", cost, accountant, seed)
    sigma2 = grid_sensitivity * grid_sensitivity / (2 * r)
    noisy = grid + gaussian_noise(d, sigma2, rnd)
    return Release(
        value=_shape_output(_grid_values(noisy, step), np.ndim(value) == 0),
        mechanism="gaussian",
        cost=cost,
        randomness=rnd.kind,
        parameters={
            "sigma": float(gaussian_sigma2(sigma2)) ** 0.5 * float(step),
            "sensitivity": float(sens),
            "granularity": float(step),
            "grid_sensitivity": float(grid_sensitivity),
            "rho": float(r),
        },
    )
