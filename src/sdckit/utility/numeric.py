"""Information loss of numerical masking, measured on an (original, protected) pair of files.

Every function compares two *aligned* data sets -- the protected file must hold the same records
in the same order as the original (what every perturbative masking method produces) -- on the
given numeric columns, and returns plain floats (or ``None`` where a measure is undefined, see
each function), so the result can be written as JSON directly.

Sources
-------
* Domingo-Ferrer, J. & Torra, V. (2001). "A quantitative comparison of disclosure control methods
  for microdata". In Doyle, Lane, Theeuwes & Zayatz (eds.), *Confidentiality, Disclosure and Data
  Access*, 111-133. North-Holland. -- the matrix discrepancies (X, V, R, RF, C, F) and the
  "score" information loss.
* Domingo-Ferrer, J., Mateo-Sanz, J. M. & Torra, V. (2001). "Comparing SDC methods for microdata
  on the basis of information loss and disclosure risk". ETK-NTTS 2001. -- same table of measures.
* Yancey, W. E., Winkler, W. E. & Creecy, R. H. (2002). "Disclosure risk assessment in
  perturbative microdata protection". LNCS 2316, 135-152. -- IL1s.
* Mateo-Sanz, J. M., Domingo-Ferrer, J. & Sebé, F. (2005). "Probabilistic information loss
  measures in confidentiality protection of continuous microdata". *Data Mining and Knowledge
  Discovery* 11, 181-193. -- bounded (probabilistic) information loss.
* sdcMicro (R), ``dUtility()`` in R/dUtility.R -- the reference implementation of IL1s.

Missing values are not allowed in the compared columns: every measure here is defined on
complete records, and silently dropping cells would make two protected files incomparable.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from sdckit.errors import DataError, preview

__all__ = [
    "bounded_information_loss",
    "check_aligned",
    "il1s",
    "matrix_measures",
    "numeric_columns",
    "numeric_pair",
    "score_information_loss",
]

#: Relative eigenvalue threshold below which a principal component is treated as absent
#: (its factor-score coefficients 1/sqrt(lambda) would be numerically meaningless).
EIGEN_TOL = 1e-10

#: Probability levels of the quantiles compared by :func:`bounded_information_loss`.
QUANTILE_LEVELS = tuple(round(0.05 * k, 2) for k in range(1, 20))


# --------------------------------------------------------------------------------------------
# validation helpers (shared by the other utility modules)
# --------------------------------------------------------------------------------------------
def check_aligned(
    original: pd.DataFrame,
    protected: pd.DataFrame,
    columns: Sequence[str] | str | None,
    measure: str,
    aligned: bool = True,
) -> list[str]:
    """Check that ``original`` and ``protected`` are aligned and hold ``columns``.

    Returns the columns as a list (all columns of ``original`` when ``columns`` is ``None``).
    Raises :class:`DataError` when a column is missing from either data set, when either has no
    rows, or (with ``aligned``) when the row counts differ; the message names the data set and
    the column and, for different row counts, says that ``measure`` compares the records one by
    one.
    """
    if not isinstance(original, pd.DataFrame) or not isinstance(protected, pd.DataFrame):
        raise DataError(f"{measure} needs two pandas DataFrames (original and protected data)")
    if columns is None:
        cols = [str(c) for c in original.columns]
    elif isinstance(columns, str):
        cols = [columns]
    else:
        cols = list(columns)
    if not cols:
        raise DataError(f"{measure}: no columns given; name at least one column to compare")
    if len(set(cols)) != len(cols):
        dup = sorted({c for c in cols if cols.count(c) > 1})
        raise DataError(f"{measure}: column(s) {preview(dup)} listed twice; list each once")
    for name, data in (("original", original), ("protected", protected)):
        missing = [c for c in cols if c not in data.columns]
        if missing:
            raise DataError(
                f"{measure}: column(s) {preview(missing)} not found in the {name} data "
                f"(its columns: {preview(list(data.columns), 10)}); the measure needs the same "
                "columns in the original and the protected data"
            )
    if aligned and len(original) != len(protected):
        raise DataError(
            f"{measure} compares records one by one and needs aligned records, but the original "
            f"data has {len(original)} rows and the protected data {len(protected)}; pass the "
            "protected file produced from this original, with the same rows in the same order"
        )
    for name, data in (("original", original), ("protected", protected)):
        if len(data) == 0:
            raise DataError(f"{measure}: the {name} data has no rows; nothing to compare")
    return cols


def numeric_columns(
    data: pd.DataFrame, columns: Sequence[str], which: str, measure: str
) -> np.ndarray:
    """``data[columns]`` as a complete float64 matrix (n, p).

    ``which`` names the data set in messages ("original"/"protected"). Raises
    :class:`DataError` naming the column, value and row for a non-numeric or boolean column and
    for missing or infinite values.
    """
    out = np.empty((len(data), len(columns)), dtype=np.float64)
    for j, c in enumerate(columns):
        s = data[c]
        if pd.api.types.is_bool_dtype(s.dtype):
            raise DataError(
                f"{measure} needs numeric columns, but column {c!r} of the {which} data is "
                "boolean; recode it as 0/1 numbers or leave it out"
            )
        if pd.api.types.is_numeric_dtype(s.dtype):
            values = s.to_numpy(dtype=np.float64, na_value=np.nan)
        else:
            conv = pd.to_numeric(s, errors="coerce")
            bad = (conv.isna() & s.notna()).to_numpy()
            if bad.any():
                row = int(np.flatnonzero(bad)[0])
                raise DataError(
                    f"{measure} needs numeric columns, but column {c!r} of the {which} data has "
                    f"the non-numeric value {s.iloc[row]!r} (row {row + 1}); choose numeric "
                    "columns or recode this one first"
                )
            values = conv.to_numpy(dtype=np.float64, na_value=np.nan)
        finite = np.isfinite(values)
        if not finite.all():
            row = int(np.flatnonzero(~finite)[0])
            what = "a missing value" if np.isnan(values[row]) else f"the value {values[row]}"
            raise DataError(
                f"{measure} needs complete numeric records, but column {c!r} of the {which} "
                f"data has {what} (row {row + 1}, {int((~finite).sum())} such cells in the "
                "column); impute those cells or drop the rows from both files"
            )
        out[:, j] = values
    return out


def numeric_pair(
    original: pd.DataFrame,
    protected: pd.DataFrame,
    columns: Sequence[str] | str | None,
    measure: str,
) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Validate the pair (see :func:`check_aligned`) and return ``(columns, X, X')`` as floats."""
    cols = check_aligned(original, protected, columns, measure)
    x = numeric_columns(original, cols, "original", measure)
    y = numeric_columns(protected, cols, "protected", measure)
    return cols, x, y


def _check_variance(
    x: np.ndarray, columns: Sequence[str], which: str, measure: str, why: str
) -> np.ndarray:
    """Sample standard deviations (ddof=1) of the columns; DataError for a constant column."""
    if x.shape[0] < 2:
        raise DataError(f"{measure} needs at least 2 records to estimate {why}; got {x.shape[0]}")
    sd = x.std(axis=0, ddof=1)
    bad = np.flatnonzero(~(sd > 0))
    if bad.size:
        c = columns[int(bad[0])]
        raise DataError(
            f"{measure}: column {c!r} of the {which} data has zero variance (every value is "
            f"{float(x[0, int(bad[0])])!r}), so {why} is undefined; leave this column out of "
            "the comparison (the columns argument; --columns on the command line) or, if it "
            "is a code, compare it as a category (--categorical)"
        )
    return sd


# --------------------------------------------------------------------------------------------
# discrepancy helper
# --------------------------------------------------------------------------------------------
def _discrepancies(
    a: np.ndarray, b: np.ndarray, n_norm: int, weights: np.ndarray | None = None
) -> tuple[float, float, float | None]:
    """(mean square error, mean absolute error, mean variation) of the cells ``a`` vs ``b``.

    Follows Domingo-Ferrer & Torra (2001): ``mse = sum w (a-b)^2 / n_norm``, ``mae = sum w |a-b|
    / n_norm`` and ``mv = sum w |a-b|/|a| / n_norm`` with unit weights except for RF and F.
    Mean variation divides by the original value; cells whose original value is 0 are skipped
    (the usual convention, also sdcMicro's, which drops infinite ratios) and the normalization is
    rescaled to the weight of the cells kept, so for unweighted cells ``mv`` is the mean of the
    relative errors over the cells with a non-zero original. ``mv`` is ``None`` when every
    original cell is 0. With no cell at all (e.g. correlations of a single column) all three are
    0: nothing can differ.
    """
    a = np.asarray(a, dtype=np.float64).ravel()
    b = np.asarray(b, dtype=np.float64).ravel()
    if a.size == 0:
        return 0.0, 0.0, 0.0
    w = np.ones_like(a) if weights is None else np.asarray(weights, dtype=np.float64).ravel()
    diff = np.abs(a - b)
    mse = float(np.sum(w * diff**2) / n_norm)
    mae = float(np.sum(w * diff) / n_norm)
    valid = a != 0
    w_valid = float(w[valid].sum())
    if w_valid <= 0:
        mv: float | None = None
    else:
        scale = n_norm * w_valid / float(w.sum())
        mv = float(np.sum(w[valid] * diff[valid] / np.abs(a[valid])) / scale)
    return mse, mae, mv


# --------------------------------------------------------------------------------------------
# principal components of the correlation matrix
# --------------------------------------------------------------------------------------------
def _pca(r: np.ndarray, reference: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Eigen-decomposition of a correlation matrix, eigenvalues in decreasing order.

    Eigenvector signs are arbitrary, so they are fixed deterministically: without ``reference``
    each vector is flipped so that its entry of largest absolute value (the first one on ties,
    up to 1e-12) is positive; with ``reference`` (the original data's vectors) each vector is
    flipped so that its dot product with the reference vector of the same rank is non-negative
    (the largest-entry rule again when the dot product is 0). Components are matched by rank.
    """
    vals, vecs = np.linalg.eigh(r)
    order = np.argsort(vals)[::-1]
    vals = np.clip(vals[order], 0.0, None)
    vecs = vecs[:, order]
    absv = np.abs(vecs)
    lead = np.argmax(absv >= absv.max(axis=0, keepdims=True) - 1e-12, axis=0)
    sign = np.sign(vecs[lead, np.arange(vecs.shape[1])])
    if reference is not None:
        dots = np.einsum("ij,ij->j", vecs, reference)
        sign = np.where(np.abs(dots) > 1e-12, np.sign(dots), sign)
    sign[sign == 0] = 1.0
    return vals, vecs * sign


# --------------------------------------------------------------------------------------------
# public measures
# --------------------------------------------------------------------------------------------
def matrix_measures(
    original: pd.DataFrame, protected: pd.DataFrame, columns: Sequence[str] | str
) -> dict[str, float | None]:
    """Discrepancies between original and protected data, as in Domingo-Ferrer & Torra (2001).

    For each of the following matrices, computed on the original (unprimed) and the protected
    (primed) data, three discrepancies are returned: mean square error ``mse_*``, mean absolute
    error ``mae_*`` and mean variation ``mv_*`` (relative error ``|a - a'| / |a|``). With ``n``
    records and ``p`` columns, the normalizations are those of the paper's table
    (Domingo-Ferrer & Torra 2001; Domingo-Ferrer, Mateo-Sanz & Torra 2001):

    ========  ====================================================  ============================
    key       matrix                                                normalization (cells)
    ========  ====================================================  ============================
    ``x``     the data, ``x_ij``                                    ``n p`` (all cells)
    ``v``     covariance matrix (ddof 1), ``v_ij``                  ``p(p+1)/2`` (i <= j)
    ``r``     correlation matrix, ``r_ij``                          ``p(p-1)/2`` (i < j)
    ``rf``    attribute-component correlations ``rf_ij``            ``sum_j w_j sum_i / p^2``
    ``c``     communalities with the first component ``c_i``        ``p``
    ``f``     component score coefficients ``f_ij``                 ``sum_j w_j sum_i / p^2``
    ``mean``  column means                                          ``p``
    ``var``   column variances (diagonal of V)                      ``p``
    ========  ====================================================  ============================

    The principal components are those of the correlation matrix (numpy ``eigh``), ordered by
    decreasing eigenvalue ``lambda_j`` and matched by rank between original and protected.
    ``rf_ij = v_ij sqrt(lambda_j)`` is the correlation of attribute ``i`` with component ``j``;
    ``c_i = rf_i1^2`` is the share of attribute ``i``'s variance explained by the first
    component; ``f_ij = v_ij / sqrt(lambda_j)`` are the coefficients giving unit-variance
    component scores from z-scores (SPSS's "component score coefficient matrix").
    ``w_j = lambda_j / p`` is the share of the total variance explained by the original data's
    ``j``-th component (the weights sum to 1). Eigenvector signs: the original's vectors have
    their largest-magnitude entry positive, the protected vectors are flipped to point the same
    way as the original vector of the same rank. Components with an eigenvalue below
    ``1e-10 p`` in either data set are left out of ``f`` (weight 0): their coefficients are
    numerically meaningless.

    Mean variation skips cells whose original value is 0 (see :func:`_discrepancies`); it is
    ``None`` when all are 0 (e.g. ``mv_mean`` of centred data). With a single column the
    correlation measures are 0 (there is no pair).

    Raises :class:`DataError` for unaligned data, non-numeric or missing values, and columns
    with zero variance in either data set (correlations undefined).
    """
    measure = "matrix information-loss measures"
    cols, x, y = numeric_pair(original, protected, columns, measure)
    n, p = x.shape
    _check_variance(x, cols, "original", measure, "the correlation matrix")
    _check_variance(y, cols, "protected", measure, "the correlation matrix")

    vx = np.atleast_2d(np.cov(x, rowvar=False, ddof=1))
    vy = np.atleast_2d(np.cov(y, rowvar=False, ddof=1))
    sx = np.sqrt(np.diag(vx))
    sy = np.sqrt(np.diag(vy))
    rx = vx / np.outer(sx, sx)
    ry = vy / np.outer(sy, sy)
    np.fill_diagonal(rx, 1.0)
    np.fill_diagonal(ry, 1.0)

    lam_x, vec_x = _pca(rx)
    lam_y, vec_y = _pca(ry, reference=vec_x)
    w = lam_x / lam_x.sum()
    rf_x = vec_x * np.sqrt(lam_x)
    rf_y = vec_y * np.sqrt(lam_y)
    c_x = rf_x[:, 0] ** 2
    c_y = rf_y[:, 0] ** 2
    keep = (lam_x > EIGEN_TOL * p) & (lam_y > EIGEN_TOL * p)
    f_x = np.where(keep, vec_x / np.sqrt(np.where(keep, lam_x, 1.0)), 0.0)
    f_y = np.where(keep, vec_y / np.sqrt(np.where(keep, lam_y, 1.0)), 0.0)
    w_cells = np.broadcast_to(w, (p, p))  # w_j for cell (i, j)
    w_f = np.broadcast_to(np.where(keep, w, 0.0), (p, p))

    upper = np.triu_indices(p)
    strict = np.triu_indices(p, k=1)
    parts = {
        "x": _discrepancies(x, y, n * p),
        "v": _discrepancies(vx[upper], vy[upper], p * (p + 1) // 2),
        "r": _discrepancies(rx[strict], ry[strict], max(p * (p - 1) // 2, 1)),
        "rf": _discrepancies(rf_x, rf_y, p * p, w_cells),
        "c": _discrepancies(c_x, c_y, p),
        "f": _discrepancies(f_x, f_y, p * p, w_f),
        "mean": _discrepancies(x.mean(axis=0), y.mean(axis=0), p),
        "var": _discrepancies(np.diag(vx), np.diag(vy), p),
    }
    out: dict[str, float | None] = {}
    for key, (mse, mae, mv) in parts.items():
        out[f"mse_{key}"] = mse
        out[f"mae_{key}"] = mae
        out[f"mv_{key}"] = mv
    return out


def il1s(
    original: pd.DataFrame,
    protected: pd.DataFrame,
    columns: Sequence[str] | str,
    normalize: bool = True,
) -> float:
    """IL1s: mean absolute difference standardized by the original column's spread.

    ``IL1s = 1/(n p) * sum_j sum_i |x_ij - x'_ij| / (sqrt(2) S_j)`` with ``S_j`` the sample
    standard deviation (divisor ``n - 1``) of the *original* column ``j`` (Yancey, Winkler &
    Creecy 2002; Mateo-Sanz, Sebé & Domingo-Ferrer 2004). The ``sqrt(2) S_j`` is the standard
    deviation of the difference of two independent draws of the attribute.

    sdcMicro (R/dUtility.R) has carried three variants: older releases (e.g. 4.6.0)
    ``dUtility(method="IL1")`` computed ``|x - x'| / S_j * sqrt(2)`` (multiplying by sqrt(2),
    i.e. exactly twice the value above); the current CRAN release has ``method="IL1old"`` with
    the formula above and ``method="IL1s"`` with the same sum *without* the ``1/(n p)`` factor
    (its ``method="IL1"`` is now ``100 sum |x - x'| / |x|``). ``normalize=False`` returns the
    un-normalized sum, matching sdcMicro's current ``IL1s``. All use ``sd`` of the
    original with divisor ``n - 1``. (sdcMicro skips missing cells with ``na.rm``; here missing
    values raise :class:`DataError` instead.)
    """
    measure = "IL1s"
    cols, x, y = numeric_pair(original, protected, columns, measure)
    sd = _check_variance(x, cols, "original", measure, "the standardized distance")
    total = float(np.sum(np.abs(x - y) / (math.sqrt(2.0) * sd)))
    if not normalize:
        return total
    return total / (x.shape[0] * x.shape[1])


def _pil(diff: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """``2 Phi(|d| / sd) - 1`` (= ``erf(|d| / (sd sqrt 2))``); sd = 0 gives 0 if d = 0, else 1."""
    diff = np.abs(np.asarray(diff, dtype=np.float64))
    sd = np.asarray(sd, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        z = np.where(sd > 0, diff / np.where(sd > 0, sd, 1.0), np.where(diff > 0, np.inf, 0.0))
    from scipy.special import erf  # imported here: check_aligned's users never need it

    return erf(z / math.sqrt(2.0))


def _mean_or_none(values: np.ndarray) -> float | None:
    return float(np.mean(values)) if values.size else None


def bounded_information_loss(
    original: pd.DataFrame,
    protected: pd.DataFrame,
    columns: Sequence[str] | str,
    quantile_levels: Sequence[float] = QUANTILE_LEVELS,
) -> dict[str, float | None]:
    """Probabilistic (bounded, [0, 1]) information loss of Mateo-Sanz, Domingo-Ferrer & Sebé (2005).

    For a population statistic ``theta`` estimated by ``theta_hat`` on the original and by
    ``theta_hat'`` on the protected data, the standardized discrepancy ``(theta_hat' -
    theta_hat) / sqrt(Var(theta_hat))`` is approximately standard normal; its information loss
    is ``pil = 2 Phi(|theta_hat' - theta_hat| / sqrt(Var(theta_hat))) - 1 = P(|Z| <= |z|)``, in
    [0, 1). ``Var`` is the sampling variance of the estimator, estimated on the original data
    (``n`` records, central moments ``mu_rs`` with divisor ``n``):

    * ``pil_means`` (``m_1^0``): ``Var(xbar_j) = mu_2 / n``.
    * ``pil_variances`` (``m_2``, divisor ``n``): ``Var(m_2) = (n-1)/n^3 ((n-1) mu_4 - (n-3)
      mu_2^2)``.
    * ``pil_covariances`` (``m_11``, pairs ``i < j``): ``Var(m_11) = (n-1)/n^3 ((n-1) mu_22 -
      (n-2) mu_11^2 + mu_20 mu_02)``.
    * ``pil_correlations`` (Pearson ``r``, pairs ``i < j``): the large-sample (delta-method)
      variance ``Var(r) = (1/n) [mu_22/(mu_20 mu_02) + rho^2/4 (mu_40/mu_20^2 + mu_04/mu_02^2 +
      2 mu_22/(mu_20 mu_02)) - rho (mu_31/(mu_20^1.5 mu_02^0.5) + mu_13/(mu_20^0.5
      mu_02^1.5))]`` (Kendall & Stuart), which is ``(1 - rho^2)^2 / n`` for normal data.
    * ``pil_quantiles`` (``Q_alpha``, ``alpha`` in ``quantile_levels``, default 5%, 10%, ...,
      95%; numpy's default linear interpolation): ``Var(Q_alpha) = alpha(1-alpha) / (n
      f(Q_alpha)^2)``; the density term is estimated without a distributional assumption by the
      sparsity (Siddiqui) estimate ``1/f(Q_alpha) ~ (Q_{alpha+h} - Q_{alpha-h}) / (2h)`` with
      ``h = sqrt(alpha(1-alpha)/n)`` (clipped to [0, 1]). *This density estimate is sdckit's
      choice; the paper only states the asymptotic variance.*

    Each component is the mean of the ``pil`` values of its statistic over columns (or column
    pairs); ``bounded_il`` is the mean of the five components above, as the paper's overall
    measure (the paper reports it multiplied by 100). A zero standard error gives ``pil = 0``
    when the statistic is unchanged and 1 otherwise. With a single column there are no pairs:
    ``pil_covariances`` and ``pil_correlations`` are ``None`` and ``bounded_il`` averages the
    other three.

    ``pil_x`` is an sdckit addition, **not** part of ``bounded_il``: the record-level analogue,
    the mean over all cells of ``2 Phi(|x_ij - x'_ij| / S_j) - 1`` with ``S_j`` the original
    column's sample standard deviation.

    Raises :class:`DataError` for unaligned data, non-numeric or missing values, or a constant
    column in either data set.
    """
    measure = "bounded (probabilistic) information loss"
    cols, x, y = numeric_pair(original, protected, columns, measure)
    n, p = x.shape
    sd_x = _check_variance(x, cols, "original", measure, "the standardized discrepancy")
    _check_variance(y, cols, "protected", measure, "the correlation")
    levels = np.asarray(quantile_levels, dtype=np.float64)
    if levels.ndim != 1 or levels.size == 0 or not np.all((levels > 0) & (levels < 1)):
        raise DataError(
            f"{measure}: quantile_levels must be a non-empty list of probabilities strictly "
            f"between 0 and 1; got {preview(list(np.atleast_1d(levels)))}"
        )

    # record level (sdckit addition)
    pil_x = _pil(x - y, sd_x)

    # central moments of the original (divisor n)
    mean_x, mean_y = x.mean(axis=0), y.mean(axis=0)
    dx, dy = x - mean_x, y - mean_y
    mu2 = np.mean(dx**2, axis=0)
    mu4 = np.mean(dx**4, axis=0)
    m2_y = np.mean(dy**2, axis=0)

    pil_means = _pil(mean_y - mean_x, np.sqrt(mu2 / n))
    var_m2 = (n - 1) / n**3 * ((n - 1) * mu4 - (n - 3) * mu2**2)
    pil_var = _pil(m2_y - mu2, np.sqrt(np.clip(var_m2, 0.0, None)))

    i, j = np.triu_indices(p, k=1)
    m11_x = np.mean(dx[:, i] * dx[:, j], axis=0)
    m11_y = np.mean(dy[:, i] * dy[:, j], axis=0)
    mu22 = np.mean(dx[:, i] ** 2 * dx[:, j] ** 2, axis=0)
    mu20, mu02 = mu2[i], mu2[j]
    var_m11 = (n - 1) / n**3 * ((n - 1) * mu22 - (n - 2) * m11_x**2 + mu20 * mu02)
    pil_cov = _pil(m11_y - m11_x, np.sqrt(np.clip(var_m11, 0.0, None)))

    rho = m11_x / np.sqrt(mu20 * mu02)
    r_y = m11_y / np.sqrt(m2_y[i] * m2_y[j])
    mu40, mu04 = mu4[i], mu4[j]
    mu31 = np.mean(dx[:, i] ** 3 * dx[:, j], axis=0)
    mu13 = np.mean(dx[:, i] * dx[:, j] ** 3, axis=0)
    var_r = (
        mu22 / (mu20 * mu02)
        + rho**2 / 4 * (mu40 / mu20**2 + mu04 / mu02**2 + 2 * mu22 / (mu20 * mu02))
        - rho * (mu31 / (mu20**1.5 * mu02**0.5) + mu13 / (mu20**0.5 * mu02**1.5))
    ) / n
    pil_cor = _pil(r_y - rho, np.sqrt(np.clip(var_r, 0.0, None)))

    q_x = np.quantile(x, levels, axis=0)  # (q, p)
    q_y = np.quantile(y, levels, axis=0)
    h = np.sqrt(levels * (1 - levels) / n)
    lo = np.clip(levels - h, 0.0, 1.0)
    hi = np.clip(levels + h, 0.0, 1.0)
    sparsity = (np.quantile(x, hi, axis=0) - np.quantile(x, lo, axis=0)) / (hi - lo)[:, None]
    pil_q = _pil(q_y - q_x, h[:, None] * sparsity)

    components = {
        "pil_quantiles": _mean_or_none(pil_q),
        "pil_means": _mean_or_none(pil_means),
        "pil_variances": _mean_or_none(pil_var),
        "pil_covariances": _mean_or_none(pil_cov),
        "pil_correlations": _mean_or_none(pil_cor),
    }
    present = [v for v in components.values() if v is not None]
    out: dict[str, float | None] = dict(components)
    out["pil_x"] = float(np.mean(pil_x))
    out["bounded_il"] = float(np.mean(present))
    return out


def score_information_loss(
    original: pd.DataFrame, protected: pd.DataFrame, columns: Sequence[str] | str
) -> dict[str, float]:
    """The information-loss half of Domingo-Ferrer & Torra's (2001) "score".

    ``score_il = 100 * (mv_x + mv_mean + mv_v + mv_var + mae_r) / 5``: the mean of the mean
    variation of the data, of the means, of the covariance matrix (``i <= j``) and of the
    variances, and the mean absolute error of the correlation matrix (``i < j``), each as in
    :func:`matrix_measures`, times 100. The components are returned beside ``score_il``.

    Raises :class:`DataError` as :func:`matrix_measures`, and when a mean variation is undefined
    because every original value it divides by is 0 (e.g. all column means are 0).
    """
    m = matrix_measures(original, protected, columns)
    keys = ("mv_x", "mv_mean", "mv_v", "mv_var", "mae_r")
    undefined = [k for k in keys if m[k] is None]
    if undefined:
        raise DataError(
            f"score information loss: {', '.join(undefined)} is undefined because every "
            "original value it divides by is 0 (e.g. all column means are 0); the score needs "
            "columns with non-zero means, variances and covariances -- shift the data or use "
            "matrix_measures() and bounded_information_loss() instead"
        )
    parts = {k: float(m[k]) for k in keys}  # type: ignore[arg-type]
    out = {"score_il": 100.0 * sum(parts.values()) / len(keys)}
    out.update(parts)
    return out
