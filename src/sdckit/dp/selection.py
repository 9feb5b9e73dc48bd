"""Private selection: the exponential mechanism and report-noisy-max.

Both pick one of ``n`` candidates whose quality is a score ``u_i(D)`` with per-candidate
sensitivity ``sensitivity`` (``|u_i(D) - u_i(D')| <= sensitivity`` on neighbours). Scores are
rounded to a grid of step ``granularity`` (a power of two, default the largest
``<= sensitivity / 1024``) exactly as for :func:`sdckit.dp.mechanisms.laplace`: the rounded
scores are integers whose sensitivity is ``ceil(sensitivity / granularity)`` grid steps, and
the mechanisms below are applied to them with that sensitivity, so they are exactly epsilon-DP.

* :func:`exponential` -- McSherry & Talwar (2007), "Mechanism design via differential
  privacy" (FOCS), Theorem 6; Dwork & Roth (2014), Theorem 3.10: ``P(i) ∝ exp(epsilon u_i /
  (2 sensitivity))`` is epsilon-DP, and ``exp(epsilon u_i / sensitivity)`` when every score
  moves in the same direction between neighbours (``monotonic=True``, e.g. counts). Sampled
  exactly by :func:`sdckit.dp.samplers.exp_weighted_index` (epsilon rounded *down* to a
  32-bit dyadic rational: a stronger guarantee).
* :func:`report_noisy_max` -- Dwork & Roth (2014), Claim 3.9: add independent noise to each
  score and report only the index of the largest. With discrete Laplace noise of scale
  ``2 sensitivity / epsilon`` (``sensitivity / epsilon`` if monotonic) it is epsilon-DP:
  fixing the other noises, candidate ``i`` wins iff its noise is at least a threshold ``r*``
  that moves by at most ``2 sensitivity`` grid steps (``sensitivity`` if monotonic) between
  neighbours, and for the discrete Laplace ``P(Z >= r + m) >= exp(-m / scale) P(Z >= r)``
  since the pmf ratio ``p(z + m) / p(z) >= exp(-m / scale)`` pointwise. Ties are broken by the
  lowest index, which keeps "``i`` wins" monotone in its own noise.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

import numpy as np

from sdckit.dp._numbers import (
    ceil_fraction,
    dyadic_at_most,
    finite_array,
    grid_step,
    positive,
    power_of_two_at_most,
    round_to_grid,
)
from sdckit.dp.accountant import Accountant, PrivacyCost
from sdckit.dp.mechanisms import STEPS_PER_SENSITIVITY, laplace_noise, laplace_scale
from sdckit.dp.randomness import Randomness, Seed
from sdckit.dp.release import Release, start
from sdckit.dp.samplers import _exp_weighted_index
from sdckit.errors import DataError, ParameterError

__all__ = ["exponential", "report_noisy_max"]

_WORD = 1 << 63


def exponential_indices(
    scores: np.ndarray,
    sensitivity: Fraction,
    epsilon: Fraction,
    *,
    monotonic: bool,
    size: int,
    rnd: Randomness,
) -> np.ndarray:
    """``size`` exact draws of the exponential mechanism over integer ``scores`` (grid units).

    ``P(i) ∝ exp(epsilon' (u_i - max u) / (c sensitivity))`` with ``c = 1`` if monotonic else 2
    and ``epsilon'`` = ``epsilon`` rounded down to 32 significant bits (McSherry & Talwar 2007).
    """
    eps = dyadic_at_most(epsilon)
    factor = 1 if monotonic else 2
    gap = scores.max() - scores  # >= 0
    coef = eps.numerator * sensitivity.denominator
    den = eps.denominator * factor * sensitivity.numerator
    if int(gap.max()) * coef < _WORD and den < _WORD:
        num = gap * coef
    else:
        num = gap.astype(object) * coef
    return _exp_weighted_index(num, den, size, rnd)


def noisy_max_indices(
    scores: np.ndarray, scale: Fraction, size: int, rnd: Randomness
) -> np.ndarray:
    """``size`` draws of argmax_i (scores_i + discrete Laplace noise), lowest index on ties."""
    noise = laplace_noise(size * scores.size, scale, rnd).reshape(size, scores.size)
    return np.argmax(scores[None, :] + noise, axis=1)


def _prepare(
    name: str,
    scores: Any,
    sensitivity: Any,
    epsilon: Any,
    candidates: Sequence[Any] | None,
    granularity: Any,
) -> tuple[np.ndarray, Fraction, Fraction, Fraction]:
    values = finite_array(scores, f"{name}: scores")
    sens = positive(sensitivity, f"{name}: sensitivity")
    eps = positive(epsilon, f"{name}: epsilon")
    if candidates is not None and len(candidates) != values.size:
        raise DataError(
            f"{name}: {len(candidates)} candidates but {values.size} scores; give one score "
            "per candidate"
        )
    if granularity is None:
        step = power_of_two_at_most(sens / STEPS_PER_SENSITIVITY)
    else:
        step = grid_step(granularity)
    grid = round_to_grid(values, step, f"{name}: scores")
    return grid, Fraction(ceil_fraction(sens / step)), eps, step


def _pick(index: int, candidates: Sequence[Any] | None) -> Any:
    return index if candidates is None else candidates[index]


def _check_flag(name: str, monotonic: Any) -> bool:
    if not isinstance(monotonic, bool):
        raise ParameterError(f"{name}: monotonic must be True or False, got {monotonic!r}")
    return monotonic


def exponential(
    scores: Any,
    sensitivity: Any,
    epsilon: Any,
    *,
    candidates: Sequence[Any] | None = None,
    monotonic: bool = False,
    granularity: Any = None,
    accountant: Accountant | None = None,
    seed: Seed = None,
) -> Release:
    """epsilon-DP choice of a candidate, ``P(i) ∝ exp(epsilon score_i / (2 sensitivity))``.

    The exponential mechanism (McSherry & Talwar 2007; ``/ sensitivity`` instead of
    ``/ (2 sensitivity)`` when ``monotonic``), sampled exactly on grid-rounded scores (module
    docstring). ``scores``: one per candidate; ``sensitivity``: the most a score changes
    between neighbouring datasets. The release's value is the chosen candidate (its index when
    ``candidates`` is None).
    """
    flag = _check_flag("exponential", monotonic)
    grid, grid_sens, eps, step = _prepare(
        "exponential", scores, sensitivity, epsilon, candidates, granularity
    )
    cost = PrivacyCost.pure(float(eps))
    rnd = start("exponential", cost, accountant, seed)
    index = int(exponential_indices(grid, grid_sens, eps, monotonic=flag, size=1, rnd=rnd)[0])
    return Release(
        value=_pick(index, candidates),
        mechanism="exponential",
        cost=cost,
        randomness=rnd.kind,
        parameters={
            "sensitivity": float(sensitivity),
            "granularity": float(step),
            "monotonic": flag,
            "epsilon_used": float(dyadic_at_most(eps)),
        },
    )


def report_noisy_max(
    scores: Any,
    sensitivity: Any,
    epsilon: Any,
    *,
    candidates: Sequence[Any] | None = None,
    monotonic: bool = False,
    granularity: Any = None,
    accountant: Accountant | None = None,
    seed: Seed = None,
) -> Release:
    """epsilon-DP index of the largest score after adding discrete Laplace noise to each.

    Report-noisy-max (Dwork & Roth 2014, Claim 3.9) with noise of scale
    ``2 sensitivity / epsilon`` (``sensitivity / epsilon`` when ``monotonic``) on grid-rounded
    scores; only the winner is released, not its noisy score (module docstring: the proof).
    """
    flag = _check_flag("report_noisy_max", monotonic)
    grid, grid_sens, eps, step = _prepare(
        "report_noisy_max", scores, sensitivity, epsilon, candidates, granularity
    )
    cost = PrivacyCost.pure(float(eps))
    rnd = start("report_noisy_max", cost, accountant, seed)
    scale = (1 if flag else 2) * grid_sens / eps
    index = int(noisy_max_indices(grid, scale, 1, rnd)[0])
    return Release(
        value=_pick(index, candidates),
        mechanism="report_noisy_max",
        cost=cost,
        randomness=rnd.kind,
        parameters={
            "scale": float(laplace_scale(scale) * step),
            "sensitivity": float(sensitivity),
            "granularity": float(step),
            "monotonic": flag,
        },
    )
