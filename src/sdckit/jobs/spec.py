"""What a job file may say, declared once: the job document as typed, frozen specs.

A job file (YAML or TOML) is the serialization of a :class:`JobSpec`: every key, its type,
its default and its allowed values are declared here, validated once when the file is read
(:func:`sdckit.jobs.config.load_job`), and :meth:`JobSpec.document` gives the file's content
back (load -> dump -> load is the identity). The privacy models, masking methods and the metric
the document names are specs of their own packages (:mod:`sdckit.models`,
:mod:`sdckit.masking.pipeline`, :class:`sdckit.utility.generalization.MetricSpec`).

A bad document raises :class:`~sdckit.errors.ParameterError` (a
:class:`~sdckit.errors.ConfigError`) naming the file and the key path, e.g.
``'job.yaml': attributes.age.role must be one of identifying, quasi_identifying, ...``.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, ClassVar

import pandas as pd
from pydantic import BeforeValidator, Field, StrictBool, field_validator, model_validator
from pydantic_core import PydanticCustomError

from sdckit.core.hierarchy_registry import HIERARCHY_BUILDERS
from sdckit.core.params import SuppressionLimit
from sdckit.core.schema import DataType, Role
from sdckit.core.spec import Integer, Number, Spec, parse_entry
from sdckit.errors import short_repr
from sdckit.jobs.source import ENGINES
from sdckit.models import MODELS
from sdckit.utility.generalization import MetricSpec

__all__ = [
    "AttributeSection",
    "HIERARCHY_BUILDERS",
    "InputSection",
    "JobSpec",
    "MODEL_NAMES",
    "OutputSection",
    "RULE_NAMES",
    "PseudonymizeSection",
]

#: The privacy model names a job file may use: those of :data:`sdckit.models.MODELS`
#: (each the ``spec_name`` of a class of :mod:`sdckit.models`; a test checks that they agree).
#: The hierarchy builders a job file may name are those of :data:`HIERARCHY_BUILDERS`.
MODEL_NAMES = MODELS.names()
#: The sensitivity rules of :mod:`sdckit.tables.rules` a table job may name.
RULE_NAMES = ("frequency", "dominance", "p_percent", "pq", "zero", "request")


class JobPart(Spec):
    """A section of a job file (its fields are called keys in messages)."""

    spec_noun: ClassVar[str] = "key"


def _named_entry(item: Any, known: Sequence[str] | None, example: str) -> tuple[str, dict]:
    """One ``- name: {parameters}`` list entry (pydantic adds the entry's position)."""
    return parse_entry(item, known, example)


def _model_entry(item: Any) -> tuple[str, dict]:
    return _named_entry(item, MODEL_NAMES, "- k_anonymity: {k: 5}")


def _rule_entry(item: Any) -> tuple[str, dict]:
    return _named_entry(item, RULE_NAMES, "- frequency: {threshold: 3}")


def _method_entry(item: Any) -> tuple[str, dict]:
    return _named_entry(item, None, "- microaggregation: {columns: [a, b], k: 3}")


def _column_list(value: Any) -> Any:
    if isinstance(value, str):
        value = [c.strip() for c in value.split(",") if c.strip()]
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        raise ValueError("must be a list of column names")
    return value


def _list_of_entries(value: Any) -> Any:
    if not isinstance(value, list):
        raise ValueError("must be a list of entries like `- name: {parameters}`")
    return value


def _engine_name(value: Any) -> Any:
    """``engine:`` one of the names of :data:`sdckit.jobs.source.ENGINES` (worded as any
    other choice: ``must be one of local, spark``)."""
    if not isinstance(value, str) or value not in ENGINES:
        expected = " or ".join(repr(name) for name in ENGINES.names())
        raise PydanticCustomError(
            "literal_error", "Input should be {expected}", {"expected": expected}
        )
    return ENGINES.canonical(value)


def _linked_tables(value: Any) -> Any:
    """``tables:`` of a table job: linked tables over the job's dimensions, a list of
    dimension lists (each table named by its dimensions, ``region x gender``) or a mapping
    name -> dimension list; normalized to the mapping."""
    if value is None:
        return None
    example = (
        "`tables: [[region, gender], [region, age]]` or `tables: {by_gender: [region, gender]}`"
    )
    items: list[tuple[str | None, Any]]
    if isinstance(value, Mapping):
        items = [(str(k), v) for k, v in value.items()]
    elif isinstance(value, list):
        items = [(None, v) for v in value]
    else:
        raise ValueError(f"must list the linked tables' dimensions, e.g. {example}")
    if not items:
        raise ValueError(f"names no table; e.g. {example}")
    out: dict[str, list[str]] = {}
    for i, (name, dims) in enumerate(items):
        where = f"table {name!r}" if name is not None else f"entry {i}"
        try:
            dims = _column_list(dims)
        except ValueError:
            raise ValueError(
                f"{where} must be a list of dimension names, got {short_repr(dims)}; e.g. {example}"
            ) from None
        if not dims:
            raise ValueError(f"{where} names no dimension")
        if len(set(dims)) != len(dims):
            raise ValueError(f"{where} names a dimension twice ({', '.join(dims)})")
        label = name if name is not None else " x ".join(dims)
        if label in out:
            raise ValueError(f"{where} repeats table {label!r}; give each table once")
        out[label] = dims
    return out


ModelEntry = Annotated[tuple[str, dict[str, Any]], BeforeValidator(_model_entry)]
MethodEntry = Annotated[tuple[str, dict[str, Any]], BeforeValidator(_method_entry)]
RuleEntry = Annotated[tuple[str, dict[str, Any]], BeforeValidator(_rule_entry)]
ColumnNames = Annotated[list[str], BeforeValidator(_column_list)]


class InputSection(JobPart):
    """``input:`` the data file (CSV or Parquet; a DataFrame from Python) and how to read it.

    ``input: data.csv`` is short for ``input: {path: data.csv}``.

    Parameters
    ----------
    path
        The file: CSV, Parquet, and with the ``formats`` extra SPSS, Stata or SAS; on
        ``engine: spark`` also a folder of part files or any URI Spark reads.
    delimiter
        The CSV delimiter (sniffed when omitted).
    encoding
        The text encoding of a CSV file.
    metadata
        A mu-Argus / tau-Argus ``.rda`` file laying out the data (a fixed-width ``.asc`` or
        free-format file; for ``cells:``, a ``.tab`` cell file), see :mod:`sdckit.jobs.argus`.
    """

    path: str | pd.DataFrame
    delimiter: str | None = None
    encoding: str = "utf-8"
    metadata: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _short_form(cls, value: Any) -> Any:
        if isinstance(value, (str, Path, pd.DataFrame)):
            value = {"path": value}
        if isinstance(value, Mapping) and isinstance(value.get("path"), Path):
            value = {**value, "path": str(value["path"])}
        return value


with warnings.catch_warnings():  # the key `json` shadows BaseModel.json (deprecated in v2)
    warnings.simplefilter("ignore", UserWarning)

    class OutputSection(JobPart):
        """``output:`` where the job writes: the released data (``path``; a table job's
        cells: ``cells``), the HTML report, the JSON.

        Parameters
        ----------
        path
            The released data: CSV, Parquet, or (the ``formats`` extra) SPSS, Stata or SAS
            transport, by its extension.
        cells
            Table: every cell with its status, audit interval and published value.
        excel
            Table: an Excel workbook (the ``formats`` extra).
        mark
            Table: what a suppressed cell shows in the workbook (default ``x``).
        report
            The HTML report.
        json
            The JSON summary.
        delimiter
            The delimiter of a CSV release.
        neutralize_formulas
            Prefix cells a spreadsheet would run as formulas (``=``, ``+``, ``-``, ``@``)
            with ``'``.
        partition_by
            Spark: write the release as Hive partition folders of these columns.
        tab
            Table: the protected table as a tau-Argus cell file (``.tab``, status letters
            S/U/M/E), its ``.rda`` and ``.hrc`` files beside it.
        """

        path: str | None = None
        cells: str | None = None
        #: a table job's Excel workbook (one sheet per table, ``status``, ``settings``) and
        #: what its suppressed cells show (``mark``, default ``x``)
        excel: str | None = None
        mark: str | None = None
        report: str | None = None
        # the job-file key is `json`; as a field it replaces BaseModel's deprecated json()
        # method, which mypy reports as an incompatible override (the only one here)
        json: str | None = None  # type: ignore[assignment]
        delimiter: str | None = None
        neutralize_formulas: StrictBool = False
        partition_by: ColumnNames | None = None
        #: a table job's protected table as a tau-Argus cell file (its .rda and .hrc beside)
        tab: str | None = None


class PseudonymizeSection(JobPart):
    """``pseudonymize:`` of an identifying attribute: the secret key (exactly one of an
    environment variable or a key file) and the pseudonym length.

    Parameters
    ----------
    key_env
        The environment variable holding the secret key.
    key_file
        The file holding the secret key.
    length
        The pseudonym's length in hex digits of HMAC-SHA256 (8 to 64; default 16).
    """

    key_env: str | None = None
    key_file: str | None = None
    length: Integer | None = None

    @model_validator(mode="after")
    def _one_key(self) -> PseudonymizeSection:
        if (self.key_env is None) == (self.key_file is None):
            raise ValueError("needs exactly one of key_env or key_file")
        return self


class AttributeSection(JobPart):
    """One column under ``attributes:``: role, type, hierarchy, order, date format and
    pseudonymization. ``age: quasi_identifying`` is short for ``age: {role: ...}``.

    ``hierarchy`` is the path of an ARX hierarchy CSV or one builder with its parameters
    (``{interval: {widths: [10, 20]}}``, ``{order: {...}}``, ``{masking: {}}``,
    ``{date: {...}}``).

    Parameters
    ----------
    role
        ``identifying`` (dropped, or pseudonymized), ``quasi_identifying``, ``sensitive`` or
        ``insensitive``.
    type
        How values are read and compared: ``nominal``, ``ordinal``, ``integer``, ``decimal``
        or ``date``.
    hierarchy
        The generalization hierarchy: an ARX hierarchy CSV or one builder.
    order
        An ordinal attribute's categories, lowest first.
    format
        The strptime format of a date attribute.
    pseudonymize
        An identifying attribute kept as keyed HMAC tokens instead of dropped.
    """

    role: Role = Role.INSENSITIVE
    type: DataType = DataType.NOMINAL
    hierarchy: str | dict[str, Any] | None = None
    order: list[Any] | None = None
    format: str | None = None
    pseudonymize: PseudonymizeSection | None = None

    @model_validator(mode="before")
    @classmethod
    def _short_form(cls, value: Any) -> Any:
        if value is None:
            return {}
        if isinstance(value, str):
            return {"role": value}
        if isinstance(value, Mapping) and value.get("pseudonymize") is True:
            raise ValueError(
                "pseudonymize needs a key: `{key_env: SDCKIT_KEY}` or `{key_file: secret.key}` "
                "(an unkeyed hash can be reversed by hashing every candidate value)"
            )
        return value

    @field_validator("hierarchy", mode="before")
    @classmethod
    def _hierarchy(cls, value: Any) -> Any:
        if value is None or isinstance(value, str):
            return value
        name, params = _named_entry(value, HIERARCHY_BUILDERS.names(), "{interval: {widths: [10]}}")
        return {name: params}

    @field_validator("order", mode="before")
    @classmethod
    def _order(cls, value: Any) -> Any:
        if value is not None and not isinstance(value, list):
            raise ValueError("must list the categories lowest first")
        return value

    @model_validator(mode="after")
    def _pseudonymize_identifiers_only(self) -> AttributeSection:
        if self.pseudonymize is not None and self.role != Role.IDENTIFYING:
            raise ValueError(
                "only identifying attributes are pseudonymized; set `role: identifying`"
            )
        return self


class SparkSection(JobPart):
    """``spark:`` where an ``engine: spark`` job runs: the Spark ``master`` (``local[2]`` by
    default; ``spark://host:7077``, ``yarn``, ``k8s://...`` on a cluster) and extra Spark
    settings under ``conf`` (``spark.executor.memory: 8g``).

    Parameters
    ----------
    master
        The Spark master.
    conf
        Spark settings (``--spark-conf KEY=VALUE`` on the command line wins over them).
    """

    master: str = "local[2]"
    conf: dict[str, str | int | float | bool] = Field(default_factory=dict)


class DimensionSection(JobPart):
    """One spanning variable of a table job under ``dimensions:``: its hierarchy (as an
    attribute's: a file or a builder) and, for a flat dimension, the code of its total.
    ``region: {}`` is a flat dimension whose total is ``Total``.

    Parameters
    ----------
    hierarchy
        The dimension's hierarchy: an ARX hierarchy CSV or one builder.
    total
        A flat dimension's total code (default ``Total``).
    """

    hierarchy: str | dict[str, Any] | None = None
    total: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _short_form(cls, value: Any) -> Any:
        return {} if value is None else value

    @field_validator("hierarchy", mode="before")
    @classmethod
    def _hierarchy(cls, value: Any) -> Any:
        if value is None or isinstance(value, str):
            return value
        name, params = _named_entry(value, HIERARCHY_BUILDERS.names(), "{order: {groups: [...]}}")
        return {name: params}


class JobSpec(JobPart):
    """A whole job file. Every command reads the keys it needs; see
    :mod:`sdckit.jobs.config` for an example document.

    Parameters
    ----------
    input
        The data file (every job but a table given cell by cell).
    engine
        Where the job runs: ``local`` or ``spark`` (the Spark engine, extra ``spark``).
    spark
        The Spark master and settings of an ``engine: spark`` job.
    attributes
        Each column's role, type, hierarchy, order, date format and pseudonymization.
    models
        Anonymize: the privacy models, each ``- name: {parameters}``.
    suppression_limit
        Anonymize: the largest share of records that may be suppressed (0 to 1).
    metric
        Anonymize: the information-loss metric the optimal search minimizes.
    algorithm
        Anonymize: the search or heuristic (``optimal`` by default).
    options
        The options of the job: the algorithm's (anonymize), the job's and the method's
        (mask, synthesize, table, compare).
    methods
        Mask: the masking methods, applied in order, each ``- name: {parameters}``.
    output
        Where the job writes: the release, the HTML report, the JSON.
    seed
        The seed of every random choice except differential privacy's noise (a secret of
        the data steward: it regenerates a masking's random choices).
    columns
        Synthesize: the columns synthesized; compare: the columns masked and compared.
    qi
        Analyze and compare: the quasi-identifiers (default: the attributes with role
        ``quasi_identifying``).
    grid
        Compare: the configurations, lists expanding to their cartesian product
        (:mod:`sdckit.jobs.compare`).
    cells
        Table: the table given cell by cell (codes, ``value``, ``freq``, top contributions).
    dimensions
        Table: the spanning variables, each with its hierarchy or total code.
    tables
        Table: linked tables over the dimensions, protected consistently.
    response
        Table: the magnitude summed in each cell (omit for a frequency table).
    shadow
        Table: the column the sensitivity rules read (default the response).
    holding
        Table: the column grouping contributions of one holding, combined first.
    cost
        Table: what a suppression costs: ``value``, ``frequency``, ``unity`` or a column.
    rules
        Table: the sensitivity rules, each ``- name: {parameters}``.
    method
        Table and synthesize: the protection or synthesis method.
    epsilon
        Synthesize: the privacy budget of a differentially private method.
    delta
        Synthesize: the δ of (ε, δ)-differential privacy.
    m
        Synthesize: the number of synthetic copies.
    """

    spec_label: ClassVar[str] = "the job"

    input: InputSection | None = None
    engine: Annotated[str, BeforeValidator(_engine_name)] = "local"
    spark: SparkSection = Field(default_factory=SparkSection)
    attributes: dict[str, AttributeSection] = Field(default_factory=dict)
    models: Annotated[list[ModelEntry], BeforeValidator(_list_of_entries)] = Field(
        default_factory=list
    )
    suppression_limit: SuppressionLimit = 0.0
    metric: MetricSpec | None = None
    algorithm: str = "optimal"
    options: dict[str, Any] = Field(default_factory=dict)
    methods: Annotated[list[MethodEntry], BeforeValidator(_list_of_entries)] = Field(
        default_factory=list
    )
    output: OutputSection = Field(default_factory=OutputSection)
    seed: Annotated[Integer, Field(ge=0)] | None = None
    columns: ColumnNames | None = None
    qi: ColumnNames | None = None
    grid: Any = None
    # -- table jobs (sdckit table) --
    cells: InputSection | None = None
    dimensions: dict[str, DimensionSection] = Field(default_factory=dict)
    tables: Annotated[dict[str, list[str]] | None, BeforeValidator(_linked_tables)] = None
    response: str | None = None
    shadow: str | None = None
    holding: str | None = None
    cost: str = "value"
    rules: Annotated[list[RuleEntry], BeforeValidator(_list_of_entries)] = Field(
        default_factory=list
    )
    method: str | None = None
    # -- synthesize jobs (sdckit synthesize) --
    epsilon: Annotated[Number, Field(gt=0)] | None = None
    delta: Annotated[Number, Field(gt=0, lt=1)] | None = None
    m: Annotated[Integer, Field(ge=1)] | None = None

    @field_validator("metric", mode="before")
    @classmethod
    def _metric_name(cls, value: Any) -> Any:
        return {"name": value} if isinstance(value, str) else value

    @field_validator("attributes", "dimensions", mode="before")
    @classmethod
    def _attribute_map(cls, value: Any) -> Any:
        if not isinstance(value, Mapping):
            raise ValueError(
                "must map column names to settings, e.g. "
                "`age: {role: quasi_identifying, hierarchy: age.csv}`"
            )
        return {str(k): v for k, v in value.items()}

    @field_validator("options", mode="before")
    @classmethod
    def _options(cls, value: Any) -> Any:
        if not isinstance(value, Mapping):
            raise ValueError(f"must be a mapping, got {short_repr(value)}")
        return value

    def document(self) -> dict[str, Any]:
        """The job file's content: the keys the document gave (defaults left out), in the
        job-file form (a model or method entry as ``{name: {parameters}}``)."""
        out: dict[str, Any] = {}
        for key in self.model_fields_set:
            value = getattr(self, key)
            if key in ("models", "methods", "rules"):
                out[key] = [{name: dict(params)} for name, params in value]
            elif isinstance(value, Spec):
                out[key] = value.model_dump(exclude_unset=True)
            elif key in ("attributes", "dimensions"):
                out[key] = {
                    name: {
                        k: (str(v) if k in ("role", "type") else v)
                        for k, v in a.model_dump(exclude_unset=True).items()
                    }
                    for name, a in value.items()
                }
            else:
                out[key] = value
        order = list(type(self).model_fields)
        return {k: out[k] for k in sorted(out, key=order.index)}
