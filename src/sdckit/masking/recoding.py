"""Non-perturbative masking: sampling, global recoding, grouping, top/bottom coding.

(Willenborg & de Waal 2001, *Elements of Statistical Disclosure Control*, ch. 4-5;
Hundepool et al. 2012, *Statistical Disclosure Control*, sec. 3.4; sdcMicro's
``globalRecode``, ``groupAndRename`` and ``topBotCoding``.)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, ClassVar, Literal, Self

import numpy as np
import pandas as pd
from pydantic import Field, model_validator

from sdckit.core.encoding import as_text
from sdckit.core.spec import (
    ColumnList,
    NonEmptyList,
    NonEmptyMapping,
    Number,
)
from sdckit.errors import DataError, ParameterError, preview
from sdckit.masking.base import (
    MaskResult,
    accepts_series,
    check_columns,
    integer_like,
    numeric_matrix,
)
from sdckit.masking.spec import (
    LOCAL_AND_SPARK,
    Count,
    MaskingMethod,
    Probability,
    Rng,
    _per_column,
)

_RECODE_METHODS = ("equal_width", "equal_frequency", "log_equidistant", "breaks")


# --------------------------------------------------------------------------- sampling


def _allocate(total: int, sizes: np.ndarray) -> np.ndarray:
    """Proportional allocation of ``total`` over strata by largest remainders (ties: first)."""
    N = sizes.sum()
    if N == 0:
        return np.zeros_like(sizes)
    # exact integer arithmetic: quota = total * size / N = alloc + remainder / N (a float
    # remainder such as 7/3 - 2 > 1/3 would break ties between equal remainders)
    scaled = int(total) * sizes.astype(np.int64)
    alloc = scaled // int(N)
    remainder = scaled % int(N)
    rest = int(total - alloc.sum())
    if rest > 0:
        order = np.lexsort((np.arange(len(sizes)), -remainder))
        alloc[order[:rest]] += 1
    return np.minimum(alloc, sizes)


@accepts_series
def sampling(
    data: pd.DataFrame,
    fraction: float | None = None,
    n: int | None = None,
    strata: Sequence[str] | str | None = None,
    seed: int | np.random.Generator | None = None,
) -> MaskResult:
    """Release a simple random sample without replacement, optionally stratified.

    Give either ``fraction`` (in (0, 1]) or ``n`` (records). With ``strata``, the sample size
    ``round(fraction * N)`` (or ``n``) is allocated to the strata proportionally to their sizes
    by largest remainders, and a simple random sample is drawn in each stratum. ``data`` of the
    result holds only the sampled rows (original index and order). ``details`` record the
    sampling fraction overall and per stratum (``n_h / N_h``; risk estimators such as the
    Benedetti-Franconi or Poisson-model risk need it) and the design weight ``N_h / n_h``.
    """
    if (fraction is None) == (n is None):
        raise ParameterError("sample: give exactly one of fraction (e.g. 0.1) or n (e.g. 1000)")
    N = len(data)
    if fraction is not None:
        try:
            f = float(fraction)
        except (TypeError, ValueError):
            raise ParameterError(f"sample: fraction={fraction!r} is not a number") from None
        if not 0 < f <= 1:
            raise ParameterError(f"sample: fraction={fraction!r} must lie in (0, 1], e.g. 0.1")
        total = int(np.floor(f * N + 0.5))
    else:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ParameterError(f"sample: n={n!r} must be a non-negative integer")
        if n > N:
            raise DataError(f"sample: n={n} exceeds the {N} records of the data; give n <= {N}")
        total = int(n)
    scols = [] if strata is None else check_columns(data, strata)
    rng = np.random.default_rng(seed)
    if scols:
        grouped = data.groupby(scols, dropna=False, sort=True)
        gid = grouped.ngroup().to_numpy()
        keys = grouped.size().index
        labels = [k if isinstance(k, tuple) else (k,) for k in keys]
    else:
        gid = np.zeros(N, dtype=np.int64)
        labels = [()]
    G = len(labels) if N else 0
    sizes = np.bincount(gid, minlength=G)
    alloc = _allocate(total, sizes)
    order = np.lexsort((rng.random(N), gid))
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1])) if G else np.zeros(0, np.int64)
    pos = np.arange(N) - starts[gid[order]] if N else np.zeros(0, np.int64)
    chosen = np.zeros(N, dtype=bool)
    chosen[order[pos < alloc[gid[order]]]] = True
    per_stratum = []
    for g in range(G):
        Nh, nh = int(sizes[g]), int(alloc[g])
        per_stratum.append(
            {
                "stratum": {
                    c: (None if pd.isna(v) else (v.item() if hasattr(v, "item") else v))
                    for c, v in zip(scols, labels[g], strict=True)
                },
                "N": Nh,
                "n": nh,
                "fraction": nh / Nh if Nh else 0.0,
                "weight": Nh / nh if nh else None,
            }
        )
    details = {
        "N": N,
        "n": int(chosen.sum()),
        "fraction": float(chosen.sum() / N) if N else 0.0,
        "strata": per_stratum,
    }
    params = {
        "fraction": None if fraction is None else float(fraction),
        "n": None if n is None else int(n),
        "strata": scols,
    }
    return MaskResult(data.loc[chosen].copy(), "sample", params, details)


# --------------------------------------------------------------------------- global recoding


def _fmt(x: float) -> str:
    return f"{x:.6g}"


def _show(v: Any) -> str:
    """``repr`` of a data value without the NumPy wrapper (``500``, not ``np.int64(500)``)."""
    return repr(v.item() if isinstance(v, np.generic) else v)


def given_breaks(breaks: Sequence[float] | None) -> np.ndarray:
    """The ``breaks`` of method ``breaks`` as an array: at least two finite, strictly
    increasing numbers (ParameterError otherwise)."""
    if breaks is None:
        raise ParameterError("global_recode: method='breaks' needs breaks, e.g. [0, 18, 65, 120]")
    try:
        b = np.asarray(breaks, dtype=float)
    except (TypeError, ValueError):
        raise ParameterError(f"global_recode: breaks {breaks!r} must be numbers") from None
    if b.ndim != 1 or len(b) < 2 or not np.all(np.isfinite(b)) or np.any(np.diff(b) <= 0):
        raise ParameterError(
            f"global_recode: breaks {list(breaks)!r} must be at least two "
            "finite, strictly increasing numbers"
        )
    return b


def check_bins(method: str, bins: Any) -> int:
    """``bins`` as an int; ParameterError unless it is a positive integer (methods other
    than ``breaks`` need it)."""
    if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
        raise ParameterError(
            f"global_recode: method={method!r} needs bins, a positive integer "
            f"(got {bins!r}), e.g. bins=5"
        )
    return int(bins)


def nonpositive_message(col: str, value: Any, row: int) -> str:
    """The error for a value <= 0 (0-based ``row``) under ``log_equidistant`` recoding."""
    return (
        f"global_recode: method='log_equidistant' needs positive values "
        f"but column {col!r} has {_show(value)} (row {row + 1}); use "
        "equal_width or shift the values"
    )


def outside_message(col: str, value: Any, row: int, b: np.ndarray) -> str:
    """The error for a value (0-based ``row``) outside the breaks ``b``."""
    return (
        f"global_recode: value {_show(value)} of column {col!r} (row {row + 1}) lies "
        f"outside the breaks [{_fmt(b[0])}, {_fmt(b[-1])}]; widen the breaks"
    )


def interval_breaks(
    method: str, bins: int, lo: float, hi: float, quantile: Callable[[np.ndarray], np.ndarray]
) -> np.ndarray:
    """The breaks of ``equal_width``, ``equal_frequency`` or ``log_equidistant`` recoding.

    ``lo``/``hi`` are the smallest and largest value, ``quantile(q)`` the column's quantiles
    at the probabilities ``q`` (NumPy's default, linear interpolation between order
    statistics: Hyndman & Fan 1996, definition 7) -- everything the breaks depend on, so the
    Spark engine computes them from aggregates of the whole data. Computed inner breaks are
    snapped to 12 significant digits (``exp(log(10)) = 10.000000000000002`` would put 10 into
    the interval below); the ends stay exact.
    """
    if method == "equal_width":
        b = np.linspace(lo, hi, bins + 1)
    elif method == "equal_frequency":
        b = np.unique(np.asarray(quantile(np.linspace(0.0, 1.0, bins + 1)), dtype=float))
    else:
        b = np.exp(np.linspace(np.log(lo), np.log(hi), bins + 1))
        b[0], b[-1] = lo, hi  # exact ends despite exp(log(.)) rounding
    if len(b) < 2:  # constant column
        b = np.array([lo, hi])
    inner = np.array([float(f"{v:.12g}") for v in b[1:-1]])
    return np.concatenate(([b[0]], inner, [b[-1]]))


def interval_names(b: np.ndarray, labels: Sequence[Any] | None) -> tuple[list[str], list[str]]:
    """The interval texts of the breaks ``b`` (``[20, 30)``, ..., the last closed) and the
    category names written (``labels`` when given: one per interval, distinct)."""
    k = len(b) - 1
    texts = [f"[{_fmt(b[i])}, {_fmt(b[i + 1])}{']' if i == k - 1 else ')'}" for i in range(k)]
    if len(set(texts)) < k:  # breaks too close for 6 digits
        texts = [f"[{b[i]:.15g}, {b[i + 1]:.15g}{']' if i == k - 1 else ')'}" for i in range(k)]
    if labels is None:
        return texts, texts
    names = [str(v) for v in labels]
    if len(names) != k:
        raise ParameterError(
            f"global_recode: {len(names)} labels for {k} intervals; give one label per interval"
        )
    if len(set(names)) != k:
        raise DataError("global_recode: labels must be distinct")
    return texts, names


@accepts_series
def global_recoding(
    data: pd.DataFrame,
    column: str,
    method: str = "equal_width",
    bins: int | None = None,
    breaks: Sequence[float] | None = None,
    labels: Sequence[str] | None = None,
) -> MaskResult:
    """Recode a numeric column into intervals (sdcMicro ``globalRecode``; mu-Argus recoding).

    ``method``:

    * ``"equal_width"``: ``bins`` intervals of equal width between min and max;
    * ``"equal_frequency"``: breaks at the ``j/bins`` quantiles (about the same number of
      records per interval; duplicate breaks are merged, so fewer intervals may result);
    * ``"log_equidistant"``: equal width on ``log(x)`` (positive values only);
    * ``"breaks"``: the given increasing ``breaks``.

    Intervals are closed on the left and open on the right, the last one closed:
    ``[20, 30)``, ..., ``[60, 70]`` (sdcMicro uses R's ``cut``, right-closed ``(a, b]``, and
    rounds computed breaks; sdckit keeps them exact). Values outside ``[breaks[0], breaks[-1]]``
    are an error. ``labels`` (one per interval) replace the interval texts. The result is an
    ordered categorical column; missing values stay missing.
    """
    (col,) = check_columns(data, [column])
    if method not in _RECODE_METHODS:
        raise ParameterError(
            f"global_recode: unknown method {method!r}; choose one of {', '.join(_RECODE_METHODS)}"
        )
    x = numeric_matrix(data, [col], "global_recode")[:, 0]
    ok = ~np.isnan(x)
    vals = x[ok]
    if method == "breaks":
        b = given_breaks(breaks)
    else:
        n_bins = check_bins(method, bins)
        if not len(vals):
            raise DataError(f"global_recode: column {col!r} has no values to recode")
        lo, hi = float(vals.min()), float(vals.max())
        if method == "log_equidistant" and lo <= 0:
            row = int(np.flatnonzero(ok & (x <= 0))[0])
            raise DataError(nonpositive_message(col, data[col].iloc[row], row))
        b = interval_breaks(method, n_bins, lo, hi, lambda q: np.quantile(vals, q))
    outside = ok & ((x < b[0]) | (x > b[-1]))
    if outside.any():
        row = int(np.flatnonzero(outside)[0])
        raise DataError(outside_message(col, data[col].iloc[row], row, b))
    texts, names = interval_names(b, labels)
    k = len(b) - 1
    codes = np.full(len(x), -1, dtype=np.int64)
    codes[ok] = np.clip(np.searchsorted(b, vals, side="right") - 1, 0, k - 1)
    out = data.copy()
    out[col] = pd.Series(
        pd.Categorical.from_codes(codes, categories=names, ordered=True), index=data.index
    )
    counts = np.bincount(codes[ok], minlength=k)
    details = {"breaks": b.tolist(), "intervals": texts, "labels": names, "counts": counts.tolist()}
    params = recode_parameters(col, method, bins, breaks, labels)
    return MaskResult(out, "global_recode", params, details)


def recode_parameters(
    column: str, method: str, bins: Any, breaks: Any, labels: Any
) -> dict[str, Any]:
    """The published parameters of :func:`global_recoding` (either engine)."""
    return {
        "column": column,
        "method": method,
        "bins": None if bins is None else int(bins),
        "breaks": None if breaks is None else [float(v) for v in breaks],
        "labels": None if labels is None else [str(v) for v in labels],
    }


def category_table(mapping: Mapping[Any, Any]) -> dict[str, Any]:
    """A :func:`group_categories` mapping as ``{canonical text of old: new}``.

    ``mapping`` is ``{old: new}`` or ``{new: [old, ...]}`` (when every value is a list, tuple
    or set); a category mapped to two groups is a DataError.
    """
    if not isinstance(mapping, Mapping) or not mapping:
        raise DataError(
            "group_categories: mapping must be a non-empty dict {old: new} or {new: [old, ...]}"
        )
    if all(isinstance(v, (list, tuple, set, frozenset)) for v in mapping.values()):
        pairs = [(old, new) for new, olds in mapping.items() for old in olds]
    else:
        pairs = list(mapping.items())
    old_texts = as_text(pd.Series([p[0] for p in pairs], dtype=object))
    table: dict[str, Any] = {}
    for t, (old, new) in zip(old_texts, pairs, strict=True):
        if t in table and table[t] != new:
            raise DataError(
                f"group_categories: category {old!r} is mapped to both {table[t]!r} and {new!r}"
            )
        table[t] = new
    return table


def unmapped_message(col: str, unmapped: Sequence[str]) -> str:
    """The error for categories of ``col`` that the mapping leaves out."""
    return (
        f"group_categories: categor{'y' if len(unmapped) == 1 else 'ies'} "
        f"{preview(unmapped, 10)} of column {col!r} "
        f"{'is' if len(unmapped) == 1 else 'are'} not in the mapping; map every "
        "category (to itself to keep it)"
    )


@accepts_series
def group_categories(data: pd.DataFrame, column: str, mapping: Mapping[Any, Any]) -> MaskResult:
    """Recode categories by a mapping (sdcMicro ``groupAndRename``).

    ``mapping`` is either ``{old: new}`` or ``{new: [old, ...]}`` (when every value is a
    list/tuple/set). Categories are matched by their canonical text (``1``, ``1.0`` and
    ``"1"`` are the same category). Every category in the data must be mapped: unmapped ones
    are an error that lists them. Missing values stay missing.
    """
    (col,) = check_columns(data, [column])
    table = category_table(mapping)
    s = data[col]
    texts = as_text(s)
    missing = s.isna().to_numpy()
    uniq = pd.unique(texts[~missing])
    unmapped = [u for u in uniq if u not in table]
    if unmapped:
        raise DataError(unmapped_message(col, unmapped))
    new_vals = pd.Series(texts, index=data.index).map(table).astype(object)
    new_vals[missing] = None
    out = data.copy()
    try:
        out[col] = pd.Series(new_vals.tolist(), index=data.index, name=col).infer_objects()
    except (TypeError, ValueError):  # pragma: no cover - exotic values
        out[col] = new_vals
    n_changed = int(np.sum(as_text(out[col]) != texts))
    details = {"mapping": {str(k): str(v) for k, v in table.items()}, "n_changed": n_changed}
    return MaskResult(out, "group_categories", {"column": col}, details)


# --------------------------------------------------------------------------- top/bottom coding


def check_coding(
    top: Any, bottom: Any, top_quantile: Any, bottom_quantile: Any, replace: str
) -> None:
    """ParameterError for a :func:`top_bottom_coding` call that gives a threshold twice, none at
    all, or an unknown ``replace``."""
    if replace not in ("threshold", "mean"):
        raise ParameterError(f"top_bottom_code: replace={replace!r} must be 'threshold' or 'mean'")
    if top is not None and top_quantile is not None:
        raise ParameterError("top_bottom_code: give top or top_quantile, not both")
    if bottom is not None and bottom_quantile is not None:
        raise ParameterError("top_bottom_code: give bottom or bottom_quantile, not both")
    if all(v is None for v in (top, bottom, top_quantile, bottom_quantile)):
        raise ParameterError(
            "top_bottom_code: give at least one of top, bottom, top_quantile, bottom_quantile"
        )


def coding_thresholds(
    top: Any,
    bottom: Any,
    top_quantile: Any,
    bottom_quantile: Any,
    quantile: Callable[[float], float],
) -> tuple[float | None, float | None]:
    """The (top, bottom) thresholds of :func:`top_bottom_coding`: the given numbers, or the
    column's quantiles ``quantile(q)`` (NumPy's linear definition, Hyndman & Fan 1996 no. 7;
    the Spark engine computes it from exact order statistics of the whole column). A bottom
    threshold above the top one is a DataError."""

    def quant(q: float | None, name: str) -> float | None:
        if q is None:
            return None
        try:
            qv = float(q)
        except (TypeError, ValueError):
            raise ParameterError(f"top_bottom_code: {name}={q!r} is not a number") from None
        if not 0 <= qv <= 1:
            raise ParameterError(f"top_bottom_code: {name}={q!r} must lie in [0, 1], e.g. 0.99")
        return quantile(qv)

    def number(v: float | None, name: str) -> float | None:
        if v is None:
            return None
        try:
            fv = float(v)
        except (TypeError, ValueError):
            raise ParameterError(f"top_bottom_code: {name}={v!r} is not a number") from None
        if not np.isfinite(fv):
            raise ParameterError(f"top_bottom_code: {name}={v!r} must be finite")
        return fv

    t = number(top, "top") if top is not None else quant(top_quantile, "top_quantile")
    b = (
        number(bottom, "bottom")
        if bottom is not None
        else quant(bottom_quantile, "bottom_quantile")
    )
    if t is not None and b is not None and b > t:
        raise DataError(
            f"top_bottom_code: the bottom threshold {b:g} exceeds the top threshold {t:g}"
        )
    return t, b


@accepts_series
def top_bottom_coding(
    data: pd.DataFrame,
    column: str,
    top: float | None = None,
    bottom: float | None = None,
    top_quantile: float | None = None,
    bottom_quantile: float | None = None,
    replace: str = "threshold",
) -> MaskResult:
    """Top and/or bottom coding of a numeric column (sdcMicro ``topBotCoding``).

    Values strictly above the top threshold (``top``, or the ``top_quantile`` of the column)
    and strictly below the bottom threshold are replaced: by the threshold itself
    (``replace="threshold"``) or by the mean of the replaced tail values
    (``replace="mean"``, which keeps the column total). ``details`` publish thresholds,
    replacement values and counts. Missing values stay missing.
    """
    (col,) = check_columns(data, [column])
    check_coding(top, bottom, top_quantile, bottom_quantile, replace)
    x = numeric_matrix(data, [col], "top_bottom_code")[:, 0]
    ok = ~np.isnan(x)

    def quantile(q: float) -> float:
        if not ok.any():
            raise DataError(f"top_bottom_code: column {col!r} has no values")
        return float(np.quantile(x[ok], q))

    t, b = coding_thresholds(top, bottom, top_quantile, bottom_quantile, quantile)
    y = x.copy()
    details: dict[str, Any] = {}
    for side, thr in (("top", t), ("bottom", b)):
        if thr is None:
            continue
        hit = ok & ((x > thr) if side == "top" else (x < thr))
        value = float(x[hit].mean()) if (replace == "mean" and hit.any()) else thr
        y[hit] = value
        details[side] = {"threshold": thr, "replacement": value, "n_coded": int(hit.sum())}
    out = data.copy()
    out[col] = integer_like(data[col], y)

    params = coding_parameters(col, top, bottom, top_quantile, bottom_quantile, replace)
    return MaskResult(out, "top_bottom_code", params, details)


def coding_parameters(
    column: str, top: Any, bottom: Any, top_quantile: Any, bottom_quantile: Any, replace: str
) -> dict[str, Any]:
    """The published parameters of :func:`top_bottom_coding` (either engine)."""

    def opt(v: Any) -> float | None:
        return None if v is None else float(v)

    return {
        "column": column,
        "top": opt(top),
        "bottom": opt(bottom),
        "top_quantile": opt(top_quantile),
        "bottom_quantile": opt(bottom_quantile),
        "replace": replace,
    }


# -- the method as a job-file step -----------------------------------------------------------------
class Sampling(MaskingMethod):
    """Simple or stratified random sampling of records (:func:`sdckit.masking.recoding.sampling`).

    Parameters
    ----------
    fraction : float, optional
        Share of the records kept, in (0, 1].
    n : int, optional
        Number of records kept (>= 1). Give exactly one of ``fraction`` and ``n``.
    strata : list of str, optional
        Sample within the groups of these columns.

    References
    ----------
    Willenborg, L. & de Waal, T. (2001). *Elements of Statistical Disclosure Control*.
    Springer, ch. 4.
    """

    spec_name: ClassVar[str] = "sampling"

    fraction: Annotated[Number, Field(gt=0, le=1)] | None = None
    n: Count | None = None
    strata: ColumnList | None = None

    @model_validator(mode="after")
    def _fraction_or_n(self) -> Self:
        if (self.fraction is None) == (self.n is None):
            raise ValueError("give exactly one of fraction (e.g. 0.1) and n (a number of records)")
        return self

    def apply(self, data: pd.DataFrame, rng: Rng = None) -> list[MaskResult]:
        """Sample (see :meth:`MaskingMethod.apply`)."""
        return [sampling(data, self.fraction, self.n, self.strata, seed=rng)]


class GlobalRecoding(MaskingMethod):
    """Global recoding: numeric columns to intervals (:func:`global_recoding`) or categories
    grouped (:func:`group_categories`), column by column.

    Parameters
    ----------
    columns : list of str
        The columns recoded.
    method : {"equal_width", "equal_frequency", "log_equidistant", "breaks"}, default "equal_width"
        How the intervals are cut.
    bins : int, optional
        Number of intervals (>= 1).
    breaks : list of float, optional
        The interval limits (method ``breaks``).
    labels : list of str, optional
        Labels of the intervals.
    mapping : mapping, optional
        Group categories instead: ``{category: group}`` (the interval parameters are unused).

    References
    ----------
    Willenborg, L. & de Waal, T. (2001). *Elements of Statistical Disclosure Control*.
    Springer, ch. 4-5; sdcMicro ``globalRecode`` and ``groupAndRename``.
    """

    spec_name: ClassVar[str] = "global_recoding"
    engines: ClassVar[frozenset[str]] = LOCAL_AND_SPARK

    columns: ColumnList
    method: Literal["equal_width", "equal_frequency", "log_equidistant", "breaks"] = "equal_width"
    bins: Count | None = None
    breaks: NonEmptyList | None = None
    labels: NonEmptyList | None = None
    mapping: NonEmptyMapping | None = None

    def apply(self, data: pd.DataFrame, rng: Rng = None) -> list[MaskResult]:
        """Recode (see :meth:`MaskingMethod.apply`; deterministic, one result per column)."""
        if self.mapping is not None:
            return _per_column(group_categories, data, self.columns, mapping=self.mapping)
        return _per_column(
            global_recoding,
            data,
            self.columns,
            method=self.method,
            bins=self.bins,
            breaks=self.breaks,
            labels=self.labels,
        )


class TopBottomCoding(MaskingMethod):
    """Top and bottom coding of numeric columns (:func:`sdckit.masking.recoding.top_bottom_coding`),
    column by column.

    Parameters
    ----------
    columns : list of str
        The numeric columns.
    top, bottom : float, optional
        Values above ``top`` (below ``bottom``) are coded.
    top_quantile, bottom_quantile : float, optional
        The thresholds as quantiles of the column, in [0, 1].
    replace : {"threshold", "mean"}, default "threshold"
        The coded value: the threshold, or the mean of the values coded.

    References
    ----------
    Hundepool, A. et al. (2012). *Statistical Disclosure Control*. Wiley, sec. 3.4; sdcMicro
    ``topBotCoding``.
    """

    spec_name: ClassVar[str] = "top_bottom_coding"
    engines: ClassVar[frozenset[str]] = LOCAL_AND_SPARK

    columns: ColumnList
    top: Number | None = None
    bottom: Number | None = None
    top_quantile: Probability | None = None
    bottom_quantile: Probability | None = None
    replace: Literal["threshold", "mean"] = "threshold"

    def apply(self, data: pd.DataFrame, rng: Rng = None) -> list[MaskResult]:
        """Code (see :meth:`MaskingMethod.apply`; deterministic, one result per column)."""
        return _per_column(
            top_bottom_coding,
            data,
            self.columns,
            top=self.top,
            bottom=self.bottom,
            top_quantile=self.top_quantile,
            bottom_quantile=self.bottom_quantile,
            replace=self.replace,
        )


def __getattr__(name: str) -> Any:
    """The former names of this module's functions (deprecated; :data:`sdckit.masking.RENAMED`)."""
    from sdckit.masking import renamed_attribute

    return renamed_attribute(__name__, name)
