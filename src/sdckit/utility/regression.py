"""Specific utility of a release: regression confidence-interval overlap, correlation changes.

* **Confidence-interval overlap** (Karr, Kohnen, Oganian, Reiter & Sanil 2006, "A framework
  for evaluating the utility of data altered to protect confidentiality", *The American
  Statistician* 60(3), 224-232): the same linear regression is fitted on the original and on
  the protected data; for each coefficient with intervals ``(L_o, U_o)`` and ``(L_p, U_p)``,
  ``J = (min(U_o, U_p) - max(L_o, L_p)) / 2 * (1 / (U_o - L_o) + 1 / (U_p - L_p))`` --
  1 for identical intervals, 0 when they just touch, negative when they are apart (as Karr et
  al. and synthpop's ``compare.fit.synds`` report it).
* **Correlation differences**: the Pearson correlation matrices of the numeric columns of both
  files and the mean and largest absolute difference of their off-diagonal entries (the
  correlation-preservation check of Domingo-Ferrer & Torra's information-loss measures).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from sdckit.errors import DataError

__all__ = ["ci_overlap", "correlation_differences"]


def _design(frame: pd.DataFrame, predictors: Sequence[str], levels: dict[str, list]) -> np.ndarray:
    blocks = [np.ones((len(frame), 1))]
    for c in predictors:
        if c in levels:
            codes = pd.Categorical(frame[c].astype(str), categories=levels[c]).codes
            onehot = np.zeros((len(frame), max(len(levels[c]) - 1, 0)))
            rows = np.flatnonzero(codes > 0)
            onehot[rows, codes[rows] - 1] = 1.0
            blocks.append(onehot)
        else:
            blocks.append(frame[c].to_numpy(dtype=np.float64)[:, None])
    return np.hstack(blocks)


def _ols_intervals(x: np.ndarray, y: np.ndarray, level: float) -> tuple[np.ndarray, np.ndarray]:
    coef, *_ = np.linalg.lstsq(x, y, rcond=None)
    resid = y - x @ coef
    dof = max(len(y) - x.shape[1], 1)
    sigma2 = resid @ resid / dof
    cov = sigma2 * np.linalg.pinv(x.T @ x)
    from scipy.stats import t as student_t  # only the CI overlap needs scipy.stats

    half = student_t.ppf(0.5 + level / 2, dof) * np.sqrt(np.maximum(np.diag(cov), 0.0))
    return coef - half, coef + half


def ci_overlap(
    original: pd.DataFrame,
    protected: pd.DataFrame,
    target: str,
    predictors: Sequence[str],
    *,
    confidence_level: float = 0.95,
) -> dict[str, Any]:
    """Karr et al.'s interval overlap of the OLS regression of numeric ``target`` on
    ``predictors`` (categorical ones one-hot over the original's categories, first dropped):
    per coefficient and the mean (module docstring)."""
    for c in [target, *predictors]:
        for name, frame in (("original", original), ("protected", protected)):
            if c not in frame.columns:
                raise DataError(f"CI overlap: column {c!r} is not in the {name} data")
    for name, frame in (("original", original), ("protected", protected)):
        if not pd.api.types.is_numeric_dtype(frame[target]):
            raise DataError(f"CI overlap: the target {target!r} of the {name} data is not numeric")
    levels = {
        c: sorted(original[c].astype(str).unique())
        for c in predictors
        if not pd.api.types.is_numeric_dtype(original[c])
    }
    names = ["(intercept)"]
    for c in predictors:
        names += [f"{c}={v}" for v in levels[c][1:]] if c in levels else [c]
    lo_o, hi_o = _ols_intervals(
        _design(original, predictors, levels),
        original[target].to_numpy(dtype=np.float64),
        confidence_level,
    )
    lo_p, hi_p = _ols_intervals(
        _design(protected, predictors, levels),
        protected[target].to_numpy(dtype=np.float64),
        confidence_level,
    )
    inner = np.minimum(hi_o, hi_p) - np.maximum(lo_o, lo_p)
    with np.errstate(divide="ignore", invalid="ignore"):
        j = inner / 2 * (1 / (hi_o - lo_o) + 1 / (hi_p - lo_p))
    per = {n: (float(v) if np.isfinite(v) else None) for n, v in zip(names, j, strict=True)}
    finite = [v for v in per.values() if v is not None]
    return {
        "target": target,
        "predictors": list(predictors),
        "mean": float(np.mean(finite)) if finite else None,
        "coefficients": per,
    }


def correlation_differences(original: pd.DataFrame, protected: pd.DataFrame) -> dict[str, Any]:
    """Mean and largest absolute difference of the off-diagonal Pearson correlations of the
    numeric columns both files share (None with fewer than two)."""
    cols = [
        c
        for c in original.columns
        if c in protected.columns
        and pd.api.types.is_numeric_dtype(original[c])
        and pd.api.types.is_numeric_dtype(protected[c])
    ]
    if len(cols) < 2:
        return {"columns": cols, "mean_abs": None, "max_abs": None}
    a = original[cols].astype(float).corr().to_numpy()
    b = protected[cols].astype(float).corr().to_numpy()
    off = ~np.eye(len(cols), dtype=bool)
    d = np.abs(a - b)[off]
    d = d[np.isfinite(d)]
    return {
        "columns": cols,
        "mean_abs": float(d.mean()) if d.size else None,
        "max_abs": float(d.max()) if d.size else None,
    }
