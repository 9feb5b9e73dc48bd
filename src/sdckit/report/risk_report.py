"""The human-readable page for a risk analysis (``sdckit analyze --html``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from sdckit.report.writer import Report, Section


def class_size_figure(summary: dict[str, Any], record_risk: np.ndarray | None = None):
    """Bar chart of records per class size (1..10, >10); with ``record_risk`` a risk histogram."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    dist = summary["class_size_distribution"]
    labels = [str(s) for s in range(1, 11)] + [">10"]
    records = np.zeros(11)
    for row in dist:
        records[min(row["size"], 11) - 1] += row["records"]
    ncols = 2 if record_risk is not None else 1
    fig, axes = plt.subplots(1, ncols, figsize=(5.2 * ncols, 3.2))
    axes = np.atleast_1d(axes)
    axes[0].bar(labels, records / max(records.sum(), 1) * 100, color="#3d6fb6")
    axes[0].set_xlabel("equivalence class size")
    axes[0].set_ylabel("% of records")
    axes[0].set_title("Records by class size")
    if record_risk is not None:
        axes[1].hist(
            record_risk,
            bins=np.linspace(0, 1, 21),
            color="#c0504d",
            weights=np.full(len(record_risk), 100 / max(len(record_risk), 1)),
        )
        axes[1].axvline(summary.get("threshold", 0.2), color="k", ls="--", lw=1)
        axes[1].set_xlabel("prosecutor risk 1/f (dashed: threshold)")
        axes[1].set_ylabel("% of records")
        axes[1].set_title("Per-record re-identification risk")
    fig.tight_layout()
    return fig


def risk_sections(
    summary: dict[str, Any], record_risk: np.ndarray | None = None, title_prefix: str = ""
) -> list[Section]:
    """Sections describing one risk analysis summary (reused by the anonymization report)."""
    p, j = summary["prosecutor"], summary["journalist"]
    sections = [
        Section(
            f"{title_prefix}Re-identification risk",
            text=(
                "Risk of a record = 1 / size of its equivalence class (records sharing its "
                "quasi-identifier values). Prosecutor: the intruder knows the person is in the "
                "data; journalist: matches against a population; marketer: share of records "
                "re-identified when matching everyone (El Emam & Dankar 2008)."
            ),
            facts={
                "records": summary["records"],
                "quasi-identifiers": ", ".join(summary.get("quasi_identifiers", [])),
                "equivalence classes": summary["equivalence_classes"],
                "sample uniques": f"{summary['sample_uniques']:,} "
                f"({summary['sample_uniques_share']:.2%})",
                f"records with risk > {summary.get('threshold', 0.2):g}": (
                    f"{summary['records_at_risk_share']:.2%}"
                ),
                "marketer risk": summary["marketer"],
            },
            table=pd.DataFrame(
                {
                    "attacker model": ["prosecutor", "journalist"],
                    "lowest risk": [p["min"], j["min"]],
                    "highest risk": [p["max"], j["max"]],
                    "average risk": [p["average"], j["average"]],
                }
            ),
            figures=[class_size_figure(summary, record_risk)],
        ),
    ]
    if "population_uniques_share" in summary:
        pu = summary["population_uniques_share"]
        sections.append(
            Section(
                f"{title_prefix}Population uniqueness "
                f"(sampling fraction {summary['sampling_fraction']:g})",
                text="Estimated share of records unique in the population (Pitman, Zayatz, SNB "
                "models; Dankar et al. 2012 choose among them).",
                facts=pu,
            )
        )
    if "individual_risk" in summary:
        sections.append(
            Section(
                f"{title_prefix}Individual risk with sampling weights (sdcMicro)",
                text="Benedetti–Franconi individual risk from sample frequencies and weight sums, "
                "as sdcMicro's measure_risk.",
                facts={
                    **summary["individual_risk"],
                    **{f"household {k}": v for k, v in summary.get("household_risk", {}).items()},
                },
            )
        )
    if "suda" in summary:
        sections.append(Section(f"{title_prefix}SUDA2 special uniques", facts=summary["suda"]))
    if "distinction" in summary:
        rows = [
            {
                "attributes": k,
                "size": k.count(",") + 1,
                "distinction": v,
                "separation": summary["separation"][k],
            }
            for k, v in summary["distinction"].items()
        ]
        rows.sort(key=lambda r: (r["size"], -r["distinction"]))
        sections.append(
            Section(
                f"{title_prefix}Quasi-identifier distinction and separation",
                text="Distinction: distinct value combinations / records. Separation: share of "
                "record pairs told apart. Values near 1 mark attributes that identify people.",
                table=rows,
                table_limit=120,
            )
        )
    return sections


def risk_report(
    summary: dict[str, Any], record_risk: np.ndarray | None = None, source: str = ""
) -> Report:
    """The full analysis page."""
    report = Report("sdckit risk analysis", subtitle=source or None)
    for s in risk_sections(summary, record_risk):
        report.add(s)
    return report
