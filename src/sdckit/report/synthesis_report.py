"""The page of ``sdckit synthesize``: the method and its guarantee, utility, risk, marginals."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = ["synthesis_report"]

#: Columns drawn in the marginal plots (the first ones of the data).
PLOTTED_COLUMNS = 12
#: Categories shown per categorical plot (the most frequent in the original).
PLOTTED_CATEGORIES = 15


def _marginal_figure(original: pd.DataFrame, synthetic: pd.DataFrame) -> Any:
    """Small multiples: per column, the original's and the synthetic data's distribution
    (shares; numeric columns as histograms over the original's range)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    cols = [c for c in original.columns if c in synthetic.columns][:PLOTTED_COLUMNS]
    ncols = 3
    nrows = max(1, -(-len(cols) // ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(12, 3.0 * nrows), squeeze=False)
    for ax, c in zip(axes.ravel(), cols, strict=False):
        o, s = original[c], synthetic[c]
        if pd.api.types.is_numeric_dtype(o) and pd.api.types.is_numeric_dtype(s):
            ov = o.to_numpy(dtype=np.float64, na_value=np.nan)
            sv = s.to_numpy(dtype=np.float64, na_value=np.nan)
            ov, sv = ov[~np.isnan(ov)], sv[~np.isnan(sv)]
            if len(ov):
                bins = np.histogram_bin_edges(ov, bins=20)
                ax.hist(ov, bins=bins, alpha=0.55, density=True, label="original")
                ax.hist(sv, bins=bins, alpha=0.55, density=True, label="synthetic")
        else:
            oc = o.astype(str).value_counts(normalize=True)
            sc = s.astype(str).value_counts(normalize=True)
            top = list(oc.index[:PLOTTED_CATEGORIES])
            x = np.arange(len(top))
            ax.bar(x - 0.2, oc.reindex(top).fillna(0), width=0.4, label="original")
            ax.bar(x + 0.2, sc.reindex(top).fillna(0), width=0.4, label="synthetic")
            ax.set_xticks(x, [t[:12] for t in top], rotation=60, fontsize=7)
        ax.set_title(str(c), fontsize=9)
    for ax in axes.ravel()[len(cols) :]:
        ax.axis("off")
    if cols:
        axes.ravel()[0].legend(fontsize=7)
    fig.tight_layout()
    return fig


def synthesis_report(
    summary: dict[str, Any], original: pd.DataFrame, synthetic: pd.DataFrame
) -> Any:
    """The HTML report of a synthesis job (``summary``: the job's JSON document)."""
    from sdckit.report.writer import Report, Section

    rep = Report("sdckit synthesize", subtitle=f"Synthesis of {summary.get('input')}")
    rep.add(
        Section(
            "Job",
            facts={
                "method": summary["method"],
                "records per copy": summary["records"],
                "copies": summary["copies"],
                "training records (fitted on)": summary["training_records"],
                "holdout records (risk reference)": summary["holdout_records"],
                "seed given": summary.get("seed_given"),
                "elapsed seconds": summary["elapsed_seconds"],
                **{f"parameter {k}": v for k, v in summary["parameters"].items()},
            },
        )
    )
    if summary.get("epsilon") is not None:
        rep.add(
            Section(
                "Privacy guarantee",
                facts={"epsilon": summary["epsilon"], "delta": summary.get("delta")},
                text="Differential privacy: the whole budget is spent in fitting, and every "
                "copy drawn from the fitted model is post-processing. The method's details "
                "below list how the budget was split.",
            )
        )
    dgamma = ((summary.get("details") or {}).get("guarantee") or {}).get("dgamma")
    if dgamma:
        pos, neg = dgamma["positive_disclosure"], dgamma["negative_disclosure"]
        rep.add(
            Section(
                f"(d, gamma)-privacy (d = {dgamma['d']:g}, gamma = {dgamma['gamma']:g})",
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
    u, r = summary["utility"], summary["risk"]
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
            "Utility (first copy against the training records)",
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
        ("exact copies of training records", dcr.get("exact_copies"), ""),
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
    rep.add(
        Section(
            "Disclosure risk",
            table=[{"measure": a, "value": b, "reading": c} for a, b, c in risk_rows],
            note="; ".join(summary.get("evaluation_notes") or []) or None,
        )
    )
    one_way = u.get("tvd_1way") or {}
    if one_way:
        rep.add(
            Section(
                "Marginals: original and synthetic",
                table=[{"column": k, "TVD": v} for k, v in one_way.items()],
                figures=[_marginal_figure(original, synthetic)],
            )
        )
    details = summary.get("details") or {}
    plain = {
        k: v for k, v in details.items() if not isinstance(v, (list, dict)) or len(str(v)) < 300
    }
    if plain:
        rep.add(Section("Method details", facts=plain))
    return rep
