"""Sensitivity (primary suppression) rules and the protection interval each implies.

Every rule flags the cells an intruder could estimate too closely and says how far the
published information must leave the cell's value uncertain: the upper and lower protection
levels ``UPL``/``LPL`` (the feasibility interval of a suppressed cell must reach
``value + UPL`` and ``value - LPL``). Definitions follow Hundepool et al., *Statistical
Disclosure Control* (Wiley 2012), sec. 4.2, and the tau-Argus manual (sec. 4.2, "safety
rules"); ``X`` is the cell total and ``x1 >= x2 >= ...`` its largest contributions (of
holdings, when contributions of one holding are combined):

* **frequency** (threshold ``n``): unsafe when ``0 < contributors < n``; protection
  ``safety_range`` percent of the value.
* **(n,k)-dominance**: unsafe when ``x1 + ... + xn > k/100 * X``;
  ``UPL = 100/k * (x1 + ... + xn) - X``.
* **p%**: unsafe when ``X - x1 - x2 < p/100 * x1`` (the second largest contributor, subtracting
  its own value, would learn ``x1`` within ``p`` percent); ``UPL = p/100 * x1 - (X - x1 - x2)``.
* **pq**: the p% rule with prior knowledge ``q`` percent: unsafe when
  ``X - x1 - x2 < p/q * x1``; ``UPL = p/q * x1 - (X - x1 - x2)``.
* **zero**: cells with contributors but value 0 (tau-Argus "zero unsafe"), protection
  ``safety_range`` in value units.
* **request** (tau-Argus' request rule, batch ``REQ(p1, p2, MinFreq, SafetyMargin)``): some
  respondents asked for protection, flagged by one or two codes of a request column. With
  ``r`` the largest contribution of a requesting record of the cell (tau-Argus only counts a
  positive one) and ``c`` its code, the cell is unsafe when ``r > p_c/100 * X`` (the
  percentage of ``c``; 0 switches that test off) or when it has a requesting record and
  fewer than ``min_frequency`` records; protection ``safety_margin`` percent of the value.
  Source: tau-Argus' C++ core (``sdcTools/libtauargus``: ``CTable::UnsafeCellPeep`` for the
  tests, ``CDataCell::operator+=`` for ``r`` and ``c``, ``CTable::SetProtectionLevelCell``
  for the margin) and its batch parser (``sdcTools/tauargus``, ``REQ``).

The protection is symmetric (``LPL = UPL``) as in tau-Argus, with ``LPL`` at most the value
when the cells cannot be negative; a cell flagged by several rules gets the largest levels.
Every primary cell gets at least ``min_protection`` (a suppressed cell whose interval has
width 0 would be disclosed exactly).
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar

import numpy as np
from pydantic import BeforeValidator, Field, model_validator

from sdckit.core.spec import Integer, Number, Spec
from sdckit.errors import DataError
from sdckit.tables.table import Table

__all__ = [
    "DominanceRule",
    "FrequencyRule",
    "PPercentRule",
    "PQRule",
    "Primary",
    "RULES",
    "RequestRule",
    "SensitivityRule",
    "ZeroRule",
    "primary_cells",
]

Percent = Annotated[Number, Field(gt=0, le=100)]
#: A percentage that may be 0 (that test switched off, as tau-Argus reads 0).
PercentOrOff = Annotated[Number, Field(ge=0, le=100)]


def _code_text(value: Any) -> Any:
    """A request code as the canonical text of the data's values (``1`` and ``1.0`` -> ``"1"``,
    as :func:`sdckit.core.encoding.as_text` writes the column)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, float):
        return str(value)
    return value


def _code_list(value: Any) -> Any:
    if isinstance(value, (str, int, float)) and not isinstance(value, bool):
        value = [value]
    if isinstance(value, (list, tuple)):
        return [_code_text(v) for v in value]
    return value


def _number_list(value: Any) -> Any:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return [value]
    return value


class SensitivityRule(Spec):
    """A primary suppression rule: :meth:`unsafe` and :meth:`protection` per cell."""

    #: The rule reads the largest contributions (they must be non-negative).
    needs_contributions: ClassVar[bool] = False

    @abstractmethod
    def unsafe(self, table: Table) -> np.ndarray:
        """Which cells the rule flags."""

    @abstractmethod
    def protection(self, table: Table) -> np.ndarray:
        """The upper protection level of every cell (meaningful where :meth:`unsafe`)."""

    def top_needed(self) -> int:
        """How many largest contributions per cell the rule reads."""
        return 0


class FrequencyRule(SensitivityRule):
    """Minimum frequency: fewer than ``threshold`` contributors (but at least one).

    Parameters
    ----------
    threshold : int
        A cell with fewer contributors (and at least one) is unsafe.
    safety_range : float
        The protection: percent of the cell's value.
    """

    spec_name: ClassVar[str] = "frequency"
    spec_label: ClassVar[str] = "frequency rule"

    threshold: Annotated[Integer, Field(ge=1)]
    safety_range: Annotated[Number, Field(ge=0)] = 0.0

    def unsafe(self, table: Table) -> np.ndarray:
        """``0 < contributors < threshold``."""
        c = table.contributors
        return (c > 0) & (c < self.threshold)

    def protection(self, table: Table) -> np.ndarray:
        """``safety_range`` percent of the cell's value."""
        return np.abs(table.value) * self.safety_range / 100.0


class DominanceRule(SensitivityRule):
    """(n,k)-dominance: the ``n`` largest contributions exceed ``k`` percent of the total.

    Parameters
    ----------
    n : int
        How many of the largest contributions are summed.
    k : float
        The percent of the cell total their sum may reach.
    """

    spec_name: ClassVar[str] = "dominance"
    spec_label: ClassVar[str] = "(n,k)-dominance rule"
    needs_contributions: ClassVar[bool] = True

    n: Annotated[Integer, Field(ge=1)]
    k: Percent

    def top_needed(self) -> int:
        """The ``n`` largest."""
        return self.n

    def _top_sum(self, table: Table) -> np.ndarray:
        return table.top[:, : self.n].sum(axis=1)

    def unsafe(self, table: Table) -> np.ndarray:
        """``x1 + ... + xn > k/100 X`` (cells with contributors)."""
        return (table.contributors > 0) & (self._top_sum(table) > self.k / 100.0 * table.value)

    def protection(self, table: Table) -> np.ndarray:
        """``100/k (x1 + ... + xn) - X``."""
        return np.maximum(100.0 / self.k * self._top_sum(table) - table.value, 0.0)


class PPercentRule(SensitivityRule):
    """p%: the second largest contributor may not estimate the largest within ``p``%.

    Parameters
    ----------
    p : float
        The percent of the largest contribution within which no one may estimate it.
    """

    spec_name: ClassVar[str] = "p_percent"
    spec_label: ClassVar[str] = "p% rule"
    needs_contributions: ClassVar[bool] = True

    p: Percent

    def top_needed(self) -> int:
        """``x1`` and ``x2``."""
        return 2

    def _gap(self, table: Table) -> np.ndarray:
        x1, x2 = table.top[:, 0], table.top[:, 1]
        return self.p / 100.0 * x1 - (table.value - x1 - x2)

    def unsafe(self, table: Table) -> np.ndarray:
        """``X - x1 - x2 < p/100 x1`` (cells with contributors)."""
        return (table.contributors > 0) & (self._gap(table) > 0)

    def protection(self, table: Table) -> np.ndarray:
        """``p/100 x1 - (X - x1 - x2)``."""
        return np.maximum(self._gap(table), 0.0)


class PQRule(SensitivityRule):
    """pq: the p% rule when every contribution is known beforehand within ``q``%.

    Parameters
    ----------
    p : float
        As the p% rule's ``p`` (below ``q``).
    q : float
        The percent within which every contribution is known beforehand.
    """

    spec_name: ClassVar[str] = "pq"
    spec_label: ClassVar[str] = "pq rule"
    needs_contributions: ClassVar[bool] = True

    p: Percent
    q: Percent

    @model_validator(mode="after")
    def _p_below_q(self) -> PQRule:
        if self.p >= self.q:
            raise ValueError(f"needs p < q (the prior knowledge q is coarser), got p={self.p}")
        return self

    def top_needed(self) -> int:
        """``x1`` and ``x2``."""
        return 2

    def _gap(self, table: Table) -> np.ndarray:
        x1, x2 = table.top[:, 0], table.top[:, 1]
        return self.p / self.q * x1 - (table.value - x1 - x2)

    def unsafe(self, table: Table) -> np.ndarray:
        """``X - x1 - x2 < p/q x1`` (cells with contributors)."""
        return (table.contributors > 0) & (self._gap(table) > 0)

    def protection(self, table: Table) -> np.ndarray:
        """``p/q x1 - (X - x1 - x2)``."""
        return np.maximum(self._gap(table), 0.0)


class ZeroRule(SensitivityRule):
    """Zero cells with contributors are unsafe (tau-Argus "zero unsafe").

    Parameters
    ----------
    safety_range : float
        The protection, in value units.
    """

    spec_name: ClassVar[str] = "zero"
    spec_label: ClassVar[str] = "zero rule"

    safety_range: Annotated[Number, Field(ge=0)] = 0.0

    def unsafe(self, table: Table) -> np.ndarray:
        """Value 0 with at least one contributor."""
        return (table.contributors > 0) & (table.value == 0)

    def protection(self, table: Table) -> np.ndarray:
        """``safety_range`` in value units."""
        return np.full(table.n_cells, float(self.safety_range))


class RequestRule(SensitivityRule):
    """tau-Argus' request rule: contributors who asked for protection (module docstring).

    The table must be built with the column and the codes (:meth:`Table.from_microdata`
    ``request=``, ``request_codes=``; a job does it).

    Parameters
    ----------
    column : str
        The microdata column that flags the requesting records.
    codes : list of str
        The one or two codes of that column that mean a request.
    percentages : list of float
        ``percentages[j]``: the share of the cell total (percent) the largest requesting
        contribution may reach when its code is ``codes[j]`` (0: no such test for that code).
    min_frequency : int
        A cell with a requesting record and fewer records is unsafe (0: no such test).
    safety_margin : float
        The protection, percent of the cell's value.
    """

    spec_name: ClassVar[str] = "request"
    spec_label: ClassVar[str] = "request rule"

    column: Annotated[str, Field(min_length=1)]
    codes: Annotated[
        tuple[Annotated[str, Field(min_length=1)], ...],
        BeforeValidator(_code_list),
        Field(min_length=1, max_length=2),
    ]
    percentages: Annotated[tuple[PercentOrOff, ...], BeforeValidator(_number_list)]
    min_frequency: Annotated[Integer, Field(ge=0)] = 0
    safety_margin: Annotated[Number, Field(ge=0)] = 0.0

    @model_validator(mode="after")
    def _consistent(self) -> RequestRule:
        if len(set(self.codes)) != len(self.codes):
            raise ValueError(f"the request codes must differ, got {list(self.codes)}")
        if len(self.percentages) != len(self.codes):
            raise ValueError(
                f"give one percentage per request code: {len(self.codes)} code(s) "
                f"{list(self.codes)} but {len(self.percentages)} percentage(s)"
            )
        if self.min_frequency == 0 and not any(p > 0 for p in self.percentages):
            raise ValueError("flags nothing: give a percentage above 0 or a min_frequency above 0")
        return self

    def _requested(self, table: Table) -> np.ndarray:
        """The table's largest requesting contribution per cell and code (DataError when the
        table was not built with this rule's column and codes)."""
        if table.requested is None:
            raise DataError(
                f"the {self.spec_label} reads which records asked for protection (column "
                f"{self.column!r}), but the table was built without it; build it from the "
                f"microdata with request={self.column!r}, request_codes={list(self.codes)} "
                "(a table given cell by cell does not say who asked)"
            )
        if table.request != self.column or tuple(table.request_codes) != self.codes:
            raise DataError(
                f"the {self.spec_label} is for column {self.column!r} with codes "
                f"{list(self.codes)}, but the table was built with column {table.request!r} "
                f"and codes {list(table.request_codes)}; build it with this rule's"
            )
        return table.requested

    def unsafe(self, table: Table) -> np.ndarray:
        """``r > p_c/100 X`` for the code(s) ``c`` of the largest requesting contribution
        ``r > 0``, or ``records < min_frequency`` when there is such a contribution.

        tau-Argus keeps one code, the first record's in data order among requesting
        contributions equal to ``r``; here every code reaching ``r`` is tested, so the rule
        does not depend on the order of the records (it can differ only on exact ties)."""
        req = self._requested(table)
        largest = req.max(axis=1)
        asked = largest > 0
        pct = np.asarray(self.percentages, dtype=float)
        top_code = (req == largest[:, None]) & asked[:, None]
        too_large = top_code & (pct > 0) & (req > pct / 100.0 * table.value[:, None])
        few = asked & (table.freq < self.min_frequency)
        return too_large.any(axis=1) | few

    def protection(self, table: Table) -> np.ndarray:
        """``safety_margin`` percent of the cell's value (tau-Argus'
        ``PeepSafetyRangePercCell``)."""
        return np.abs(table.value) * self.safety_margin / 100.0


#: Job-file name -> rule class.
RULES: dict[str, type[SensitivityRule]] = {
    c.spec_name: c
    for c in (FrequencyRule, DominanceRule, PPercentRule, PQRule, ZeroRule, RequestRule)
}


@dataclass
class Primary:
    """The primary cells of a table and their protection levels (zero elsewhere).

    ``by_rule`` names, per rule, the cells it flagged.
    """

    unsafe: np.ndarray
    upper: np.ndarray
    lower: np.ndarray
    by_rule: dict[str, np.ndarray]

    @property
    def count(self) -> int:
        """Number of primary cells."""
        return int(self.unsafe.sum())

    def summary(self) -> dict[str, Any]:
        """JSON-ready counts per rule."""
        return {
            "primary": self.count,
            "by_rule": {k: int(v.sum()) for k, v in self.by_rule.items()},
        }


def primary_cells(
    table: Table,
    rules: Sequence[SensitivityRule],
    *,
    min_protection: float = 1.0,
    nonnegative: bool = True,
) -> Primary:
    """Apply ``rules`` to ``table``: the union of their unsafe cells, the largest levels.

    ``min_protection`` is the least protection every primary cell gets (value units);
    ``nonnegative``: cells cannot be negative, so ``LPL`` is at most the value.
    """
    for rule in rules:
        if rule.needs_contributions:
            if table.negative_contributions:
                raise DataError(
                    f"the {rule.spec_label} needs non-negative contributions but the response "
                    "has negative values; use a non-negative shadow variable for the rules"
                )
            if table.top.shape[1] < rule.top_needed():
                raise DataError(
                    f"the {rule.spec_label} reads the {rule.top_needed()} largest contributions "
                    f"but the table keeps {table.top.shape[1]}; build it with top_n >= "
                    f"{rule.top_needed()} (or give the cells' largest contributions)"
                )
    unsafe = np.zeros(table.n_cells, dtype=bool)
    upper = np.zeros(table.n_cells)
    by_rule: dict[str, np.ndarray] = {}
    for i, rule in enumerate(rules):
        flag = np.asarray(rule.unsafe(table), dtype=bool)
        key = rule.spec_name if rule.spec_name not in by_rule else f"{rule.spec_name}[{i}]"
        by_rule[key] = flag
        unsafe |= flag
        upper = np.where(flag, np.maximum(upper, rule.protection(table)), upper)
    upper = np.where(unsafe, np.maximum(upper, float(min_protection)), 0.0)
    lower = upper.copy()
    if nonnegative:
        lower = np.minimum(lower, np.maximum(table.value, 0.0))
    return Primary(unsafe, upper, lower, by_rule)
