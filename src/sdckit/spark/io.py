"""Reading and writing on Spark, with the local engine's reading rules.

CSV cells are text exactly as written (no type inference; an empty cell is the missing text
``""``, as :func:`sdckit.core.io.read_table` reads it); Parquet keeps its types and values are
turned into the same canonical text as :func:`sdckit.core.encoding.as_text` (integral numbers
without ``.0``, missing as ``""``) where a method matches them against hierarchies or codes.
Outputs are a folder of part files (Parquet, or CSV with a header) written to a temporary
folder beside the target and renamed into place only after they were verified.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

import pandas as pd

from sdckit.core.io import check_column_names, read_header
from sdckit.errors import DataError

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, DataFrame, SparkSession

PARQUET_SUFFIXES = (".parquet", ".pq")
#: The staging suffix of an output at a URI (:func:`sdckit.core.io.staging_uri`).
_STAGED = re.compile(r"\.sdckit-tmp-[0-9a-f]+$")


def _is_uri(source: str) -> bool:
    return "://" in source and not source.startswith("file://")


def is_parquet(path: str | Path) -> bool:
    """True for a Parquet source or target (by suffix, or a folder of ``.parquet`` parts at
    any depth of Hive partition folders, :func:`sdckit.core.io.is_parquet_folder`); a
    staged release at a URI (``r.parquet.sdckit-tmp-<run_id>``,
    :func:`sdckit.core.io.staging_uri`) by its target's suffix."""
    from sdckit.core.io import is_parquet_folder

    p = _STAGED.sub("", str(path).rstrip("/"))
    if p.lower().endswith(PARQUET_SUFFIXES):
        return True
    local = Path(p.removeprefix("file://"))
    return local.is_dir() and is_parquet_folder(local)


def to_pandas(sdf: DataFrame) -> pd.DataFrame:
    """Collect a (small) Spark DataFrame to the driver as pandas (Arrow transfer)."""
    return cast(pd.DataFrame, sdf.toPandas())


def refuse_stat_file(path: str | Path, what: str = "input") -> None:
    """DataError for an SPSS, Stata or SAS file (:func:`sdckit.core.formats.is_stat_file`):
    Spark reads and writes none of them, so such data goes through Parquet."""
    from sdckit.core.formats import is_stat_file

    if is_stat_file(path) and what == "input":
        raise DataError(
            f"input {str(path)!r} is an SPSS/Stata/SAS file, which the Spark engine cannot "
            "read: convert it to Parquet first (sdckit.read_table(path).to_parquet(...)) or "
            "run the job on the local engine"
        )
    if is_stat_file(path):
        raise DataError(
            f"{what} {str(path)!r} is an SPSS/Stata/SAS file, which the Spark engine cannot "
            "write (its release is a folder of part files): write it as Parquet "
            "(`released.parquet`) or run the job on the local engine"
        )


def csv_delimiter(path: str | Path, encoding: str = "utf-8") -> str:
    """The delimiter of a local CSV file (or folder of CSV parts), sniffed from its first
    64 KiB as :func:`sdckit.core.io.read_table` does."""
    from sdckit.core.io import sniff_delimiter

    local = Path(str(path).removeprefix("file://"))
    first = next(iter(sorted(local.glob("*.csv"))), None) if local.is_dir() else local
    if first is None:
        raise DataError(f"input folder {str(path)!r} holds no .csv part files")
    with open(first, encoding=encoding, errors="replace", newline="") as fh:
        sample = fh.read(65536)
    if not sample.strip():
        raise DataError(f"input file {str(path)!r} is empty; it needs a header line and rows")
    return sniff_delimiter(sample)


def input_columns(
    source: str | Path, delimiter: str | None = None, encoding: str = "utf-8"
) -> list[str] | None:
    """The column names :func:`read_spark` will give ``source``, read from the header line of
    a local CSV file (or its first part file) or the schema of a local Parquet file, without
    Spark: what a job is checked against before Spark starts. None for a URI (only Spark reads
    it) or a Parquet source without a reader here. The same DataErrors as :func:`read_spark`
    for a missing input and a column name given twice."""
    src = str(source)
    refuse_stat_file(src)
    if _is_uri(src):
        return None
    local = Path(src.removeprefix("file://"))
    if not local.exists():
        raise DataError(f"input {src!r} does not exist; check the path")
    if is_parquet(src):
        try:
            import pyarrow.parquet as pq
        except ImportError:
            return None
        try:
            if local.is_dir():  # the parts' columns, then the Hive partition keys
                import pyarrow.dataset as ds

                names = list(ds.dataset(local, format="parquet", partitioning="hive").schema.names)
            else:
                names = list(pq.read_schema(local).names)
        except Exception as exc:  # pyarrow raises many types
            raise DataError(f"cannot read Parquet input {src!r}: {exc}") from exc
    else:
        sep = delimiter or csv_delimiter(local, encoding)
        first = next(iter(sorted(local.glob("*.csv"))), None) if local.is_dir() else local
        if first is None:
            return None
        names = read_header(first, sep, encoding, errors="replace")
    check_column_names(names, src)
    return names


def read_spark(
    spark: SparkSession,
    source: str | Path,
    delimiter: str | None = None,
    encoding: str = "utf-8",
    columns: Sequence[str] | None = None,
) -> DataFrame:
    """Read a CSV or Parquet file (or folder of part files, or any URI Spark reads).

    The delimiter of a local CSV file is sniffed from its first 64 KiB as the local engine
    does; for a remote URI it must be given (``input: {delimiter: ...}``) or is a comma.
    Quoted fields follow RFC 4180 (``""`` inside quotes). Errors name the source. A relative
    local path is this process's (made absolute for Spark, whose JVM resolves paths against
    the folder it was started in: a session joined later, e.g. in a notebook that changed
    folder, may have another).
    """
    src = str(source)
    refuse_stat_file(src)
    where = src  # what Spark reads
    if not _is_uri(src):
        local = Path(src.removeprefix("file://"))
        if not local.exists():
            raise DataError(f"input {src!r} does not exist; check the path")
        if not src.startswith("file://"):
            where = str(local.absolute())
    if is_parquet(src):
        sdf = spark.read.parquet(where)
    else:
        sep = delimiter
        if sep is None:
            sep = "," if _is_uri(src) else csv_delimiter(src, encoding)
        sdf = (
            spark.read.option("header", "true")
            .option("inferSchema", "false")
            .option("sep", sep)
            .option("quote", '"')
            .option("escape", '"')
            .option("encoding", encoding)
            .option("mode", "FAILFAST")
            .csv(where)
        )
    names = list(sdf.columns)
    check_column_names(names, src)
    if columns is not None:
        missing = [c for c in columns if c not in names]
        if missing:
            raise DataError(
                f"column(s) {', '.join(map(repr, missing))} not found in {src!r}; available "
                f"columns: {', '.join(names)}"
            )
    return sdf


def text_column(sdf: DataFrame, name: str) -> Column:
    """The canonical text of column ``name`` (:func:`sdckit.core.encoding.as_text` on Spark).

    Strings stay as they are, integers print as integers, integral finite floats without
    ``.0``, booleans as ``True``/``False``, missing values (null, NaN) as ``""``.
    """
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    col = F.col(f"`{name}`")
    dtype = sdf.schema[name].dataType
    if isinstance(dtype, T.StringType):
        text = col
    elif isinstance(dtype, (T.ByteType, T.ShortType, T.IntegerType, T.LongType)):
        text = col.cast("string")
    elif isinstance(dtype, (T.FloatType, T.DoubleType)):
        d = col.cast("double")
        integral = (~F.isnan(d)) & (F.abs(d) < 9.0e18) & (d == F.floor(d))
        text = (
            F.when(F.isnan(d), F.lit(None))
            .when(integral, d.cast("long").cast("string"))
            .otherwise(d.cast("string"))
        )
    elif isinstance(dtype, T.BooleanType):
        text = F.when(col, F.lit("True")).when(~col, F.lit("False"))
    else:
        text = col.cast("string")
    return F.coalesce(text, F.lit(""))


def write_spark(
    sdf: DataFrame,
    path: str | Path,
    delimiter: str = ",",
    target: str | Path | None = None,
    partition_by: Sequence[str] = (),
) -> None:
    """Write ``sdf`` as a folder of part files at ``path``: Parquet when ``target`` (the
    final name, default ``path``) ends in ``.parquet``/``.pq``, else CSV with a header;
    ``partition_by``: columns written as Hive partition folders (``col=value/``, the column
    left out of the part files, as Spark's ``partitionBy`` does). The caller stages ``path``
    (see :func:`sdckit.core.io.atomic_write_dir`)."""
    writer = sdf.write.mode("overwrite")
    if partition_by:
        writer = writer.partitionBy(*partition_by)
    final = str(target if target is not None else path)
    if final.lower().rstrip("/").endswith(PARQUET_SUFFIXES):
        writer.parquet(str(path))
    else:
        (
            writer.option("header", "true")
            .option("sep", delimiter)
            .option("quote", '"')
            .option("escape", '"')
            .option("emptyValue", "")
            .csv(str(path))
        )
