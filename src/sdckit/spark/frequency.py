"""The base frequency set on Spark: one group-by over the canonical texts, codes on the driver.

The local engine's one row-scanning step (:func:`sdckit.core.frequency.frequency_set`) split
in two: Spark groups the rows by the canonical text (:func:`sdckit.spark.io.text_column`) of
every quasi-identifier and sensitive attribute -- one aggregation, summing the weights -- and
collects the distinct combinations with their counts; the driver assigns the codes to the
*distinct* texts exactly as the local engine does (hierarchy leaf indices, sorted dictionary
codes, the sensitive attribute's order) and groups the counted combinations with
:func:`~sdckit.core.frequency.build_frequency_set` (``multiplicities``). So the classes, their
order, the histograms and everything computed from them are the local engine's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sdckit.core.encoding import EncodedColumn
from sdckit.core.frequency import (
    FrequencySet,
    QuasiIdentifier,
    build_frequency_set,
    encode_ordered,
)
from sdckit.errors import DataError

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame

    from sdckit.core.hierarchy import Hierarchy
    from sdckit.spark.classes import ClassTable

#: Most distinct combinations collected to the driver by default (about 100 bytes each with
#: a few short texts, so some 5 GB at the limit).
MAX_CLASSES = 50_000_000


def distinct_values(sdf: DataFrame, name: str) -> pd.Series:
    """The distinct values of column ``name`` as a pandas Series (what hierarchy builders
    read), in the column's own type."""
    from sdckit.spark.io import to_pandas

    return to_pandas(sdf.select(f"`{name}`").distinct())[name]


def _check_weights(sdf: DataFrame, weight: str) -> None:
    """DataError naming the column and a bad value unless every weight is a positive number
    (the local :func:`~sdckit.core.frequency.numeric_weights` rule)."""
    from pyspark.sql import functions as F

    w = F.col(f"`{weight}`").cast("double")
    bad = w.isNull() | F.isnan(w) | (w <= 0) | (F.abs(w) == float("inf"))
    first = sdf.filter(bad).select(F.col(f"`{weight}`")).limit(1).collect()
    if first:
        raise DataError(
            f"weight column {weight!r} must hold positive numbers, but it has "
            f"{first[0][0]!r}; fix or drop those rows, or choose another weight column"
        )


@dataclass(frozen=True)
class CountedTexts:
    """The distinct combinations of the canonical texts of ``columns`` with their record
    counts (``counts``) and summed weights (``weights``), collected from Spark; ``texts[c]``
    holds column ``c``'s text per combination."""

    columns: tuple[str, ...]
    texts: dict[str, np.ndarray]
    counts: np.ndarray
    weights: np.ndarray | None

    def codes(self, column: str, distinct: np.ndarray, codes: np.ndarray) -> np.ndarray:
        """Per combination, the code of its text in ``column`` (``codes[i]`` is the code of
        the sorted ``distinct[i]``)."""
        return codes[np.searchsorted(distinct, self.texts[column])]


def group_texts(sdf: DataFrame, columns: Sequence[str], weights: str | None = None) -> DataFrame:
    """The Spark group-by of the canonical texts of ``columns`` (``c0..``), with the records
    (``__n``) and summed ``weights`` (``__w``) of each combination; a column that is missing
    or a bad weight is a DataError naming it."""
    from pyspark.sql import functions as F

    from sdckit.spark.io import text_column

    missing = [c for c in columns if c not in sdf.columns]
    if weights is not None and weights not in sdf.columns:
        missing.append(weights)
    if missing:
        raise DataError(
            f"column(s) {', '.join(map(repr, missing))} not found; available columns: "
            f"{', '.join(map(str, sdf.columns))}"
        )
    if weights is not None:
        _check_weights(sdf, weights)
    keys = [text_column(sdf, c).alias(f"c{i}") for i, c in enumerate(columns)]
    aggs = [F.count(F.lit(1)).alias("__n")]
    if weights is not None:
        aggs.append(F.sum(F.col(f"`{weights}`").cast("double")).alias("__w"))
    return sdf.groupBy(*keys).agg(*aggs)


def counted_of(items: pd.DataFrame, columns: Sequence[str], weighted: bool) -> CountedTexts:
    """:class:`CountedTexts` of the collected group-by ``items`` (:func:`group_texts`)."""
    texts = {c: items[f"c{i}"].to_numpy(dtype=object) for i, c in enumerate(columns)}
    w = items["__w"].to_numpy(dtype=float) if weighted else None
    return CountedTexts(tuple(columns), texts, items["__n"].to_numpy(dtype=np.int64), w)


def count_classes(
    sdf: DataFrame,
    quasi_identifiers: Sequence[str],
    sensitive: Sequence[str] = (),
    hierarchies: Mapping[str, Hierarchy] | None = None,
    weights: str | None = None,
    orders: Mapping[str, Sequence[str]] | None = None,
    driver_limit: int | None = None,
) -> tuple[CountedTexts | ClassTable, dict[str, Any]]:
    """Count the distinct combinations of ``quasi_identifiers`` and ``sensitive`` on Spark
    and choose where the classes live: up to ``driver_limit`` combinations
    (:func:`sdckit.spark.classes.driver_classes` by default) they are collected
    (:class:`CountedTexts`, the fast path), beyond it they stay on Spark
    (:class:`~sdckit.spark.classes.ClassTable`). Returns the counts and what was chosen,
    ``{"path": "driver" | "distributed", "classes": n, "driver_classes": limit}`` (the
    report states it)."""
    from sdckit.spark.classes import class_table, driver_classes
    from sdckit.spark.io import to_pandas

    columns = [*quasi_identifiers, *[s for s in sensitive if s not in quasi_identifiers]]
    grouped = group_texts(sdf, columns, weights).persist()
    try:
        n = int(grouped.count())
        limit = driver_classes(sdf.sparkSession) if driver_limit is None else driver_limit
        chosen = {
            "path": "driver" if n <= limit else "distributed",
            "classes": n,
            "driver_classes": limit,
        }
        if n <= limit:
            return counted_of(to_pandas(grouped), columns, weights is not None), chosen
        table = class_table(
            grouped,
            n,
            quasi_identifiers,
            [s for s in sensitive if s not in quasi_identifiers],
            dict(hierarchies or {}),
            dict(orders or {}),
            weights is not None,
        )
        return table, chosen
    finally:
        grouped.unpersist()


def count_texts(
    sdf: DataFrame,
    columns: Sequence[str],
    weights: str | None = None,
    max_classes: int = MAX_CLASSES,
) -> CountedTexts:
    """Count the distinct combinations of the canonical texts of ``columns`` on Spark (one
    group-by) and collect them. More than ``max_classes`` combinations is a DataError saying
    how many and how to proceed, instead of running the driver out of memory."""
    from sdckit.spark.io import to_pandas

    grouped = group_texts(sdf, columns, weights)
    items = to_pandas(grouped.limit(max_classes + 1))
    if len(items) > max_classes:
        size = grouped.count()
        raise DataError(
            f"the base frequency set has {size:,} distinct combinations of "
            f"{', '.join(columns)}, more than the driver takes ({max_classes:,}); use fewer "
            "quasi-identifiers, start from coarser values (recode a QI first, e.g. with a mask "
            "job's global_recoding), or raise the limit (max_classes, with spark: {conf: "
            "{spark.driver.memory: ...}}) if the driver has the memory"
        )
    return counted_of(items, columns, weights is not None)


def quasi_identifier_codes(
    counted: CountedTexts, name: str, hierarchy: Hierarchy | None
) -> tuple[QuasiIdentifier, np.ndarray, np.ndarray]:
    """The QI ``name`` encoded as the local engine encodes it, from its distinct texts:
    ``(QuasiIdentifier with per-combination codes, sorted distinct texts, their codes)``.
    With a hierarchy the codes are leaf indices (a text missing from the hierarchy is the
    local engine's error, naming it); without, ranks among the sorted distinct texts."""
    from sdckit.spark.classes import qi_encoding

    distinct = np.unique(counted.texts[name])
    codes, values = qi_encoding(name, distinct, hierarchy)
    per_item = counted.codes(name, distinct, codes)
    return QuasiIdentifier(name, per_item, values, hierarchy), distinct, codes


def frequency_set_of_counts(
    counted: CountedTexts,
    quasi_identifiers: Sequence[str],
    sensitive: Sequence[str] = (),
    hierarchies: Mapping[str, Hierarchy] | None = None,
    orders: Mapping[str, Sequence[str]] | None = None,
) -> FrequencySet:
    """The frequency set of counted text combinations (see :func:`base_frequency_set`)."""
    hierarchies = dict(hierarchies or {})
    qis = [quasi_identifier_codes(counted, q, hierarchies.get(q))[0] for q in quasi_identifiers]
    sens: dict[str, EncodedColumn] = {}
    for name in sensitive:
        distinct = np.unique(counted.texts[name])
        enc = encode_ordered(pd.Series(distinct, dtype=object), name, (orders or {}).get(name))
        sens[name] = EncodedColumn(
            name, counted.codes(name, distinct, enc.codes.astype(np.int32)), enc.values
        )
    return build_frequency_set(qis, None, sens, counted.weights, multiplicities=counted.counts)


def base_frequency_set(
    sdf: DataFrame,
    quasi_identifiers: Sequence[str],
    sensitive: Sequence[str] = (),
    hierarchies: Mapping[str, Hierarchy] | None = None,
    weights: str | None = None,
    orders: Mapping[str, Sequence[str]] | None = None,
    max_classes: int = MAX_CLASSES,
) -> FrequencySet:
    """The ungeneralized frequency set of the Spark DataFrame ``sdf``, on the driver.

    Equal to :func:`sdckit.core.frequency.frequency_set` of the same data (same classes in
    the same order, same histograms; summed ``weights`` equal up to the order of floating
    additions). Counting reads the data once (:func:`count_texts`).
    """
    columns = [*quasi_identifiers, *[s for s in sensitive if s not in quasi_identifiers]]
    counted = count_texts(sdf, columns, weights, max_classes)
    return frequency_set_of_counts(counted, quasi_identifiers, sensitive, hierarchies, orders)
