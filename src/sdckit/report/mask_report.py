"""The HTML page of a mask job (``sdckit mask``): the methods applied, the columns before and
after, and the evaluation of the numeric ones."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

# --------------------------------------------------------------------------------------------
# parameter specifications
# --------------------------------------------------------------------------------------------


def _compact(value: Any, limit: int = 12) -> Any:
    """Short values as they are; long lists and deep mappings as a size note (for HTML)."""
    if isinstance(value, Mapping):
        if len(value) > limit:
            return f"({len(value)} entries; see the JSON output)"
        return {k: _compact(v, limit) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        if len(value) > limit or any(isinstance(v, (list, tuple, Mapping)) for v in value):
            return f"({len(value)} items; see the JSON output)"
        return list(value)
    return value


def _detail_tables(details: Mapping[str, Any]) -> list[tuple[str, pd.DataFrame]]:
    """Tables worth showing in full: published transition matrices (PRAM: rows = true
    category, columns = released category) and lists of flat records (e.g. MDAV's attribute
    groups with their information loss)."""
    tables: list[tuple[str, pd.DataFrame]] = []
    for key, v in details.items():
        if isinstance(v, Mapping) and "matrix" in v and "categories" in v:
            labels = [str(c) for c in v["categories"]]
            m = np.asarray(v["matrix"], dtype=float)
            if m.shape == (len(labels), len(labels)) and len(labels) <= 50:
                df = pd.DataFrame(m, columns=labels)
                df.insert(0, "true \\ released", labels)
                tables.append((f"transition matrix of {key}", df))
        elif isinstance(v, list) and v and all(isinstance(x, Mapping) for x in v):
            tables.append((key, pd.DataFrame([{k: _compact(y) for k, y in x.items()} for x in v])))
    return tables


def mask_report(summary: dict[str, Any]) -> Any:
    """The HTML report of a mask job from its JSON summary (either engine: a Spark job adds
    the engine, how its randomness is seeded and the strata of its microaggregation steps)."""
    from sdckit.core.pseudonymize import PERSONAL_DATA_NOTICE
    from sdckit.report.writer import Report, Section

    rep = Report("sdckit mask", subtitle=f"Masking of {summary['input']}")
    job_facts = {
        "input": summary["input"],
        "records in": summary["records_in"],
        "records out": summary["records_out"],
        "methods applied": len(summary["job_methods"]),
        "seed given": summary["seed_given"],
    }
    if "engine" in summary:
        job_facts["engine"] = summary["engine"]
    if "spark_master" in summary:
        job_facts["Spark master"] = summary["spark_master"]
    if "randomness" in summary:
        job_facts["randomness"] = summary["randomness"]["rule"]
    rep.add(
        Section(
            "Job",
            facts=job_facts,
            text="Every method and its parameters are listed below: publishing them is the "
            "transparency principle (the protection must not rely on keeping the method "
            "secret). The random seeds themselves are not published.",
        )
    )
    originals = summary.get("original_records")
    if originals is not None:
        share = originals["share"]
        rep.add(
            Section(
                "Warning: released records equal to original records"
                if originals.get("warning")
                else "Released records equal to original records",
                facts={
                    "share of released records equal to an original record": share,
                    "records": f"{originals['equal_to_original']:,} of {originals['records']:,}",
                    "warning above": f"{originals['threshold']:.0%}",
                },
                text=originals.get("warning")
                or "A released record equal to an input record on every released column is "
                "that person's record as collected: the masking did not change it.",
            )
        )
    ids = summary["identifiers"]
    if ids["dropped"] or ids["pseudonymized"]:
        rep.add(
            Section(
                "Identifying attributes",
                facts={
                    "dropped": ids["dropped"] or "none",
                    "pseudonymized (keyed HMAC-SHA256)": ids["pseudonymized"] or "none",
                },
                note=PERSONAL_DATA_NOTICE if ids["pseudonymized"] else None,
            )
        )
    if summary.get("strata"):
        rep.add(
            Section(
                "Strata",
                table=[{k: _compact(v) for k, v in s.items()} for s in summary["strata"]],
                text="Microaggregation ran within these strata, each stratum on its own (on "
                "Spark: on one executor); every stratum holds at least k records.",
            )
        )
    for r in summary["methods"]:
        title = f"Step {r['step'] + 1}: {r['method']}"
        facts = {f"parameter {k}": _compact(v) for k, v in r["parameters"].items()}
        facts.update({k: _compact(v) for k, v in r["details"].items()})
        rep.add(Section(title, facts=facts))
        for sub_title, table in _detail_tables(r["details"]):
            rep.add(Section(f"{title} -- {sub_title}", table=table))
    rep.add(
        Section(
            "Columns before and after",
            table=summary["columns"],
            text="Summaries of the masked columns in the input and in the output (sd with "
            "divisor n - 1).",
        )
    )
    if summary["category_changes"]:
        rep.add(
            Section(
                "Category frequencies",
                table=summary["category_changes"],
                text="Per non-numeric masked column, the categories whose count changed most.",
            )
        )
    ev = summary["numeric_evaluation"]
    if ev.get("columns"):
        facts = {
            "columns": ev["columns"],
            "records": ev["records"],
            "records left out (missing values)": ev["records_left_out_missing"],
            "intruder records linked (random sample when fewer than records)": ev[
                "dbrl_intruder_records"
            ],
        }
        if "dbrl_sample" in ev:
            facts["record linkage sample"] = (
                f"{ev['dbrl_sample']['records']:,} of {ev['dbrl_sample']['of']:,} records "
                f"(seed {ev['dbrl_sample']['seed']}): {ev['dbrl_sample']['note']}"
            )
        for name, label in (
            ("il1s", "IL1s (mean |x - x'| / (sqrt 2 sd))"),
            ("il_sse_sst", "IL = 100 SSE / SST on z-scores"),
            ("dbrl", "distance-based record linkage: share linked correctly"),
        ):
            v = ev.get(name)
            facts[label] = v if v is not None else f"not available: {ev[name + '_unavailable']}"
        rep.add(Section("Information loss and linkage risk (numeric columns)", facts=facts))
    return rep
