"""How results show themselves in a Jupyter notebook (``_repr_html_``).

A result of a lower layer (a risk analysis, an anonymization, a synthesis, a protected table)
is shown with the report writer's sections (:mod:`sdckit.report`), one layer up: the
:data:`NOTEBOOK_VIEWS` registry names, per kind of result, the function of
:mod:`sdckit.report.notebook` that builds its report, loaded on first use (the registry's
plugin mechanism), so no lower module imports the report.
"""

from __future__ import annotations

from typing import Any

from sdckit.core.registry import NoTraits, Registry

__all__ = ["NOTEBOOK_VIEWS", "notebook_html"]

#: kind of result -> ``"module:function"`` building its :class:`sdckit.report.writer.Report`.
NOTEBOOK_VIEWS: Registry[NoTraits] = Registry("notebook view", NoTraits())
for _kind in ("risk_analysis", "anonymization", "synthesis", "protection"):
    NOTEBOOK_VIEWS.add(_kind, f"sdckit.report.notebook:{_kind}_report")


def notebook_html(kind: str, result: Any) -> str:
    """The compact HTML of ``result`` (a result of ``kind``): the summary tables and charts
    of its HTML report, as a fragment (:meth:`sdckit.report.writer.Report.render_fragment`)."""
    return str(NOTEBOOK_VIEWS.load(kind)(result).render_fragment())
