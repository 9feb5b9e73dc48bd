"""Additive noise masking of numeric attributes.

Three variants (Brand 2002, "Microdata protection through noise addition", in *Inference
Control in Statistical Databases*, LNCS 2316, pp. 97-116; Hundepool et al., *Statistical
Disclosure Control*, Wiley 2012, sec. 3.4.1):

* ``uncorrelated`` -- ``z_j = x_j + e_j`` with ``e_j ~ N(0, alpha * s_j^2)`` drawn independently
  per attribute; preserves means and covariances in expectation, inflates variances by
  ``(1 + alpha)`` and therefore attenuates correlations by ``1 / (1 + alpha)``.
* ``correlated`` -- ``e ~ N(0, alpha * S)`` with ``S`` the sample covariance matrix of the
  attributes; the masked covariance is ``(1 + alpha) S`` in expectation, so means and
  *correlations* are preserved in expectation.
* ``kim`` -- Kim (1986), "A method for limiting disclosure in microdata based on random noise
  and transformation", Proc. ASA Section on Survey Research Methods, 370-374: correlated
  noise followed by the linear transformation ``g = c * (x + e) + d`` chosen so that the
  masked means and the masked sample covariance matrix are unbiased for the original ones.

The noise level ``alpha`` is a *variance* ratio (Brand's notation). sdcMicro's ``addNoise``
instead takes ``noise`` as a percentage of the *standard deviation*
(``sd_noise = noise/100 * sd(x)``): ``alpha = (noise/100)^2``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

import numpy as np
import pandas as pd

from sdckit.core.spec import (
    ColumnList,
)
from sdckit.errors import DataError, ParameterError
from sdckit.masking.base import MaskResult, accepts_series, check_columns, numeric_matrix
from sdckit.masking.spec import (
    LOCAL_AND_SPARK,
    MaskingMethod,
    Positive,
    Rng,
)
from sdckit.masking.stats import ColumnStats, PandasStats

_METHODS = ("uncorrelated", "correlated", "kim")


def _check_alpha(alpha: float) -> float:
    try:
        a = float(alpha)
    except (TypeError, ValueError):
        raise ParameterError(
            f"additive_noise: alpha={alpha!r} is not a number; give a variance "
            "ratio > 0, e.g. alpha=0.1"
        ) from None
    if not (np.isfinite(a) and a > 0):
        raise ParameterError(
            f"additive_noise: alpha={alpha!r} must be a finite number > 0 (the "
            "noise variance as a fraction of the attribute variance), e.g. 0.1"
        )
    return a


def _square_root(cov: np.ndarray) -> np.ndarray:
    """A symmetric square root ``root`` of ``cov`` (``cov = root @ root.T``; works for a
    singular ``cov``), from its eigendecomposition."""
    vals, vecs = np.linalg.eigh(cov)
    return np.asarray(vecs * np.sqrt(np.clip(vals, 0.0, None)), dtype=np.float64)


def _mvn_noise(rng: np.random.Generator, n: int, root: np.ndarray) -> np.ndarray:
    """``n`` draws of N(0, root @ root.T): standard normal rows times ``root.T``, summed column
    by column in a fixed order (element-wise arithmetic, not BLAS, whose result depends on
    the CPU and its number of threads: the same bits on every engine and machine)."""
    g = rng.standard_normal((n, root.shape[0]))
    out = np.zeros((n, root.shape[0]))
    for k in range(root.shape[0]):
        out += g[:, k : k + 1] * root[:, k][None, :]
    return out


def _write_back(data: pd.DataFrame, columns: Sequence[str], values: np.ndarray) -> pd.DataFrame:
    out = data.copy()
    for j, c in enumerate(columns):
        out[c] = values[:, j]
    return out


@accepts_series
def noise(
    data: pd.DataFrame,
    columns: Sequence[str] | str | None,
    alpha: float = 0.1,
    method: str = "uncorrelated",
    seed: int | np.random.Generator | None = None,
) -> MaskResult:
    """Mask numeric columns by adding Gaussian noise (Brand 2002; Kim 1986).

    ``alpha`` is the noise variance relative to the attribute (co)variance. ``method``:

    * ``"uncorrelated"``: ``e_j ~ N(0, alpha * s_j^2)`` independently per column.
    * ``"correlated"``: ``e ~ N(0, alpha * S)``, ``S`` the sample covariance matrix (complete
      rows); means and correlations are preserved in expectation.
    * ``"kim"``: ``z = x + e`` with ``e ~ N(0, alpha * S)``, then ``g = c * z + d`` with
      ``c = 1 / sqrt(1 + alpha)`` and ``d_j = (1 - c) * mean_j``. Given the data,
      ``E[mean(g)] = mean(x)`` and ``E[cov(g)] = c^2 (S + alpha S) = S`` exactly, so the masked
      sample covariance is an unbiased estimate of the original one (Kim 1986; Brand 2002,
      sec. 3.3, quotes ``c = sqrt((n-1)/((1+alpha) n - 1))``, which tends to the same value as
      ``n`` grows and corresponds to a slightly different noise scaling; note that sdcMicro's
      ``addNoise(method="restr")`` applies only the transformation, without the noise).
      ``details`` publish ``c`` and ``d``: a user recovers unbiased sub-domain estimates by
      ``mean_A(x) ~ (mean_A(g) - d) / c`` and ``cov_A(x) ~ cov_A(g) / c^2 - alpha * S``
      (``alpha * S`` is published as ``noise_covariance``).

    Missing values stay missing. Returns a :class:`MaskResult` (input unchanged).

    The method is :func:`noise_plan` (the statistics of the whole data) then
    :func:`noise_release` (the draws); the Spark engine makes the plan from Spark aggregates
    and releases it block by block (:mod:`sdckit.spark.mask`).
    """
    cols = check_columns(data, columns)
    plan = noise_plan(PandasStats(data), cols, alpha, method)
    return noise_release(data, plan, np.random.default_rng(seed))


@dataclass(frozen=True)
class NoisePlan:
    """What additive noise fixes from the whole data (:func:`noise_plan`): the noise standard
    deviations (``uncorrelated``), or the noise covariance ``alpha * S`` with its symmetric
    square root and, for ``kim``, the column means."""

    columns: list[str]
    alpha: float
    method: str
    noise_sd: np.ndarray | None = None
    noise_cov: np.ndarray | None = None
    noise_root: np.ndarray | None = None
    mean: np.ndarray | None = None
    random: ClassVar[bool] = True

    def release(self, data: pd.DataFrame, rng: np.random.Generator | None) -> MaskResult:
        """:func:`noise_release`."""
        return noise_release(data, self, np.random.default_rng(rng))

    def out_kinds(self, kinds: dict[str, str]) -> dict[str, str]:
        """Noisy values are doubles."""
        return dict.fromkeys(self.columns, "double")

    def records(self, released: ColumnStats, changed: Sequence[int]) -> list[dict[str, Any]]:
        """The record (parameters and the noise published), the same for any data."""
        return [self.release(_empty(self.columns), np.random.default_rng(0)).record()]


def _empty(columns: Sequence[str]) -> pd.DataFrame:
    return pd.DataFrame({c: pd.Series([], dtype=np.float64) for c in columns})


def noise_plan(
    stats: ColumnStats, columns: Sequence[str] | str | None, alpha: float, method: str
) -> NoisePlan:
    """The plan of :func:`additive_noise`: the parameters checked, the columns checked numeric
    and finite, and the statistics the noise is scaled by (the sample standard deviations, or
    the sample covariance matrix over the complete rows and the column means)."""
    cols = stats.check_columns(columns)
    a = _check_alpha(alpha)
    if method not in _METHODS:
        raise ParameterError(
            f"additive_noise: unknown method {method!r}; choose one of {', '.join(_METHODS)}"
        )
    stats.check_numeric(cols, "additive_noise")
    if method == "uncorrelated":
        return NoisePlan(cols, a, method, noise_sd=np.sqrt(a) * stats.std(cols))
    m, cov = stats.covariance(cols)
    if m < 2:
        raise DataError(
            f"additive_noise: fewer than 2 rows have values in all of {', '.join(cols)}; "
            "the covariance matrix cannot be estimated -- mask fewer columns or impute first"
        )
    mean = stats.mean(cols) if method == "kim" else None
    noise_cov = a * cov
    root = _square_root(noise_cov)  # once, on the driver: LAPACK's bits may vary by machine
    return NoisePlan(cols, a, method, noise_cov=noise_cov, noise_root=root, mean=mean)


def noise_release(data: pd.DataFrame, plan: NoisePlan, rng: np.random.Generator) -> MaskResult:
    """Add the noise of ``plan`` to ``data`` (all records or one block): one standard normal
    draw per value, row by row."""
    cols = plan.columns
    x = numeric_matrix(data, cols, "additive_noise")
    n, p = x.shape
    a = plan.alpha
    params = {"columns": cols, "alpha": a, "method": plan.method}
    if plan.method == "uncorrelated":
        assert plan.noise_sd is not None
        noise_sd = plan.noise_sd
        masked = x + rng.standard_normal((n, p)) * noise_sd
        details: dict[str, Any] = {"noise_sd": dict(zip(cols, noise_sd.tolist(), strict=True))}
        return MaskResult(_write_back(data, cols, masked), "additive_noise", params, details)

    assert plan.noise_cov is not None and plan.noise_root is not None
    noise_cov = plan.noise_cov
    z = x + _mvn_noise(rng, n, plan.noise_root)
    details = {"noise_covariance": noise_cov.tolist()}
    if plan.method == "correlated":
        return MaskResult(_write_back(data, cols, z), "additive_noise", params, details)

    assert plan.mean is not None
    c = 1.0 / np.sqrt(1.0 + a)
    d = (1.0 - c) * plan.mean
    g = c * z + d
    details.update(
        {
            "c": float(c),
            "d": dict(zip(cols, d.tolist(), strict=True)),
            "bias_adjustment": "mean_A(x) = (mean_A(g) - d) / c; "
            "cov_A(x) = cov_A(g) / c**2 - noise_covariance",
        }
    )
    return MaskResult(_write_back(data, cols, g), "additive_noise", params, details)


# -- the method as a job-file step -----------------------------------------------------------------
class Noise(MaskingMethod):
    """Additive noise on numeric columns (:func:`sdckit.masking.noise_addition.noise`).

    Parameters
    ----------
    columns : list of str
        The numeric columns to mask.
    alpha : float, default 0.1
        Noise variance as a fraction of the attribute variance (> 0).
    method : {"uncorrelated", "correlated", "kim"}, default "uncorrelated"
        Independent noise per column, noise with the covariance of the columns, or
        correlated noise followed by Kim's linear transformation.

    References
    ----------
    Brand, R. (2002). Microdata protection through noise addition. In *Inference Control in
    Statistical Databases*, LNCS 2316, 97-116. Kim, J. (1986). A method for limiting
    disclosure in microdata based on random noise and transformation. Proc. ASA Section on
    Survey Research Methods, 370-374.
    """

    spec_name: ClassVar[str] = "noise"
    engines: ClassVar[frozenset[str]] = LOCAL_AND_SPARK
    spec_aliases: ClassVar[tuple[str, ...]] = ("additive_noise",)
    must_change: ClassVar[bool] = True

    columns: ColumnList
    alpha: Positive = 0.1
    method: Literal["uncorrelated", "correlated", "kim"] = "uncorrelated"

    def plan(self, stats: ColumnStats, seed: int | None = None) -> NoisePlan:
        """:func:`noise_plan`."""
        return noise_plan(stats, self.columns, self.alpha, self.method)

    def apply(self, data: pd.DataFrame, rng: Rng = None) -> list[MaskResult]:
        """Add the noise (see :meth:`MaskingMethod.apply`)."""
        return [noise(data, self.columns, self.alpha, self.method, seed=rng)]
