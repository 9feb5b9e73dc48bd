"""(k,e)-anonymity for a numeric sensitive attribute (Zhang, Koudas, Srivastava & Yu 2007).

Q. Zhang, N. Koudas, D. Srivastava, T. Yu, "Aggregate query answering on anonymized tables",
ICDE 2007 (the definition of (k,e)-anonymity): a partition of the table is
(k,e)-anonymous when every group holds at least ``k`` different sensitive values and the
range of its sensitive values, ``max - min``, is at least ``e``. It protects numeric
sensitive values (salaries) against an adversary who learns a person's group: the value is
one of ``k`` and known only to an interval at least ``e`` wide.

Here the groups are the equivalence classes of the quasi-identifiers. Values are compared as
numbers (:mod:`sdckit.models._numeric`): ``"1"`` and ``"1.0"`` are one value.
"""

from __future__ import annotations

from typing import Annotated, ClassVar

import numpy as np
from pydantic import Field, PrivateAttr

from sdckit.core.frequency import FrequencySet
from sdckit.core.spec import ColumnName, Integer, Number
from sdckit.models._numeric import NumericHistogram
from sdckit.models.base import ModelResult, PrivacyModel

__all__ = ["KEAnonymity"]


class KEAnonymity(PrivacyModel):
    """(k,e)-anonymity: each class holds ``>= k`` distinct values of the numeric ``attribute``
    and their range ``max - min`` is ``>= e``.

    Monotonic with generalization and suppression: a class merged with any other class keeps
    its values (the distinct values of the union are at least those of either part) and the
    union's range ``[min, max]`` contains each part's range, so a satisfying class still
    satisfies after any merge (ARX's ``isMonotonicWithSuppression``) and violations only
    shrink along a generalization path. A class needs ``k`` records to hold ``k`` distinct
    values, so ``minimal_class_size`` is ``k``.

    Parameters
    ----------
    attribute : str
        The numeric sensitive attribute.
    k : int
        Distinct values a class must hold (>= 1).
    e : float
        Smallest range of the values in a class (>= 0, in the attribute's unit).

    Examples
    --------
    >>> KEAnonymity("salary", 3, 10000).to_entry()
    {'ke_anonymity': {'attribute': 'salary', 'k': 3, 'e': 10000.0}}
    """

    spec_name: ClassVar[str] = "ke_anonymity"
    spec_label: ClassVar[str] = "(k,e)-anonymity"
    monotonic: ClassVar[bool] = True
    monotonic_with_generalization: ClassVar[bool] = True

    attribute: ColumnName
    k: Annotated[Integer, Field(ge=1)]
    e: Annotated[Number, Field(ge=0)]

    _numeric: NumericHistogram | None = PrivateAttr(default=None)

    @property
    def name(self) -> str:
        return f"({self.k},{self.e:g})-anonymity ({self.attribute})"

    @property
    def sensitive_attributes(self) -> tuple[str, ...]:
        return (self.attribute,)

    def minimal_class_size(self) -> int:
        return self.k

    def _view(self) -> NumericHistogram:
        if self._numeric is None:
            self._numeric = NumericHistogram(self.attribute, self.name)
        return self._numeric

    def distinct_and_range(self, fs: FrequencySet) -> tuple[np.ndarray, np.ndarray]:
        """Per class the number of distinct values and their range ``max - min``."""
        view = self._view()
        h = view.histogram(fs)
        lo, hi = view.row_extremes(h)
        return view.distinct_numbers(h), hi - lo

    def prepare(self, base: FrequencySet) -> None:
        """Parse the attribute's values as numbers (a DataError names the first that is not)."""
        self._view().histogram(base)

    def unreachable(self, base: FrequencySet) -> str | None:
        """The whole data holds fewer than ``k`` distinct values or a range below ``e``.

        Every class of any release is a subset of all records, and (monotonicity) no class
        holds more distinct values or a wider range than all records together.
        """
        if base.n_classes == 0:
            return None
        distinct, spread = self.distinct_and_range(base.project([]))
        if distinct[0] >= self.k and spread[0] >= self.e:
            return None
        return (
            f"{self.attribute!r} holds {int(distinct[0])} distinct value(s) over a range of "
            f"{spread[0]:g} in the whole data, so no class can reach the {self.k} values and "
            f"range {self.e:g} that {self.name} needs; lower k or e"
        )

    def evaluate(self, fs: FrequencySet) -> ModelResult:
        """Flag the classes with fewer than ``k`` distinct values or a range below ``e``."""
        distinct, spread = self.distinct_and_range(fs)
        violating = (distinct < self.k) | (spread < self.e)
        details = {
            "attribute": self.attribute,
            "k": self.k,
            "e": self.e,
            "min_distinct_values": int(distinct.min()) if distinct.size else 0,
            "min_range": float(spread.min()) if spread.size else 0.0,
            "violating_classes": int(np.count_nonzero(violating)),
            "violating_records": int(fs.counts[violating].sum()),
        }
        return self._result(violating, details, class_values=spread)
