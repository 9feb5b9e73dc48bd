"""The hierarchy builders a job file may name (``hierarchy: {interval: {widths: [10]}}``).

:data:`HIERARCHY_BUILDERS` is the :class:`~sdckit.core.registry.Registry` of the builders:
job-file name -> the builder's spec class (:mod:`sdckit.core.hierarchy_specs`: its parameters
validated once, :meth:`~sdckit.core.hierarchy_specs.HierarchyBuilder.build` runs the
builder), imported on first use, with :class:`BuilderTraits` naming the builder function of
:mod:`sdckit.core.hierarchy_builders` the spec calls. Listing the names imports neither.
"""

from __future__ import annotations

from dataclasses import dataclass

from sdckit.core.registry import Registry

__all__ = ["BuilderTraits", "HIERARCHY_BUILDERS"]


@dataclass(frozen=True)
class BuilderTraits:
    """``function``: the ``"module:attribute"`` path of the builder function the spec runs
    (for the Python API's messages and the contract tests); ``kinds``: the attribute types
    it builds a hierarchy for (``numeric``, ``categorical``, ``date``)."""

    function: str = ""
    kinds: tuple[str, ...] = ()


#: Job-file builder name -> its spec class (:class:`~sdckit.core.hierarchy_specs.HierarchyBuilder`).
HIERARCHY_BUILDERS: Registry[BuilderTraits] = Registry("hierarchy builder", BuilderTraits())
for _name, _spec, _kinds in (
    ("interval", "IntervalBuilder", ("numeric",)),
    ("order", "OrderBuilder", ("categorical",)),
    ("masking", "MaskingBuilder", ("categorical",)),
    ("date", "DateBuilder", ("date",)),
):
    HIERARCHY_BUILDERS.add(
        _name,
        f"sdckit.core.hierarchy_specs:{_spec}",
        BuilderTraits(f"sdckit.core.hierarchy_builders:{_name}_hierarchy", _kinds),
    )
