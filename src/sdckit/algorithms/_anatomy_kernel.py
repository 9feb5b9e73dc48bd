"""Numba kernel of Anatomy's group-creation loop (Xiao & Tao 2006, Figure 3, lines 2-7).

The loop is sequential: each new QI-group takes one record from each of the ``l`` currently
largest buckets (buckets = records hashed by sensitive value), which changes the sizes the next
group sees. Only bucket *sizes* matter, so the kernel works on counts with a binary max-heap
keyed by ``(size descending, bucket id ascending)`` -- ``O(groups * l * log m)``; the records
are matched to the groups afterwards, vectorized.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _before(counts, a, b):
    """True when bucket ``a`` ranks before bucket ``b`` (larger, then lower id)."""
    if counts[a] != counts[b]:
        return counts[a] > counts[b]
    return a < b


@njit(cache=True)
def _sift_down(heap, size, pos, counts):
    while True:
        left = 2 * pos + 1
        if left >= size:
            return
        best = left
        right = left + 1
        if right < size and _before(counts, heap[right], heap[left]):
            best = right
        if _before(counts, heap[best], heap[pos]):
            heap[best], heap[pos] = heap[pos], heap[best]
            pos = best
        else:
            return


@njit(cache=True)
def _sift_up(heap, pos, counts):
    while pos > 0:
        parent = (pos - 1) // 2
        if _before(counts, heap[pos], heap[parent]):
            heap[pos], heap[parent] = heap[parent], heap[pos]
            pos = parent
        else:
            return


@njit(cache=True)
def anatomize_counts(counts, l):  # noqa: E741 - the paper's name
    """Group creation on bucket sizes.

    Returns ``(groups, left)``: ``groups[g]`` lists the ``l`` buckets group ``g`` took one
    record from (in creation order), ``left`` the bucket sizes after the loop (the residue).
    """
    c = counts.astype(np.int64).copy()
    m = c.shape[0]
    heap = np.empty(m, dtype=np.int64)
    size = 0
    for b in range(m):
        if c[b] > 0:
            heap[size] = b
            size += 1
            _sift_up(heap, size - 1, c)
    n_max = c.sum() // l if l > 0 else 0
    groups = np.empty((n_max, l), dtype=np.int64)
    taken = np.empty(l, dtype=np.int64)
    g = 0
    while size >= l:
        for j in range(l):  # pop the l largest buckets
            taken[j] = heap[0]
            size -= 1
            heap[0] = heap[size]
            _sift_down(heap, size, 0, c)
        for j in range(l):
            b = taken[j]
            groups[g, j] = b
            c[b] -= 1
            if c[b] > 0:
                heap[size] = b
                size += 1
                _sift_up(heap, size - 1, c)
        g += 1
    return groups[:g], c
