"""MultiR k-anonymity: k counted over persons, not rows (Nergiz, Clifton & Nergiz 2007/2009).

M. E. Nergiz, C. Clifton, A. E. Nergiz, "Multirelational k-anonymity", ICDE 2007 (poster) and
IEEE TKDE 21(8), 2009, 1104-1117. When a person owns several records (the join of a person
table with visits, purchases, ...), k records in a class may all be one person's, and an
adversary who links the class links that person. MultiR k-anonymity counts the *persons*
(owners, identified by a person id column) behind a class: every class must hold records of
at least ``k`` distinct persons.

The distinct persons of each class come from the frequency set's sparse (classes x person ids)
histogram of the person column: its stored entries are the distinct (class, person) pairs, so
it holds at most one entry per record, never a dense classes x persons table, and rolling it
up merges the pairs (:func:`~sdckit.core.frequency.regroup_histogram`). A class's distinct
persons are the stored entries of its row.
"""

from __future__ import annotations

from typing import Annotated, ClassVar

import numpy as np
from pydantic import Field

from sdckit.core.frequency import FrequencySet
from sdckit.core.spec import ColumnName, Integer
from sdckit.models._histograms import histogram
from sdckit.models.base import ModelResult, PrivacyModel

__all__ = ["MultiRKAnonymity"]


class MultiRKAnonymity(PrivacyModel):
    """MultiR k-anonymity: every class holds records of at least ``k`` distinct persons.

    Monotonic with generalization and suppression: the persons of a merged class are the
    union of the parts' persons, never fewer than either part's (as distinct l-diversity).
    ``k`` distinct persons need ``k`` records, so ``minimal_class_size`` is ``k``.

    The check is the class-level one: each quasi-identifier class is linked to ``k``
    persons. (Nergiz et al. also treat an adversary who knows several of one person's
    records at once, which constrains how a person's records are generalized together; that
    is an algorithmic matter of their clustering and is not a per-class predicate.)

    Parameters
    ----------
    k : int
        Distinct persons a class must hold (>= 1).
    person : str
        The column identifying the person who owns each record.

    Examples
    --------
    >>> MultiRKAnonymity(5, "person_id").to_entry()
    {'multir_k_anonymity': {'k': 5, 'person': 'person_id'}}
    """

    spec_name: ClassVar[str] = "multir_k_anonymity"
    spec_label: ClassVar[str] = "MultiR k-anonymity"
    monotonic: ClassVar[bool] = True
    monotonic_with_generalization: ClassVar[bool] = True

    k: Annotated[Integer, Field(ge=1)]
    person: ColumnName

    @property
    def name(self) -> str:
        return f"MultiR {self.k}-anonymity (persons: {self.person})"

    @property
    def sensitive_attributes(self) -> tuple[str, ...]:
        return (self.person,)

    def minimal_class_size(self) -> int:
        return self.k

    def distinct_persons(self, fs: FrequencySet) -> np.ndarray:
        """Number of distinct persons per class."""
        h = histogram(fs, self.person, self.name)
        return np.diff(h.indptr).astype(np.int64)

    def unreachable(self, base: FrequencySet) -> str | None:
        """Fewer than ``k`` persons in the whole data: no class can hold ``k`` of them."""
        if base.n_classes == 0:
            return None
        persons = int(self.distinct_persons(base.project([]))[0])
        if persons >= self.k:
            return None
        return (
            f"the data holds records of only {persons} distinct person(s) in {self.person!r}, "
            f"so no class can hold the {self.k} that {self.name} needs; lower k to at most "
            f"{persons}"
        )

    def evaluate(self, fs: FrequencySet) -> ModelResult:
        """Flag the classes with fewer than ``k`` distinct persons."""
        persons = self.distinct_persons(fs)
        violating = persons < self.k
        details = {
            "k": self.k,
            "person": self.person,
            "min_distinct_persons": int(persons.min()) if persons.size else 0,
            "violating_classes": int(np.count_nonzero(violating)),
            "violating_records": int(fs.counts[violating].sum()),
        }
        return self._result(violating, details, class_values=persons.astype(float))
