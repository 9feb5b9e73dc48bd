"""The HTML page of an anonymization (through the one report writer)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from sdckit.dp.randomness import INSECURE_KIND, NOT_PRIVATE
from sdckit.report.risk_report import class_size_figure, frequency_set_fact
from sdckit.report.writer import Report, Section

if TYPE_CHECKING:  # pragma: no cover
    from sdckit.algorithms.anonymize import AnonymizationResult

_METRIC_TEXT = {
    "loss": "generalized information loss (ARX 'Loss', Iyengar 2002), 0 = original, 1 = all *",
    "precision": "Sweeney's precision, 1 = original, 0 = fully generalized",
    "discernibility": "sum of squared class sizes + suppressed records x n (Bayardo & Agrawal)",
    "aecs": "average equivalence class size (released records / classes)",
    "non_uniform_entropy": "bits lost, Gionis & Tassa 2009 (0 = original)",
    "height": "sum of the generalization levels",
    "publisher_payout": "ARX's publisher payout cost: n x benefit - the released records' "
    "expected payout (Wan et al. 2015), 0 = every record earns the full benefit",
}


def solution_space_figure(space: list[dict], chosen: list[int] | None, metric: str):
    """Scatter of level sum vs metric of the checked nodes (satisfying vs not; inline SVG)."""
    from sdckit.report.charts import ScatterChart

    sums = np.array([sum(r["levels"]) for r in space], dtype=float)
    ok = np.array([r["satisfied"] for r in space], dtype=bool)
    val = np.array(
        [r["metric"] if r["metric"] is not None else r["lower_bound"] for r in space], dtype=float
    )
    rng = np.random.default_rng(0)  # horizontal jitter only, for legibility
    x = sums + rng.uniform(-0.15, 0.15, len(space))
    groups = {
        "fails (lower bound)": (x[~ok], val[~ok], "#bbbbbb", 2.0),
        "satisfies (metric)": (x[ok], val[ok], "#3d6fb6", 2.5),
    }
    if chosen is not None:
        best = [r for r in space if r["satisfied"] and r["levels"] == list(chosen)]
        if best:
            groups["chosen"] = ([float(sum(chosen))], [best[0]["metric"]], "#c0504d", 5.0)
    return ScatterChart("Checked transformations", "sum of generalization levels", metric, groups)


def anonymization_report(
    result: AnonymizationResult, labels: Mapping[str, str] | None = None
) -> Report:
    """Build the report: transformation, suppression, metrics, models, risk, solution space.

    ``labels``: variable labels (an SPSS/Stata/SAS input's), shown beside the attributes."""
    report = Report("sdckit anonymization", subtitle=f"algorithm: {result.algorithm}")
    n = result.risk_before.get("records") or len(result.data)
    facts = {
        "algorithm": result.algorithm,
        "records": n,
        "suppressed records": f"{result.suppressed_records:,} "
        f"({result.suppressed_records / max(n, 1):.2%}; limit {result.suppression_limit:.2%})",
        "verified from the output rows": "yes" if result.verified else "NO",
        **frequency_set_fact(result.details.get("frequency_set")),
        "transformations / partitions checked": result.nodes_checked,
        "elapsed seconds": round(result.elapsed_seconds, 3),
    }
    trans_table = None
    if result.transformation is not None:
        trans_table = pd.DataFrame(
            {
                "attribute": list(result.transformation),
                "level": list(result.transformation.values()),
                "example released values": [
                    ", ".join(map(str, pd.unique(result.data[a])[:4]))  # on codes
                    for a in result.transformation
                ],
            }
        )
        if labels and any(a in labels for a in result.transformation):
            trans_table.insert(1, "label", [labels.get(a, "") for a in result.transformation])
    notices = list(result.details.get("notices") or [])
    if result.details.get("randomness") == INSECURE_KIND:  # safepub's noise from the seed
        notices.insert(0, NOT_PRIVATE)
    ties = result.details.get("ties")
    if ties and ties["count"] > 1:
        shown = "; ".join(
            ", ".join(f"{a}={v}" for a, v in t.items()) for t in ties["transformations"][:5]
        )
        notices.append(
            f"{ties['count']} transformations share the optimal value ({shown}"
            f"{'; ...' if ties['count'] > 5 else ''}); this one was chosen by {ties['rule']}. "
            "Another tool (ARX) may report another of them: the value is the same."
        )
    conventions = result.details.get("metric_conventions")
    if conventions:
        notices.append(
            "Metric conventions: AECS with suppressed records "
            f"'{conventions['aecs_suppressed']}', non-uniform entropy "
            f"'{conventions['non_uniform_entropy_suppressed']}', loss gs_factor "
            f"{conventions['loss_gs_factor']:g}; precision is Sweeney's (higher is better)."
        )
    report.add(
        Section(
            "Release",
            facts=facts,
            table=trans_table,
            note=" ".join(notices) if notices else None,
        )
    )
    privacy = result.details.get("privacy")
    if privacy:
        covered = privacy["covered_by_epsilon"]
        title = "Differential privacy" if covered else "Differential privacy: NOT covered"
        if privacy.get("randomness") == INSECURE_KIND:
            title += " -- NOT PRIVATE (noise from the seed)"
        report.add(
            Section(
                title,
                text=privacy["guarantee"],
                table=pd.DataFrame(privacy["accounting"]),
                note=None
                if covered
                else "The choice of the released transformation is not covered by epsilon.",
            )
        )
    report.add(
        Section(
            "Information loss",
            table=pd.DataFrame(
                {
                    "metric": list(result.metrics),
                    "value": ["–" if v is None else v for v in result.metrics.values()],
                    "meaning": [_METRIC_TEXT.get(k, "") for k in result.metrics],
                }
            ),
        )
    )
    report.add(
        Section(
            "Privacy models (re-checked on the released rows)",
            table=pd.DataFrame({"model": result.models_satisfied, "satisfied": "yes"}),
        )
    )
    checks = result.details.get("model_checks")
    if checks:
        report.add(
            Section(
                "Release-wide risk models (measured on the released records)",
                table=pd.DataFrame(
                    [
                        {"model": c["model"], "measure": k, "value": v}
                        for c in checks
                        for k, v in c.items()
                        if k != "model"
                    ]
                ),
            )
        )
    if result.models:
        from sdckit.models.attacks import attack_coverage
        from sdckit.report.attack_coverage import attack_coverage_section

        report.add(
            attack_coverage_section(
                attack_coverage(result.models), intro="The privacy models of this job."
            )
        )
    if result.risk_before and result.risk_after:
        b, a = result.risk_before, result.risk_after
        rows = []
        for label, key in (
            ("equivalence classes", "equivalence_classes"),
            ("sample uniques", "sample_uniques"),
            ("records at risk", "records_at_risk_share"),
            ("marketer risk", "marketer"),
        ):
            rows.append({"measure": label, "before": b.get(key), "after": a.get(key)})
        for kind in ("prosecutor", "journalist"):
            for stat in ("max", "average"):
                rows.append(
                    {
                        "measure": f"{kind} risk ({stat})",
                        "before": b[kind][stat],
                        "after": a[kind][stat],
                    }
                )
        report.add(
            Section(
                "Re-identification risk before and after",
                text="Risk of a record = 1 / size of its equivalence class on the "
                "quasi-identifiers (El Emam & Dankar 2008). Suppressed records form one class.",
                table=pd.DataFrame(rows),
                figures=[class_size_figure(b), class_size_figure(a)],
                note="Left/first figure: before; second: after.",
            )
        )
    space = result.details.get("solution_space")
    if space:
        report.add(
            Section(
                "Solution space",
                text=f"{len(space):,} of {result.details.get('lattice_size', 0):,} "
                "transformations were checked; the others were pruned (monotonicity) or "
                "bounded out (their metric lower bound exceeded the optimum).",
                figures=[
                    solution_space_figure(
                        space,
                        list(result.transformation.values()) if result.transformation else None,
                        result.details.get("metric", "metric"),
                    )
                ],
            )
        )
    for name, table in result.extra_tables.items():
        report.add(Section(f"Released table: {name}", table=table.head(50), table_limit=50))
    return report
