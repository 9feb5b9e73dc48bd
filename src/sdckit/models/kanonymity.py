"""k-anonymity (Sweeney 2002): every equivalence class holds at least k records.

L. Sweeney, "k-anonymity: a model for protecting privacy", International Journal of
Uncertainty, Fuzziness and Knowledge-Based Systems 10(5), 2002, 557-570. ARX:
``criteria.KAnonymity`` (``entry.count >= k``), monotonic with generalization and suppression.
"""

from __future__ import annotations

from typing import Annotated, ClassVar

import numpy as np
from pydantic import Field

from sdckit.core.frequency import FrequencySet
from sdckit.core.spec import Integer
from sdckit.models.base import ModelResult, PrivacyModel, exceeds_records

__all__ = ["KAnonymity"]


class KAnonymity(PrivacyModel):
    """k-anonymity: a class violates when it has fewer than ``k`` records.

    Monotonic (ARX ``KAnonymity``: monotonic with generalization and suppression): merging
    classes only increases sizes, and suppressing a class does not change the others.

    Parameters
    ----------
    k : int
        The smallest class size allowed (>= 1).

    Examples
    --------
    >>> KAnonymity(5).to_entry()
    {'k_anonymity': {'k': 5}}
    """

    spec_name: ClassVar[str] = "k_anonymity"
    spec_label: ClassVar[str] = "k-anonymity"
    monotonic: ClassVar[bool] = True
    monotonic_with_generalization: ClassVar[bool] = True

    k: Annotated[Integer, Field(ge=1)]

    @property
    def name(self) -> str:
        return f"{self.k}-anonymity"

    def minimal_class_size(self) -> int:
        return self.k

    def size_conflict(self, n_records: int) -> str | None:
        """``k`` above the number of records."""
        return exceeds_records("k", self.k, n_records, "no class can reach it: ")

    def evaluate(self, fs: FrequencySet) -> ModelResult:
        """Flag classes with ``count < k``."""
        counts = fs.counts
        violating = counts < self.k
        details = {
            "k": self.k,
            "n_classes": fs.n_classes,
            "min_class_size": int(counts.min()) if counts.size else 0,
            "violating_classes": int(np.count_nonzero(violating)),
            "violating_records": int(counts[violating].sum()),
        }
        return self._result(violating, details)
