"""The numba kernels of :mod:`sdckit.masking.swapping` (rank swapping and its p-buckets and
p-distribution variants, targeted record swapping): the sequential parts, where every swap
changes which values are still available. Imported on first use, so that loading the masking
methods does not start numba. The methods, their sources and their parameters are documented
in :mod:`sdckit.masking.swapping`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

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


def top(n: int) -> int:
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
def radix_argsort(keys):
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


def stable_order(vals: np.ndarray) -> np.ndarray:
    """Stable argsort of finite/inf float64 values (``-0.0`` equals ``0.0``)."""
    if len(vals) < 65536:
        return np.argsort(vals, kind="stable")
    return radix_argsort(_order_keys(vals + 0.0))  # + 0.0 turns -0.0 into 0.0


# --------------------------------------------------------------------------- rank kernels


@njit(cache=True)
def rank_swap_kernel(n, w, u, top):
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
def p_buckets_kernel(n, b, u, top):
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
def p_distribution_kernel(n, offsets, top):
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


@njit(cache=True)
def trs_level(
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
