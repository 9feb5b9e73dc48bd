"""What a masking changed: per-column summaries before and after, and the numeric measures
of the masked columns (what ``sdckit mask`` reports after its methods ran)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from sdckit.core.encoding import is_numeric
from sdckit.errors import SdcInputError
from sdckit.masking import microaggregation as ma

# --------------------------------------------------------------------------------------------
# parameter specifications
# --------------------------------------------------------------------------------------------


def _numeric_stats(s: pd.Series) -> dict[str, Any]:
    x = s.to_numpy(dtype=np.float64, na_value=np.nan)
    ok = x[~np.isnan(x)]
    return {
        "mean": float(ok.mean()) if ok.size else None,
        "sd": float(ok.std(ddof=1)) if ok.size > 1 else None,
        "min": float(ok.min()) if ok.size else None,
        "max": float(ok.max()) if ok.size else None,
        "distinct": int(np.unique(ok).size),
        "missing": int(x.size - ok.size),
    }


def _category_counts(s: pd.Series) -> dict[str, int]:
    from sdckit.core.encoding import as_text

    text = pd.Series(as_text(s), index=s.index).where(s.notna(), "<missing>")
    return {str(k): int(v) for k, v in text.value_counts(sort=False).items()}


def column_changes(
    before: pd.DataFrame, after: pd.DataFrame, columns: Sequence[str], top: int = 20
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Per-column before/after summaries: numeric statistics and category frequency changes.

    Numeric columns (numeric before and after): mean, sd (ddof=1), min, max, distinct values,
    missing values. Other columns: distinct categories, missing values and, in the second
    list, the ``top`` categories with the largest absolute count change (before, after,
    change). Rows of ``after`` are matched to ``before`` by index (sampling keeps the index).
    """
    numeric, categories = [], []
    for c in columns:
        b, a = before[c], after[c]
        if is_numeric(b) and is_numeric(a):
            sb, sa = _numeric_stats(b), _numeric_stats(a)
            row: dict[str, Any] = {"column": c, "kind": "numeric"}
            for k in sb:
                row[f"{k} before"] = sb[k]
                row[f"{k} after"] = sa[k]
            numeric.append(row)
            continue
        cb, ca = _category_counts(b), _category_counts(a)
        numeric.append(
            {
                "column": c,
                "kind": "categorical",
                "distinct before": len(cb) - ("<missing>" in cb),
                "distinct after": len(ca) - ("<missing>" in ca),
                "missing before": cb.get("<missing>", 0),
                "missing after": ca.get("<missing>", 0),
            }
        )
        cats = sorted(set(cb) | set(ca), key=lambda v: (-abs(ca.get(v, 0) - cb.get(v, 0)), v))
        for v in cats[:top]:
            categories.append(
                {
                    "column": c,
                    "category": v,
                    "before": cb.get(v, 0),
                    "after": ca.get(v, 0),
                    "change": ca.get(v, 0) - cb.get(v, 0),
                }
            )
    return numeric, categories


def numeric_evaluation(
    before: pd.DataFrame,
    after: pd.DataFrame,
    columns: Sequence[str],
    linkage_records: int | None = 10_000,
    seed: int | None = 0,
) -> dict[str, Any]:
    """Information loss and record-linkage risk of the masked numeric columns.

    ``il1s`` (:func:`sdckit.utility.numeric.il1s`, Yancey, Winkler & Creecy 2002),
    ``il_sse_sst`` (IL = 100 SSE/SST on z-scores, the microaggregation measure of
    Domingo-Ferrer & Mateo-Sanz 2002, :func:`sdckit.masking.microaggregation.information_loss`)
    and ``dbrl`` (distance-based record linkage, :func:`sdckit.risk.linkage.distance_linkage`:
    share of original records whose nearest masked record is their own), on the rows of
    ``after`` (matched to ``before`` by index) that are complete in both (records with a
    missing value in these columns are left out and counted). A measure that cannot be
    computed (a constant column, too few records) is reported with the reason instead.

    When more than ``linkage_records`` records were released, the DBRL is estimated from a
    simple random sample of that many intruder records (``numpy.random.default_rng(seed)``),
    each still linked against the whole masked file; ``dbrl_intruder_records`` says how many
    were used (``linkage_records=None``: all).
    """
    from sdckit.risk.linkage import distance_linkage
    from sdckit.utility.numeric import il1s

    cols = [c for c in columns if is_numeric(before[c]) and is_numeric(after[c])]
    if not cols:
        return {"columns": [], "note": "no masked column is numeric before and after"}
    orig = before.loc[after.index, cols].reset_index(drop=True)
    prot = after[cols].reset_index(drop=True)
    complete = np.isfinite(orig.to_numpy(dtype=np.float64, na_value=np.nan)).all(
        axis=1
    ) & np.isfinite(prot.to_numpy(dtype=np.float64, na_value=np.nan)).all(axis=1)
    incomplete = int((~complete).sum())
    if incomplete:
        orig = orig[complete].reset_index(drop=True)
        prot = prot[complete].reset_index(drop=True)
    n = len(prot)
    intruders = None
    if linkage_records is not None and n > linkage_records:
        rng = np.random.default_rng(seed)
        intruders = np.sort(rng.choice(n, size=int(linkage_records), replace=False))
    out: dict[str, Any] = {
        "columns": cols,
        "records": n,
        "records_left_out_missing": incomplete,
        "dbrl_intruder_records": n if intruders is None else int(intruders.size),
    }
    measures = {
        "il1s": lambda: il1s(orig, prot, cols),
        "il_sse_sst": lambda: ma.information_loss(orig, prot, cols),
        "dbrl": lambda: distance_linkage(orig, prot, cols, intruder_rows=intruders).dbrl,
    }
    for name, fn in measures.items():
        try:
            out[name] = float(fn())
        except SdcInputError as exc:
            out[name] = None
            out[f"{name}_unavailable"] = str(exc)
    return out
