"""A job's input on Spark (``engine: spark``): the :class:`~sdckit.jobs.source.Source` that
owns the Spark session and the input's DataFrame.

:func:`sdckit.jobs.source.open_source` loads this class by its registry path the first time a
job names ``engine: spark``; nothing here starts Spark until a method needs the data: the
columns come from the header line or Parquet schema (:func:`sdckit.spark.io.input_columns`)
and the delimiter is sniffed from the file, so that a job is checked before the JVM starts.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from sdckit.jobs.source import ENGINES, EngineTraits, Source

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession

    from sdckit.core.schema import Schema
    from sdckit.jobs.config import Job

__all__ = ["SparkSource"]


class SparkSource(Source):
    """The input as a Spark DataFrame (read once), with the session the job's ``spark:``
    section (``master``, ``conf``) describes."""

    name = "spark"
    traits: EngineTraits = ENGINES.traits("spark")

    def __init__(self, job: Job) -> None:
        super().__init__(job)
        self._frame: DataFrame | None = None

    def session(self) -> SparkSession:
        """The Spark session of the job (``spark: {master, conf}``), started on first use."""
        from sdckit.spark.session import spark_session

        return spark_session(self.job.spec.spark.master, self.job.spec.spark.conf)

    def _where(self) -> str:
        """The input's path as Spark reads it: a URI (``hdfs://``, ``s3a://``) as given, a
        local path resolved against the job file's folder."""
        src = self.job.input["path"]
        return str(src) if "://" in str(src) else str(self.job._path(src))

    def columns(self) -> list[str] | None:
        """The header line or Parquet schema, read without Spark; None for a URI."""
        spec = self.job.input
        if isinstance(spec["path"], pd.DataFrame):
            return [str(c) for c in spec["path"].columns]
        from sdckit.spark.io import input_columns

        return input_columns(self._where(), spec.get("delimiter"), spec.get("encoding", "utf-8"))

    def frame(self) -> DataFrame:
        """The input as a Spark DataFrame (read once; a DataFrame input as text, missing as
        ``""``)."""
        if self._frame is None:
            from sdckit.core.io import read_table
            from sdckit.spark.io import read_spark

            spec = self.job.input
            src = spec["path"]
            session = self.session()
            if isinstance(src, pd.DataFrame):
                from sdckit.core.encoding import as_text

                data = read_table(src)  # a DataFrame in memory: as text, missing as ""
                self._frame = session.createDataFrame(
                    pd.DataFrame({c: as_text(data[c]) for c in data.columns})
                )
            else:
                self._frame = read_spark(
                    session,
                    self._where(),
                    delimiter=spec.get("delimiter"),
                    encoding=spec.get("encoding", "utf-8"),
                )
        return self._frame

    def frame_columns(self) -> list[str]:
        """The columns of the DataFrame Spark read."""
        return list(self.frame().columns)

    def column_values(self, name: str) -> pd.Series:
        """The column's distinct values, counted on Spark (all a hierarchy builder reads)."""
        from sdckit.spark.frequency import distinct_values

        return distinct_values(self.frame(), name)

    def roles(self) -> Schema:
        """The attributes and roles from the header, Spark not started for them (the whole
        schema only for a URI, whose columns only Spark reads)."""
        columns = self.columns()
        self.job.check_attributes(columns)
        if columns is not None:
            return self.job.schema_without_data(columns)
        return self.schema()

    def input_delimiter(self) -> str:
        """The delimiter of a local CSV input, sniffed from the file (``,`` for Parquet, a
        URI or a DataFrame)."""
        src = self.job.input["path"]
        if isinstance(src, str) and "://" not in src:
            from sdckit.spark.io import csv_delimiter, is_parquet

            path = self.job._path(src)
            if path is not None and path.exists() and not is_parquet(path):
                return csv_delimiter(path, self.job.input.get("encoding", "utf-8"))
        return ","

    def risk(
        self,
        qi: Sequence[str],
        sensitive: Sequence[str] = (),
        population: Path | None = None,
        **options: Any,
    ) -> Any:
        """:func:`sdckit.spark.analyze.analyze_spark`: the request checked on the header
        before Spark starts, the population read by Spark with the input's delimiter."""
        from sdckit.spark.analyze import analyze_spark, check_request
        from sdckit.spark.io import read_spark

        known = self.columns()
        if known is not None:  # before Spark starts
            check_request(known, qi, options.get("household"))
        spec = self.job.input
        sdf = self.frame()
        pop = None
        if population is not None:
            pop = read_spark(
                self.session(), population, spec.get("delimiter"), spec.get("encoding", "utf-8")
            )
        return analyze_spark(sdf, list(qi), population=pop, sensitive=list(sensitive), **options)

    def cell_keys(self, table: Any, key: str) -> Any:
        """:func:`sdckit.spark.tables.spark_cell_keys`: the record keys summed on Spark."""
        from sdckit.spark.tables import spark_cell_keys

        return spark_cell_keys(self.frame(), table, key)

    def microdata_table(
        self, hierarchies: dict[str, Any], response: str | None, **options: Any
    ) -> Any:
        """:func:`sdckit.spark.tables.spark_table`: the records' pass on Spark (leaf
        aggregates), the roll-up on the driver."""
        from sdckit.spark.tables import spark_table

        return spark_table(self.frame(), hierarchies, response, **options)

    def write(self, frame: Any, path: Path, delimiter: str, neutralize: bool = False) -> Path:
        """``frame`` written as a folder of part files at ``path`` (Parquet by suffix, else CSV),
        staged beside it and renamed into place (:func:`sdckit.core.io.atomic_write_dir`)."""
        from sdckit.core.io import atomic_write_dir
        from sdckit.spark.io import write_spark
        from sdckit.spark.mask import neutralize_formulas_spark, worker_errors

        if neutralize:
            frame = neutralize_formulas_spark(frame)
        with worker_errors():
            return atomic_write_dir(path, lambda tmp: write_spark(frame, tmp, delimiter))
