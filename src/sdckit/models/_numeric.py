"""Numeric sensitive attributes: per-class histograms with the columns in ascending value order.

(k,e)-anonymity and (epsilon,m)-anonymity read the sensitive attribute as numbers. The
frequency-set engine encodes a sensitive column as text codes
(:func:`~sdckit.core.frequency.encode_ordered`: numeric order when every value parses as a
number, unless the schema declares another order); :class:`NumericHistogram` parses the code
labels once, and gives every frequency set's CSR histogram with its columns permuted into
ascending numeric order, so that inside each class row the stored entries run from the
smallest to the largest value (as ordered-distance t-closeness reads its attribute).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from sdckit.core.frequency import FrequencySet
from sdckit.errors import DataError
from sdckit.models._histograms import histogram, row_ids

if TYPE_CHECKING:  # scipy is imported where it is used
    from scipy import sparse

__all__ = ["NumericHistogram", "numeric_labels"]


def numeric_labels(labels: np.ndarray, attribute: str, model: str) -> np.ndarray:
    """The labels of a sensitive attribute's codes as floats.

    Raises :class:`DataError` naming the attribute and the first values that are not finite
    numbers (a missing value, the empty text, included).
    """
    labels = np.asarray(labels, dtype=object)
    nums = pd.to_numeric(pd.Series(labels, dtype=object), errors="coerce").to_numpy(
        dtype=float, na_value=np.nan
    )
    bad = ~np.isfinite(nums)
    if bad.any():
        shown = ", ".join(repr(str(v)) for v in labels[bad][:5])
        raise DataError(
            f"{model}: sensitive attribute {attribute!r} must hold a number in every record, "
            f"but it holds {shown}{' ...' if bad.sum() > 5 else ''} ('' is a missing value); "
            "fix or drop those records, or choose a numeric attribute"
        )
    return nums


class NumericHistogram:
    """The numeric view of one sensitive attribute, cached per coding of its values.

    ``sorted_values`` are the codes' numbers in ascending order; :meth:`histogram` returns a
    frequency set's histogram whose column ``j`` counts the records holding
    ``sorted_values[j]`` (canonical CSR: within a row the columns ascend, so do the values).
    """

    def __init__(self, attribute: str, model: str) -> None:
        self.attribute = attribute
        self.model = model
        self._labels: np.ndarray | None = None
        self.sorted_values = np.zeros(0)
        self._position = np.zeros(0, dtype=np.int64)  # code -> column of the sorted histogram
        self._identity = True

    def _refresh(self, fs: FrequencySet) -> None:
        labels = fs.sensitive_values.get(self.attribute)
        if labels is None:
            raise DataError(
                f"{self.model}: the frequency set carries no labels for {self.attribute!r}"
            )
        if self._labels is not None and (
            labels is self._labels
            or (len(labels) == len(self._labels) and np.array_equal(labels, self._labels))
        ):
            return
        nums = numeric_labels(labels, self.attribute, self.model)
        order = np.argsort(nums, kind="stable")
        position = np.empty(len(nums), dtype=np.int64)
        position[order] = np.arange(len(nums))
        self._labels = labels
        self.sorted_values = nums[order]
        self._position = position
        self._identity = bool((order == np.arange(len(order))).all())

    def histogram(self, fs: FrequencySet) -> sparse.csr_matrix:
        """``fs``'s histogram of the attribute with columns in ascending numeric order."""
        from scipy import sparse

        h = histogram(fs, self.attribute, self.model)
        self._refresh(fs)
        if self._identity:
            return h
        out = sparse.csr_matrix(
            (h.data, self._position[h.indices], h.indptr), shape=h.shape, copy=True
        )
        out.sort_indices()
        return out

    def row_extremes(self, h: sparse.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
        """Per class the smallest and the largest value (0 for an empty class)."""
        n = h.shape[0]
        lo, hi = np.zeros(n), np.zeros(n)
        nonempty = np.diff(h.indptr) > 0
        lo[nonempty] = self.sorted_values[h.indices[h.indptr[:-1][nonempty]]]
        hi[nonempty] = self.sorted_values[h.indices[h.indptr[1:][nonempty] - 1]]
        return lo, hi

    def distinct_numbers(self, h: sparse.csr_matrix) -> np.ndarray:
        """Per class the number of distinct values as numbers (``"1"`` and ``"1.0"`` are one)."""
        n = h.shape[0]
        if h.nnz == 0:
            return np.zeros(n, dtype=np.int64)
        rows = row_ids(h.indptr)
        v = self.sorted_values[h.indices]
        new = np.ones(h.nnz, dtype=bool)
        new[1:] = (v[1:] != v[:-1]) | (rows[1:] != rows[:-1])
        return np.bincount(rows[new], minlength=n).astype(np.int64)
