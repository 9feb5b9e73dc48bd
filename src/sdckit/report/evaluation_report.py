"""The HTML page of an evaluation (``sdckit evaluate --html``): information loss and
disclosure risk of a protected file, its figures and per-column summaries."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

_MATRIX_NAMES = {
    "x": "X (data)",
    "v": "V (covariances)",
    "r": "R (correlations)",
    "rf": "RF (attribute-component correlations)",
    "c": "C (communalities, PC1)",
    "f": "F (component score coefficients)",
    "mean": "X̄ (means)",
    "var": "S (variances)",
}


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def il_dr_figure(doc: dict[str, Any]):
    """Bar chart: information-loss measures on [0, 1] beside the disclosure-risk shares."""
    plt = _plt()
    il, dr = doc["information_loss"], doc["disclosure_risk"]
    il_items = [
        ("score_il / 100", None if il["score_il"] is None else il["score_il"] / 100.0),
        ("bounded_il", il["bounded_il"]),
        ("propensity_u / 0.25", None if il["propensity_u"] is None else il["propensity_u"] / 0.25),
    ]
    dr_items = [(k, dr[k]) for k in ("dbrl", "prl", "interval_disclosure", "score_dr")]
    if "reidentification" in doc:  # the categorical QIs' scale, beside the numeric one
        il_items.append(("entropy loss (QIs)", doc["reidentification"]["information_loss"]))
        dr_items.append(("matching (QIs)", doc["reidentification"]["disclosure_risk"]))
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.2))
    for ax, items, colour, title in (
        (axes[0], il_items, "#3d6fb6", "Information loss (0 = none; bounded_il, U/0.25 <= 1)"),
        (axes[1], dr_items, "#c0504d", "Disclosure risk (share of records)"),
    ):
        labels = [name for name, _ in items]
        vals = [0.0 if v is None else float(v) for _, v in items]
        ax.barh(labels, vals, color=colour)
        for y, (_, v) in enumerate(items):
            ax.text(
                (0.0 if v is None else float(v)) + 0.01,
                y,
                "n/a" if v is None else f"{float(v):.3f}",
                va="center",
                fontsize=8,
            )
        ax.set_xlim(0, max(1.1, 1.15 * max(vals)))
        ax.invert_yaxis()
        ax.set_title(title, fontsize=10)
    fig.tight_layout()
    return fig


def distribution_figure(
    original: pd.DataFrame, protected: pd.DataFrame, numeric: list[str], categorical: list[str]
):
    """Per-column original vs protected distributions (at most 12 columns): overlaid
    histograms for numeric columns, side-by-side bars of the 8 most frequent categories."""
    plt = _plt()
    cols = [*numeric, *categorical][:12]
    ncols = min(3, len(cols))
    nrows = int(np.ceil(len(cols) / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 2.8 * nrows), squeeze=False)
    for ax in axes.ravel()[len(cols) :]:
        ax.set_visible(False)
    for ax, c in zip(axes.ravel(), cols, strict=False):
        if c in numeric:
            a = original[c].to_numpy(dtype=float, na_value=np.nan)
            b = protected[c].to_numpy(dtype=float, na_value=np.nan)
            both = np.concatenate([a, b])
            both = both[np.isfinite(both)]
            lo, hi = np.quantile(both, [0.005, 0.995]) if both.size else (0.0, 1.0)
            if not hi > lo:
                lo, hi = lo - 0.5, hi + 0.5
            bins = np.linspace(lo, hi, 31)
            ax.hist(a, bins=bins, alpha=0.55, label="original", color="#3d6fb6")
            ax.hist(b, bins=bins, alpha=0.55, label="protected", color="#e8871e")
        else:
            from sdckit.core.encoding import as_text

            va = pd.Series(as_text(original[c])).value_counts()
            vb = pd.Series(as_text(protected[c])).value_counts()
            top = va.add(vb, fill_value=0).sort_values(ascending=False).index[:8]
            x = np.arange(len(top))
            ax.bar(x - 0.2, va.reindex(top, fill_value=0), 0.4, label="original", color="#3d6fb6")
            ax.bar(x + 0.2, vb.reindex(top, fill_value=0), 0.4, label="protected", color="#e8871e")
            ax.set_xticks(x, [str(t)[:10] or "(missing)" for t in top], rotation=45, ha="right")
        ax.set_title(c, fontsize=10)
        ax.tick_params(labelsize=7)
    axes.ravel()[0].legend(fontsize=7)
    fig.tight_layout()
    return fig


def _column_table(
    original: pd.DataFrame, protected: pd.DataFrame, numeric: list[str], categorical: list[str]
) -> list[dict[str, Any]]:
    from sdckit.core.encoding import as_text

    rows: list[dict[str, Any]] = []
    for c in numeric:
        a = original[c].to_numpy(dtype=float, na_value=np.nan)
        b = protected[c].to_numpy(dtype=float, na_value=np.nan)
        rows.append(
            {
                "column": c,
                "type": "numeric",
                "mean (orig / prot)": f"{np.nanmean(a):.4g} / {np.nanmean(b):.4g}",
                "sd (orig / prot)": f"{np.nanstd(a, ddof=1):.4g} / {np.nanstd(b, ddof=1):.4g}",
                "distinct (orig / prot)": f"{pd.unique(a).size} / {pd.unique(b).size}",
                "changed values": float(np.mean(~np.isclose(a, b, rtol=0, atol=0))),
            }
        )
    for c in categorical:
        a, b = as_text(original[c]), as_text(protected[c])
        rows.append(
            {
                "column": c,
                "type": "categorical",
                "mean (orig / prot)": "–",
                "sd (orig / prot)": "–",
                "distinct (orig / prot)": f"{pd.unique(a).size} / {pd.unique(b).size}",
                "changed values": float(np.mean(a != b)),
            }
        )
    return rows


def evaluation_report(
    doc: dict[str, Any],
    original: pd.DataFrame | None = None,
    protected: pd.DataFrame | None = None,
    title: str = "Evaluation of a protected file",
    subtitle: str | None = None,
):
    """The HTML :class:`~sdckit.report.writer.Report` of an :func:`evaluate` document.

    With the (type-converted) ``original`` and ``protected`` frames it also shows per-column
    summaries and original-vs-protected distribution plots.
    """
    from sdckit.report.writer import Report, Section, na

    il, dr = doc["information_loss"], doc["disclosure_risk"]
    rep = Report(title, subtitle)
    rep.add(
        Section(
            "Summary",
            text=(
                "Information loss (IL) measures how far the protected file is from the original; "
                "disclosure risk (DR) how many records an intruder holding the original values "
                "of the quasi-identifiers re-identifies. Score = (score_il + 100 score_dr) / 2 "
                "(Domingo-Ferrer & Torra 2001): lower is better on both."
            ),
            facts={
                "records": doc["n_records"],
                "numeric columns": ", ".join(doc["columns"]["numeric"]) or "–",
                "categorical columns": ", ".join(doc["columns"]["categorical"]) or "–",
                "intruder attributes (qi)": ", ".join(doc["columns"]["qi"]) or "–",
                "score": na(doc["score"]),
                "score_il (0-100)": na(il["score_il"]),
                "score_dr (share)": na(dr["score_dr"]),
                "IL1s": na(il["il1s"]),
                "bounded IL [0, 1]": na(il["bounded_il"]),
                "propensity score U (max 0.25)": na(il["propensity_u"]),
                "DBRL (share linked)": na(dr["dbrl"]),
                "PRL (share linked)": na(dr["prl"]),
                "interval disclosure (share)": na(dr["interval_disclosure"]),
                **(
                    {
                        "matching re-identification of the QIs (share)": doc["reidentification"][
                            "disclosure_risk"
                        ],
                        "relative entropy loss of the QIs": doc["reidentification"][
                            "information_loss"
                        ],
                    }
                    if "reidentification" in doc
                    else {}
                ),
            },
            figures=[il_dr_figure(doc)],
        )
    )
    if original is not None and protected is not None:
        num, cat = doc["columns"]["numeric"], doc["columns"]["categorical"]
        rep.add(
            Section(
                "Columns: original vs protected",
                table=_column_table(original, protected, num, cat),
                figures=[distribution_figure(original, protected, num, cat)] if num or cat else [],
                note=(
                    "Plots show at most 12 columns; numeric histograms cover the central 99% "
                    "of the values."
                )
                if len(num) + len(cat) > 12
                else None,
            )
        )
    if doc["columns"]["numeric"]:
        rows = [
            {
                "matrix": name,
                "mean square error": il[f"mse_{key}"],
                "mean absolute error": il[f"mae_{key}"],
                "mean variation": na(il[f"mv_{key}"]),
            }
            for key, name in _MATRIX_NAMES.items()
        ]
        bil = doc["details"].get("bounded_il", {})
        rep.add(
            Section(
                "Numerical information loss",
                text=(
                    "Discrepancies between the matrices of the original and protected data "
                    "(Domingo-Ferrer & Torra 2001): X normalized by n·p cells, V by p(p+1)/2, "
                    "R by p(p−1)/2, RF and F weighted by the original's component shares w_j. "
                    "Mean variation is the relative error |a − a'|/|a|."
                ),
                table=rows,
                facts={k: na(v) for k, v in bil.items()},
            )
        )
    if "categorical" in doc:
        cd = doc["categorical"]
        rep.add(
            Section(
                "Categorical information loss",
                text=(
                    "Share of changed values; contingency-table loss CTBIL (Domingo-Ferrer & "
                    "Torra 2001; share = total variation distance averaged over the tables of "
                    "1 and 2 attributes); entropy-based loss EBIL per record (Kooiman et al.)."
                ),
                facts={
                    "changed values (share)": cd["changed_values_share"],
                    "CTBIL": cd["ctbil"],
                    "CTBIL share": cd["ctbil_share"],
                },
                table=[
                    {
                        "column": c,
                        "changed (share)": cd["changed_by_column"][c],
                        "EBIL per record (nats)": cd["ebil_per_record"][c],
                    }
                    for c in cd["ebil"]
                ],
            )
        )
    if "generalization" in doc:
        g = doc["generalization"]
        rep.add(
            Section(
                "Generalization metrics",
                text=(
                    "The metrics of the anonymization algorithms on this pair: ARX's loss "
                    "(Iyengar 2002), Sweeney's precision, discernibility (Bayardo & Agrawal "
                    "2005), average class size (LeFevre et al. 2006), non-uniform entropy "
                    "(Gionis & Tassa 2009), height."
                ),
                facts={k: na(v) for k, v in g.items()},
            )
        )
    if "reidentification" in doc:
        r = doc["reidentification"]
        m = r["matching"]
        rep.add(
            Section(
                "Re-identification by matching the quasi-identifiers",
                text=(
                    "A prosecutor who knows a target's original values of the quasi-identifiers "
                    "picks one of the released records compatible with them (same value, a "
                    "generalization of it, an interval holding it, or suppressed); records "
                    "suppressed in every quasi-identifier are tried only when nothing else "
                    "matches. Information loss: the entropy of the original values left once "
                    "the released ones are known, relative to the original entropy (Kooiman "
                    "et al. 1998; ARX's non-uniform entropy for generalization)."
                ),
                facts={
                    "quasi-identifiers": ", ".join(r["qi"]),
                    "expected share re-identified": m["average_risk"],
                    "highest record risk": m["highest_risk"],
                    "re-identified with certainty (share)": m["certain_share"],
                    "records with risk > 0.2 (share)": m["records_at_risk_0.2"],
                    "mean compatible records": m["mean_candidates"],
                    "relative entropy loss": r["information_loss"],
                    "R-U score (%)": r["score"],
                },
                table=[
                    {"quasi-identifier": c, "relative entropy loss": na(v)}
                    for c, v in r["information_loss_by_column"].items()
                ],
            )
        )
    det = doc["details"]
    facts: dict[str, Any] = {}
    if "dbrl" in det:
        d = det["dbrl"]
        facts["DBRL Euclidean"] = f"{d['dbrl']:.4f} ({d['correct']:g} of {d['n_intruder']})"
    if "dbrl_mahalanobis" in det:
        m = det["dbrl_mahalanobis"]
        sigma = {"difference": "Σ of x − x′", "original": "Σ of the original"}.get(
            m.get("covariance", ""), str(m.get("covariance"))
        )
        facts[f"DBRL Mahalanobis ({sigma})"] = f"{m['dbrl']:.4f}"
    if "dbrl_weighted" in det:
        w = det["dbrl_weighted"]
        ws = ", ".join(f"{c} {v:g}" for c, v in w["weights"].items())
        facts[f"DBRL weighted ({ws})"] = f"{w['dbrl']:.4f}"
    if "prl" in det:
        c = det["prl"]["counts"]
        facts["PRL"] = f"{det['prl']['prl']:.4f} ({c['correct_links']} correct links)"
        facts["PRL pairs linked / possible / non-linked"] = (
            f"{c['linked']:,} / {c['possible']:,} / {c['nonlinked']:,}"
        )
        facts["PRL blocking"] = str(det["prl"]["blocking"])
    if "interval_disclosure" in det:
        facts["interval disclosure, p = 1..10 %"] = det["interval_disclosure"][
            "interval_disclosure"
        ]
    if "sdcmicro_drisk" in det:
        facts["sdcMicro dRisk (k = 0.05 sd; every attribute inside)"] = det["sdcmicro_drisk"]
    if "sdcmicro_drisk_at_most_one_outside" in det:
        facts["dRisk, at most 1 attribute outside (sdcMicro < 5.5.2)"] = det[
            "sdcmicro_drisk_at_most_one_outside"
        ]
    if facts:
        figs = []
        if "interval_disclosure" in det:
            plt = _plt()
            bp = det["interval_disclosure"]["by_percent"]
            fig, ax = plt.subplots(figsize=(5, 2.8))
            ax.plot([float(x) for x in bp], list(bp.values()), marker="o", color="#c0504d")
            ax.set_xlabel("interval width p (% of ranks)")
            ax.set_ylabel("share of records disclosed")
            ax.set_ylim(0, 1.02)
            ax.set_title("Interval disclosure", fontsize=10)
            fig.tight_layout()
            figs.append(fig)
        rep.add(
            Section(
                "Disclosure risk",
                text=(
                    "DBRL: each intruder record linked to its nearest protected record "
                    "(z-scores; ties count 1/t); Mahalanobis with the covariance of the "
                    "differences (Torra, Abowd & Domingo-Ferrer 2006). "
                    "PRL: Fellegi-Sunter with EM-estimated m/u. "
                    "Interval disclosure: a record is disclosed when every original value lies "
                    "in the rank interval of p % around its protected value. "
                    "score_dr = 0.25 DBRL + 0.25 PRL + 0.5 ID."
                ),
                facts=facts,
                figures=figs,
            )
        )
    if "isolation" in doc:
        iso = doc["isolation"]
        rep.add(
            Section(
                f"(c, t)-isolation (c = {iso['c']:g}, t = {iso['t']})",
                text=(
                    "Chawla, Dwork, McSherry, Smith & Wee (2005): a released point q isolates an "
                    "original record y when the ball around q of radius c ||q - y|| holds fewer "
                    "than t original records. Computed on the numeric intruder attributes"
                    + (" (z-scores of the original)." if iso["standardized"] else ".")
                ),
                facts={
                    "original records isolated by their own released record (share)": na(
                        iso["isolated_by_own"]
                    ),
                    "original records isolated by some released record (share)": iso[
                        "isolated_by_any"
                    ],
                    "released records that isolate an original one (share)": iso[
                        "isolating_released"
                    ],
                    "attributes": iso["columns"],
                },
            )
        )
    if "transparency_attack" in doc:
        t = doc["transparency_attack"]
        rep.add(
            Section(
                "Transparency attack (the intruder knows the method)",
                text=(
                    "Nin, Herranz & Torra (2008): for each attribute the protected records whose "
                    "value can come from the intruder's value; a singleton intersection is a "
                    "certain match, otherwise the record is linked by distance inside the set."
                ),
                facts={
                    "method": t["method"],
                    "parameters": t["parameter"],
                    "certain matches (share)": t["certain_matches"],
                    "re-identified (share)": t["reidentified"],
                    "mean candidate-set size": t["mean_set_size"],
                    "own record in its set (share; 1 if the method is right)": t["contains_true"],
                    "empty sets": t["n_empty"],
                },
            )
        )
    if "use_specific" in doc:
        u = doc["use_specific"]
        if "regression" in u:
            reg = u["regression"]
            rows = [
                {"coefficient": name, **{k: v for k, v in c.items() if not k.endswith("_ci")}}
                for name, c in reg["coefficients"].items()
            ]
            rep.add(
                Section(
                    f"Regression of {u['target']} (Karr et al. 2006)",
                    facts={"mean CI overlap": reg["mean_ci_overlap"]},
                    table=rows,
                )
            )
        else:
            rep.add(Section(f"Classifier for {u['target']}", facts=u["classifier"]))
    if "worst_case_linkage" in doc:
        rows = [
            {
                "distance": fam,
                "linked (learned)": r["linked_share"],
                "Euclidean": r["euclidean_share"],
                "Mahalanobis": na(r["mahalanobis_share"]),
                "optimal": r["optimal"],
                "weights": ", ".join(f"{k}: {v:.3f}" for k, v in r["weights"].items()),
            }
            for fam, r in doc["worst_case_linkage"].items()
        ]
        rep.add(
            Section(
                "Worst-case linkage with learned distances (Abril et al. 2012)",
                text=(
                    "The parameters of each distance that link the most records, found by a "
                    "mixed-integer program (HiGHS): an upper bound on what an intruder who "
                    "tunes the distance can achieve, beside plain Euclidean and Mahalanobis "
                    "linkage. optimal = False: --learned-time-limit stopped HiGHS first; the "
                    "weights are the best it found."
                ),
                table=rows,
            )
        )
    if doc["notes"]:
        rep.add(Section("Notes", table=[{"note": n} for n in doc["notes"]]))
    return rep
