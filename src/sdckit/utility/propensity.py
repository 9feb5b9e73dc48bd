"""Propensity-score utility: how well a classifier tells protected records from original ones.

Woo, M.-J., Reiter, J. P., Oganian, A. & Karr, A. F. (2009). "Global measures of data utility
for microdata masked for disclosure limitation". *Journal of Privacy and Confidentiality* 1(1),
111-124. Snoke, J., Raab, G. M., Nowok, B., Dibben, C. & Slavkovic, A. (2018). "General and
specific utility measures for synthetic data". *JRSS A* 181(3), 663-688 (the S_pMSE ratio).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from sdckit.core.encoding import is_numeric, text_codes
from sdckit.core.frequency import group_keys
from sdckit.errors import DataError
from sdckit.utility.numeric import check_aligned

__all__ = ["PROPENSITY_C", "PropensityMSE", "propensity_mse", "propensity_score_utility"]

#: Inverse L2 penalty of the logistic regression: effectively unpenalized (on z-scored
#: numeric columns and 0/1 indicators) but finite, so the fit stays bounded when the two files
#: are completely separable.
PROPENSITY_C = 1e6


@dataclass(frozen=True)
class _Design:
    """The main-effects design over the *distinct* stacked records (module's regression;
    over every record when a numeric column is distinct in more than half of them: then
    there is little to merge).

    ``numeric``: one row per distinct record, the intercept's column of ones then each numeric
    column z-scored over the stacked records; ``factors``: per categorical column the level
    code of each distinct record (level 0 is the reference: one indicator per other level,
    drop-first); ``levels``: their numbers of levels; ``records`` and ``protected``: how many
    stacked records, and how many of them protected, each distinct record stands for."""

    numeric: np.ndarray
    factors: list[np.ndarray]
    levels: list[int]
    records: np.ndarray
    protected: np.ndarray

    @property
    def columns(self) -> int:
        """Columns of the design (the intercept included): the model's parameters."""
        return self.numeric.shape[1] + sum(k - 1 for k in self.levels)

    def _spans(self) -> list[slice]:
        """Each categorical column's parameters (after the numeric ones)."""
        starts = np.cumsum([self.numeric.shape[1], *(k - 1 for k in self.levels)])
        return [slice(int(a), int(a) + k - 1) for a, k in zip(starts, self.levels, strict=False)]

    def linear(self, weights: np.ndarray) -> np.ndarray:
        """``X w``: per categorical column a lookup of its levels' weights."""
        q = self.numeric.shape[1]
        z = self.numeric @ weights[:q]
        for f, span in zip(self.factors, self._spans(), strict=True):
            z += np.r_[0.0, weights[span]][f]
        return z

    def transposed(self, values: np.ndarray) -> np.ndarray:
        """``X' r``: per categorical column the sums of ``r`` over each level's records."""
        q = self.numeric.shape[1]
        out = np.empty(self.columns)
        out[:q] = self.numeric.T @ values
        for f, k, span in zip(self.factors, self.levels, self._spans(), strict=True):
            out[span] = np.bincount(f, weights=values, minlength=k)[1:]
        return out

    def gram(self, weights: np.ndarray) -> np.ndarray:
        """``X' diag(h) X``: the ``h``-weighted cross-tabulations of the columns two by two."""
        q = self.numeric.shape[1]
        spans = self._spans()
        out = np.zeros((self.columns, self.columns))
        weighted = self.numeric * weights[:, None]
        out[:q, :q] = weighted.T @ self.numeric
        factors, levels = self.factors, self.levels
        for a, (f, k, span) in enumerate(zip(factors, levels, spans, strict=True)):
            diagonal = np.arange(span.start, span.stop)
            out[diagonal, diagonal] = np.bincount(f, weights=weights, minlength=k)[1:]
            for i in range(q):
                out[i, span] = np.bincount(f, weights=weighted[:, i], minlength=k)[1:]
                out[span, i] = out[i, span]
            for g, kg, other in zip(factors[a + 1 :], levels[a + 1 :], spans[a + 1 :], strict=True):
                cross = np.bincount(f * kg + g, weights=weights, minlength=k * kg)
                block = cross.reshape(k, kg)[1:, 1:]
                out[span, other] = block
                out[other, span] = block.T
        return out


def _design(
    stacked: pd.DataFrame, original: pd.DataFrame, protected: pd.DataFrame, columns: Sequence[str]
) -> _Design:
    """Main-effects design (:class:`_Design`): z-scored numeric columns, categorical ones as
    level codes, missing values a category of their own; identical records merged, each with
    its counts of records and of protected records (stacked: the original's first)."""
    n = len(original)
    numeric: list[np.ndarray] = []
    factors: list[np.ndarray] = []
    levels: list[int] = []
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
            numeric.append((v - v.mean()) / sd if sd > 0 else v - v.mean())
        else:
            # categorical (or numeric in one file, generalized text in the other): canonical
            # text, missing values are a category of their own
            (codes,), k = text_codes(stacked[c], sort=True)
            if k > 1:
                factors.append(codes)
                levels.append(k)
    keys: list[np.ndarray] = list(factors)
    cards = list(levels)
    distinct = False  # records nearly all distinct: nothing to merge
    for v in numeric:
        codes, uniques = pd.factorize(v)
        if len(uniques) > len(stacked) // 2:
            distinct = True
            break
        keys.append(codes)
        cards.append(len(uniques))
    protected_rows = np.zeros(len(stacked))
    protected_rows[n:] = 1.0
    if distinct:  # each record on its own
        return _Design(
            numeric=np.column_stack([np.ones(len(stacked)), *numeric]),
            factors=factors,
            levels=levels,
            records=np.ones(len(stacked)),
            protected=protected_rows,
        )
    if keys:
        group, groups, first = group_keys(keys, cards, ordered=False)
    else:  # no column varies: one distinct record
        group, groups, first = np.zeros(len(stacked), dtype=np.int64), 1, np.zeros(1, dtype=int)
    return _Design(
        numeric=np.column_stack([np.ones(groups), *(v[first] for v in numeric)]),
        factors=[f[first] for f in factors],
        levels=levels,
        records=np.bincount(group, minlength=groups).astype(np.float64),
        protected=np.bincount(group, weights=protected_rows, minlength=groups),
    )


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


def _logistic_fit(design: _Design, c_inverse: float) -> np.ndarray:
    """Fitted probability of each distinct record of the L2-penalized logistic regression of
    "protected" on the design (:class:`_Design`; the intercept unpenalized): minimizes
    ``sum_i logloss_i + ||w||^2 / (2 C)`` over the stacked records, scikit-learn's objective,
    by Newton's method (iteratively reweighted least squares) with step halving; converged
    when the Newton decrement is below 1e-12 per record.

    Identical records have identical fitted probabilities and add identical terms to the
    log-likelihood, so it is summed over the distinct records, each term times its count
    (a binomial logistic regression: ``m_g log(1 + e^z_g) - y_g z_g`` for ``m_g`` records of
    which ``y_g`` protected): the same objective, gradient and Hessian as record by record,
    hence the same estimate. The products with the design use its structure
    (:meth:`_Design.linear`, :meth:`_Design.transposed`, :meth:`_Design.gram`; no matrix of
    indicators is built)."""
    m, y = design.records, design.protected
    width = design.columns
    penalty = np.full(width, 1.0 / c_inverse)
    penalty[0] = 0.0
    records = float(m.sum())
    share = float(y.sum()) / records
    w = np.zeros(width)
    w[0] = np.log(share / (1 - share)) if 0 < share < 1 else 0.0

    def loss(weights: np.ndarray) -> float:
        z = design.linear(weights)
        return float(np.sum(m * np.logaddexp(0.0, z) - y * z) + 0.5 * penalty @ weights**2)

    current = loss(w)
    for _ in range(200):
        p = 0.5 * (1.0 + np.tanh(0.5 * design.linear(w)))  # stable sigmoid
        grad = design.transposed(m * p - y) + penalty * w
        hess = design.gram(m * p * (1 - p)) + np.diag(penalty + 1e-12)
        step = np.linalg.solve(hess, grad)
        decrement = float(grad @ step)
        if decrement < 1e-12 * records:
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
    return 0.5 * (1.0 + np.tanh(0.5 * design.linear(w)))


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
    c = len(protected) / n
    design = _design(stacked, original, protected, cols)
    k = design.columns
    expected = (k - 1) * c * (1 - c) / n
    if k == 1:  # no column varies: nothing can distinguish the files
        return PropensityMSE(0.0, expected, float("nan"), k, c, n)
    p_hat = _logistic_fit(design, PROPENSITY_C)  # per distinct record
    pmse = float(design.records @ (p_hat - c) ** 2 / n)
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
