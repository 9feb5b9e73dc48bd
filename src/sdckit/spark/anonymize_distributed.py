"""``sdckit anonymize`` on Spark with the classes kept on the cluster (near-unique keys).

When the distinct combinations are more than the driver takes
(:func:`sdckit.spark.classes.driver_classes`), :func:`sdckit.spark.anonymize.anonymize_spark`
hands over to :func:`search_distributed` and :func:`release_distributed`:

1. The optimal search (:class:`sdckit.spark.search.DistributedLatticeSearch`) decides each
   node on Spark -- the same order, pruning, tie rule and optimum as the local engine --
   bringing only per-node figures to the driver. The models are prepared on the whole data's
   sensitive distributions (:meth:`~sdckit.spark.classes.ClassTable.overall`).
2. At the optimum the metrics are summed over shards of the base table, and the suppressed
   classes (their codes at the chosen levels) stay on Spark as a DataFrame.
3. The release is applied on Spark: each QI's text is mapped to its label and code at the
   chosen level (broadcast joins of the small per-value maps), and the records of the
   suppressed classes get ``*`` (a join with the suppressed classes).
4. The written release is recounted on Spark and re-verified (:func:`verify_distributed`):
   records, suppressed records and every model on the recount, with the recount's classes
   on Spark too when they are many.

Only models that judge each class by itself are decided this way (``class_local`` and not
``is_global``); the others are refused with the fix.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sdckit.core.release import SUPPRESSED
from sdckit.errors import VerificationError
from sdckit.spark.anonymize import star_classes

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame

    from sdckit.algorithms.optimal import OptimalSolution
    from sdckit.core.frequency import FrequencySet
    from sdckit.models.base import PrivacyModel
    from sdckit.spark.classes import ClassTable
    from sdckit.utility.generalization import MetricSpec


def check_distributable(models: Sequence[PrivacyModel], chosen: Mapping[str, Any]) -> None:
    """DataError naming the models that need every class at once (``is_global``, or not
    ``class_local``), which classes kept on Spark cannot decide."""
    from sdckit.spark.analyze import refuse_distributed

    whole = [m.name for m in models if m.is_global or not m.class_local]
    if whole:
        raise refuse_distributed(
            f"model(s) {', '.join(whole)} (judging a class against the others or the whole "
            "release)",
            chosen,
            "drop them or recode a quasi-identifier first",
        )


def search_distributed(
    table: ClassTable,
    chosen: Mapping[str, Any],
    models: Sequence[PrivacyModel],
    limit: float,
    spec: MetricSpec,
    progress: Callable[[int, int], Any] | None = None,
) -> tuple[OptimalSolution, DataFrame]:
    """The optimum over the class table (module docstring, steps 1-2): the solution, whose
    ``frequency_set``/``violating`` are ``None`` (the classes are on Spark), and the
    suppressed classes at its levels as a Spark DataFrame of codes ``g0..``."""
    from sdckit.algorithms.optimal import (
        OptimalSolution,
        run_search,
        solution_details,
        suppression_budget,
    )
    from sdckit.models.base import check_reachable
    from sdckit.spark.search import DistributedLatticeSearch, node_figures
    from sdckit.utility.generalization import METRICS

    check_distributable(models, chosen)
    overall = table.overall()
    for m in models:
        m.prepare(overall)
    check_reachable(models, overall, "optimal", limit)
    budget = suppression_budget(limit, table.n_records)
    search = DistributedLatticeSearch(
        table.skeleton(),
        models,
        budget,
        spec,
        progress,
        table=table,
        driver_limit=int(chosen["driver_classes"]),
    )
    try:
        best = run_search(search, models, limit)
    finally:
        search.close()
    levels = tuple(int(x) for x in best.levels)
    local = list(search.local_models)
    cum, _, partials = node_figures(table, levels, local, search.metrics, tuple(METRICS))
    values = search.metrics.values_from(partials, levels, tuple(METRICS))
    details = solution_details(search, best, values)
    solution = OptimalSolution(
        levels=levels,
        frequency_set=None,
        violating=None,
        transformation=dict(zip(table.names, levels, strict=True)),
        nodes_checked=len(search.checked),
        details=details,
        n_suppressed=int(cum[-1]) if len(cum) else 0,
    )
    return solution, suppressed_classes(table, levels, local)


def suppressed_classes(
    table: ClassTable, levels: tuple[int, ...], models: Sequence[PrivacyModel]
) -> DataFrame:
    """The classes at ``levels`` that ``models`` flag, as rows of their codes ``g0..`` on
    Spark (computed by the shards, never collected)."""
    m = len(table.quasi_identifiers)
    schema = ", ".join(f"g{i} int" for i in range(m))

    def work(_frag: FrequencySet, fs: FrequencySet) -> pd.DataFrame:
        violating = np.zeros(fs.n_classes, dtype=bool)
        for md in models:
            violating |= np.asarray(md.evaluate(fs).violating, dtype=bool)
        keys = fs.keys[violating]
        return pd.DataFrame({f"g{i}": keys[:, i].astype(np.int32) for i in range(m)})

    return table.shard_rows(levels, work, schema)


def release_distributed(
    data: DataFrame,
    columns: Sequence[str],
    table: ClassTable,
    levels: Sequence[int],
    suppressed: DataFrame,
) -> DataFrame:
    """The released rows on Spark (module docstring, step 3): ``data`` with each QI's label
    at ``levels``, ``*`` in every QI for the records of the ``suppressed`` classes; the
    output keeps ``columns`` in their order."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from sdckit.spark.io import text_column

    spark = data.sparkSession
    keyed = data
    for i, q in enumerate(table.quasi_identifiers):
        texts, codes = table.qi_texts[i]
        level = int(levels[i])
        at_level = q.step(0, level)[codes]
        labels = np.asarray(q.labels(level), dtype=object)[at_level].astype(str)
        schema = T.StructType(
            [
                T.StructField(f"__t{i}", T.StringType(), False),
                T.StructField(f"g{i}", T.IntegerType(), False),
                T.StructField(f"__l{i}", T.StringType(), False),
            ]
        )
        mapping = spark.createDataFrame(
            pd.DataFrame(
                {f"__t{i}": texts.astype(str), f"g{i}": at_level.astype(np.int32),
                 f"__l{i}": labels}
            ),
            schema=schema,
        )  # fmt: skip
        keyed = keyed.withColumn(f"__t{i}", text_column(data, q.name)).join(
            F.broadcast(mapping), on=f"__t{i}", how="inner"
        )
    m = len(table.quasi_identifiers)
    hit = suppressed.withColumn("__s", F.lit(True))
    out = keyed.join(hit, on=[f"g{i}" for i in range(m)], how="left")
    names = {q.name: i for i, q in enumerate(table.quasi_identifiers)}
    return out.select(
        *[
            F.when(F.col("__s").isNotNull(), F.lit(SUPPRESSED))
            .otherwise(F.col(f"__l{names[c]}"))
            .alias(c)
            if c in names
            else F.col(f"`{c}`")
            for c in columns
        ]
    )


def verify_distributed(
    written: DataFrame,
    table: ClassTable,
    solution: OptimalSolution,
    models: Sequence[PrivacyModel],
    sensitive: Sequence[str],
    orders: Mapping[str, Sequence[str]],
    budget: int,
    risk: bool = True,
) -> tuple[list[str], dict[str, Any]]:
    """Recount the written release on Spark and re-check it (module docstring, step 4);
    return the satisfied models' names and the recount's risk summary (empty unless
    ``risk``). Raises :class:`VerificationError` on any failure."""
    from pyspark.sql import functions as F

    from sdckit.risk.analyze import analyze_frequency_set
    from sdckit.spark.analyze import analyze_distributed
    from sdckit.spark.anonymize import check_suppressed, star_is_a_class
    from sdckit.spark.classes import ClassTable
    from sdckit.spark.frequency import count_classes, frequency_set_of_counts

    names = list(table.names)
    star_rows = written.filter(
        functools.reduce(operator.and_, [F.col(f"`{n}`") == SUPPRESSED for n in names])
    )
    star_is_class = star_is_a_class(table.quasi_identifiers, solution.levels)
    if not star_is_class:
        check_suppressed(int(star_rows.count()), solution, budget)
    recount, chosen = count_classes(written, names, sensitive, orders=orders)
    if isinstance(recount, ClassTable):
        try:
            n_records = recount.n_records
            violations = _violations_on_spark(recount, models, star_is_class)
            risk_after: dict[str, Any] = {}
            if risk:
                risk_after = analyze_distributed(
                    recount, chosen, measures=[], missing="category"
                ).summary
        finally:
            recount.unpersist()
    else:
        fs = frequency_set_of_counts(recount, names, sensitive, orders=orders)
        n_records = fs.n_records
        violations = _violations_here(fs, models, star_is_class)
        risk_after = {}
        if risk:
            risk_after = analyze_frequency_set(fs, measures=[], missing="category").summary
            risk_after["frequency_set"] = chosen
    if n_records != table.n_records:
        raise VerificationError(
            f"the written release has {n_records:,} records, the input "
            f"{table.n_records:,}; nothing was written. This is a bug in sdckit."
        )
    for m, bad in zip(models, violations, strict=True):
        if bad:
            raise VerificationError(
                f"the written release does not satisfy {m.name} ({bad} violating classes). "
                "This is a bug in sdckit; nothing was written."
            )
    return [m.name for m in models], risk_after


def _violations_here(
    fs: FrequencySet, models: Sequence[PrivacyModel], star_is_class: bool
) -> list[int]:
    """Violating classes per model on a recount held on the driver."""
    for m in models:
        m.prepare(fs)
    kept = fs if star_is_class else fs.select(~star_classes(fs))
    return [int(np.count_nonzero(m.evaluate(kept).violating)) for m in models]


def _violations_on_spark(
    recount: ClassTable, models: Sequence[PrivacyModel], star_is_class: bool
) -> list[int]:
    """Violating classes per model on a recount kept on Spark (summed over shards)."""
    overall = recount.overall()
    for m in models:
        m.prepare(overall)

    def work(_frag: FrequencySet, fs: FrequencySet) -> list[int]:
        kept = fs if star_is_class else fs.select(~star_classes(fs))
        return [int(np.count_nonzero(m.evaluate(kept).violating)) for m in models]

    parts = recount.shards(recount.levels, work)
    return [int(x) for x in np.sum(parts, axis=0)] if parts else [0] * len(models)
