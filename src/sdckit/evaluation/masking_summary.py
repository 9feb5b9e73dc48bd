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
            numeric.append(numeric_change_row(c, _numeric_stats(b), _numeric_stats(a)))
            continue
        row, cats = categorical_change_rows(c, _category_counts(b), _category_counts(a), top)
        numeric.append(row)
        categories += cats
    return numeric, categories


def numeric_change_row(
    column: str, before: dict[str, Any], after: dict[str, Any]
) -> dict[str, Any]:
    """The row of a numeric column: every statistic (mean, sd, min, max, distinct, missing)
    before and after. The Spark engine computes the statistics as aggregates and builds the
    same row."""
    row: dict[str, Any] = {"column": column, "kind": "numeric"}
    for k in before:
        row[f"{k} before"] = before[k]
        row[f"{k} after"] = after[k]
    return row


def categorical_change_rows(
    column: str,
    before: dict[str, int],
    after: dict[str, int],
    top: int = 20,
    distinct: tuple[int, int] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The row of a non-numeric column (distinct categories and missing values before and
    after) and its ``top`` categories with the largest absolute count change (ties by
    category text). ``before``/``after`` map category texts (``<missing>`` for missing
    values) to counts; the Spark engine passes only its top categories and ``<missing>``,
    with the numbers of distinct categories (before, after) as ``distinct``."""
    if distinct is None:
        distinct = (
            len(before) - ("<missing>" in before),
            len(after) - ("<missing>" in after),
        )
    row = {
        "column": column,
        "kind": "categorical",
        "distinct before": int(distinct[0]),
        "distinct after": int(distinct[1]),
        "missing before": before.get("<missing>", 0),
        "missing after": after.get("<missing>", 0),
    }
    cats = sorted(
        set(before) | set(after), key=lambda v: (-abs(after.get(v, 0) - before.get(v, 0)), v)
    )
    rows = [
        {
            "column": column,
            "category": v,
            "before": before.get(v, 0),
            "after": after.get(v, 0),
            "change": after.get(v, 0) - before.get(v, 0),
        }
        for v in cats[:top]
    ]
    return row, rows


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
