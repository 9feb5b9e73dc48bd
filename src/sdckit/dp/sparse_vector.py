"""The sparse vector technique: AboveThreshold.

Dwork & Roth (2014), *The Algorithmic Foundations of Differential Privacy*, Algorithm 1
("AboveThreshold") and Theorem 3.23; after Dwork, Naor, Reingold, Rothblum & Vadhan (2009):
a stream of queries ``f_1, f_2, ...`` of sensitivity ``sensitivity`` is compared with a
threshold ``T``; the noisy threshold is ``T + rho_noise`` with ``rho_noise ~ Lap(2 sensitivity /
epsilon)``; each query gets fresh ``nu_i ~ Lap(4 sensitivity / epsilon)`` and the answer is
"above" iff ``f_i(D) + nu_i >= T + rho_noise``. It stops at the first "above". The whole run,
however many "below" answers it gives, is epsilon-DP.

As in :mod:`sdckit.dp.mechanisms`, query answers and the threshold are rounded to a grid of step
``granularity`` (a power of two, default the largest ``<= sensitivity / 1024``) and the noises
are discrete Laplace in grid units with the grid sensitivity ``s = ceil(sensitivity / g)``. The
proof of Theorem 3.23 carries over unchanged: it shifts the threshold noise by ``s`` and the
``k``-th query's noise by ``2 s`` (integers, so the shifted values are still grid points) and
uses only that the noise pmf satisfies ``p(z + m) >= exp(-|m| / scale) p(z)``, which holds
for the discrete Laplace; comparisons use ``>=`` on integers, deterministic, so ties need no
randomization. The cost, epsilon, is charged when the instance is created, before the threshold
noise is drawn.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from sdckit.dp._numbers import (
    ceil_fraction,
    finite_array,
    grid_step,
    positive,
    power_of_two_at_most,
    round_to_grid,
)
from sdckit.dp.accountant import Accountant, BudgetExhausted, PrivacyCost
from sdckit.dp.mechanisms import STEPS_PER_SENSITIVITY, laplace_noise, laplace_scale
from sdckit.dp.randomness import Randomness, Seed
from sdckit.dp.release import Release, start

__all__ = ["AboveThreshold", "above_threshold"]


def _grid_setup(
    name: str, threshold: Any, sensitivity: Any, epsilon: Any, granularity: Any
) -> tuple[int, int, Fraction, Fraction]:
    sens = positive(sensitivity, f"{name}: sensitivity")
    eps = positive(epsilon, f"{name}: epsilon")
    if granularity is None:
        step = power_of_two_at_most(sens / STEPS_PER_SENSITIVITY)
    else:
        step = grid_step(granularity)
    t_grid = int(round_to_grid(finite_array(threshold, f"{name}: threshold"), step, name)[0])
    return t_grid, ceil_fraction(sens / step), eps, step


def first_above(
    answers: np.ndarray,
    threshold: int,
    grid_sensitivity: int,
    epsilon: Fraction,
    runs: int,
    rnd: Randomness,
) -> np.ndarray:
    """For ``runs`` independent AboveThreshold runs over the same integer ``answers`` (grid
    units), the index of the first "above" answer of each run, -1 when none is."""
    threshold_noise = laplace_noise(runs, 2 * Fraction(grid_sensitivity) / epsilon, rnd)
    query_noise = laplace_noise(runs * answers.size, 4 * Fraction(grid_sensitivity) / epsilon, rnd)
    above = (answers[None, :] + query_noise.reshape(runs, answers.size)) >= (
        threshold + threshold_noise
    )[:, None]
    return np.where(above.any(axis=1), above.argmax(axis=1), -1)


class AboveThreshold:
    """An interactive epsilon-DP AboveThreshold run (Dwork & Roth 2014, Algorithm 1).

    ``AboveThreshold(threshold, epsilon, sensitivity=1, accountant=acct)`` charges epsilon
    and draws the noisy threshold; then :meth:`query` answers ``True`` ("above") or ``False`` for
    each query answer, until the first ``True``; afterwards the instance is spent
    (:attr:`halted`) and further queries raise :class:`BudgetExhausted`. Thread-unsafe: one
    instance per analyst.
    """

    def __init__(
        self,
        threshold: Any,
        epsilon: Any,
        sensitivity: Any = 1,
        *,
        granularity: Any = None,
        accountant: Accountant | None = None,
        seed: Seed = None,
    ) -> None:
        self._threshold, self._grid_sensitivity, eps, self._step = _grid_setup(
            "above_threshold", threshold, sensitivity, epsilon, granularity
        )
        self.cost = PrivacyCost.pure(float(eps))
        self._rnd = start("above_threshold", self.cost, accountant, seed)
        self.randomness = self._rnd.kind
        self._query_scale = 4 * Fraction(self._grid_sensitivity) / eps
        noise = laplace_noise(1, 2 * Fraction(self._grid_sensitivity) / eps, self._rnd)
        self._noisy_threshold = self._threshold + int(noise[0])
        self._halted = False
        self.answered = 0
        #: noise scales in the units of the queries (threshold, query)
        self.scales = (
            float(laplace_scale(2 * Fraction(self._grid_sensitivity) / eps) * self._step),
            float(laplace_scale(self._query_scale) * self._step),
        )

    @property
    def halted(self) -> bool:
        """Whether the run has answered "above" and can answer no more."""
        return self._halted

    def query(self, value: Any) -> bool:
        """``True`` iff the noisy ``value`` is at least the noisy threshold; halts on ``True``."""
        if self._halted:
            raise BudgetExhausted(
                "above_threshold: this run already answered 'above' and is spent; start a new "
                "AboveThreshold (it costs epsilon again)"
            )
        answer = int(
            round_to_grid(
                finite_array(value, "above_threshold: value"), self._step, "above_threshold: value"
            )[0]
        )
        noise = int(laplace_noise(1, self._query_scale, self._rnd)[0])
        self.answered += 1
        if answer + noise >= self._noisy_threshold:
            self._halted = True
            return True
        return False


def above_threshold(
    values: Any,
    threshold: Any,
    epsilon: Any,
    sensitivity: Any = 1,
    *,
    granularity: Any = None,
    accountant: Accountant | None = None,
    seed: Seed = None,
) -> Release:
    """epsilon-DP index of the first of ``values`` whose noisy value is above ``threshold``.

    The non-interactive form of :class:`AboveThreshold` (Dwork & Roth 2014, Algorithm 1): the
    release's value is that index, or None when no answer comes out above.
    """
    answers = finite_array(values, "above_threshold: values")
    t_grid, grid_sens, eps, step = _grid_setup(
        "above_threshold", threshold, sensitivity, epsilon, granularity
    )
    grid = round_to_grid(answers, step, "above_threshold: values")
    cost = PrivacyCost.pure(float(eps))
    rnd = start("above_threshold", cost, accountant, seed)
    index = int(first_above(grid, t_grid, grid_sens, eps, 1, rnd)[0])
    return Release(
        value=None if index < 0 else index,
        mechanism="above_threshold",
        cost=cost,
        randomness=rnd.kind,
        parameters={
            "threshold_scale": float(laplace_scale(2 * Fraction(grid_sens) / eps) * step),
            "query_scale": float(laplace_scale(4 * Fraction(grid_sens) / eps) * step),
            "granularity": float(step),
        },
    )
