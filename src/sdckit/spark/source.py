"""A job's input on Spark (``engine: spark``): the :class:`~sdckit.jobs.source.Source` that
owns the Spark session and the input's DataFrame.

:func:`sdckit.jobs.source.open_source` loads this class by its registry path the first time a
job names ``engine: spark``; nothing here starts Spark until a method needs the data: the
columns come from the header line or Parquet schema (:func:`sdckit.spark.io.input_columns`)
and the delimiter is sniffed from the file, so that a job is checked before the JVM starts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from sdckit.jobs.source import ENGINES, EngineTraits, Source

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame, SparkSession

    from sdckit.core.io import OutputSet
    from sdckit.core.schema import Schema
    from sdckit.core.uri import Target
    from sdckit.jobs.config import Job
    from sdckit.jobs.mask import MaskRun

__all__ = ["SparkSource"]


class SparkSource(Source):
    """The input as a Spark DataFrame (read once), with the session the job's ``spark:``
    section (``master``, ``conf``) describes."""

    name = "spark"
    traits: EngineTraits = ENGINES.traits("spark")

    def __init__(self, job: Job) -> None:
        super().__init__(job)
        self._frame: DataFrame | None = None
        self._remote: dict[str, str] = {}
        self._remote_checked = False
        self._frequency_set: dict[str, Any] | None = None  # where the last search's classes were

    def session(self) -> SparkSession:
        """The Spark session of the job (``spark: {master, conf}``), started on first use;
        for a job with masking methods (the only Spark code that runs Python on the
        executors: ``mapInPandas``, ``applyInPandas``) checked to have executors that import
        sdckit. Right after it starts, before anything is read, each output at a URI
        (:meth:`accept_remote_outputs`) is checked to have a Hadoop file system."""
        from sdckit.spark.session import spark_session

        spark = self.job.spec.spark
        session = spark_session(
            spark.master, spark.conf, python_workers=bool(self.job.spec.methods)
        )
        if not self._remote_checked:
            from sdckit.spark.remote import HadoopFiles

            files = HadoopFiles(lambda: session)
            for where, uri in self._remote.items():
                files.check(uri, where)
            self._remote_checked = True
        return session

    def accept_remote_outputs(self, outputs: Mapping[str, str]) -> None:
        """Keep the outputs at URIs (by key or flag) for the check when the session starts
        (:meth:`session`: ``FileSystem.get`` of each; at once where it runs already); two
        naming one URI, or one naming the input, are a ConfigError at once."""
        from sdckit.errors import ConfigError

        seen = {uri.rstrip("/"): where for where, uri in self._remote.items()}
        src = self.job.input["path"]
        if isinstance(src, str):
            seen.setdefault(src.rstrip("/"), self.job.key("input.path"))
        for where, uri in outputs.items():
            other = seen.setdefault(uri.rstrip("/"), where)
            if other != where:
                raise ConfigError(
                    f"{other} and {where} both name {uri!r}; an input is never overwritten "
                    "and each output needs its own path: choose another"
                )
        self._remote.update(outputs)
        self._remote_checked = False
        if self._frame is not None:  # the session runs already (a URI input's columns)
            self.session()

    @contextmanager
    def outputs(self) -> Iterator[OutputSet]:
        """The job's output set with the session's Hadoop file systems registered
        (:class:`sdckit.spark.remote.HadoopFiles`): outputs at ``hdfs://``, ``s3a://``,
        ``gs://`` ... URIs are staged beside their targets and renamed into place with the
        set's other outputs."""
        from sdckit.core.io import output_set, register_remote_files
        from sdckit.spark.remote import HadoopFiles

        with register_remote_files(HadoopFiles(self.session)), output_set() as outputs:
            yield outputs

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

    def check_anonymization(self) -> None:
        """Everything of an anonymization job that can be checked without Spark, checked
        before Spark starts (a JVM takes seconds to a minute to start): ``output.path`` (the
        release is a folder of part files), the input's columns from its header
        (:meth:`columns`), the attributes (:meth:`~sdckit.jobs.config.Job.check_attributes`),
        the models' parameters (when they need no hierarchy from the data), the algorithm,
        its options, the suppression limit and the metric
        (:func:`sdckit.spark.anonymize.check_request`), and the search's own refusal of a
        quasi-identifier without a hierarchy."""
        from sdckit.errors import MissingHierarchyError
        from sdckit.spark.anonymize import check_request

        job = self.job
        self._release_path()
        columns = self.columns()
        job.check_attributes(columns)
        models = job.models_without_data()
        if columns is None:
            return
        self._partition_by(columns, self._identifying())
        schema = job.schema_without_data(columns)
        if models is not None:
            check_request(
                columns,
                schema,
                models,
                job.algorithm,
                job.suppression_limit,
                job.metric,
                **job.algorithm_options,
            )
        bare = {q: schema.attributes[q] for q in schema.quasi_identifiers}
        bare = {q: a for q, a in bare.items() if job.spec.attributes[q].hierarchy is None}
        if bare:  # the search's own refusal of a quasi-identifier without a hierarchy
            from sdckit.algorithms.optimal import require_hierarchies
            from sdckit.core.schema import Schema

            try:
                require_hierarchies(Schema(bare))
            except MissingHierarchyError as exc:
                raise exc.for_job_file(job.key(f"attributes.{exc.attribute}")) from None

    def anonymize(
        self, progress: Callable[[int, int], None] | None = None
    ) -> tuple[Any, dict[str, Target]]:
        """:func:`sdckit.spark.anonymize.anonymize_spark`: the search on the frequency set
        counted on Spark, the release written as a folder of part files at ``output.path``
        (Parquet when it ends in ``.parquet``, else CSV), verified by a recount."""
        from sdckit.spark.anonymize import anonymize_spark

        job = self.job
        out = job.output
        path = self._release_path()
        result = anonymize_spark(
            self.frame(),
            job.schema,
            job.models,
            path,
            delimiter=out.delimiter,
            neutralize=out.neutralize_formulas,
            partition_by=self._partition_by(self.frame_columns(), self._identifying()),
            suppression_limit=job.suppression_limit,
            metric=job.metric,
            algorithm=job.algorithm,
            progress=progress,
            **job.algorithm_options,
        )
        self._frequency_set = result.details.get("frequency_set")
        return result, {"data": path}

    def _release_path(self) -> Target:
        """``output.path``, which a Spark job must give: its release is a folder of part
        files (ConfigError naming the key otherwise)."""
        from sdckit.errors import ConfigError

        path = self.job.output.path
        if path is None:
            raise ConfigError(
                f"{self.job.key('output.path')} is missing: a Spark job writes its release as "
                "a folder of part files, e.g. `output: {path: released.parquet}`"
            )
        from sdckit.spark.io import refuse_stat_file

        refuse_stat_file(path, self.job.key("output.path"))
        return path

    def _identifying(self, pseudonymized: bool = True) -> set[str]:
        """The identifying attributes of the job (``pseudonymized=False``: those without
        ``pseudonymize:``, which a mask release drops while it keeps the pseudonymized)."""
        return {
            name
            for name, spec in self.job.spec.attributes.items()
            if spec.role == "identifying" and (pseudonymized or spec.pseudonymize is None)
        }

    def _partition_by(self, columns: Sequence[str], dropped: set[str]) -> tuple[str, ...]:
        """``output.partition_by``, each a column of the release: of ``columns`` (the
        input's, or the released frame's) less those ``dropped`` (ConfigError naming the key
        and the release's columns)."""
        from sdckit.errors import ConfigError

        wanted = self.job.output.partition_by
        released = [c for c in columns if c not in dropped]
        missing = [c for c in wanted if c not in released]
        if missing:
            raise ConfigError(
                f"{self.job.key('output.partition_by')} names {', '.join(map(repr, missing))}, "
                f"not a column of the release; its columns: {', '.join(released)}"
            )
        return wanted

    def check_mask(self, pipeline: Any, methods: Sequence[tuple[str, dict]], where: str) -> None:
        """Before Spark starts: the steps the Spark engine refuses
        (:func:`sdckit.spark.mask.check_spark_pipeline`: swapping, resampling, sampling,
        microaggregation without strata) and the columns the steps name, from the header
        (:func:`sdckit.jobs.mask.check_mask_columns`)."""
        from sdckit.jobs.mask import check_mask_columns
        from sdckit.spark.mask import check_spark_pipeline

        check_spark_pipeline(pipeline, where)
        check_mask_columns(self.job, pipeline, methods, where)
        columns = self.columns()
        if columns is not None:
            self._partition_by(columns, self._identifying(pseudonymized=False))

    def mask(
        self, pipeline: Any, methods: Sequence[tuple[str, dict]], where: str, share_limit: float
    ) -> MaskRun:
        """The pipeline on Spark: the input numbered in input order, identifying attributes
        dropped or pseudonymized (keyed HMAC-SHA256 with Spark built-ins, the local tokens),
        columns typed as the local engine types them, the steps applied
        (:func:`sdckit.spark.mask.apply_pipeline_spark`: each planned on the driver from
        Spark aggregates and released per block), and the summary from Spark aggregates
        (:mod:`sdckit.spark.mask_summary`). The release stays cached until
        :attr:`~sdckit.jobs.mask.MaskRun.close`."""
        from sdckit.jobs.mask import MaskRun, _check_identifiers_unused, _touched_columns
        from sdckit.masking import blocks
        from sdckit.spark import frame as sf
        from sdckit.spark import mask as sm
        from sdckit.spark.mask_summary import (
            column_changes_spark,
            numeric_evaluation_spark,
            original_records_spark,
        )

        job = self.job
        raw = sf.with_row_index(self.frame())
        protected, ids = sf.protect_identifiers_spark(raw, job.schema, job.base_dir)
        _check_identifiers_unused(methods, ids["dropped"], where)
        prepared = sf.typed_spark(protected, job.schema).persist()
        result = None

        def close() -> None:
            if result is not None:
                result.release()
            prepared.unpersist()

        try:
            with sf.worker_errors():
                result = sm.apply_pipeline_spark(prepared, pipeline, job.seed, where=where)
                columns = [c for c in result.data.columns if c != sf.ROW]
                touched = _touched_columns(result.records, columns)
                changes, categories = column_changes_spark(prepared, result.data, touched)
                evaluation = numeric_evaluation_spark(
                    prepared, result.data, touched, seed=0 if job.seed is None else job.seed
                )
                originals = original_records_spark(prepared, result.data, columns, share_limit)
        except BaseException:
            close()
            raise
        return MaskRun(
            released=result.data.orderBy(sf.ROW).drop(sf.ROW),
            records=result.records,
            records_in=result.n,
            records_out=result.n,
            identifiers=ids,
            columns=changes,
            category_changes=categories,
            numeric_evaluation=evaluation,
            original_records=originals,
            engine_fields={
                "randomness": {
                    "block_rows": blocks.BLOCK_ROWS,
                    "rule": "block b of step i draws from SeedSequence(step seed i, "
                    f"spawn_key=(b,)); blocks of {blocks.BLOCK_ROWS:,} records in input order, "
                    "so the same seed gives the same output on any partitioning and on "
                    "engine: local",
                },
            },
            close=close,
        )

    def summary_fields(self) -> dict[str, Any]:
        """The engine and the Spark master the job ran on, and where an anonymization's
        classes were counted (``frequency_set``: collected to the driver or kept on Spark)."""
        out: dict[str, Any] = {"engine": self.name, "spark_master": self.job.spec.spark.master}
        if self._frequency_set is not None:
            out["frequency_set"] = self._frequency_set
        return out

    def write(self, frame: Any, path: Target, delimiter: str, neutralize: bool = False) -> Target:
        """``frame`` written as a folder of part files at ``path`` (Parquet by suffix, else CSV),
        staged beside it and renamed into place (:func:`sdckit.core.io.atomic_write_dir`)."""
        from sdckit.core.io import atomic_write_dir
        from sdckit.spark.frame import neutralize_formulas_spark, worker_errors
        from sdckit.spark.io import refuse_stat_file, write_spark

        refuse_stat_file(path, self.job.key("output.path"))  # no part files named .dta
        parts = self._partition_by(list(frame.columns), set())
        if neutralize:
            frame = neutralize_formulas_spark(frame)
        with worker_errors():
            return atomic_write_dir(
                path,
                lambda tmp: write_spark(frame, tmp, delimiter, target=path, partition_by=parts),
            )
