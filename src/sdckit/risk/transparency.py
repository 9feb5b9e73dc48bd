"""Transparency attacks: record linkage by an intruder who knows the masking method.

Nin, Herranz & Torra (2008), "Rethinking rank swapping to decrease disclosure risk", *Data &
Knowledge Engineering* 64(1):346-364, and Nin, Herranz & Torra (2008), "On the disclosure risk
of multivariate microaggregation", *DKE* 67(3):399-412 (see also Torra, *Data Privacy:
Foundations, New Developments and the Big Data Challenge*, Springer 2017, sec. 6.1.2
"transparency attacks"): if the intruder knows that attribute ``j`` was protected by a
method with known parameters, his record ``x`` can only correspond to the protected records
``B_j(x)`` whose ``j``-th value could have been produced from ``x_j``. The true record lies in
``B(x) = intersection over j of B_j(x)``; a singleton is a certain re-identification, and
otherwise the intruder links by distance inside ``B(x)`` (RSLD: rank-swapping linkage with
distance).

For both supported methods every ``B_j(x)`` is a value interval of the protected column, i.e.
a contiguous range of that column's sorted order; the intersection is computed for all
records at once with sorted arrays and index arithmetic (candidates are taken from the
smallest ``B_j`` and filtered by the rank position in every other attribute).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from sdckit.errors import DataError, SdcInputError, preview
from sdckit.risk.linkage import TIE_RTOL, align_pair, numeric_block, resolve_columns, rows_subset

#: Upper bound on the number of candidate (record, protected record) pairs held at once.
CHUNK_PAIRS = 4_000_000


@dataclass(frozen=True)
class TransparencyResult:
    """Outcome of a transparency attack.

    ``certain_matches``: share of intruder records whose candidate set ``B(x)`` is exactly
    their own protected record. ``reidentified``: share re-identified when the intruder also
    links by (Euclidean, z-score) distance inside ``B(x)`` (ties count ``1/t``).
    ``contains_true``: share of sets that contain the true record (1.0 whenever the assumed
    method and parameters are the ones used). Candidate sets are stored in CSR form
    (``indptr``, ``indices``: positions in the protected file); :meth:`candidates` returns
    one of them.
    """

    method: str
    parameter: dict
    certain_matches: float
    reidentified: float
    contains_true: float
    mean_set_size: float
    n_empty: int
    n_intruder: int
    columns: list[str]
    intruder_rows: np.ndarray = field(repr=False)
    set_sizes: np.ndarray = field(repr=False)
    indptr: np.ndarray = field(repr=False)
    indices: np.ndarray = field(repr=False)
    credit: np.ndarray = field(repr=False)

    def candidates(self, i: int) -> np.ndarray:
        """Sorted protected-file positions in ``B(x)`` for the ``i``-th intruder record."""
        return self.indices[self.indptr[i] : self.indptr[i + 1]]

    def to_dict(self) -> dict:
        """JSON-ready summary."""
        return {
            "method": self.method,
            "parameter": {
                k: (int(v) if isinstance(v, int | np.integer) else float(v))
                for k, v in self.parameter.items()
            },
            "certain_matches": float(self.certain_matches),
            "reidentified": float(self.reidentified),
            "contains_true": float(self.contains_true),
            "mean_set_size": float(self.mean_set_size),
            "n_empty": int(self.n_empty),
            "n_intruder": int(self.n_intruder),
            "columns": list(self.columns),
        }


# --------------------------------------------------------------------------------------------
# per-attribute candidate intervals
# --------------------------------------------------------------------------------------------
def rank_swap_bounds(sorted_col: np.ndarray, x: np.ndarray, window: int):
    """Value interval of the protected values that rank swapping (window ``w``) can put in
    place of ``x``.

    Rank swapping exchanges values whose ranks differ by at most ``w`` (Moore 1996; sdcMicro
    ``rankSwap``: ``|i - j| <= P N / 100``), and the protected column holds the original
    values permuted. If ``x`` occupies the ranks ``left..right`` of the sorted column (its run
    of ties; ``right = left - 1`` when ``x`` does not occur), a protected value can come from
    ``x`` iff one of its ranks is within ``w`` of that run: the values from rank
    ``left - w`` to ``right + w`` (clipped). On ranks ``1..n`` this is ``|x' - x| <= w``.
    """
    n = sorted_col.size
    left = np.searchsorted(sorted_col, x, side="left")
    right = np.searchsorted(sorted_col, x, side="right") - 1
    lo = sorted_col[np.clip(left - window, 0, n - 1)]
    hi = sorted_col[np.clip(right + window, 0, n - 1)]
    return lo, hi


def microaggregation_bounds(sorted_col: np.ndarray, x: np.ndarray, tied: np.ndarray | None = None):
    """Value interval of the (at most two) univariate-microaggregation clusters that can
    contain ``x``.

    Optimal univariate microaggregation (Hansen & Mukherjee 2003) and individual ranking
    form clusters of consecutive sorted values, each published as its mean ``c_g`` with
    ``c_1 < c_2 < ...``. Since the value ranges of the clusters are ordered and each contains
    its mean, ``c_g < x < c_{g+1}`` allows only clusters ``g`` and ``g + 1``, ``x = c_g``
    only ``g``, ``x < c_1`` only the first and ``x > c_G`` only the last: the interval is
    ``[largest c <= x, smallest c >= x]`` (Nin, Herranz & Torra 2008).

    That holds for distinct original values. A value tied with others (``tied`` true) can be
    split across a cluster boundary: with 0, 0, 0, 0, 1, 2 and ``k = 3`` the clusters are
    {0, 0, 0} -> 0 and {0, 1, 2} -> 1, so a 0 can be published as 1 although a centroid equals
    0. For tied ``x`` the interval is ``[largest c < x, smallest c > x]`` (the first/last
    centroid when there is none), which still contains the true centroid ``c*``: a cluster
    before the true one ends where the true one starts, so its mean is ``<= min(c*, x)``; one
    after it starts where the true one ends, so its mean is ``>= max(c*, x)``. Hence no
    centroid lies strictly between ``c*`` and ``x``.
    """
    cents = np.unique(sorted_col)
    g = cents.size
    below = np.searchsorted(cents, x, side="right") - 1  # largest centroid <= x
    above = np.searchsorted(cents, x, side="left")  # smallest centroid >= x
    if tied is not None:
        below = np.where(tied, np.searchsorted(cents, x, side="left") - 1, below)  # < x
        above = np.where(tied, np.searchsorted(cents, x, side="right"), above)  # > x
    lo = cents[np.clip(below, 0, g - 1)]
    hi = cents[np.clip(above, 0, g - 1)]
    return lo, hi


def _tie_aware_microaggregation_bounds(sorted_col: np.ndarray, x: np.ndarray):
    """:func:`microaggregation_bounds` with ``tied`` = the intruder's value occurs more than
    once among the intruder's own values of the column."""
    _, inverse, counts = np.unique(x, return_inverse=True, return_counts=True)
    return microaggregation_bounds(sorted_col, x, tied=counts[inverse.ravel()] > 1)


# --------------------------------------------------------------------------------------------
# intersection of interval candidate sets, vectorized
# --------------------------------------------------------------------------------------------
def intersect_interval_sets(
    protected: np.ndarray, lo: np.ndarray, hi: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """CSR ``(indptr, indices)`` of ``{r : lo[i, j] <= protected[r, j] <= hi[i, j] for all j}``.

    Each ``B_j`` is a range ``[a_ij, b_ij)`` of the column's sorted order; candidates come from
    the smallest range and are kept when their sorted position lies in every other range.
    Work and memory are ``O(sum_i min_j |B_j(x_i)|)``, processed in chunks.
    """
    n, d = protected.shape
    m = lo.shape[0]
    order = np.argsort(protected, axis=0, kind="stable").T.copy()  # (d, n)
    position = np.empty_like(order)
    ar = np.arange(n)
    for j in range(d):
        position[j, order[j]] = ar
    sorted_vals = np.take_along_axis(protected, order.T, axis=0)
    a = np.empty((m, d), dtype=np.int64)
    b = np.empty((m, d), dtype=np.int64)
    for j in range(d):
        a[:, j] = np.searchsorted(sorted_vals[:, j], lo[:, j], side="left")
        b[:, j] = np.searchsorted(sorted_vals[:, j], hi[:, j], side="right")
    size = np.maximum(b - a, 0)
    jstar = size.argmin(axis=1)
    length = size[np.arange(m), jstar]
    cum = np.concatenate(([0], np.cumsum(length)))
    rec_parts: list[np.ndarray] = []
    cand_parts: list[np.ndarray] = []
    start = 0
    while start < m:
        # records start..stop-1 whose candidate total stays under CHUNK_PAIRS (at least one)
        stop = int(np.searchsorted(cum, cum[start] + CHUNK_PAIRS, side="right")) - 1
        stop = min(max(stop, start + 1), m)
        lens = length[start:stop]
        total = int(lens.sum())
        if total:
            rec = np.repeat(np.arange(start, stop), lens)
            offs = np.arange(total) - np.repeat(cum[start:stop] - cum[start], lens)
            pos = a[rec, jstar[rec]] + offs
            cand = order[jstar[rec], pos]
            keep = np.ones(total, dtype=bool)
            for j in range(d):
                pj = position[j, cand]
                keep &= (pj >= a[rec, j]) & (pj < b[rec, j])
            rec_parts.append(rec[keep])
            cand_parts.append(cand[keep])
        start = stop
    rec_all = np.concatenate(rec_parts) if rec_parts else np.empty(0, dtype=np.int64)
    cand_all = np.concatenate(cand_parts) if cand_parts else np.empty(0, dtype=np.int64)
    srt = np.lexsort((cand_all, rec_all))
    indices = cand_all[srt].astype(np.int64)
    counts = np.bincount(rec_all, minlength=m)
    indptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    return indptr, indices


def _distance_credit(
    zq: np.ndarray, zp: np.ndarray, truth: np.ndarray, indptr: np.ndarray, indices: np.ndarray
) -> np.ndarray:
    """Per record: ``1/t`` if the true record is among the ``t`` candidates nearest to it."""
    m = zq.shape[0]
    counts = np.diff(indptr)
    rec = np.repeat(np.arange(m), counts)
    credit = np.zeros(m)
    if indices.size == 0:
        return credit
    dist = np.sqrt(((zq[rec] - zp[indices]) ** 2).sum(axis=1))
    nonempty = counts > 0
    mins = np.full(m, np.inf)
    mins[nonempty] = np.minimum.reduceat(dist, indptr[:-1][nonempty])
    at_min = dist <= mins[rec] + TIE_RTOL * (1.0 + mins[rec])
    t = np.bincount(rec, weights=at_min, minlength=m)
    true_at_min = np.bincount(rec, weights=at_min & (indices == truth[rec]), minlength=m)
    credit[nonempty] = true_at_min[nonempty] / t[nonempty]
    return credit


def _attack(method, parameter, original_intruder, protected, columns, intruder_rows, bounds):
    cols = resolve_columns(original_intruder, columns)
    protected = align_pair(original_intruder, protected, original_name="intruder file")
    x_all = numeric_block(original_intruder, cols, "the intruder file")
    y = numeric_block(protected, cols, "protected file")
    n = y.shape[0]
    if n == 0:
        raise SdcInputError("the files have no records")
    rows = rows_subset(intruder_rows, n)
    x = x_all[rows]
    sorted_cols = np.sort(y, axis=0)
    lo = np.empty_like(x)
    hi = np.empty_like(x)
    for j in range(len(cols)):
        lo[:, j], hi[:, j] = bounds(sorted_cols[:, j], x[:, j])
    indptr, indices = intersect_interval_sets(y, lo, hi)
    sizes = np.diff(indptr)
    rec = np.repeat(np.arange(rows.size), sizes)
    contains = np.bincount(rec, weights=indices == rows[rec], minlength=rows.size) > 0
    singles = sizes == 1
    certain = singles & contains
    # distance linkage inside B(x), on z-scores of the protected file (known to the intruder)
    mean = y.mean(axis=0)
    sd = y.std(axis=0, ddof=1) if n > 1 else np.zeros(len(cols))
    const = [c for c, s in zip(cols, sd, strict=True) if not s > 0]
    if const:
        raise DataError(
            f"column {preview(const)} is constant in the protected file (zero variance); it "
            "gives no information for linkage: drop it from columns"
        )
    credit = _distance_credit((x - mean) / sd, (y - mean) / sd, rows, indptr, indices)
    m = rows.size
    return TransparencyResult(
        method=method,
        parameter=parameter,
        certain_matches=float(certain.sum() / m),
        reidentified=float(credit.sum() / m),
        contains_true=float(contains.sum() / m),
        mean_set_size=float(sizes.mean()),
        n_empty=int((sizes == 0).sum()),
        n_intruder=int(m),
        columns=cols,
        intruder_rows=rows,
        set_sizes=sizes,
        indptr=indptr,
        indices=indices,
        credit=credit,
    )


# --------------------------------------------------------------------------------------------
# public API
# --------------------------------------------------------------------------------------------
def rank_swap_attack(
    original_intruder: pd.DataFrame,
    protected: pd.DataFrame,
    columns: str | Sequence[str] | None = None,
    p_percent: float | None = None,
    window: int | None = None,
    intruder_rows=None,
) -> TransparencyResult:
    """Transparency attack on rank swapping (Nin, Herranz & Torra 2008, DKE 64).

    The intruder knows his records' original values (rows of ``original_intruder``, row-aligned
    with ``protected``; optionally only ``intruder_rows``) and that each attribute in
    ``columns`` was rank swapped with parameter ``p_percent`` (swap partners' ranks differ by
    at most ``window = floor(p_percent * n / 100)`` ranks, ``n`` the number of protected
    records, as sdcMicro's ``rankSwap(P=...)``), or directly the rank ``window``.
    ``B_j(x)`` holds the protected records whose ``j``-th value has a rank within ``window``
    of ``x_j``'s rank (:func:`rank_swap_bounds`); ``B(x)`` is their intersection.
    Returns the share of certain matches (``B(x)`` = the true record alone) and of records
    re-identified when also linking by distance inside ``B(x)`` (RSLD), plus every set.
    """
    if (p_percent is None) == (window is None):
        raise SdcInputError("give exactly one of p_percent (in % of n) or window (in ranks)")
    n = len(protected)
    if window is None:
        assert p_percent is not None  # exactly one of the two is given (checked above)
        if not (np.isfinite(p_percent) and 0 <= p_percent <= 100):
            raise SdcInputError(f"p_percent={p_percent!r} must lie in [0, 100]")
        w = int(np.floor(p_percent * n / 100.0 + 1e-9))
        parameter = {"p_percent": float(p_percent), "window": w}
    else:
        if not (isinstance(window, int | np.integer) and window >= 0):
            raise SdcInputError(f"window={window!r} must be an integer number of ranks >= 0")
        w = int(window)
        parameter = {"window": w}
    return _attack(
        "rank_swap",
        parameter,
        original_intruder,
        protected,
        columns,
        intruder_rows,
        lambda s, x: rank_swap_bounds(s, x, w),
    )


def microaggregation_attack(
    original_intruder: pd.DataFrame,
    protected: pd.DataFrame,
    columns: str | Sequence[str] | None = None,
    k: int = 3,
    intruder_rows=None,
) -> TransparencyResult:
    """Transparency attack on univariate (individual-ranking / optimal univariate)
    microaggregation with minimum group size ``k`` (Nin, Herranz & Torra 2008, DKE 67).

    In each attribute the protected values are cluster means of consecutive sorted values;
    ``B_j(x)`` is the union of the at most two clusters whose value range can contain ``x_j``
    (:func:`microaggregation_bounds`), ``B(x)`` their intersection. ``k`` is checked against
    the protected file: every published value must be shared by at least ``k`` records.
    Values the intruder holds more than once in a column get the wider tie-aware interval, so
    ``B(x)`` holds the true record whenever the file is such a microaggregation and every tie
    of an intruder value lies among the intruder's records (always when the intruder holds
    the whole original file, the data protector's worst case).
    """
    if not (isinstance(k, int | np.integer) and k >= 1):
        raise SdcInputError(f"k={k!r} must be an integer >= 1 (minimum cluster size)")
    cols = resolve_columns(original_intruder, columns)
    y = numeric_block(protected, cols, "protected file")
    for j, col in enumerate(cols):
        vals, counts = np.unique(y[:, j], return_counts=True)
        small = vals[counts < k]
        if small.size:
            raise DataError(
                f"column {col!r} of the protected file has values {preview(small.tolist())} "
                f"shared by fewer than k={k} records, so it is not a univariate "
                "microaggregation with that k; check k or the column"
            )
    return _attack(
        "microaggregation",
        {"k": int(k)},
        original_intruder,
        protected,
        cols,
        intruder_rows,
        _tie_aware_microaggregation_bounds,
    )
