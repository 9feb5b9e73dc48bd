"""Shares of sensitive values inside classes, for the models that bound them.

(alpha,k)-anonymity, confidence bounding, beta-likeness and delta-disclosure privacy all
compare, for every class and every sensitive value ``s`` stored in the class's CSR histogram
row, the share ``c_s / n`` of the value in the class (``c_s`` records of ``n``) with a bound.
The helpers here do the shared, vectorized parts: the overall distribution of the attribute
(taken once over all records, as ARX's ``DataManager.getDistribution``), the mapping of
named values to histogram columns, and the lower bound on violating records at finer
transformations for a per-value upper bound on the share.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from sdckit.core.encoding import as_text
from sdckit.core.frequency import FrequencySet
from sdckit.errors import ConfigError
from sdckit.models._histograms import histogram, row_ids, row_sums

if TYPE_CHECKING:
    from scipy import sparse

#: Relative slack of the share comparisons: ``c > u n (1 + SLACK)`` is a violation, so that a
#: share equal to its bound in exact arithmetic (``c/n = 3/10`` against ``u = 0.3``) does not
#: fail by the rounding of ``u n``. Class sizes are below 2**53, so ``c`` and ``n`` are exact.
SLACK = 1e-12
#: The bound on finer violations takes ``c - u n (1 + BOUND_SLACK)`` (>> SLACK) so that rounding
#: can only make it smaller (safe).
BOUND_SLACK = 1e-9

__all__ = [
    "BOUND_SLACK",
    "SLACK",
    "OverallDistribution",
    "finer_violations_under_caps",
    "value_columns",
]


class OverallDistribution:
    """The attribute's value counts over all records of a (base) frequency set.

    ``counts[j]`` records hold value ``j`` (the histogram's column), ``total`` records in all,
    and ``values`` are the column labels (to check that a later frequency set codes the
    attribute the same way).
    """

    def __init__(self, base: FrequencySet, attribute: str, model: str) -> None:
        h = histogram(base, attribute, model)
        self.attribute = attribute
        self.model = model
        self.counts = np.rint(np.asarray(h.sum(axis=0)).ravel()).astype(np.int64)
        self.total = int(self.counts.sum())
        if self.total <= 0:
            raise ConfigError(f"{model}: the data has no records; nothing to compare")
        self.values = np.asarray(base.sensitive_values.get(attribute, []), dtype=object)

    @property
    def shares(self) -> np.ndarray:
        """``q_j = counts[j] / total`` (the overall distribution)."""
        return self.counts / self.total

    def histogram(self, fs: FrequencySet) -> sparse.csr_matrix:
        """The histogram of ``fs``, after checking that it codes the attribute as the base."""
        h = histogram(fs, self.attribute, self.model)
        values = fs.sensitive_values.get(self.attribute)
        if h.shape[1] != len(self.counts) or (
            values is not None
            and values is not self.values
            and not np.array_equal(np.asarray(values, dtype=object), self.values)
        ):
            raise ConfigError(
                f"{self.model}: the frequency set codes {self.attribute!r} differently from "
                "the one given to prepare(); derive it from that frequency set (rollup/select)"
            )
        return h


def not_prepared(model: str) -> ConfigError:
    """The error of a model evaluated before :meth:`prepare`."""
    return ConfigError(
        f"{model}: call prepare(base) with the frequency set of all records before evaluate() "
        "(sdckit.models.check and the anonymizers do this)"
    )


def value_columns(
    fs: FrequencySet, attribute: str, values: Sequence[str], model: str, key: str
) -> np.ndarray:
    """Histogram columns of the named ``values`` of ``attribute`` (matched as text).

    Raises a :class:`~sdckit.errors.ConfigError` naming the values that do not occur in the
    data (``key`` is the parameter that named them).
    """
    histogram(fs, attribute, model)  # a clear error when the attribute is missing
    labels = [str(v) for v in as_text(np.asarray(fs.sensitive_values[attribute], dtype=object))]
    known = {v: i for i, v in enumerate(labels)}
    unknown = [v for v in values if v not in known]
    if unknown:
        raise ConfigError(
            f"{model}: {key} {unknown[:5]} of {attribute!r} do not occur in the data; check "
            f"the spelling (values present: {labels[:10]}{' ...' if len(labels) > 10 else ''})"
        )
    return np.array([known[v] for v in values], dtype=np.int64)


def entry_rows_and_sizes(h: sparse.csr_matrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Row of every stored entry, its count ``c`` and its row's size ``n`` (all int64)."""
    rows = row_ids(h.indptr)
    c = h.data.astype(np.int64)
    sizes = row_sums(c, h.indptr)
    return rows, c, sizes[rows]


def row_max(values: np.ndarray, indptr: np.ndarray, empty: float = 0.0) -> np.ndarray:
    """Largest of ``values`` (aligned with the CSR data) per row; ``empty`` for empty rows."""
    n_rows = len(indptr) - 1
    out = np.full(n_rows, empty, dtype=np.float64)
    nonempty = np.diff(indptr) > 0
    if values.size:
        out[nonempty] = np.maximum.reduceat(values.astype(np.float64), indptr[:-1][nonempty])
    return out


def finer_violations_under_caps(
    c: np.ndarray, n: np.ndarray, cap: np.ndarray, rows: np.ndarray, n_rows: int
) -> np.ndarray:
    """Per class, a lower bound on its records that violate at every finer transformation.

    For a model that holds in a class exactly when every value's share is at most its cap
    (``c_s / n <= u_s``): at a finer transformation the class ``C`` (``n`` records, ``c_s``
    of value ``s``) splits into parts; the parts that hold, ``W`` records together, hold at
    most ``u_s W`` records of ``s`` and the violating parts, ``V = n - W`` records, at most
    ``V``, so ``c_s <= u_s (n - V) + V``, i.e. ``V >= (c_s - u_s n) / (1 - u_s)`` for every
    ``s`` with ``u_s < 1``. The largest of these (and 0) is returned per class. Arguments
    are aligned with the CSR entries (``rows``: their class); rounding can only lower it.
    """
    out = np.zeros(n_rows, dtype=np.float64)
    excess = c - cap * n * (1.0 + BOUND_SLACK)
    use = (excess > 0) & (cap < 1.0)
    if use.any():
        need = excess[use] / (1.0 - cap[use]) * (1.0 - BOUND_SLACK)
        np.maximum.at(out, rows[use], np.minimum(need, n[use].astype(np.float64)))
    return out
