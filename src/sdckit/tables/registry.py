"""The table protection methods a table job (``method:``) or :func:`sdckit.tables.protect`
may name, with their kind and where they run.

:data:`TABLE_METHODS` is the :class:`~sdckit.core.registry.Registry` of the methods: name ->
the function that implements its kind (:func:`~sdckit.tables.suppression.suppress` for the
four secondary cell suppression methods, :func:`~sdckit.tables.rounding.controlled_rounding`,
:func:`~sdckit.tables.adjustment.controlled_adjustment`, :func:`~sdckit.tables.cell_key.cell_key`),
imported on first use, and its :class:`TableMethodTraits`. Reading the names or the traits
imports no method.
"""

from __future__ import annotations

from dataclasses import dataclass

from sdckit.core.registry import Registry

__all__ = ["TABLE_METHODS", "TableMethodTraits", "suppression_methods"]


@dataclass(frozen=True)
class TableMethodTraits:
    """``kind``: ``suppression`` (secondary cell suppression: the released table has gaps,
    audited), ``rounding`` (controlled rounding), ``cta`` (controlled tabular adjustment) or
    ``cell_key`` (the cell key method); the perturbative kinds report the deviation.
    ``needs_rules``: it protects the primary cells of sensitivity rules (rounding and the
    cell key method perturb every cell and need none). ``linked``: linked tables
    (:func:`sdckit.tables.linked.protect_linked`) take it. ``engines``: the engines a table
    job runs it on (with ``engine: spark`` the records' pass runs on Spark and the method on
    the driver, :mod:`sdckit.spark.tables`)."""

    kind: str = "suppression"
    needs_rules: bool = True
    linked: bool = True
    engines: tuple[str, ...] = ("local", "spark")


#: Table method name -> the function of its kind.
TABLE_METHODS: Registry[TableMethodTraits] = Registry("table method", TableMethodTraits())
for _name in ("optimal", "simple", "hypercube", "modular"):
    TABLE_METHODS.add(_name, "sdckit.tables.suppression:suppress")
TABLE_METHODS.add(
    "rounding",
    "sdckit.tables.rounding:controlled_rounding",
    TableMethodTraits(kind="rounding", needs_rules=False),
)
TABLE_METHODS.add(
    "cta", "sdckit.tables.adjustment:controlled_adjustment", TableMethodTraits(kind="cta")
)
TABLE_METHODS.add(
    "cell_key",
    "sdckit.tables.cell_key:cell_key",
    TableMethodTraits(kind="cell_key", needs_rules=False),
)


def suppression_methods() -> tuple[str, ...]:
    """The secondary cell suppression methods (kind ``suppression``), in order."""
    return TABLE_METHODS.where(lambda t: t.kind == "suppression")
