"""The report section of :func:`sdckit.models.attacks.attack_coverage`: which attack each
model of a release defends against, and which attacks no model covers (shared by the
analyze and anonymize pages)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sdckit.report.writer import Section

__all__ = ["attack_coverage_section"]


def attack_coverage_section(coverage: Mapping[str, Any], *, intro: str) -> Section:
    """One :class:`~sdckit.report.writer.Section`: a row per model, a column per attack of
    Fung, Wang, Chen & Yu (2010, Table II) marked ``defends`` or ``–``, and a note naming
    the attacks no model covers. ``intro`` says which models these are."""
    from sdckit.models.attacks import ATTACK_LABELS, ATTACKS

    rows = []
    for m in coverage["models"]:
        row: dict[str, Any] = {"model": m["label"]}
        for a in ATTACKS:
            row[ATTACK_LABELS[a]] = "defends" if a in m["attacks"] else "–"
        row["source"] = m["source"]
        rows.append(row)
    uncovered = [ATTACK_LABELS[a] for a in coverage["uncovered"]]
    note = (
        "Not covered by any of these models: " + ", ".join(uncovered) + "."
        if uncovered
        else "Every attack of the survey is covered by at least one of these models."
    )
    return Section(
        "Attacks the privacy models defend against",
        text=(
            f"{intro} Attack models of Fung, Wang, Chen & Yu (2010), 'Privacy-preserving data "
            "publishing: a survey of recent developments', Table II: record linkage (identity "
            "disclosure), attribute linkage (a sensitive value inferred), table linkage "
            "(membership in the table inferred), probabilistic attack (the belief about a "
            "person changes too much from prior to posterior)."
        ),
        table=rows,
        note=note,
    )
