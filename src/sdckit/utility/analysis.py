"""Use-specific (analysis-specific) utility: does an analysis on the protected data agree?

Sources
-------
* Karr, A. F., Kohnen, C. N., Oganian, A., Reiter, J. P. & Sanil, A. P. (2006). "A framework for
  evaluating the utility of data altered to protect confidentiality". *The American
  Statistician* 60(3), 224-232. -- confidence-interval overlap of regression coefficients.
* Classifier accuracy ("train on protected, test on original") is the machine-learning utility
  check common in the SDC and synthetic-data literature; the set-up is documented below.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy import stats
from sklearn.ensemble import RandomForestClassifier

from sdckit.core.encoding import as_text, is_numeric
from sdckit.errors import DataError
from sdckit.utility.numeric import check_aligned, numeric_columns

__all__ = ["classifier_accuracy", "regression_comparison"]


def _as_list(columns: Sequence[str] | str, what: str, measure: str) -> list[str]:
    cols = [columns] if isinstance(columns, str) else list(columns)
    if not cols:
        raise DataError(f"{measure}: no {what} given; name at least one column")
    return cols


def _ols(
    y: np.ndarray, x: np.ndarray, level: float, which: str, names: Sequence[str]
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """OLS with intercept: (coefficients, lower, upper) of the ``level`` t-intervals."""
    n = len(y)
    design = np.column_stack([np.ones(n), x])
    k = design.shape[1]
    if n <= k:
        raise DataError(
            f"regression comparison: {n} records cannot estimate {k} coefficients with error "
            "variance (need more records than coefficients); use fewer predictors"
        )
    beta, _, rank, _ = np.linalg.lstsq(design, y, rcond=None)
    if rank < k:
        raise DataError(
            f"regression comparison: the predictors {', '.join(map(repr, names))} are "
            f"collinear (or constant) in the {which} data, so the coefficients are not "
            "identified; drop a redundant predictor"
        )
    resid = y - design @ beta
    sigma2 = float(resid @ resid) / (n - k)
    cov = sigma2 * np.linalg.inv(design.T @ design)
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    t = stats.t.ppf(0.5 + level / 2, n - k)
    return beta, beta - t * se, beta + t * se


def regression_comparison(
    original: pd.DataFrame,
    protected: pd.DataFrame,
    target: str,
    predictors: Sequence[str] | str,
    level: float = 0.95,
) -> dict[str, object]:
    """Compare the OLS regression of ``target`` on ``predictors`` in both files (Karr et al. 2006).

    The model ``target = b_0 + sum_k b_k predictor_k + error`` is fitted by least squares
    (``numpy.linalg.lstsq``) on the original and on the protected data, with the usual
    ``level`` t-intervals ``b_k +- t_{n-K, (1+level)/2} se_k`` (``se`` from
    ``sigma^2 (X'X)^-1``, ``sigma^2 = RSS / (n - K)``). For each coefficient the interval
    overlap of Karr et al. (2006) is

    ``J_k = 1/2 [(U_k - L_k) / (u_o - l_o) + (U_k - L_k) / (u_p - l_p)]``,
    ``U_k = min(u_o, u_p)``, ``L_k = max(l_o, l_p)``

    (1 for identical intervals; negative when the intervals do not overlap, measuring how far
    apart they are -- not clipped). A zero-width interval (a perfect fit) makes its term
    undefined; sdckit then sets that term to 1 when both intervals are identical and to 0
    otherwise.

    Returns ``{"coefficients": {name: {"original", "protected", "difference", "ci_overlap",
    "original_ci": [l, u], "protected_ci": [l, u]}}, "mean_ci_overlap",
    "mean_abs_coefficient_difference", "n"}``; names are ``"intercept"`` and the predictors;
    ``difference`` is protected minus original. All predictors must be numeric.
    """
    measure = "regression comparison"
    preds = _as_list(predictors, "predictors", measure)
    if not isinstance(target, str):
        raise DataError(f"{measure}: target must be one column name, got {target!r}")
    if target in preds:
        raise DataError(f"{measure}: the target {target!r} is also listed as a predictor")
    if not (0 < level < 1):
        raise DataError(f"{measure}: level must be between 0 and 1 (e.g. 0.95), got {level!r}")
    cols = check_aligned(original, protected, [target, *preds], measure)
    xo = numeric_columns(original, cols, "original", measure)
    xp = numeric_columns(protected, cols, "protected", measure)
    bo, lo, uo = _ols(xo[:, 0], xo[:, 1:], level, "original", preds)
    bp, lp, up = _ols(xp[:, 0], xp[:, 1:], level, "protected", preds)

    inter = np.minimum(uo, up) - np.maximum(lo, lp)
    wo, wp = uo - lo, up - lp
    same = (lo == lp) & (uo == up)

    def _term(width: np.ndarray) -> np.ndarray:
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(
                width > 0, inter / np.where(width > 0, width, 1.0), np.where(same, 1.0, 0.0)
            )

    overlap = 0.5 * (_term(wo) + _term(wp))
    names = ["intercept", *preds]
    coefs = {
        name: {
            "original": float(bo[k]),
            "protected": float(bp[k]),
            "difference": float(bp[k] - bo[k]),
            "ci_overlap": float(overlap[k]),
            "original_ci": [float(lo[k]), float(uo[k])],
            "protected_ci": [float(lp[k]), float(up[k])],
        }
        for k, name in enumerate(names)
    }
    return {
        "coefficients": coefs,
        "mean_ci_overlap": float(np.mean(overlap)),
        "mean_abs_coefficient_difference": float(np.mean(np.abs(bp - bo))),
        "n": len(original),
    }


def _features(frames: Sequence[pd.DataFrame], features: Sequence[str]) -> list[np.ndarray]:
    """Feature matrices for ``frames`` with one shared encoding.

    A column numeric in every frame stays numeric (missing values raise); any other column is
    one-hot encoded over the union of its canonical texts in all frames (missing = a category).
    """
    sizes = [len(f) for f in frames]
    blocks: list[np.ndarray] = []
    for c in features:
        numeric = all(is_numeric(f[c]) for f in frames)
        if numeric:
            v = np.concatenate([f[c].to_numpy(dtype=np.float64, na_value=np.nan) for f in frames])
            if not np.isfinite(v).all():
                raise DataError(
                    f"classifier accuracy: numeric feature {c!r} has missing or infinite "
                    "values; impute them or convert the column to text so that missing becomes "
                    "a category"
                )
            blocks.append(v[:, None])
        else:
            text = np.concatenate([as_text(f[c]) for f in frames])
            codes, uniques = pd.factorize(text, sort=True)
            onehot = np.zeros((len(codes), len(uniques)), dtype=np.float64)
            onehot[np.arange(len(codes)), codes] = 1.0
            blocks.append(onehot)
    full = np.hstack(blocks)
    return np.split(full, np.cumsum(sizes)[:-1])


def classifier_accuracy(
    original: pd.DataFrame,
    protected: pd.DataFrame,
    target: str,
    features: Sequence[str] | str,
    seed: int = 0,
    test_share: float = 0.3,
    n_estimators: int = 100,
) -> dict[str, float | int]:
    """Accuracy of a classifier trained on protected data and tested on original data.

    Set-up: the records are split once (``numpy`` generator seeded with ``seed``) into a
    training part and a held-out test part (``test_share`` of the records). Two random forests
    (scikit-learn ``RandomForestClassifier``, ``n_estimators`` trees, ``random_state=seed``)
    are trained on the *same* training records, one on their original values (baseline), one
    on their protected values; both predict the *original* target of the held-out records from
    their *original* features. Returned: ``accuracy_original`` (baseline),
    ``accuracy_protected``, ``accuracy_loss`` (baseline minus protected; can be negative by
    chance), ``n_train`` and ``n_test``. Numeric features are used as numbers, others one-hot
    encoded with categories shared between the files (missing = a category); the target is
    compared in canonical text form. Same seed, same data => same result.
    """
    measure = "classifier accuracy"
    feats = _as_list(features, "features", measure)
    if not isinstance(target, str):
        raise DataError(f"{measure}: target must be one column name, got {target!r}")
    if target in feats:
        raise DataError(f"{measure}: the target {target!r} is also listed as a feature")
    if not (0 < test_share < 1):
        raise DataError(f"{measure}: test_share must be between 0 and 1, got {test_share!r}")
    check_aligned(original, protected, [target, *feats], measure)
    n = len(original)
    n_test = int(round(n * test_share))
    if n_test < 1 or n - n_test < 2:
        raise DataError(
            f"{measure}: {n} records are too few to split into training and test parts "
            f"(test_share={test_share}); use more records"
        )
    order = np.random.default_rng(seed).permutation(n)
    test, train = order[:n_test], order[n_test:]

    x_train_o, x_train_p, x_test = _features(
        [original.iloc[train], protected.iloc[train], original.iloc[test]], feats
    )
    y_train_o = as_text(original[target].iloc[train])
    y_train_p = as_text(protected[target].iloc[train])
    y_test = as_text(original[target].iloc[test])

    def _accuracy(x_train: np.ndarray, y_train: np.ndarray) -> float:
        model = RandomForestClassifier(n_estimators=n_estimators, random_state=seed, n_jobs=1)
        model.fit(x_train, y_train)
        return float(np.mean(model.predict(x_test) == y_test))

    acc_o = _accuracy(x_train_o, y_train_o)
    acc_p = _accuracy(x_train_p, y_train_p)
    return {
        "accuracy_original": acc_o,
        "accuracy_protected": acc_p,
        "accuracy_loss": acc_o - acc_p,
        "n_train": int(len(train)),
        "n_test": int(n_test),
    }
