"""Where a job's input is read and worked on: the engine, chosen once, behind a :class:`Source`.

A runner (``sdckit anonymize``, ``mask``, ``table``, ``analyze``) asks the job's source for
what it needs of the input -- its columns (from the header, before any engine starts), the
data in the engine's own frame, the schema with its hierarchies, a column's values for a
hierarchy builder, the risk analysis, the cell keys of a table, the written release -- and
never tests the engine's name. :func:`open_source` is the one place that reads ``engine:``
(or ``--engine``): it looks the name up in :data:`ENGINES`, a
:class:`~sdckit.core.registry.Registry` whose ``"spark"`` entry is the path
``"sdckit.spark.source:SparkSource"``, imported on first use, so this layer never imports
:mod:`sdckit.spark`. The names of :data:`ENGINES` are the ones ``--engine`` accepts.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from sdckit.core.registry import Registry
from sdckit.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from sdckit.core.formats import FileMeta
    from sdckit.core.io import OutputSet
    from sdckit.core.schema import Schema
    from sdckit.core.uri import Target
    from sdckit.jobs.config import Job
    from sdckit.jobs.mask import MaskRun

__all__ = ["ENGINES", "EngineTraits", "LocalSource", "Source", "check_engine", "open_source"]


@dataclass(frozen=True)
class EngineTraits:
    """What a runner needs to know of an engine without opening it.

    ``distributed``: the input is a cluster's frame, worked on by the engine's own
    implementations (the runners' Spark paths), not a pandas table on this machine.
    ``release_is_folder``: the released data is written as a folder of part files (and the
    input may be such a folder), which the output checks treat as one path.
    ``remote_outputs``: outputs may be URIs of other schemes than ``file`` (written through
    the file systems the engine registers, :func:`sdckit.core.io.register_remote_files`).
    """

    distributed: bool = False
    release_is_folder: bool = False
    remote_outputs: bool = False


class Source(ABC):
    """A job's input on one engine: what the runners call, whatever the engine.

    Opened by :func:`open_source` for one :class:`~sdckit.jobs.config.Job` (its ``input``,
    ``attributes`` and engine settings); what it reads is read once and kept.
    """

    #: The engine's name (``engine:`` of the job; the summaries' ``"engine"``).
    name: str = ""
    #: The engine's traits (:class:`EngineTraits`).
    traits: EngineTraits = EngineTraits()

    def __init__(self, job: Job) -> None:
        self.job = job
        self._schema: Schema | None = None
        self._table: pd.DataFrame | None = None

    @property
    def distributed(self) -> bool:
        """Whether the input is a cluster's frame (:attr:`EngineTraits.distributed`)."""
        return self.traits.distributed

    @property
    def release_is_folder(self) -> bool:
        """Whether the release is a folder of part files
        (:attr:`EngineTraits.release_is_folder`)."""
        return self.traits.release_is_folder

    @abstractmethod
    def columns(self) -> list[str] | None:
        """The input's column names, read without its data and without starting an engine
        where possible: None where only the engine can read them (a URI on Spark). DataError
        for a missing input or a column name given twice."""

    @abstractmethod
    def frame(self) -> Any:
        """The input in the engine's own frame (a pandas DataFrame, a Spark DataFrame), read
        once."""

    def table(self, columns: Sequence[str] | None = None) -> pd.DataFrame:
        """The input as a pandas table read on this machine (read once; a copy of a DataFrame
        input; ``columns``: those checked and read afresh), for the commands that work
        locally on any engine."""
        from sdckit.core.io import read_table

        if columns is None and self._table is not None:
            return self._table
        spec = self.job.input
        if isinstance(spec["path"], pd.DataFrame):
            data = read_table(spec["path"])
        elif spec.get("metadata") is not None:  # a mu-Argus/tau-Argus file and its .rda
            from sdckit.core.argus import read_argus_data

            data_path = self.job._path(spec["path"])
            assert data_path is not None  # (a str path: never None)
            data = read_argus_data(  # a table keeps missing codes as categories (tau-Argus)
                self.job.argus_metadata(),
                data_path,
                encoding=spec.get("encoding", "utf-8"),
                blank_missing=not self.job.spec.dimensions,
            )
            codelists = self.job.argus_codelists()
            if codelists:  # <CODELIST>: shown by label, the codes kept for the release
                from sdckit.core.argus import apply_codelists

                data = apply_codelists(data, codelists)
            if columns is not None:  # checked as read_table checks them
                data = read_table(data, columns=list(columns))
        else:
            data = read_table(
                self.job._path(spec["path"]),
                delimiter=spec.get("delimiter"),
                encoding=spec.get("encoding", "utf-8"),
                columns=None if columns is None else list(columns),
            )
        if columns is None:
            self._table = data
        return data

    def file_meta(self) -> FileMeta | None:
        """The labels of an SPSS, Stata or SAS input or of an Argus input's codelists
        (:class:`sdckit.core.formats.FileMeta`, read with the table; those a DataFrame input
        carries in ``attrs``), which the release is written with and the report shows; None
        for another input."""
        from sdckit.core.formats import file_meta, is_stat_file

        src = self.job.input["path"]
        if isinstance(src, pd.DataFrame):
            return file_meta(src)
        if is_stat_file(str(src)) or self.job.input["metadata"] is not None:
            return file_meta(self.table())  # (an Argus file's: its codelists' labels)
        return None

    @abstractmethod
    def column_values(self, name: str) -> pd.Series:
        """A column as hierarchy builders read it: the column itself, or its distinct values
        (all a builder uses)."""

    @abstractmethod
    def frame_columns(self) -> list[str]:
        """The columns of :meth:`frame` (reading the input when :meth:`columns` cannot)."""

    def schema(self) -> Schema:
        """The job's schema on this input: roles, types, orders and hierarchies, each builder
        reading :meth:`column_values` (built once)."""
        if self._schema is None:
            self._schema = self.job.build_schema(self.frame_columns(), self.column_values)
        return self._schema

    def roles(self) -> Schema:
        """The schema as far as the attributes' roles need it (``sdckit analyze``): the
        whole :meth:`schema`, unless the engine would have to start for it."""
        return self.schema()

    @abstractmethod
    def input_delimiter(self) -> str:
        """The input's delimiter as far as known without reading more than the header
        (``,`` for a DataFrame or Parquet input): CSV outputs use it by default."""

    @abstractmethod
    def risk(
        self,
        qi: Sequence[str],
        sensitive: Sequence[str] = (),
        population: Path | None = None,
        **options: Any,
    ) -> Any:
        """The re-identification risk of the input (:func:`sdckit.risk.analyze.analyze`'s
        result, on this engine); ``population`` a table of the same format (read with the
        input's delimiter and encoding)."""

    @abstractmethod
    def cell_keys(self, table: Any, key: str) -> Any:
        """The cell keys of ``table`` from the input's record keys in column ``key``
        (:func:`sdckit.tables.cell_key.cell_keys`, the same keys bit for bit on every engine)."""

    @abstractmethod
    def microdata_table(
        self, hierarchies: dict[str, Any], response: str | None, **options: Any
    ) -> Any:
        """The :class:`~sdckit.tables.table.Table` of the input's records: every cell of the
        dimensions' ``hierarchies`` with its frequency, total of ``response`` and top
        contributions (:meth:`~sdckit.tables.table.Table.from_microdata`'s ``options``)."""

    def check_anonymization(self) -> None:  # noqa: B027 -- a hook, empty by default
        """Refuse, before the engine starts, what an anonymization job gets wrong that the
        header shows (nothing here: locally the data are read first anyway)."""

    @abstractmethod
    def anonymize(
        self, progress: Callable[[int, int], None] | None = None
    ) -> tuple[Any, dict[str, Target]]:
        """Anonymize the input as the job says (models, algorithm and its options,
        suppression limit, metric, seed) and write the verified release to ``output.path``
        inside the caller's :func:`~sdckit.core.io.output_set`: the
        :class:`~sdckit.algorithms.anonymize.AnonymizationResult` and the data files written
        (``{"data": path, ...}``; none without ``output.path`` where the engine allows it).
        ``progress(done, total)`` follows the search."""

    def check_mask(self, pipeline: Any, methods: Sequence[tuple[str, dict]], where: str) -> None:  # noqa: B027 -- a hook, empty by default
        """Refuse, before the engine starts, the steps of a mask job the engine does not run
        and what the header shows wrong (nothing here: locally the data are read first)."""

    @abstractmethod
    def mask(
        self, pipeline: Any, methods: Sequence[tuple[str, dict]], where: str, share_limit: float
    ) -> MaskRun:
        """A mask job's :class:`~sdckit.masking.pipeline.Pipeline` applied to the input with
        the job's seed, and the masked columns evaluated (``share_limit``: the share of
        released records equal to an input record above which the summary warns): a
        :class:`~sdckit.jobs.mask.MaskRun` (``where``: the key path of ``methods:`` in
        messages)."""

    def summary_fields(self) -> dict[str, Any]:
        """What a job's JSON summary says of the engine (nothing for the default engine)."""
        return {}

    def accept_remote_outputs(self, outputs: Mapping[str, str]) -> None:
        """Take the outputs at URIs of other schemes than ``file`` (by the key or flag that
        names them), before any work: ConfigError naming the first where the engine writes
        no URI (:attr:`EngineTraits.remote_outputs`); an engine that writes them checks them
        when it starts."""
        from sdckit.core.io import check_output_paths

        check_output_paths(dict(outputs), {})  # (refuses a URI, naming its key)

    @contextmanager
    def outputs(self) -> Iterator[OutputSet]:
        """The job's :func:`sdckit.core.io.output_set` (with the engine's remote file systems
        registered, where it has some): the runners write every output inside it."""
        from sdckit.core.io import output_set

        with output_set() as outputs:
            yield outputs

    @abstractmethod
    def write(self, frame: Any, path: Target, delimiter: str, neutralize: bool = False) -> Target:
        """``frame`` (this engine's) written as the release at ``path``: a file, or a folder
        of part files where :attr:`release_is_folder` (Parquet by suffix, else CSV with
        ``delimiter``; ``neutralize``: spreadsheet formulas made text). Inside the caller's
        :func:`sdckit.core.io.output_set`; returns the path written."""


class LocalSource(Source):
    """The input as a pandas table on this machine (``engine: local``, the default)."""

    name = "local"
    traits = EngineTraits()

    def columns(self) -> list[str] | None:
        """The columns of the table read (locally the header costs about what the table
        does, and no engine has to start)."""
        return self.frame_columns()

    def frame(self) -> pd.DataFrame:
        """The input table (:meth:`table`: read once; a copy of a DataFrame input)."""
        return self.table()

    def frame_columns(self) -> list[str]:
        """The columns of the table read."""
        return list(self.frame().columns)

    def column_values(self, name: str) -> pd.Series:
        """The column itself."""
        return self.frame()[name]

    def input_delimiter(self) -> str:
        """The delimiter the table was read with (sniffed or given), once read."""
        if self._table is not None:
            return str(self._table.attrs.get("delimiter", ","))
        return ","

    def risk(
        self,
        qi: Sequence[str],
        sensitive: Sequence[str] = (),
        population: Path | None = None,
        **options: Any,
    ) -> Any:
        """:func:`sdckit.risk.analyze.analyze` on the key and sensitive columns."""
        from sdckit.core.io import read_table
        from sdckit.risk.analyze import analyze

        spec = self.job.input
        data = self.table(columns=[*qi, *sensitive])
        pop = None
        if population is not None:
            pop = read_table(
                population,
                delimiter=spec.get("delimiter"),
                encoding=spec.get("encoding", "utf-8"),
            )
        return analyze(data, list(qi), population=pop, sensitive=list(sensitive), **options)

    def cell_keys(self, table: Any, key: str) -> Any:
        """:func:`sdckit.tables.cell_key.cell_keys` on the table read."""
        from sdckit.tables.cell_key import cell_keys

        return cell_keys(self.frame(), table, key=key)

    def microdata_table(
        self, hierarchies: dict[str, Any], response: str | None, **options: Any
    ) -> Any:
        """:meth:`sdckit.tables.table.Table.from_microdata` on the table read."""
        from sdckit.tables.table import Table

        return Table.from_microdata(self.frame(), hierarchies, response, **options)

    def anonymize(
        self, progress: Callable[[int, int], None] | None = None
    ) -> tuple[Any, dict[str, Target]]:
        """:func:`sdckit.algorithms.anonymize.anonymize` on the table read; the release (and
        an algorithm's extra tables, e.g. Anatomy's sensitive table, beside it as
        ``<stem>.<name><suffix>``) written with :func:`sdckit.core.io.write_table`."""
        from sdckit.algorithms.anonymize import anonymize
        from sdckit.core.io import write_table

        job = self.job
        result = anonymize(
            self.frame(),
            job.schema,
            job.models,
            suppression_limit=job.suppression_limit,
            metric=job.metric,
            algorithm=job.algorithm,
            seed=job.seed,
            progress=progress,
            **job.algorithm_options,
        )
        out = job.output
        written: dict[str, Target] = {}
        if out.path is not None:
            meta = self.file_meta()
            written["data"] = write_table(
                result.data,
                out.path,
                out.delimiter,
                neutralize=out.neutralize_formulas,
                meta=meta,
            )
            release = Path(out.path)  # (a local path: this engine writes no URI)
            for name, table in getattr(result, "extra_tables", {}).items():
                extra = release.with_name(f"{release.stem}.{name}{release.suffix}")
                written[name] = write_table(
                    table, extra, out.delimiter, neutralize=out.neutralize_formulas, meta=meta
                )
        return result, written

    def mask(
        self, pipeline: Any, methods: Sequence[tuple[str, dict]], where: str, share_limit: float
    ) -> MaskRun:
        """:func:`sdckit.jobs.mask.mask_locally`: the steps on the table read."""
        from sdckit.jobs.mask import mask_locally

        return mask_locally(self.job, pipeline, methods, where, share_limit)

    def write(self, frame: Any, path: Target, delimiter: str, neutralize: bool = False) -> Target:
        """:func:`sdckit.core.io.write_table` (CSV, Parquet, SPSS, Stata or SAS transport by
        suffix, atomically; the input file's labels with the last)."""
        from sdckit.core.io import write_table

        return write_table(frame, path, delimiter, neutralize=neutralize, meta=self.file_meta())


#: The engines a job runs on, by ``engine:`` name; the Spark engine is loaded on first use.
ENGINES: Registry[EngineTraits] = Registry("engine", EngineTraits())
ENGINES.add("local", LocalSource, LocalSource.traits)
ENGINES.add(
    "spark",
    "sdckit.spark.source:SparkSource",
    EngineTraits(distributed=True, release_is_folder=True, remote_outputs=True),
)


def check_engine(name: str) -> str:
    """``name`` when it is an engine of :data:`ENGINES` (``--engine``), else ConfigError."""
    if name not in ENGINES:
        raise ConfigError(f"--engine must be {' or '.join(ENGINES.names())}, got {name!r}")
    return ENGINES.canonical(name)


def open_source(job: Job) -> Source:
    """The job's input on the engine its ``engine:`` names (the only reading of it)."""
    name = check_engine(job.spec.engine)
    for key in ("input", "cells"):
        section = getattr(job.spec, key)
        if (
            section is not None
            and section.metadata is not None
            and ENGINES.traits(name).distributed
        ):
            raise ConfigError(
                f"{job.key(key + '.metadata')}: mu-Argus/tau-Argus files are read on this "
                "machine; run the job with `engine: local`, or convert the data to CSV or "
                f"Parquet for the {name} engine"
            )
    source: Source = ENGINES.load(name)(job)
    return source
