"""The hierarchy builders as specs: what a job file's ``hierarchy: {builder: {...}}`` says.

Each class declares one builder of :mod:`sdckit.core.hierarchy_builders` with its parameters
(types and defaults as the builder function takes them); :meth:`HierarchyBuilder.build`
derives the hierarchy from a column's values. A job file names the builder and its
parameters (``hierarchy: {interval: {widths: [10, 50], bottom: 0}}``), which is
``IntervalBuilder(widths=[10, 50], bottom=0).to_entry()``.

Examples
--------
>>> IntervalBuilder(widths=[10]).build([3, 17, 25], name="age").labels[1].tolist()
['[0, 10)', '[10, 20)', '[20, 30)']
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

from sdckit.core import hierarchy_builders as hb
from sdckit.core.hierarchy import Hierarchy
from sdckit.core.hierarchy_registry import HIERARCHY_BUILDERS
from sdckit.core.spec import Integer, Number, Spec

__all__ = [
    "BUILDERS",
    "DateBuilder",
    "HierarchyBuilder",
    "IntervalBuilder",
    "MaskingBuilder",
    "OrderBuilder",
]


class HierarchyBuilder(Spec):
    """A hierarchy builder with its parameters (``spec_name``: the job-file name)."""

    @abstractmethod
    def build(self, values: Sequence[Any], name: str = "") -> Hierarchy:
        """The hierarchy of the column with ``values`` (named ``name``)."""

    def check(self) -> None:
        """The checks :meth:`build` makes of the parameters alone, without the column's
        values (HierarchyError): what a job checks before reading its data."""


class IntervalBuilder(HierarchyBuilder):
    """Nested closed-open intervals (:func:`~sdckit.core.hierarchy_builders.interval_hierarchy`):
    ``widths`` per level or explicit ``breakpoints``, the ``bottom``/``top`` of the range.

    Parameters
    ----------
    widths : list of float, optional
        The interval width of each level, fine to coarse; each a multiple of the previous
        (``[10, 50]``: ``[30, 40)`` then ``[0, 50)``).
    breakpoints : list of list of float, optional
        Instead of ``widths``: the cut points of each level, each level's a subset of the
        previous level's.
    bottom : float, optional
        Values below it become ``<bottom`` at every level (and it is the widths' origin).
    top : float, optional
        Values at or above it become ``>=top`` at every level.
    """

    spec_name: ClassVar[str] = "interval"

    widths: list[Number] | None = None
    breakpoints: list[list[Number]] | None = None
    bottom: Number | None = None
    top: Number | None = None

    def build(self, values: Sequence[Any], name: str = "") -> Hierarchy:
        """See :func:`~sdckit.core.hierarchy_builders.interval_hierarchy`."""
        return hb.interval_hierarchy(
            values, self.widths, self.breakpoints, self.bottom, self.top, name=name
        )

    def check(self) -> None:
        """See :func:`~sdckit.core.hierarchy_builders.check_interval_parameters`."""
        hb.check_interval_parameters(self.widths, self.breakpoints, self.bottom, self.top)


class OrderBuilder(HierarchyBuilder):
    """Consecutive ordered categories grouped level by level
    (:func:`~sdckit.core.hierarchy_builders.order_hierarchy`).

    Parameters
    ----------
    order : list, optional
        The whole domain, lowest first (default: the distinct values sorted, numerically
        when all are numbers).
    group_sizes : list of int, optional
        Consecutive leaves per group at each level, each a multiple of the previous
        (``[2, 4]``).
    groups : list of mapping, optional
        Instead of ``group_sizes``: one mapping per level, label -> the members of the level
        below; every member in exactly one group.
    """

    spec_name: ClassVar[str] = "order"

    order: list[Any] | None = None
    group_sizes: list[Integer] | None = None
    groups: list[dict[str, list[Any]]] | None = None

    def build(self, values: Sequence[Any], name: str = "") -> Hierarchy:
        """See :func:`~sdckit.core.hierarchy_builders.order_hierarchy`."""
        return hb.order_hierarchy(values, self.order, self.group_sizes, self.groups, name=name)


class MaskingBuilder(HierarchyBuilder):
    """One character redacted per level, right to left
    (:func:`~sdckit.core.hierarchy_builders.masking_hierarchy`).

    Parameters
    ----------
    mask_char : str
        The character that replaces a redacted one (and right-pads shorter values).
    """

    spec_name: ClassVar[str] = "masking"

    mask_char: str = "*"

    def build(self, values: Sequence[Any], name: str = "") -> Hierarchy:
        """See :func:`~sdckit.core.hierarchy_builders.masking_hierarchy`."""
        return hb.masking_hierarchy(values, self.mask_char, name=name)


class DateBuilder(HierarchyBuilder):
    """Calendar periods (:func:`~sdckit.core.hierarchy_builders.date_hierarchy`): the
    values' ``format`` and the ``levels`` from fine to coarse.

    Parameters
    ----------
    format : str
        How the dates are written (strftime codes).
    levels : list of str
        The periods, fine to coarse: ``day``, ``month``, ``quarter``, ``year``, ``decade``,
        ``century``.
    """

    spec_name: ClassVar[str] = "date"

    format: str = "%Y-%m-%d"
    levels: list[str] = ["month", "year", "decade"]

    def build(self, values: Sequence[Any], name: str = "") -> Hierarchy:
        """See :func:`~sdckit.core.hierarchy_builders.date_hierarchy`."""
        return hb.date_hierarchy(values, self.format, self.levels, name=name)


#: Job-file name -> builder spec, read from the registry
#: (:data:`sdckit.core.hierarchy_registry.HIERARCHY_BUILDERS`) for callers that index by name.
BUILDERS: dict[str, type[HierarchyBuilder]] = {
    name: HIERARCHY_BUILDERS.load(name) for name in HIERARCHY_BUILDERS
}
