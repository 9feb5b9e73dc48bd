"""Per-class reductions over the CSR (classes x values) histograms of a frequency set.

Row ``i`` of a CSR matrix owns ``data[indptr[i]:indptr[i+1]]``. The helpers below reduce
those slices for all rows at once (``np.add.reduceat`` on the non-empty rows), so the models
never loop over classes in Python.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # scipy is imported where it is used: a k-anonymity run never needs it
    from scipy import sparse

import numpy as np

from sdckit.core.frequency import FrequencySet
from sdckit.errors import ConfigError


def histogram(fs: FrequencySet, attribute: str, model: str) -> sparse.csr_matrix:
    """The canonical (sorted, no explicit zeros) CSR histogram of ``attribute`` in ``fs``."""
    from scipy import sparse

    if attribute not in fs.sensitive:
        raise ConfigError(
            f"{model}: attribute {attribute!r} is not a sensitive attribute of this frequency "
            f"set (sensitive: {', '.join(fs.sensitive) or 'none'}); build the frequency set "
            f"with sensitive=[{attribute!r}, ...]"
        )
    h = fs.sensitive[attribute]
    if not isinstance(h, sparse.csr_matrix) and not isinstance(h, sparse.csr_array):
        h = sparse.csr_matrix(h)
    if h.data.size and (h.data == 0).any():
        h = h.copy()
        h.eliminate_zeros()
    if not h.has_canonical_format:
        h = h.copy()
        h.sum_duplicates()
    return h


def row_ids(indptr: np.ndarray) -> np.ndarray:
    """Row index of every stored entry."""
    n_rows = len(indptr) - 1
    return np.repeat(np.arange(n_rows, dtype=np.int64), np.diff(indptr))


def row_sums(values: np.ndarray, indptr: np.ndarray) -> np.ndarray:
    """Sum of ``values`` (aligned with the CSR data) per row; 0 for empty rows."""
    n_rows = len(indptr) - 1
    out = np.zeros(n_rows, dtype=np.float64 if values.dtype.kind == "f" else np.int64)
    if n_rows == 0 or values.size == 0:
        return out
    starts = indptr[:-1]
    nonempty = np.diff(indptr) > 0
    # For consecutive non-empty rows reduceat sums up to the next start, which equals this
    # row's end because the empty rows in between add nothing.
    out[nonempty] = np.add.reduceat(values, starts[nonempty])
    return out
