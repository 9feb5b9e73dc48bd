"""beta-likeness (Cao & Karras 2012), basic and enhanced.

J. Cao, P. Karras, "Publishing microdata with a robust privacy guarantee", PVLDB 5(11), 2012,
1388-1399. With ``q_s`` the share of sensitive value ``s`` among all records and ``p_s`` its
share in an equivalence class, the relative gain of an adversary who learns the class is
``D(p_s, q_s) = (p_s - q_s) / q_s``; only positive gains count (``p_s > q_s``).

* basic beta-likeness: ``D(p_s, q_s) <= beta`` for every ``s`` in every class;
* enhanced beta-likeness: ``D(p_s, q_s) <= min(beta, -ln q_s)``, which tightens the bound
  for frequent values so that ``p_s`` stays below ``q_s (1 - ln q_s) < 1``.

As ARX (``BasicBLikeness``, ``EnhancedBLikeness``) the overall distribution ``q`` is taken
once over all records (before suppression) and a gain equal to its bound satisfies. Both are
the cap ``p_s <= u_s`` with ``u_s = q_s (1 + beta)`` or ``q_s (1 + min(beta, -ln q_s))``;
values absent from a class (``p_s = 0``) never violate.
"""

from __future__ import annotations

import math
from typing import Annotated, ClassVar, Literal

import numpy as np
from pydantic import Field, PrivateAttr

from sdckit.core.frequency import FrequencySet
from sdckit.core.spec import ColumnName, Number
from sdckit.models._shares import (
    SLACK,
    OverallDistribution,
    entry_rows_and_sizes,
    finer_violations_under_caps,
    not_prepared,
)
from sdckit.models.base import ModelResult, PrivacyModel

__all__ = ["BetaLikeness"]


class BetaLikeness(PrivacyModel):
    """beta-likeness (``variant`` basic or enhanced) of one sensitive ``attribute``.

    Monotonicity (ARX declares the same: not with suppression, with generalization): each
    value's cap ``p_s <= u_s`` is kept by a merged class, whose ``p_s`` is the size-weighted
    average of its parts'; merging a satisfying class with a suppressed, violating one can
    break it. A class of ``n`` records gives each of its values a share of at least ``1/n``,
    so a class smaller than ``floor(1 / max_s u_s)`` always violates
    (:meth:`minimal_class_size`, known after :meth:`prepare`).

    Parameters
    ----------
    attribute : str
        The sensitive attribute.
    beta : float
        The largest relative gain allowed (> 0).
    variant : {"basic", "enhanced"}
        Default ``basic``.

    Examples
    --------
    >>> BetaLikeness("disease", 1.0, "enhanced").to_entry()
    {'beta_likeness': {'attribute': 'disease', 'beta': 1.0, 'variant': 'enhanced'}}
    """

    spec_name: ClassVar[str] = "beta_likeness"
    spec_label: ClassVar[str] = "beta-likeness"
    monotonic: ClassVar[bool] = False
    monotonic_with_generalization: ClassVar[bool] = True
    bounds_finer_violations: ClassVar[bool] = True

    attribute: ColumnName
    beta: Annotated[Number, Field(gt=0)]
    variant: Literal["basic", "enhanced"] = "basic"

    _overall: OverallDistribution | None = PrivateAttr(default=None)
    _cap: np.ndarray | None = PrivateAttr(default=None)

    @property
    def name(self) -> str:
        return f"{self.variant}-{self.beta:g}-likeness ({self.attribute})"

    @property
    def sensitive_attributes(self) -> tuple[str, ...]:
        return (self.attribute,)

    def prepare(self, base: FrequencySet) -> None:
        """Store the distribution over all records and each value's cap ``u_s``."""
        overall = OverallDistribution(base, self.attribute, self.name)
        q = overall.shares
        with np.errstate(divide="ignore"):
            gain = (
                np.minimum(self.beta, -np.log(np.where(q > 0, q, 1.0)))
                if self.variant == "enhanced"
                else np.full(len(q), float(self.beta))
            )
        self._overall = overall
        self._cap = q * (1.0 + gain)

    def minimal_class_size(self) -> int:
        """``floor(1 / u_max)`` with ``u_max`` the largest cap of a value of the data (1
        before :meth:`prepare`): a class of ``n <= floor(1/u) - 1`` records gives each of
        its values a share ``>= 1/n``, above every cap by at least ``u^2 / (1 - u)``."""
        if self._cap is None or self._overall is None:
            return 1
        present = self._overall.counts > 0
        top = float(self._cap[present].max()) if present.any() else 1.0
        return max(1, math.floor(1.0 / top)) if top < 1.0 else 1

    def _entries(self, fs: FrequencySet) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Per CSR entry of ``fs``'s histogram: class, count, class size, value column."""
        if self._overall is None or self._cap is None:
            raise not_prepared(self.name)
        h = self._overall.histogram(fs)
        rows, c, n = entry_rows_and_sizes(h)
        return rows, c, n, h.indices

    def gains(self, fs: FrequencySet) -> np.ndarray:
        """Per class, the largest relative gain ``(p_s - q_s) / q_s`` of its values (``-1``
        for an empty class)."""
        rows, c, n, cols = self._entries(fs)
        assert self._overall is not None
        big_n, big_q = self._overall.total, self._overall.counts[cols]
        # (c/n - Q/N) / (Q/N) = (c N - Q n) / (Q n): exact integers up to the division
        gain = (c * big_n - big_q * n) / (big_q * n).astype(np.float64)
        out = np.full(fs.n_classes, -1.0)
        np.maximum.at(out, rows, gain)
        return out

    def evaluate(self, fs: FrequencySet) -> ModelResult:
        """Flag the classes where a value's share exceeds its cap ``u_s``.

        The result's ``class_values`` are each class's largest relative gain.
        """
        rows, c, n, cols = self._entries(fs)
        assert self._cap is not None
        over = c > self._cap[cols] * n * (1.0 + SLACK)
        violating = np.zeros(fs.n_classes, dtype=bool)
        violating[rows[over]] = True
        gains = self.gains(fs)
        details = {
            "attribute": self.attribute,
            "variant": self.variant,
            "beta": self.beta,
            "max_relative_gain": float(gains.max()) if gains.size else 0.0,
            "violating_classes": int(np.count_nonzero(violating)),
            "violating_records": int(fs.counts[violating].sum()),
        }
        return self._result(violating, details, class_values=gains)

    def finer_violations(self, fs: FrequencySet, result: ModelResult | None = None) -> float:
        """Lower bound on the violating records at every finer transformation: per class
        and value, ``(c_s - u_s n) / (1 - u_s)``
        (:func:`~sdckit.models._shares.finer_violations_under_caps`), summed over classes."""
        rows, c, n, cols = self._entries(fs)
        assert self._cap is not None
        return float(finer_violations_under_caps(c, n, self._cap[cols], rows, fs.n_classes).sum())
