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
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

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

if TYPE_CHECKING:  # pragma: no cover
    from sdckit.masking.microaggregation import Microaggregation, MicroaggregationPlan

_INFO = "__sdc_info"
_BLOCK = "__sdc_block"


def _stratum_of(step: Any, pdf: pd.DataFrame) -> dict[str, Any]:
    from sdckit.masking import microaggregation as ma

    if step.strata is not None:
        return ma.stratum_key(list(step.strata), [pdf[c].iloc[0] for c in step.strata])
    return {"block": int(pdf[_BLOCK].iloc[0])}


def microaggregation_spark(
    run: _Run, step: Microaggregation, seed: int | None, key: str
) -> list[dict[str, Any]]:
    """Microaggregation within strata: the step's plan from the Spark statistics
    (:meth:`~sdckit.masking.microaggregation.Microaggregation.plan`: columns, variant and data
    checked, with the local messages), then :func:`release_strata`."""
    return release_strata(run, step.plan(run.stats(), seed), seed)


def release_strata(run: _Run, plan: MicroaggregationPlan, seed: int | None) -> list[dict[str, Any]]:
    """The release of a microaggregation plan on Spark: stratum sizes checked (>= k), every
    stratum aggregated by the local method on one executor (``applyInPandas``, records in row
    order, ``fuzzy`` seeded per stratum), the per-stratum records merged."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from sdckit.masking import microaggregation as ma

    step = plan.step
    cols = list(plan.columns)
    kinds = run.kinds()
    source = run.sdf
    if step.strata is not None:
        group_cols = list(plan.strata)
    else:  # blocks along the sort key plan.strata (block_size given with it)
        assert step.block_size is not None
        ranks = ranked(source, [*plan.strata, ROW])
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

    out_kinds = plan.out_kinds(kinds)
    kinds_in = {f.name: _kind(f.dataType) for f in source.schema.fields}
    schema = _schema_with(source, out_kinds, [T.StructField(_INFO, T.StringType())])
    base = seed

    def per_stratum(pdf: pd.DataFrame) -> pd.DataFrame:
        pdf = pdf.sort_values(ROW, kind="stable").reset_index(drop=True)
        local = _local_frame(pdf, kinds_in)
        stratum = _stratum_of(step, local)
        results = plan.release_stratum(local, ma.stratum_seed(base, stratum))
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
