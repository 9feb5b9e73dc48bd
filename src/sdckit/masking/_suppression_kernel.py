"""The numba kernel of :mod:`sdckit.masking.suppression` (local suppression after sdcMicro's
``localSuppression``): one sequential pass over the records at risk, where each suppression
changes the frequencies the later records see. Imported on first use, so that loading the
masking methods does not start numba; the method and its sources are documented in
:mod:`sdckit.masking.suppression`.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def suppress_pass(mat, problems, col_order, k):
    """One pass over the problem records (sequential: each suppression changes later ones).

    ``mat`` (rows, keys) holds codes, ``-1`` = missing, and is modified in place. Returns the
    number of values suppressed.
    """
    nw, m = mat.shape
    dist = np.empty(nw, dtype=np.int64)
    made = 0
    for t in range(problems.shape[0]):
        r = problems[t]
        fk = 0
        mind = m + 1
        for i in range(nw):
            d = 0
            for j in range(m):
                a = mat[r, j]
                b = mat[i, j]
                if a >= 0 and b >= 0 and a != b:
                    d += 1
            dist[i] = d
            if d == 0:
                fk += 1
            elif d < mind:
                mind = d
        if fk >= k:
            continue  # already safe thanks to earlier suppressions of this pass
        chosen = -1
        if mind <= m:
            for cj in range(m):
                j = col_order[cj]
                a = mat[r, j]
                if a < 0:
                    continue
                for i in range(nw):
                    if dist[i] == mind and mat[i, j] >= 0 and mat[i, j] != a:
                        chosen = j
                        break
                if chosen >= 0:
                    break
        if chosen < 0:
            for cj in range(m):
                j = col_order[cj]
                if mat[r, j] >= 0:
                    chosen = j
                    break
        if chosen >= 0:
            mat[r, chosen] = -1
            made += 1
    return made
