"""Combining rules: one estimate and its variance from ``m`` synthetic copies.

Each copy ``i`` gives an estimate ``q_i`` of a quantity (a mean, a regression coefficient)
and its estimated variance ``v_i`` as the analyst computes them on that copy as if it were
real data. With ``q_bar = mean(q_i)``, ``v_bar = mean(v_i)``, ``b = var(q_i)`` (divisor
``m - 1``), ``n`` original and ``k`` synthetic records per copy:

* **inference to the original-data estimate** (what the original data would give; synthpop's
  default ``population.inference = FALSE``): estimate ``q_bar``, variance ``v_bar k / n``;
* **population inference, fully synthetic, simple synthesis** (models fitted once,
  ``proper = False``; Raab, Nowok & Dibben 2016, "Practical data synthesis for large
  samples", *J. Privacy and Confidentiality* 7(3), sec. 3): ``T_s = v_bar k/n (1 + n/(k m))``;
* **... proper synthesis** (parameters drawn from their posterior / bootstrap; same paper):
  ``T_p = v_bar k/n (1 + (n/k + 1)/m)``;
* **partially synthetic data** (only some values replaced; Reiter 2003, "Inference for
  partially synthetic, public use microdata sets", *Survey Methodology* 29(2), 181-188):
  ``T_part = v_bar + b / m`` (needs ``m >= 2``).

The confidence interval is ``q_bar +- z sqrt(T)`` (normal reference, as synthpop's
``summary.fit.synds``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

from sdckit.errors import ParameterError

__all__ = ["Combined", "combine"]


@dataclass(frozen=True)
class Combined:
    """Combined estimate(s): ``estimate``, ``variance``, ``se``, the interval, and the rule."""

    estimate: np.ndarray
    variance: np.ndarray
    between: np.ndarray
    rule: str
    confidence_level: float

    @property
    def se(self) -> np.ndarray:
        """Standard error ``sqrt(variance)``."""
        return np.sqrt(self.variance)

    @property
    def interval(self) -> tuple[np.ndarray, np.ndarray]:
        """Normal-reference confidence interval at :attr:`confidence_level`."""
        z = norm.ppf(0.5 + self.confidence_level / 2)
        return self.estimate - z * self.se, self.estimate + z * self.se


def combine(
    estimates: Sequence[float] | np.ndarray,
    variances: Sequence[float] | np.ndarray,
    *,
    n_original: int,
    n_synthetic: int | None = None,
    population_inference: bool = False,
    proper: bool = False,
    partial: bool = False,
    confidence_level: float = 0.95,
) -> Combined:
    """Combine per-copy ``estimates`` and ``variances`` (``m`` values, or ``m x p`` for ``p``
    quantities) by the rule the arguments select (module docstring)."""
    q = np.asarray(estimates, dtype=np.float64)
    v = np.asarray(variances, dtype=np.float64)
    if q.shape != v.shape or q.ndim not in (1, 2) or len(q) == 0:
        raise ParameterError(
            "combine: estimates and variances must have the same shape, one row per copy "
            f"(got {q.shape} and {v.shape})"
        )
    if not (np.isfinite(q).all() and np.isfinite(v).all()) or (v < 0).any():
        raise ParameterError("combine: estimates must be finite and variances finite and >= 0")
    if not 0 < confidence_level < 1:
        raise ParameterError(f"combine: confidence_level must be in (0, 1), got {confidence_level}")
    m = len(q)
    n = int(n_original)
    k = int(n_synthetic) if n_synthetic is not None else n
    if n < 1 or k < 1:
        raise ParameterError("combine: n_original and n_synthetic must be >= 1")
    q_bar = q.mean(axis=0)
    v_bar = v.mean(axis=0)
    b = q.var(axis=0, ddof=1) if m > 1 else np.zeros_like(q_bar)
    if partial:
        if m < 2:
            raise ParameterError(
                "combine: the partially synthetic rule (Reiter 2003) needs m >= 2 copies"
            )
        t, rule = v_bar + b / m, "partial (Reiter 2003)"
    elif not population_inference:
        t, rule = v_bar * k / n, "original-data estimate (Raab, Nowok & Dibben 2016)"
    elif proper:
        t = v_bar * k / n * (1 + (n / k + 1) / m)
        rule = "population, proper synthesis (Raab, Nowok & Dibben 2016)"
    else:
        t = v_bar * k / n * (1 + n / k / m)
        rule = "population, simple synthesis (Raab, Nowok & Dibben 2016)"
    return Combined(q_bar, np.asarray(t), np.asarray(b), rule, confidence_level)
