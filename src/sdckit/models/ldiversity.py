"""l-diversity (Machanavajjhala, Kifer, Gehrke & Venkitasubramaniam 2007).

A. Machanavajjhala, D. Kifer, J. Gehrke, M. Venkitasubramaniam, "l-diversity: privacy beyond
k-anonymity", ACM TKDD 1(1), 2007, article 3. Three instances, as ARX implements them
(``criteria.DistinctLDiversity``, ``EntropyLDiversity``, ``RecursiveCLDiversity``):

* distinct: a class holds at least ``l`` distinct sensitive values;
* entropy: ``H(class) = -sum_s p_s log p_s >= log(l)`` (the log base cancels; natural log here,
  ARX uses log2 on both sides) and at least ``ceil(l)`` distinct values (ARX's pre-check);
* recursive (c,l): with the value counts sorted descending ``r_1 >= r_2 >= ... >= r_m``,
  ``r_1 < c * (r_l + r_{l+1} + ... + r_m)``, and ``m >= l`` (ARX's exact form).

All three are evaluated for every class at once from the CSR histogram.
"""

from __future__ import annotations

import math
from typing import Annotated, ClassVar, Literal

import numpy as np
from pydantic import Field, model_validator

from sdckit.core.frequency import FrequencySet
from sdckit.core.spec import ColumnName, Number
from sdckit.models._histograms import histogram, row_ids, row_sums
from sdckit.models.base import ModelResult, PrivacyModel

__all__ = ["LDiversity"]

# Entropies are sums of floating-point terms: a class whose entropy equals log(l) exactly in
# real arithmetic (l equally frequent values) must not fail by one rounding error.
_ENTROPY_TOLERANCE = 1e-12


class LDiversity(PrivacyModel):
    """l-diversity of one sensitive ``attribute`` (``variant`` distinct, entropy or recursive).

    Monotonicity (ARX): distinct l-diversity is monotonic with generalization and suppression
    (merging classes never loses distinct values). Entropy and recursive (c,l)-diversity are
    monotonic with generalization (Machanavajjhala et al. 2007, Theorems on the monotonicity
    property) but not with suppression: merging a diverse class with a suppressed
    (non-diverse) one can give a non-diverse class, so ARX flags them non-monotonic.

    Parameters
    ----------
    attribute : str
        The sensitive attribute.
    l : float
        Distinct and recursive: an integer >= 1; entropy: a number >= 1.
    variant : {"distinct", "entropy", "recursive"}
        Which instance (default ``distinct``).
    c : float, optional
        Recursive (c,l)-diversity's ``c`` (> 0); only for ``variant="recursive"``.

    Examples
    --------
    >>> LDiversity("disease", 3).describe()
    {'model': 'l_diversity', 'attribute': 'disease', 'l': 3, 'variant': 'distinct'}
    """

    spec_name: ClassVar[str] = "l_diversity"
    spec_label: ClassVar[str] = "l-diversity"
    monotonic_with_generalization: ClassVar[bool] = True

    attribute: ColumnName
    l: Annotated[Number, Field(ge=1)]  # noqa: E741 - the model's name
    variant: Literal["distinct", "entropy", "recursive"] = "distinct"
    c: Annotated[Number, Field(gt=0)] | None = None

    @model_validator(mode="after")
    def _variant_parameters(self) -> LDiversity:
        if self.variant != "entropy":
            if not float(self.l).is_integer():
                raise ValueError(
                    f"parameter 'l' must be an integer for {self.variant} l-diversity, got "
                    f"{self.l!r} (only variant entropy takes a fractional l)"
                )
            object.__setattr__(self, "l", int(self.l))
        if self.variant == "recursive" and self.c is None:
            raise ValueError(
                "recursive (c,l)-diversity needs parameter 'c' (a number > 0), e.g. c=3"
            )
        if self.variant != "recursive" and self.c is not None:
            raise ValueError("parameter 'c' applies only to variant 'recursive'; remove it")
        return self

    @property
    def monotonic(self) -> bool:  # type: ignore[override]
        """Distinct l-diversity only (see the class notes)."""
        return self.variant == "distinct"

    @property
    def _min_size(self) -> int:
        return math.ceil(self.l)

    @property
    def name(self) -> str:
        if self.variant == "recursive":
            return f"recursive-({self.c:g},{self.l})-diversity ({self.attribute})"
        return f"{self.variant}-{self.l:g}-diversity ({self.attribute})"

    @property
    def sensitive_attributes(self) -> tuple[str, ...]:
        return (self.attribute,)

    def minimal_class_size(self) -> int:
        return self._min_size

    # -- per-class quantities -----------------------------------------------------------
    def distinct_values(self, fs: FrequencySet) -> np.ndarray:
        """Number of distinct sensitive values per class."""
        h = histogram(fs, self.attribute, self.name)
        return np.diff(h.indptr).astype(np.int64)

    def entropies(self, fs: FrequencySet) -> np.ndarray:
        """Shannon entropy (natural log) of the sensitive values per class.

        ``H = log(n) - (sum_s f_s log f_s) / n`` with class size ``n`` and counts ``f_s``.
        """
        h = histogram(fs, self.attribute, self.name)
        f = h.data.astype(np.float64)
        total = row_sums(f, h.indptr)
        flogf = row_sums(f * np.log(f), h.indptr) if f.size else np.zeros(len(total))
        with np.errstate(divide="ignore", invalid="ignore"):
            ent = np.where(
                total > 0,
                np.log(np.where(total > 0, total, 1.0)) - flogf / np.where(total > 0, total, 1.0),
                0.0,
            )
        return np.maximum(ent, 0.0)  # rounding can leave -1e-16 for single-value classes

    def recursive_terms(self, fs: FrequencySet) -> tuple[np.ndarray, np.ndarray]:
        """Per class ``(r_1, r_l + ... + r_m)`` with counts sorted descending.

        Rows are sorted all at once with ``np.lexsort`` on ``(-count, row)``; the tail sum is
        over the entries whose rank within their row is ``>= l - 1`` (0-based).
        """
        h = histogram(fs, self.attribute, self.name)
        rows = row_ids(h.indptr)
        data = h.data.astype(np.float64)
        order = np.lexsort((-data, rows))
        sorted_data = data[order]  # rows stay contiguous (primary key), counts descending
        rank = np.arange(len(sorted_data)) - h.indptr[:-1][rows]
        n = fs.n_classes
        r1 = np.zeros(n)
        nonempty = np.diff(h.indptr) > 0
        r1[nonempty] = sorted_data[h.indptr[:-1][nonempty]]
        tail = row_sums(np.where(rank >= self.l - 1, sorted_data, 0.0), h.indptr)
        return r1, tail

    # -- evaluation ----------------------------------------------------------------------
    def unreachable(self, base: FrequencySet) -> str | None:
        """Fewer distinct sensitive values in the whole data than any variant needs per class.

        No class can hold more distinct values than all records together (generalization
        merges classes, suppression removes them), and every variant needs ``ceil(l)`` of
        them. (The entropy and recursive conditions themselves are not checked on the whole
        data: suppressing the classes dominated by one value can leave more diverse ones.)
        """
        distinct = int(self.distinct_values(base.project([]))[0]) if base.n_classes else 0
        if distinct >= self._min_size:
            return None
        return (
            f"{self.attribute!r} has only {distinct} distinct value(s) in the whole data, so no "
            f"class can hold the {self._min_size} that {self.name} needs; lower l to at most "
            f"{distinct}"
        )

    def evaluate(self, fs: FrequencySet) -> ModelResult:
        """Flag the classes that are not l-diverse (vectorized over the CSR histogram)."""
        distinct = self.distinct_values(fs)
        enough = distinct >= self._min_size
        details: dict = {
            "attribute": self.attribute,
            "variant": self.variant,
            "l": self.l,
            "min_distinct_values": int(distinct.min()) if distinct.size else 0,
        }
        if self.variant == "distinct":
            ok = enough
        elif self.variant == "entropy":
            ent = self.entropies(fs)
            ok = enough & (ent >= math.log(self.l) - _ENTROPY_TOLERANCE)
            details["min_entropy"] = float(ent.min()) if ent.size else 0.0
            details["min_entropy_l"] = float(np.exp(ent.min())) if ent.size else 0.0
        else:
            r1, tail = self.recursive_terms(fs)
            ok = enough & (r1 < self.c * tail)
            details["c"] = self.c
            with np.errstate(divide="ignore", invalid="ignore"):
                ratio = np.where(tail > 0, r1 / np.where(tail > 0, tail, 1.0), np.inf)
            worst = float(ratio.max()) if ratio.size else 0.0
            details["max_r1_over_tail"] = worst if np.isfinite(worst) else None
        violating = ~ok
        details["violating_classes"] = int(np.count_nonzero(violating))
        details["violating_records"] = int(fs.counts[violating].sum())
        return self._result(violating, details)
