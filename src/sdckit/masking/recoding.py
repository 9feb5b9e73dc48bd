"""Non-perturbative masking: sampling, global recoding, grouping, top/bottom coding.

(Willenborg & de Waal 2001, *Elements of Statistical Disclosure Control*, ch. 4-5;
Hundepool et al. 2012, *Statistical Disclosure Control*, sec. 3.4; sdcMicro's
``globalRecode``, ``groupAndRename`` and ``topBotCoding``.)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
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
from sdckit.masking.stats import ColumnStats, PandasStats

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
    plan = interval_plan(PandasStats(data), column, method, bins, breaks, labels)
    return interval_release(data, plan)


@dataclass(frozen=True)
class IntervalPlan:
    """The intervals of one column (:func:`interval_plan`): breaks, interval texts, the
    category names written, and the published parameters."""

    column: str
    breaks: np.ndarray
    texts: list[str]
    names: list[str]
    parameters: dict[str, Any]

    def record(self, counts: Sequence[int] | np.ndarray) -> dict[str, Any]:
        """The published record, with the number of records per interval."""
        details = {
            "breaks": self.breaks.tolist(),
            "intervals": self.texts,
            "labels": self.names,
            "counts": [int(v) for v in counts],
        }
        return MaskResult(pd.DataFrame(), "global_recode", self.parameters, details).record()


def interval_plan(
    stats: ColumnStats,
    column: str,
    method: str = "equal_width",
    bins: int | None = None,
    breaks: Sequence[float] | None = None,
    labels: Sequence[str] | None = None,
) -> IntervalPlan:
    """The plan of :func:`global_recode`: the breaks (given, or from the column's smallest and
    largest value or its quantiles), every value checked inside them, the names."""
    (col,) = stats.check_columns([column])
    if method not in _RECODE_METHODS:
        raise ParameterError(
            f"global_recode: unknown method {method!r}; choose one of {', '.join(_RECODE_METHODS)}"
        )
    stats.check_numeric([col], "global_recode")
    if method == "breaks":
        b = given_breaks(breaks)
    else:
        n_bins = check_bins(method, bins)
        if not stats.count(col):
            raise DataError(f"global_recode: column {col!r} has no values to recode")
        lo, hi = stats.min_max(col)
        if method == "log_equidistant" and lo <= 0:
            row, value = stats.first_outside(col, 0.0, np.inf, low_open=True)
            raise DataError(nonpositive_message(col, value, row))
        b = interval_breaks(method, n_bins, lo, hi, lambda q: stats.quantiles(col, q))
    row, value = stats.first_outside(col, float(b[0]), float(b[-1]))
    if row >= 0:
        raise DataError(outside_message(col, value, row, b))
    texts, names = interval_names(b, labels)
    params = recode_parameters(col, method, bins, breaks, labels)
    return IntervalPlan(col, b, texts, names, params)


def interval_release(data: pd.DataFrame, plan: IntervalPlan) -> MaskResult:
    """Recode the column of ``data`` (all records or one block) into the plan's intervals:
    an ordered categorical column (all intervals its categories)."""
    col, b = plan.column, plan.breaks
    x = numeric_matrix(data, [col], "global_recode")[:, 0]
    ok = ~np.isnan(x)
    k = len(b) - 1
    codes = np.full(len(x), -1, dtype=np.int64)
    codes[ok] = np.clip(np.searchsorted(b, x[ok], side="right") - 1, 0, k - 1)
    out = data.copy()
    out[col] = pd.Series(
        pd.Categorical.from_codes(codes, categories=plan.names, ordered=True), index=data.index
    )
    counts = np.bincount(codes[ok], minlength=k)
    return MaskResult(out, "global_recode", plan.parameters, plan.record(counts)["details"])


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


#: the unmapped categories an error names (the others are counted)
_UNMAPPED_SHOWN = 10


def unmapped_message(col: str, count: int, first: Sequence[str]) -> str:
    """The error for the ``count`` categories of ``col`` that the mapping leaves out, the
    first of them (at least :data:`_UNMAPPED_SHOWN` when there are more) named."""
    return (
        f"group_categories: categor{'y' if count == 1 else 'ies'} "
        f"{preview(first, _UNMAPPED_SHOWN, count)} of column {col!r} "
        f"{'is' if count == 1 else 'are'} not in the mapping; map every "
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
    return group_release(data, group_plan(PandasStats(data), column, mapping))


@dataclass(frozen=True)
class GroupPlan:
    """The grouping of one column's categories (:func:`group_plan`): ``table`` maps the
    canonical text of every old category to its new value."""

    column: str
    table: dict[str, Any]

    def kind(self) -> str:
        """How the new values are held (``long``, ``double``, ``boolean`` or ``string``)."""
        new = pd.Series(list(self.table.values()), dtype=object).infer_objects()
        if pd.api.types.is_bool_dtype(new.dtype):
            return "boolean"
        if pd.api.types.is_integer_dtype(new.dtype):
            return "long"
        return "double" if pd.api.types.is_float_dtype(new.dtype) else "string"

    def record(self, n_changed: int) -> dict[str, Any]:
        """The published record, with the number of values changed."""
        details = {
            "mapping": {str(k): str(v) for k, v in self.table.items()},
            "n_changed": int(n_changed),
        }
        params = {"column": self.column}
        return MaskResult(pd.DataFrame(), "group_categories", params, details).record()


def group_plan(stats: ColumnStats, column: str, mapping: Mapping[Any, Any]) -> GroupPlan:
    """The plan of :func:`group_categories`: the mapping read, every category of the column
    checked to be mapped (DataError naming the first others in order of first appearance
    and counting the rest: :meth:`ColumnStats.values_outside`, so a column of many distinct
    values brings no more than that to the Spark driver)."""
    (col,) = stats.check_columns([column])
    table = category_table(mapping)
    count, first = stats.values_outside(col, set(table), _UNMAPPED_SHOWN)
    if count:
        raise DataError(unmapped_message(col, count, first))
    return GroupPlan(col, table)


def group_release(data: pd.DataFrame, plan: GroupPlan) -> MaskResult:
    """Recode the column of ``data`` (all records or one block) by the plan's mapping."""
    col, table = plan.column, plan.table
    s = data[col]
    texts = as_text(s)
    missing = s.isna().to_numpy()
    new_vals = pd.Series(texts, index=data.index).map(table).astype(object)
    new_vals[missing] = None
    out = data.copy()
    try:
        out[col] = pd.Series(new_vals.tolist(), index=data.index, name=col).infer_objects()
    except (TypeError, ValueError):  # pragma: no cover - exotic values
        out[col] = new_vals
    n_changed = int(np.sum(as_text(out[col]) != texts))
    record = plan.record(n_changed)
    return MaskResult(out, "group_categories", record["parameters"], record["details"])


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
    plan = coding_plan(
        PandasStats(data), column, top, bottom, top_quantile, bottom_quantile, replace
    )
    return coding_release(data, plan)


@dataclass(frozen=True)
class CodingPlan:
    """Top and bottom coding of one column (:func:`coding_plan`): per coded side
    (``top``/``bottom``) its threshold, replacement value and the number of values coded."""

    column: str
    sides: dict[str, dict[str, Any]]
    parameters: dict[str, Any]

    def record(self) -> dict[str, Any]:
        """The published record."""
        details = {side: dict(facts) for side, facts in self.sides.items()}
        return MaskResult(pd.DataFrame(), "top_bottom_code", self.parameters, details).record()

    def whole(self) -> bool:
        """Whether every replacement value used is a whole number (an integer column then
        stays integer)."""
        used = [f["replacement"] for f in self.sides.values() if f["n_coded"]]
        return all(float(v).is_integer() for v in used)


def _quantile_of(stats: ColumnStats, col: str, wanted: Sequence[Any]) -> Callable[[float], float]:
    """The quantile function :func:`coding_thresholds` calls: the requested quantiles of the
    column computed together on first use (DataError when the column has no values)."""
    qs = []
    for q in wanted:
        try:
            if q is not None and 0 <= float(q) <= 1:
                qs.append(float(q))
        except (TypeError, ValueError):
            continue
    found: dict[float, float] = {}

    def quantile(q: float) -> float:
        if not found:
            if not stats.count(col):
                raise DataError(f"top_bottom_code: column {col!r} has no values")
            found.update(zip(qs, map(float, stats.quantiles(col, qs)), strict=True))
        return found[float(q)]

    return quantile


def coding_plan(
    stats: ColumnStats,
    column: str,
    top: float | None = None,
    bottom: float | None = None,
    top_quantile: float | None = None,
    bottom_quantile: float | None = None,
    replace: str = "threshold",
) -> CodingPlan:
    """The plan of :func:`top_bottom_code`: the thresholds (given, or the column's
    quantiles), the tail counts and, with ``replace="mean"``, the tail means."""
    (col,) = stats.check_columns([column])
    check_coding(top, bottom, top_quantile, bottom_quantile, replace)
    stats.check_numeric([col], "top_bottom_code")
    quantile = _quantile_of(stats, col, (top_quantile, bottom_quantile))
    t, b = coding_thresholds(top, bottom, top_quantile, bottom_quantile, quantile)
    sides: dict[str, dict[str, Any]] = {}
    for side, thr in (("top", t), ("bottom", b)):
        if thr is None:
            continue
        count, mean = stats.tail(col, thr, side)
        value = mean if (replace == "mean" and count and mean is not None) else thr
        sides[side] = {"threshold": thr, "replacement": value, "n_coded": count}
    params = coding_parameters(col, top, bottom, top_quantile, bottom_quantile, replace)
    return CodingPlan(col, sides, params)


def coding_release(data: pd.DataFrame, plan: CodingPlan) -> MaskResult:
    """Code the column of ``data`` (all records or one block) by the plan's thresholds."""
    col = plan.column
    x = numeric_matrix(data, [col], "top_bottom_code")[:, 0]
    ok = ~np.isnan(x)
    y = x.copy()
    for side, facts in plan.sides.items():
        thr = facts["threshold"]
        hit = ok & ((x > thr) if side == "top" else (x < thr))
        y[hit] = facts["replacement"]
    out = data.copy()
    out[col] = integer_like(data[col], y)
    record = plan.record()
    return MaskResult(out, "top_bottom_code", record["parameters"], record["details"])


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


# --------------------------------------------------------------------------- step plans


@dataclass(frozen=True)
class _ColumnByColumn:
    """A deterministic step of one plan per column (its ``parts``, each naming its
    ``column``), released column by column: the last result holds the whole table."""

    parts: list[Any]
    random: ClassVar[bool] = False
    #: the record name of a step that masks nothing (no part)
    empty_name: ClassVar[str] = ""

    @property
    def columns(self) -> list[str]:
        """The masked columns, in order."""
        return [p.column for p in self.parts]

    def release_part(self, data: pd.DataFrame, part: Any) -> MaskResult:
        """One column masked by its plan."""
        raise NotImplementedError

    def release(self, data: pd.DataFrame, rng: np.random.Generator | None) -> MaskResult:
        """Every column masked in turn (deterministic: ``rng`` is unused)."""
        result = MaskResult(data, self.empty_name)
        for part in self.parts:
            result = self.release_part(result.data, part)
        return result


@dataclass(frozen=True)
class RecodingPlan(_ColumnByColumn):
    """Global recoding of several columns, column by column: an :class:`IntervalPlan` or a
    :class:`GroupPlan` per column (deterministic)."""

    parts: list[IntervalPlan | GroupPlan]
    empty_name: ClassVar[str] = "global_recode"

    def release_part(self, data: pd.DataFrame, part: IntervalPlan | GroupPlan) -> MaskResult:
        """Intervals or grouped categories of one column."""
        if isinstance(part, IntervalPlan):
            return interval_release(data, part)
        return group_release(data, part)

    def out_kinds(self, kinds: dict[str, str]) -> dict[str, str]:
        """Intervals are text; grouped categories hold the kind of their new values."""
        return {p.column: "string" if isinstance(p, IntervalPlan) else p.kind() for p in self.parts}

    def recoded_categories(self) -> dict[str, list[str] | None]:
        """Per column its categories in order after the release (all intervals, empty ones
        too), None where the values are the categories."""
        return {p.column: p.names if isinstance(p, IntervalPlan) else None for p in self.parts}

    def records(self, released: ColumnStats, changed: Sequence[int]) -> list[dict[str, Any]]:
        """One record per column: interval counts from the released counts, or the number of
        grouped values changed."""
        out = []
        for part, n_changed in zip(self.parts, changed, strict=True):
            if isinstance(part, IntervalPlan):
                counts = released.text_counts(part.column)
                out.append(part.record([counts.get(name, 0) for name in part.names]))
            else:
                out.append(part.record(n_changed))
        return out


def recoding_plan(
    stats: ColumnStats,
    columns: Sequence[str],
    method: str = "equal_width",
    bins: int | None = None,
    breaks: Sequence[float] | None = None,
    labels: Sequence[str] | None = None,
    mapping: Mapping[Any, Any] | None = None,
) -> RecodingPlan:
    """The plans of global recoding of ``columns``: categories grouped by ``mapping`` when
    given (:func:`group_plan`), else intervals (:func:`interval_plan`)."""
    cols = stats.check_columns(columns)
    if mapping is not None:
        return RecodingPlan([group_plan(stats, c, mapping) for c in cols])
    return RecodingPlan([interval_plan(stats, c, method, bins, breaks, labels) for c in cols])


@dataclass(frozen=True)
class CodingPlans(_ColumnByColumn):
    """Top and bottom coding of several columns: a :class:`CodingPlan` per column."""

    parts: list[CodingPlan]
    empty_name: ClassVar[str] = "top_bottom_code"

    def release_part(self, data: pd.DataFrame, part: CodingPlan) -> MaskResult:
        """One column coded."""
        return coding_release(data, part)

    def out_kinds(self, kinds: dict[str, str]) -> dict[str, str]:
        """An integer column stays integer when every replacement value used is whole."""
        return {
            p.column: "long" if kinds[p.column] == "long" and p.whole() else "double"
            for p in self.parts
        }

    def records(self, released: ColumnStats, changed: Sequence[int]) -> list[dict[str, Any]]:
        """One record per column (everything is in the plan)."""
        return [p.record() for p in self.parts]


def coding_plans(
    stats: ColumnStats,
    columns: Sequence[str],
    top: float | None = None,
    bottom: float | None = None,
    top_quantile: float | None = None,
    bottom_quantile: float | None = None,
    replace: str = "threshold",
) -> CodingPlans:
    """The plans of top and bottom coding of ``columns`` (:func:`coding_plan`)."""
    cols = stats.check_columns(columns)
    check_coding(top, bottom, top_quantile, bottom_quantile, replace)
    return CodingPlans(
        [coding_plan(stats, c, top, bottom, top_quantile, bottom_quantile, replace) for c in cols]
    )


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
    spark_refusal: ClassVar[str | None] = "allocates an exact sample size over the whole file"

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

    def plan(self, stats: ColumnStats, seed: int | None = None) -> RecodingPlan:
        """:func:`recoding_plan`."""
        return recoding_plan(
            stats, self.columns, self.method, self.bins, self.breaks, self.labels, self.mapping
        )

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

    def plan(self, stats: ColumnStats, seed: int | None = None) -> CodingPlans:
        """:func:`coding_plans`."""
        return coding_plans(
            stats,
            self.columns,
            self.top,
            self.bottom,
            self.top_quantile,
            self.bottom_quantile,
            self.replace,
        )

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
