"""The one job-file loader: YAML or TOML job files (or dicts) -> a validated :class:`Job`.

Every command that runs a job (``sdckit anonymize``, ``sdckit mask``, ``sdckit compare``)
reads its file through :func:`load_job`, so the same keys mean the same everywhere::

    input: {path: adult.csv, delimiter: ";"}          # or just: input: adult.csv
    attributes:
      age:        {role: quasi_identifying, type: integer, hierarchy: adult_hierarchy_age.csv}
      zip:        {role: quasi_identifying, hierarchy: {masking: {}}}          # builder spec
      income:     {role: quasi_identifying, type: integer,
                   hierarchy: {interval: {widths: [10000, 50000], bottom: 0}}}
      occupation: {role: sensitive}
      name:       {role: identifying}                 # dropped from every output
      id:         {role: identifying, pseudonymize: {key_env: SDCKIT_KEY, length: 16}}
    models:
      - k_anonymity: {k: 5}
      - l_diversity: {attribute: occupation, l: 3, variant: distinct}
      - t_closeness: {attribute: occupation, t: 0.2, distance: equal}
    suppression_limit: 0.05
    metric: {name: loss}                              # or just: metric: loss
    algorithm: optimal
    options: {}                                       # algorithm-specific options
    methods:                                          # masking steps, applied in order
      - microaggregation: {columns: [a, b], k: 3, method: mdav}
    output: {path: out.csv, report: report.html, json: report.json}
    seed: 1

Relative paths are resolved against the job file's folder. Errors are :class:`ConfigError`
naming the file and the key (``models[1].l_diversity.l``) and saying how to fix it.

Hierarchy builder specs name one builder of :mod:`sdckit.core.hierarchy_builders` with its
parameters: ``interval`` (``widths`` or ``breakpoints``, ``bottom``, ``top``), ``order``
(``order``, ``group_sizes`` or ``groups``), ``masking`` (``mask_char``), ``date`` (``format``,
``levels``). A string is the path of a hierarchy file in ARX's format (``;``-separated).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd
import yaml

from sdckit.core.hierarchy import Hierarchy, read_hierarchy
from sdckit.core.io import check_output_paths, read_table
from sdckit.core.schema import Attribute, Schema
from sdckit.core.spec import did_you_mean
from sdckit.core.uri import Target
from sdckit.errors import (
    ConfigError,
    HierarchyError,
    ParameterError,
    SdcInputError,
    short_repr,
)
from sdckit.jobs.spec import HIERARCHY_BUILDERS, MODEL_NAMES, JobSpec

if TYPE_CHECKING:
    from sdckit.jobs.source import Source
    from sdckit.models.base import PrivacyModel

__all__ = [
    "Job",
    "OutputSpec",
    "TABLE_ONLY_KEYS",
    "job_from_dict",
    "load_job",
    "build_model",
    "MODEL_NAMES",
]


#: How a ``--spark-conf`` value looks (a message shows it).
SPARK_CONF_FORM = "--spark-conf spark.executor.memory=4g"


def spark_conf_options(values: Sequence[str]) -> dict[str, str]:
    """``--spark-conf KEY=VALUE`` values (as ``spark-submit --conf`` takes them) as a dict,
    a later key winning; split at the first ``=``, so a value may hold ``=``. A value
    without ``=`` or with an empty key is a ConfigError naming it and showing the form."""
    settings: dict[str, str] = {}
    for value in values:
        key, sep, setting = value.partition("=")
        if not sep or not key.strip():
            raise ConfigError(
                f"--spark-conf {value!r}: give a Spark setting as KEY=VALUE, e.g. {SPARK_CONF_FORM}"
            )
        settings[key.strip()] = setting
    return settings


#: The keys only a table job (``sdckit table``) reads: what another job would do without
#: them and what it uses instead (:meth:`Job.refuse_table_keys`).
TABLE_ONLY_KEYS: dict[str, tuple[str, str]] = {
    "cells": ("reads no table cells", "Give its data as `input: {path: data.csv}`"),
    "output.cells": (
        "writes no cells file",
        "Write the release with `output.path` (.csv, .parquet, .sav, .dta, .xpt)",
    ),
    "output.excel": (
        "writes no Excel workbook",
        "Write the release with `output.path` (.csv, .parquet, .sav, .dta, .xpt)",
    ),
    "output.mark": (
        "writes no workbook (output.mark is what a table's workbook shows in a suppressed cell)",
        "",
    ),
    "output.tab": (
        "writes no tau-Argus cell file (.tab)",
        "Write the release with `output.path` (.csv, .parquet, .sav, .dta, .xpt)",
    ),
}
_TABLE_OUTPUTS = ("cells", "excel", "mark", "tab")


@dataclass(frozen=True)
class OutputSpec:
    """Where a job writes: the released data, the HTML report, the JSON summary."""

    path: Target | None = None
    report: Target | None = None
    json: Target | None = None
    delimiter: str = ","
    cells: Target | None = None
    excel: Target | None = None
    mark: str = "x"
    tab: Target | None = None
    neutralize_formulas: bool = False
    #: The columns the release folder is partitioned by (Hive layout; Spark engine only).
    partition_by: tuple[str, ...] = ()


@dataclass
class Job:
    """A validated job: its :class:`~sdckit.jobs.spec.JobSpec` (the document, typed) and
    where it came from; the properties are resolved views of it (paths made absolute
    against the job file's folder, models built with their data). What needs the data is
    read through the job's :class:`~sdckit.jobs.source.Source` (:meth:`open`), which knows
    the engine; the job itself holds no frame and no engine code."""

    spec: JobSpec
    base_dir: Path
    source: str = "the job"
    job_file: Path | None = None
    _input: Source | None = field(default=None, repr=False)
    _models: list | None = field(default=None, repr=False)

    @property
    def raw(self) -> dict[str, Any]:
        """The document as a plain mapping (the keys it gave; see :meth:`to_dict`)."""
        return self.spec.document()

    def to_dict(self) -> dict[str, Any]:
        """The job file's content: ``job_from_dict(job.to_dict(), job.base_dir)`` gives the
        same job (the serialization a job file is)."""
        return self.spec.document()

    # -- plain settings --------------------------------------------------------------------
    def key(self, path: str) -> str:
        """A key path for messages: ``'job.yaml': models[0].k_anonymity.k``."""
        return f"{self.source}: {path}"

    @property
    def input(self) -> dict[str, Any]:
        """``{path, delimiter, encoding, metadata}`` of the input (a path as given, or a
        DataFrame; ``metadata``: the Argus ``.rda`` resolved, or None)."""
        spec = self.spec.input
        if spec is None:
            raise ConfigError(f"{self.key('input')} is missing; add `input: {{path: data.csv}}`")
        return {
            "path": spec.path,
            "delimiter": spec.delimiter,
            "encoding": spec.encoding,
            "metadata": self._path(spec.metadata),
        }

    def argus_metadata(self) -> Any:
        """The :class:`~sdckit.core.argus.ArgusMetadata` of ``input.metadata`` or
        ``cells.metadata`` (read once), or None."""
        if "_argus" not in self.__dict__:
            from sdckit.jobs.argus import metadata_of

            meta = None
            for key, section in (("input", self.spec.input), ("cells", self.spec.cells)):
                if section is not None and section.metadata is not None:
                    kind = "table" if key == "cells" else "micro"
                    raw = {"metadata": section.metadata}
                    meta = metadata_of(raw, self.base_dir, kind, self.source, key)
                    break
            self.__dict__["_argus"] = meta
        return self.__dict__["_argus"]

    def argus_codelists(self) -> dict[str, dict[str, str]]:
        """The code -> label maps of the ``<CODELIST>`` files of ``input.metadata``'s
        variables (:func:`sdckit.core.argus.read_cdl`; read once), by variable: the labels a
        microdata job shows its categories by. Empty for a table job (``dimensions:`` or
        ``cells:``): a table keeps the codes its ``.hrc`` files, totals and the ``.tab`` it
        writes name, as tau-Argus does. ConfigError naming the ``.rda`` line for a codelist
        file that does not exist."""
        if "_codelists" not in self.__dict__:
            from sdckit.core.argus import read_cdl

            found: dict[str, dict[str, str]] = {}
            meta = self.argus_metadata()
            is_table = bool(self.spec.dimensions) or self.spec.cells is not None
            if meta is not None and self.spec.input is not None and not is_table:
                for var in meta.variables:
                    if var.codelist is None:
                        continue
                    path = meta.file(var.codelist)
                    if not path.is_file():
                        raise ConfigError(
                            f"{self.key('input.metadata')}: {meta.path.name} line {var.line}: "
                            f"<CODELIST> of {var.name!r} names {var.codelist!r}, which exists "
                            "neither as given nor beside the .rda"
                        )
                    try:
                        found[var.name] = read_cdl(path, self.spec.input.encoding)
                    except ConfigError as exc:
                        raise ConfigError(f"{self.key('input.metadata')}: {exc}") from None
            self.__dict__["_codelists"] = found
        return self.__dict__["_codelists"]

    @property
    def suppression_limit(self) -> float:
        """Share of records that may be suppressed, in [0, 1] (default 0)."""
        return self.spec.suppression_limit

    @property
    def metric(self) -> Any:
        """The :class:`~sdckit.utility.generalization.MetricSpec`, or None when the job
        names no metric (``loss`` is used where an algorithm optimizes one; the heuristics
        refuse a metric they cannot use)."""
        return self.spec.metric

    @property
    def algorithm(self) -> str:
        """Anonymization algorithm name (default ``optimal``)."""
        return self.spec.algorithm

    @property
    def algorithm_options(self) -> dict[str, Any]:
        """Algorithm-specific options (``options:``)."""
        return dict(self.spec.options)

    @property
    def seed(self) -> int | None:
        """The job's seed (None when not given)."""
        return self.spec.seed

    @property
    def methods(self) -> list[tuple[str, dict[str, Any]]]:
        """Masking steps as ``(name, parameters)`` pairs, in order."""
        return [(name, dict(params)) for name, params in self.spec.methods]

    @property
    def output(self) -> OutputSpec:
        """Output paths (resolved against the job file's folder; a ``file://`` URI is the
        local path it names, see :meth:`_output_path`)."""
        spec = self.spec.output
        return OutputSpec(
            path=self._output_path("path", spec.path),
            report=self._output_path("report", spec.report),
            json=self._output_path("json", spec.json),
            delimiter=spec.delimiter or self._input_delimiter(),
            neutralize_formulas=spec.neutralize_formulas,
            cells=self._output_path("cells", spec.cells),
            excel=self._output_path("excel", spec.excel),
            mark="x" if spec.mark is None else spec.mark,
            tab=self._output_path("tab", spec.tab),
            partition_by=self._partition_by(spec.partition_by),
        )

    def _partition_by(self, columns: Sequence[str] | None) -> tuple[str, ...]:
        """``output.partition_by``: the release's columns that name its Hive partition
        folders (``sex=Female/part-...``); ConfigError naming the key on an engine whose
        release is one file (``engine: local``) or for a column given twice."""
        if not columns:
            return ()
        where = self.key("output.partition_by")
        source = self.open()  # starts no engine
        if not source.release_is_folder:
            raise ConfigError(
                f"{where}: the {source.name} engine writes its release as one file, "
                "which has no partitions; use `engine: spark` (or --engine spark), or remove "
                f"{where}"
            )
        if len(set(columns)) != len(columns):
            raise ConfigError(f"{where} names a column twice ({', '.join(columns)})")
        return tuple(columns)

    def _output_path(self, name: str, value: str | None) -> Target | None:
        """``output.<name>`` as a path: a ``file://`` URI is the local path it names (never
        resolved against the job file's folder); a URI of another scheme stays its text
        where the engine writes URIs (:attr:`~sdckit.jobs.source.EngineTraits.remote_outputs`:
        the Spark engine, through Hadoop's file systems) and is a ConfigError naming the key
        on another; a plain path as :meth:`_path` resolves it."""
        from sdckit.core.uri import file_uri_path, uri_scheme
        from sdckit.jobs.source import ENGINES, check_engine

        scheme = uri_scheme(value)
        if scheme is None or value is None:
            return self._path(value)
        where = self.key(f"output.{name}")
        if scheme == "file":
            return file_uri_path(value, where)
        if ENGINES.traits(check_engine(self.spec.engine)).remote_outputs:
            return value
        raise ConfigError(
            f"{where} {value!r} is a {scheme}:// URI: the {self.spec.engine} engine writes "
            "local (or mounted) paths and file:// URIs; use `engine: spark` (or --engine "
            "spark), which writes through Hadoop's file systems, or a local path"
        )

    def with_output(self, **paths: str | Path | None) -> Job:
        """The same job writing elsewhere (``path``, ``report``, ``json``, ``delimiter``)."""
        given = self.spec.output.model_dump(exclude_unset=True)
        given.update({k: (str(v) if isinstance(v, Path) else v) for k, v in paths.items()})
        spec = self.spec.with_params(output=given)
        return Job(spec, self.base_dir, self.source, self.job_file, self._input)

    def with_input(self, **settings: str | None) -> Job:
        """The same job reading its input with other ``delimiter``/``encoding`` settings
        (``None`` keeps the job's); opened afresh."""
        given = self.spec.input.model_dump(exclude_unset=True) if self.spec.input else {}
        given.update({k: v for k, v in settings.items() if v is not None})
        spec = self.spec.with_params(input=given)
        return Job(spec, self.base_dir, self.source, self.job_file)

    def _input_delimiter(self) -> str:
        """The input's delimiter (given, or as the source knows it: sniffed): CSV outputs use
        it unless ``output.delimiter`` says otherwise; ``,`` for a DataFrame or Parquet input."""
        given = self.spec.input.delimiter if self.spec.input is not None else None
        if given:
            return given
        if self.spec.input is None:
            return ","
        return self.open().input_delimiter()

    def check_outputs(
        self,
        overrides: Mapping[str, Target | None] | None = None,
        inputs: Mapping[str, str | Path | None] | None = None,
    ) -> None:
        """Refuse output paths that would overwrite an input or one another, before any work.

        ``overrides`` maps a command-line flag (``"--json"``) to the path that replaces the
        job's own (``None`` = not given); ``inputs`` adds input files beyond ``input.path``
        (named as they should appear in messages). Where the job's source writes the release
        as a folder of part files (:attr:`~sdckit.jobs.source.Source.release_is_folder`),
        ``output.path`` is checked as a folder and a folder input counts too. See
        :func:`sdckit.core.io.check_output_paths`. Outputs at URIs of other schemes than
        ``file`` go to the source (:meth:`~sdckit.jobs.source.Source.accept_remote_outputs`:
        refused, or checked when the engine starts).
        """
        from sdckit.core.uri import file_uri_path, is_remote, output_target, uri_scheme

        out = self.output
        outputs: dict[str, Target | None] = {
            self.key("output.path"): out.path,
            self.key("output.report"): out.report,
            self.key("output.json"): out.json,
            self.key("output.cells"): out.cells,
            self.key("output.excel"): out.excel,
            self.key("output.tab"): out.tab,
        }
        if out.tab is not None:
            outputs[self.key("output.tab (its .rda)")] = _rda_beside(out.tab)
        own = {"--json": self.key("output.json"), "--html": self.key("output.report")}
        for flag, path in (overrides or {}).items():
            if path is not None:
                outputs.pop(own.get(flag, ""), None)
                outputs[flag] = output_target(path, flag)
        remote = {k: str(v) for k, v in outputs.items() if is_remote(v)}
        self.open().accept_remote_outputs(remote)
        outputs = {k: v for k, v in outputs.items() if k not in remote}
        given: dict[str, str | Path | None] = dict(self.input_files())
        given.update({k: v for k, v in (inputs or {}).items() if v is not None})
        folders: tuple[str, ...] = ()
        if self.open().release_is_folder:
            folders = (self.key("output.path"),)
            src = self.spec.input.path if self.spec.input is not None else None
            if isinstance(src, str) and "://" not in src:
                given[self.key("input.path")] = self._path(src)  # a folder input counts too
            elif uri_scheme(src) == "file":
                given[self.key("input.path")] = file_uri_path(str(src), self.key("input.path"))
        check_output_paths(outputs, given, folders)

    def refuse_table_keys(self, kind: str) -> None:
        """ConfigError naming the first key of :data:`TABLE_ONLY_KEYS` the job gives, the
        job's ``kind`` (``anonymize``, ``mask``, ``synthesize``, ``analyze``, ``compare``)
        and what to use instead: only a table job reads these keys, so another job would
        accept them and write less than the file asks (an ``output.excel`` it never
        writes)."""
        given = {"cells": self.spec.cells}
        given.update({f"output.{k}": getattr(self.spec.output, k) for k in _TABLE_OUTPUTS})
        article = "an" if kind[:1] in "aeiou" else "a"
        for key, (what, instead) in TABLE_ONLY_KEYS.items():
            if given.get(key) is not None:
                raise ConfigError(
                    f"{self.key(key)}: {article} {kind} job {what}; only a table job "
                    f"(`sdckit table`) reads {key}. "
                    + (f"{instead}, and remove {key}" if instead else f"Remove {key}")
                )

    def require_outputs(self, *given: str | Path | None) -> None:
        """ConfigError when the job would write nothing: no ``output`` path, report or JSON
        and none of the command-line outputs ``given`` (the commands call this, so that a job
        never exits successfully without a word; the Python runners may run output-less)."""
        out = self.output
        if all(
            v is None
            for v in (out.path, out.report, out.json, out.cells, out.excel, out.tab, *given)
        ):
            raise ConfigError(
                f"{self.key('output')}: the job writes nothing; add e.g. `output: {{path: "
                "out.csv, report: report.html, json: report.json}` (or pass --json FILE)"
            )

    def input_files(self) -> dict[str, Path]:
        """Every file the job reads, by the key that names it: the job file itself, the
        input data, hierarchy files, population or research tables, key files, the grid's
        protected files -- any value outside ``output`` that names an existing file."""
        found: dict[str, Path] = {}
        if self.job_file is not None:
            found["the job file"] = self.job_file

        def walk(value: Any, where: str) -> None:
            if isinstance(value, str):
                if not value or len(value) > 4096 or "\n" in value:
                    return
                try:
                    path = self._path(value)
                    if path is not None and path.is_file():
                        found[self.key(where)] = path
                except (OSError, ValueError):
                    return
            elif isinstance(value, Mapping):
                for k, v in value.items():
                    walk(v, f"{where}.{k}" if where else str(k))
            elif isinstance(value, (list, tuple)):
                for i, v in enumerate(value):
                    walk(v, f"{where}[{i}]")

        walk({k: v for k, v in self.raw.items() if k != "output"}, "")
        return found

    def _path(self, value: str | None) -> Path | None:
        """A path the job file gives, resolved against its folder; a ``file://`` URI is the
        local path it names."""
        if value is None:
            return None
        from sdckit.core.uri import file_uri_path, uri_scheme

        if uri_scheme(value) == "file":
            return file_uri_path(value, "path")
        p = Path(value).expanduser()
        return p if p.is_absolute() else self.base_dir / p

    # -- things that need the data -----------------------------------------------------------
    def open(self) -> Source:
        """The job's input on the engine the job names (:func:`sdckit.jobs.source.open_source`),
        opened once: what the runners read the data through."""
        if self._input is None:
            from sdckit.jobs.source import open_source

            self._input = open_source(self)
        return self._input

    def read_input(self) -> pd.DataFrame:
        """The input table read on this machine (read once; a copy of a DataFrame input)."""
        return self.open().table()

    def with_engine(
        self,
        engine: str | None = None,
        master: str | None = None,
        conf: Sequence[str] | None = None,
    ) -> Job:
        """The same job on another engine (``--engine``), Spark master (``--spark-master``)
        and Spark settings (``--spark-conf KEY=VALUE``, each merged into ``spark.conf``, the
        command line winning over the job file); ``None`` keeps the job file's. A setting
        that is not ``KEY=VALUE`` is a ConfigError (:func:`spark_conf_options`)."""
        changes: dict[str, Any] = {}
        if engine is not None:
            from sdckit.jobs.source import check_engine

            changes["engine"] = check_engine(engine)
        spark = self.spec.spark.model_dump()
        if master is not None:
            spark["master"] = master
        if conf:
            spark["conf"] = {**spark["conf"], **spark_conf_options(conf)}
        if master is not None or conf:
            changes["spark"] = spark
        if not changes:
            return self
        spec = self.spec.with_params(**changes)
        return Job(spec, self.base_dir, self.source, self.job_file)

    @property
    def schema(self) -> Schema:
        """The schema of the input: roles, types, orders, hierarchies (built from the data;
        on Spark from each attribute's distinct values, all a hierarchy builder reads)."""
        return self.open().schema()

    def column_values(self, name: str) -> pd.Series:
        """A column of the input as hierarchy builders read it: the column itself, or on
        Spark its distinct values (all a builder uses)."""
        return self.open().column_values(name)

    def require_column(self, name: str, columns: Sequence[str], where: str) -> None:
        """ConfigError naming ``where`` when ``name`` is not one of the input's ``columns``."""
        if name not in columns:
            raise ConfigError(
                f"{self.key(where)}: column {name!r} is not in the input; its columns "
                f"are {', '.join(map(str, columns))}{did_you_mean(name, columns)}"
            )

    def check_attributes(self, columns: Sequence[str] | None) -> None:
        """What the schema needs, checked without the data (a Spark job calls this before
        Spark starts): every attribute a column of the input (when its ``columns`` are
        known), every hierarchy file readable and every builder's parameters valid, every
        pseudonymization key available. The errors are those :attr:`schema` raises."""
        from sdckit.core.pseudonymize import pseudonym_settings

        for name, spec in self.spec.attributes.items():
            where = f"attributes.{name}"
            if columns is not None:
                self.require_column(name, columns, where)
            if spec.hierarchy is not None:
                self.check_hierarchy(spec.hierarchy, name, f"{where}.hierarchy")
            if spec.pseudonymize is not None:
                pseudonym_settings(name, self._pseudonymize(spec), self.base_dir)

    def models_without_data(self) -> list | None:
        """:attr:`models` when building them reads nothing of the input (no model takes a
        hierarchy built from the data or the schema's), else None: a Spark job validates
        its models this way before Spark starts."""
        from sdckit.models import MODELS

        if any(MODELS.traits(name).needs_data(params) for name, params in self.spec.models):
            return None
        return self.models

    @property
    def models(self) -> list:
        """The privacy models (:mod:`sdckit.models` objects), in file order."""
        if self._models is None:
            self._models = [
                build_model(name, params, self, f"models[{i}].{name}")
                for i, (name, params) in enumerate(self.spec.models)
            ]
        return self._models

    def schema_without_data(self, columns: Sequence[str]) -> Schema:
        """The schema's attributes, roles and types, without hierarchies (which may be built
        from the data): what a Spark job's checks before Spark starts read."""
        return self.build_schema(list(columns), None)

    def build_schema(
        self, columns: list[str], values_of: Callable[[str], pd.Series] | None
    ) -> Schema:
        """The schema of the job's attributes on an input with ``columns`` (each an input
        column, else ConfigError), each hierarchy built from ``values_of(name)`` (the
        column's values as its source reads them; ``None``: no hierarchies)."""
        attrs: dict[str, Attribute] = {}
        for name, spec in self.spec.attributes.items():
            where = f"attributes.{name}"
            self.require_column(name, columns, where)
            hierarchy = None
            if spec.hierarchy is not None and values_of is not None:
                hierarchy = self.resolve_hierarchy(
                    spec.hierarchy, partial(values_of, name), name, f"{where}.hierarchy"
                )
            pseudonymize = None
            if spec.pseudonymize is not None:
                pseudonymize = self._pseudonymize(spec)
            attrs[name] = Attribute(
                name=name,
                role=spec.role,
                type=spec.type,
                hierarchy=hierarchy,
                order=tuple(str(v) for v in spec.order) if spec.order is not None else None,
                format=spec.format,
                pseudonymize=pseudonymize,
            )
        return Schema(attrs)

    def _pseudonymize(self, spec: Any) -> dict[str, Any]:
        """An attribute's ``pseudonymize`` settings, a key file resolved."""
        settings = spec.pseudonymize.model_dump(exclude_none=True)
        if "key_file" in settings:
            settings["key_file"] = str(self._path(settings["key_file"]))
        return settings

    def check_hierarchy(self, spec: Any, name: str, where: str) -> None:
        """A ``hierarchy:`` checked without the data: a file read, a builder's parameters
        validated (the errors :meth:`resolve_hierarchy` raises)."""
        if isinstance(spec, str):
            self.resolve_hierarchy(spec, pd.Series([], dtype=object), name, where)
            return
        made = self._builder(spec, where)
        try:
            made.check()
        except SdcInputError as exc:
            if isinstance(exc, ParameterError):
                raise
            raise ConfigError(f"{self.key(f'{where}.{next(iter(spec))}')}: {exc}") from None

    def _hrc(
        self, path: Path, name: str, where: str, values: pd.Series | Callable[[], pd.Series]
    ) -> Hierarchy:
        """An Argus ``.hrc`` file as a hierarchy: the lead string of the input's metadata
        (``<HIERLEADSTRING>``, ``@`` without); the root is ``*`` for an attribute and, for a
        table's dimension, its ``total`` (else ``<TOTCODE>``, else ``Total``).

        Missing values, which a ``.hrc`` does not list, are added below the root: for an
        attribute the missing value (empty) when the column has one; for a dimension the
        variable's missing codes (a table keeps them as categories, as tau-Argus does)."""
        from sdckit.core.argus import HrcEntry, hrc_hierarchy, read_hrc

        meta = self.argus_metadata()
        var = meta.variable(name) if meta is not None else None
        lead = var.hierleadstring if var is not None else "@"
        try:
            entries = read_hrc(path, lead)
            listed = {e.code for e in entries}
            if where.startswith("dimensions."):
                dim = self.spec.dimensions.get(name)
                given = dim.total if dim is not None else None
                total = given or (var.totcode if var is not None else None) or "Total"
                extra = [m for m in (var.missing if var is not None else ()) if m not in listed]
            else:
                total = "*"
                column = values() if callable(values) else values
                blank = bool(len(column)) and bool(column.isna().any() or (column == "").any())
                extra = [""] if blank and "" not in listed else []
            entries += [HrcEntry(1, code, 0) for code in extra]
            labels = {} if where.startswith("dimensions.") else self.argus_codelists().get(name)
            if labels:  # the column shows its codes by their labels: so does its hierarchy
                entries = [HrcEntry(e.depth, labels.get(e.code, e.code), e.line) for e in entries]
            return hrc_hierarchy(entries, name=name, total=total, source=path)
        except HierarchyError as exc:
            raise HierarchyError(f"{self.key(where)}: {exc}") from None

    def _builder(self, spec: Mapping[str, Any], where: str) -> Any:
        """The hierarchy builder a ``{builder: {parameters}}`` spec names, validated."""
        ((builder, params),) = spec.items()
        key = self.key(f"{where}.{builder}")
        try:
            return HIERARCHY_BUILDERS.load(builder).from_dict(params, key)
        except (SdcInputError, TypeError, ValueError) as exc:
            if isinstance(exc, ParameterError):
                raise
            raise ConfigError(f"{key}: {exc}") from None

    def resolve_hierarchy(
        self, spec: Any, values: pd.Series | Callable[[], pd.Series], name: str, where: str
    ) -> Hierarchy:
        """The hierarchy an attribute's ``hierarchy:`` names: an ARX CSV file, or a builder
        run on the column's ``values`` (a callable is called only for a builder)."""
        if isinstance(spec, str):
            path = self._path(spec)
            if path is None or not path.is_file():
                raise ConfigError(
                    f"{self.key(where)}: hierarchy file {str(path)!r} does not exist; give the "
                    "path of an ARX hierarchy CSV (relative to the job file) or a builder "
                    f"spec ({', '.join(HIERARCHY_BUILDERS)})"
                )
            if path.suffix.lower() == ".hrc":
                return self._hrc(path, name, where, values)
            return read_hierarchy(path, name=name)
        made = self._builder(spec, where)
        where = self.key(f"{where}.{next(iter(spec))}")
        try:
            column = values() if callable(values) else values
            return made.build(column, name=name)
        except (SdcInputError, TypeError, ValueError) as exc:
            if isinstance(exc, ParameterError):
                raise
            raise ConfigError(f"{where}: {exc}") from None


# -- privacy models ----------------------------------------------------------------------------
def model_classes() -> dict[str, type[PrivacyModel]]:
    """Job-file name -> privacy model class (:class:`~sdckit.models.base.PrivacyModel`);
    imports every model (a job loads only the ones it names, :func:`build_model`)."""
    from sdckit.models import MODELS

    return {name: MODELS.load(name) for name in MODELS}


def build_model(name: str, params: Mapping[str, Any], job: Job, where: str):
    """One privacy model from its job-file entry.

    The entry is the model's serialization (:meth:`~sdckit.core.spec.Spec.to_entry`) except
    for the data it names by path: a population table (``population: pop.csv``) is read
    and the hierarchy of hierarchical t-closeness or personalized privacy (a path, a builder
    spec, or the attribute's own hierarchy) is built before the model is validated.
    """
    params = dict(params)
    if "population" in params and isinstance(params["population"], str):
        path = job._path(params["population"])
        delimiter = job.spec.input.delimiter if job.spec.input is not None else None
        params["population"] = read_table(path, delimiter=delimiter)
    from sdckit.models import MODELS

    if MODELS.traits(name).reads_hierarchy(params):
        h = params.get("hierarchy")
        attr = params.get("attribute")
        if isinstance(h, (str, Mapping)):
            params["hierarchy"] = job.resolve_hierarchy(
                h, lambda: job.column_values(str(attr)), str(attr), f"{where}.hierarchy"
            )
        elif h is None and attr in job.spec.attributes:
            params["hierarchy"] = job.schema.hierarchy(attr)
    return MODELS.load(name).from_dict(params, job.key(where))


# -- loading -------------------------------------------------------------------------------------
def load_job(path: str | Path) -> Job:
    """Read and validate a YAML (``.yaml``/``.yml``) or TOML (``.toml``) job file."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"job file {str(p)!r} does not exist; check the path")
    size = p.stat().st_size
    if size > MAX_JOB_FILE_BYTES:
        raise ConfigError(
            f"job file {str(p)!r} is {size:,} bytes; a job file is at most "
            f"{MAX_JOB_FILE_BYTES:,} bytes (put data in the input file, not in the job)"
        )
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"job file {str(p)!r} is not UTF-8 text ({exc.reason})") from None
    if p.suffix.lower() == ".toml":
        import tomllib  # (only for TOML job files: 4 ms of import)

        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise _not_valid(p, exc) from None
    else:
        try:
            doc = load_yaml_checked(text, p)
        except yaml.YAMLError as exc:
            raise _not_valid(p, exc) from None
    job = job_from_dict(doc, base_dir=p.resolve().parent, source=repr(str(p)))
    job.job_file = p
    return job


def _not_valid(path: Path, exc: Exception) -> ConfigError:
    """The error for a job file its parser refuses (the parser's message, shortened)."""
    return ConfigError(
        f"job file {str(path)!r} is not valid {path.suffix[1:] or 'YAML'}: "
        f"{short_repr(str(exc), 600)[1:-1]}"
    )


#: The largest job file read (bytes) and the most values its YAML may expand to (aliases
#: included): a job names files and parameters, so these bounds are generous, and they stop
#: an alias bomb ("billion laughs") before it costs memory or time.
MAX_JOB_FILE_BYTES = 5_000_000
MAX_JOB_VALUES = 200_000


#: libyaml's safe loader where PyYAML was built with it (same constructor and resolver as
#: ``yaml.SafeLoader``, so the same values; parsing in C: a job file in 1 ms instead of 10)
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml_checked(text: str, path: Path) -> Any:
    """The YAML document in ``text`` as ``yaml.safe_load`` reads it, parsed once: its node
    tree is sized by :func:`_check_yaml_size` (an alias bomb is refused before anything is
    built) and then constructed. Raises ``yaml.YAMLError`` for text that is not YAML."""
    loader = _SAFE_LOADER(text)
    try:
        root = loader.get_single_node()
        _check_yaml_size(root, path)
        return None if root is None else loader.construct_document(root)
    finally:
        loader.dispose()


def _check_yaml_size(root: yaml.Node | None, path: Path) -> None:
    """ConfigError when the composed YAML expands to more than :data:`MAX_JOB_VALUES` values
    (each alias counts as a full copy of what it names) or an alias refers to itself."""
    if root is None:
        return
    sizes: dict[int, int] = {}
    active: set[int] = set()

    def expanded(node: yaml.Node) -> int:
        key = id(node)
        if key in sizes:
            return sizes[key]
        if key in active:
            raise ConfigError(f"job file {str(path)!r}: a YAML alias refers to itself; remove it")
        active.add(key)
        total = 1
        if isinstance(node, yaml.SequenceNode):
            for child in node.value:
                total += expanded(child)
                if total > MAX_JOB_VALUES:
                    break
        elif isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                total += expanded(k) + expanded(v)
                if total > MAX_JOB_VALUES:
                    break
        active.discard(key)
        if total > MAX_JOB_VALUES:
            raise ConfigError(
                f"job file {str(path)!r} expands to more than {MAX_JOB_VALUES:,} values "
                "(YAML anchors and aliases repeat what they name); a job needs far fewer: "
                "write the values out or remove the aliases"
            )
        sizes[key] = total
        return total

    expanded(root)


def job_from_dict(
    document: Mapping[str, Any] | None, base_dir: str | Path = ".", source: str = "the job"
) -> Job:
    """Validate a job given as a dict (what a job file holds); paths resolve in ``base_dir``.

    Raises :class:`~sdckit.errors.ParameterError` naming ``source`` and the key path.
    """
    if document is None:
        document = {}
    if not isinstance(document, Mapping):
        raise ConfigError(f"{source} must be a mapping of keys (input, attributes, ...)")
    if _names_metadata(document):
        from sdckit.jobs.argus import expand_document

        document = expand_document(document, Path(base_dir), source)
    spec = JobSpec.from_dict(document, f"{source}: ")
    return Job(spec=spec, base_dir=Path(base_dir), source=source)


def _names_metadata(document: Mapping[str, Any]) -> bool:
    """Whether ``input:`` or ``cells:`` names an Argus ``metadata:`` file."""
    return any(
        isinstance(document.get(k), Mapping) and "metadata" in document[k]
        for k in ("input", "cells")
    )


def _rda_beside(tab: Target) -> Target:
    """The ``.rda`` written beside a ``.tab`` output (same name, ``.rda`` suffix)."""
    if isinstance(tab, Path):
        return tab.with_suffix(".rda")
    return str(tab).rsplit(".", 1)[0] + ".rda"
