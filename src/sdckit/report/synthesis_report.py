"""The page of ``sdckit synthesize``: the release and its guarantee, then the data steward's
evaluation against the original (utility, risk, marginals), headed as not covered by epsilon."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["synthesis_report"]

#: Columns drawn in the marginal plots (the first ones of the data).
PLOTTED_COLUMNS = 12
#: Categories shown per categorical plot (the most frequent in the original).
PLOTTED_CATEGORIES = 15


def _marginal_charts(original: pd.DataFrame, synthetic: pd.DataFrame) -> list[Any]:
    """Small multiples, three to a row: per column, the original's and the synthetic data's
    distribution (% of records; numeric columns over 20 equal bins of the original's range,
    categorical ones over the original's most frequent categories), as inline SVG."""
    from sdckit.report.charts import ChartRow, GroupedBarChart

    cols = [c for c in original.columns if c in synthetic.columns][:PLOTTED_COLUMNS]
    charts = []
    for c in cols:
        o, s = original[c], synthetic[c]
        if pd.api.types.is_numeric_dtype(o) and pd.api.types.is_numeric_dtype(s):
            ov = o.to_numpy(dtype=np.float64, na_value=np.nan)
            sv = s.to_numpy(dtype=np.float64, na_value=np.nan)
            ov, sv = ov[~np.isnan(ov)], sv[~np.isnan(sv)]
            bins = np.histogram_bin_edges(ov if len(ov) else np.zeros(1), bins=20)
            shares = [np.histogram(v, bins=bins)[0] / max(len(v), 1) * 100 for v in (ov, sv)]
            labels = [f"{e:.3g}" for e in bins[:-1]]
        else:
            oc = o.astype(str).value_counts(normalize=True)
            sc = s.astype(str).value_counts(normalize=True)
            labels = list(oc.index[:PLOTTED_CATEGORIES])
            shares = [x.reindex(labels).fillna(0).to_numpy() * 100 for x in (oc, sc)]
        series = {"original": shares[0], "synthetic": shares[1]}
        charts.append(GroupedBarChart(str(c), "% of records", labels, series))
    return [
        ChartRow(charts[i : i + 3], "marginals, original and synthetic")
        for i in range(0, len(charts), 3)
    ]


def synthesis_report(
    summary: dict[str, Any], original: pd.DataFrame | None, synthetic: pd.DataFrame
) -> Any:
    """The HTML report of a synthesis job (``summary``: the job's JSON document). Its first
    part is the release (what may be published with the synthetic data: method, parameters,
    guarantee); the second, headed as such, is the evaluation against the original records,
    for the data steward and not covered by epsilon (:mod:`sdckit.synthesis.api`). Without
    the ``original`` records the marginal plots are left out (their TVD table stays)."""
    from sdckit.report.writer import Report, Section

    release, ev = summary["release"], summary["steward_evaluation"]
    privacy = release["privacy"]
    rep = Report("sdckit synthesize", subtitle=f"Synthesis of {summary.get('input')}")
    rep.add(
        Section(
            "Release (may be published with the synthetic data)",
            facts={
                "method": release["method"],
                "records per copy": release["records"],
                "copies": release["copies"],
                "seed given": summary.get("seed_given"),
                **{f"parameter {k}": v for k, v in release["parameters"].items()},
            },
        )
    )
    if privacy.get("epsilon") is not None:
        rep.add(
            Section(
                "Privacy guarantee" if privacy["private"] else "Privacy guarantee: NOT PRIVATE",
                facts={
                    "guarantee": privacy["guarantee"],
                    "epsilon": privacy["epsilon"],
                    "delta": privacy.get("delta"),
                    "private": "yes" if privacy["private"] else "NO",
                },
                text=privacy["statement"] + ". The method's details below list how the budget "
                "was split.",
            )
        )
    details = release.get("details") or {}
    plain = {
        k: v for k, v in details.items() if not isinstance(v, (list, dict)) or len(str(v)) < 300
    }
    if plain:
        rep.add(Section("Method details (covered by the guarantee)", facts=plain))
    steward = "For the data steward, not covered by epsilon: {}"
    rep.add(
        Section(
            steward.format("the evaluation against the original"),
            text="Everything below is computed from the original records (exact counts, "
            "utility, disclosure risk, the marginal plots): no privacy guarantee covers it. "
            "Keep it with the data steward; do not publish it with the release.",
            facts={
                "training records (fitted on)": ev["training_records"],
                "holdout records (risk reference)": ev["holdout_records"],
                "elapsed seconds": summary["elapsed_seconds"],
            },
        )
    )
    method_details = ev.get("method_details") or {}
    dgamma = (method_details.get("guarantee") or {}).get("dgamma") if method_details else None
    if dgamma:
        pos, neg = dgamma["positive_disclosure"], dgamma["negative_disclosure"]
        rep.add(
            Section(
                steward.format(
                    f"(d, gamma)-privacy (d = {dgamma['d']:g}, gamma = {dgamma['gamma']:g})"
                ),
                text="Rastogi, Suciu & Hong (2007), Definition 2.2: against an adversary whose "
                "prior for any tuple is at most d, the posterior stays at most gamma (a) and "
                "drops by at most the factor d / gamma (b).",
                facts={
                    "(d, gamma)-private": "yes" if dgamma["dgamma_private"] else "NO",
                    f"(a) largest posterior <= {pos['bound']:g}": (
                        f"{pos['largest_posterior']:.6g} ({'holds' if pos['holds'] else 'fails'})"
                    ),
                    f"(b) smallest posterior / prior >= {neg['bound']:.6g}": (
                        f"{neg['smallest_posterior_over_prior']:.6g} "
                        f"({'holds' if neg['holds'] else 'fails'})"
                    ),
                    "smallest gamma for this d": dgamma["smallest_gamma"],
                },
            )
        )
    u, r = ev["utility"], ev["risk"]
    rows = [
        ("pMSE (propensity score mean squared error)", u.get("pmse"), "0 = indistinguishable"),
        (
            "S_pMSE (pMSE / its null expectation)",
            u.get("s_pmse"),
            "about 1 = as alike as two samples of one distribution",
        ),
        ("mean TVD of 1-way marginals", u.get("tvd_1way_mean"), "0 = identical"),
        ("mean TVD of 2-way marginals", u.get("tvd_2way_mean"), "0 = identical"),
    ]
    rep.add(
        Section(
            steward.format("utility (first copy against the training records)"),
            table=[{"measure": a, "value": b, "reading": c} for a, b, c in rows],
        )
    )
    dcr = r.get("dcr") or {}
    risk_rows = [
        (
            "share of synthetic records closer to the training than to the holdout records",
            r.get("dcr_share_closer_than_holdout"),
            f"expected {dcr.get('expected_share')} when nothing is copied",
        ),
        (
            "exact copies of training records (among the records the DCR measured)",
            dcr.get("exact_copies"),
            f"DCR measured on {dcr.get('measured_records')} of {dcr.get('synthetic_records')} "
            "synthetic records (a seeded random sample when fewer)"
            if dcr
            else "",
        ),
        (
            "median nearest-neighbour distance ratio, training records",
            dcr.get("nndr_training_median"),
            f"holdout records: {dcr.get('nndr_holdout_median')} (lower for training: "
            "synthetic records close to one particular training record)",
        ),
        (
            "TCAP (targeted correct attribution probability)",
            r.get("tcap"),
            f"baseline {(r.get('tcap_details') or {}).get('baseline')}",
        ),
    ]
    originals = r.get("original_records")
    if originals is not None:
        risk_rows.insert(
            0,
            (
                "share of released records equal to an original record",
                originals["share"],
                f"{originals['equal_to_original']:,} of {originals['records']:,} released "
                f"records (all copies); warning above {originals['threshold']:.0%}; held-out "
                "real records equal to a training record (chance in this domain): "
                f"{originals.get('holdout_share_equal_to_training')}",
            ),
        )
        if originals.get("warning"):
            rep.add(
                Section(
                    steward.format("warning, released records equal to original records"),
                    text=originals["warning"],
                )
            )
    rep.add(
        Section(
            steward.format("disclosure risk"),
            table=[{"measure": a, "value": b, "reading": c} for a, b, c in risk_rows],
            note="; ".join(ev.get("notes") or []) or None,
        )
    )
    one_way = u.get("tvd_1way") or {}
    if one_way:
        rep.add(
            Section(
                steward.format("marginals, original and synthetic"),
                table=[{"column": k, "TVD": v} for k, v in one_way.items()],
                figures=[] if original is None else _marginal_charts(original, synthetic),
            )
        )
    plain = {
        k: v
        for k, v in method_details.items()
        if not isinstance(v, (list, dict)) or len(str(v)) < 300
    }
    if plain:
        rep.add(Section(steward.format("the method's facts about the records"), facts=plain))
    return rep
