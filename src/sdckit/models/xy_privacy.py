"""(X,Y)-privacy: (X,Y)-anonymity and (X,Y)-linkability (Wang & Fung 2006).

K. Wang, B. C. M. Fung, "Anonymizing sequential releases", KDD 2006, 414-423. ``X`` are the
attributes an adversary can link on (here the quasi-identifiers, so an ``X`` group is an
equivalence class) and ``Y`` attributes whose values must not be tied to an ``X`` group:

* (X,Y)-anonymity: ``a_Y(x)``, the number of distinct ``Y`` values that occur with the
  ``X`` value ``x``, is at least ``k`` for every ``x`` (with ``Y`` a person id this is
  k-anonymity counted over persons; with ``Y`` a diagnosis, distinct l-diversity);
* (X,Y)-linkability: the confidence of inferring ``y`` from ``x``,
  ``conf(x -> y) = |T[x, y]| / |T[x]|``, is at most ``h`` for every ``x`` and ``y``.

(X,Y)-privacy asks for whichever bounds are given (at least one).
"""

from __future__ import annotations

import math
from typing import Annotated, ClassVar

import numpy as np
from pydantic import Field, field_validator, model_validator

from sdckit.core.frequency import FrequencySet, JointAttribute
from sdckit.core.spec import ColumnList, Integer, Number
from sdckit.models._histograms import histogram
from sdckit.models.base import ModelResult, PrivacyModel

__all__ = ["XYPrivacy"]

# "conf <= h" is decided as "count <= h * size * (1 + _SLACK)" so that a confidence equal to
# h in exact arithmetic (3/5 against 0.6) does not fail by the rounding of h * size.
_SLACK = 1e-12


class XYPrivacy(PrivacyModel):
    """(X,Y)-anonymity (``k``) and/or (X,Y)-linkability (``h``) of the attribute ``y``.

    Monotonicity: (X,Y)-anonymity counts distinct values, which a merge never lowers
    (monotonic with generalization and suppression, as distinct l-diversity).
    (X,Y)-linkability is monotonic with generalization: if ``a1 <= h n1`` and
    ``a2 <= h n2`` then ``(a1 + a2) <= h (n1 + n2)``, so the merge of two satisfying classes
    satisfies; not with suppression: merging a satisfying class with a violating one can
    violate. ``minimal_class_size``: ``k`` distinct values need ``k`` records, and a class of
    ``n`` records has a value of confidence at least ``1/n``, so ``n >= ceil(1/h)``.

    Parameters
    ----------
    y : list of str
        The attributes ``Y`` (a person id; a diagnosis and a doctor, ...), none a
        quasi-identifier; one column may be given as a string. With several, a ``Y`` value
        is a record's combination of their values (a
        :class:`~sdckit.core.frequency.JointAttribute`).
    k : int, optional
        (X,Y)-anonymity: distinct ``y`` values each class must hold (>= 1).
    h : float, optional
        (X,Y)-linkability: the largest confidence ``conf(x -> y)`` allowed, in (0, 1].

    Examples
    --------
    >>> XYPrivacy("diagnosis", k=3, h=0.6).describe()
    {'model': 'xy_privacy', 'y': ['diagnosis'], 'k': 3, 'h': 0.6}
    """

    spec_name: ClassVar[str] = "xy_privacy"
    spec_label: ClassVar[str] = "(X,Y)-privacy"
    monotonic_with_generalization: ClassVar[bool] = True

    y: ColumnList
    k: Annotated[Integer, Field(ge=1)] | None = None
    h: Annotated[Number, Field(gt=0, le=1)] | None = None

    @field_validator("y")
    @classmethod
    def _distinct_y(cls, value: list[str]) -> list[str]:
        if len(set(value)) != len(value):
            raise ValueError(f"names a column twice ({', '.join(value)}); name each once")
        return value

    @model_validator(mode="after")
    def _a_bound(self) -> XYPrivacy:
        if self.k is None and self.h is None:
            raise ValueError(
                "needs at least one bound: 'k' for (X,Y)-anonymity (distinct y values per "
                "class) and/or 'h' for (X,Y)-linkability (largest confidence x -> y)"
            )
        return self

    @property
    def monotonic(self) -> bool:  # type: ignore[override]
        """(X,Y)-anonymity alone is monotonic with suppression; linkability is not."""
        return self.h is None

    @property
    def name(self) -> str:
        parts = []
        if self.k is not None:
            parts.append(f"k={self.k}")
        if self.h is not None:
            parts.append(f"h={self.h:g}")
        return f"(X,Y)-privacy ({', '.join(parts)}, Y={self.y_attribute})"

    @property
    def y_attribute(self) -> str:
        """The histogram ``Y`` is counted in: the column, or the joint attribute of several."""
        return self.y[0] if len(self.y) == 1 else JointAttribute(self.y)

    @property
    def sensitive_attributes(self) -> tuple[str, ...]:
        return (self.y_attribute,)

    def minimal_class_size(self) -> int:
        size = self.k or 1
        if self.h is not None:
            size = max(size, math.ceil(1.0 / self.h - 1e-9))
        return size

    def anonymity_and_confidence(self, fs: FrequencySet) -> tuple[np.ndarray, np.ndarray]:
        """Per class ``a_Y(x)`` (distinct ``y`` values) and the largest count of one value."""
        hist = histogram(fs, self.y_attribute, self.name)
        distinct = np.diff(hist.indptr).astype(np.int64)
        top = np.zeros(hist.shape[0], dtype=np.int64)
        nonempty = distinct > 0
        if hist.nnz:
            top[nonempty] = np.maximum.reduceat(
                hist.data.astype(np.int64), hist.indptr[:-1][nonempty]
            )
        return distinct, top

    def unreachable(self, base: FrequencySet) -> str | None:
        """(X,Y)-anonymity: fewer than ``k`` distinct ``y`` values in the whole data.

        (Linkability is not checked on the whole data: suppressing the classes dominated by
        one value can leave satisfying ones.)
        """
        if self.k is None or base.n_classes == 0:
            return None
        distinct = int(self.anonymity_and_confidence(base.project([]))[0][0])
        if distinct >= self.k:
            return None
        return (
            f"Y {str(self.y_attribute)!r} has only {distinct} distinct value(s) in the whole "
            f"data, so no class can be linked to the {self.k} that {self.name} needs; lower k "
            f"to at most {distinct}"
        )

    def evaluate(self, fs: FrequencySet) -> ModelResult:
        """Flag the classes with fewer than ``k`` distinct values or a confidence above ``h``.

        The result's ``class_values`` are the classes' largest confidences.
        """
        distinct, top = self.anonymity_and_confidence(fs)
        sizes = np.asarray(fs.counts, dtype=np.int64)
        conf = np.where(sizes > 0, top / np.maximum(sizes, 1), 0.0)
        violating = np.zeros(fs.n_classes, dtype=bool)
        details: dict = {"y": self.y, "k": self.k, "h": self.h}
        if self.k is not None:
            violating |= distinct < self.k
        if self.h is not None:
            violating |= top > self.h * sizes * (1 + _SLACK)
        details["min_distinct_y"] = int(distinct.min()) if distinct.size else 0
        details["max_confidence"] = float(conf.max()) if conf.size else 0.0
        details["violating_classes"] = int(np.count_nonzero(violating))
        details["violating_records"] = int(fs.counts[violating].sum())
        return self._result(violating, details, class_values=conf)
