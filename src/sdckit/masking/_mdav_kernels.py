"""Numba kernels for the sequential loops of microaggregation (see ``microaggregation.py``).

MDAV and V-MDAV are greedy: every round depends on the records the previous rounds took, so
the outer loop is inherently sequential. Each round is a few linear passes over the records
still unassigned, kept in a compact column-major buffer (swap-remove), so every pass runs
over contiguous memory (SIMD over records) and the passes shrink as the algorithm proceeds.

Tie rule (shared with the plain reference implementations in the tests): records are ranked
by the pair (distance, original row index). Among equal distances the lower row index is
the "nearer" one, and a farthest-record search also returns the lowest row index among the
records at the maximal distance.

Metrics: ``metric=0`` squared Euclidean distance (MDAV on z-scores), ``metric=1`` L1 distance
(Gower distance on the scaled/one-hot embedding used by categorical microaggregation).
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _dist_to(xc, m, point, out, metric):
    """Distance of the first ``m`` columns of ``xc`` (p, n) to ``point`` (see module doc).

    The inner loops run over records (SIMD-friendly), four attributes per sweep to cut the
    traffic on ``out``; the attribute terms are still added in the strict order j = 0..p-1
    (((0 + t0) + t1) + t2) + ..., so identical records always get identical distances and
    the result equals a plain sequential sum over the attributes.
    """
    p = xc.shape[0]
    j = 0
    fresh = True
    while j + 4 <= p:
        r0 = xc[j]
        r1 = xc[j + 1]
        r2 = xc[j + 2]
        r3 = xc[j + 3]
        v0 = point[j]
        v1 = point[j + 1]
        v2 = point[j + 2]
        v3 = point[j + 3]
        if fresh:
            for i in range(m):
                out[i] = 0.0
            fresh = False
        if metric == 0:
            for i in range(m):
                t0 = r0[i] - v0
                t1 = r1[i] - v1
                t2 = r2[i] - v2
                t3 = r3[i] - v3
                out[i] = (((out[i] + t0 * t0) + t1 * t1) + t2 * t2) + t3 * t3
        else:
            for i in range(m):
                t0 = abs(r0[i] - v0)
                t1 = abs(r1[i] - v1)
                t2 = abs(r2[i] - v2)
                t3 = abs(r3[i] - v3)
                out[i] = (((out[i] + t0) + t1) + t2) + t3
        j += 4
    if fresh:
        for i in range(m):
            out[i] = 0.0
    while j < p:
        v = point[j]
        row = xc[j]
        if metric == 0:
            for i in range(m):
                t = row[i] - v
                out[i] += t * t
        else:
            for i in range(m):
                out[i] += abs(row[i] - v)
        j += 1


@njit(cache=True, fastmath=True)
def _colsum(xc, m, out):
    """Column sums of the first ``m`` records of ``xc`` (a reduction: reassociation allowed)."""
    p = xc.shape[0]
    for j in range(p):
        s = 0.0
        row = xc[j]
        for i in range(m):
            s += row[i]
        out[j] = s


@njit(cache=True)
def _subtract_rows(xc, pos, k, colsum):
    """Remove the records at positions ``pos[:k]`` from the running column sums."""
    for t in range(k):
        for j in range(xc.shape[0]):
            colsum[j] -= xc[j, pos[t]]


@njit(cache=True)
def _farthest(d, idx, where, m):
    """Position of the largest ``d`` among the first ``m`` (ties: lowest original index).

    One pass in blocks of 8: a block's maximum (branch-free) is compared with the best so
    far, and only a block that reaches it is scanned for the lowest original index.
    """
    big = np.iinfo(np.int64).max
    mx = -np.inf
    best = big
    i = 0
    while i + 8 <= m:
        hi = max(
            max(max(d[i], d[i + 1]), max(d[i + 2], d[i + 3])),
            max(max(d[i + 4], d[i + 5]), max(d[i + 6], d[i + 7])),
        )
        if hi >= mx:
            if hi > mx:
                mx = hi
                best = big
            for t in range(i, i + 8):
                if d[t] == mx and idx[t] < best:
                    best = idx[t]
        i += 8
    while i < m:
        if d[i] > mx:
            mx = d[i]
            best = idx[i]
        elif d[i] == mx and idx[i] < best:
            best = idx[i]
        i += 1
    return where[best]


@njit(cache=True)
def _nearest_one(d, idx, m, skip):
    """Position of the smallest ``d`` among the first ``m`` except ``skip`` (-1 if none)."""
    best = -1
    bd = 0.0
    bi = 0
    for i in range(m):
        if i == skip:
            continue
        di = d[i]
        if best < 0 or di < bd or (di == bd and idx[i] < bi):
            best = i
            bd = di
            bi = idx[i]
    return best


@njit(cache=True)
def _insert(d, idx, i, k, cnt, bd, bi, pos_out):
    """Insert record position ``i`` into the sorted k-best buffer if it belongs there."""
    di = d[i]
    ii = idx[i]
    if cnt == k:
        wd = bd[k - 1]
        if di > wd or (di == wd and ii > bi[k - 1]):
            return cnt
        j = k - 1
    else:
        j = cnt
        cnt += 1
    while j > 0 and (bd[j - 1] > di or (bd[j - 1] == di and bi[j - 1] > ii)):
        bd[j] = bd[j - 1]
        bi[j] = bi[j - 1]
        pos_out[j] = pos_out[j - 1]
        j -= 1
    bd[j] = di
    bi[j] = ii
    pos_out[j] = i
    return cnt


@njit(cache=True)
def _nearest(d, idx, m, k, pos_out):
    """Positions of the ``k`` smallest (d, original index) pairs among the first ``m``.

    Written to ``pos_out[:k]`` in ascending order, by insertion into a sorted buffer of
    size k. Blocks of 8 whose minimum exceeds the current k-th best are skipped at once.
    """
    bd = np.empty(k)
    bi = np.empty(k, dtype=np.int64)
    cnt = 0
    i = 0
    while i < m and cnt < k:
        cnt = _insert(d, idx, i, k, cnt, bd, bi, pos_out)
        i += 1
    while i + 8 <= m:
        lo = min(
            min(min(d[i], d[i + 1]), min(d[i + 2], d[i + 3])),
            min(min(d[i + 4], d[i + 5]), min(d[i + 6], d[i + 7])),
        )
        if lo <= bd[k - 1]:
            for t in range(i, i + 8):
                cnt = _insert(d, idx, t, k, cnt, bd, bi, pos_out)
        i += 8
    while i < m:
        cnt = _insert(d, idx, i, k, cnt, bd, bi, pos_out)
        i += 1


@njit(cache=True)
def _remove(xc, idx, where, aux, m, pos, k):
    """Swap-remove the records at positions ``pos[:k]`` from the first ``m``; returns new m.

    ``where[original index]`` (the position of a record) and the per-record array ``aux``
    are kept in step with the buffer.
    """
    ps = np.sort(pos[:k])[::-1]
    p = xc.shape[0]
    for t in range(k):
        q = ps[t]
        last = m - 1
        if q != last:
            for j in range(p):
                xc[j, q] = xc[j, last]
            idx[q] = idx[last]
            aux[q] = aux[last]
            where[idx[q]] = q
        m -= 1
    return m


@njit(cache=True)
def _take_group(xc, idx, d, m, k, r, pos, labels, g, piv, metric):
    """Distances to the record at position ``r`` (copied to ``piv``) and its group of k.

    The pivot gets distance -1 so that it always belongs to its own group; the group is the
    pivot plus its k-1 nearest records by (distance, original index). ``d`` keeps the
    distances, with the group members marked -1, for the caller.
    """
    p = xc.shape[0]
    for j in range(p):
        piv[j] = xc[j, r]
    _dist_to(xc, m, piv, d, metric)
    d[r] = -1.0
    _nearest(d, idx, m, k, pos)
    for t in range(k):
        q = pos[t]
        labels[idx[q]] = g
        d[q] = -1.0


@njit(cache=True)
def _exact_dist(xc, q, point, metric):
    """Distance of the record at position ``q`` to ``point``: the same strict sum over the
    attributes as :func:`_dist_to`, hence bit for bit the value it gives that record."""
    s = 0.0
    for j in range(xc.shape[0]):
        t = xc[j, q] - point[j]
        if metric == 0:
            s += t * t
        else:
            s += abs(t)
    return s


@njit(cache=True)
def _shell(d, idx, m, metric, size):
    """The records whose distance to the centroid (``d[:m]``, squared Euclidean for metric 0)
    is among the ``size`` largest: their original indices by decreasing distance, those
    distances (Euclidean or L1, a metric), and the threshold T (every other record is nearer
    than T)."""
    dist = np.empty(m)
    for i in range(m):
        dist[i] = np.sqrt(d[i]) if metric == 0 else d[i]
    thr = np.partition(dist.copy(), m - size)[m - size]
    cnt = 0
    for i in range(m):
        if dist[i] >= thr:
            cnt += 1
    sel = np.empty(cnt, dtype=np.int64)
    cnt = 0
    for i in range(m):
        if dist[i] >= thr:
            sel[cnt] = i
            cnt += 1
    order = np.argsort(-dist[sel], kind="mergesort")
    members = np.empty(cnt, dtype=np.int64)
    radius = np.empty(cnt)
    for t in range(cnt):
        members[t] = idx[sel[order[t]]]
        radius[t] = dist[sel[order[t]]]
    return members, radius, thr


@njit(cache=True)
def mdav_labels(z, k, metric):
    """MDAV partition of the rows of ``z`` (n, p) into groups of k (the last one k..2k-1).

    Returns an int64 label per row; labels number the groups in the order they are formed.
    Domingo-Ferrer & Torra (2005); see ``microaggregation.mdav`` for the statement.

    The record farthest from the centroid c is found without a pass over all records while
    the centroid moves little: after a full pass at centroid c0, the records of the outer
    shell (largest distance D0 to c0, at least T) are kept by decreasing D0. With
    delta = |c - c0| the triangle inequality gives D0(x) - delta <= |x - c| <= D0(x) + delta,
    so the farthest record x* satisfies D0(x*) >= M - 2 delta, M the largest D0 of a record
    still unassigned (x* is at least as far from c as that record). If M - 2 delta - eps >= T
    (eps = 1e-9 (M + 2 delta) + 1e-150 covers the rounding of every computed distance by
    orders of magnitude), every such record is in the shell; their exact distances (the same
    sum as the full pass) decide, with the same tie rule, so the result is the full pass's.
    Otherwise (or when a value is not finite) a new full pass is made at c.
    """
    n, p = z.shape
    labels = np.full(n, -1, dtype=np.int64)
    xc = np.ascontiguousarray(z.T)
    idx = np.arange(n)
    where = np.arange(n)
    d = np.empty(n)
    c = np.empty(p)
    c0 = np.empty(p)
    piv = np.empty(p)
    colsum = np.empty(p)
    pos = np.empty(k, dtype=np.int64)
    shell = np.empty(0, dtype=np.int64)
    radius = np.empty(0)
    thr = 0.0
    head = 0
    m = n
    g = 0
    m_sum = 0  # number of records when colsum was last summed afresh
    while m >= 2 * k:
        # running column sums (minus the removed records), summed afresh whenever the set
        # has halved, which keeps the rounding drift of the subtractions negligible
        if 2 * m <= m_sum or m_sum == 0:
            _colsum(xc, m, colsum)
            m_sum = m
        for j in range(p):
            c[j] = colsum[j] / m
        r = -1
        while head < shell.shape[0] and labels[shell[head]] >= 0:
            head += 1
        if head < shell.shape[0]:
            delta = 0.0
            for j in range(p):
                dc = c[j] - c0[j]
                delta += dc * dc if metric == 0 else abs(dc)
            if metric == 0:
                delta = np.sqrt(delta)
            top = radius[head]
            eps = 1e-9 * (top + 2.0 * delta) + 1e-150
            lim = top - 2.0 * delta - eps
            if np.isfinite(lim) and lim >= thr:
                best_d = -np.inf
                best_i = np.iinfo(np.int64).max
                t = head
                while t < shell.shape[0] and radius[t] >= lim:
                    o = shell[t]
                    if labels[o] < 0:
                        v = _exact_dist(xc, where[o], c, metric)
                        if v > best_d or (v == best_d and o < best_i):
                            best_d = v
                            best_i = o
                    t += 1
                if best_i < n:
                    r = where[best_i]
        if r < 0:
            _dist_to(xc, m, c, d, metric)
            r = _farthest(d, idx, where, m)
            size = m // 32
            if size >= 64:
                shell, radius, thr = _shell(d, idx, m, metric, size)
                head = 0
                for j in range(p):
                    c0[j] = c[j]
            else:
                shell = np.empty(0, dtype=np.int64)
        _take_group(xc, idx, d, m, k, r, pos, labels, g, piv, metric)
        g += 1
        if m < 3 * k:
            m = _remove(xc, idx, where, d, m, pos, k)
            break
        # s: farthest from r among the records not in r's group (members have d = -1)
        s_orig = idx[_farthest(d, idx, where, m)]
        _subtract_rows(xc, pos, k, colsum)
        m = _remove(xc, idx, where, d, m, pos, k)
        _take_group(xc, idx, d, m, k, where[s_orig], pos, labels, g, piv, metric)
        g += 1
        _subtract_rows(xc, pos, k, colsum)
        m = _remove(xc, idx, where, d, m, pos, k)
    for i in range(m):
        labels[idx[i]] = g
    return labels


@njit(cache=True)
def vmdav_labels(z, k, gamma):
    """V-MDAV groups (Solanas & Martinez-Balleste 2006) on the rows of ``z`` (n, p).

    Returns int64 labels; records left over at the end (fewer than k) get label -1 and are
    placed by the caller. See ``microaggregation.vmdav`` for the statement of the algorithm.
    """
    n, p = z.shape
    labels = np.full(n, -1, dtype=np.int64)
    xc = np.ascontiguousarray(z.T)
    idx = np.arange(n)
    where = np.arange(n)
    d = np.empty(n)
    din = np.empty(n)
    c = np.empty(p)
    piv = np.empty(p)
    pos = np.empty(k, dtype=np.int64)
    one = np.empty(1, dtype=np.int64)
    _colsum(xc, n, c)
    c /= n
    dc = np.empty(n)  # squared distance to the centroid of the whole data set
    _dist_to(xc, n, c, dc, 0)
    m = n
    g = 0
    while m >= 2 * k:
        e = _farthest(dc, idx, where, m)
        # group: e and its k-1 nearest unassigned records
        for j in range(p):
            piv[j] = xc[j, e]
        _dist_to(xc, m, piv, d, 0)
        d[e] = -1.0
        _nearest(d, idx, m, k, pos)
        members = np.empty((p, k))
        for t in range(k):
            for j in range(p):
                members[j, t] = xc[j, pos[t]]
            labels[idx[pos[t]]] = g
        m = _remove(xc, idx, where, dc, m, pos, k)
        # din: squared distance of every unassigned record to its nearest group member
        for i in range(m):
            din[i] = np.inf
        for t in range(k):
            _dist_to(xc, m, members[:, t], d, 0)
            for i in range(m):
                if d[i] < din[i]:
                    din[i] = d[i]
        size = k
        while size < 2 * k - 1 and m > 0:
            emin = _nearest_one(din, idx, m, -1)
            for j in range(p):
                piv[j] = xc[j, emin]
            _dist_to(xc, m, piv, d, 0)
            other = _nearest_one(d, idx, m, emin)
            d_in = np.sqrt(din[emin])
            d_out = np.inf if other < 0 else np.sqrt(d[other])
            if not (d_in < gamma * d_out):
                break
            labels[idx[emin]] = g
            size += 1
            # din of the others: their distance to the new member may be smaller
            for i in range(m):
                if d[i] < din[i]:
                    din[i] = d[i]
            one[0] = emin
            last = m - 1
            din[emin] = din[last]
            m = _remove(xc, idx, where, dc, m, one, 1)
        g += 1
    if m >= k:
        for i in range(m):
            labels[idx[i]] = g
    return labels


@njit(cache=True)
def optimal_univariate_cuts(xs, k):
    """Hansen & Mukherjee (2003) shortest path on sorted values ``xs``: group lengths.

    ``cost[j]`` is the least SSE of a partition of ``xs[:j]`` into runs of k..2k-1
    consecutive values; SSE of a run from prefix sums of the (centred) values. Returns the
    run lengths from the first to the last. Tie rule: the shortest last run among equal
    costs (the first minimum over lengths k, k+1, ..., 2k-1).
    """
    n = xs.shape[0]
    s1 = np.zeros(n + 1)
    s2 = np.zeros(n + 1)
    for i in range(n):
        s1[i + 1] = s1[i] + xs[i]
        s2[i + 1] = s2[i] + xs[i] * xs[i]
    cost = np.full(n + 1, np.inf)
    back = np.zeros(n + 1, dtype=np.int64)
    cost[0] = 0.0
    for j in range(k, n + 1):
        lmax = min(2 * k - 1, j)
        for length in range(k, lmax + 1):
            i = j - length
            if cost[i] == np.inf:
                continue
            a = s1[j] - s1[i]
            sse = s2[j] - s2[i] - a * a / length
            if sse < 0.0:
                sse = 0.0
            tot = cost[i] + sse
            if tot < cost[j]:
                cost[j] = tot
                back[j] = length
    lengths = []
    j = n
    while j > 0:
        lengths.append(back[j])
        j -= back[j]
    out = np.empty(len(lengths), dtype=np.int64)
    for t in range(len(lengths)):
        out[t] = lengths[len(lengths) - 1 - t]
    return out
