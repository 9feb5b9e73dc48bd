"""Numba kernel of :mod:`sdckit.risk.subsets`: one subset's grouping in two passes.

Imported on first use by a walk over many records (numba's start-up is paid only there). The
method and its source are documented in :mod:`sdckit.risk.subsets`.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def combine(ids, column, rows, card):  # pragma: no cover - compiled
    """``ids[i] * card + column[rows[i]]``: the mixed-radix key of each grouped record."""
    out = np.empty(len(rows), dtype=np.int64)
    for i in range(len(rows)):
        out[i] = np.int64(ids[i]) * card + column[rows[i]]
    return out


@njit(cache=True)
def split(keys, rows, weights, radix):  # pragma: no cover - compiled
    """Group ``rows`` by ``keys`` (``0 <= key < radix``): per record whether its group weighs
    1 (unique), the records left open with their dense group ids (first occurrence order),
    the number of open groups, of all groups, the sum of ``s (s - 1)`` over the group
    weights ``s`` and whether an open record weighs 1 itself. Weights are record counts."""
    n = len(keys)
    total = np.zeros(radix, dtype=np.int32)
    for i in range(n):
        total[keys[i]] += weights[rows[i]]
    new_id = np.full(radix, -1, dtype=np.int32)
    unique = np.zeros(n, dtype=np.bool_)
    open_rows = np.empty(n, dtype=rows.dtype)
    ids = np.empty(n, dtype=np.int32)
    n_open = 0
    n_ids = 0
    n_unique = 0
    pairs = 0.0
    single_open = False
    for i in range(n):
        key = keys[i]
        s = total[key]
        if s == 1:
            unique[i] = True
            n_unique += 1
            continue
        if new_id[key] < 0:
            new_id[key] = n_ids
            n_ids += 1
            pairs += float(s) * (float(s) - 1.0)
        r = rows[i]
        if weights[r] == 1:
            single_open = True
        open_rows[n_open] = r
        ids[n_open] = new_id[key]
        n_open += 1
    return (unique, open_rows[:n_open].copy(), ids[:n_open].copy(), n_ids, n_unique + n_ids,
            pairs, single_open)  # fmt: skip
