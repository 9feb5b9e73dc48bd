"""The HTML page of a comparison (``sdckit compare``): the R-U map and the ranking."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

#: Axis labels of the R-U map per scale: (x = disclosure risk, y = information loss).
AXES = {
    "score": ("disclosure risk DR = 100 × score_dr (%)", "information loss IL = score_il (%)"),
    "reidentification": (
        "disclosure risk: records re-identified by matching the QIs (%)",
        "information loss: relative entropy loss of the QIs (%)",
    ),
    "synthetic": (
        "disclosure risk: TCAP, target attributed correctly from the QIs (%)",
        "information loss: pMSE / its maximum (%)",
    ),
}


def _kind(row: Mapping[str, Any]) -> str:
    """What a point is coloured by: the first masking method, the algorithm, or a given file."""
    if row.get("algorithm"):
        return f"anonymize ({row['algorithm']})"
    return next(iter(row["methods"][0])) if row["methods"] else "given file"


def ru_map_figure(
    ranking: Sequence[Mapping[str, Any]],
    scale: str = "score",
    limits: Mapping[str, float] | None = None,
):
    """The R-U map: disclosure risk (x, %) vs information loss (y, %), labelled points.

    Dashed lines are iso-score lines ``(IL + DR) / 2 = s``; the first configuration of the
    ranking (lowest R-U score, within the ceilings when there are) is circled. Points are
    coloured by the first masking method (anonymize configurations by their algorithm).
    ``scale`` picks the axis labels (:data:`AXES`). ``limits`` (``max_risk``,
    ``max_loss``): the steward's ceilings, drawn as solid lines bounding the acceptable
    region, which is shaded.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    pts = [r for r in ranking if r["ru_score"] is not None]
    fig, (ax, key) = plt.subplots(1, 2, figsize=(11, 5.6), gridspec_kw={"width_ratios": [2.2, 1]})
    key.axis("off")
    if not pts:
        ax.text(0.5, 0.5, "no configuration has both IL and DR", ha="center", va="center")
        return fig
    x = np.array([r["disclosure_risk"] for r in pts], dtype=float)
    y = np.array([r["information_loss"] for r in pts], dtype=float)
    first = [_kind(r) for r in pts]
    kinds = list(dict.fromkeys(first))
    cmap = plt.get_cmap("tab10")
    for i, kind in enumerate(kinds):
        sel = np.array([f == kind for f in first])
        ax.scatter(x[sel], y[sel], s=46, color=cmap(i % 10), label=kind, zorder=3)
    for xi, yi, r in zip(x, y, pts, strict=True):
        ax.annotate(
            str(r["rank"]),
            (xi, yi),
            textcoords="offset points",
            xytext=(4, 3),
            fontsize=8,
            fontweight="bold",
        )
    # the key: rank -> configuration (the map itself only carries the rank numbers)
    shown = pts[:40]
    lines = [f"{r['rank']:>2}. {r['label'][:48]}  ({r['ru_score']:.3g})" for r in shown]
    if len(pts) > len(shown):
        lines.append(f"... {len(pts) - len(shown)} more in the ranking table")
    key.text(
        0.0,
        1.0,
        "rank. configuration (R-U score)\n" + "\n".join(lines),
        va="top",
        ha="left",
        family="monospace",
        fontsize=7 if len(lines) < 25 else 6,
        transform=key.transAxes,
    )
    best = pts[0]
    ax.scatter(
        [best["disclosure_risk"]],
        [best["information_loss"]],
        s=260,
        facecolors="none",
        edgecolors="k",
        linewidths=1.2,
        zorder=4,
    )
    xmax = max(float(x.max()) * 1.15, 1.0)
    ymax = max(float(y.max()) * 1.15, 1.0)
    s_vals = np.array([r["ru_score"] for r in pts], dtype=float)
    for s in np.unique(np.round(np.quantile(s_vals, [0.0, 0.5, 1.0]), 3)):
        xs = np.linspace(0, xmax, 50)
        ax.plot(xs, 2 * s - xs, ls="--", lw=0.7, color="0.6", zorder=1)
        if 2 * s <= ymax:
            ax.text(0.5, 2 * s, f"score {s:g}", fontsize=6, color="0.45", va="bottom")
    limits = limits or {}
    if limits:
        xmax = max(xmax, float(limits.get("max_risk", 0.0)) * 1.05)
        ymax = max(ymax, float(limits.get("max_loss", 0.0)) * 1.05)
        right = float(limits.get("max_risk", xmax))
        top = float(limits.get("max_loss", ymax))
        ax.fill_between([0, right], 0, top, color="tab:green", alpha=0.07, zorder=0)
        if "max_risk" in limits:
            ax.axvline(right, color="tab:red", lw=1.2, zorder=2)
            ax.text(right, ymax * 0.98, f" DR ceiling {right:g}", color="tab:red", fontsize=7,
                    va="top")  # fmt: skip
        if "max_loss" in limits:
            ax.axhline(top, color="tab:red", lw=1.2, zorder=2)
            ax.text(xmax * 0.98, top, f"IL ceiling {top:g} ", color="tab:red", fontsize=7,
                    ha="right", va="bottom")  # fmt: skip
    ax.set_xlim(0, xmax)
    ax.set_ylim(0, ymax)
    ax.set_xlabel(AXES[scale][0])
    ax.set_ylabel(AXES[scale][1])
    ax.set_title("R-U map (lower left is better; dashed: equal R-U score)")
    ax.legend(fontsize=8, loc="upper right")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


_MAP_TEXT = {
    "score": (
        "Each point is one configuration: disclosure risk on x (DR = 100 × (0.25 DBRL + 0.25 "
        "PRL + 0.5 interval disclosure)), information loss on y (IL = score_il, Domingo-Ferrer "
        "& Torra 2001). The R-U score (IL + DR) / 2 ranks them; lower is better."
    ),
    "reidentification": (
        "Each point is one configuration, measured on the quasi-identifiers: disclosure risk on "
        "x = the expected share of records a prosecutor re-identifies by matching their "
        "original values against the released ones (a generalized label, an interval or a "
        "suppressed value matches every value it covers; J/n for a global recoding without "
        "suppression, ARX's prosecutor success rate); information loss on y = the entropy of "
        "the original values left once the released ones are known, relative to the original "
        "entropy (Kooiman et al. 1998; ARX's non-uniform entropy). The R-U score (IL + DR) / 2 "
        "ranks them; lower is better."
    ),
    "synthetic": (
        "Each point is one release, synthetic or not (the measures need no record-by-record "
        "correspondence): disclosure risk on x = 100 × TCAP, the share of original records "
        "whose sensitive target an intruder attributes correctly by looking up their "
        "quasi-identifiers in the release (Taub et al. 2018); information loss on y = 100 × "
        "pMSE / c(1 − c), the propensity score mean squared error as a share of its maximum "
        "(Woo et al. 2009). The R-U score (IL + DR) / 2 ranks them; lower is better."
    ),
}


def _ranking_table(ranking: Sequence[Mapping[str, Any]], scale: str) -> list[dict[str, Any]]:
    """The report's ranking rows: rank, configuration, score, IL, DR and the scale's measures."""
    from sdckit.report.writer import na

    rows = []
    for r in ranking:
        row = {
            "rank": r["rank"] if r["rank"] is not None else "–",
            "configuration": r["label"],
            "R-U score": na(r["ru_score"]),
            "IL (score_il)" if scale == "score" else "IL (%)": na(r["information_loss"]),
            "DR (%)": na(r["disclosure_risk"]),
        }
        if "within_limits" in r:
            row["within the ceilings"] = "yes" if r["within_limits"] else "no"
        if scale == "synthetic":
            row.update(
                {
                    "pMSE": na(r["pmse"]),
                    "S_pMSE": na(r["s_pmse"]),
                    "TCAP": na(r["tcap"]),
                    "TCAP baseline": na(r["tcap_baseline"]),
                    "records": na(r["records"]),
                }
            )
        elif scale == "reidentification":
            levels = r["transformation"]
            row.update(
                {
                    "highest risk": na(r["highest_risk"]),
                    "certain (share)": na(r["certain_share"]),
                    "risk > 0.2 (share)": na(r["records_at_risk"]),
                    "suppressed": na(r["suppressed_records"]),
                    "ARX loss": na(r["loss"]),
                    "transformation": "[" + ", ".join(map(str, levels.values())) + "]"
                    if levels
                    else "–",
                }
            )
        else:
            row.update(
                {
                    "DBRL": na(r["dbrl"]),
                    "PRL": na(r["prl"]),
                    "ID": na(r["interval_disclosure"]),
                    "IL1s": na(r["il1s"]),
                    "bounded IL": na(r["bounded_il"]),
                    "propensity U": na(r["propensity_u"]),
                    "transparency: certain / re-identified": "–"
                    if r["certain_matches"] is None
                    else f"{r['certain_matches']:.3f} / {r['reidentified']:.3f}",
                }
            )
        rows.append(row)
    return rows


def compare_report(
    result: Mapping[str, Any], title: str = "Comparison of protection configurations"
):
    """The HTML :class:`~sdckit.report.writer.Report`: R-U map, ranking, configurations."""
    from sdckit.report.writer import Report, Section

    ranking = result["ranking"]
    scale = result.get("scale", "score")
    rep = Report(title, result.get("input"))
    best = next((r for r in ranking if r["ru_score"] is not None), None)
    limits = result.get("limits") or {}
    facts: dict[str, Any] = {"scale": scale, "configurations": len(ranking)}
    text = _MAP_TEXT[scale]
    if limits:
        within = [r for r in ranking if r.get("within_limits")]
        facts["ceilings"] = ", ".join(
            f"{'DR' if k == 'max_risk' else 'IL'} <= {v:g}" for k, v in limits.items()
        )
        facts["within the ceilings"] = f"{len(within)} of {len(ranking)}"
        best = next((r for r in within if r["ru_score"] is not None), None)
        text += (
            " The releases within the steward's ceilings (shaded) are ranked first, each group "
            "by R-U score; the score stays a column."
        )
    facts["best configuration"] = best["label"] if best else "–"
    facts["best R-U score"] = best["ru_score"] if best else "–"
    rep.add(
        Section(
            "R-U map",
            text=text,
            facts=facts,
            figures=[ru_map_figure(ranking, scale, limits)],
        )
    )
    levels = next((r.get("transformation") for r in ranking if r.get("transformation")), None)
    rep.add(
        Section(
            "Ranking",
            table=_ranking_table(ranking, scale),
            note=None
            if not levels
            else "transformation = the generalization level of each quasi-identifier, in the "
            f"order {', '.join(levels)} (a global recoding; '–' for local recodings and masking)",
        )
    )
    if result.get("masking"):
        rows = []
        for label, recs in result["masking"].items():
            for rec in recs:
                params = {k: v for k, v in rec.get("parameters", {}).items() if k != "groups"}
                rows.append(
                    {"configuration": label, "method": rec.get("method"), "parameters": params}
                )
        rep.add(
            Section(
                "Configurations (methods and parameters applied)",
                text="Published so that users can judge the protection (transparency principle).",
                table=rows,
            )
        )
    notes = [
        {"configuration": label, "note": n}
        for label, doc in result["evaluations"].items()
        for n in doc.get("notes", [])
    ]
    if notes:
        rep.add(Section("Notes", table=notes))
    return rep
