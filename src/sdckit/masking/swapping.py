"""Swapping: rank swapping (and two variants), data swapping, targeted record swapping.

* Rank swapping (Moore 1996, "Controlled data-swapping techniques for masking public use
  microdata sets", US Census Bureau RR96/04; Domingo-Ferrer & Torra 2001, "A quantitative
  comparison of disclosure control methods for microdata", in *Confidentiality, Disclosure and
  Data Access*, 111-134): per attribute, values are ranked and each value is swapped with a
  random not yet swapped value whose rank is at most ``p`` percent of ``n`` above it.
* Rank swapping p-buckets and p-distribution (Nin, Herranz & Torra 2008, "Rethinking rank
  swapping to decrease disclosure risk", Data & Knowledge Engineering 64(1), 346-364).
* Data swapping of categorical attributes between records that agree on matching variables
  (Dalenius & Reiss 1982, "Data-swapping: a technique for disclosure control", Journal of
  Statistical Planning and Inference 6, 73-85).
* Targeted record swapping of households across geographic areas (sdcMicro's ``recordSwap``,
  J. Gussenbauer; the SDC method recommended for the European 2021 census round).

The sequential parts (every swap changes which values are still available) are numba
kernels; all random numbers are drawn beforehand from ``numpy.random.default_rng(seed)``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Annotated, Any, ClassVar, Literal

import numpy as np
import pandas as pd
from numba import njit
from pydantic import AliasChoices, Field, model_validator

from sdckit.core.encoding import as_text, encode
from sdckit.core.frequency import group_keys
from sdckit.core.spec import (
    ColumnList,
    ColumnName,
    NonEmptyList,
    Number,
)
from sdckit.errors import DataError, ParameterError
from sdckit.masking.base import (
    MaskResult,
    accepts_series,
    check_columns,
    integer_like,
    numeric_matrix,
)
from sdckit.masking.spec import (
    Count,
    MaskingMethod,
    Probability,
    Rng,
)

_SCAN_WINDOW = 32  # windows up to this many ranks are scanned linearly, larger ones by Fenwick

# --------------------------------------------------------------------------- ranked bitset
# The ranks still available are a bitset (one bit per rank, 64 per word) plus a Fenwick tree
# over the per-word counts. It gives, in O(log(n/64)) plus a few word operations, the number
# of available ranks before a position and the position of the k-th available rank -- so
# choosing a uniformly random available rank inside a window never costs O(window), and the
# tree (n/64 counters) stays in cache.

_ONES = np.uint64(0xFFFFFFFFFFFFFFFF)


@njit(cache=True)
def _popcount(x):
    """Number of set bits of a uint64 (SWAR)."""
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return np.int64((x * np.uint64(0x0101010101010101)) >> np.uint64(56))


@njit(cache=True)
def _select_in_word(w, k):
    """Bit position of the ``k``-th (1-based) set bit of ``w`` (binary search by popcount)."""
    pos = 0
    width = 32
    while width > 0:
        c = _popcount(w & ((np.uint64(1) << np.uint64(width)) - np.uint64(1)))
        if c < k:
            k -= c
            w >>= np.uint64(width)
            pos += width
        width >>= 1
    return pos


@njit(cache=True)
def _bs_new(n):
    """All ranks ``0..n-1`` available: (bit words, Fenwick tree over the word counts)."""
    nb = max((n + 63) >> 6, 1)
    mask = np.full(nb, _ONES)
    rem = n - (nb - 1) * 64
    if rem < 64:
        mask[nb - 1] = (np.uint64(1) << np.uint64(rem)) - np.uint64(1)
    tree = np.zeros(nb + 1, dtype=np.int64)
    for b in range(nb):
        i = b + 1
        tree[i] += 64 if b < nb - 1 else rem
        j = i + (i & (-i))
        if j <= nb:
            tree[j] += tree[i]
    return mask, tree


@njit(cache=True)
def _bs_clear(mask, tree, j):
    """Mark rank ``j`` as taken."""
    b = j >> 6
    mask[b] &= ~(np.uint64(1) << np.uint64(j & 63))
    nb = tree.shape[0] - 1
    i = b + 1
    while i <= nb:
        tree[i] -= 1
        i += i & (-i)


@njit(cache=True)
def _bs_prefix(mask, tree, j):
    """Number of available ranks among ``0 .. j-1``."""
    b = j >> 6
    s = 0
    i = b
    while i > 0:
        s += tree[i]
        i -= i & (-i)
    if (j & 63) and b < mask.shape[0]:
        s += _popcount(mask[b] & ((np.uint64(1) << np.uint64(j & 63)) - np.uint64(1)))
    return s


@njit(cache=True)
def _bs_select(mask, tree, k, top):
    """Rank of the ``k``-th available rank (``k >= 1``); ``top`` = largest power of 2 <= words."""
    nb = tree.shape[0] - 1
    pos = 0
    step = top
    while step > 0:
        nxt = pos + step
        if nxt <= nb and tree[nxt] < k:
            pos = nxt
            k -= tree[nxt]
        step >>= 1
    return (pos << 6) + _select_in_word(mask[pos], k)


def _top(n: int) -> int:
    """Largest power of two not above the number of bit words for ``n`` ranks."""
    words = max((n + 63) >> 6, 1)
    return 1 << (words.bit_length() - 1)


@njit(cache=True)
def _order_keys(v):
    """uint64 keys whose unsigned order is the numeric order of the (non-NaN) float64 ``v``."""
    n = v.shape[0]
    bits = v.view(np.uint64)
    sign = np.uint64(1) << np.uint64(63)
    keys = np.empty(n, dtype=np.uint64)
    for i in range(n):
        b = bits[i]
        keys[i] = ~b if (b & sign) else (b | sign)
    return keys


@njit(cache=True)
def _radix_argsort(keys):
    """Stable argsort of uint64 keys: LSD radix sort, 8 bits per pass (constant digits skipped).

    The same permutation as ``np.argsort(..., kind="stable")``, several times faster for
    millions of values (NumPy's stable sort is a merge sort for 64-bit keys).
    """
    n = keys.shape[0]
    cnt = np.zeros((8, 257), dtype=np.int64)
    for i in range(n):
        k = keys[i]
        for p in range(8):
            cnt[p, ((k >> np.uint64(8 * p)) & np.uint64(255)) + 1] += 1
    idx = np.arange(n)
    tmp = np.empty(n, dtype=np.int64)
    kcur = keys.copy()
    ktmp = np.empty(n, dtype=np.uint64)
    for p in range(8):
        constant = False
        for d in range(1, 257):
            if cnt[p, d] == n:
                constant = True
        if constant:
            continue
        c = cnt[p]
        for d in range(1, 257):
            c[d] += c[d - 1]
        sh = np.uint64(8 * p)
        for i in range(n):
            k = kcur[i]
            d = (k >> sh) & np.uint64(255)
            pos = c[d]
            c[d] = pos + 1
            tmp[pos] = idx[i]
            ktmp[pos] = k
        idx, tmp = tmp, idx
        kcur, ktmp = ktmp, kcur
    return idx


def _stable_order(vals: np.ndarray) -> np.ndarray:
    """Stable argsort of finite/inf float64 values (``-0.0`` equals ``0.0``)."""
    if len(vals) < 65536:
        return np.argsort(vals, kind="stable")
    return _radix_argsort(_order_keys(vals + 0.0))  # + 0.0 turns -0.0 into 0.0


# --------------------------------------------------------------------------- rank kernels


@njit(cache=True)
def _rank_swap_kernel(n, w, u, top):
    """Partner of every rank under classic rank swapping with window ``w`` ranks.

    Ranks are visited in increasing order; an unswapped rank ``i`` is swapped with the
    ``floor(u[i] * c)``-th unswapped rank of ``(i, i + w]`` (``c`` of them), else it stays.
    ``c`` is maintained incrementally: ranks beyond ``i - 1 + w`` were never chosen.
    """
    perm = np.arange(n)
    if w <= 0 or n < 2:
        return perm
    partner = np.zeros(n, dtype=np.uint8)
    use_tree = w > _SCAN_WINDOW
    mask, tree = _bs_new(n if use_tree else 1)
    c = min(w, n - 1)  # available ranks in (0, w]
    ones_through = 0  # available ranks in [0, i]  (ranks never chosen as partner)
    for i in range(n):
        if i > 0:
            if partner[i] == 0:
                c -= 1  # rank i leaves the window
            if i + w < n:
                c += 1  # rank i + w enters it (never chosen yet)
        if partner[i] == 1:
            continue
        ones_through += 1
        if c <= 0:
            continue
        r = int(u[i] * c)
        if r >= c:
            r = c - 1
        if use_tree:
            j = _bs_select(mask, tree, ones_through + r + 1, top)
            _bs_clear(mask, tree, j)
        else:
            j = i
            while True:
                j += 1
                if partner[j] == 0:
                    if r == 0:
                        break
                    r -= 1
        partner[j] = 1
        c -= 1
        perm[i] = j
        perm[j] = i
    return perm


@njit(cache=True)
def _p_buckets_kernel(n, b, u, top):
    """Partners under rank swapping p-buckets with buckets of ``b`` consecutive ranks.

    For an unswapped rank in bucket ``r`` a bucket ``s >= r`` holding an available rank is
    chosen with probability proportional to ``2^-(s - r + 1)`` (weights below 2^-60 of the
    largest are dropped: they are beneath double precision), then a uniformly random available
    rank of that bucket (Nin, Herranz & Torra 2008).
    """
    perm = np.arange(n)
    if n < 2:
        return perm
    K = (n + b - 1) // b
    pw = np.empty(61)
    for d in range(61):
        pw[d] = 2.0 ** (-d)  # relative weight of the bucket d places after the first valid one
    cnt = np.full(K, b, dtype=np.int64)
    cnt[K - 1] = n - (K - 1) * b
    partner = np.zeros(n, dtype=np.uint8)
    mask, tree = _bs_new(n)
    for i in range(n):
        if partner[i] == 1:
            continue
        r = i // b
        _bs_clear(mask, tree, i)
        cnt[r] -= 1
        first = -1
        last = -1
        total = 0.0
        s = r
        while s < K:
            if cnt[s] > 0:
                if first < 0:
                    first = s
                if s - first > 60:
                    break
                total += pw[s - first]
                last = s
            s += 1
        if first < 0:
            continue
        target = u[i, 0] * total
        acc = 0.0
        before = 0  # available ranks in buckets r .. s-1 (all ranks <= i are taken)
        s = r
        chosen = last
        while s < last:
            if cnt[s] > 0:
                acc += pw[s - first]
                if acc > target:
                    chosen = s
                    break
            before += cnt[s]
            s += 1
        k = int(u[i, 1] * cnt[chosen])
        if k >= cnt[chosen]:
            k = cnt[chosen] - 1
        j = _bs_select(mask, tree, before + k + 1, top)
        _bs_clear(mask, tree, j)
        cnt[chosen] -= 1
        partner[j] = 1
        perm[i] = j
        perm[j] = i
    return perm


@njit(cache=True)
def _p_distribution_kernel(n, offsets, top):
    """Partners under rank swapping p-distribution: rank ``i`` goes to the first available
    rank at or after ``i + max(offsets[i], 1)`` (or the last available one if none)."""
    perm = np.arange(n)
    partner = np.zeros(n, dtype=np.uint8)
    mask, tree = _bs_new(n)
    avail = n
    for i in range(n):
        if partner[i] == 1:
            continue
        _bs_clear(mask, tree, i)
        avail -= 1
        if avail <= 0:
            break
        d = offsets[i]
        if d < 1:
            d = 1
        t = i + d
        if t > n - 1:
            t = n - 1
        k = _bs_prefix(mask, tree, t) + 1
        if k > avail:
            k = avail
        j = _bs_select(mask, tree, k, top)
        _bs_clear(mask, tree, j)
        avail -= 1
        partner[j] = 1
        perm[i] = j
        perm[j] = i
    return perm


# --------------------------------------------------------------------------- rank helpers


def _check_percent(p: float, name: str, method: str) -> float:
    try:
        v = float(p)
    except (TypeError, ValueError):
        raise ParameterError(
            f"{method}: {name}={p!r} is not a number; give a percentage of the "
            "number of records in (0, 100], e.g. 5"
        ) from None
    if not (0.0 < v <= 100.0):
        raise ParameterError(
            f"{method}: {name}={p!r} must be a percentage of the number of records "
            f"in (0, 100], e.g. {name}=5 for 5 percent (not a fraction)"
        )
    return v


def _rank_apply(
    data: pd.DataFrame, cols: list[str], method: str, partner_fn
) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Rank each column (missing values left out and left in place), let ``partner_fn(m, j)``
    give the partner of every rank, and write the swapped values back (dtype kept)."""
    x = numeric_matrix(data, cols, method)
    out = data.copy()
    info: dict[str, Any] = {}
    for j, c in enumerate(cols):
        col = x[:, j]
        nan = np.isnan(col)
        ok = np.flatnonzero(~nan) if nan.any() else None
        vals = col if ok is None else col[ok]
        m = len(vals)
        order = _stable_order(vals)
        perm, extra = partner_fn(m, j)
        # the record of rank i receives the value of rank perm[i]
        new = np.empty(m)
        new[order] = vals[order[perm]]
        if ok is None:
            res = new
        else:
            res = col.copy()
            res[ok] = new
        s = data[c]
        out[c] = integer_like(s, res)
        moved = int(np.sum(perm != np.arange(m)))
        info[c] = {"n_values": m, "n_swapped": moved, **extra}
    return out, info


@accepts_series
def rank_swapping(
    data: pd.DataFrame,
    columns: Sequence[str] | str | None,
    p_percent: float = 5.0,
    seed: int | np.random.Generator | None = None,
) -> MaskResult:
    """Rank swapping (Moore 1996; Domingo-Ferrer & Torra 2001), each column independently.

    The ``n`` non-missing values of a column are sorted (ties by row order). Visiting ranks in
    increasing order, every value ``a_i`` not yet swapped is swapped with a uniformly random
    not yet swapped ``a_l`` with ``i < l <= i + w``, ``w = floor(p_percent * n / 100)``; if all
    ranks of that window are taken, ``a_i`` stays. Each column keeps exactly its multiset of
    values (its marginal distribution); missing values stay where they are.

    ``p_percent`` **is a percentage** of ``n`` in ``(0, 100]``: ``p_percent=5`` allows swaps
    between values at most 5 % of the ranks apart. sdcMicro's ``rankSwap`` documents its ``P``
    the same way, but its C++ code uses ``P`` as a fraction (sdcMicro issue #366), so its
    ``P=5`` means a 500 % window; sdckit does not repeat that.
    """
    cols = check_columns(data, columns)
    p = _check_percent(p_percent, "p_percent", "rank_swap")
    rng = np.random.default_rng(seed)

    def partners(m: int, _j: int) -> tuple[np.ndarray, dict[str, Any]]:
        w = int(np.floor(p * m / 100.0 + 1e-9))
        u = rng.random(m)
        return _rank_swap_kernel(m, w, u, _top(m)), {"window_ranks": w}

    out, info = _rank_apply(data, cols, "rank_swap", partners)
    return MaskResult(out, "rank_swap", {"columns": cols, "p_percent": p}, info)


@accepts_series
def rank_swap_p_buckets(
    data: pd.DataFrame,
    columns: Sequence[str] | str | None,
    p: float = 5.0,
    seed: int | np.random.Generator | None = None,
) -> MaskResult:
    """Rank swapping p-buckets (Nin, Herranz & Torra 2008), each column independently.

    The ranks are cut into ``K`` buckets of ``b = max(1, floor(p * n / 100))`` consecutive
    ranks (``p`` a percentage of ``n`` as in :func:`rank_swapping`). Visiting ranks in increasing
    order, a value not yet swapped in bucket ``B_r`` is swapped with a uniformly random not yet
    swapped value of bucket ``B_s``, ``s >= r``, where ``B_s`` is drawn with probability
    ``(1/K') * 2^-(s - r + 1)``, ``K'`` normalizing over the buckets that still hold an
    unswapped value. Marginals are preserved exactly.
    """
    cols = check_columns(data, columns)
    pv = _check_percent(p, "p", "rank_swap_p_buckets")
    rng = np.random.default_rng(seed)

    def partners(m: int, _j: int) -> tuple[np.ndarray, dict[str, Any]]:
        b = max(1, int(np.floor(pv * m / 100.0 + 1e-9)))
        u = rng.random((m, 2))
        n_buckets = -(-m // b) if m else 0
        return _p_buckets_kernel(m, b, u, _top(m)), {"bucket_size": b, "n_buckets": n_buckets}

    out, info = _rank_apply(data, cols, "rank_swap_p_buckets", partners)
    return MaskResult(out, "rank_swap_p_buckets", {"columns": cols, "p": pv}, info)


@accepts_series
def rank_swap_p_distribution(
    data: pd.DataFrame,
    columns: Sequence[str] | str | None,
    p: float = 5.0,
    seed: int | np.random.Generator | None = None,
) -> MaskResult:
    """Rank swapping p-distribution (Nin, Herranz & Torra 2008), each column independently.

    With ``P = p * n / 100`` ranks (``p`` a percentage of ``n``), every value ``a_i`` not yet
    swapped is swapped with ``a_(i+r)``, ``r`` drawn from the normal distribution with mean
    ``0.5 P`` and standard deviation ``0.5 P``, rounded and clipped into ``[1, n-1-i]``; if that
    rank is already taken the next free rank above it is used (the last free one at the end of
    the range). The value stays only when no rank above it is free. Marginals are preserved.
    """
    cols = check_columns(data, columns)
    pv = _check_percent(p, "p", "rank_swap_p_distribution")
    rng = np.random.default_rng(seed)

    def partners(m: int, _j: int) -> tuple[np.ndarray, dict[str, Any]]:
        P = pv * m / 100.0
        offsets = np.rint(rng.normal(0.5 * P, 0.5 * P, m)).astype(np.int64)
        return _p_distribution_kernel(m, offsets, _top(m)), {
            "mean_offset_ranks": 0.5 * P,
            "sd_offset_ranks": 0.5 * P,
        }

    out, info = _rank_apply(data, cols, "rank_swap_p_distribution", partners)
    return MaskResult(out, "rank_swap_p_distribution", {"columns": cols, "p": pv}, info)


# --------------------------------------------------------------------------- data swapping


def _check_rate(rate: float, name: str, method: str) -> float:
    try:
        v = float(rate)
    except (TypeError, ValueError):
        raise ParameterError(
            f"{method}: {name}={rate!r} is not a number; give a fraction in [0, 1], e.g. 0.05"
        ) from None
    if not (0.0 <= v <= 1.0):
        raise ParameterError(
            f"{method}: {name}={rate!r} must be a fraction of records in [0, 1], "
            f"e.g. {name}=0.05 for 5 percent"
        )
    return v


def _group_ids(data: pd.DataFrame, cols: Sequence[str]) -> np.ndarray:
    """Dense ids of the combinations of ``cols`` (missing is a value), in sorted key order
    (the frequency engine's :func:`~sdckit.core.frequency.group_keys`)."""
    if not cols:
        return np.zeros(len(data), dtype=np.int64)
    encoded = [encode(data[c], c) for c in cols]
    return group_keys([e.codes for e in encoded], [e.cardinality for e in encoded])[0]


@accepts_series
def data_swapping(
    data: pd.DataFrame,
    swap_columns: Sequence[str] | str,
    match_columns: Sequence[str] | str | None = None,
    rate: float = 0.05,
    seed: int | np.random.Generator | None = None,
) -> MaskResult:
    """Swap the values of ``swap_columns`` between random pairs of records that agree on
    ``match_columns`` (Dalenius & Reiss 1982).

    Within every group of records sharing the matching values, about ``rate * size / 2`` random
    disjoint pairs (random rounding, at most ``size // 2``) exchange their whole vector of
    ``swap_columns`` values. Since both partners agree on the matching variables, every
    marginal of the swapped variables, their joint distribution and their cross-tabulation with
    the matching variables are preserved exactly; only their link to the other variables
    changes. ``details`` give the number of pairs and of records whose values changed.
    """
    scols = check_columns(data, swap_columns)
    mcols = [] if match_columns is None else check_columns(data, match_columns)
    both = sorted(set(scols) & set(mcols))
    if both:
        raise DataError(
            f"data_swap: column(s) {', '.join(both)} are both swapped and matched; "
            "a column cannot be both"
        )
    r = _check_rate(rate, "rate", "data_swap")
    rng = np.random.default_rng(seed)
    n = len(data)
    gid = _group_ids(data, mcols)
    n_groups = int(gid.max()) + 1 if n else 0
    order = np.lexsort((rng.random(n), gid))  # records grouped, random order inside a group
    sizes = np.bincount(gid, minlength=n_groups)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    target = r * sizes / 2.0
    pairs = np.floor(target).astype(np.int64)
    pairs += rng.random(n_groups) < (target - pairs)
    pairs = np.minimum(pairs, sizes // 2)
    g_sorted = gid[order]
    pos = np.arange(n) - starts[g_sorted]
    chosen = pos < 2 * pairs[g_sorted]
    first = order[chosen & (pos % 2 == 0)]
    second = order[chosen & (pos % 2 == 1)]
    src = np.arange(n)
    src[first] = second
    src[second] = first
    out = data.copy()
    for c in scols:
        out[c] = pd.Series(data[c].array.take(src), index=data.index, name=c)
    changed = np.zeros(n, dtype=bool)
    for c in scols:
        changed |= as_text(data[c]) != as_text(out[c])
    details = {
        "n_pairs": int(pairs.sum()),
        "n_records_swapped": int(2 * pairs.sum()),
        "n_records_changed": int(changed.sum()),
        "n_groups": n_groups,
        "realized_rate": float(2 * pairs.sum() / n) if n else 0.0,
    }
    params = {"swap_columns": scols, "match_columns": mcols, "rate": r}
    return MaskResult(out, "data_swap", params, details)


# --------------------------------------------------------------------------- record swapping


@njit(cache=True)
def _trs_level(
    cand,
    is_must,
    seg_start,
    seg_quota,
    area,
    used,
    failed,
    partner,
    swap_side,
    gid,
    don,
    g_end,
    ptr,
):
    """One hierarchy level of targeted record swapping (households, sequential).

    ``cand[seg_start[a]:seg_start[a+1]]`` are the candidate households of area ``a`` in
    processing order (must-swap ones first). ``seg_quota[a] < 0``: swap only the must-swap
    ones; otherwise swap the must-swap ones plus others until ``seg_quota[a]`` is reached.
    Donors: for each similarity profile ``p`` in turn, households of the same profile group
    ``gid[p, h]`` in ``don[...]`` (ordered by decreasing sampling key), the first one that is
    unused and lies in another area. Returns the number of swaps made.
    """
    n_prof = gid.shape[0]
    n_seg = seg_start.shape[0] - 1
    swaps = 0
    sel = np.empty(cand.shape[0], dtype=np.int64)
    for a in range(n_seg):
        lo = seg_start[a]
        hi = seg_start[a + 1]
        n_must = 0
        for t in range(lo, hi):
            if is_must[t] and not used[cand[t]]:
                n_must += 1
        need = seg_quota[a] - n_must if seg_quota[a] >= 0 else 0
        ns = 0
        for t in range(lo, hi):
            h = cand[t]
            if used[h]:
                continue
            if is_must[t]:
                sel[ns] = h
                ns += 1
            elif need > 0:
                sel[ns] = h
                ns += 1
                need -= 1
        for q in range(ns):
            h = sel[q]
            found = -1
            for p in range(n_prof):
                g = gid[p, h]
                j = ptr[g]
                while j < g_end[g] and used[don[j]]:
                    j += 1
                ptr[g] = j
                while j < g_end[g]:
                    d = don[j]
                    if not used[d] and area[d] != area[h]:
                        found = d
                        break
                    j += 1
                if found >= 0:
                    break
            if found >= 0:
                used[h] = True
                used[found] = True
                partner[h] = found
                partner[found] = h
                swap_side[h] = True
                swaps += 1
            else:
                failed[h] = True
    return swaps


def _profiles(similar: Any) -> list[list[str]]:
    if isinstance(similar, str):
        return [[similar]]
    sim = list(similar)
    if not sim:
        raise DataError(
            "record_swap: give at least one similarity variable in similar, e.g. similar=['hsize']"
        )
    if all(isinstance(s, str) for s in sim):
        return [sim]
    out = []
    for prof in sim:
        prof = [prof] if isinstance(prof, str) else list(prof)
        if not prof:
            raise DataError("record_swap: a similarity profile in similar is empty")
        out.append(prof)
    return out


def _refine(key: np.ndarray, codes: np.ndarray) -> np.ndarray:
    """Dense ids of the pairs (``key``, ``codes``) of two non-negative code columns."""
    return group_keys([key, codes])[0]


@accepts_series
def record_swapping(
    data: pd.DataFrame,
    household: str,
    similar: Sequence[str] | Sequence[Sequence[str]] | str,
    hierarchy: Sequence[str] | str,
    quasi_identifiers: Sequence[str] | str,
    swap_rate: float = 0.05,
    k_anonymity: int = 3,
    carry_along: Sequence[str] | str | None = None,
    seed: int | np.random.Generator | None = None,
) -> MaskResult:
    """Targeted record swapping of households across geographic areas (sdcMicro ``recordSwap``).

    Following sdcMicro's ``recordSwap`` (R/recordSwap.R, src/recordSwap/recordSwap.cpp):

    1. Risk: for every geographic level ``h`` (``hierarchy`` from the highest level to the
       lowest) a record's risk is ``1 / count`` of records sharing its ``quasi_identifiers``
       (sdcMicro's ``riskVars``) and its areas of levels ``0..h``; a household takes the
       maximum over its members. A household must be swapped at the first level where its
       risk exceeds ``1/k_anonymity`` (count < k); ``k_anonymity = 0`` marks none.
    2. Number of swaps: ``ceil`` or ``floor`` (fair coin) of ``n_households * swap_rate / 2``
       (each swap moves two households), spread over the lowest-level areas in proportion to
       their number of households; fractional parts are rounded by drawing the areas that get
       one more swap with probability proportional to the fractional parts (sdcMicro draws
       them uniformly).
    3. From the highest to the lowest level, area by area: at the upper levels only the
       households that must be swapped at that level are swapped; at the lowest level the
       must-swap households plus, if the area's quota (minus the households already swapped
       out of it) is not reached, further households drawn with probability proportional to
       their risk (Efraimidis-Spirakis keys ``risk / Exp(1)``). Every household is swapped at
       most once.
    4. Donor: the first unused household (by decreasing key ``risk_h / Exp(1)``, i.e. sampled
       by risk) from *another* area of the current level with the same values of the first
       similarity profile (``similar``: a list of columns, or a list of such lists tried in
       turn); households without a donor stay and are counted.
    5. The ``hierarchy`` (and ``carry_along``) values of paired households are exchanged for
       all their members.

    The similarity and hierarchy variables are household-level (the first member's values are
    used; a household spread over several areas is an error). ``details`` report the number of
    households swapped, the risky households per level and those left without a donor.
    """
    hh_col = check_columns(data, [household])[0]
    hier = check_columns(data, hierarchy)
    profiles = _profiles(similar)
    for prof in profiles:
        check_columns(data, prof)
    risk_vars = check_columns(data, quasi_identifiers)
    carry = [] if carry_along is None else check_columns(data, carry_along)
    carry = [c for c in carry if c not in hier]
    rate = _check_rate(swap_rate, "swap_rate", "record_swap")
    if (
        isinstance(k_anonymity, bool)
        or not isinstance(k_anonymity, (int, np.integer))
        or k_anonymity < 0
    ):
        raise DataError(
            f"record_swap: k_anonymity={k_anonymity!r} must be an integer >= 0 "
            "(0 disables the k-anonymity rule)"
        )
    if hh_col in hier:
        raise DataError(f"record_swap: the household column {hh_col!r} cannot be a hierarchy level")
    rng = np.random.default_rng(seed)
    n = len(data)
    H = len(hier)
    if n == 0:
        return MaskResult(data.copy(), "record_swap", {}, {"n_households": 0})

    hh = encode(data[hh_col], hh_col)
    rec_hh = hh.codes.astype(np.int64)
    nhh = hh.cardinality
    order = np.argsort(rec_hh, kind="stable")
    sizes = np.bincount(rec_hh, minlength=nhh)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    first = order[starts]  # first member of every household

    warnings: list[str] = []
    hier_codes = []
    for c in hier + carry:
        codes = encode(data[c], c).codes.astype(np.int64)
        bad = codes != codes[first[rec_hh]]
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            hid = data[hh_col].iloc[row]
            hid = hid.item() if isinstance(hid, np.generic) else hid
            msg = f"column {c!r} differs within household {hid!r} (row {row + 1})"
            if c in hier:
                raise DataError(
                    f"record_swap: {msg}; geographic variables must be constant within a household"
                )
            warnings.append(
                f"{msg}: carry_along variables should be household-level; the "
                "first member's value is swapped to all members"
            )
        if c in hier:
            hier_codes.append(codes)

    # 1. risk per level: 1 / count of (risk variables, areas 0..h); household max
    key = _group_ids(data, risk_vars)
    hh_risk = np.empty((H, nhh))
    area = np.empty((H, nhh), dtype=np.int64)
    area_key = np.zeros(n, dtype=np.int64)
    for h in range(H):
        key = _refine(key, hier_codes[h])
        counts = np.bincount(key)
        risk = 1.0 / counts[key]
        hh_risk[h] = np.maximum.reduceat(risk[order], starts)
        area_key = _refine(area_key, hier_codes[h])
        area[h] = area_key[first]
    threshold = 2.0 if k_anonymity == 0 else 1.0 / k_anonymity
    above = hh_risk > threshold
    level = np.where(above.any(axis=0), np.argmax(above, axis=0), H)

    # random sampling keys per level (Efraimidis-Spirakis: risk / Exp(1), larger first)
    keys = hh_risk / rng.exponential(1.0, size=(H, nhh))

    # 2. number of swaps per lowest-level area
    total = int(np.ceil(nhh * rate / 2) if rng.integers(0, 2) == 0 else np.floor(nhh * rate / 2))
    low = area[H - 1]
    n_low = int(low.max()) + 1
    area_size = np.bincount(low, minlength=n_low)
    share = area_size / nhh * total
    quota = np.floor(share).astype(np.int64)
    frac = share - quota
    extra = int(np.round(frac.sum()))
    if extra > 0:
        pick = rng.choice(n_low, size=extra, replace=False, p=frac / frac.sum())
        quota[pick] += 1

    # similarity profile groups (household level), flattened over profiles
    gid = np.empty((len(profiles), nhh), dtype=np.int64)
    g_off = 0
    for p, prof in enumerate(profiles):
        g = _group_ids(data.iloc[first], prof)
        gid[p] = g + g_off
        g_off += int(g.max()) + 1
    n_groups = g_off

    used = np.zeros(nhh, dtype=np.bool_)
    failed = np.zeros(nhh, dtype=np.bool_)
    partner = np.full(nhh, -1, dtype=np.int64)
    swap_side = np.zeros(nhh, dtype=np.bool_)
    swaps_per_level = []
    hh_ids = np.arange(nhh)
    for h in range(H):
        # donor lists: per profile group, by decreasing key of this level
        don_parts = [np.lexsort((-keys[h], gid[p])) for p in range(len(profiles))]
        don = np.concatenate(don_parts)
        flat_gid = np.concatenate([gid[p][don_parts[p]] for p in range(len(profiles))])
        ends = np.searchsorted(flat_gid, np.arange(n_groups), side="right")
        ptr = np.searchsorted(flat_gid, np.arange(n_groups), side="left")

        free = ~used & ~failed
        if h < H - 1:
            sel = free & (level == h)
            cand = hh_ids[sel]
            cand = cand[np.lexsort((-keys[h][cand], area[h][cand]))]
            is_must = np.ones(len(cand), dtype=np.bool_)
            seg_area = area[h][cand]
            n_area = int(area[h].max()) + 1
            seg_start = np.searchsorted(seg_area, np.arange(n_area + 1), side="left")
            seg_quota = np.full(n_area, -1, dtype=np.int64)
        else:
            already = np.bincount(low[swap_side], minlength=n_low)
            seg_quota = np.maximum(0, quota - already)
            cand = hh_ids[free]
            must = level[cand] == h
            fresh = hh_risk[h][cand] / rng.exponential(1.0, size=len(cand))
            o = np.lexsort((-fresh, ~must, low[cand]))
            cand, is_must = cand[o], must[o]
            seg_start = np.searchsorted(low[cand], np.arange(n_low + 1), side="left")
        swaps_per_level.append(
            int(
                _trs_level(
                    cand.astype(np.int64),
                    is_must,
                    seg_start.astype(np.int64),
                    seg_quota.astype(np.int64),
                    area[h],
                    used,
                    failed,
                    partner,
                    swap_side,
                    gid,
                    don.astype(np.int64),
                    ends.astype(np.int64),
                    ptr.astype(np.int64),
                )
            )
        )

    # 5. exchange the geographic (and carried) values of paired households
    src_hh = np.where(partner >= 0, partner, np.arange(nhh))
    src_rec = first[src_hh[rec_hh]]
    out = data.copy()
    for c in hier + carry:
        out[c] = pd.Series(data[c].array.take(src_rec), index=data.index, name=c)
    swapped = partner >= 0
    no_donor = failed & ~swapped
    details = {
        "n_households": int(nhh),
        "target_swaps": total,
        "n_swapped_households": int(swapped.sum()),
        "n_swapped_records": int(sizes[swapped].sum()),
        "swaps_per_level": dict(zip(hier, swaps_per_level, strict=True)),
        "risky_households_per_level": {hier[h]: int(np.sum(level == h)) for h in range(H)},
        "n_without_donor": int(no_donor.sum()),
        "households_without_donor": [str(v) for v in hh.values[no_donor][:20]],
        "risk_threshold": threshold,
        "warnings": warnings,
    }
    params = {
        "household": hh_col,
        "similar": profiles,
        "hierarchy": hier,
        "quasi_identifiers": risk_vars,
        "swap_rate": rate,
        "k_anonymity": int(k_anonymity),
        "carry_along": carry,
    }
    return MaskResult(out, "record_swap", params, details)


# -- the method as a job-file step -----------------------------------------------------------------
class RankSwapping(MaskingMethod):
    """Rank swapping of numeric columns (:mod:`sdckit.masking.swapping`).

    Parameters
    ----------
    columns : list of str
        The columns swapped (each on its own).
    p_percent : float, default 5
        Largest rank distance of a swap, in percent of the number of records, in (0, 100].
    variant : {"standard", "p_buckets", "p_distribution"}, default "standard"
        Moore's rank swapping, or one of the two variants of Nin, Herranz & Torra.

    References
    ----------
    Moore, R. (1996). Controlled data-swapping techniques for masking public use microdata
    sets. US Census Bureau RR96/04. Nin, J., Herranz, J. & Torra, V. (2008). Rethinking rank
    swapping to decrease disclosure risk. Data & Knowledge Engineering 64(1), 346-364.
    """

    spec_name: ClassVar[str] = "rank_swapping"
    must_change: ClassVar[bool] = True

    columns: ColumnList
    p_percent: Annotated[Number, Field(gt=0, le=100)] = 5.0
    variant: Literal["standard", "p_buckets", "p_distribution"] = "standard"

    def apply(self, data: pd.DataFrame, rng: Rng = None) -> list[MaskResult]:
        """Swap (see :meth:`MaskingMethod.apply`)."""
        if self.variant == "standard":
            return [rank_swapping(data, self.columns, self.p_percent, seed=rng)]
        if self.variant == "p_buckets":
            return [rank_swap_p_buckets(data, self.columns, self.p_percent, seed=rng)]
        return [rank_swap_p_distribution(data, self.columns, self.p_percent, seed=rng)]


class DataSwapping(MaskingMethod):
    """Data swapping between records that agree on matching columns
    (:func:`sdckit.masking.swapping.data_swapping`).

    Parameters
    ----------
    columns : list of str
        The columns whose values are swapped.
    match_columns : list of str, optional
        Records swap only with records of the same values of these columns.
    rate : float, default 0.05
        Share of the records swapped, in [0, 1].

    References
    ----------
    Dalenius, T. & Reiss, S. P. (1982). Data-swapping: a technique for disclosure control.
    Journal of Statistical Planning and Inference 6, 73-85.
    """

    spec_name: ClassVar[str] = "data_swapping"
    must_change: ClassVar[bool] = True

    columns: ColumnList
    match_columns: ColumnList | None = None
    rate: Probability = 0.05

    def apply(self, data: pd.DataFrame, rng: Rng = None) -> list[MaskResult]:
        """Swap (see :meth:`MaskingMethod.apply`)."""
        return [data_swapping(data, self.columns, self.match_columns, self.rate, seed=rng)]


class RecordSwapping(MaskingMethod):
    """Targeted record swapping of households across areas
    (:func:`sdckit.masking.swapping.record_swapping`, after sdcMicro ``recordSwap``).

    Parameters
    ----------
    household : str
        The household identifier column.
    similar : list
        Columns a donor household must share (or a list of such lists, tried in turn).
    hierarchy : list of str
        The geographic levels, highest first (the values swapped).
    quasi_identifiers : list of str
        Columns whose rare combinations make a household risky (sdcMicro's ``riskVars``;
        ``risk_variables``, the name this parameter had before, is accepted too).
    swap_rate : float, default 0.05
        Share of the households swapped, in [0, 1].
    k_anonymity : int, default 3
        A household is risky where fewer than this many records share its values (>= 1).
    carry_along : list of str, optional
        Further columns swapped with the hierarchy.

    References
    ----------
    sdcMicro ``recordSwap`` (J. Gussenbauer), the SDC method recommended for the European
    2021 census round.
    """

    spec_name: ClassVar[str] = "record_swapping"
    must_change: ClassVar[bool] = True

    household: ColumnName
    similar: NonEmptyList
    hierarchy: ColumnList
    # sdcMicro's riskVars; `risk_variables` is the name it had before (job files keep working)
    quasi_identifiers: ColumnList = Field(
        validation_alias=AliasChoices("quasi_identifiers", "risk_variables")
    )
    swap_rate: Probability = 0.05
    k_anonymity: Count = 3
    carry_along: ColumnList | None = None

    @model_validator(mode="before")
    @classmethod
    def _one_name(cls, data: Any) -> Any:
        if isinstance(data, Mapping) and {"quasi_identifiers", "risk_variables"} <= set(data):
            raise ValueError("give quasi_identifiers only (risk_variables is its former name)")
        return data

    def apply(self, data: pd.DataFrame, rng: Rng = None) -> list[MaskResult]:
        """Swap (see :meth:`MaskingMethod.apply`)."""
        return [
            record_swapping(
                data,
                self.household,
                self.similar,
                self.hierarchy,
                self.quasi_identifiers,
                swap_rate=self.swap_rate,
                k_anonymity=self.k_anonymity,
                carry_along=self.carry_along,
                seed=rng,
            )
        ]


def __getattr__(name: str) -> Any:
    """The former names of this module's functions (deprecated; :data:`sdckit.masking.RENAMED`)."""
    from sdckit.masking import renamed_attribute

    return renamed_attribute(__name__, name)
