"""Frame helpers shared by the Spark jobs (mask, anonymize, tables, analyze).

* Row numbers: :func:`with_row_index` gives every record its 0-based position in the order
  Spark reads the input (:data:`ROW`); :func:`ranked` the position along a sort.
* Quantiles: :func:`exact_quantiles` finds the order statistics NumPy interpolates by a global
  sort and :func:`linear_quantiles` interpolates them exactly as ``numpy.quantile`` does
  (method ``linear``, Hyndman & Fan 1996, definition 7), so the local and Spark numbers are
  the same.
* Reading: :func:`typed_spark` gives text columns their numeric type by the local engine's
  rule; :func:`protect_identifiers_spark` drops or pseudonymizes identifiers (HMAC-SHA256,
  RFC 2104, with Spark built-ins); :func:`neutralize_formulas_spark` defuses spreadsheet
  formulas on writing (OWASP CSV injection).
* Workers: :func:`worker_errors` re-raises an sdckit error raised in a Spark worker as itself;
  :func:`_local_frame` / :func:`_spark_frame` convert a worker's batch between Spark's and the
  local engine's dtypes.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sdckit.errors import DataError, SdcInputError

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, DataFrame

#: The hidden column holding every record's 0-based position in the input.
ROW = "__sdc_row"
#: The prefix of the Spark engine's hidden columns (refused in the input).
_PREFIX = "__sdc_"
_RANK = "__sdc_rank"

#: The numbers a text column must hold to be numeric (what ``pandas.to_numeric`` parses).
_NUMBER = r"^[+-]?(([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?|(?i:inf|infinity))$"
_LEADING_ZERO = r"^[+-]?0[0-9]"


def _col(name: str) -> Column:
    from pyspark.sql import functions as F

    return F.col(f"`{name}`")


@contextmanager
def worker_errors() -> Iterator[None]:
    """Re-raise an sdckit error raised inside a Spark worker (it arrives as a PythonException
    carrying the traceback text) as the same sdckit error with its message."""
    import sdckit.errors as errors

    try:
        yield
    except Exception as exc:
        if type(exc).__name__ != "PythonException":
            raise
        found = re.search(r"sdckit\.errors\.(\w+): (.+)", str(exc))
        cls = getattr(errors, found.group(1), None) if found else None
        if isinstance(cls, type) and issubclass(cls, SdcInputError) and found:
            raise cls(found.group(2).strip()) from None
        raise


def _numbered(sdf: DataFrame, out: str) -> DataFrame:
    """``sdf`` with ``out``: every row's 0-based position in partition order (partition ``p``
    holds positions ``offset[p]`` to ``offset[p + 1] - 1``). One counting job; the caller
    makes sure both jobs see the same partitions (a deterministic source, or a checkpoint)."""
    return _numbered_total(sdf, out)[0]


def _numbered_total(sdf: DataFrame, out: str) -> tuple[DataFrame, int]:
    """:func:`_numbered` and the number of rows."""
    from pyspark.sql import functions as F

    pid, mid = f"{_PREFIX}pid", f"{_PREFIX}mid"
    tagged = sdf.select("*", F.spark_partition_id().alias(pid))
    tagged = tagged.select("*", F.monotonically_increasing_id().alias(mid))
    counts = {int(r[0]): int(r[1]) for r in tagged.groupBy(pid).count().collect()}
    offsets, total = [], 0
    for p in sorted(counts):
        offsets += [F.lit(p), F.lit(total).cast("long")]
        total += counts[p]
    start = F.create_map(*offsets)[F.col(pid)] if offsets else F.lit(0).cast("long")
    first = F.shiftleft(F.col(pid).cast("long"), 33)  # monotonically_increasing_id's layout
    return tagged.withColumn(out, start + F.col(mid) - first).drop(pid, mid), total


def with_row_index(sdf: DataFrame) -> DataFrame:
    """``sdf`` with :data:`ROW`, every record's 0-based position in the order Spark reads the
    input: for one CSV or Parquet file its file order (the local reader's row numbers), on
    any number of partitions. A column whose name starts with ``__sdc_`` is refused."""
    clash = [c for c in sdf.columns if c.startswith(_PREFIX)]
    if clash:
        raise DataError(
            f"column(s) {', '.join(map(repr, clash))}: names starting with {_PREFIX!r} are "
            "reserved for the Spark engine; rename them"
        )
    return _numbered(sdf, ROW)


def ranked(sdf: DataFrame, by: Sequence[str]) -> DataFrame:
    """``sdf`` with ``__sdc_rank``: the 0-based position of every record in the order of the
    columns ``by`` (ascending, missing last; give :data:`ROW` last for a total order).

    A global sort, then positions from the partition counts (:func:`_numbered`); the sorted
    data are checkpointed first, so the counts and the positions read the same partitions
    (a range sort samples its bounds anew on every run)."""
    from pyspark.sql import functions as F

    ordered = sdf.orderBy(*[F.asc_nulls_last(f"`{c}`") for c in by])
    return _numbered(ordered.localCheckpoint(eager=True), _RANK)


def exact_quantiles(sdf: DataFrame, value: Column, q: Sequence[float]) -> tuple[int, np.ndarray]:
    """The number ``n`` of non-missing values of ``value`` (a numeric column expression) and
    its quantiles ``q``, exactly as ``numpy.quantile`` gives them (:func:`linear_quantiles`
    over the order statistics of a global sort, :func:`ranked`; empty when ``n`` is 0)."""
    from pyspark.sql import functions as F

    values = sdf.select(value.cast("double").alias("v")).where(F.col("v").isNotNull())
    numbered, n = _numbered_total(values.orderBy(F.asc("v")).localCheckpoint(eager=True), _RANK)
    if not n:
        return 0, np.empty(0)

    def order_statistic(ranks: list[int]) -> dict[int, float]:
        rows = numbered.where(F.col(_RANK).isin(ranks)).select(_RANK, "v").collect()
        return {int(r[0]): float(r[1]) for r in rows}

    return n, linear_quantiles(order_statistic, n, q)


def linear_quantiles(
    order_statistic: Callable[[list[int]], dict[int, float]], n: int, q: Sequence[float]
) -> np.ndarray:
    """``numpy.quantile(x, q)`` (method ``linear``) of ``n`` values from their order statistics.

    NumPy takes ``h = (n - 1) q``, the order statistics ``x[floor h]`` and ``x[floor h + 1]``
    (the last one at the top) and interpolates with ``gamma = h - floor h``
    (Hyndman & Fan 1996, definition 7). This fetches those two values through
    ``order_statistic(ranks) -> {rank: value}`` and lets ``numpy.quantile`` interpolate them
    with the same ``gamma``, so the result is NumPy's number bit for bit.
    """
    qs = np.asarray(q, dtype=np.float64)
    h = (n - 1) * qs
    lo = np.clip(np.floor(h), 0, n - 1).astype(np.int64)
    hi = np.minimum(lo + 1, n - 1)
    stats = order_statistic(sorted({*lo.tolist(), *hi.tolist()}))
    out = np.empty(len(qs))
    for i in range(len(qs)):  # one per requested quantile
        gamma = float(h[i] - lo[i]) if h[i] < n - 1 else 0.0
        pair = np.array([stats[int(lo[i])], stats[int(hi[i])]])
        out[i] = float(np.quantile(pair, gamma))
    return out


def _stripped(c: Column) -> Column:
    """Python's ``str.strip()`` on Spark (Unicode white space at both ends)."""
    from pyspark.sql import functions as F

    return F.regexp_replace(c, r"(?U)^\s+|\s+$", "")


def _parses(text: Column) -> Column:
    """Whether stripped text is a number ``pandas.to_numeric`` reads (infinities included)."""
    return text.rlike(_NUMBER)


def typed_spark(sdf: DataFrame, schema: Any) -> DataFrame:
    """Give text columns their numeric type where they are numbers (the local engine's rule,
    :func:`sdckit.jobs.mask._typed`): a column declared ``integer``/``decimal`` must parse
    (DataError naming the row and value otherwise); a column declared with another type stays
    text; an undeclared text column becomes numeric when every non-missing value (missing:
    :data:`~sdckit.core.io.MISSING_TOKENS`) parses as a number and none has a leading zero.
    Integral columns (all values whole and below ``2**53`` in size) become ``long``, the
    others ``double``. A blank text cell becomes missing. One aggregate pass decides."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from sdckit.core.io import MISSING_TOKENS

    tokens = sorted(MISSING_TOKENS)
    text_cols = [
        c for c in sdf.columns if c != ROW and isinstance(sdf.schema[c].dataType, T.StringType)
    ]
    if not text_cols:
        return sdf
    # per record and column: stripped text, then flags (each regex evaluated once), then sums
    stripped = sdf.select(
        ROW, *[_stripped(_col(c)).alias(f"t{j}") for j, c in enumerate(text_cols)]
    )
    flags, numbers = [F.col(ROW)], [F.col(ROW)]
    for j in range(len(text_cols)):
        t = F.col(f"t{j}")
        present = t.isNotNull() & ~t.isin(tokens)
        flags += [
            t,
            present.alias(f"p{j}"),
            (present & t.rlike(_LEADING_ZERO)).alias(f"z{j}"),
            (present & _parses(t)).alias(f"ok{j}"),
        ]
        numbers += [
            F.col(f"p{j}"),
            F.col(f"z{j}"),
            F.col(f"ok{j}"),
            F.when(F.col(f"ok{j}"), t.cast("double")).alias(f"x{j}"),
        ]
    flagged = stripped.select(*flags).select(*numbers)
    aggs = []
    for j in range(len(text_cols)):
        present, num = F.col(f"p{j}"), F.col(f"x{j}")
        # floor() gives a long: evaluated only below 2**53 in size (an infinity or 1e300
        # would overflow it, an ARITHMETIC_OVERFLOW under Spark's ANSI mode)
        small = F.abs(num) < float(2**53)
        whole = num.isNull() | F.when(small, num == F.floor(num)).otherwise(F.lit(False))
        bad = present & ~F.col(f"ok{j}")
        aggs += [
            F.sum(present.cast("long")).alias(f"p{j}"),
            F.sum(F.col(f"z{j}").cast("long")).alias(f"z{j}"),
            F.sum(bad.cast("long")).alias(f"b{j}"),
            F.sum((~whole).cast("long")).alias(f"f{j}"),
            F.min(F.when(bad, F.col(ROW))).alias(f"r{j}"),
        ]
    facts = flagged.agg(*aggs).first()
    assert facts is not None
    out = []
    for c in sdf.columns:
        if c not in text_cols:
            out.append(_col(c))
            continue
        j = text_cols.index(c)
        raw, t = _col(c), _stripped(_col(c))
        blank_to_missing = F.when(t == "", F.lit(None)).otherwise(raw).alias(c)
        attr = schema.attributes.get(c) if schema is not None else None
        if attr is not None and not attr.type.numeric:
            out.append(blank_to_missing)
            continue
        n_present, zeros, n_bad, fraction = (int(facts[f"{k}{j}"] or 0) for k in "pzbf")
        if attr is None and (n_present == 0 or zeros or n_bad):
            out.append(blank_to_missing)
            continue
        if n_bad:  # declared numeric
            row = int(facts[f"r{j}"])
            value = sdf.where(F.col(ROW) == row).select(c).first()[0]  # type: ignore[index]
            raise DataError(
                f"column {c!r} in the input must be numeric, but row {row + 1} has {value!r} "
                f"({n_bad} unparsable value(s) in all); fix the value or declare the column as "
                "nominal"
            )
        num = F.when(~t.isin(tokens) & _parses(t), t.cast("double"))
        out.append((num.cast("long") if fraction == 0 else num).alias(c))
    return sdf.select(*out)


def _hmac_sha256_hex(text: Column, key: bytes) -> Column:
    """HMAC-SHA256 (RFC 2104) of the UTF-8 bytes of ``text`` under ``key``, as lowercase hex,
    with Spark built-ins: ``H((K ^ opad) || H((K ^ ipad) || m))`` for the 64-byte block
    ``K`` (a longer key is hashed first, a shorter one padded with zeros)."""
    import hashlib

    from pyspark.sql import functions as F

    block = hashlib.sha256(key).digest() if len(key) > 64 else key
    block = block.ljust(64, b"\0")
    ipad = bytearray(b ^ 0x36 for b in block)
    opad = bytearray(b ^ 0x5C for b in block)
    inner = F.unhex(F.sha2(F.concat(F.lit(ipad), F.encode(text, "UTF-8")), 256))
    return F.sha2(F.concat(F.lit(opad), inner), 256)


def protect_identifiers_spark(
    sdf: DataFrame, schema: Any, base_dir: str | Path | None = None
) -> tuple[DataFrame, dict[str, list[str]]]:
    """Drop the identifying attributes, or replace them by keyed tokens where configured:
    :func:`sdckit.core.pseudonymize.protect_identifiers` on Spark. A token is the first
    ``length`` hex digits of HMAC-SHA256 (RFC 2104) of the value's canonical text, computed
    with built-ins (``sha2``), equal to the local engine's token; missing values stay as they
    are. The key is part of the query plan (hidden from the Spark UI only when the UI is off,
    sdckit's default). Returns the table and ``{"dropped": [...], "pseudonymized": [...]}``."""
    from pyspark.sql import functions as F

    from sdckit.core.pseudonymize import pseudonym_settings
    from sdckit.spark.io import text_column

    ids = [n for n in schema.identifying if n in sdf.columns]
    dropped, tokens = [], []
    out = sdf
    for name in ids:
        spec = schema.attributes[name].pseudonymize
        if not spec:
            out = out.drop(name)
            dropped.append(name)
            continue
        key, length = pseudonym_settings(name, spec, base_dir)
        text = text_column(out, name)
        token = F.substring(_hmac_sha256_hex(text, bytes(key)), 1, int(length))
        out = out.withColumn(name, F.when(text == "", _col(name)).otherwise(token))
        tokens.append(name)
    return out, {"dropped": dropped, "pseudonymized": tokens}


def neutralize_formulas_spark(sdf: DataFrame) -> DataFrame:
    """:func:`sdckit.core.io.neutralize_formulas` on Spark: a text cell starting with ``=``,
    ``+``, ``-``, ``@``, a tab or a carriage return that is not a plain number gets a leading
    single quote (the OWASP defence against CSV injection)."""
    from pyspark.sql import functions as F

    from sdckit.core.io import _FORMULA_START, _PLAIN_NUMBER

    out = []
    for c in sdf.columns:
        if _kind(sdf.schema[c].dataType) != "string":
            out.append(_col(c))
            continue
        risky = _col(c).rlike(_FORMULA_START) & ~_col(c).rlike(_PLAIN_NUMBER)
        out.append(F.when(risky, F.concat(F.lit("'"), _col(c))).otherwise(_col(c)).alias(c))
    return sdf.select(*out)


def _kind(dtype: Any) -> str:
    """``long``, ``double``, ``boolean`` or ``string``: how sdckit treats a Spark type."""
    from pyspark.sql import types as T

    if isinstance(dtype, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
        return "long"
    if isinstance(dtype, (T.FloatType, T.DoubleType, T.DecimalType)):
        return "double"
    if isinstance(dtype, T.BooleanType):
        return "boolean"
    return "string"


def _local_frame(pdf: pd.DataFrame, kinds: dict[str, str]) -> pd.DataFrame:
    """A worker's batch in the local engine's dtypes: integer columns ``int64``, or
    nullable ``Int64`` when values are missing (Arrow gives floats there)."""
    out = pdf.copy()
    for c, kind in kinds.items():
        if kind == "long" and c in out.columns:
            s = out[c]
            out[c] = s.astype("Int64") if s.isna().any() else s.astype(np.int64)
    return out


def _joined(batches: list[pd.DataFrame]) -> pd.DataFrame:
    """Arrow batches of a worker joined into one frame whose text columns hold one Arrow
    array each: ``pandas.concat`` keeps the batches' arrays as chunks, which PySpark cannot
    send back (``Cannot convert pyarrow.lib.ChunkedArray to pyarrow.lib.Array``)."""
    out = pd.concat(batches) if len(batches) > 1 else batches[0]
    for c in out.columns:
        dtype = out[c].dtype
        if len(batches) > 1 and isinstance(dtype, (pd.StringDtype, pd.ArrowDtype)):
            out[c] = out[c].astype(object).astype(dtype)
    return out


def _spark_frame(pdf: pd.DataFrame, kinds: dict[str, str]) -> pd.DataFrame:
    """The columns ``kinds`` names of a worker's result, in those Spark types (missing values
    as nulls)."""
    from sdckit.core.encoding import is_numeric

    out = pd.DataFrame(index=pdf.index)
    for c, kind in kinds.items():
        s = pdf[c]
        if kind in ("long", "double"):
            num = s if is_numeric(s) else pd.to_numeric(s.astype(object), errors="raise")
            out[c] = num.astype("Int64" if kind == "long" else np.float64)
        elif kind == "boolean":
            out[c] = s.astype("boolean")
        else:  # text: the values as they are, missing as None
            obj = s.astype(object).to_numpy(copy=True)
            obj[s.isna().to_numpy()] = None
            out[c] = obj
    return out


def _schema_with(sdf: DataFrame, kinds: dict[str, str], extra: Sequence[Any] = ()) -> Any:
    """``sdf``'s schema with the columns of ``kinds`` given those types, plus ``extra``."""
    from pyspark.sql import types as T

    spark_type = {
        "long": T.LongType(),
        "double": T.DoubleType(),
        "boolean": T.BooleanType(),
        "string": T.StringType(),
    }
    fields = [
        T.StructField(f.name, spark_type[kinds[f.name]], True) if f.name in kinds else f
        for f in sdf.schema.fields
    ]
    return T.StructType([*fields, *extra])


@contextmanager
def _quiet() -> Iterator[None]:
    """PySpark warns on every pandas UDF that it 'does not yet fully support pandas >= 3'; the
    conversions sdckit uses are covered by the tests."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*PySpark does not yet fully support pandas")
        yield


def _pandas(sdf: DataFrame) -> pd.DataFrame:
    """A (small) Spark table collected as a pandas DataFrame."""
    return pd.DataFrame(sdf.toPandas())
