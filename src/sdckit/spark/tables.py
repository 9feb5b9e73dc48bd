"""Tables on Spark: the records' pass of a table job as group-bys, the rest on the driver.

:meth:`sdckit.tables.table.Table.from_microdata` works in two steps: the aggregates of every
*leaf* cell from the records (:class:`~sdckit.tables.table.LeafAggregates`) and their roll-up
to all sub-totals and totals (:meth:`~sdckit.tables.table.Table.from_leaf_aggregates`). Here
Spark does the first step with the DataFrame API and built-in functions only:

1. one pass collects each dimension's distinct canonical texts
   (:func:`~sdckit.spark.io.text_column`), the number of records, how many response, shadow
   and cost values are not numbers and whether a rule value is negative;
2. the driver builds the dimensions from those texts exactly as the local engine does
   (:func:`~sdckit.tables.table.table_dimensions`, :meth:`Dimension.leaves_for
   <sdckit.tables.dimension.Dimension.leaves_for>`: the same DataError for a code a
   hierarchy lacks, naming the row where it first occurs) and maps every distinct text to its
   leaf node; Spark attaches the leaf nodes with broadcast joins (the small maps go to every
   executor, the data is not shuffled) and numbers the leaf cells as the table does;
3. ``groupBy(leaf cell)`` sums the values and costs and counts the records; the ``top_n``
   largest rule values of each leaf cell come from a ``row_number()`` window filtered to
   ``<= top_n``, which Spark turns into a per-partition group limit *before* the shuffle
   (only ``top_n`` rows per leaf cell and partition move); both are collected in one job.
   With a ``holding`` column one ``groupBy(leaf cell, holding)`` gives every holding's
   contributions per leaf cell instead. With a ``request`` column (the request rule) the same
   group-by also takes, per request code, the largest positive rule value of a record with
   that code (``max`` of a ``when``), which the driver reduces to the leaf cells.

The driver then collects these per-leaf-cell rows (far fewer than the records) and builds the
table with the local engine's code. Numbers are parsed by the local rules (a cell is a number
when :func:`pandas.to_numeric` reads it as a finite number: optional sign, digits with an
optional point and exponent, surrounding ASCII white space; Parquet numbers and booleans as
they are). Record counts, contributors and (without holdings) the largest contributions equal
the local engine's exactly; sums of floating-point values -- cell values, costs, a holding's
contributions -- may differ in the last bits because Spark adds in another order.

Errors name the row of the first bad record as the local engine does, counted in the order
Spark reads the input (a single file's: its line order); finding it takes one more pass,
only when there is an error.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sdckit.errors import DataError
from sdckit.tables.table import (
    LeafAggregates,
    Table,
    check_columns,
    check_request_codes,
    dimension_names,
    no_request_code,
    not_a_number,
    request_without_response,
    table_dimensions,
)

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, DataFrame

    from sdckit.core.hierarchy import Hierarchy
    from sdckit.tables.dimension import Dimension

__all__ = ["MAX_CONTRIBUTIONS", "spark_cell_keys", "spark_leaf_aggregates", "spark_table"]

#: Most (leaf cell, holding) contributions collected to the driver by default (about 40 bytes
#: each, some 2 GB at the limit).
MAX_CONTRIBUTIONS = 50_000_000

#: The texts :func:`pandas.to_numeric` reads as finite numbers (Java regex; ``try_cast`` alone
#: also takes ``1d``, ``1f``, hexadecimal floats and NUL padding, which pandas rejects).
NUMBER_PATTERN = (
    r"^[ \t\n\r\x0B\f]*[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?[ \t\n\r\x0B\f]*$"
)

_ROW_ID = "__rid"


def _to_pandas(sdf: DataFrame) -> pd.DataFrame:
    """``sdf`` collected to the driver (Arrow), without PySpark's pandas-version notice."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        warnings.simplefilter("ignore", DeprecationWarning)  # pandas' notices to PySpark
        return sdf.toPandas()


def _number(sdf: DataFrame, name: str) -> tuple[Column, Column]:
    """Column ``name`` as a double by the local engine's rules, and the flag of the values that
    are not finite numbers (never null)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    col = F.col(f"`{name}`")
    dtype = sdf.schema[name].dataType
    if isinstance(dtype, (T.NumericType, T.BooleanType)):
        d = col.cast("double")
        bad = d.isNull() | F.isnan(d) | (F.abs(d) == float("inf"))
    else:
        text = col if isinstance(dtype, T.StringType) else col.cast("string")
        d = text.try_cast("double")
        bad = (
            text.isNull()
            | ~text.rlike(NUMBER_PATTERN)
            | d.isNull()
            | F.isnan(d)
            | (F.abs(d) == float("inf"))
        )
    bad = F.coalesce(bad, F.lit(True))
    return F.when(~bad, d), bad


def _shown(sdf: DataFrame, name: str, value: Any) -> Any:
    """A collected cell as the local reader shows it: a missing CSV (text) cell is ``""``."""
    from pyspark.sql import types as T

    if value is None and isinstance(sdf.schema[name].dataType, T.StringType):
        return ""
    return value


#: ``monotonically_increasing_id()`` holds the partition in its upper 31 bits and the record's
#: position within the partition in its lower 33 (Spark's documented layout).
_POSITION_BITS = 33


def _by_partition_and(sdf: DataFrame, key: Column, value: Column | None = None) -> pd.DataFrame:
    """One pass over ``sdf``: per (input partition ``__p``, ``key``) the records ``__n``, the
    smallest row id ``__rid`` and, given ``value``, that record's value ``__v``. What
    :func:`_row_of` turns into row numbers; runs only to word an error."""
    from pyspark.sql import functions as F

    rid = F.monotonically_increasing_id()
    with_id = sdf.select(
        key.alias("__k"), rid.alias(_ROW_ID), *([value.alias("__v")] if value is not None else [])
    )
    aggs = [F.count(F.lit(1)).alias("__n"), F.min(_ROW_ID).alias(_ROW_ID)]
    if value is not None:
        aggs.append(F.min_by("__v", _ROW_ID).alias("__v"))
    part = F.shiftrightunsigned(F.col(_ROW_ID), _POSITION_BITS).alias("__p")
    rows = with_id.groupBy(part, "__k").agg(*aggs).collect()  # partitions x keys: few rows
    return pd.DataFrame(
        [r.asDict() for r in rows], columns=["__p", "__k", "__n", _ROW_ID, "__v"]
    ).astype({"__p": "int64", "__n": "int64", _ROW_ID: "int64"})


def _row_of(groups: pd.DataFrame, rid: int) -> int:
    """The 0-based row (in the order Spark reads the input: a single file's line order) of the
    record with row id ``rid``: the records of the partitions before its own plus its
    position in its partition."""
    part = rid >> _POSITION_BITS
    before = int(groups.loc[groups["__p"] < part, "__n"].sum())
    return before + (rid & ((1 << _POSITION_BITS) - 1))


def _first_bad_row(sdf: DataFrame, name: str, bad: Column) -> tuple[int, Any]:
    """The 0-based row of the first record flagged ``bad`` and its value of column ``name``
    (one pass; only to word an error)."""
    from pyspark.sql import functions as F

    groups = _by_partition_and(sdf, bad, F.col(f"`{name}`"))
    flagged = groups[groups["__k"].astype(bool)].sort_values(_ROW_ID)
    first = flagged.iloc[0]
    return _row_of(groups, int(first[_ROW_ID])), _shown(sdf, name, first["__v"])


def _unknown_code_error(sdf: DataFrame, dim: Dimension, unknown: Sequence[str]) -> DataError:
    """The local engine's error for the codes of ``dim`` its hierarchy lacks: the first one
    in row order, its row and all of them in order of first appearance (one pass)."""
    from pyspark.sql import functions as F

    from sdckit.spark.io import text_column

    text = text_column(sdf, dim.name)
    groups = _by_partition_and(sdf, F.when(text.isin(list(unknown)), text))
    firsts = (
        groups[groups["__k"].notna()]
        .groupby("__k", sort=False)[_ROW_ID]
        .min()
        .sort_values(kind="stable")
    )
    codes = [str(t) for t in firsts.index]
    return dim.unknown_category(codes[0], _row_of(groups, int(firsts.iloc[0])), codes, dim.name)


def _with_leaf_cells(sdf: DataFrame, dims: Sequence[Dimension], keep: Sequence[Column]):
    """``sdf``'s columns ``keep`` and ``__cell``, the leaf cell of every record (row-major over
    the dimensions' nodes, as :meth:`Table.cell_index <sdckit.tables.table.Table.cell_index>`),
    joined on with one broadcast (text -> leaf node) map per dimension. Every text of the data
    must be a category of its dimension (checked before)."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from sdckit.spark.io import text_column

    spark = sdf.sparkSession
    shape = [len(d) for d in dims]
    strides = [int(np.prod(shape[j + 1 :], dtype=np.int64)) for j in range(len(dims))]
    out = sdf.select(
        *keep, *[text_column(sdf, d.name).alias(f"__t{j}") for j, d in enumerate(dims)]
    )
    for j, d in enumerate(dims):
        schema = T.StructType(
            [
                T.StructField(f"__t{j}", T.StringType(), False),
                T.StructField(f"__n{j}", T.LongType(), False),
            ]
        )
        rows = [(str(text), int(node)) for text, node in d.leaf_of.items()]  # the categories
        mapping = spark.createDataFrame(rows, schema=schema)
        out = out.join(F.broadcast(mapping), on=f"__t{j}", how="inner").drop(f"__t{j}")
    cell = F.lit(0).cast("long")
    for j, stride in enumerate(strides):
        cell = cell + F.col(f"__n{j}") * F.lit(stride).cast("long")
    return out.withColumn("__cell", cell).drop(*[f"__n{j}" for j in range(len(dims))])


def spark_leaf_aggregates(
    sdf: DataFrame,
    dimensions: Sequence[str] | Mapping[str, Hierarchy | None],
    response: str | None = None,
    *,
    shadow: str | None = None,
    cost: str | None = None,
    holding: str | None = None,
    top_n: int = 2,
    request: str | None = None,
    request_codes: Sequence[str] = (),
    max_contributions: int = MAX_CONTRIBUTIONS,
    totals: Mapping[str, str] | None = None,
) -> LeafAggregates:
    """The per-leaf-cell aggregates of the Spark DataFrame ``sdf`` on the driver (parameters
    and errors as :func:`sdckit.tables.table.leaf_aggregates`; module docstring for how).

    With ``holding`` the driver receives one row per (leaf cell, holding) pair: a holding's
    contributions to an ancestor cell are the sum of its contributions to the leaf cells below
    it, so the roll-up needs every pair. Their number is that of the holdings' appearances in
    leaf cells -- at most the records, and usually far fewer (the records of one holding in
    one leaf cell are one row) -- so it is bounded by the contributors, not the records; above
    ``max_contributions`` pairs a DataError says so instead of exhausting the driver.
    """
    from pyspark.sql import Window
    from pyspark.sql import functions as F

    from sdckit.spark.io import text_column

    columns = list(sdf.columns)
    names = dimension_names(columns, dimensions)
    check_columns(columns, [response, shadow, cost, holding, request])
    codes: list[str] = []
    if request is not None:
        if response is None:
            raise request_without_response(request)
        codes = check_request_codes(request, request_codes)

    # 1. one pass: distinct texts per dimension, records, bad numbers, negative rule values
    numeric = list(dict.fromkeys(c for c in (response, shadow, cost) if c is not None))
    parsed = {c: _number(sdf, c) for c in numeric}
    rule = shadow if shadow is not None else response
    aggs = [F.count(F.lit(1)).alias("__n")]
    aggs += [F.collect_set(text_column(sdf, name)).alias(f"__d{j}") for j, name in enumerate(names)]
    aggs += [F.sum(parsed[c][1].cast("long")).alias(f"__b{i}") for i, c in enumerate(numeric)]
    if rule is not None:
        aggs.append(F.max((parsed[rule][0] < 0).cast("int")).alias("__neg"))
    if request is not None:
        asked = text_column(sdf, request).isin(codes)
        aggs.append(F.max(asked.cast("int")).alias("__asked"))
    profile = sdf.agg(*aggs).collect()[0]
    texts = {name: list(profile[f"__d{j}"]) for j, name in enumerate(names)}

    # 2. the dimensions and the checks, in the local engine's order
    dims = table_dimensions(columns, dimensions, lambda name: texts[name], totals)
    if int(profile["__n"]) == 0:
        raise DataError("the data has no records; there is no table to build")
    for d in dims:
        distinct = pd.Index(pd.Series(texts[d.name], dtype=object))
        unknown = distinct[pd.Index(list(d.leaf_of)).get_indexer(distinct) < 0]
        if len(unknown):
            raise _unknown_code_error(sdf, d, [str(t) for t in unknown])
    for c in (response, shadow, cost):
        if c is not None:
            count = int(profile[f"__b{numeric.index(c)}"] or 0)
            if count:
                row, value = _first_bad_row(sdf, c, parsed[c][1])
                raise not_a_number(c, row, value, count)
    negative = rule is not None and bool(profile["__neg"])
    if request is not None and not profile["__asked"]:
        some = sdf.select(text_column(sdf, request).alias("t")).distinct().limit(50).collect()
        raise no_request_code(request, codes, [str(r["t"]) for r in some])

    # 3. the group-bys over the leaf cells
    keep = [
        (parsed[response][0] if response is not None else F.lit(1.0)).alias("__v"),
        (parsed[rule][0] if rule is not None else F.lit(1.0)).alias("__r"),
    ]
    if cost is not None:
        keep.append(parsed[cost][0].alias("__c"))
    if holding is not None:
        keep.append(text_column(sdf, holding).alias("__h"))
    if request is not None:
        keep.append(text_column(sdf, request).alias("__q"))
    keyed = _with_leaf_cells(sdf, dims, keep)
    sums = [F.count(F.lit(1)).alias("freq")]
    if response is not None:
        sums.append(F.sum("__v").alias("value"))
    if cost is not None:
        sums.append(F.sum("__c").alias("cost"))
    # per request code the largest positive rule value of a requesting record (0: none)
    asked_max = [f"__q{j}" for j in range(len(codes))]
    for name, code in zip(asked_max, codes, strict=True):
        mine = F.when(F.col("__q") == code, F.greatest(F.col("__r"), F.lit(0.0)))
        sums.append(F.max(mine.otherwise(F.lit(0.0))).cast("double").alias(name))
    if holding is not None:
        if shadow is not None:
            sums.append(F.sum("__r").alias("rule"))
        grouped = keyed.groupBy("__cell", "__h").agg(*sums)
        pairs = _to_pandas(grouped.limit(max_contributions + 1))
        if len(pairs) > max_contributions:
            raise DataError(
                f"the table has more than {max_contributions:,} (leaf cell, {holding}) "
                "contributions, more than the driver takes; use coarser dimensions or raise "
                "the limit (max_contributions) if the driver has the memory "
                "(spark: {conf: {spark.driver.memory: ...}})"
            )
        pair_cell = pairs["__cell"].to_numpy(dtype=np.int64)
        pair_freq = pairs["freq"].to_numpy(dtype=np.int64)
        if response is not None:
            pair_value = pairs["value"].to_numpy(dtype=np.float64)
        else:
            pair_value = pair_freq.astype(np.float64)
        if shadow is not None:
            contribution = pairs["rule"].to_numpy(dtype=np.float64)
        else:
            contribution = pair_value  # the rules read the response (or count the records)
        cells, inv = np.unique(pair_cell, return_inverse=True)
        value = np.bincount(inv, weights=pair_value)
        freq = np.bincount(inv, weights=pair_freq).astype(np.int64)
        cost_sum = None
        if cost is not None:
            cost_sum = np.bincount(inv, weights=pairs["cost"].to_numpy(dtype=np.float64))
        hold_codes = pd.factorize(pairs["__h"].to_numpy(dtype=object))[0]
        requested = None
        if request is not None:
            requested = np.zeros((len(cells), len(codes)))
            np.maximum.at(requested, inv, pairs[asked_max].to_numpy(dtype=np.float64))
        return LeafAggregates(
            dimensions=dims,
            cells=cells,
            value=value,
            freq=freq,
            cost=cost_sum,
            contribution_cell=pair_cell,
            contribution=contribution,
            contribution_holding=hold_codes.astype(np.int64),
            negative_contributions=negative,
            top_n=top_n,
            response=response,
            holding=holding,
            requested=requested,
            request=request,
            request_codes=tuple(codes),
        )

    # the sums and the largest rule values in one job: the groupBy's rows (freq >= 1) and the
    # window's rows (freq null) collected together
    leaf_rows = keyed.groupBy("__cell").agg(*sums)
    leaf_rows = leaf_rows.select(
        "__cell",
        F.col("freq").cast("long").alias("freq"),
        (F.col("value") if response is not None else F.lit(None)).cast("double").alias("value"),
        (F.col("cost") if cost is not None else F.lit(None)).cast("double").alias("cost"),
        *asked_max,
    )
    if top_n > 0:
        window = Window.partitionBy("__cell").orderBy(F.col("__r").desc())
        top_rows = (
            keyed.select("__cell", "__r")
            .withColumn("__k", F.row_number().over(window))
            .filter(F.col("__k") <= top_n)
            .select(
                "__cell",
                F.lit(None).cast("long").alias("freq"),
                F.col("__r").cast("double").alias("value"),
                F.lit(None).cast("double").alias("cost"),
                *[F.lit(None).cast("double").alias(name) for name in asked_max],
            )
        )
        leaf_rows = leaf_rows.unionByName(top_rows)
    rows = _to_pandas(leaf_rows)
    is_top = rows["freq"].isna().to_numpy()
    leaf = rows[~is_top].sort_values("__cell")
    cells = leaf["__cell"].to_numpy(dtype=np.int64)
    freq = leaf["freq"].to_numpy(dtype=np.int64)
    value = leaf["value"].to_numpy(dtype=np.float64) if response is not None else freq * 1.0
    cost_sum = leaf["cost"].to_numpy(dtype=np.float64) if cost is not None else None
    c_cell = rows["__cell"].to_numpy(dtype=np.int64)[is_top]
    contribution = rows["value"].to_numpy(dtype=np.float64)[is_top]
    requested = leaf[asked_max].to_numpy(dtype=np.float64) if request is not None else None
    return LeafAggregates(
        dimensions=dims,
        cells=cells,
        value=value,
        freq=freq,
        cost=cost_sum,
        contribution_cell=c_cell,
        contribution=contribution,
        contribution_holding=None,
        negative_contributions=negative,
        top_n=top_n,
        response=response,
        holding=None,
        requested=requested,
        request=request,
        request_codes=tuple(codes),
    )


def spark_table(
    sdf: DataFrame,
    dimensions: Sequence[str] | Mapping[str, Hierarchy | None],
    response: str | None = None,
    *,
    shadow: str | None = None,
    cost: str | None = None,
    holding: str | None = None,
    top_n: int = 2,
    request: str | None = None,
    request_codes: Sequence[str] = (),
    max_contributions: int = MAX_CONTRIBUTIONS,
    totals: Mapping[str, str] | None = None,
) -> Table:
    """The table of the Spark DataFrame ``sdf``: :meth:`Table.from_microdata
    <sdckit.tables.table.Table.from_microdata>` with the records' pass on Spark
    (:func:`spark_leaf_aggregates`) and the roll-up on the driver."""
    agg = spark_leaf_aggregates(
        sdf,
        dimensions,
        response,
        shadow=shadow,
        cost=cost,
        holding=holding,
        top_n=top_n,
        request=request,
        request_codes=request_codes,
        max_contributions=max_contributions,
        totals=totals,
    )
    return Table.from_leaf_aggregates(agg)


def spark_cell_keys(sdf: DataFrame, table: Table, key: str) -> np.ndarray:
    """Every cell's key (:func:`sdckit.tables.cell_key.cell_keys` with the record keys in
    column ``key``) with the sums on Spark: each key on the grid of ``2**-52`` as an integer,
    summed exactly per leaf cell (as a 38-digit decimal) and reduced modulo ``2**52``; the
    driver rolls the leaf sums up. Equal to the local engine's keys bit for bit."""
    from pyspark.sql import functions as F

    from sdckit.tables.cell_key import (
        KEY_BITS,
        bad_record_key,
        cell_keys_from_leaf_sums,
        constant_record_key,
    )

    if key not in sdf.columns:
        raise DataError(
            f"record key column {key!r} is not in the data (columns: "
            f"{', '.join(map(str, sdf.columns))})"
        )
    value, bad = _number(sdf, key)
    bad = bad | (value < 0) | (value > 1)
    bad = F.coalesce(bad, F.lit(True))
    stats = sdf.agg(
        F.sum(bad.cast("long")), F.min(value), F.max(value), F.count(F.lit(1))
    ).collect()[0]
    count = int(stats[0] or 0)
    if count:
        row, shown = _first_bad_row(sdf, key, bad)
        raise bad_record_key(key, row, shown, count)
    if stats[3] > 1 and stats[1] == stats[2]:
        raise constant_record_key(key, float(stats[1]), int(stats[3]))
    one = float(2**KEY_BITS)
    q = F.rint(value * F.lit(one)).cast("decimal(38,0)")
    keyed = _with_leaf_cells(sdf, table.dimensions, [q.alias("__q")])
    sums = _to_pandas(
        keyed.groupBy("__cell").agg(
            F.pmod(F.sum("__q"), F.lit(2**KEY_BITS).cast("decimal(38,0)")).cast("long").alias("__s")
        )
    )
    return cell_keys_from_leaf_sums(
        table,
        sums["__cell"].to_numpy(dtype=np.int64),
        sums["__s"].to_numpy(dtype=np.int64).astype(np.uint64),
    )
