"""Distance-based record linkage (DBRL) between an original and a protected file.

The intruder holds file ``B``: original records (all of them or a subset of rows) restricted to
the attributes he knows (``columns``). Each intruder record is linked to its nearest protected
record; the link is correct when that record is the protected version of the same respondent
(same row). The share of correct links is the classic disclosure-risk measure *DLD/DBRL* of
Domingo-Ferrer & Torra (2001), "A quantitative comparison of disclosure control methods for
microdata", in *Confidentiality, Disclosure and Data Access* (Doyle et al., eds.), pp. 111-134,
and of Pagliuca & Seri (1999). Attributes are standardized to z-scores with the original file's
mean and standard deviation (as in those papers); the Mahalanobis variant follows Torra, Abowd &
Domingo-Ferrer (2006), "Using Mahalanobis distance-based record linkage for disclosure risk
assessment", PSD 2006, LNCS 4302, pp. 233-242.

Ties are counted fractionally: when ``t`` protected records share the minimal distance and the
true one is among them, the link counts ``1/t`` (the expected score of an intruder who picks one
of the tied records at random; sdcMicro's ``recordLinkage`` reports the same count as
``n_best``). Nearest neighbours are exact (``scipy.spatial.cKDTree``); no ``n x n`` matrix is
ever built.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd
from scipy.linalg import solve_triangular
from scipy.spatial import cKDTree

from sdckit.errors import DataError, SdcInputError, preview

Metric = Literal["euclidean", "mahalanobis", "weighted"]
CovarianceKind = Literal["original", "pooled", "difference"]

#: Relative tolerance (on the z-score scale) under which two distances count as tied.
TIE_RTOL = 1e-9
_TIE_GROUP = 64  # queries per bounded second-neighbour search (nearest_with_ties)
_TIE_MARGIN = 1e-6  # relative margin of that search over the tie radius


# --------------------------------------------------------------------------------------------
# input checks shared by every risk measure on (original, protected) pairs
# --------------------------------------------------------------------------------------------
def resolve_columns(original: pd.DataFrame, columns: str | Sequence[str] | None) -> list[str]:
    """The attribute list: ``columns`` as a list, or every column of ``original`` if None."""
    if columns is None:
        return [str(c) for c in original.columns]
    cols = [columns] if isinstance(columns, str) else list(columns)
    if not cols:
        raise SdcInputError("columns is empty: name at least one attribute the intruder knows")
    dup = sorted({c for c in cols if cols.count(c) > 1})
    if dup:
        raise SdcInputError(f"columns lists {preview(dup)} more than once; name each once")
    return cols


def align_pair(
    original: pd.DataFrame, protected: pd.DataFrame, *, original_name: str = "original file"
) -> pd.DataFrame:
    """Return ``protected`` row-aligned with ``original`` or raise :class:`DataError`.

    Rows are matched by label when both files carry the same (unique) row labels in a
    different order, else by position when the labels are identical; files of different
    length or with different labels are misaligned.
    """
    if not isinstance(original, pd.DataFrame) or not isinstance(protected, pd.DataFrame):
        raise SdcInputError(
            "original and protected must be pandas DataFrames, got "
            f"{type(original).__name__} and {type(protected).__name__}"
        )
    if len(original) != len(protected):
        raise DataError(
            f"the {original_name} has {len(original)} rows but the protected file has "
            f"{len(protected)}; both must hold the same respondents row by row (drop the "
            "records missing from one of them first)"
        )
    if original.index.equals(protected.index):
        return protected
    if (
        original.index.is_unique
        and protected.index.is_unique
        and set(original.index) == set(protected.index)
    ):
        return protected.loc[original.index]
    raise DataError(
        f"the row labels of the {original_name} and the protected file differ (e.g. "
        f"{preview(original.index[:3])} vs {preview(protected.index[:3])}); the files must be "
        "row-aligned: call reset_index(drop=True) on both if row i is the same respondent"
    )


def numeric_block(
    frame: pd.DataFrame, columns: Sequence[str], file_name: str, *, allow_nan: bool = False
) -> np.ndarray:
    """``frame[columns]`` as a float64 ``(n, d)`` array; DataError for bad columns/values.

    A column missing from the protected file is reported as an "intruder file column" (the
    attributes the intruder links on must be released).
    """
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        noun = "column" if len(missing) == 1 else "columns"
        if file_name == "protected file":
            noun = "intruder file " + noun
        raise DataError(
            f"{noun} {preview(missing)} not in {file_name} "
            f"(it has {preview(list(frame.columns), 8)}); fix the column names"
        )
    out = np.empty((len(frame), len(columns)), dtype=np.float64)
    for j, col in enumerate(columns):
        s = frame[col]
        if isinstance(s, pd.DataFrame):
            raise DataError(f"column {col!r} appears more than once in {file_name}; rename it")
        if not (pd.api.types.is_numeric_dtype(s.dtype) or pd.api.types.is_bool_dtype(s.dtype)):
            raise DataError(
                f"column {col!r} of {file_name} is not numeric (dtype {s.dtype}, values "
                f"{preview(s.head(3))}); distance-based risk needs numbers: convert or drop it"
            )
        vals = s.to_numpy(dtype=np.float64, na_value=np.nan)
        bad = ~np.isfinite(vals) if not allow_nan else np.isinf(vals)
        if bad.any():
            rows = list(frame.index[np.flatnonzero(bad)[:5]])
            what = "missing or infinite" if not allow_nan else "infinite"
            raise DataError(
                f"column {col!r} of {file_name} has {int(bad.sum())} {what} values (rows "
                f"{preview(rows)}); impute or drop those records first"
            )
        out[:, j] = vals
    return out


def original_scale(x: np.ndarray, columns: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Mean and standard deviation (ddof=1) of each column of the original ``x``.

    Raises :class:`DataError` naming the constant columns (z-scores are undefined).
    """
    if x.shape[0] < 2:
        raise DataError("the original file needs at least 2 records to standardize attributes")
    mean = x.mean(axis=0)
    sd = x.std(axis=0, ddof=1)
    const = [c for c, s in zip(columns, sd, strict=True) if not s > 0]
    if const:
        raise DataError(
            f"column {preview(const)} is constant in the original file (zero variance): it "
            "cannot be standardized and carries no linkage information; drop it from columns"
        )
    return mean, sd


def rows_subset(rows, n: int, what: str = "intruder_rows") -> np.ndarray:
    """Positions selected by ``rows`` (None = all, int positions or boolean mask of length n)."""
    if rows is None:
        return np.arange(n)
    arr = np.asarray(rows)
    if arr.dtype == bool:
        if arr.shape != (n,):
            raise SdcInputError(f"{what} is a boolean mask of length {arr.size}; need {n}")
        return np.flatnonzero(arr)
    if arr.size == 0:
        raise SdcInputError(f"{what} is empty: select at least one record")
    if not np.issubdtype(arr.dtype, np.integer):
        raise SdcInputError(f"{what} must hold integer row positions or a boolean mask")
    arr = arr.ravel().astype(np.int64)
    bad = arr[(arr < 0) | (arr >= n)]
    if bad.size:
        raise SdcInputError(f"{what} has positions {preview(bad)} outside 0..{n - 1}")
    if np.unique(arr).size != arr.size:
        raise SdcInputError(f"{what} lists a record position more than once")
    return arr


def unique_rows(a: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``np.unique(a, axis=0, return_index=True, return_inverse=True, return_counts=True)``
    for a 2-d float array without missing values, with the inverse flattened: the same
    arrays (distinct rows in lexicographic order, first occurrences, inverse, counts), from
    a stable ``np.lexsort`` of the columns instead of a sort of the rows as structured
    records, which is several times faster. Rows are equal when all their values compare
    equal (``-0.0 == 0.0``), as in ``np.unique``."""
    n = a.shape[0]
    if n == 0 or a.shape[1] == 0:
        d, f, i, c = np.unique(
            a, axis=0, return_index=True, return_inverse=True, return_counts=True
        )
        return d, f, i.ravel(), c
    perm = np.lexsort(a.T[::-1])  # stable: equal rows keep their order (first = lowest)
    srt = a[perm]
    new = np.empty(n, dtype=bool)
    new[0] = True
    np.any(srt[1:] != srt[:-1], axis=1, out=new[1:])
    starts = np.flatnonzero(new)
    inverse = np.empty(n, dtype=np.int64)
    inverse[perm] = np.cumsum(new) - 1
    counts = np.diff(np.append(starts, n))
    return srt[starts], perm[starts], inverse, counts


def nearest_with_ties(
    queries: np.ndarray, truth: np.ndarray, targets: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Exact nearest neighbour of each query among ``targets`` with fractional tie credit.

    ``truth[i]`` is the row of ``targets`` that is query ``i``'s true match. Returns
    ``(nearest, n_at_min, credit)`` where ``n_at_min`` counts the targets at the minimal
    distance (within ``TIE_RTOL``) and ``credit`` is ``1/n_at_min`` when the true match is one
    of them, else 0; ``nearest`` is the true match when it is among them, else one of them.

    The kd-tree holds the distinct target points with their multiplicities (a microaggregated
    file has one point per group), so equal records are one search and count as ties by
    their number. A k=1 query finds the nearest distance; a ball count at that distance finds
    the other points tied with it, where a second-neighbour search bounded by the ball (cheap:
    it stops at the ball) says that another point may be there.
    """
    distinct, first, inverse, mult = unique_rows(targets)
    tree = cKDTree(distinct)
    d1, point = tree.query(queries, k=1, workers=-1)
    radius = d1 + TIE_RTOL * (1.0 + d1)
    # which balls may hold a second distinct point: the second-nearest distance, searched
    # only up to the ball (queries in groups of similar radius, bound = the group's largest
    # radius plus 1e-6 relative, far above the rounding of a distance); where it is not
    # within the radius (plus that margin) the ball holds the nearest point alone, elsewhere
    # the tree counts the ball exactly
    n = len(queries)
    second = np.full(n, np.inf)
    by_radius = np.argsort(radius, kind="stable")
    for s in range(0, n, _TIE_GROUP):
        group = by_radius[s : s + _TIE_GROUP]
        bound = float(radius[group].max()) * (1.0 + _TIE_MARGIN)
        d2, _ = tree.query(queries[group], k=[2], distance_upper_bound=bound, workers=-1)
        second[group] = d2[:, 0]
    maybe = np.flatnonzero(~(second > radius * (1.0 + _TIE_MARGIN)))
    points_at_min = np.ones(n, dtype=np.int64)
    if maybe.size:
        points_at_min[maybe] = tree.query_ball_point(
            queries[maybe], r=radius[maybe], return_length=True, workers=-1
        )
    n_at_min = mult[point].astype(np.int64)
    several = np.flatnonzero(points_at_min > 1)
    if several.size:  # several distinct points tied: add up their multiplicities
        balls = tree.query_ball_point(queries[several], r=radius[several], workers=-1)
        sizes = np.fromiter((len(b) for b in balls), dtype=np.int64, count=len(balls))
        members = np.fromiter((m for b in balls for m in b), dtype=np.int64, count=int(sizes.sum()))
        starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
        n_at_min[several] = np.add.reduceat(mult[members], starts)
    d_true = np.sqrt(((queries - targets[truth]) ** 2).sum(axis=1))
    true_in = (inverse[truth] == point) | (d_true <= radius)
    credit = np.where(true_in, 1.0 / n_at_min, 0.0)
    nearest = np.where(inverse[truth] == point, truth, first[point])
    return nearest.astype(np.int64), n_at_min, credit


# --------------------------------------------------------------------------------------------
# result
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class LinkageResult:
    """Outcome of a distance-based record linkage.

    ``dbrl`` is the (fractionally tie-counted) share of intruder records whose nearest
    protected record is their own; ``correct`` its numerator. Per-record arrays (positions
    in the protected file) are kept for inspection but left out of :meth:`to_dict`.
    """

    dbrl: float
    correct: float
    n_intruder: int
    n_protected: int
    n_unique_correct: int
    n_tied: int
    metric: str
    columns: list[str]
    intruder_rows: np.ndarray = field(repr=False)
    nearest: np.ndarray = field(repr=False)
    n_at_min: np.ndarray = field(repr=False)
    credit: np.ndarray = field(repr=False)
    #: the metric's own parameters: ``covariance`` (Mahalanobis), ``weights`` (weighted)
    parameters: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        """JSON-ready summary (plain Python scalars and lists)."""
        return {
            "dbrl": float(self.dbrl),
            "correct": float(self.correct),
            "n_intruder": int(self.n_intruder),
            "n_protected": int(self.n_protected),
            "n_unique_correct": int(self.n_unique_correct),
            "n_tied": int(self.n_tied),
            "metric": self.metric,
            "columns": list(self.columns),
            **self.parameters,
        }


# --------------------------------------------------------------------------------------------
# metric transforms: every metric becomes Euclidean distance after a linear map
# --------------------------------------------------------------------------------------------
def _weights_vector(weights, columns: Sequence[str]) -> np.ndarray:
    if weights is None:
        raise SdcInputError("metric='weighted' needs weights (a mapping column -> weight)")
    if isinstance(weights, Mapping):
        unknown = [k for k in weights if k not in columns]
        if unknown:
            raise SdcInputError(f"weights name {preview(unknown)} which are not in columns")
        missing = [c for c in columns if c not in weights]
        if missing:
            raise SdcInputError(f"weights give no weight for column {preview(missing)}")
        w = np.array([float(weights[c]) for c in columns])
    else:
        w = np.asarray(weights, dtype=float).ravel()
        if w.size != len(columns):
            raise SdcInputError(f"weights has {w.size} entries but columns has {len(columns)}")
    if not np.all(np.isfinite(w)) or (w < 0).any():
        raise SdcInputError(f"weights must be finite and >= 0, got {preview(w.tolist())}")
    if not w.sum() > 0:
        raise SdcInputError("at least one weight must be positive")
    return w


def whitening_factor(
    zx: np.ndarray, zy: np.ndarray, columns: Sequence[str], covariance: CovarianceKind
) -> np.ndarray:
    """Lower Cholesky factor ``L`` of the covariance used by Mahalanobis linkage.

    ``original``: covariance of the (standardized) original file; ``pooled``: the pooled
    within-file covariance ``((n-1) S_x + (m-1) S_y) / (n + m - 2)``; ``difference``:
    ``Var(X) + Var(Y) - 2 Cov(X, Y)``, the covariance of ``x - y`` over the aligned pairs
    (Torra, Abowd & Domingo-Ferrer 2006). Mahalanobis distance = Euclidean distance of
    ``L^{-1} z``.
    """
    if covariance == "original":
        cov = np.cov(zx, rowvar=False)
    elif covariance == "pooled":
        n, m = zx.shape[0], zy.shape[0]
        cov = ((n - 1) * np.cov(zx, rowvar=False) + (m - 1) * np.cov(zy, rowvar=False)) / (
            n + m - 2
        )
    elif covariance == "difference":
        cov = np.cov(zx - zy, rowvar=False)
    else:
        raise SdcInputError(
            f"covariance={covariance!r} is unknown; use 'original', 'pooled' or 'difference'"
        )
    cov = np.atleast_2d(cov)
    if covariance == "difference":
        unchanged = [c for c, v in zip(columns, np.diag(cov), strict=True) if not v > 0]
        if unchanged:
            raise DataError(
                f"the covariance of the differences x - x' is singular: column(s) "
                f"{preview(unchanged)} are unchanged (or shifted by a constant) in the "
                "protected file; leave them out of the intruder's columns or use "
                "covariance='original'"
            )
    try:
        chol = np.linalg.cholesky(cov)
    except np.linalg.LinAlgError:
        chol = None
    if chol is None or not np.all(np.diag(chol) > 1e-10 * np.sqrt(np.diag(cov).max())):
        raise DataError(
            f"the {covariance} covariance matrix of columns {preview(list(columns), 8)} is "
            "singular (some columns are linear combinations of others); drop a redundant "
            "column or use metric='euclidean'"
        )
    return chol


def linkage_space(
    x: np.ndarray,
    y: np.ndarray,
    columns: Sequence[str],
    metric: Metric = "euclidean",
    weights=None,
    covariance: CovarianceKind = "original",
) -> tuple[np.ndarray, np.ndarray]:
    """Map original ``x`` and protected ``y`` so that the chosen metric becomes Euclidean.

    Both files are standardized with the original's mean and sd; ``weighted`` multiplies
    column k by ``sqrt(w_k)`` (distance ``sqrt(sum_k w_k (a_k - b_k)^2)``); ``mahalanobis``
    applies ``L^{-1}`` (see :func:`whitening_factor`).
    """
    mean, sd = original_scale(x, columns)
    zx = (x - mean) / sd
    zy = (y - mean) / sd
    if metric == "euclidean":
        return zx, zy
    if metric == "weighted":
        root = np.sqrt(_weights_vector(weights, columns))
        return zx * root, zy * root
    if metric == "mahalanobis":
        chol = whitening_factor(zx, zy, columns, covariance)
        wx = solve_triangular(chol, zx.T, lower=True).T
        wy = solve_triangular(chol, zy.T, lower=True).T
        return np.ascontiguousarray(wx), np.ascontiguousarray(wy)
    raise SdcInputError(
        f"metric={metric!r} is unknown; use 'euclidean', 'mahalanobis' or 'weighted'"
    )


# --------------------------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------------------------
def distance_linkage(
    original: pd.DataFrame,
    protected: pd.DataFrame,
    columns: str | Sequence[str] | None = None,
    intruder_rows=None,
    metric: Metric = "euclidean",
    weights: Mapping[str, float] | Sequence[float] | None = None,
    covariance: CovarianceKind = "original",
) -> LinkageResult:
    """Distance-based record linkage risk (DBRL) of a protected file.

    Each intruder record (rows ``intruder_rows`` of ``original``, attributes ``columns``) is
    linked to the nearest record of the whole protected file; the share of correct links is
    returned as ``dbrl`` (Domingo-Ferrer & Torra 2001; Pagliuca & Seri 1999). Attributes are
    z-scores with the original's mean and sd (ddof=1). ``metric``:

    * ``"euclidean"`` -- plain Euclidean distance on z-scores;
    * ``"weighted"`` -- ``sqrt(sum_k w_k (a_k - b_k)^2)`` (``weights`` per column, >= 0);
    * ``"mahalanobis"`` -- ``sqrt((a-b)' S^{-1} (a-b))`` with ``S`` chosen by ``covariance``
      (Torra, Abowd & Domingo-Ferrer 2006), computed as Euclidean distance after whitening
      with the Cholesky factor of ``S``.

    Ties count fractionally (``1/t`` if the true record is one of ``t`` nearest). Exact kd-tree
    search (``cKDTree``, all cores); memory and time are ``O(n log n)``, never ``n x n``.

    Raises :class:`DataError` for misaligned files, unknown/non-numeric/constant columns and
    missing values.
    """
    cols = resolve_columns(original, columns)
    protected = align_pair(original, protected)
    x = numeric_block(original, cols, "the original file")
    y = numeric_block(protected, cols, "protected file")
    rows = rows_subset(intruder_rows, len(original))
    zx, zy = linkage_space(x, y, cols, metric, weights, covariance)
    queries = np.ascontiguousarray(zx[rows])
    nearest, n_at_min, credit = nearest_with_ties(queries, rows, zy)
    correct = float(credit.sum())
    parameters: dict = {}
    if metric == "mahalanobis":
        parameters["covariance"] = covariance
    elif metric == "weighted":
        w = _weights_vector(weights, cols)
        parameters["weights"] = {c: float(v) for c, v in zip(cols, w, strict=True)}
    return LinkageResult(
        dbrl=correct / rows.size,
        correct=correct,
        n_intruder=int(rows.size),
        n_protected=int(len(protected)),
        n_unique_correct=int(((n_at_min == 1) & (credit == 1.0)).sum()),
        n_tied=int((n_at_min > 1).sum()),
        metric=metric,
        columns=cols,
        intruder_rows=rows,
        nearest=nearest,
        n_at_min=n_at_min,
        credit=credit,
        parameters=parameters,
    )


def score_disclosure_risk(dbrl: float, prl: float, interval_disclosure: float) -> float:
    """Aggregate disclosure risk ``0.25 DBRL + 0.25 PRL + 0.5 ID`` (shares in [0, 1]).

    The weighting of Domingo-Ferrer, Mateo-Sanz & Torra (2001), "Comparing SDC methods for
    microdata on the basis of information loss and disclosure risk" (ETK-NTTS 2001) and
    Domingo-Ferrer & Torra (2001): DR = 0.25 DLD + 0.25 PLD + 0.5 ID, with DLD the
    distance-based and PLD the probabilistic record-linkage share and ID the interval
    disclosure share (here all as shares, so DR is a share; the papers use percentages).
    """
    vals = {"dbrl": dbrl, "prl": prl, "interval_disclosure": interval_disclosure}
    for name, v in vals.items():
        if not (isinstance(v, int | float | np.floating | np.integer) and 0.0 <= float(v) <= 1.0):
            raise SdcInputError(f"{name}={v!r} must be a share in [0, 1]")
    return 0.25 * float(dbrl) + 0.25 * float(prl) + 0.5 * float(interval_disclosure)
