"""Local suppression to reach k-anonymity on categorical keys (sdcMicro ``localSuppression``).

Convention for missing values (sdcMicro's ``freqCalc`` with ``alpha = 1`` and
``cpp_calcSuppInds``): a missing key value matches *any* value, so the frequency ``f_k`` of a
record is the number of records that agree with it on every key where both are non-missing.
Suppressing a value (setting it to missing) can therefore only raise frequencies.

Algorithm (Templ, Kowarik & Meindl 2015, "Statistical disclosure control for micro-data using
the R package sdcMicro", JSS 67(4), sec. 4.2; sdcMicro R/localSuppression.R):

1. Combinations occurring more than ``k`` times are reduced to ``k`` copies (they are safe and
   ``f_k >= k`` decisions of the other records do not change).
2. Repeat until every record has ``f_k >= k``: visit the records with ``f_k < k`` by
   increasing ``f_k`` (decreasing risk); for each, find the records at the smallest positive
   distance (number of keys where both are non-missing and differ) and suppress, in the
   record, the least important key on which it differs from one of them (or, failing that,
   its least important non-missing key).

One deliberate difference: a record whose frequency has already reached ``k`` through the
suppressions made earlier in the same pass is skipped (sdcMicro suppresses it anyway), so
fewer values are suppressed. On sdcMicro's ``francdat`` example (keys Key2, Key3, Key4,
``k = 2``) this gives 2 suppressions where a hand trace of sdcMicro's pass-without-recheck
gives 4.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from sdckit.core.encoding import encode
from sdckit.core.frequency import group_keys
from sdckit.core.frequency import wildcard_frequencies as wildcard_counts
from sdckit.core.spec import (
    ColumnList,
)
from sdckit.errors import DataError, ParameterError, VerificationError
from sdckit.masking.base import MaskResult, accepts_series, check_columns
from sdckit.masking.spec import (
    LOCAL_AND_SPARK,
    Count,
    MaskingMethod,
    Rng,
)
from sdckit.masking.stats import ColumnStats, PandasStats


def _row_groups(codes: np.ndarray) -> tuple[np.ndarray, int, np.ndarray]:
    """Dense ids of the distinct rows of ``codes`` (missing ``-1`` is a value of its own):
    the frequency engine's :func:`~sdckit.core.frequency.group_keys` on the shifted codes."""
    cols = [codes[:, j] + 1 for j in range(codes.shape[1])]
    return group_keys(cols)


def _fk_codes(codes: np.ndarray) -> np.ndarray:
    """Frequencies ``f_k`` of every row when missing (code ``-1``) matches any value.

    Rows are first collapsed to distinct combinations with counts; the wildcard matching is
    :func:`sdckit.core.frequency.wildcard_frequencies` (the frequency engine's, shared with
    risk analysis).
    """
    n, m = codes.shape
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    inv, n_groups, first = _row_groups(codes)
    cnt = np.bincount(inv, minlength=n_groups)
    u = codes[first]  # distinct combinations
    na = u < 0
    if not na.any():
        return cnt[inv].astype(np.int64)
    fk, _ = wildcard_counts(np.where(na, 0, u), cnt, na)
    return fk[inv]


def _anonymize(codes: np.ndarray, k: int, col_order: np.ndarray) -> tuple[np.ndarray, int]:
    """Suppress values in ``codes`` (copy returned) until every row has ``f_k >= k``."""
    # the numba kernel, imported here: loading the masking methods does not start numba
    from sdckit.masking._suppression_kernel import suppress_pass

    n = codes.shape[0]
    out = codes.copy()
    full = _row_groups(out)[0]
    order = np.argsort(full, kind="stable")
    sizes = np.bincount(full)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n) - starts[full[order]]
    work_rows = np.flatnonzero(rank < k)  # at most k copies of every combination
    work = np.ascontiguousarray(out[work_rows])
    passes = 0
    while True:
        fk = _fk_codes(work)
        problems = np.flatnonzero(fk < k)
        if not len(problems):
            break
        problems = problems[np.argsort(fk[problems], kind="stable")]
        passes += 1
        if suppress_pass(work, problems.astype(np.int64), col_order, k) == 0:
            raise VerificationError("local_suppression made no progress; this is a bug")
    out[work_rows] = work
    return out, passes


def wildcard_frequencies(data: pd.DataFrame, quasi_identifiers: Sequence[str] | str) -> np.ndarray:
    """``f_k`` of every record on the ``quasi_identifiers`` when a missing value matches any
    value (sdcMicro)."""
    cols = check_columns(data, quasi_identifiers)
    return _fk_codes(_key_codes(data, cols))


def class_frequencies(
    classes: pd.DataFrame, counts: Sequence[int] | np.ndarray, quasi_identifiers: Sequence[str]
) -> np.ndarray:
    """``f_k`` of every class of a frequency set when a missing value matches any value.

    ``classes`` holds combinations of the ``quasi_identifiers`` (missing values allowed) and
    ``counts`` how many records have each: the same ``f_k`` as :func:`wildcard_frequencies`
    gives the records of a class, computed without the records (the Spark engine checks its
    local suppression on the group-by of the keys).
    """
    cols = check_columns(classes, quasi_identifiers)
    codes = _key_codes(classes, cols)
    cnt = np.asarray(counts, dtype=np.int64)
    if not len(codes):
        return np.zeros(0, dtype=np.int64)
    inv, n_groups, first = _row_groups(codes)
    total = np.bincount(inv, weights=cnt, minlength=n_groups).astype(np.int64)
    u = codes[first]
    na = u < 0
    if not na.any():
        return total[inv]
    fk, _ = wildcard_counts(np.where(na, 0, u), total, na)
    return np.asarray(fk, dtype=np.int64)[inv]


def _key_codes(data: pd.DataFrame, cols: Sequence[str]) -> np.ndarray:
    codes = np.empty((len(data), len(cols)), dtype=np.int64)
    for j, c in enumerate(cols):
        cj = encode(data[c], c).codes.astype(np.int64)
        cj[data[c].isna().to_numpy()] = -1
        codes[:, j] = cj
    return codes


def _importance(data: pd.DataFrame, keys: list[str], importance: Any) -> list[int]:
    m = len(keys)
    if importance is None:
        # sdcMicro: keys with more categories are less important (suppressed first)
        ncat = [int(data[c].nunique(dropna=True)) for c in keys]
        order = sorted(range(m), key=lambda j: (ncat[j], j))
        imp = [0] * m
        for rank, j in enumerate(order, start=1):
            imp[j] = rank
        return imp
    if isinstance(importance, Mapping):
        unknown = [k for k in importance if k not in keys]
        absent = [k for k in keys if k not in importance]
        if unknown or absent:
            raise DataError(
                f"local_suppression: importance must rank every key exactly: "
                f"unknown {unknown!r}, missing {absent!r}"
            )
        imp = [importance[c] for c in keys]
    else:
        imp = list(importance)
        if len(imp) != m:
            raise ParameterError(
                f"local_suppression: importance has {len(imp)} entries for {m} keys; "
                "give one rank per key (1 = most important)"
            )
    for c, v in zip(keys, imp, strict=True):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or not 1 <= v <= m:
            raise ParameterError(
                f"local_suppression: importance of key {c!r} is {v!r}; use integers "
                f"from 1 (most important, suppressed last) to {m}"
            )
    return [int(v) for v in imp]


@accepts_series
def local_suppression(
    data: pd.DataFrame,
    quasi_identifiers: Sequence[str] | str,
    k: int = 3,
    importance: Sequence[int] | Mapping[str, int] | None = None,
    combinations_up_to: int | None = None,
) -> MaskResult:
    """Suppress key values (set them missing) until the data are k-anonymous on the
    ``quasi_identifiers`` (sdcMicro's key variables; "keys" below).

    Missing values match any value (sdcMicro's convention; see the module docstring for the
    algorithm). ``importance`` ranks the keys, 1 = most important (suppressed last) up to
    ``len(keys)``, as a list aligned with ``keys`` or a dict; by default keys with more
    categories are less important (sdcMicro). With ``combinations_up_to=m`` k-anonymity is
    reached for every subset of ``m`` keys (sdcMicro's ``combs``), which implies it for every
    subset of at most ``m`` keys, since a missing value only adds matches. The result is
    re-checked independently. ``details`` give the number of suppressions per key.
    """
    plan = suppression_plan(PandasStats(data), quasi_identifiers, k, importance, combinations_up_to)
    return suppression_release(data, plan)


@dataclass(frozen=True)
class SuppressionPlan:
    """The suppressions of :func:`local_suppression` (:func:`suppression_plan`): the rows
    (record numbers) where a key value is suppressed, which keys (``flags``, one row per
    record), and the published parameters and details. ``row_column`` names the column
    holding the record numbers in a block of records (None: the row positions)."""

    columns: list[str]
    k: int
    rows: np.ndarray
    flags: np.ndarray
    parameters: dict[str, Any]
    details: dict[str, Any]
    row_column: str | None = None
    random: ClassVar[bool] = False

    def release(self, data: pd.DataFrame, rng: np.random.Generator | None) -> MaskResult:
        """:func:`suppression_release`."""
        return suppression_release(data, self)

    def out_kinds(self, kinds: dict[str, str]) -> dict[str, str]:
        """The keys keep their kinds (a suppressed value is missing)."""
        return {c: kinds[c] for c in self.columns}

    def records(self, released: ColumnStats, changed: Sequence[int]) -> list[dict[str, Any]]:
        """The record, after an independent check of k-anonymity on the released class
        counts (VerificationError otherwise)."""
        for sub in self.details["subsets"]:
            classes, counts = released.class_counts(sub)
            fk = class_frequencies(classes, counts, sub)
            if len(fk) and fk.min() < self.k:
                raise VerificationError(
                    f"local_suppression: the result is not {self.k}-anonymous on {sub}; "
                    "this is a bug"
                )
        return [
            MaskResult(pd.DataFrame(), "local_suppression", self.parameters, self.details).record()
        ]


def suppression_plan(
    stats: ColumnStats,
    quasi_identifiers: Sequence[str] | str,
    k: int = 3,
    importance: Sequence[int] | Mapping[str, int] | None = None,
    combinations_up_to: int | None = None,
) -> SuppressionPlan:
    """The plan of :func:`local_suppression`: the parameters checked, then the algorithm run
    on the key table of :meth:`~sdckit.masking.stats.ColumnStats.key_table` (every record,
    or the records a suppression can touch plus ``k`` copies of every other combination:
    the same decisions, see the module docstring)."""
    cols = stats.check_columns(quasi_identifiers)
    if len(set(cols)) != len(cols):
        raise ParameterError("local_suppression: a key is listed twice")
    n, m = stats.n, len(cols)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ParameterError(f"local_suppression: k={k!r} must be a positive integer, e.g. k=3")
    if k > n:
        raise DataError(
            f"local_suppression: k={k} exceeds the {n} records; no suppression can "
            "make a record indistinguishable from more records than exist"
        )
    if combinations_up_to is not None:
        if (
            isinstance(combinations_up_to, bool)
            or not isinstance(combinations_up_to, (int, np.integer))
            or not 1 <= combinations_up_to <= m
        ):
            raise ParameterError(
                f"local_suppression: combinations_up_to={combinations_up_to!r} must "
                f"be an integer from 1 to the number of keys ({m})"
            )
    table, rows = stats.key_table(cols, int(k))
    imp = _importance(table, cols, importance)
    codes = _key_codes(table, cols)
    before = codes < 0
    subsets = (
        [tuple(range(m))]
        if combinations_up_to is None
        else list(combinations(range(m), int(combinations_up_to)))
    )
    passes = 0
    for sub in subsets:
        sub_imp = [imp[j] for j in sub]
        # least important first; ties in key order (sdcMicro's order(n + 1 - importance))
        order = np.array(sorted(range(len(sub)), key=lambda t: (-sub_imp[t], t)), dtype=np.int64)
        part, p = _anonymize(np.ascontiguousarray(codes[:, list(sub)]), int(k), order)
        codes[:, list(sub)] = part
        passes += p
    for sub in subsets:  # independent re-check
        fk = _fk_codes(np.ascontiguousarray(codes[:, list(sub)]))
        if len(fk) and fk.min() < k:
            raise VerificationError(
                f"local_suppression: the result is not {k}-anonymous on "
                f"{[cols[j] for j in sub]}; this is a bug"
            )
    suppressed = (codes < 0) & ~before
    missing = stats.missing(cols)
    details = {
        "suppressions": {c: int(suppressed[:, j].sum()) for j, c in enumerate(cols)},
        "total_suppressions": int(suppressed.sum()),
        "missing_before": missing,
        "importance": dict(zip(cols, imp, strict=True)),
        "passes": passes,
        "subsets": [[cols[j] for j in sub] for sub in subsets],
    }
    params = {
        "quasi_identifiers": cols,
        "k": int(k),
        "importance": dict(zip(cols, imp, strict=True)),
        "combinations_up_to": combinations_up_to,
    }
    hit = suppressed.any(axis=1) & (rows >= 0)
    return SuppressionPlan(
        cols, int(k), rows[hit], suppressed[hit], params, details, stats.row_column
    )


def suppression_release(data: pd.DataFrame, plan: SuppressionPlan) -> MaskResult:
    """Suppress the plan's key values in ``data`` (all records or one block; records found by
    their number)."""
    cols = plan.columns
    if plan.row_column is not None and plan.row_column in data.columns:
        numbers = data[plan.row_column].to_numpy(dtype=np.int64)
    else:
        numbers = np.arange(len(data), dtype=np.int64)
    order = np.argsort(plan.rows, kind="stable")
    sorted_rows = plan.rows[order]
    pos = np.searchsorted(sorted_rows, numbers)
    pos = np.minimum(pos, max(len(sorted_rows) - 1, 0))
    found = (sorted_rows[pos] == numbers) if len(sorted_rows) else np.zeros(len(data), bool)
    suppressed = np.zeros((len(data), len(cols)), dtype=bool)
    if found.any():
        suppressed[found] = plan.flags[order[pos[found]]]
    out = data.copy()
    for j, c in enumerate(cols):
        mask = suppressed[:, j]
        if not mask.any():
            continue
        s = data[c]
        if pd.api.types.is_integer_dtype(s.dtype) and not isinstance(s.dtype, pd.CategoricalDtype):
            s = s.astype("Int64")
        out[c] = s.mask(pd.Series(mask, index=data.index))
    return MaskResult(out, "local_suppression", plan.parameters, plan.details)


# -- the method as a job-file step -----------------------------------------------------------------
class LocalSuppression(MaskingMethod):
    """Local suppression to k-anonymity of categorical keys
    (:func:`sdckit.masking.suppression.local_suppression`, after sdcMicro ``localSuppression``).

    Parameters
    ----------
    columns : list of str
        The key variables (quasi-identifiers).
    k : int, default 3
        Every key combination must be shared by at least k records (>= 1).
    importance : list of int or mapping, optional
        Importance of the keys (the least important is suppressed first).
    combinations_up_to : int, optional
        Check only the combinations of at most this many keys (>= 1).

    References
    ----------
    Templ, M., Kowarik, A. & Meindl, B. (2015). Statistical disclosure control for micro-data
    using the R package sdcMicro. Journal of Statistical Software 67(4), sec. 4.2.
    """

    spec_name: ClassVar[str] = "local_suppression"
    engines: ClassVar[frozenset[str]] = LOCAL_AND_SPARK

    columns: ColumnList
    k: Count = 3
    importance: Any = None
    combinations_up_to: Count | None = None

    def plan(self, stats: ColumnStats, seed: int | None = None) -> SuppressionPlan:
        """:func:`suppression_plan`."""
        return suppression_plan(
            stats, self.columns, self.k, self.importance, self.combinations_up_to
        )

    def apply(self, data: pd.DataFrame, rng: Rng = None) -> list[MaskResult]:
        """Suppress (see :meth:`MaskingMethod.apply`; deterministic)."""
        return [
            local_suppression(data, self.columns, self.k, self.importance, self.combinations_up_to)
        ]
