"""Microaggregation on Spark within strata: the Spark step microaggregation names
(``spark_hook``), since its release is not record by record.

Microaggregation runs within strata (``strata`` columns, or ``block_by``/``block_size``: blocks
along a sort key), each stratum on one executor (``groupBy(...).applyInPandas``) with the
local method on the stratum's records in row order -- what the local engine does with the same
parameters (:meth:`~sdckit.masking.microaggregation.Microaggregation.apply_within_strata`). Stratum
sizes are checked (at least ``k`` records each) on the driver first. Without strata the step
is refused (a whole file does not fit one executor).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from sdckit.errors import DataError
from sdckit.spark.frame import (
    _RANK,
    ROW,
    _col,
    _kind,
    _local_frame,
    _quiet,
    _schema_with,
    _spark_frame,
    ranked,
    worker_errors,
)
from sdckit.spark.mask import _Run

_INFO = "__sdc_info"
_BLOCK = "__sdc_block"


def _stratum_of(step: Any, pdf: pd.DataFrame) -> dict[str, Any]:
    from sdckit.masking import microaggregation as ma

    if step.strata is not None:
        return ma.stratum_key(list(step.strata), [pdf[c].iloc[0] for c in step.strata])
    return {"block": int(pdf[_BLOCK].iloc[0])}


_MA_FUNCTION = {
    "mdav": "mdav",
    "vmdav": "vmdav",
    "optimal_univariate": "optimal_univariate",
    "individual_ranking": "individual_ranking",
    "fuzzy": "fuzzy_microaggregation",
    "categorical": "categorical_microaggregation",
    "kanonymity": "kanonymity_microaggregation",
}


def microaggregation_spark(
    run: _Run, step: Any, seed: int | None, key: str
) -> list[dict[str, Any]]:
    """Microaggregation within strata: stratum sizes checked (>= k), every stratum
    aggregated by the local method on one executor (``applyInPandas``, records in row
    order, ``fuzzy`` seeded per stratum), the per-stratum records merged."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from sdckit.masking import microaggregation as ma

    inner = step.unstratified()
    stats = run.stats()
    cols = stats.check_columns(list(step.columns or [c for g in (step.groups or []) for c in g]))
    kinds = run.kinds()
    numeric = all(kinds[c] in ("long", "double") for c in cols)
    as_numbers = step.method not in ("categorical", "kanonymity") or (
        step.method == "kanonymity" and numeric
    )
    function = _MA_FUNCTION[step.method]
    if step.method == "kanonymity":
        function = "mdav" if numeric else "categorical_microaggregation"
    if as_numbers:
        stats.check_numeric(cols, function)
    missing = stats.missing(cols)
    for c in cols:
        if missing[c]:
            row, value = stats.first(_col(c).isNull(), c)
            raise DataError(
                f"{function}: column {c!r} has a missing or infinite value in row {row + 1} "
                f"({value!r}); microaggregation needs complete numeric data: impute or drop "
                "such rows first"
                if as_numbers
                else f"{function}: column {c!r} has a missing value in row {row + 1}; impute "
                "or drop such rows first"
            )
    source = run.sdf
    if step.strata is not None:
        group_cols = stats.check_columns(step.strata)
    else:
        stats.check_columns(step.block_by)
        ranks = ranked(source, [*step.block_by, ROW])
        n_blocks = max(1, run.n // int(step.block_size))
        block = F.least(
            F.expr(f"`{_RANK}` div {int(step.block_size)}"), F.lit(n_blocks - 1).cast("long")
        )
        source = ranks.withColumn(_BLOCK, block).drop(_RANK)
        group_cols = [_BLOCK]
    sizes = source.groupBy(*[_col(c) for c in group_cols]).count().collect()
    strata = []
    for r in sizes:
        values = list(r[: len(group_cols)])
        k_of = (
            ma.stratum_key(group_cols, values)
            if step.strata is not None
            else {"block": int(values[0])}
        )
        order = tuple((v is None, v) for v in values)
        strata.append((order, k_of, int(r[-1])))
    strata.sort(key=lambda s: s[0])
    for _, k_of, size in strata:
        ma.check_stratum_size(size, step.k, k_of, "microaggregation")
    summary = ma.strata_summary(step.strata_spec(), [s[2] for s in strata], [s[1] for s in strata])

    out_kinds = {
        c: ("double" if as_numbers or kinds[c] in ("long", "double") else kinds[c]) for c in cols
    }
    kinds_in = {f.name: _kind(f.dataType) for f in source.schema.fields}
    schema = _schema_with(source, out_kinds, [T.StructField(_INFO, T.StringType())])
    base = seed

    def per_stratum(pdf: pd.DataFrame) -> pd.DataFrame:
        pdf = pdf.sort_values(ROW, kind="stable").reset_index(drop=True)
        local = _local_frame(pdf, kinds_in)
        stratum = _stratum_of(step, local)
        results = inner._apply_whole(local, ma.stratum_seed(base, stratum))
        converted = _spark_frame(results[-1].data, out_kinds)
        out = pdf.copy()
        for c in out_kinds:  # the other columns go back as they came
            out[c] = converted[c]
        info: list[str | None] = [None] * len(out)
        info[0] = json.dumps(
            {
                "stratum": stratum,
                "size": len(out),
                "records": [r.record() for r in results],
            },
            default=_json_default,
        )
        out[_INFO] = info
        return out

    with _quiet():
        applied = source.groupBy(*[_col(c) for c in group_cols]).applyInPandas(per_stratum, schema)
    applied = run.keep(applied)
    with worker_errors():
        infos = [
            json.loads(r[0])
            for r in applied.where(F.col(_INFO).isNotNull()).select(_INFO).collect()
        ]
    run.settled = True
    run.sdf = applied.drop(_INFO, *([_BLOCK] if step.strata is None else []))
    for c in cols:
        run.categories.pop(c, None)
    run.blocked = False
    by_key = {json.dumps(d["stratum"], sort_keys=True): d for d in infos}
    ordered = [by_key[json.dumps(s[1], sort_keys=True)] for s in strata]
    records = []
    for j, first in enumerate(ordered[0]["records"]):
        params = {k: v for k, v in first["parameters"].items() if k != "seed"}
        params.update(step.strata_spec())
        details = ma.merge_stratum_details([d["records"][j]["details"] for d in ordered], summary)
        records.append({"method": first["method"], "parameters": params, "details": details})
    run.strata.append(summary)
    return records


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")
