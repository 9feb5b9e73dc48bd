"""Microaggregation: replace every record by the representative of a small group of similar ones.

Records are partitioned into groups of at least ``k`` records and the values of the masked
attributes are replaced by a group representative (mean, median, mode), so every published
combination of these attributes is shared by at least ``k`` records.

Methods (sources in each docstring):

* :func:`mdav` -- fixed-size multivariate MDAV (Domingo-Ferrer & Torra 2005; sdcMicro
  ``microaggregation(method = "mdav")``), optionally per attribute group.
* :func:`vmdav` -- variable-size V-MDAV (Solanas & Martinez-Balleste 2006).
* :func:`optimal_univariate` -- optimal univariate microaggregation (Hansen & Mukherjee 2003).
* :func:`individual_ranking` -- univariate fixed-size groups per column (sdcMicro "onedims").
* :func:`categorical_microaggregation` -- MDAV on the Gower distance for mixed data.
* :func:`kanonymity_microaggregation` -- k-anonymity of the quasi-identifiers by joint MDAV.
* :func:`fuzzy_microaggregation` -- fuzzy c-means microaggregation with random assignment
  (Torra), resisting the transparency attack.
* :func:`information_loss` -- IL = 100 * SSE / SST on z-scores.

Tie rule (all MDAV-type methods): records are ranked by (distance, original row index); the
lower row index is the nearer among equal distances and also wins a farthest-record search.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from numbers import Integral
from typing import Annotated, Any, ClassVar, Literal, Self

import numpy as np
import pandas as pd
from pydantic import Field, ValidationInfo, field_validator, model_validator

from sdckit.core.encoding import as_text, encode, is_numeric
from sdckit.core.registry import Registry
from sdckit.core.spec import (
    Boolean,
    ColumnList,
    NonEmptyList,
    NonEmptyMapping,
    Number,
)
from sdckit.errors import DataError, ParameterError, VerificationError, preview
from sdckit.masking.base import (
    MaskResult,
    accepts_series,
    check_columns,
    numeric_matrix,
    standardize,
)
from sdckit.masking.spec import (
    LOCAL_AND_SPARK,
    Count,
    MaskingMethod,
    Positive,
    Rng,
    _per_column,
    _result_columns,
)
from sdckit.masking.stats import ColumnStats, PandasStats


def _kernels() -> Any:
    """The compiled MDAV kernels (:mod:`sdckit.masking._mdav_kernels`), imported on first use:
    numba's start-up is paid by a run that microaggregates, not by every job that loads the
    masking methods to validate its ``methods:`` list."""
    from sdckit.masking import _mdav_kernels

    return _mdav_kernels


Centroid = Literal["mean", "median"]

_LITERATURE_MDAV = (
    "Domingo-Ferrer, J. & Torra, V. (2005). Ordinal, continuous and heterogeneous "
    "k-anonymity through microaggregation. Data Mining and Knowledge Discovery 11(2)"
)


# --------------------------------------------------------------------------------------------
# input checks and small helpers
# --------------------------------------------------------------------------------------------


def _check_k(k: Any, n: int, method: str) -> int:
    """``k`` must be an integer with 1 <= k <= n (DataError otherwise)."""
    if isinstance(k, bool) or not isinstance(k, Integral):
        raise ParameterError(f"{method}: k must be a whole number >= 1, got {k!r}")
    k = int(k)
    if k < 1:
        raise ParameterError(f"{method}: k must be at least 1, got k={k}; use k >= 2 to protect")
    if k > n:
        raise ParameterError(
            f"{method}: k={k} is larger than the number of records ({n}); choose k <= {n}"
        )
    return k


def check_complete(
    stats: ColumnStats, columns: Sequence[str], method: str, numbers: bool = True
) -> None:
    """The data checks of microaggregation, read through ``stats`` (both engines): with
    ``numbers`` the columns must hold numbers (:meth:`ColumnStats.check_numeric`) and none may
    be missing (DataError naming the first such record, rows before columns); otherwise (the
    mixed-data methods) no value may be missing (DataError naming the first column with one
    and its first such row)."""
    if numbers:
        stats.check_numeric(columns, method)
    missing = stats.missing(columns, numbers=numbers)
    lacking = [c for c in columns if missing[c]]
    if not lacking:
        return
    if not numbers:
        row, _ = stats.first_missing(lacking[0])
        raise DataError(
            f"{method}: column {lacking[0]!r} has a missing value in row {row + 1}; "
            f"impute or drop such rows first"
        )
    firsts = [(*stats.first_missing(c, numbers=True), c) for c in lacking]
    row, value, column = min(firsts, key=lambda f: f[0])  # the first row; in it the first column
    raise DataError(
        f"{method}: column {column!r} has a missing or infinite value in row "
        f"{row + 1} ({value!r}); microaggregation needs complete "
        f"numeric data: impute or drop such rows first"
    )


def _complete_matrix(data: pd.DataFrame, columns: Sequence[str], method: str) -> np.ndarray:
    """Numeric (n, p) matrix of the columns; DataError for non-numeric or missing values
    (:func:`check_complete`)."""
    x = numeric_matrix(data, columns, method)
    if not np.isfinite(x).all():  # missing numbers (numeric_matrix refuses infinite ones)
        check_complete(PandasStats(data), columns, method)
    return x


def _check_centroid(centroid: str, method: str) -> str:
    if centroid not in ("mean", "median"):
        raise ParameterError(f"{method}: centroid must be 'mean' or 'median', got {centroid!r}")
    return centroid


def group_sizes(labels: np.ndarray) -> np.ndarray:
    """Size of every group, indexed by label (labels are 0..g-1)."""
    return np.bincount(labels)


def _size_summary(labels: np.ndarray) -> dict[str, Any]:
    """Publishable group-size facts: number of groups, size histogram, min and max size."""
    sizes = group_sizes(labels)
    values, counts = np.unique(sizes, return_counts=True)
    return {
        "n_groups": int(len(sizes)),
        "group_size_counts": {str(int(v)): int(c) for v, c in zip(values, counts, strict=True)},
        "min_group_size": int(sizes.min()),
        "max_group_size": int(sizes.max()),
    }


def group_means(x: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Per-group column means, shape (g, p), by ``np.bincount`` sums."""
    sizes = np.bincount(labels)
    out = np.empty((len(sizes), x.shape[1]))
    for j in range(x.shape[1]):
        out[:, j] = np.bincount(labels, weights=x[:, j], minlength=len(sizes)) / sizes
    return out


def group_medians(x: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Per-group column medians, shape (g, p) (mean of the two middle values for even sizes)."""
    sizes = np.bincount(labels)
    g = len(sizes)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    lo = starts + (sizes - 1) // 2
    hi = starts + sizes // 2
    out = np.empty((g, x.shape[1]))
    for j in range(x.shape[1]):
        order = np.lexsort((x[:, j], labels))
        xs = x[order, j]
        out[:, j] = 0.5 * (xs[lo] + xs[hi])
    return out


def _representatives(x: np.ndarray, labels: np.ndarray, centroid: str) -> np.ndarray:
    """Every record's group representative (mean or median), shape (n, p)."""
    reps = group_means(x, labels) if centroid == "mean" else group_medians(x, labels)
    return reps[labels]


def _il(z: np.ndarray, z_masked: np.ndarray) -> float:
    """IL = 100 * sum ||z - z'||^2 / sum ||z - mean(z)||^2 (z already standardized)."""
    sst = float(((z - z.mean(axis=0)) ** 2).sum())
    sse = float(((z - z_masked) ** 2).sum())
    return 100.0 * sse / sst


def information_loss(
    original: pd.DataFrame, protected: pd.DataFrame, columns: Sequence[str] | str | None = None
) -> float:
    """Information loss IL = 100 * SSE / SST of microaggregated data, on z-scores.

    z are the original values standardized by the ORIGINAL column means and standard
    deviations, z' the protected (microaggregated) values standardized the same way;
    SSE = sum ||z - z'||^2 (for mean centroids: the within-group sum of squares),
    SST = sum ||z - mean(z)||^2. The
    measure of Domingo-Ferrer & Mateo-Sanz (2002, IEEE TKDE 14(1)) and Domingo-Ferrer & Torra
    (2005) used for the published MDAV tables (Census, Tarragona, EIA). The scale factor of
    the standard deviation cancels in the ratio, so ddof does not matter.
    """
    cols = check_columns(original, columns)
    missing = [c for c in cols if c not in protected.columns]
    if missing:
        raise DataError(f"information_loss: protected data lacks column(s) {preview(missing)}")
    if len(original) != len(protected):
        raise DataError(
            f"information_loss: original has {len(original)} rows but protected has "
            f"{len(protected)}; pass the protected version of the same records"
        )
    x = _complete_matrix(original, cols, "information_loss")
    y = _complete_matrix(protected, cols, "information_loss")
    z, mean, sd = standardize(x, cols, "information_loss")
    return _il(z, (y - mean) / sd)


def _masked_frame(data: pd.DataFrame, columns: Sequence[str], values: np.ndarray) -> pd.DataFrame:
    out = data.copy()
    for j, c in enumerate(columns):
        out[c] = values[:, j]
    return out


# --------------------------------------------------------------------------------------------
# partitions (arrays in, labels out)
# --------------------------------------------------------------------------------------------


def mdav_partition(z: np.ndarray, k: int) -> np.ndarray:
    """MDAV partition of the rows of ``z`` (n, p); returns a group label (0..g-1) per row.

    Domingo-Ferrer & Torra (2005), "Ordinal, continuous and heterogeneous k-anonymity through
    microaggregation", DMKD 11(2), algorithm MDAV (the method of sdcMicro ``mdav``):

    1. while at least 3k records remain: c = centroid of the remaining records; r = record
       farthest from c; s = record farthest from r; form the group of r and its k-1 nearest
       remaining records, then the group of s and its k-1 nearest remaining records;
    2. if 2k..3k-1 records remain: r = record farthest from their centroid; form the group of
       r and its k-1 nearest; the others form the last group;
    3. if fewer than 2k remain: they form the last group (k..2k-1 records).

    Distances are Euclidean (squared, which ranks the same). Tie rule: records are ranked by
    (distance, row index): among equal distances the lower row index is nearer, and a
    farthest search returns the lowest row index among the farthest. A pivot always belongs
    to its own group; s is sought among the records not put into r's group (identical to
    "farthest from r" whenever that record is not in r's group, and well defined otherwise).
    Every group has k records except the last (k..2k-1); the number of groups is n // k.
    """
    z = np.ascontiguousarray(z, dtype=np.float64)
    k = _check_k(k, len(z), "mdav")
    return _kernels().mdav_labels(z, k, 0)


def vmdav_partition(z: np.ndarray, k: int, gamma: float = 0.2) -> np.ndarray:
    """V-MDAV partition of the rows of ``z`` (n, p); returns a group label per row.

    Solanas, A. & Martinez-Balleste, A. (2006), "V-MDAV: a multivariate microaggregation with
    variable group size", COMPSTAT 2006. With c the centroid of the whole data set:

    1. while at least 2k records are unassigned: e = unassigned record farthest from c; form
       the group of e and its k-1 nearest unassigned records; then extend it: let e_min be
       the unassigned record nearest to the group (d_in = its Euclidean distance to the
       nearest group member) and d_out the distance from e_min to its nearest other
       unassigned record; add e_min while d_in < gamma * d_out and the group has fewer than
       2k-1 records (no other unassigned record: d_out = infinity);
    2. if k..2k-1 records remain they form the last group; fewer than k remaining records
       (possible after an extension) join the group whose centroid is nearest to each.

    Tie rule as in :func:`mdav_partition` ((distance, row index) order). Sizes are k..2k-1,
    except groups that absorb the (< k) leftovers of step 2.
    """
    z = np.ascontiguousarray(z, dtype=np.float64)
    k = _check_k(k, len(z), "vmdav")
    if not np.isfinite(gamma) or gamma < 0:
        raise ParameterError(f"vmdav: gamma must be a number >= 0 (0.2 is usual), got {gamma!r}")
    labels = _kernels().vmdav_labels(z, k, float(gamma))
    left = np.flatnonzero(labels < 0)
    if len(left):
        if labels.max() < 0:  # n < 2k: no group formed yet; impossible since n >= k
            raise VerificationError("vmdav: no group formed although n >= k")
        assigned = labels >= 0
        cent = group_means(z[assigned], labels[assigned])
        d2 = ((z[left, None, :] - cent[None, :, :]) ** 2).sum(axis=2)
        labels[left] = np.argmin(d2, axis=1)  # ties: lowest group label
    return labels


def optimal_univariate_partition(x: np.ndarray, k: int) -> np.ndarray:
    """Optimal univariate k-partition of ``x`` (1-d); returns a group label per value.

    Hansen, S. L. & Mukherjee, S. (2003), "A polynomial algorithm for optimal univariate
    microaggregation", IEEE TKDE 15(4): in an optimal partition every group is a run of
    k..2k-1 consecutive values in sorted order, so the least-SSE partition is a shortest path
    over the sorted values (edge i -> j weighted by the SSE of values i..j-1), solved by
    dynamic programming in O(nk) with prefix sums. Values are sorted stably (equal values
    by row index); among equal costs the shortest last run wins. Labels ascend with values.
    """
    x = np.asarray(x, dtype=np.float64).ravel()
    k = _check_k(k, len(x), "optimal_univariate")
    order = np.argsort(x, kind="stable")
    xs = x[order]
    lengths = _kernels().optimal_univariate_cuts(xs - xs.mean(), k)
    labels = np.empty(len(x), dtype=np.int64)
    labels[order] = np.repeat(np.arange(len(lengths)), lengths)
    return labels


def individual_ranking_partition(x: np.ndarray, k: int) -> np.ndarray:
    """Individual-ranking groups of a 1-d array: sorted (stable), consecutive runs of k.

    The last run absorbs the remainder (sizes k..2k-1). Defays & Nanopoulos (1993); sdcMicro
    ``microaggregation(method = "onedims")``; mu-Argus "individual ranking".
    """
    x = np.asarray(x, dtype=np.float64).ravel()
    k = _check_k(k, len(x), "individual_ranking")
    n_groups = len(x) // k
    order = np.argsort(x, kind="stable")
    labels = np.empty(len(x), dtype=np.int64)
    labels[order] = np.minimum(np.arange(len(x)) // k, n_groups - 1)
    return labels


# --------------------------------------------------------------------------------------------
# numeric multivariate methods
# --------------------------------------------------------------------------------------------


def _attribute_groups(
    data: pd.DataFrame,
    columns: Sequence[str] | str | None,
    groups: Sequence[Sequence[str]] | None,
    method: str,
) -> tuple[list[str], list[list[str]]]:
    """Columns and attribute groups; every column in exactly one group (DataError otherwise)."""
    if groups is None:
        cols = check_columns(data, columns)
        return cols, [cols]
    if isinstance(groups, str) or not all(not isinstance(g, str) for g in groups):
        raise DataError(
            f"{method}: groups must be a list of column lists, e.g. [['v1', 'v2'], ['v3']]"
        )
    glist = [check_columns(data, list(g)) for g in groups]
    flat = [c for g in glist for c in g]
    dup = sorted({c for c in flat if flat.count(c) > 1})
    if dup:
        raise DataError(f"{method}: column(s) {preview(dup)} appear in more than one group")
    if columns is None:
        return flat, glist
    cols = check_columns(data, columns)
    outside = [c for c in flat if c not in cols]
    ungrouped = [c for c in cols if c not in flat]
    if outside or ungrouped:
        raise DataError(
            f"{method}: groups must split the columns exactly; "
            + (f"grouped but not in columns: {preview(outside)}; " if outside else "")
            + (f"in no group: {preview(ungrouped)}" if ungrouped else "")
        )
    return cols, glist


def _multivariate(
    data: pd.DataFrame,
    columns: Sequence[str] | str | None,
    k: int,
    groups: Sequence[Sequence[str]] | None,
    centroid: str,
    do_standardize: bool,
    method: str,
    partition,
) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    cols, glist = _attribute_groups(data, columns, groups, method)
    _check_centroid(centroid, method)
    x_all = _complete_matrix(data, cols, method)
    k = _check_k(k, len(data), method)
    out = x_all.copy()
    reports = []
    for gcols in glist:
        j = [cols.index(c) for c in gcols]
        x = x_all[:, j]
        z = standardize(x, gcols, method)[0] if do_standardize else x
        labels = partition(z, k)
        masked = _representatives(x, labels, centroid)
        out[:, j] = masked
        rep: dict[str, Any] = {"columns": list(gcols), **_size_summary(labels)}
        if len(x) > 1 and np.all(np.ptp(x, axis=0) > 0):
            zz, mm, ss = standardize(x, gcols, method)
            rep["information_loss"] = _il(zz, (masked - mm) / ss)
        else:
            rep["information_loss"] = None
        reports.append(rep)
    return _masked_frame(data, cols, out), reports


@accepts_series
def mdav(
    data: pd.DataFrame,
    columns: Sequence[str] | str | None = None,
    k: int = 3,
    groups: Sequence[Sequence[str]] | None = None,
    centroid: Centroid = "mean",
    standardize: bool = True,
    seed: int | None = None,
) -> MaskResult:
    """MDAV fixed-size microaggregation (Domingo-Ferrer & Torra 2005; sdcMicro ``mdav``).

    The columns (all together, or each attribute group of ``groups`` separately) are
    z-scored (sample sd; ``standardize=False`` uses raw values), partitioned by
    :func:`mdav_partition` (k records per group, the last k..2k-1; tie rule: lowest row
    index among equal distances), and every value is replaced by its group mean
    (``centroid="median"``: median) in ORIGINAL units. Reproduces the published IL values
    (IL = 100 SSE/SST on z-scores) of Census/Tarragona/EIA. Deterministic (``seed`` unused).
    """
    res, reports = _multivariate(
        data, columns, k, groups, centroid, standardize, "mdav", mdav_partition
    )
    return MaskResult(
        data=res,
        method="mdav",
        parameters={
            "columns": [c for r in reports for c in r["columns"]],
            "k": int(k),
            "groups": [r["columns"] for r in reports],
            "centroid": centroid,
            "standardize": bool(standardize),
        },
        details={
            "groups": reports,
            "n_groups": sum(r["n_groups"] for r in reports),
            "tie_rule": "distance, then lowest row index",
            "source": _LITERATURE_MDAV,
        },
    )


@accepts_series
def vmdav(
    data: pd.DataFrame,
    columns: Sequence[str] | str | None = None,
    k: int = 3,
    gamma: float = 0.2,
    groups: Sequence[Sequence[str]] | None = None,
    centroid: Centroid = "mean",
    standardize: bool = True,
    seed: int | None = None,
) -> MaskResult:
    """V-MDAV variable-size microaggregation (Solanas & Martinez-Balleste 2006).

    As :func:`mdav` but groups are built by :func:`vmdav_partition`: sizes k..2k-1, a group
    is extended by its nearest unassigned record e while d_in(e) < gamma * d_out(e) (the
    authors suggest gamma = 0.2 for scattered data and about 1.1 for clustered data).
    Values are replaced by the group mean (or median) in original units. Deterministic.
    """

    def part(z: np.ndarray, kk: int) -> np.ndarray:
        return vmdav_partition(z, kk, gamma)

    res, reports = _multivariate(data, columns, k, groups, centroid, standardize, "vmdav", part)
    return MaskResult(
        data=res,
        method="vmdav",
        parameters={
            "columns": [c for r in reports for c in r["columns"]],
            "k": int(k),
            "gamma": float(gamma),
            "groups": [r["columns"] for r in reports],
            "centroid": centroid,
            "standardize": bool(standardize),
        },
        details={
            "groups": reports,
            "n_groups": sum(r["n_groups"] for r in reports),
            "tie_rule": "distance, then lowest row index",
            "source": "Solanas & Martinez-Balleste (2006), V-MDAV, COMPSTAT 2006",
        },
    )


@accepts_series
def optimal_univariate(
    data: pd.DataFrame, column: str, k: int = 3, seed: int | None = None
) -> MaskResult:
    """Optimal univariate microaggregation of one column (Hansen & Mukherjee 2003).

    Least-SSE partition of the values into groups of k..2k-1 consecutive sorted values
    (:func:`optimal_univariate_partition`); values are replaced by their group mean. The
    details give the group sizes in ascending order of values and the SSE. Deterministic.
    """
    if not isinstance(column, str):
        raise DataError("optimal_univariate: give one column name (a string) as column")
    cols = check_columns(data, column)
    x = _complete_matrix(data, cols, "optimal_univariate")[:, 0]
    labels = optimal_univariate_partition(x, k)
    means = group_means(x[:, None], labels)[:, 0]
    masked = means[labels]
    sizes = group_sizes(labels)
    return MaskResult(
        data=_masked_frame(data, cols, masked[:, None]),
        method="optimal_univariate",
        parameters={"column": column, "k": int(k)},
        details={
            **_size_summary(labels),
            "group_sizes_in_value_order": sizes.tolist(),
            "sse": float(((x - masked) ** 2).sum()),
            "information_loss": _il_1d(x, masked),
            "source": "Hansen & Mukherjee (2003), IEEE TKDE 15(4) 1043-1044",
        },
    )


def _il_1d(x: np.ndarray, masked: np.ndarray) -> float | None:
    sst = float(((x - x.mean()) ** 2).sum())
    return None if sst == 0 else 100.0 * float(((x - masked) ** 2).sum()) / sst


@accepts_series
def individual_ranking(
    data: pd.DataFrame,
    columns: Sequence[str] | str | None = None,
    k: int = 3,
    seed: int | None = None,
) -> MaskResult:
    """Individual ranking: every column microaggregated on its own (sdcMicro "onedims").

    Each column is sorted (stable: equal values by row index), cut into consecutive runs of
    k (the last run takes the remainder: k..2k-1 records) and every value replaced by its
    run mean (Defays & Nanopoulos 1993; mu-Argus individual ranking). Deterministic.
    """
    cols = check_columns(data, columns)
    x = _complete_matrix(data, cols, "individual_ranking")
    k = _check_k(k, len(data), "individual_ranking")
    out = np.empty_like(x)
    reports = []
    for j, c in enumerate(cols):
        labels = individual_ranking_partition(x[:, j], k)
        out[:, j] = group_means(x[:, [j]], labels)[labels, 0]
        reports.append(
            {
                "columns": [c],
                **_size_summary(labels),
                "information_loss": _il_1d(x[:, j], out[:, j]),
            }
        )
    return MaskResult(
        data=_masked_frame(data, cols, out),
        method="individual_ranking",
        parameters={"columns": cols, "k": int(k)},
        details={
            "groups": reports,
            "n_groups": reports[0]["n_groups"],
            "source": "sdcMicro microaggregation(method='onedims'); Defays & Nanopoulos (1993)",
        },
    )


# --------------------------------------------------------------------------------------------
# mixed (categorical) data
# --------------------------------------------------------------------------------------------


def _gower_embedding(
    data: pd.DataFrame, cols: list[str], order: Mapping[str, Sequence[Any]], method: str
) -> tuple[np.ndarray, list[dict[str, Any]]]:
    """Feature matrix whose L1 distance / p is the Gower distance, plus per-column info.

    numeric: x / range; ordinal: rank / (levels - 1); nominal: one-hot / 2 (a mismatch then
    costs |1| * 1/2 * 2 = 1). The mean of the features is the "average record", and the L1
    distance to it gives, for a nominal attribute, 1 - share of the record's category.
    """
    feats: list[np.ndarray] = []
    info: list[dict[str, Any]] = []
    for c in cols:
        s = data[c]
        if s.isna().any():
            check_complete(PandasStats(data), [c], method, numbers=False)
        if c in order:
            levels = [str(v) for v in as_text(pd.Series(list(order[c]), dtype=object))]
            if len(set(levels)) != len(levels):
                raise DataError(f"{method}: order for column {c!r} lists a value twice")
            text = as_text(s)
            pos = pd.Index(levels).get_indexer(text)
            if (pos < 0).any():
                bad = pd.unique(text[pos < 0])
                raise DataError(
                    f"{method}: column {c!r} has value(s) {preview(bad)} missing from its "
                    f"order list; add them to order[{c!r}]"
                )
            scale = max(len(levels) - 1, 1)
            feats.append((pos / scale)[:, None])
            info.append({"kind": "ordinal", "ranks": pos, "levels": list(order[c])})
        elif is_numeric(s):
            x = s.to_numpy(dtype=np.float64)
            rng = float(x.max() - x.min())
            feats.append((x / rng if rng > 0 else np.zeros_like(x))[:, None])
            info.append({"kind": "numeric", "values": x})
        else:
            enc = encode(s, c)
            onehot = np.zeros((len(s), enc.cardinality))
            onehot[np.arange(len(s)), enc.codes] = 0.5
            feats.append(onehot)
            info.append({"kind": "nominal", "codes": enc.codes, "n_levels": enc.cardinality})
    return np.hstack(feats), info


def _mode_codes(codes: np.ndarray, labels: np.ndarray, n_levels: int) -> np.ndarray:
    """Per-group most frequent code (ties: the lowest code, i.e. first in sorted text order)."""
    g = labels.max() + 1
    table = np.zeros((g, n_levels), dtype=np.int64)
    np.add.at(table, (labels, codes), 1)
    return np.argmax(table, axis=1)


def _lower_median_ranks(ranks: np.ndarray, labels: np.ndarray) -> np.ndarray:
    """Per-group median rank; for even sizes the lower of the two middle ranks."""
    sizes = np.bincount(labels)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    srt = ranks[np.lexsort((ranks, labels))]
    return srt[starts + (sizes - 1) // 2]


@accepts_series
def categorical_microaggregation(
    data: pd.DataFrame,
    columns: Sequence[str] | str | None = None,
    k: int = 3,
    order: Mapping[str, Sequence[Any]] | None = None,
    seed: int | None = None,
) -> MaskResult:
    """Microaggregation of mixed numeric / ordinal / nominal data on the Gower distance.

    Domingo-Ferrer & Torra (2005) extend MDAV to ordinal and nominal attributes; the distance
    here is Gower's (1971) general coefficient: the average over attributes of |x - y| /
    range (numeric), |rank_x - rank_y| / (levels - 1) (ordinal: columns in ``order``, mapped
    to the position of their value in the given ordered list) and 0/1 mismatch (nominal: any
    other non-numeric column). The MDAV rules of :func:`mdav_partition` (same tie rule) are
    applied with the Gower distance; the "average record" has the mean for numeric and
    ordinal attributes and the category shares for nominal ones (its Gower distance to a
    record counts 1 - share of the record's category). Representatives: numeric -> group
    mean; ordinal -> median category (lower median for even sizes); nominal -> mode (ties:
    the category first in sorted text order). Deterministic.
    """
    method = "categorical_microaggregation"
    cols = check_columns(data, columns)
    order = dict(order or {})
    unknown = [c for c in order if c not in cols]
    if unknown:
        raise DataError(f"{method}: order given for column(s) {preview(unknown)} not in columns")
    k = _check_k(k, len(data), method)
    feats, info = _gower_embedding(data, cols, order, method)
    labels = _kernels().mdav_labels(np.ascontiguousarray(feats), k, 1)
    out = data.copy()
    kinds = {}
    for c, inf in zip(cols, info, strict=True):
        kinds[c] = inf["kind"]
        if inf["kind"] == "numeric":
            out[c] = group_means(inf["values"][:, None], labels)[labels, 0]
        else:
            # the representative is a value of the column: write the original value of the
            # first row holding it (keeps the column's dtype and spelling)
            codes = inf["ranks"] if inf["kind"] == "ordinal" else inf["codes"]
            if inf["kind"] == "ordinal":
                rep = _lower_median_ranks(codes, labels)
            else:
                rep = _mode_codes(codes, labels, inf["n_levels"])
            uniq, first = np.unique(codes, return_index=True)
            first_row = np.full(int(codes.max()) + 1, -1)
            first_row[uniq] = first
            out[c] = data[c].to_numpy()[first_row[rep[labels]]]
    return MaskResult(
        data=out,
        method=method,
        parameters={"columns": cols, "k": int(k), "order": {c: list(v) for c, v in order.items()}},
        details={
            **_size_summary(labels),
            "attribute_types": kinds,
            "distance": "Gower (numeric range-scaled, ordinal rank/(levels-1), nominal 0/1)",
            "representatives": "numeric mean, ordinal lower median, nominal mode (ties: first "
            "in sorted order)",
            "tie_rule": "distance, then lowest row index",
            "source": _LITERATURE_MDAV + "; Gower (1971) Biometrics 27(4)",
        },
    )


def kanonymity_via(stats: ColumnStats, quasi_identifiers: Sequence[str]) -> str:
    """The function :func:`kanonymity_microaggregation` aggregates the quasi-identifiers
    with: ``mdav`` when all are numeric (held as numbers), else
    ``categorical_microaggregation``."""
    if all(stats.kind(c) in ("long", "double") for c in quasi_identifiers):
        return "mdav"
    return "categorical_microaggregation"


@accepts_series
def kanonymity_microaggregation(
    data: pd.DataFrame,
    quasi_identifiers: Sequence[str] | str,
    k: int = 3,
    seed: int | None = None,
) -> MaskResult:
    """k-anonymity by joint multivariate microaggregation of the quasi-identifiers.

    Domingo-Ferrer & Torra (2005): microaggregating ALL quasi-identifiers together (one MDAV
    partition) gives every record the QI combination of its group, so each combination is
    shared by at least k records. Numeric QIs: :func:`mdav` on z-scores with group means;
    if any QI is non-numeric, :func:`categorical_microaggregation` (Gower distance). The
    smallest equivalence class of the result is verified and published.
    """
    method = "kanonymity_microaggregation"
    qis = check_columns(data, quasi_identifiers)
    if kanonymity_via(PandasStats(data), qis) == "mdav":
        inner = mdav(data, qis, k=k)
    else:
        inner = categorical_microaggregation(data, qis, k=k)
    classes = inner.data.groupby(qis, dropna=False, sort=False).size()
    smallest = int(classes.min())
    if smallest < k:
        raise VerificationError(
            f"{method}: an equivalence class of size {smallest} < k={k} remained"
        )
    return MaskResult(
        data=inner.data,
        method=method,
        parameters={"quasi_identifiers": qis, "k": int(k), "via": inner.method},
        details={
            **inner.details,
            "n_equivalence_classes": int(len(classes)),
            "min_equivalence_class_size": smallest,
        },
    )


# --------------------------------------------------------------------------------------------
# fuzzy microaggregation
# --------------------------------------------------------------------------------------------


_FUZZY_MAX_CELLS = 50_000_000


def _cross(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a @ b.T`` for ``a`` (n, p) and ``b`` (c, p) with few columns ``p``, summed column by
    column in a fixed order (element-wise arithmetic, not BLAS, whose result depends on the
    CPU and its number of threads: the same bits on every engine and machine)."""
    out = np.zeros((a.shape[0], b.shape[0]))
    for j in range(a.shape[1]):
        out += a[:, j : j + 1] * b[:, j][None, :]
    return out


def _sq_dists(z: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Squared Euclidean distances (n, c) between rows of z and centres v (clipped at 0)."""
    d2 = (z * z).sum(1)[:, None] - 2.0 * _cross(z, v) + (v * v).sum(1)[None, :]
    return np.maximum(d2, 0.0)


def _memberships(d2: np.ndarray, m: float) -> np.ndarray:
    """Fuzzy c-means memberships u_ic = 1 / sum_j (d_ic / d_ij)^(2/(m-1)) (Bezdek 1981).

    A record at distance 0 of some centres belongs to them only (equal shares).
    """
    dmin = d2.min(axis=1, keepdims=True)
    zero = d2 <= 0.0
    with np.errstate(divide="ignore", over="ignore"):
        w = (d2 / np.where(dmin > 0, dmin, 1.0)) ** (-1.0 / (m - 1.0))
    hit = zero.any(axis=1)
    w[hit] = zero[hit].astype(float)
    return w / w.sum(axis=1, keepdims=True)


@accepts_series
def fuzzy_microaggregation(
    data: pd.DataFrame,
    columns: Sequence[str] | str | None = None,
    k: int = 3,
    m: float = 1.5,
    seed: int | None = None,
    max_iter: int = 100,
    tol: float = 1e-6,
) -> MaskResult:
    """Fuzzy microaggregation with random assignment to cluster centres (Torra).

    Torra, V. (2017), "Fuzzy microaggregation for the transparency principle", Journal of
    Applied Logic 23: under the transparency principle an intruder who knows the (crisp)
    method can invert it; with fuzzy clusters and a random choice the group of a record is
    not determined by its values. Steps, on z-scores: c = n // k clusters initialised at
    the MDAV group means (MDAV gives exactly n // k groups); fuzzy c-means (Bezdek 1981)
    with fuzzifier ``m`` > 1: u_ic = 1 / sum_j (d_ic/d_ij)^(2/(m-1)), v_c = sum_i u_ic^m z_i
    / sum_i u_ic^m, until the largest centre move is below ``tol`` or ``max_iter``; then each
    record independently draws cluster c with probability u_ic (``numpy.random.Generator``
    from ``seed``; one uniform per record in row order) and takes that centre's values in
    original units. Cost O(n * (n/k) * p) per iteration. The drawn clusters are NOT
    guaranteed to hold k records each; their sizes are published in the details.

    The default fuzzifier ``m = 1.5`` is the lower end of the interval Pal & Bezdek (1995,
    "On cluster validity for the fuzzy c-means model", IEEE TFS 3(3)) recommend, 1.5 to 2.5.
    Microaggregation has many clusters (n/k), and the memberships flatten towards uniform as
    ``m`` grows: on the CASC Census file (1,080 x 5 numeric attributes, k=3) IL1s is 0.134 at
    m=1.5 against 0.322 at m=2 (MDAV 0.092), while 29% of the records are still drawn
    to another cluster than their likeliest, the randomness the method exists for; m=1.2
    gives IL1s 0.078 but 99% of the records go to their likeliest cluster (almost crisp).
    """
    method = "fuzzy_microaggregation"
    cols = check_columns(data, columns)
    x = _complete_matrix(data, cols, method)
    k = _check_k(k, len(data), method)
    if not (np.isfinite(m) and m > 1.0):
        raise ParameterError(f"{method}: the fuzzifier m must be > 1 (2 is usual), got {m!r}")
    if isinstance(max_iter, bool) or not isinstance(max_iter, Integral) or max_iter < 1:
        raise ParameterError(f"{method}: max_iter must be a whole number >= 1, got {max_iter!r}")
    n_clusters = len(data) // k
    if len(data) * n_clusters > _FUZZY_MAX_CELLS:
        raise DataError(
            f"{method}: {len(data)} records with k={k} need a {len(data)} x {n_clusters} "
            f"membership matrix (over {_FUZZY_MAX_CELLS:,} cells); use a larger k, a sample, "
            f"or mdav"
        )
    z, mean, sd = standardize(x, cols, method)
    init = mdav_partition(z, k)
    v = group_means(z, init)
    converged = False
    it = 0
    for it in range(1, int(max_iter) + 1):  # noqa: B007
        u = _memberships(_sq_dists(z, v), m)
        um = u**m
        # um.T @ z column by column: sums over the records in record order (BLAS would sum
        # them in an order that depends on its threads)
        weighted = np.stack([(um * z[:, j : j + 1]).sum(axis=0) for j in range(z.shape[1])], 1)
        v_new = weighted / um.sum(axis=0)[:, None]
        move = float(np.abs(v_new - v).max())
        v = v_new
        if move < tol:
            converged = True
            break
    u = _memberships(_sq_dists(z, v), m)
    rng = np.random.default_rng(seed)
    draws = rng.random(len(z))
    cum = np.cumsum(u, axis=1)
    chosen = np.minimum((cum < (draws * cum[:, -1])[:, None]).sum(axis=1), u.shape[1] - 1)
    masked = v[chosen] * sd + mean
    umax = u.max(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ent = -np.where(u > 0, u * np.log(u), 0.0).sum(axis=1)
    drawn = np.bincount(chosen, minlength=u.shape[1])
    drawn_vals, drawn_counts = np.unique(drawn, return_counts=True)
    return MaskResult(
        data=_masked_frame(data, cols, masked),
        method=method,
        parameters={
            "columns": cols,
            "k": int(k),
            "m": float(m),
            "seed": seed,
            "max_iter": int(max_iter),
            "tol": float(tol),
        },
        details={
            "n_clusters": int(u.shape[1]),
            "initial_partition": _size_summary(init),
            "iterations": int(it),
            "converged": converged,
            "membership_summary": {
                "mean_max_membership": float(umax.mean()),
                "min_max_membership": float(umax.min()),
                "median_max_membership": float(np.median(umax)),
                "mean_entropy": float(ent.mean()),
                "share_assigned_to_max_membership": float((chosen == u.argmax(axis=1)).mean()),
            },
            "drawn_cluster_size_counts": {
                str(int(a)): int(b) for a, b in zip(drawn_vals, drawn_counts, strict=True)
            },
            "information_loss": _il(z, (masked - mean) / sd),
            "source": "Torra (2017) J. Applied Logic 23; Bezdek (1981) fuzzy c-means",
        },
    )


# --------------------------------------------------------------------------------------------
# strata: microaggregation within groups of records (each fits one machine)
# --------------------------------------------------------------------------------------------


def stratum_key(columns: Sequence[str], values: Sequence[Any]) -> dict[str, str | None]:
    """A stratum as published: ``{column: canonical text of the value}`` (None = missing;
    ``3`` and ``3.0`` are both ``"3"``, so both engines name a stratum alike)."""
    return {
        c: (None if pd.isna(v) else str(as_text(pd.Series([v]))[0]))
        for c, v in zip(columns, values, strict=True)
    }


def strata_labels(
    data: pd.DataFrame,
    strata: Sequence[str] | None = None,
    block_by: Sequence[str] | None = None,
    block_size: int | None = None,
) -> tuple[np.ndarray, list[dict[str, Any]]]:
    """The stratum of every record (labels 0..s-1) and each stratum's published key.

    ``strata``: the groups of equal values of these columns (a missing value is a value of its
    own; strata in sorted order, as sdcMicro's ``strata_variables`` form them).
    ``block_by``/``block_size``: the records sorted by these columns (ascending, missing
    last, ties in row order) and cut into ``max(1, n // block_size)`` consecutive blocks of
    ``block_size`` records, the last one taking the remainder (``block_size`` to
    ``2 block_size - 1`` records; all records when ``n < block_size``); key ``{"block": b}``.
    """
    n = len(data)
    if strata:
        cols = check_columns(data, strata)
        grouped = data.groupby(cols, dropna=False, sort=True)
        labels = grouped.ngroup().to_numpy().astype(np.int64)
        keys = [k if isinstance(k, tuple) else (k,) for k in grouped.size().index]
        return labels, [stratum_key(cols, k) for k in keys]
    if not block_by or block_size is None:
        raise ParameterError("strata_labels: give strata, or block_by with block_size")
    cols = check_columns(data, block_by)
    pos = "__position__"
    while pos in cols:
        pos += "_"
    frame = data[cols].copy()
    frame.columns = range(len(cols))
    frame[pos] = np.arange(n)
    order = frame.sort_values(by=[*range(len(cols)), pos], na_position="last")[pos].to_numpy()
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n)
    n_blocks = max(1, n // int(block_size))
    labels = np.minimum(rank // int(block_size), n_blocks - 1)
    return labels, [{"block": b} for b in range(n_blocks)]


def stratum_seed(base: int | None, key: Mapping[str, Any]) -> int | None:
    """The seed of one stratum: the child of ``SeedSequence(base)`` whose spawn key is the
    stratum's key hashed (SHA-256), so a stratum's randomness depends on the step seed and on
    the stratum only -- not on the other strata nor on which machine runs it. ``None`` (no
    seed given) stays None (fresh entropy)."""
    if base is None:
        return None
    digest = hashlib.sha256(json.dumps(dict(key), sort_keys=True).encode("utf-8")).digest()
    child = np.random.SeedSequence(int(base), spawn_key=(int.from_bytes(digest[:16], "big"),))
    return int(child.generate_state(1, dtype=np.uint64)[0])


def strata_summary(
    spec: Mapping[str, Any], sizes: Sequence[int], strata: Sequence[Mapping[str, Any]]
) -> dict[str, Any]:
    """The published strata facts: how they were formed (``spec``: ``strata`` columns, given
    as ``columns``, or ``block_by``/``block_size``), their number, and the smallest and
    largest stratum (the key of the smallest too); ``strata`` are the keys in label order,
    ``sizes`` their numbers of records."""
    arr = np.asarray(sizes, dtype=np.int64)
    small = int(np.argmin(arr))
    return {
        **{("columns" if k == "strata" else k): v for k, v in spec.items()},
        "n_strata": int(len(arr)),
        "min_stratum_size": int(arr.min()),
        "max_stratum_size": int(arr.max()),
        "smallest_stratum": dict(strata[small]),
    }


def check_stratum_size(size: int, k: int, key: Mapping[str, Any], method: str) -> None:
    """DataError naming a stratum with fewer than ``k`` records: microaggregation within it
    cannot form a group of ``k`` (merge it into another stratum, e.g. by recoding)."""
    if size < k:
        raise DataError(
            f"{method}: stratum {dict(key)} has {size} record(s), fewer than k={k}; no group of "
            f"{k} can be formed within it -- merge it with another stratum (recode the strata "
            "column) or use larger blocks"
        )


def _merged_sizes(parts: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    counts: dict[int, int] = {}
    for p in parts:
        for size, c in p["group_size_counts"].items():
            counts[int(size)] = counts.get(int(size), 0) + int(c)
    return {
        "n_groups": int(sum(counts.values())),
        "group_size_counts": {str(s): counts[s] for s in sorted(counts)},
        "min_group_size": min(counts),
        "max_group_size": max(counts),
    }


#: details of one stratum that do not add up over strata (reported for all strata by the mask
#: summary's numeric evaluation instead)
_PER_STRATUM_ONLY = ("group_sizes_in_value_order", "membership_summary", "information_loss")


def merge_stratum_details(
    details: Sequence[Mapping[str, Any]], strata: Mapping[str, Any]
) -> dict[str, Any]:
    """The details of one microaggregation step run stratum by stratum, from the details of
    every stratum (same method and parameters): group counts and size histograms added up,
    smallest and largest group over all strata, ``strata`` (:func:`strata_summary`) added.

    Information loss is not additive over strata (each stratum standardizes on its own): it is
    left out here and reported over all records by the mask summary's numeric evaluation.
    ``n_equivalence_classes`` (kanonymity) counts the classes of every stratum (two strata
    may release the same combination); ``min_equivalence_class_size`` is the smallest class
    of any stratum, a lower bound for the classes of the whole file.
    """
    first = details[0]
    out: dict[str, Any] = {"strata": dict(strata)}
    for key, value in first.items():
        if key in _PER_STRATUM_ONLY:
            continue
        if key == "groups" and isinstance(value, list):
            out["groups"] = [
                {"columns": g["columns"], **_merged_sizes([d["groups"][i] for d in details])}
                for i, g in enumerate(value)
            ]
        elif key in ("group_size_counts", "min_group_size", "max_group_size"):
            out.update({k: v for k, v in _merged_sizes(details).items() if k != "n_groups"})
        elif key in ("n_groups", "n_clusters", "sse", "n_equivalence_classes"):
            out[key] = sum(d[key] for d in details)
        elif key == "initial_partition":
            out[key] = _merged_sizes([d[key] for d in details])
        elif key == "drawn_cluster_size_counts":
            out[key] = _merged_sizes([{"group_size_counts": d[key]} for d in details])[
                "group_size_counts"
            ]
        elif key == "min_equivalence_class_size":
            out[key] = min(d[key] for d in details)
        elif key == "iterations":
            out[key] = max(d[key] for d in details)
        elif key == "converged":
            out[key] = all(d[key] for d in details)
        else:  # descriptions (source, tie rule, distance, attribute types): the same everywhere
            out[key] = value
    if "information_loss" in first or any("information_loss" in g for g in first.get("groups", [])):
        out["information_loss"] = (
            "not additive over strata; see the numeric evaluation (IL = 100 SSE/SST over all "
            "records)"
        )
    return out


# -- the method as a job-file step -----------------------------------------------------------------
_MA_COMMON = ("columns", "k", "method")
#: every variant can run within strata (or blocks along a sort key)
_MA_STRATA = ("strata", "block_by", "block_size")


@dataclass(frozen=True)
class VariantTraits:
    """What a microaggregation variant takes: its ``parameters`` (job-file names)."""

    parameters: tuple[str, ...]


#: microaggregation ``method`` -> the function that aggregates a whole table (or one stratum)
#: and the parameters it takes
VARIANTS: Registry[VariantTraits] = Registry("microaggregation method", VariantTraits(_MA_COMMON))
VARIANTS.add(
    "mdav",
    mdav,
    VariantTraits((*_MA_COMMON, "groups", "centroid", "standardize", *_MA_STRATA)),
)
VARIANTS.add(
    "vmdav",
    vmdav,
    VariantTraits((*_MA_COMMON, "groups", "centroid", "standardize", "gamma", *_MA_STRATA)),
)
VARIANTS.add("optimal_univariate", optimal_univariate, VariantTraits((*_MA_COMMON, *_MA_STRATA)))
VARIANTS.add("individual_ranking", individual_ranking, VariantTraits((*_MA_COMMON, *_MA_STRATA)))
VARIANTS.add(
    "categorical",
    categorical_microaggregation,
    VariantTraits((*_MA_COMMON, "order", *_MA_STRATA)),
)
VARIANTS.add("kanonymity", kanonymity_microaggregation, VariantTraits((*_MA_COMMON, *_MA_STRATA)))
VARIANTS.add(
    "fuzzy",
    fuzzy_microaggregation,
    VariantTraits((*_MA_COMMON, "m", "max_iter", "tol", *_MA_STRATA)),
)


@dataclass(frozen=True)
class MicroaggregationPlan:
    """What a stratified microaggregation step fixed from the whole data
    (:meth:`Microaggregation.plan`), every check made: the step, the aggregated ``columns``,
    the ``strata`` columns (or the ``block_by`` sort key), whether the columns are aggregated
    as ``numbers`` and the ``function`` the variant runs (the name its messages give). Its
    release is per stratum (:meth:`release_stratum`); on Spark each stratum runs on one
    executor (the step's ``spark_hook``)."""

    step: Microaggregation
    columns: list[str]
    strata: list[str]
    numbers: bool
    function: str

    @property
    def random(self) -> bool:
        """Whether the release draws random numbers (``fuzzy``, seeded per stratum)."""
        return self.step.method == "fuzzy"

    def out_kinds(self, kinds: Mapping[str, str]) -> dict[str, str]:
        """The kinds of the aggregated columns after the release: numbers are doubles (group
        means), the mixed-data methods keep a text column's kind."""
        return {
            c: ("double" if self.numbers or kinds[c] in ("long", "double") else kinds[c])
            for c in self.columns
        }

    def release_stratum(self, data: pd.DataFrame, seed: int | None) -> list[MaskResult]:
        """The step without strata on the records of one stratum (``seed``: the stratum's,
        :func:`stratum_seed`)."""
        return self.step.unstratified()._apply_whole(data, seed)


class Microaggregation(MaskingMethod):
    """Microaggregation: every value replaced by the representative of a group of >= k
    similar records (:mod:`sdckit.masking.microaggregation`).

    With strata (or blocks) each stratum is aggregated on its own, exactly as the method
    aggregates a whole file (:func:`strata_labels`); ``fuzzy`` draws within a stratum from
    the seed :func:`~sdckit.masking.microaggregation.stratum_seed` derives from the step seed
    and the stratum. The details give the strata (number, smallest and largest) and the group
    sizes over all strata.

    Parameters
    ----------
    columns : list of str, optional
        The columns aggregated (required unless ``groups`` are given).
    k : int, default 3
        Minimum group size (>= 1, at most the number of records).
    method : str, default "mdav"
        ``mdav`` (:func:`~sdckit.masking.microaggregation.mdav`), ``vmdav``,
        ``optimal_univariate`` and ``individual_ranking`` (each column on its own),
        ``categorical`` (mixed data, Gower distance), ``kanonymity`` (the columns are the
        quasi-identifiers, aggregated jointly) or ``fuzzy``. Each takes only its own
        parameters below.
    groups : list of lists of str, optional
        mdav, vmdav: attribute groups aggregated separately (then ``columns`` may be left out).
    centroid : {"mean", "median"}, default "mean"
        mdav, vmdav: the group representative.
    standardize : bool, default True
        mdav, vmdav: partition on z-scores (False: raw values).
    gamma : float, default 0.2
        vmdav: group extension threshold (>= 0).
    order : mapping of str to list, optional
        categorical: ordinal columns and their categories in order.
    m : float, default 1.5
        fuzzy: the fuzzifier (> 1).
    max_iter : int, default 100
        fuzzy: fuzzy c-means iterations at most (>= 1).
    tol : float, default 1e-6
        fuzzy: convergence threshold on the centre moves (> 0).
    strata : list of str, optional
        Microaggregate within the strata: the groups of records with equal values of these
        columns (sdcMicro's ``strata_variables``); every stratum needs at least ``k`` records
        (a smaller one is a DataError naming it). Needed on the Spark engine, where every
        stratum is aggregated on one executor.
    block_by, block_size : list of str, int, optional
        Instead of ``strata``: strata of ``block_size`` consecutive records along the sort key
        ``block_by`` (ascending, missing last, ties in row order; the last block takes the
        remainder, so blocks hold ``block_size`` to ``2 block_size - 1`` records). Give both;
        ``block_size >= k``.

    References
    ----------
    Domingo-Ferrer, J. & Torra, V. (2005). Ordinal, continuous and heterogeneous k-anonymity
    through microaggregation. Data Mining and Knowledge Discovery 11(2). Solanas, A. &
    Martinez-Balleste, A. (2006). V-MDAV. COMPSTAT 2006. Hansen, S. L. & Mukherjee, S.
    (2003). A polynomial algorithm for optimal univariate microaggregation. IEEE TKDE 15(4).
    Torra, V. (2017). Fuzzy microaggregation for the transparency principle. Journal of
    Applied Logic 23.
    """

    spec_name: ClassVar[str] = "microaggregation"
    spark_hook: ClassVar[str | None] = "sdckit.spark.strata:microaggregation_spark"
    engines: ClassVar[frozenset[str]] = LOCAL_AND_SPARK

    columns: ColumnList | None = None
    k: Count = 3
    method: Literal[
        "mdav",
        "vmdav",
        "optimal_univariate",
        "individual_ranking",
        "categorical",
        "kanonymity",
        "fuzzy",
    ] = "mdav"
    groups: NonEmptyList | None = None
    centroid: Literal["mean", "median"] = "mean"
    standardize: Boolean = True
    gamma: Annotated[Number, Field(ge=0)] = 0.2
    order: NonEmptyMapping | None = None
    m: Annotated[Number, Field(gt=1)] = 1.5
    max_iter: Count = 100
    tol: Positive = 1e-6
    strata: ColumnList | None = None
    block_by: ColumnList | None = None
    block_size: Count | None = None

    @field_validator(
        "groups", "centroid", "standardize", "gamma", "order", "m", "max_iter", "tol", mode="before"
    )
    @classmethod
    def _taken_by_the_method(cls, value: Any, info: ValidationInfo) -> Any:
        """A parameter of one variant given to another is an error (runs only when given)."""
        method = info.data.get("method")
        if not isinstance(method, str) or method not in VARIANTS:
            return value
        allowed = VARIANTS.traits(method).parameters
        if info.field_name not in allowed:
            raise ValueError(
                f"is not a parameter of method {method!r}; allowed for it: {', '.join(allowed)}"
            )
        return value

    @model_validator(mode="after")
    def _columns_or_groups(self) -> Self:
        if self.columns is None and self.groups is None:
            raise ValueError("columns is required (or, for mdav/vmdav, groups)")
        if (self.block_by is None) != (self.block_size is None):
            raise ValueError(
                "give block_by and block_size together (blocks of block_size records along "
                "the sort key block_by)"
            )
        if self.block_by is not None and self.strata is not None:
            raise ValueError("give strata or block_by/block_size, not both")
        if self.block_size is not None and self.block_size < self.k:
            raise ValueError(
                f"block_size={self.block_size} must be at least k={self.k} (every block is "
                "microaggregated on its own)"
            )
        return self

    def _active(self) -> tuple[str, ...]:
        """The variant's parameters; the strata ones only when given (a job file without
        strata reads as before)."""
        return tuple(
            n
            for n in VARIANTS.traits(self.method).parameters
            if n not in _MA_STRATA or getattr(self, n) is not None
        )

    @property
    def stratified(self) -> bool:
        """True when the step aggregates within strata or blocks."""
        return self.strata is not None or self.block_by is not None

    def strata_spec(self) -> dict[str, Any]:
        """How the strata are formed, as the step's parameters say it: ``{"strata": [...]}``
        or ``{"block_by": [...], "block_size": n}``; empty without strata."""
        if self.strata is not None:
            return {"strata": list(self.strata)}
        if self.block_by is not None:
            return {"block_by": list(self.block_by), "block_size": int(self.block_size or 0)}
        return {}

    def unstratified(self) -> Microaggregation:
        """The same step without strata: what runs within each stratum."""
        return self.with_params(strata=None, block_by=None, block_size=None)

    def plan(  # type: ignore[override]  # released per stratum, not per block of records
        self, stats: ColumnStats, seed: int | None = None
    ) -> MicroaggregationPlan:
        """The step's plan, read through ``stats``: the strata (or block) columns, if any,
        and the aggregated columns present, the function the variant runs (``kanonymity``:
        :func:`kanonymity_via`), and the data checks of :func:`check_complete` (numbers for
        every variant but ``categorical`` and a non-numeric ``kanonymity``)."""
        strata = (
            stats.check_columns(list(self.strata or self.block_by or [])) if self.stratified else []
        )
        cols = stats.check_columns(
            list(self.columns or [c for g in (self.groups or []) for c in g])
        )
        function = VARIANTS.load(self.method).__name__
        if self.method == "kanonymity":
            function = kanonymity_via(stats, cols)
        numbers = function != "categorical_microaggregation"
        check_complete(stats, cols, function, numbers)
        return MicroaggregationPlan(self, cols, strata, numbers, function)

    def check_records(self, n: int, where: str) -> None:
        """k larger than the number of records is refused before any step runs."""
        if self.k > n:
            raise ParameterError(
                f"{where}.k: k={self.k} is larger than the {n} rows of the data; "
                "choose k <= the number of rows"
            )

    def apply(self, data: pd.DataFrame, rng: Rng = None) -> list[MaskResult]:
        """Aggregate (see :meth:`MaskingMethod.apply`; only ``fuzzy`` draws random numbers;
        a generator given as ``rng`` gives it an integer seed drawn from it). With strata or
        blocks: :meth:`apply_within_strata`."""
        if self.stratified:
            return self.apply_within_strata(data, rng)
        return self._apply_whole(data, rng)

    def apply_within_strata(self, data: pd.DataFrame, rng: Rng = None) -> list[MaskResult]:
        """Aggregate every stratum on its own (:func:`~sdckit.masking.microaggregation.
        strata_labels`) and merge the records (:func:`~sdckit.masking.microaggregation.
        merge_stratum_details`). A loop over strata, not records."""
        labels, keys = strata_labels(data, self.strata, self.block_by, self.block_size)
        if isinstance(rng, np.random.Generator):
            rng = int(rng.integers(2**63))
        base = None if rng is None else int(rng)
        inner = self.unstratified()
        order = np.argsort(labels, kind="stable")
        sizes = np.bincount(labels, minlength=len(keys))
        bounds = np.concatenate(([0], np.cumsum(sizes)))
        per_stratum: list[list[MaskResult]] = []
        for s, key in enumerate(keys):
            check_stratum_size(int(sizes[s]), self.k, key, "microaggregation")
            rows = order[bounds[s] : bounds[s + 1]]
            per_stratum.append(inner._apply_whole(data.iloc[rows], stratum_seed(base, key)))
        combined = pd.concat([r[-1].data for r in per_stratum]).iloc[np.argsort(order)]
        combined.index = data.index
        out = data.copy()
        for c in _result_columns(per_stratum[0]):
            out[c] = combined[c]
        summary = strata_summary(self.strata_spec(), sizes.tolist(), keys)
        results = []
        for j, first in enumerate(per_stratum[0]):
            params = {k: v for k, v in first.parameters.items() if k != "seed"}
            params.update(self.strata_spec())
            details = merge_stratum_details([r[j].details for r in per_stratum], summary)
            results.append(MaskResult(out, first.method, params, details))
        return results

    def _apply_whole(self, data: pd.DataFrame, rng: Rng = None) -> list[MaskResult]:
        cols, k = self.columns, self.k
        function = VARIANTS.load(self.method)
        if self.method in ("mdav", "vmdav"):
            extra = (self.gamma,) if self.method == "vmdav" else ()
            return [function(data, cols, k, *extra, self.groups, self.centroid, self.standardize)]
        listed = list(cols or ())
        if self.method == "optimal_univariate":
            return _per_column(function, data, listed, k=k)
        if self.method == "individual_ranking":
            return [function(data, cols, k)]
        if self.method == "categorical":
            return [function(data, cols, k, self.order)]
        if self.method == "kanonymity":
            return [function(data, listed, k)]
        if isinstance(rng, np.random.Generator):  # the engine records an integer seed
            rng = int(rng.integers(2**63))
        seed = None if rng is None else int(rng)
        return [function(data, cols, k, self.m, seed=seed, max_iter=self.max_iter, tol=self.tol)]
