"""Propensity-score utility: how well a classifier tells protected records from original ones.

Woo, M.-J., Reiter, J. P., Oganian, A. & Karr, A. F. (2009). "Global measures of data utility
for microdata masked for disclosure limitation". *Journal of Privacy and Confidentiality* 1(1),
111-124. Snoke, J., Raab, G. M., Nowok, B., Dibben, C. & Slavkovic, A. (2018). "General and
specific utility measures for synthetic data". *JRSS A* 181(3), 663-688 (the S_pMSE ratio).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from sdckit.core.encoding import as_text, is_numeric
from sdckit.errors import DataError
from sdckit.utility.numeric import check_aligned

__all__ = ["PROPENSITY_C", "PropensityMSE", "propensity_mse", "propensity_score_utility"]

#: Inverse L2 penalty of the logistic regression: effectively unpenalized (on z-scored
#: numeric columns and 0/1 indicators) but finite, so the fit stays bounded when the two files
#: are completely separable.
PROPENSITY_C = 1e6


def _design_matrix(
    stacked: pd.DataFrame, original: pd.DataFrame, protected: pd.DataFrame, columns: Sequence[str]
) -> np.ndarray:
    """Main-effects design: z-scored numeric columns, one-hot (drop-first) categorical ones."""
    n = len(original)
    blocks: list[np.ndarray] = []
    for c in columns:
        if is_numeric(original[c]) and is_numeric(protected[c]):
            v = stacked[c].to_numpy(dtype=np.float64, na_value=np.nan)
            bad = ~np.isfinite(v)
            if bad.any():
                row = int(np.flatnonzero(bad)[0])
                which, r = ("original", row) if row < n else ("protected", row - n)
                raise DataError(
                    f"propensity score utility: numeric column {c!r} of the {which} data has a "
                    f"missing or infinite value (row {r + 1}); impute it, drop the row from both "
                    "files, or convert the column to text so that missing becomes a category"
                )
            sd = v.std()
            blocks.append(((v - v.mean()) / sd if sd > 0 else v - v.mean())[:, None])
        else:
            # categorical (or numeric in one file, generalized text in the other): canonical
            # text, missing values are a category of their own
            codes, _ = pd.factorize(as_text(stacked[c]), sort=True)
            k = int(codes.max()) + 1
            if k > 1:
                onehot = np.zeros((len(codes), k - 1), dtype=np.float64)
                rows = np.flatnonzero(codes > 0)
                onehot[rows, codes[rows] - 1] = 1.0
                blocks.append(onehot)
    if not blocks:
        return np.zeros((len(stacked), 0))
    return np.hstack(blocks)


@dataclass(frozen=True)
class PropensityMSE:
    """The propensity-score mean squared error of two files and its null reference.

    ``pmse``: ``1/N sum_i (p_hat_i - c)^2``; ``parameters``: ``k``, the logistic model's
    parameters (intercept included); ``expected_null``: ``E[pMSE]`` when both files come from
    the same distribution; ``s_pmse``: the ratio ``pmse / expected_null`` (about 1 for a
    synthesizer indistinguishable from the data's own distribution; the ratio of Snoke, Raab,
    Nowok, Dibben & Slavkovic 2018, "General and specific utility measures for synthetic
    data", *JRSS A* 181(3), 663-688, sec. 3.2, the logistic case).

    **Where this differs from the paper.** The expectation used is ``(k - 1) c (1 - c) / N``:
    with ``p_hat_i - c ~ c (1 - c) x_i' (beta_hat - beta)`` and ``Var(beta_hat) = (X'X)^-1 /
    (c (1 - c))``, ``N pMSE / (c (1 - c))`` is asymptotically chi-square with ``k - 1`` degrees
    of freedom (the intercept's direction is fitted exactly: the mean of ``p_hat`` is ``c``).
    Snoke et al. print ``(k - 1) (1 - c)^2 c / N``, smaller by the factor ``1 - c``; with it
    two samples of one distribution average a ratio of ``1 / (1 - c)`` (2 for equal sizes),
    as a simulation in the tests shows. ``s_pmse_published`` is that published ratio, for
    comparison with tools that use it.
    """

    pmse: float
    expected_null: float
    s_pmse: float
    parameters: int
    c: float
    n: int

    @property
    def s_pmse_published(self) -> float:
        """``pmse / ((k - 1) (1 - c)^2 c / N)``, the ratio with the paper's expectation."""
        return self.s_pmse / (1.0 - self.c) if self.c < 1 else float("nan")

    def to_dict(self) -> dict[str, float | int]:
        """JSON-ready figures."""
        return {
            "pmse": self.pmse,
            "expected_null": self.expected_null,
            "s_pmse": self.s_pmse,
            "s_pmse_published": self.s_pmse_published,
            "parameters": self.parameters,
            "c": self.c,
            "n": self.n,
        }


#: Largest share of nonzero entries at which the regression's design is multiplied as sparse.
SPARSE_DENSITY = 0.25


def _logistic_fit(x: np.ndarray, t: np.ndarray, c_inverse: float) -> np.ndarray:
    """Fitted probabilities of the L2-penalized logistic regression of ``t`` on ``x`` (with an
    unpenalized intercept): minimizes ``sum_i logloss_i + ||w||^2 / (2 C)``, scikit-learn's
    objective, by Newton's method (iteratively reweighted least squares) with step halving;
    converged when the Newton decrement is below 1e-12 per record. A design of mostly zeros
    (one-hot columns) is multiplied as a sparse matrix: the Hessian ``X' W X`` then costs
    the nonzeros' pairs per record, not the columns' square."""
    n = len(x)
    design = np.hstack([np.ones((n, 1)), x])
    penalty = np.full(design.shape[1], 1.0 / c_inverse)
    penalty[0] = 0.0
    w = np.zeros(design.shape[1])
    w[0] = np.log(t.mean() / (1 - t.mean())) if 0 < t.mean() < 1 else 0.0
    matrix: Any = design
    if design.size >= 100_000 and np.count_nonzero(design) <= SPARSE_DENSITY * design.size:
        from scipy import sparse

        matrix = sparse.csr_matrix(design)
    transposed = matrix.T.tocsr() if matrix is not design else design.T

    def loss(weights: np.ndarray) -> float:
        z = matrix @ weights
        return float(np.sum(np.logaddexp(0.0, z) - t * z) + 0.5 * penalty @ weights**2)

    def hessian(curvature: np.ndarray) -> np.ndarray:
        if matrix is design:
            return (design * curvature[:, None]).T @ design
        return np.asarray((transposed.multiply(curvature[None, :]) @ matrix).toarray())

    current = loss(w)
    for _ in range(200):
        p = 0.5 * (1.0 + np.tanh(0.5 * (matrix @ w)))  # stable sigmoid
        grad = transposed @ (p - t) + penalty * w
        hess = hessian(p * (1 - p)) + np.diag(penalty + 1e-12)
        step = np.linalg.solve(hess, grad)
        decrement = float(grad @ step)
        if decrement < 1e-12 * n:
            break
        size = 1.0
        while size > 1e-8:
            trial = w - size * step
            value = loss(trial)
            if value <= current:
                break
            size /= 2
        else:
            break
        w, current = trial, value
    return 0.5 * (1.0 + np.tanh(0.5 * (matrix @ w)))


def propensity_mse(
    original: pd.DataFrame,
    protected: pd.DataFrame,
    columns: Sequence[str] | str | None = None,
    seed: int = 0,
) -> PropensityMSE:
    """pMSE and S_pMSE of ``protected`` (masked or synthetic) against ``original``.

    The original (``T = 0``) and protected (``T = 1``) records are stacked, ``T`` is modelled by
    a logistic regression on the main effects of ``columns`` (numeric columns z-scored over the
    stacked data, categorical columns one-hot encoded with the first category dropped, missing
    values a category of their own), and

    ``pMSE = 1/N * sum_i (p_hat_i - c)^2``, ``N = n_orig + n_prot``, ``c = n_prot / N``

    (Woo, Reiter, Oganian & Karr 2009, their ``U_p``). ``pMSE = 0`` when the model cannot tell
    the files apart (identical data gives ``p_hat = c``); its maximum ``c (1 - c)`` (0.25 for
    equal sizes) is reached when the files are completely separable. ``S_pMSE`` divides it by
    its expectation under the null of one common distribution (:class:`PropensityMSE`; Snoke
    et al. 2018), so values near 1 mean "as alike as two samples of one distribution".

    The regression is fitted by Newton's method with a negligible L2 penalty ``C = 1e6``
    (:data:`PROPENSITY_C`, scikit-learn's objective) so that it stays finite under
    separation. Only main effects are used (synthpop's default adds none either for
    ``method = "logit"`` with ``maxorder = 0``). The files need not be aligned record by
    record, but they must have the same columns. ``columns=None`` uses every column of
    ``original``. ``seed`` is accepted for compatibility; the fit is deterministic.
    """
    measure = "propensity score utility"
    cols = check_aligned(original, protected, columns, measure, aligned=False)
    stacked = pd.concat(
        [original[cols].reset_index(drop=True), protected[cols].reset_index(drop=True)],
        ignore_index=True,
    )
    n = len(stacked)
    t = np.r_[np.zeros(len(original)), np.ones(len(protected))]
    c = len(protected) / n
    x = _design_matrix(stacked, original, protected, cols)
    k = x.shape[1] + 1
    expected = (k - 1) * c * (1 - c) / n
    if x.shape[1] == 0:  # no column varies: nothing can distinguish the files
        return PropensityMSE(0.0, expected, float("nan"), k, c, n)
    p_hat = _logistic_fit(x, t, PROPENSITY_C)
    pmse = float(np.mean((p_hat - c) ** 2))
    return PropensityMSE(pmse, expected, pmse / expected, k, c, n)


def propensity_score_utility(
    original: pd.DataFrame,
    protected: pd.DataFrame,
    columns: Sequence[str] | str | None = None,
    seed: int = 0,
) -> float:
    """Propensity-score utility ``U_p`` of Woo, Reiter, Oganian & Karr (2009): the pMSE of
    :func:`propensity_mse` (see there for the model and its conventions)."""
    return propensity_mse(original, protected, columns, seed).pmse
