"""delta-disclosure privacy (Brickell & Shmatikov 2008).

J. Brickell, V. Shmatikov, "The cost of privacy: destruction of data-mining utility in
anonymized data publishing", KDD 2008, 70-78. With ``q_s`` the share of sensitive value
``s`` among all records and ``p_s`` its share in an equivalence class, a class is
delta-disclosure-private when ``|log(p_s / q_s)| < delta`` for every ``s``.

Implemented as ARX's ``DDisclosurePrivacy``: base-2 logarithm, the overall distribution taken
once over all records (before suppression), and a ratio exactly at ``delta`` violates (the
inequality is strict). Values absent from a class (``p_s = 0``, where the logarithm is
``-inf``):

* ``absent_values="ignore"`` (default, as ARX): only the values present in a class are
  checked;
* ``absent_values="violate"``: the definition read literally: ``|log 0| = inf`` is not below
  ``delta``, so every class must hold every value of the data.
"""

from __future__ import annotations

import math
from typing import Annotated, ClassVar, Literal

import numpy as np
from pydantic import Field, PrivateAttr

from sdckit.core.frequency import FrequencySet
from sdckit.core.spec import ColumnName, Number
from sdckit.models._shares import (
    BOUND_SLACK,
    SLACK,
    OverallDistribution,
    entry_rows_and_sizes,
    finer_violations_under_caps,
    not_prepared,
)
from sdckit.models.base import ModelResult, PrivacyModel

__all__ = ["DeltaDisclosure"]


class DeltaDisclosure(PrivacyModel):
    """delta-disclosure privacy of one sensitive ``attribute``.

    A class violates when, for a value present in it, ``p_s >= q_s 2^delta`` or
    ``p_s <= q_s 2^-delta`` (and, with ``absent_values="violate"``, when a value of the data
    is missing from it).

    Monotonicity. Not with suppression for either variant (a satisfying class merged with a
    suppressed one can leave the bounds). With ``absent_values="ignore"`` not with
    generalization either (ARX declares both ``false``): with ``q = (0.8, 0.2)`` and
    ``delta = 1``, the classes ``{s1 x4, s2 x1}`` (ratios 1, 1) and ``{s1 x10}`` (ratio
    1.25) satisfy, but their union gives ``s2`` the share 1/15, a ratio of 1/3 (``|log2| >
    1.58``). With ``absent_values="violate"`` it is monotonic with generalization: every
    part holds every value with ``q_s 2^-delta < p_s < q_s 2^delta``, an interval that keeps
    the size-weighted average of the parts' shares. Either way, a class smaller than
    ``floor(1 / max_s q_s 2^delta)`` violates (each of its values has a share of at least
    ``1/n``), and with ``absent_values="violate"`` so does one with fewer records than the
    data has distinct values (:meth:`minimal_class_size`, known after :meth:`prepare`).

    Parameters
    ----------
    attribute : str
        The sensitive attribute.
    delta : float
        The bound on ``|log2(p_s / q_s)|`` (> 0).
    absent_values : {"ignore", "violate"}
        Whether a value absent from a class violates (default ``ignore``, as ARX).

    Examples
    --------
    >>> DeltaDisclosure("disease", 1.2).to_entry()
    {'delta_disclosure': {'attribute': 'disease', 'delta': 1.2, 'absent_values': 'ignore'}}
    """

    spec_name: ClassVar[str] = "delta_disclosure"
    spec_label: ClassVar[str] = "delta-disclosure privacy"
    monotonic: ClassVar[bool] = False
    bounds_finer_violations: ClassVar[bool] = True

    attribute: ColumnName
    delta: Annotated[Number, Field(gt=0)]
    absent_values: Literal["ignore", "violate"] = "ignore"

    _overall: OverallDistribution | None = PrivateAttr(default=None)

    @property
    def monotonic_with_generalization(self) -> bool:  # type: ignore[override]
        """Only with ``absent_values="violate"`` (see the class notes)."""
        return self.absent_values == "violate"

    @property
    def name(self) -> str:
        strict = ", absent values violate" if self.absent_values == "violate" else ""
        return f"{self.delta:g}-disclosure privacy ({self.attribute}{strict})"

    @property
    def sensitive_attributes(self) -> tuple[str, ...]:
        return (self.attribute,)

    def prepare(self, base: FrequencySet) -> None:
        """Store the distribution of the attribute over all records of ``base``."""
        self._overall = OverallDistribution(base, self.attribute, self.name)

    @property
    def _present(self) -> int:
        """Number of distinct values in the data (after :meth:`prepare`)."""
        return int(np.count_nonzero(self._prepared.counts))

    @property
    def _prepared(self) -> OverallDistribution:
        if self._overall is None:
            raise not_prepared(self.name)
        return self._overall

    def minimal_class_size(self) -> int:
        """``floor(1 / u)`` with ``u = max_s q_s 2^delta`` (when below 1), and with
        ``absent_values="violate"`` at least the number of distinct values; 1 before
        :meth:`prepare`. A class of ``n <= floor(1/u) - 1`` records gives each of its values
        a share ``>= 1/n``, above ``u`` by at least ``u^2 / (1 - u)``."""
        if self._overall is None:
            return 1
        top = float(self._overall.shares.max()) * 2.0**self.delta
        size = max(1, math.floor(1.0 / top)) if top < 1.0 else 1
        if self.absent_values == "violate":
            size = max(size, self._present)
        return size

    def _entries(self, fs: FrequencySet):
        """Per CSR entry: class, count, class size, ``log2(p_s / q_s)``; and the histogram."""
        overall = self._prepared
        h = overall.histogram(fs)
        rows, c, n = entry_rows_and_sizes(h)
        big_q = overall.counts[h.indices]
        # p/q = (c N) / (Q n): products of integers, exact below 2**53
        ratio = (c * overall.total) / (big_q * n).astype(np.float64)
        return rows, c, n, big_q, ratio, h

    def log_ratios(self, fs: FrequencySet) -> np.ndarray:
        """Per class, the largest ``|log2(p_s / q_s)|`` over the values present in it (0 for
        an empty class)."""
        rows, _, _, _, ratio, _ = self._entries(fs)
        out = np.zeros(fs.n_classes)
        np.maximum.at(out, rows, np.abs(np.log2(ratio)))
        return out

    def evaluate(self, fs: FrequencySet) -> ModelResult:
        """Flag the classes with a value at or beyond ``2^(+-delta)`` times its overall share
        (and, with ``absent_values="violate"``, the classes missing a value).

        The result's ``class_values`` are :meth:`log_ratios`.
        """
        rows, _, _, _, ratio, h = self._entries(fs)
        factor = 2.0**self.delta
        out_of_bounds = (ratio >= factor * (1.0 - SLACK)) | (ratio <= (1.0 + SLACK) / factor)
        violating = np.zeros(fs.n_classes, dtype=bool)
        violating[rows[out_of_bounds]] = True
        missing = np.diff(h.indptr) < self._present
        if self.absent_values == "violate":
            violating |= missing
        logs = self.log_ratios(fs)
        details = {
            "attribute": self.attribute,
            "delta": self.delta,
            "absent_values": self.absent_values,
            "max_abs_log2_ratio": float(logs.max()) if logs.size else 0.0,
            "classes_missing_values": int(np.count_nonzero(missing)),
            "violating_classes": int(np.count_nonzero(violating)),
            "violating_records": int(fs.counts[violating].sum()),
        }
        return self._result(violating, details, class_values=logs)

    def finer_violations(self, fs: FrequencySet, result: ModelResult | None = None) -> float:
        """Lower bound on the violating records at every finer transformation.

        Under either variant a satisfying part holds a value ``s`` with a share below
        ``u_s = q_s 2^delta`` (or not at all), so a class keeps at least
        ``(c_s - u_s n) / (1 - u_s)`` records in violating parts
        (:func:`~sdckit.models._shares.finer_violations_under_caps`).

        With ``absent_values="violate"`` a satisfying part also holds every value of the data
        with a share above ``l_s = q_s 2^-delta``, so the satisfying parts of a class, ``W``
        records together, hold more than ``l_s W`` records of ``s``: ``W < c_s / l_s`` for
        every ``s`` and at least ``n - min_s c_s / l_s`` records violate -- all ``n`` when
        the class misses a value. Per class the larger bound counts; summed over classes.
        """
        rows, c, n, big_q, _, h = self._entries(fs)
        cap = big_q / self._prepared.total * 2.0**self.delta
        per_class = finer_violations_under_caps(c, n, cap, rows, fs.n_classes)
        if self.absent_values == "violate" and fs.n_classes:
            floor = big_q / self._prepared.total * 2.0**-self.delta
            # rounding may only shrink the bound: divide by a slightly smaller l_s
            room = c / (floor * (1.0 - BOUND_SLACK))
            sizes = fs.counts.astype(np.float64)
            most = np.full(fs.n_classes, np.inf)
            nonempty = np.diff(h.indptr) > 0
            if room.size:
                most[nonempty] = np.minimum.reduceat(room, h.indptr[:-1][nonempty])
            need = np.clip(sizes - most, 0.0, sizes) * (1.0 - BOUND_SLACK)
            missing = np.diff(h.indptr) < self._present
            need[missing] = sizes[missing]
            per_class = np.maximum(per_class, need)
        return float(per_class.sum())
