"""The human-readable page for a risk analysis (``sdckit analyze --html``)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from sdckit.report.writer import Report, Section


def class_size_figure(
    summary: dict[str, Any],
    record_risk: np.ndarray | None = None,
    risk_weights: np.ndarray | None = None,
):
    """Bar chart of records per class size (1..10, >10); with ``record_risk`` a risk histogram
    beside it (inline SVG, :mod:`sdckit.report.charts`); ``risk_weights``: the records each
    risk value stands for (per-class risks with the class sizes)."""
    from sdckit.report.charts import BarChart, ChartRow, histogram_chart

    labels = [str(s) for s in range(1, 11)] + [">10"]
    records = np.zeros(11)
    for row in summary["class_size_distribution"]:
        records[min(row["size"], 11) - 1] += row["records"]
    charts = [
        BarChart(
            "Records by class size",
            "equivalence class size",
            "% of records",
            labels,
            records / max(records.sum(), 1) * 100,
        )
    ]
    if record_risk is not None:
        charts.append(
            histogram_chart(
                np.asarray(record_risk, dtype=float),
                np.linspace(0, 1, 21),
                "Per-record re-identification risk",
                "prosecutor risk 1/f (dashed: threshold)",
                marker=summary.get("threshold", 0.2),
                weights=risk_weights,
            )
        )
    return ChartRow(charts, "Records by class size and per-record risk")


def _missing_fact(summary: dict[str, Any]) -> dict[str, str]:
    """The fact naming how missing key values were counted (only when there are some)."""
    mv = summary.get("missing_values") or {}
    n = mv.get("records_with_missing_key")
    if not n:
        return {}
    how = (
        "each matches any value (sdcMicro/mu-Argus)"
        if mv.get("semantics") == "wildcard"
        else "each is a category of its own (ARX)"
    )
    return {"records with a missing key value": f"{n:,}: {how}"}


def frequency_set_fact(chosen: dict[str, Any] | None) -> dict[str, str]:
    """The fact saying where the Spark engine counted the classes (``chosen``: the summary's
    ``frequency_set``; nothing for the local engine)."""
    if not chosen:
        return {}
    n, limit = chosen["classes"], chosen["driver_classes"]
    where = (
        f"kept on Spark ({n:,} distinct combinations, more than the driver takes: {limit:,})"
        if chosen["path"] == "distributed"
        else f"collected to the driver ({n:,} distinct combinations, at most {limit:,})"
    )
    return {"classes counted on Spark": where}


def _pct(x: float) -> str:
    return f"{x:.2%}"


def risk_sections(
    summary: dict[str, Any],
    record_risk: np.ndarray | None = None,
    title_prefix: str = "",
    risk_weights: np.ndarray | None = None,
) -> list[Section]:
    """Sections describing one risk analysis summary (reused by the anonymization report).

    Every figure gets a plain-language label and each section says what its measures mean, so
    the page reads without the JSON. Definitions: El Emam & Dankar (2008) for prosecutor,
    journalist and marketer risk; Dankar et al. (2012) for population uniqueness; Benedetti &
    Franconi (1998) / sdcMicro for individual risk; Elliot et al. (2002) for SUDA; Motwani & Xu
    (2007) for distinction and separation.
    """
    p, j = summary["prosecutor"], summary["journalist"]
    threshold = summary.get("threshold", 0.2)
    has_population = "population_records" in summary
    sections = [
        Section(
            f"{title_prefix}Re-identification risk",
            text=(
                "Records that share the same values of all quasi-identifiers form an "
                "equivalence class; an intruder who knows these values of a person cannot tell "
                "the records of the class apart, so a record's risk is 1 / (size of its class). "
                "Prosecutor risk assumes the intruder knows the person is in the data; "
                "journalist risk matches against a population table (without one it equals the "
                "prosecutor risk); marketer risk is the share of records an intruder would "
                "re-identify by matching everybody (El Emam & Dankar 2008)."
            ),
            facts={
                "records": summary["records"],
                "quasi-identifiers": ", ".join(summary.get("quasi_identifiers", [])),
                "equivalence classes": summary["equivalence_classes"],
                **frequency_set_fact(summary.get("frequency_set")),
                **_missing_fact(summary),
                "sample uniques (records alone in their class)": (
                    f"{summary['sample_uniques']:,} ({_pct(summary['sample_uniques_share'])})"
                ),
                f"records with risk above {threshold:g}": _pct(summary["records_at_risk_share"]),
                "marketer risk (expected share re-identified)": _pct(summary["marketer"]),
            },
            table=pd.DataFrame(
                {
                    "attacker model": ["prosecutor", "journalist"],
                    "lowest risk": [_pct(p["min"]), _pct(j["min"])],
                    "highest risk": [_pct(p["max"]), _pct(j["max"])],
                    "average risk": [_pct(p["average"]), _pct(j["average"])],
                }
            ),
            figures=[class_size_figure(summary, record_risk, risk_weights)],
            note=None
            if has_population
            else "No population table was given: journalist risk equals prosecutor risk.",
        ),
    ]
    if "population_uniques_share" in summary:
        pu = summary["population_uniques_share"]
        model_names = {"pitman": "Pitman", "zayatz": "Zayatz", "snb": "SNB"}
        facts = {
            f"{model_names[k]} model": _pct(pu[k]) for k in ("pitman", "zayatz", "snb") if k in pu
        }
        if "dankar" in pu:
            chosen = model_names.get(str(pu.get("dankar_model")), pu.get("dankar_model"))
            facts["Dankar et al. decision rule" + (f" (uses {chosen})" if chosen else "")] = _pct(
                pu["dankar"]
            )
        sections.append(
            Section(
                f"{title_prefix}Population uniqueness "
                f"(sampling fraction {summary['sampling_fraction']:g})",
                text=(
                    "A record unique in the sample may not be unique in the population. These "
                    "models estimate, from the class sizes and the sampling fraction, the share "
                    "of records that are unique in the whole population; Dankar et al. (2012) "
                    "pick the model that is most accurate for the data at hand."
                ),
                facts=facts,
            )
        )
    if "individual_risk" in summary:
        ir = summary["individual_risk"]
        facts = {
            "lowest individual risk": ir["min"],
            "median individual risk": ir["median"],
            "highest individual risk": ir["max"],
            "global risk (average over records)": ir["global_risk"],
            "expected number of re-identifications": ir["expected_reidentifications"],
        }
        hh = summary.get("household_risk", {})
        if hh:
            facts["household: expected number of re-identifications"] = hh[
                "expected_reidentifications"
            ]
            if "global_risk" in hh:
                facts["household: global risk"] = hh["global_risk"]
            if "n_households" in hh:
                facts["households"] = hh["n_households"]
        sections.append(
            Section(
                f"{title_prefix}Individual risk with sampling weights (sdcMicro)",
                text=(
                    "Probability that a record is correctly re-identified when an intruder "
                    "matches it against the population its sampling weights stand for "
                    "(Benedetti–Franconi negative-binomial approximation, as sdcMicro's "
                    "measure_risk). Household risk is the chance that at least one member of "
                    "a household is re-identified (which discloses the whole household)."
                ),
                facts=facts,
            )
        )
    if "suda" in summary:
        su = summary["suda"]
        sections.append(
            Section(
                f"{title_prefix}SUDA special uniques",
                text=(
                    "A minimal sample unique is a smallest set of quasi-identifier values that "
                    "only one record has. SUDA scores a record by its minimal sample uniques "
                    "(smaller sets weigh more); DIS-SUDA turns the scores into per-record "
                    "probabilities of a correct match (Elliot et al. 2002; sdcMicro suda2)."
                ),
                facts={
                    "records with a SUDA score (some minimal sample unique)": (
                        su["records_with_score"]
                    ),
                    "sum of SUDA scores": su["score_sum"],
                    "sum of DIS-SUDA scores (expected correct matches)": su["dis_sum"],
                },
            )
        )
    if "distinction" in summary:
        rows = [
            {
                "attributes": k.replace(",", ", "),
                "number of attributes": k.count(",") + 1,
                "distinction": _pct(v),
                "separation": _pct(summary["separation"][k]),
                "_d": v,
            }
            for k, v in summary["distinction"].items()
        ]
        rows.sort(key=lambda r: (r["number of attributes"], -r["_d"]))
        for r in rows:
            del r["_d"]
        sections.append(
            Section(
                f"{title_prefix}Quasi-identifier distinction and separation",
                text=(
                    "Distinction: the number of distinct value combinations divided by the "
                    "number of records (100% = every record has its own combination). "
                    "Separation: the share of pairs of records that differ on the attributes. "
                    "Attributes or combinations near 100% single people out and are the first "
                    "candidates for generalization (Motwani & Xu 2007; ARX's attribute risk)."
                ),
                table=rows,
                table_limit=120,
            )
        )
    if summary.get("sensitive"):
        sections.append(
            Section(
                f"{title_prefix}Sensitive attributes inside the classes",
                text=(
                    "Distinct l: the fewest distinct values of the attribute in any class; "
                    "entropy l: exp of the lowest class entropy (Machanavajjhala et al. 2007). "
                    "A class holding one value only discloses it to anyone who can place a "
                    "person in the class (the homogeneity attack), however large the class. "
                    "max_relative_gain: the largest (p - q) / q of a value's share p in a class "
                    "against its share q in the data (the smallest beta of beta-likeness, Cao & "
                    "Karras 2012); max_log2_ratio: the largest |log2(p / q)| (delta-disclosure "
                    "privacy, Brickell & Shmatikov 2008, holds for every larger delta)."
                ),
                table=[{"attribute": a, **v} for a, v in summary["sensitive"].items()],
            )
        )
    if summary.get("skipped"):
        sections.append(
            Section(
                f"{title_prefix}Measures not computed",
                text=(
                    "These measures were skipped because their estimated cost exceeds the "
                    "default budget; each line says how to force it."
                ),
                table=[{"measure": k, "why": v} for k, v in summary["skipped"].items()],
            )
        )
    return sections


def risk_report(
    summary: dict[str, Any],
    record_risk: np.ndarray | None = None,
    source: str = "",
    risk_weights: np.ndarray | None = None,
) -> Report:
    """The full analysis page (``record_risk`` per record, or per class with the class sizes
    as ``risk_weights``)."""
    report = Report("sdckit risk analysis", subtitle=source or None)
    for s in risk_sections(summary, record_risk, risk_weights=risk_weights):
        report.add(s)
    if summary.get("attack_coverage"):
        from sdckit.report.attack_coverage import attack_coverage_section

        report.add(
            attack_coverage_section(
                summary["attack_coverage"],
                intro=(
                    "The privacy models whose quantity this analysis reports (class sizes: "
                    "k-anonymity; average prosecutor risk; sample uniques; with a population "
                    "table k-map; with sensitive attributes l-diversity)."
                ),
            )
        )
    return report
