"""(alpha,k)-anonymity (Wong, Li, Fu & Wang 2006).

R. C.-W. Wong, J. Li, A. W.-C. Fu, K. Wang, "(alpha, k)-anonymity: an enhanced k-anonymity
model for privacy-preserving data publishing", KDD 2006, 754-759. A table is
(alpha,k)-anonymous with respect to a sensitive attribute when every equivalence class

* holds at least ``k`` records (k-anonymity), and
* for each sensitive value ``s``, the relative frequency of ``s`` in the class,
  ``|class and s| / |class|``, is at most ``alpha`` (the alpha-deassociation requirement).

Wong et al. state the requirement for one sensitive value (simple (alpha,k)-anonymity) and
for a set of sensitive values each bounded by ``alpha`` (general (alpha,k)-anonymity); here
``values`` names that set, and without it every value of the attribute is bounded.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Annotated, Any, ClassVar

import numpy as np
from pydantic import Field, PrivateAttr, field_validator

from sdckit.core.encoding import as_text
from sdckit.core.frequency import FrequencySet
from sdckit.core.spec import ColumnName, Integer, Number
from sdckit.models._histograms import histogram
from sdckit.models._shares import (
    SLACK,
    entry_rows_and_sizes,
    finer_violations_under_caps,
    row_max,
    value_columns,
)
from sdckit.models.base import ModelResult, PrivacyModel

__all__ = ["AlphaKAnonymity", "sensitive_value_list"]


def sensitive_value_list(value: Any) -> list[str] | None:
    """A list of sensitive values in the text form the data is matched in (one value given
    alone is a list of one); ``None`` stays ``None``."""
    if value is None:
        return None
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, Sequence) or isinstance(value, bytes) or len(value) == 0:
        raise ValueError("must be a non-empty list of sensitive values, e.g. [HIV, cancer]")
    if any(isinstance(v, (bool, list, dict)) or v is None for v in value):
        raise ValueError(f"must list values (text or numbers), got {list(value)!r}")
    out = [str(v) for v in as_text(list(value))]
    if len(set(out)) != len(out):
        raise ValueError(f"lists a value twice: {out!r}")
    return out


class AlphaKAnonymity(PrivacyModel):
    """(alpha,k)-anonymity of one sensitive ``attribute``.

    A class violates when it holds fewer than ``k`` records or when a bounded value's share
    of it exceeds ``alpha`` (a share equal to ``alpha`` satisfies, as in Wong et al.).

    Monotonicity: with generalization (Wong et al. 2006, the monotonicity property their
    top-down algorithm relies on): a merged class is larger than its parts and each value's
    share in it is the size-weighted average of its shares in the parts, so it is at most
    ``alpha`` when it is in every part. Not with suppression: merging a satisfying class
    ``{a, b}`` (alpha = 0.5) with a suppressed class ``{a}`` gives ``a`` a share of 2/3.
    A class smaller than ``k`` always violates and, when every value is bounded, so does a
    class smaller than ``floor(1 / alpha)`` (one of its values has a share of at least
    ``1 / n > alpha``): :meth:`minimal_class_size`.

    Parameters
    ----------
    attribute : str
        The sensitive attribute.
    alpha : float
        The largest share of a bounded value in a class, in [0, 1].
    k : int
        The smallest class size (>= 1).
    values : list of str, optional
        The bounded (sensitive) values; default: every value of the attribute.

    Examples
    --------
    >>> AlphaKAnonymity("disease", 0.5, 3).to_entry()
    {'alpha_k_anonymity': {'attribute': 'disease', 'alpha': 0.5, 'k': 3, 'values': None}}
    """

    spec_name: ClassVar[str] = "alpha_k_anonymity"
    spec_label: ClassVar[str] = "(alpha,k)-anonymity"
    monotonic: ClassVar[bool] = False
    monotonic_with_generalization: ClassVar[bool] = True
    bounds_finer_violations: ClassVar[bool] = True

    attribute: ColumnName
    alpha: Annotated[Number, Field(ge=0, le=1)]
    k: Annotated[Integer, Field(ge=1)]
    values: list[str] | None = None

    _columns: np.ndarray | None = PrivateAttr(default=None)

    @field_validator("values", mode="before")
    @classmethod
    def _values(cls, value: Any) -> list[str] | None:
        return sensitive_value_list(value)

    @property
    def name(self) -> str:
        which = f", values {', '.join(self.values)}" if self.values else ""
        return f"({self.alpha:g},{self.k})-anonymity ({self.attribute}{which})"

    @property
    def sensitive_attributes(self) -> tuple[str, ...]:
        return (self.attribute,)

    def minimal_class_size(self) -> int:
        """``k``, or ``floor(1 / alpha)`` when larger and every value is bounded.

        A class of ``n <= floor(1/alpha) - 1 < 1/alpha`` records gives its most frequent
        value a share of at least ``1/n``, which exceeds ``alpha`` by at least
        ``alpha^2 / (1 - alpha)`` (far above the comparison's rounding slack).
        """
        if self.values is None and self.alpha > 0:
            return max(self.k, math.floor(1.0 / self.alpha))
        return self.k

    def prepare(self, base: FrequencySet) -> None:
        """Map the named values to histogram columns (an error names the absent ones)."""
        self._columns = self._value_columns(base)

    def _value_columns(self, fs: FrequencySet) -> np.ndarray | None:
        if self.values is None:
            return None
        return value_columns(fs, self.attribute, self.values, self.name, "values")

    def unreachable(self, base: FrequencySet) -> str | None:
        """``k`` above the number of records, or ``alpha`` below ``1 / m`` when all ``m``
        values of the data are bounded (then every non-empty class has a value with a share
        of at least ``1/m > alpha``)."""
        if self.k > base.n_records:
            return (
                f"{self.name}: k={self.k} is larger than the number of records "
                f"({base.n_records}); choose k <= {base.n_records}"
            )
        h = histogram(base, self.attribute, self.name)
        present = np.flatnonzero(np.asarray(h.sum(axis=0)).ravel() > 0)
        if self.values is not None:
            bounded = set(self._value_columns(base).tolist())  # type: ignore[union-attr]
            if not set(present.tolist()) <= bounded:
                return None
        m = len(present)
        if m and self.alpha * m < 1.0 - SLACK:
            return (
                f"{self.name}: {self.attribute!r} has {m} distinct bounded value(s) in the whole "
                f"data, so every class gives one of them a share of at least 1/{m} > alpha="
                f"{self.alpha:g}; raise alpha to at least 1/{m}"
            )
        return None

    def shares(self, fs: FrequencySet) -> np.ndarray:
        """Per class, the largest share of a bounded value (0 for a class without one)."""
        _, c, n, bounded, indptr = self._entries(fs)
        return row_max(np.where(bounded, c / np.maximum(n, 1), 0.0), indptr)

    def _entries(
        self, fs: FrequencySet
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per CSR entry: class, count, class size, whether its value is bounded; and the
        histogram's row pointers."""
        h = histogram(fs, self.attribute, self.name)
        rows, c, n = entry_rows_and_sizes(h)
        cols = self._columns if self._columns is not None else self._value_columns(fs)
        bounded = np.ones(len(c), dtype=bool) if cols is None else np.isin(h.indices, cols)
        return rows, c, n, bounded, h.indptr

    def _caps(self, fs: FrequencySet) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per CSR entry: class, count, class size and cap (alpha, or 1 for unbounded values)."""
        rows, c, n, bounded, _ = self._entries(fs)
        return rows, c, n, np.where(bounded, float(self.alpha), 1.0)

    def evaluate(self, fs: FrequencySet) -> ModelResult:
        """Flag the classes smaller than ``k`` or with a bounded value's share above alpha.

        The result's ``class_values`` are each class's largest bounded share.
        """
        rows, c, n, bounded, indptr = self._entries(fs)
        over = bounded & (c > self.alpha * n * (1.0 + SLACK))
        too_frequent = np.zeros(fs.n_classes, dtype=bool)
        too_frequent[rows[over]] = True
        too_small = fs.counts < self.k
        violating = too_small | too_frequent
        worst = row_max(np.where(bounded, c / np.maximum(n, 1), 0.0), indptr)
        details = {
            "attribute": self.attribute,
            "alpha": self.alpha,
            "k": self.k,
            "values": self.values,
            "max_share": float(worst.max()) if worst.size else 0.0,
            "min_class_size": int(fs.counts.min()) if fs.n_classes else 0,
            "classes_below_k": int(np.count_nonzero(too_small)),
            "classes_above_alpha": int(np.count_nonzero(too_frequent)),
            "violating_classes": int(np.count_nonzero(violating)),
            "violating_records": int(fs.counts[violating].sum()),
        }
        return self._result(violating, details, class_values=worst)

    def finer_violations(self, fs: FrequencySet, result: ModelResult | None = None) -> float:
        """Lower bound on the violating records at every finer transformation.

        A class smaller than ``k`` splits into parts smaller than ``k``: all its records
        violate. A larger class ``C`` with ``c_s`` records of a bounded value ``s`` keeps at
        least ``(c_s - alpha |C|) / (1 - alpha)`` of them in violating parts
        (:func:`~sdckit.models._shares.finer_violations_under_caps`). The sum over classes.
        """
        rows, c, n, cap = self._caps(fs)
        per_class = finer_violations_under_caps(c, n, cap, rows, fs.n_classes)
        small = fs.counts < self.k
        per_class[small] = fs.counts[small]
        return float(per_class.sum())
