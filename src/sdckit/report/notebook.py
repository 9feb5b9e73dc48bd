"""The reports results show in a Jupyter notebook (:mod:`sdckit.core.display`).

Each builder returns the :class:`~sdckit.report.writer.Report` the command line writes for
that kind of result, built from the result object alone; the notebook shows its sections as
a fragment (:meth:`~sdckit.report.writer.Report.render_fragment`). Where the command's report
needs what the result does not keep (the original records of a synthesis, for its marginal
plots), that part is left out.
"""

from __future__ import annotations

from typing import Any

from sdckit.report.writer import Report

__all__ = [
    "anonymization_report",
    "protection_report",
    "risk_analysis_report",
    "synthesis_report",
]


def risk_analysis_report(result: Any) -> Report:
    """The report of a :class:`sdckit.risk.analyze.RiskAnalysis` (``sdckit analyze``'s)."""
    from sdckit.report.risk_report import risk_report

    return risk_report(dict(result.summary), result.class_risk, risk_weights=result.class_records)


def anonymization_report(result: Any) -> Report:
    """The report of a :class:`sdckit.algorithms.anonymize.AnonymizationResult`."""
    from sdckit.report.anonymization_report import anonymization_report as build

    return build(result)


def synthesis_report(result: Any) -> Report:
    """The report of a :class:`sdckit.synthesis.api.SynthesisResult`, without the marginal
    plots against the original (the result does not keep the original records)."""
    from sdckit.report.synthesis_report import synthesis_report as build

    return build(result.to_dict(), None, result.data)


def protection_report(result: Any) -> Report:
    """The report of a protected table (:class:`sdckit.tables.protect.Protection`)."""
    from sdckit.report.table_report import table_report

    summary = result.summary()
    # what the table job adds to the summary, from the table itself (the rules by name)
    summary["dimensions"] = {d.name: len(d) for d in result.table.dimensions}
    summary["rules"] = [{name: {}} for name in summary.get("primary_by_rule") or {}]
    return table_report(summary, result.cells(), result.table)
