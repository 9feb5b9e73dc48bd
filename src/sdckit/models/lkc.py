"""LKC-privacy (Mohammed, Fung, Hung & Lee 2009).

N. Mohammed, B. C. M. Fung, P. C. K. Hung, C. Lee, "Anonymizing healthcare data: a case study
on the blood transfusion service", KDD 2009, 1285-1294 (also B. C. M. Fung, K. Wang, A. W.-C.
Fu, P. S. Yu, *Introduction to Privacy-Preserving Data Publishing*, 2010, ch. 6). An adversary
knows at most ``L`` quasi-identifier values of a victim. A table satisfies LKC-privacy when
every combination ``q`` of at most ``L`` QI values that occurs in it

* is shared by at least ``K`` records (``|T[q]| >= K``), and
* for every sensitive value ``s`` in the set ``S``, ``conf(q -> s) = |T[q and s]| / |T[q]|``
  is at most ``C``.

Evaluation: for every QI subset of size ``1..L`` the frequency set is projected onto it
(:meth:`~sdckit.core.frequency.FrequencySet.project`); a class of the full frequency set
violates when any of its projections violates (mapped back with ``parent_map``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Annotated, Any, ClassVar

import numpy as np
from pydantic import Field, field_validator

from sdckit.core.encoding import as_text
from sdckit.core.frequency import FrequencySet
from sdckit.core.spec import Integer, Number
from sdckit.errors import ConfigError
from sdckit.models._histograms import histogram
from sdckit.models.base import ModelResult, PrivacyModel, exceeds_records

__all__ = ["LKCPrivacy"]

_MAX_LISTED = 20  # violating QI subsets listed in the details


class LKCPrivacy(PrivacyModel):
    """LKC-privacy with adversary knowledge ``L``, anonymity ``K`` and confidence bound ``C``.

    ``sensitive_values`` maps each sensitive attribute to its sensitive values ``S`` (other
    values of the attribute are not sensitive). An empty mapping checks only the
    ``L``/``K`` part.

    Monotonicity: monotonic with generalization (Mohammed et al. 2009: generalizing merges
    combinations, which only grows ``|T[q]|`` and averages confidences), but not with
    suppression: a class that satisfies LKC-privacy can violate after it is merged with a
    suppressed class (a merged confidence is a weighted average that can exceed ``C``), and
    suppressing records shrinks the sub-combinations shared with other classes. So
    ``monotonic`` is ``False``.

    Parameters
    ----------
    L : int
        The adversary's knowledge: the most quasi-identifier values known (>= 1).
    K : int
        Every combination of at most ``L`` quasi-identifier values matches >= K records.
    C : float
        The largest confidence in a sensitive value, in (0, 1].
    sensitive_values : dict, optional
        Each sensitive attribute's sensitive values (none: only the L/K part is checked).

    Examples
    --------
    >>> LKCPrivacy(2, 5, 0.5).to_entry()
    {'lkc': {'L': 2, 'K': 5, 'C': 0.5, 'sensitive_values': {}}}
    """

    spec_name: ClassVar[str] = "lkc"
    spec_label: ClassVar[str] = "LKC-privacy"
    monotonic: ClassVar[bool] = False
    monotonic_with_generalization: ClassVar[bool] = True
    class_local: ClassVar[bool] = False  # a class violates through its projections

    L: Annotated[Integer, Field(ge=1)]
    K: Annotated[Integer, Field(ge=1)]
    C: Annotated[Number, Field(gt=0, le=1)]
    sensitive_values: dict[str, list[str]] = Field(default_factory=dict)

    @field_validator("sensitive_values", mode="before")
    @classmethod
    def _sensitive_values(cls, value: Any) -> dict[str, list[str]]:
        if value is None:
            return {}
        if not isinstance(value, Mapping):
            raise ValueError("must map each sensitive attribute to a list of its sensitive values")
        out: dict[str, list[str]] = {}
        for attr, values in value.items():
            if not isinstance(attr, str) or not attr:
                raise ValueError(f"names attribute {attr!r}; use a column name")
            if (
                isinstance(values, (str, bytes))
                or not isinstance(values, Sequence)
                or len(values) == 0
            ):
                raise ValueError(f"[{attr!r}] must be a non-empty list of values, got {values!r}")
            out[attr] = list(as_text(list(values)))
        return out

    @property
    def name(self) -> str:
        return f"LKC-privacy (L={self.L}, K={self.K}, C={self.C:g})"

    @property
    def sensitive_attributes(self) -> tuple[str, ...]:
        return tuple(self.sensitive_values)

    def minimal_class_size(self) -> int:
        return self.K

    def size_conflict(self, n_records: int) -> str | None:
        """``K`` above the number of records."""
        return exceeds_records("K", self.K, n_records)

    def _codes(self, fs: FrequencySet) -> dict[str, np.ndarray]:
        """Column codes of the sensitive values in ``fs``'s histograms."""
        out = {}
        for attr, values in self.sensitive_values.items():
            histogram(fs, attr, self.name)  # raises a clear error when missing
            known = {v: i for i, v in enumerate(as_text(fs.sensitive_values[attr]))}
            unknown = [v for v in values if v not in known]
            if unknown:
                raise ConfigError(
                    f"{self.name}: sensitive value(s) {unknown[:5]} of {attr!r} do not occur "
                    f"in the data; check the spelling (values present: "
                    f"{list(known)[:10]})"
                )
            out[attr] = np.array([known[v] for v in values], dtype=np.int64)
        return out

    def prepare(self, base: FrequencySet) -> None:
        """Check that the sensitive values occur in the data."""
        self._codes(base)

    def evaluate(self, fs: FrequencySet) -> ModelResult:
        """Flag the classes of ``fs`` that share a violating combination of <= L QI values."""
        codes = self._codes(fs)
        names = fs.names
        violating = np.zeros(fs.n_classes, dtype=bool)
        bad_subsets: list[str] = []
        n_bad_combinations = 0
        max_conf = 0.0
        for size in range(1, min(self.L, len(names)) + 1):
            for subset in combinations(names, size):
                proj = fs.project(list(subset))
                bad = proj.counts < self.K
                for attr, cols in codes.items():
                    sens = proj.sensitive[attr][:, cols]
                    top = np.asarray(sens.max(axis=1).todense()).ravel()
                    conf = top / np.maximum(proj.counts, 1)
                    if conf.size:
                        max_conf = max(max_conf, float(conf.max()))
                    bad |= conf > self.C
                if bad.any():
                    n_bad_combinations += int(np.count_nonzero(bad))
                    if len(bad_subsets) < _MAX_LISTED:
                        bad_subsets.append("+".join(subset))
                    violating |= bad[proj.parent_map]
        details = {
            "L": self.L,
            "K": self.K,
            "C": self.C,
            "sensitive_values": self.sensitive_values,
            "max_confidence": max_conf,
            "violating_combinations": n_bad_combinations,
            "violating_qi_subsets": bad_subsets,
            "violating_classes": int(np.count_nonzero(violating)),
            "violating_records": int(fs.counts[violating].sum()),
        }
        return self._result(violating, details)

    def describe(self) -> dict:
        """The parameters, named ``lkc_privacy`` as in earlier reports."""
        return {**super().describe(), "model": "lkc_privacy"}
