"""What a Spark mask job changed: the mask summary of :mod:`sdckit.evaluation.masking_summary`
from Spark aggregates.

The rows are built by the local engine's functions
(:func:`~sdckit.evaluation.masking_summary.numeric_change_row`,
:func:`~sdckit.evaluation.masking_summary.categorical_change_rows`,
:func:`~sdckit.evaluation.masking_summary.numeric_evaluation`); Spark computes what they read:

* per numeric column: mean, sd (divisor n - 1), min, max, distinct and missing values
  (``avg``, ``stddev_samp``, ``min``, ``max``, ``count(DISTINCT)``, null counts);
* per other column: the number of distinct categories and of missing values, and the categories
  whose count changed most (a full outer join of the two group-bys, ordered on Spark);
* the numeric evaluation over the records complete before and after, matched by row: when at
  most ``linkage_records`` remain they are collected and evaluated by the local function (the
  same numbers as the local engine); otherwise IL1s and IL = 100 SSE/SST are exact aggregates
  over all of them, and distance-based record linkage, which needs every record's nearest
  neighbour, is computed on a simple random sample of ``linkage_records`` of them
  (``numpy.random.default_rng(seed)``, the positions the local evaluation would draw as its
  intruders), linked within the sample -- a different, larger estimate than linking against
  the whole file; the summary says so (``dbrl_sample``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sdckit.spark.frame import ROW, _col, _kind, _pandas, ranked

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, DataFrame

MISSING = "<missing>"


def _numeric_columns(before: DataFrame, after: DataFrame, columns: Sequence[str]) -> list[str]:
    kb = {f.name: _kind(f.dataType) for f in before.schema.fields}
    ka = {f.name: _kind(f.dataType) for f in after.schema.fields}
    return [c for c in columns if kb[c] in ("long", "double") and ka[c] in ("long", "double")]


def _numeric_stats(sdf: DataFrame, columns: Sequence[str]) -> dict[str, dict[str, Any]]:
    """The statistics of :func:`sdckit.evaluation.masking_summary._numeric_stats`, one
    aggregate pass for all columns."""
    from pyspark.sql import functions as F

    if not columns:
        return {}
    aggs = []
    for j, c in enumerate(columns):
        x = _col(c).cast("double")
        aggs += [
            F.avg(x).alias(f"mean{j}"),
            F.stddev_samp(x).alias(f"sd{j}"),
            F.count(x).alias(f"n{j}"),
            F.min(x).alias(f"min{j}"),
            F.max(x).alias(f"max{j}"),
            F.count_distinct(x).alias(f"distinct{j}"),
            F.sum(x.isNull().cast("long")).alias(f"missing{j}"),
        ]
    row = sdf.agg(*aggs).first()
    assert row is not None

    def opt(v: Any) -> float | None:
        return None if v is None else float(v)

    out = {}
    for j, c in enumerate(columns):
        n = int(row[f"n{j}"])
        out[c] = {
            "mean": opt(row[f"mean{j}"]) if n else None,
            "sd": opt(row[f"sd{j}"]) if n > 1 else None,
            "min": opt(row[f"min{j}"]) if n else None,
            "max": opt(row[f"max{j}"]) if n else None,
            "distinct": int(row[f"distinct{j}"]),
            "missing": int(row[f"missing{j}"] or 0),
        }
    return out


def _category_text(sdf: DataFrame, column: str) -> Column:
    from pyspark.sql import functions as F

    from sdckit.spark.io import text_column

    return F.when(_col(column).isNull(), F.lit(MISSING)).otherwise(text_column(sdf, column))


def _stacked(sdf: DataFrame, columns: Sequence[str], side: str) -> DataFrame:
    """One row (column, category text, side) per record and column."""
    from pyspark.sql import functions as F

    cells = F.array(
        *[F.struct(F.lit(c).alias("c"), _category_text(sdf, c).alias("v")) for c in columns]
    )
    return sdf.select(F.explode(cells).alias("s")).select("s.c", "s.v", F.lit(side).alias("side"))


def column_changes_spark(
    before: DataFrame, after: DataFrame, columns: Sequence[str], top: int = 20
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """:func:`sdckit.evaluation.masking_summary.column_changes` of two Spark tables (the same
    rows: a mask job keeps every record). The category counts of all non-numeric columns,
    before and after, come from one group-by; their top changes and distinct counts from two
    passes over it."""
    from pyspark import StorageLevel
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from sdckit.evaluation.masking_summary import categorical_change_rows, numeric_change_row

    numeric = _numeric_columns(before, after, columns)
    stats_b, stats_a = _numeric_stats(before, numeric), _numeric_stats(after, numeric)
    other = [c for c in columns if c not in numeric]
    best: dict[str, list[Any]] = {c: [] for c in other}
    facts: dict[str, Any] = {}
    if other:
        counts = (
            _stacked(before, other, "b")
            .unionByName(_stacked(after, other, "a"))
            .groupBy("c", "v")
            .agg(
                F.sum((F.col("side") == "b").cast("long")).alias("b"),
                F.sum((F.col("side") == "a").cast("long")).alias("a"),
            )
            .persist(StorageLevel.MEMORY_AND_DISK)
        )
        try:
            # the local order: largest absolute change first, ties by category text (Spark
            # orders strings by code point, as Python does)
            order = Window.partitionBy("c").orderBy(
                F.abs(F.col("a") - F.col("b")).desc(), F.col("v").asc()
            )
            ranked_counts = counts.withColumn("r", F.row_number().over(order))
            for r in ranked_counts.where(F.col("r") <= int(top)).collect():
                best[r["c"]].append(r)
            present = F.col("v") != MISSING
            for r in (
                counts.groupBy("c")
                .agg(
                    F.sum((present & (F.col("b") > 0)).cast("long")).alias("db"),
                    F.sum((present & (F.col("a") > 0)).cast("long")).alias("da"),
                    F.max(F.when(~present, F.col("b"))).alias("mb"),
                    F.max(F.when(~present, F.col("a"))).alias("ma"),
                )
                .collect()
            ):
                facts[r["c"]] = r
        finally:
            counts.unpersist()
    rows, categories = [], []
    for c in columns:
        if c in numeric:
            rows.append(numeric_change_row(c, stats_b[c], stats_a[c]))
            continue
        f = facts[c]
        counts_b = {str(r["v"]): int(r["b"]) for r in best[c] if r["b"]}
        counts_a = {str(r["v"]): int(r["a"]) for r in best[c] if r["a"]}
        if f["mb"]:
            counts_b[MISSING] = int(f["mb"])
        if f["ma"]:
            counts_a[MISSING] = int(f["ma"])
        row, cats = categorical_change_rows(
            c, counts_b, counts_a, top, distinct=(int(f["db"] or 0), int(f["da"] or 0))
        )
        rows.append(row)
        categories += cats
    return rows, categories


def _pairs(before: DataFrame, after: DataFrame, cols: Sequence[str]) -> DataFrame:
    """The records of ``after`` with their ``before`` values (``x0..``, ``y0..``), matched by
    row, and whether they are complete (finite in every column, before and after)."""
    from pyspark.sql import functions as F

    x = [_col(c).cast("double").alias(f"x{j}") for j, c in enumerate(cols)]
    y = [_col(c).cast("double").alias(f"y{j}") for j, c in enumerate(cols)]
    joined = after.select(ROW, *y).join(before.select(ROW, *x), on=ROW, how="left")
    complete = F.lit(True)
    for j in range(len(cols)):
        for v in (F.col(f"x{j}"), F.col(f"y{j}")):
            complete = complete & v.isNotNull() & ~F.isnan(v - v)
    return joined.withColumn("complete", complete)


def numeric_evaluation_spark(
    before: DataFrame,
    after: DataFrame,
    columns: Sequence[str],
    linkage_records: int = 10_000,
    seed: int | None = 0,
) -> dict[str, Any]:
    """:func:`sdckit.evaluation.masking_summary.numeric_evaluation` of two Spark tables with
    :data:`~sdckit.spark.frame.ROW` (see the module docstring for what is exact and what is
    sampled)."""
    from pyspark.sql import functions as F

    from sdckit.evaluation.masking_summary import numeric_evaluation
    from sdckit.risk.linkage import distance_linkage

    cols = _numeric_columns(before, after, columns)
    if not cols:
        return {"columns": [], "note": "no masked column is numeric before and after"}
    pairs = _pairs(before, after, cols)
    counts = pairs.agg(
        F.count(F.lit(1)).alias("all"), F.sum(F.col("complete").cast("long")).alias("n")
    ).first()
    assert counts is not None
    n = int(counts["n"] or 0)
    incomplete = int(counts["all"]) - n
    complete = pairs.where("complete")
    if n <= linkage_records:
        local = _pandas(complete.orderBy(ROW))
        orig = pd.DataFrame({c: local[f"x{j}"].to_numpy() for j, c in enumerate(cols)})
        prot = pd.DataFrame({c: local[f"y{j}"].to_numpy() for j, c in enumerate(cols)})
        exact = numeric_evaluation(orig, prot, cols, linkage_records=linkage_records, seed=seed)
        exact["records_left_out_missing"] = incomplete
        return exact
    out: dict[str, Any] = {
        "columns": cols,
        "records": n,
        "records_left_out_missing": incomplete,
        "dbrl_intruder_records": int(linkage_records),
    }
    out.update(_aggregate_measures(complete, cols, n))
    # DBRL on a seeded simple random sample: the positions (in row order) the local
    # evaluation draws as its intruders
    rng = np.random.default_rng(seed)
    picks = np.sort(rng.choice(n, size=int(linkage_records), replace=False))
    positions = ranked(complete, [ROW])
    spark = complete.sparkSession
    chosen = spark.createDataFrame(pd.DataFrame({"__sdc_rank": picks.astype(np.int64)}))
    sample = _pandas(positions.join(F.broadcast(chosen), on="__sdc_rank").orderBy(ROW))
    orig = pd.DataFrame({c: sample[f"x{j}"].to_numpy() for j, c in enumerate(cols)})
    prot = pd.DataFrame({c: sample[f"y{j}"].to_numpy() for j, c in enumerate(cols)})
    try:
        out["dbrl"] = float(distance_linkage(orig, prot, cols).dbrl)
    except Exception as exc:  # an SdcInputError: reported as the local evaluation does
        from sdckit.errors import SdcInputError

        if not isinstance(exc, SdcInputError):
            raise
        out["dbrl"] = None
        out["dbrl_unavailable"] = str(exc)
    out["dbrl_sample"] = {
        "records": int(linkage_records),
        "of": n,
        "seed": seed,
        "note": "distance-based record linkage needs every record's nearest neighbour: "
        "estimated on a simple random sample of the complete records, each sampled original "
        "record linked to the nearest masked record of the same sample (a larger share than "
        "linking against the whole file); IL1s and IL = 100 SSE/SST are exact over all records",
    }
    return out


def _aggregate_measures(complete: DataFrame, cols: Sequence[str], n: int) -> dict[str, Any]:
    """IL1s and IL = 100 SSE/SST over all complete records, as aggregates.

    IL1s (Yancey, Winkler & Creecy 2002; :func:`sdckit.utility.numeric.il1s`):
    ``1/(n p) sum_j sum_i |x_ij - x'_ij| / (sqrt 2 S_j)``, ``S_j`` the sample sd of the
    original. IL = 100 SSE/SST on z-scores (Domingo-Ferrer & Mateo-Sanz 2002;
    :func:`sdckit.masking.microaggregation.information_loss`): with ``z = (x - mean) / S``,
    ``SSE = sum_j sum_i (x_ij - x'_ij)^2 / S_j^2`` and ``SST = sum_j sum_i z_ij^2 =
    p (n - 1)`` (the z-scores of each column sum to zero and their squares to ``n - 1``).
    """
    from pyspark.sql import functions as F

    aggs = []
    for j in range(len(cols)):
        x, y = F.col(f"x{j}"), F.col(f"y{j}")
        aggs += [
            F.stddev_samp(x).alias(f"s{j}"),
            F.sum(F.abs(x - y)).alias(f"a{j}"),
            F.sum((x - y) * (x - y)).alias(f"q{j}"),
            F.first(x).alias(f"v{j}"),
        ]
    row = complete.agg(*aggs).first()
    assert row is not None
    sd = [float(row[f"s{j}"] or 0.0) for j in range(len(cols))]
    out: dict[str, Any] = {}
    flat = [j for j, s in enumerate(sd) if not s > 0]
    if flat:
        c, v = cols[flat[0]], float(row[f"v{flat[0]}"])
        out["il1s"] = None
        out["il1s_unavailable"] = (
            f"IL1s: column {c!r} of the original data has zero variance (every value is {v!r}), "
            "so the standardized distance is undefined"
        )
        out["il_sse_sst"] = None
        out["il_sse_sst_unavailable"] = (
            f"information_loss: column {c!r} has zero variance (it is constant) and cannot be "
            "standardized; leave it out of the columns"
        )
        return out
    p = len(cols)
    total = sum(float(row[f"a{j}"]) / (math.sqrt(2.0) * sd[j]) for j in range(p))
    out["il1s"] = total / (n * p)
    sse = sum(float(row[f"q{j}"]) / (sd[j] * sd[j]) for j in range(p))
    out["il_sse_sst"] = 100.0 * sse / (p * (n - 1))
    return out


def original_records_spark(
    before: DataFrame, after: DataFrame, columns: Sequence[str], threshold: float
) -> dict[str, Any]:
    """:func:`sdckit.risk.original_records.original_records` on Spark: the records of
    ``after`` equal to some record of ``before`` on ``columns``, compared by their canonical
    text (:func:`sdckit.spark.io.text_column`, as :func:`~sdckit.core.encoding.as_text`: a
    number equals the same number of another type, missing equals missing), as a left semi
    join of the released keys on the distinct input keys. Returns the local function's
    JSON document."""
    from pyspark.sql import functions as F

    from sdckit.risk.original_records import OriginalRecords
    from sdckit.spark.io import text_column

    cols = [c for c in columns if c in before.columns and c != ROW]
    n = after.count()
    if not cols or n == 0:
        return OriginalRecords(n, 0, tuple(cols), threshold).to_dict()
    names = [f"k{i}" for i in range(len(cols))]
    none = "\x00<missing>"  # missing values as one key (text_column gives null or "")

    def keys(sdf: DataFrame) -> DataFrame:
        return sdf.select(
            *[
                F.coalesce(text_column(sdf, c), F.lit(none)).alias(k)
                for c, k in zip(cols, names, strict=True)
            ]
        )

    equal = keys(after).join(keys(before).distinct(), on=names, how="left_semi").count()
    return OriginalRecords(n, int(equal), tuple(cols), threshold).to_dict()
