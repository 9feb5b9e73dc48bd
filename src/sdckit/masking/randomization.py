"""Post-randomization (PRAM) and randomized response for categorical attributes.

PRAM (Gouweleeuw, Kooiman, Willenborg & de Wolf 1998, "Post randomisation for statistical
disclosure control: theory and implementation", Journal of Official Statistics 14(4),
463-478; sdcMicro's ``pram``): every record's category ``a`` of an attribute is replaced by a
category ``b`` drawn with probability ``P[a, b]`` from a published Markov (transition) matrix
``P`` (rows sum to 1). Because ``E[T_released] = P^T T_true`` for the vector of category
counts, ``P^{-T} T_released`` is an unbiased estimate of the true counts (:func:`pram_estimate`).

Invariant PRAM (Gouweleeuw et al. 1998, sec. 3; sdcMicro's default construction): with ``p``
the observed category proportions, ``Q[k, j] = P[j, k] p_j / sum_l p_l P[l, k]`` is the
"backward" matrix and ``R = P Q`` satisfies ``p^T R = p^T`` -- the expected released
frequencies equal the observed ones. sdcMicro then mixes ``R_s = alpha R + (1 - alpha) I``
(still invariant), ``alpha = 0.5`` by default.

Randomized response (Warner 1965, "Randomized response: a survey technique for eliminating
evasive answer bias", JASA 60, 63-69) is PRAM of a binary attribute with
``P = [[p, 1-p], [1-p, p]]``; it satisfies ``epsilon``-local differential privacy with
``epsilon = ln(p / (1 - p))``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

import numpy as np
import pandas as pd
from pydantic import Field

from sdckit.core.encoding import as_text, is_numeric
from sdckit.core.spec import (
    Boolean,
    ColumnList,
    ColumnName,
    NonEmptyList,
    NonEmptyMapping,
    Number,
)
from sdckit.errors import DataError, ParameterError, preview
from sdckit.masking.base import MaskResult, accepts_series, check_columns
from sdckit.masking.spec import (
    LOCAL_AND_SPARK,
    MaskingMethod,
    Probability,
    Rng,
)
from sdckit.masking.stats import ColumnStats, PandasStats

_ROW_TOL = 1e-8


# --------------------------------------------------------------------------- encoding helpers


def _factorize(s: pd.Series) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Codes (``-1`` = missing), the category values and their canonical texts.

    A pandas ``category`` column keeps all its categories (as sdcMicro keeps all factor
    levels); other columns use their observed distinct values, sorted when comparable.
    """
    if isinstance(s.dtype, pd.CategoricalDtype):
        codes = s.cat.codes.to_numpy().astype(np.int64)
        uniques = np.asarray(s.cat.categories.to_numpy(), dtype=object)
    else:
        try:
            codes, uniq = pd.factorize(s, sort=True, use_na_sentinel=True)
        except TypeError:  # mixed, non-comparable values
            codes, uniq = pd.factorize(s, sort=False, use_na_sentinel=True)
        codes = np.asarray(codes, dtype=np.int64)
        uniques = np.asarray(uniq, dtype=object)
    if not len(uniques):
        return codes, uniques, np.array([], dtype=object)
    dtype = s.cat.categories.dtype if isinstance(s.dtype, pd.CategoricalDtype) else s.dtype
    texts = as_text(pd.Series(list(uniques), dtype=dtype))
    return codes, uniques, np.asarray(texts, dtype=object)


def _label_texts(labels: Sequence[Any]) -> np.ndarray:
    idx = pd.Index(list(labels))
    return np.asarray(as_text(pd.Series(idx.to_numpy(), dtype=idx.dtype)), dtype=object)


def _output_series(s: pd.Series, values: Sequence[Any], codes: np.ndarray) -> pd.Series:
    """A Series like ``s`` whose row ``i`` is ``values[codes[i]]`` (missing where ``-1``)."""
    missing = codes < 0
    safe = np.where(missing, 0, codes)
    if isinstance(s.dtype, pd.CategoricalDtype):
        cats = list(s.cat.categories) + [v for v in values if v not in set(s.cat.categories)]
        pos = {v: i for i, v in enumerate(cats)}
        remap = np.array([pos[v] for v in values], dtype=np.int64)
        out_codes = np.where(missing, -1, remap[safe] if len(values) else -1)
        cat = pd.Categorical.from_codes(out_codes, categories=cats, ordered=s.cat.ordered)
        return pd.Series(cat, index=s.index, name=s.name)
    vals = pd.Series(list(values), dtype=object)
    if len(values) and is_numeric(s):
        num = pd.to_numeric(vals, errors="coerce")
        if not num.isna().any():
            small = num.to_numpy(dtype=np.float64)
            if pd.api.types.is_integer_dtype(s.dtype) and np.all(small == np.round(small)):
                if not missing.any():
                    return pd.Series(small.astype(s.dtype)[safe], index=s.index, name=s.name)
                out = pd.array(small.astype(np.int64)[safe], dtype="Int64")
                out[missing] = pd.NA
                return pd.Series(out, index=s.index, name=s.name)
            arr = small[safe]
            arr[missing] = np.nan
            return pd.Series(arr, index=s.index, name=s.name)
    obj = vals.to_numpy(dtype=object)[safe] if len(values) else np.empty(len(codes), object)
    obj[missing] = None
    try:
        return pd.Series(obj, index=s.index, name=s.name, dtype=s.dtype)
    except (TypeError, ValueError):
        return pd.Series(obj, index=s.index, name=s.name)


# --------------------------------------------------------------------------- matrices


def invariant_matrix(P: np.ndarray, freq: np.ndarray, alpha: float = 1.0) -> np.ndarray:
    """The invariant PRAM matrix ``alpha * P Q + (1 - alpha) I`` (Gouweleeuw et al. 1998).

    ``Q[k, j] = P[j, k] f_j / sum_l f_l P[l, k]`` with ``f`` the category frequencies (any
    scale); ``f^T (P Q) = f^T``. A column ``k`` that no observed category can reach
    (``sum_l f_l P[l, k] = 0``) gets ``Q[k, k] = 1`` (it is never released anyway).
    """
    P = np.asarray(P, dtype=float)
    f = np.asarray(freq, dtype=float)
    reach = f @ P  # sum_l f_l P[l, k]
    Q = np.zeros_like(P)
    ok = reach > 0
    Q[ok] = (P[:, ok] * f[:, None]).T / reach[ok, None]
    Q[~ok, :] = 0.0
    Q[np.flatnonzero(~ok), np.flatnonzero(~ok)] = 1.0
    R = P @ Q
    return alpha * R + (1.0 - alpha) * np.eye(len(P))


def _default_matrix(
    L: int, p_diagonal: float, rng: np.random.Generator, random_diagonal: bool
) -> np.ndarray:
    """Diagonal ``p_diagonal`` (or ``U(p_diagonal, 1)`` draws, as sdcMicro), rest spread evenly."""
    if L == 1:
        return np.ones((1, 1))
    diag = rng.uniform(p_diagonal, 1.0, L) if random_diagonal else np.full(L, p_diagonal)
    P = np.repeat(((1.0 - diag) / (L - 1))[:, None], L, axis=1)
    P[np.arange(L), np.arange(L)] = diag
    return P


def _matrix_from_spec(spec: Any, column: str) -> tuple[np.ndarray, list[Any]]:
    """(P, labels) from a labelled matrix: DataFrame (index = true, columns = released) or a
    nested mapping ``{true: {released: prob}}``."""
    if isinstance(spec, Mapping):
        try:
            spec = pd.DataFrame({k: pd.Series(v) for k, v in spec.items()}).T
        except (TypeError, ValueError):
            raise DataError(
                f"pram: the transition matrix for column {column!r} must map each "
                "category to {released category: probability}"
            ) from None
        spec = spec.fillna(0.0)
    if not isinstance(spec, pd.DataFrame):
        raise DataError(
            f"pram: the transition matrix for column {column!r} must be a pandas DataFrame "
            "(index = true categories, columns = released categories) or a nested dict; an "
            "unlabelled array cannot be matched to the categories"
        )
    rows, cols = spec.index.tolist(), spec.columns.tolist()
    rt, ct = _label_texts(rows), _label_texts(cols)
    for what, t in (("row", rt), ("column", ct)):
        dup = pd.Index(t)[pd.Index(t).duplicated()]
        if len(dup):
            raise DataError(
                f"pram: the transition matrix for column {column!r} has duplicate "
                f"{what} label(s) {preview(dup)}; give every category once"
            )
    if set(rt) != set(ct):
        only_r = sorted(set(rt) - set(ct))
        only_c = sorted(set(ct) - set(rt))
        raise DataError(
            f"pram: the transition matrix for column {column!r} must be square with the same "
            f"categories as rows and columns; rows only: {preview(only_r)}; columns only: "
            f"{preview(only_c)}"
        )
    pos = {t: i for i, t in enumerate(ct)}
    try:
        vals = spec.to_numpy(dtype=float)
    except (TypeError, ValueError):
        raise DataError(
            f"pram: the transition matrix for column {column!r} has non-numeric "
            "entries; give probabilities"
        ) from None
    P = vals[:, [pos[t] for t in rt]]
    bad = ~np.isfinite(P) | (P < 0) | (P > 1)
    if bad.any():
        i, j = map(int, np.argwhere(bad)[0])
        raise DataError(
            f"pram: the transition matrix for column {column!r} has the entry "
            f"{float(P[i, j])!r} at row {rows[i]!r}, column {rows[j]!r}; "
            "probabilities must lie in [0, 1]"
        )
    sums = P.sum(axis=1)
    off = np.abs(sums - 1.0) > _ROW_TOL
    if off.any():
        i = int(np.flatnonzero(off)[0])
        raise DataError(
            f"pram: row {rows[i]!r} of the transition matrix for column {column!r} "
            f"sums to {sums[i]:.10g}, not 1; each row P[a, :] is the distribution of "
            "the released category given the true category a -- rescale the row"
        )
    return P, rows


def _check_prob(value: float, name: str, method: str, lo_open: bool = True) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ParameterError(f"{method}: {name}={value!r} is not a number") from None
    ok = (0.0 < v <= 1.0) if lo_open else (0.0 <= v <= 1.0)
    if not ok:
        rng = "(0, 1]" if lo_open else "[0, 1]"
        raise ParameterError(f"{method}: {name}={value!r} must lie in {rng}")
    return v


def _apply_matrix(codes: np.ndarray, P: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Draw released codes row by row of ``P``: one vectorized draw per true category.

    Records are grouped by category (stable counting sort); each group's uniforms are turned
    into categories through ``searchsorted`` on the cumulative row of ``P``.
    """
    L = P.shape[0]
    n = len(codes)
    small = codes.astype(np.int16 if L < 32767 else np.int64, copy=False)
    order = np.argsort(small, kind="stable")  # radix sort for int16
    counts = np.bincount(codes + 1, minlength=L + 1)  # slot 0: missing
    bounds = np.concatenate(([0], np.cumsum(counts)))
    u = rng.random(n - counts[0])
    out = np.full(n, -1, dtype=np.int64)
    cum = np.cumsum(P, axis=1)
    cum[:, -1] = 1.0
    off = counts[0]
    for a in range(L):  # loop over categories, not records
        lo, hi = bounds[a + 1], bounds[a + 2]
        if hi > lo:
            draw = np.searchsorted(cum[a], u[lo - off : hi - off], side="right")
            out[order[lo:hi]] = np.minimum(draw, L - 1)
    return out


@dataclass(frozen=True)
class PramPlan:
    """The transition matrix of one column and what it applies to (see :func:`pram_plan`).

    ``matrix[a, b]`` = Pr(released ``values[b]`` | true ``values[a]``); ``texts`` are the
    canonical texts of ``values`` (:func:`~sdckit.core.encoding.as_text`); ``counts`` the
    observed count of every category (row); ``remap[u]`` the row of the ``u``-th sorted
    distinct value of the data.
    """

    column: str
    matrix: np.ndarray
    values: list[Any]
    texts: np.ndarray
    construction: str
    counts: np.ndarray
    remap: np.ndarray

    def codes(self, s: pd.Series) -> np.ndarray:
        """Row of ``matrix`` of every value of ``s`` (``-1`` = missing), matched by canonical
        text; a value that is no category of the plan is a DataError naming it."""
        text = as_text(s)
        missing = s.isna().to_numpy()
        codes = pd.Index(self.texts).get_indexer(text).astype(np.int64)
        codes[missing] = -1
        unknown = (codes < 0) & ~missing
        if unknown.any():
            raise DataError(
                f"pram: column {self.column!r} has the value(s) "
                f"{preview(pd.unique(text[unknown]))} that are not among its categories"
            )
        return codes

    def record(self, released_counts: np.ndarray, n_changed: int) -> dict[str, Any]:
        """The published details of the column: categories, matrix, construction, counts."""
        return {
            "categories": [str(t) for t in self.texts],
            "matrix": self.matrix.tolist(),
            "construction": self.construction,
            "original_counts": self.counts.astype(int).tolist(),
            "released_counts": [int(v) for v in released_counts],
            "n_changed": int(n_changed),
        }


def _plan(
    column: str,
    uniques: np.ndarray,
    texts: np.ndarray,
    counts: np.ndarray,
    spec: Any,
    p_diag: float,
    invariant: bool,
    a: float,
    random_diagonal: bool,
    rng: np.random.Generator,
) -> PramPlan:
    """The plan of one column from its sorted distinct values, their texts and counts."""
    if spec is not None:
        P, labels = _matrix_from_spec(spec, column)
        lt = _label_texts(labels)
        where = {t: i for i, t in enumerate(lt)}
        missing = [u for u, t in zip(uniques, texts, strict=True) if t not in where]
        if missing:
            raise DataError(
                f"pram: the transition matrix for column {column!r} has no row for the "
                f"categor{'y' if len(missing) == 1 else 'ies'} {preview(missing)} found in "
                "the data; add a row and a column for each"
            )
        remap = np.array([where[t] for t in texts], dtype=np.int64)
        # output values: the data's own value where the category occurs, else the label
        own = {t: u for u, t in zip(uniques, texts, strict=True)}
        values = [own.get(t, lab) for t, lab in zip(lt, labels, strict=True)]
        construction = "given"
    else:
        P = _default_matrix(len(uniques), p_diag, rng, random_diagonal)
        lt, values = texts, list(uniques)
        remap = np.arange(len(uniques), dtype=np.int64)
        construction = (
            "diagonal ~ U(p_diagonal, 1), rest spread evenly"
            if random_diagonal
            else "diagonal p_diagonal, rest spread evenly"
        )
    L = len(values)
    freq = np.zeros(L)
    if len(remap):
        np.add.at(freq, remap, counts)
    if invariant and L:
        P = invariant_matrix(P, freq, a)
        construction += f"; invariant alpha*PQ + (1-alpha)*I with alpha={a}"
    return PramPlan(column, P, values, np.asarray(lt, dtype=object), construction, freq, remap)


def pram_plan(
    column: str,
    values: pd.Series,
    counts: Any = None,
    p_diagonal: float = 0.8,
    matrix: Any = None,
    invariant: bool = False,
    alpha: float = 0.5,
    random_diagonal: bool = False,
    seed: int | np.random.Generator | None = None,
) -> PramPlan:
    """The transition matrix :func:`pram` uses for one column, from its category counts.

    ``values`` are the column's values, or its distinct values with ``counts`` (how often each
    occurs; the Spark engine collects them with one group-by): the same plan either way.
    ``matrix`` is this column's given matrix (or None for the default construction); the other
    parameters are :func:`pram`'s. The random diagonal (``random_diagonal=True``) is drawn
    from ``seed``. Apply the plan with :func:`pram_release`.
    """
    p_diag = _check_prob(p_diagonal, "p_diagonal", "pram")
    a = _check_prob(alpha, "alpha", "pram", lo_open=False)
    codes, uniques, texts = _factorize(values)
    w = np.ones(len(codes)) if counts is None else np.asarray(counts, dtype=float)
    ok = codes >= 0
    freq = np.bincount(codes[ok], weights=w[ok], minlength=len(uniques))
    return _plan(
        column,
        uniques,
        texts,
        freq,
        matrix,
        p_diag,
        invariant,
        a,
        random_diagonal,
        np.random.default_rng(seed),
    )


def pram_release(codes: np.ndarray, plan: PramPlan, rng: np.random.Generator) -> np.ndarray:
    """Released rows of ``plan.matrix`` for true rows ``codes`` (``-1`` = missing stays
    missing): one uniform draw per non-missing record, grouped by category."""
    return _apply_matrix(codes, plan.matrix, rng) if len(plan.values) else codes


def column_matrices(matrix: Any, columns: Sequence[str]) -> dict[str, Any]:
    """:func:`pram`'s ``matrix`` per column: a dict ``{column: matrix}`` whose keys are all
    masked columns is taken as such; any other matrix applies to every column; None gives
    ``{}`` (every column gets the default construction)."""
    if matrix is None:
        return {}
    if (
        isinstance(matrix, Mapping)
        and matrix
        and all(k in columns for k in matrix)
        and all(isinstance(v, (pd.DataFrame, Mapping)) for v in matrix.values())
    ):
        return dict(matrix)
    return {c: matrix for c in columns}


# --------------------------------------------------------------------------- public API


@accepts_series
def pram(
    data: pd.DataFrame,
    columns: Sequence[str] | str | None,
    p_diagonal: float = 0.8,
    matrix: Any = None,
    invariant: bool = False,
    alpha: float = 0.5,
    random_diagonal: bool = False,
    seed: int | np.random.Generator | None = None,
    *,
    plans: Mapping[str, PramPlan] | None = None,
) -> MaskResult:
    """Post-randomize categorical columns (Gouweleeuw et al. 1998; sdcMicro ``pram``).

    Per column the transition matrix ``P`` (``P[a, b]`` = Pr(released ``b`` | true ``a``)) is

    * ``matrix``: a DataFrame (index = true categories, columns = released categories, same
      labels) or nested dict ``{a: {b: prob}}``; or a dict ``{column: such a matrix}`` (columns
      not in it use the construction below). Rows must sum to 1; every category of the data
      must be a row (extra categories are allowed).
    * otherwise built with ``p_diagonal`` on the diagonal and ``(1 - p_diagonal) / (L - 1)``
      elsewhere. With ``random_diagonal=True`` the diagonal entries are drawn from
      ``U(p_diagonal, 1)`` as sdcMicro does (its ``pd`` argument is this minimum diagonal).

    With ``invariant=True`` the matrix actually used is the invariant
    ``alpha * P Q + (1 - alpha) I`` of :func:`invariant_matrix` (sdcMicro's construction, its
    ``alpha`` defaults to 0.5), built from the observed frequencies: the expected released
    frequencies equal the observed ones. Missing values are not post-randomized (as sdcMicro).
    The matrices used are published in ``details`` (with the category labels) so that users can
    correct their estimates with :func:`pram_estimate`.

    ``plans`` (one :func:`pram_plan` per column, built from the category counts of the whole
    data) replace the matrices built from ``data``: the Spark engine post-randomizes one block
    of rows at a time with the matrices of all rows; a value outside a plan's categories is a
    DataError.
    """
    cols = check_columns(data, columns)
    p_diag = _check_prob(p_diagonal, "p_diagonal", "pram")
    a = _check_prob(alpha, "alpha", "pram", lo_open=False)
    rng = np.random.default_rng(seed)
    per_column = column_matrices(matrix, cols)
    out = data.copy()
    details: dict[str, Any] = {}
    for c in cols:
        s = data[c]
        if plans is not None:  # the plan of the whole data (the Spark engine masks a block)
            plan = plans[c]
            codes = plan.codes(s)
        else:
            codes, uniques, texts = _factorize(s)
            counts = np.bincount(codes[codes >= 0], minlength=len(uniques)).astype(float)
            plan = _plan(
                c,
                uniques,
                texts,
                counts,
                per_column.get(c),
                p_diag,
                invariant,
                a,
                random_diagonal,
                rng,
            )
            if len(plan.remap):
                codes = np.where(codes < 0, -1, plan.remap[np.maximum(codes, 0)])
        released = pram_release(codes, plan, rng)
        out[c] = _output_series(s, plan.values, released)
        details[c] = plan.record(
            np.bincount(released[released >= 0], minlength=len(plan.values)),
            int(np.sum((released != codes) & (codes >= 0))),
        )
    params = pram_parameters(cols, p_diag, invariant, a, random_diagonal, per_column)
    return MaskResult(out, "pram", params, details)


def pram_parameters(
    columns: list[str],
    p_diagonal: float,
    invariant: bool,
    alpha: float,
    random_diagonal: bool,
    per_column: Mapping[str, Any],
) -> dict[str, Any]:
    """The published parameters of :func:`pram` (either engine)."""
    return {
        "columns": columns,
        "p_diagonal": p_diagonal,
        "invariant": bool(invariant),
        "alpha": alpha,
        "random_diagonal": bool(random_diagonal),
        "matrix_given": sorted(per_column),
    }


@dataclass(frozen=True)
class PramPlans:
    """PRAM of several columns (:func:`pram_plans`): one :class:`PramPlan` per column and the
    published parameters."""

    columns: list[str]
    plans: dict[str, PramPlan]
    parameters: dict[str, Any]
    random: ClassVar[bool] = True

    def release(self, data: pd.DataFrame, rng: np.random.Generator | None) -> MaskResult:
        """:func:`pram` of ``data`` (all records or one block) by the plans."""
        p = self.parameters
        return pram(
            data,
            self.columns,
            p["p_diagonal"],
            None,
            p["invariant"],
            p["alpha"],
            p["random_diagonal"],
            seed=rng,
            plans=self.plans,
        )

    def out_kinds(self, kinds: dict[str, str]) -> dict[str, str]:
        """The columns keep their kinds."""
        return {c: kinds[c] for c in self.columns}

    def records(self, released: ColumnStats, changed: Sequence[int]) -> list[dict[str, Any]]:
        """The record: every column's matrix with the released counts of its categories."""
        details = {}
        for c, n_changed in zip(self.columns, changed, strict=True):
            plan = self.plans[c]
            counts = released.text_counts(c)
            details[c] = plan.record(np.array([counts.get(t, 0) for t in plan.texts]), n_changed)
        return [MaskResult(pd.DataFrame(), "pram", self.parameters, details).record()]


def pram_plans(
    stats: ColumnStats,
    columns: Sequence[str] | str | None,
    p_diagonal: float = 0.8,
    matrix: Any = None,
    invariant: bool = False,
    alpha: float = 0.5,
    random_diagonal: bool = False,
    seed: int | np.random.Generator | None = None,
) -> PramPlans:
    """The plans of :func:`pram` for every column from its category counts
    (:meth:`ColumnStats.value_counts`). The random diagonals (``random_diagonal=True``) are
    drawn here, once, from ``seed`` in column order: the Spark engine draws them on the
    driver and releases the plans block by block."""
    cols = stats.check_columns(columns)
    p_diag = _check_prob(p_diagonal, "p_diagonal", "pram")
    a = _check_prob(alpha, "alpha", "pram", lo_open=False)
    per_column = column_matrices(matrix, cols)
    rng = np.random.default_rng(seed)
    plans = {}
    for c in cols:  # in column order, as the local method draws its diagonals
        values, counts = stats.value_counts(c)
        plans[c] = pram_plan(
            c, values, counts, p_diag, per_column.get(c), invariant, a, random_diagonal, rng
        )
    params = pram_parameters(cols, p_diag, invariant, a, random_diagonal, per_column)
    return PramPlans(cols, plans, params)


def pram_estimate(released_counts: Any, P: Any) -> Any:
    """Unbiased estimate of the true category counts from released counts: ``P^{-T} t``.

    Gouweleeuw et al. (1998), eq. (2.2): ``E[T_released | T] = P^T T`` so
    ``T_hat = (P^T)^{-1} T_released``. ``P`` is an array (rows = true categories) or a labelled
    DataFrame; ``released_counts`` an array in the same category order, or a Series/dict keyed
    by category (aligned to ``P``'s labels; absent categories count 0). Returns an array, or a
    Series indexed by ``P``'s labels when ``P`` is labelled. The estimate may be negative.
    """
    labels = None
    if isinstance(P, pd.DataFrame):
        Pm, labels = _matrix_from_spec(P, "pram_estimate")
    else:
        Pm = np.asarray(P, dtype=float)
        if Pm.ndim != 2 or Pm.shape[0] != Pm.shape[1]:
            raise ParameterError(f"pram_estimate: P must be a square matrix, got shape {Pm.shape}")
    L = Pm.shape[0]
    if isinstance(released_counts, (Mapping, pd.Series)):
        if labels is None:
            raise DataError(
                "pram_estimate: released counts keyed by category need a labelled "
                "P (a DataFrame) to align them; or pass both as plain arrays"
            )
        rc = pd.Series(released_counts)
        rt = _label_texts(list(rc.index))
        lt = list(_label_texts(labels))
        unknown = [k for k, t in zip(rc.index, rt, strict=True) if t not in set(lt)]
        if unknown:
            raise DataError(
                f"pram_estimate: categor{'y' if len(unknown) == 1 else 'ies'} "
                f"{preview(unknown)} of the released counts are not in P"
            )
        t = np.zeros(L)
        pos = {x: i for i, x in enumerate(lt)}
        for k, x in zip(rc.to_numpy(dtype=float), rt, strict=True):
            t[pos[x]] += k
    else:
        t = np.asarray(released_counts, dtype=float)
        if t.shape != (L,):
            raise DataError(
                f"pram_estimate: {len(np.atleast_1d(t))} released counts for a "
                f"{L} x {L} matrix; give one count per category"
            )
    if L == 0 or np.linalg.cond(Pm) > 1e12:
        raise DataError(
            "pram_estimate: the transition matrix is singular (e.g. a diagonal of "
            "1/L makes all rows equal), so the true counts cannot be recovered; "
            "use a matrix with a larger diagonal"
        )
    est = np.linalg.solve(Pm.T, t)
    return pd.Series(est, index=pd.Index(labels)) if labels is not None else est


def rr_estimate(m: float, n: float, p: float) -> float:
    """Warner's (1965) unbiased estimate of the true proportion: ``(m/n - (1-p)) / (2p - 1)``.

    ``m`` released "positive" answers out of ``n``, each kept with probability ``p`` and
    flipped otherwise (``p != 1/2``).
    """
    try:
        m_, n_, p_ = float(m), float(n), float(p)
    except (TypeError, ValueError):
        raise ParameterError("rr_estimate: m, n and p must be numbers") from None
    if not n_ > 0:
        raise ParameterError(f"rr_estimate: n={n!r} must be > 0")
    if not 0 <= m_ <= n_:
        raise ParameterError(f"rr_estimate: m={m!r} must lie in [0, n={n!r}]")
    if not 0 <= p_ <= 1 or p_ == 0.5:
        raise ParameterError(
            f"rr_estimate: p={p!r} must lie in [0, 1] and differ from 0.5 (with "
            "p = 0.5 the answers carry no information)"
        )
    return (m_ / n_ - (1.0 - p_)) / (2.0 * p_ - 1.0)


@accepts_series
def randomized_response(
    data: pd.DataFrame,
    column: str,
    p: float = 0.75,
    categories: Sequence[Any] | None = None,
    seed: int | np.random.Generator | None = None,
    insecure_reproducible_noise: bool = False,
) -> MaskResult:
    """Warner's randomized response on a binary column: keep each value with probability ``p``,
    otherwise replace it by the other category.

    ``categories = (negative, positive)`` names the two categories (needed when the data show
    only one); by default the two observed values in sorted order, the second being
    "positive". ``details`` give ``epsilon = ln(p / (1 - p))`` (local differential privacy,
    ``None`` for ``p = 1``: no protection), the released positive count ``m`` and the unbiased
    estimate :func:`rr_estimate` of the true positive proportion. Missing values stay missing.

    The flips are privacy noise, so they come from the operating system's CSPRNG whatever
    ``seed`` is (:func:`sdckit.dp.randomness.noise_source`): a job file holding the seed would
    otherwise let anyone regenerate the flips and undo them, voiding the epsilon-LDP claim
    (Warner 1965; Dwork & Roth 2014, sec. 3.2). Only ``insecure_reproducible_noise=True``
    (tests) draws them from ``seed``; ``details`` then carry ``randomness`` =
    :data:`~sdckit.dp.randomness.INSECURE_KIND` and ``privacy`` =
    :data:`~sdckit.dp.randomness.NOT_PRIVATE`.
    """
    plan = rr_plan(PandasStats(data), column, p, categories, insecure_reproducible_noise)
    return rr_release(data, plan, seed)


@dataclass(frozen=True)
class RrPlan:
    """Randomized response on one column (:func:`rr_plan`): the keep probability, the two
    categories (negative, positive) and their canonical texts."""

    column: str
    p: float
    categories: list[Any]
    texts: list[str]
    insecure: bool = False
    random: ClassVar[bool] = True

    @property
    def columns(self) -> list[str]:
        """The masked column."""
        return [self.column]

    def release(self, data: pd.DataFrame, rng: np.random.Generator | None) -> MaskResult:
        """:func:`rr_release`."""
        return rr_release(data, self, rng)

    def out_kinds(self, kinds: dict[str, str]) -> dict[str, str]:
        """The column keeps its kind."""
        return {self.column: kinds[self.column]}

    def records(self, released: ColumnStats, changed: Sequence[int]) -> list[dict[str, Any]]:
        """The record from the released counts (Warner's estimate included)."""
        counts = released.text_counts(self.column)
        n = sum(counts.values())
        return [self.result(None, n, counts.get(self.texts[1], 0), changed[0]).record()]

    def result(self, data: Any, n: int, m: int, n_changed: int) -> MaskResult:
        """The :class:`MaskResult` of a release: ``n`` answers, ``m`` of them positive."""
        from sdckit.dp.randomness import INSECURE_KIND, NOT_PRIVATE, noise_source

        pv = self.p
        kind = noise_source(0, insecure_reproducible_noise=self.insecure).kind
        eps = None if pv == 1.0 else float(np.log(pv / (1.0 - pv)))
        details = {
            "categories": list(self.texts),
            "positive": self.texts[1],
            "epsilon": eps,
            "n": n,
            "released_positive": m,
            "estimated_positive_proportion": rr_estimate(m, n, pv) if n else None,
            "n_changed": int(n_changed),
            "randomness": kind,
        }
        if kind == INSECURE_KIND:
            details["privacy"] = NOT_PRIVATE
        params: dict[str, Any] = {"column": self.column, "p": pv, "categories": list(self.texts)}
        if self.insecure:
            params["insecure_reproducible_noise"] = True
        return MaskResult(data, "randomized_response", params, details)


#: how many values of a column a message of randomized response names
_SHOWN = 5
_FROM_TEXT: dict[str, Callable[[str], Any]] = {
    "long": int,
    "double": float,
    "boolean": lambda t: t == "True",
    "string": str,
}


def _values_outside(
    stats: ColumnStats, column: str, allowed: Sequence[str]
) -> tuple[int, list[Any]]:
    """How many distinct values of ``column`` have a canonical text outside ``allowed``, and
    the first :data:`_SHOWN` of them (order of first appearance) read back from their text
    by the column's kind: :meth:`ColumnStats.values_outside`, bounded whatever the column
    holds (a column of many values is refused without all its values reaching the Spark
    driver)."""
    count, texts = stats.values_outside(column, set(allowed), _SHOWN)
    parse = _FROM_TEXT[stats.kind(column)]
    return count, [parse(t) for t in texts]


def rr_plan(
    stats: ColumnStats,
    column: str,
    p: float = 0.75,
    categories: Sequence[Any] | None = None,
    insecure_reproducible_noise: bool = False,
) -> RrPlan:
    """The plan of :func:`randomized_response`: ``p`` checked, the two categories (given, or
    the column's two values in sorted order) and every value checked to be one of them."""
    (col,) = stats.check_columns([column])
    try:
        pv = float(p)
    except (TypeError, ValueError):
        raise ParameterError(f"randomized_response: p={p!r} is not a number") from None
    if not 0.5 < pv <= 1.0:
        raise ParameterError(
            f"randomized_response: p={p!r} must lie in (0.5, 1]: the probability "
            "of keeping the true value (p <= 0.5 carries no or inverted information)"
        )
    if categories is None:
        n_present, present = _values_outside(stats, col, ())
        if n_present <= 2 or stats.has_categories(col):  # as held, bounded: a recoded
            values, counts = stats.value_counts(col)  # column lists its categories in order
            present = [v for v, k in zip(values.tolist(), counts, strict=True) if k > 0]
        if n_present != 2:
            raise DataError(
                f"randomized_response: column {col!r} must have exactly two categories, found "
                f"{n_present} ({preview(present, total=n_present)}); pass "
                "categories=(negative, positive)"
                if n_present < 2
                else f"randomized_response: column {col!r} is not binary: it has {n_present} "
                f"categories ({preview(present, total=n_present)}); recode it to two "
                "categories or use pram"
            )
        try:
            cats = sorted(present)
        except TypeError:
            cats = present
    else:
        cats = list(categories)
        if len(cats) != 2:
            raise DataError("randomized_response: categories must be (negative, positive)")
    ct = _label_texts(cats)
    if categories is not None:
        n_bad, bad = _values_outside(stats, col, [str(t) for t in ct])
        if n_bad:
            raise DataError(
                f"randomized_response: column {col!r} has value(s) "
                f"{preview(bad, total=n_bad)} outside categories {cats!r}"
            )
    return RrPlan(col, pv, cats, [str(x) for x in ct], bool(insecure_reproducible_noise))


def rr_release(
    data: pd.DataFrame, plan: RrPlan, seed: int | np.random.Generator | None
) -> MaskResult:
    """Randomized response on ``data`` (all records or one block) by the plan: the flips
    from the noise source (the OS CSPRNG, or ``seed`` under the insecure switch)."""
    from sdckit.dp.randomness import noise_source

    col, pv, cats = plan.column, plan.p, plan.categories
    rnd = noise_source(seed, insecure_reproducible_noise=plan.insecure)
    # pram draws from a numpy Generator: seed one with 124 bits from the noise source (the OS
    # CSPRNG, or the job's seed under the insecure switch)
    words = rnd.bits62(2)
    flips = np.random.default_rng([int(words[0]), int(words[1])])
    P = pd.DataFrame([[pv, 1 - pv], [1 - pv, pv]], index=cats, columns=cats)
    res = pram(data, [col], matrix={col: P}, seed=flips)
    released = as_text(res.data[col])
    n = int(data[col].notna().sum())
    m = int(np.sum(released == plan.texts[1]))
    return plan.result(res.data, n, m, res.details[col]["n_changed"])


# -- the method as a job-file step -----------------------------------------------------------------
class Pram(MaskingMethod):
    """Post-randomization of categorical columns (:func:`sdckit.masking.randomization.pram`).

    Parameters
    ----------
    columns : list of str
        The categorical columns.
    p_diagonal : float, default 0.8
        Probability of keeping a category, in (0, 1] (when no ``matrix`` is given).
    matrix : mapping, optional
        Per column, the transition matrix ``{from: {to: probability}}``.
    invariant : bool, default False
        Make the matrix invariant (expected released frequencies = observed ones).
    alpha : float, default 0.5
        Mixing weight of the invariant matrix with the identity, in [0, 1].
    random_diagonal : bool, default False
        Draw each category's keep probability in [p_diagonal, 1] (sdcMicro's construction).

    References
    ----------
    Gouweleeuw, J. M., Kooiman, P., Willenborg, L. C. R. J. & de Wolf, P.-P. (1998). Post
    randomisation for statistical disclosure control: theory and implementation. Journal of
    Official Statistics 14(4), 463-478.
    """

    spec_name: ClassVar[str] = "pram"
    engines: ClassVar[frozenset[str]] = LOCAL_AND_SPARK
    must_change: ClassVar[bool] = True

    columns: ColumnList
    p_diagonal: Annotated[Number, Field(gt=0, le=1)] = 0.8
    matrix: NonEmptyMapping | None = None
    invariant: Boolean = False
    alpha: Probability = 0.5
    random_diagonal: Boolean = False

    def plan(self, stats: ColumnStats, seed: int | None = None) -> PramPlans:
        """:func:`pram_plans` (random diagonals from ``seed``)."""
        return pram_plans(
            stats,
            self.columns,
            self.p_diagonal,
            self.matrix,
            self.invariant,
            self.alpha,
            self.random_diagonal,
            seed=seed,
        )

    def apply(self, data: pd.DataFrame, rng: Rng = None) -> list[MaskResult]:
        """Randomize (see :meth:`MaskingMethod.apply`)."""
        return [
            pram(
                data,
                self.columns,
                p_diagonal=self.p_diagonal,
                matrix=self.matrix,
                invariant=self.invariant,
                alpha=self.alpha,
                random_diagonal=self.random_diagonal,
                seed=rng,
            )
        ]


class RandomizedResponse(MaskingMethod):
    """Randomized response on one binary column
    (:func:`sdckit.masking.randomization.randomized_response`).

    Parameters
    ----------
    column : str
        The column (two categories).
    p : float, default 0.75
        Probability of releasing the true category, in (0.5, 1].
    categories : list, optional
        The two categories (default: those of the column).
    insecure_reproducible_noise : bool, default False
        Draw the flips from the job's ``seed`` (tests only; the result says NOT PRIVATE). By
        default they come from the OS CSPRNG whatever ``seed`` is: the seed is in the job
        file, and whoever holds it could regenerate the flips and undo them.

    References
    ----------
    Warner, S. L. (1965). Randomized response: a survey technique for eliminating evasive
    answer bias. JASA 60, 63-69.
    """

    spec_name: ClassVar[str] = "randomized_response"
    engines: ClassVar[frozenset[str]] = LOCAL_AND_SPARK
    must_change: ClassVar[bool] = True

    column: ColumnName
    p: Annotated[Number, Field(gt=0.5, le=1)] = 0.75
    categories: NonEmptyList | None = None
    insecure_reproducible_noise: bool = False

    def plan(self, stats: ColumnStats, seed: int | None = None) -> RrPlan:
        """:func:`rr_plan`."""
        return rr_plan(
            stats, self.column, self.p, self.categories, self.insecure_reproducible_noise
        )

    def apply(self, data: pd.DataFrame, rng: Rng = None) -> list[MaskResult]:
        """Randomize (see :meth:`MaskingMethod.apply`)."""
        return [
            randomized_response(
                data,
                self.column,
                self.p,
                self.categories,
                seed=rng,
                insecure_reproducible_noise=self.insecure_reproducible_noise,
            )
        ]
