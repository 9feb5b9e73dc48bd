"""The base frequency set on Spark: encode with broadcast maps, count with one group-by.

The local engine's one row-scanning step (:func:`sdckit.core.frequency.frequency_set`) split
in two: Spark turns every quasi-identifier and sensitive attribute into its canonical text
(:func:`sdckit.spark.io.text_column`), the driver assigns the codes to the *distinct* texts
exactly as the local engine does (hierarchy leaf indices, sorted dictionary codes, the
sensitive attribute's order), Spark joins those small maps back (broadcast joins: no shuffle
of the data) and counts the distinct code combinations -- QIs and sensitive values together,
with summed weights -- in one group-by. The driver then groups those counted items with
:func:`~sdckit.core.frequency.build_frequency_set` (``multiplicities``), so the classes, their
order, the histograms and everything computed from them are those of the local engine.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

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

#: Most classes (distinct QI and sensitive combinations) collected to the driver by default:
#: about 60 bytes each with a few QIs, so some 3 GB at the limit.
MAX_CLASSES = 50_000_000


def distinct_values(sdf: DataFrame, name: str) -> pd.Series:
    """The distinct values of column ``name`` as a pandas Series (what hierarchy builders
    read), in the column's own type."""
    from sdckit.spark.io import to_pandas

    return to_pandas(sdf.select(f"`{name}`").distinct())[name]


def _distinct_texts(sdf: DataFrame, names: Sequence[str]) -> dict[str, np.ndarray]:
    """Distinct canonical texts of every column in ``names`` (one pass over the data)."""
    from pyspark.sql import functions as F

    from sdckit.spark.io import text_column

    if not names:
        return {}
    row = sdf.agg(
        *[F.collect_set(text_column(sdf, c)).alias(f"c{i}") for i, c in enumerate(names)]
    ).collect()[0]
    return {c: np.asarray(sorted(row[f"c{i}"]), dtype=object) for i, c in enumerate(names)}


@dataclass(frozen=True)
class SparkEncoding:
    """What :func:`encode_spark` produced: the data with integer code columns ``__q0``,
    ``__q1``, ... (QIs) and ``__s0``, ... (sensitive attributes), and the driver-side
    QI descriptions and sensitive encodings (codes here index the *distinct texts*)."""

    data: DataFrame
    quasi_identifiers: tuple[QuasiIdentifier, ...]
    sensitive: dict[str, EncodedColumn]
    qi_columns: tuple[str, ...]
    sensitive_columns: tuple[str, ...]


def _attach_codes(sdf: DataFrame, name: str, texts: np.ndarray, codes: np.ndarray, out: str):
    """Join the (text -> code) map of column ``name`` onto ``sdf`` as integer column ``out``
    (a broadcast join: the map goes to every executor, the data is not shuffled)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from sdckit.spark.io import text_column

    spark = sdf.sparkSession
    schema = T.StructType(
        [T.StructField("__text", T.StringType(), False), T.StructField(out, T.IntegerType(), False)]
    )
    mapping = spark.createDataFrame(
        pd.DataFrame({"__text": texts.astype(str), out: codes.astype(np.int32)}), schema=schema
    )
    keyed = sdf.withColumn("__text", text_column(sdf, name))
    return keyed.join(F.broadcast(mapping), on="__text", how="inner").drop("__text")


def encode_spark(
    sdf: DataFrame,
    quasi_identifiers: Sequence[str],
    sensitive: Sequence[str] = (),
    hierarchies: Mapping[str, Hierarchy] | None = None,
    orders: Mapping[str, Sequence[str]] | None = None,
) -> SparkEncoding:
    """Encode QIs and sensitive attributes of ``sdf`` with the local engine's codes.

    QIs with a hierarchy get leaf indices (a value missing from the hierarchy is the local
    engine's DataError, naming it); QIs without one get the rank of their text among the
    sorted distinct texts; sensitive attributes follow :func:`encode_ordered` (the declared
    order, else numeric when every value is a number, else text order).
    """
    hierarchies = dict(hierarchies or {})
    names = [*quasi_identifiers, *[s for s in sensitive if s not in quasi_identifiers]]
    missing = [c for c in [*quasi_identifiers, *sensitive] if c not in sdf.columns]
    if missing:
        raise DataError(
            f"column(s) {', '.join(map(repr, missing))} not found; available columns: "
            f"{', '.join(map(str, sdf.columns))}"
        )
    texts = _distinct_texts(sdf, names)
    out = sdf
    qis: list[QuasiIdentifier] = []
    qi_cols: list[str] = []
    for i, name in enumerate(quasi_identifiers):
        distinct = texts[name]
        h = hierarchies.get(name)
        if h is not None:
            codes = h.leaf_index(pd.Series(distinct, dtype=object), column=name)
            values = np.asarray(h.leaves, dtype=object)
        else:
            codes = np.arange(len(distinct))  # the texts are sorted: rank = position
            values = distinct
        qis.append(QuasiIdentifier(name, np.zeros(0, dtype=np.int32), values, h))
        col = f"__q{i}"
        out = _attach_codes(out, name, distinct, np.asarray(codes), col)
        qi_cols.append(col)
    sens: dict[str, EncodedColumn] = {}
    sens_cols: list[str] = []
    for j, name in enumerate(sensitive):
        distinct = texts[name]
        enc = encode_ordered(pd.Series(distinct, dtype=object), name, (orders or {}).get(name))
        sens[name] = enc
        col = f"__s{j}"
        out = _attach_codes(out, name, distinct, enc.codes, col)
        sens_cols.append(col)
    return SparkEncoding(out, tuple(qis), sens, tuple(qi_cols), tuple(sens_cols))


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
    additions). When more than ``max_classes`` distinct combinations would be collected, a
    DataError says how many and how to proceed instead of running out of memory.
    """

    if weights is not None:
        if weights not in sdf.columns:
            raise DataError(
                f"weight column {weights!r} not found; available columns: "
                f"{', '.join(map(str, sdf.columns))}"
            )
        _check_weights(sdf, weights)
    enc = encode_spark(sdf, quasi_identifiers, sensitive, hierarchies, orders)
    return count_classes(enc, weights, max_classes)


def count_classes(
    enc: SparkEncoding, weights: str | None = None, max_classes: int = MAX_CLASSES
) -> FrequencySet:
    """The frequency set of encoded data (:func:`encode_spark`): one group-by over the code
    columns, collected to the driver (see :func:`base_frequency_set`)."""
    from pyspark.sql import functions as F

    quasi_identifiers = [q.name for q in enc.quasi_identifiers]
    sensitive = list(enc.sensitive)
    group_cols = [*enc.qi_columns, *enc.sensitive_columns]
    aggs = [F.count(F.lit(1)).alias("__n")]
    if weights is not None:
        aggs.append(F.sum(F.col(f"`{weights}`").cast("double")).alias("__w"))
    grouped = enc.data.groupBy(*group_cols).agg(*aggs)
    from sdckit.spark.io import to_pandas

    items = to_pandas(grouped.limit(max_classes + 1))
    if len(items) > max_classes:
        size = grouped.count()
        raise DataError(
            f"the base frequency set has {size:,} distinct combinations of "
            f"{', '.join(quasi_identifiers)}"
            + (f" and {', '.join(sensitive)}" if sensitive else "")
            + f", more than the driver takes ({max_classes:,}); use fewer quasi-identifiers, "
            "start from coarser values (recode a QI first, e.g. with a mask job's "
            "global_recoding), or raise the limit (spark: {conf: {spark.driver.memory: ...}} "
            "and max_classes) if the driver has the memory"
        )
    mult = items["__n"].to_numpy(dtype=np.int64)
    qis = [
        QuasiIdentifier(q.name, items[c].to_numpy(dtype=np.int32), q.values, q.hierarchy)
        for q, c in zip(enc.quasi_identifiers, enc.qi_columns, strict=True)
    ]
    sens = {
        name: EncodedColumn(name, items[c].to_numpy(dtype=np.int32), enc.sensitive[name].values)
        for name, c in zip(enc.sensitive, enc.sensitive_columns, strict=True)
    }
    w = items["__w"].to_numpy(dtype=float) if weights is not None else None
    return build_frequency_set(qis, None, sens, w, multiplicities=mult)
