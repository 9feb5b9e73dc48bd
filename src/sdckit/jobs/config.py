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

import difflib
import inspect
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import yaml

from sdckit.core import params
from sdckit.core.hierarchy import Hierarchy, read_hierarchy
from sdckit.core.io import check_output_paths, read_table
from sdckit.core.schema import Attribute, DataType, Role, Schema
from sdckit.errors import ConfigError, SdcInputError, short_repr

__all__ = ["Job", "OutputSpec", "job_from_dict", "load_job", "build_model", "MODEL_NAMES"]

#: Every top-level key a job file may have (the commands use the ones they need).
TOP_LEVEL_KEYS = (
    "input",
    "attributes",
    "models",
    "suppression_limit",
    "metric",
    "algorithm",
    "options",
    "methods",
    "output",
    "seed",
    "columns",
    "qi",
    "grid",
)
_ATTRIBUTE_KEYS = ("role", "type", "hierarchy", "order", "format", "pseudonymize")
_INPUT_KEYS = ("path", "delimiter", "encoding")
_OUTPUT_KEYS = ("path", "report", "json", "delimiter", "neutralize_formulas")
_HIERARCHY_BUILDERS = ("interval", "order", "masking", "date")


def _did_you_mean(word: str, choices) -> str:
    close = difflib.get_close_matches(str(word), [str(c) for c in choices], n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


@dataclass(frozen=True)
class OutputSpec:
    """Where a job writes: the released data, the HTML report, the JSON summary."""

    path: Path | None = None
    report: Path | None = None
    json: Path | None = None
    delimiter: str = ","
    neutralize_formulas: bool = False


@dataclass
class Job:
    """A validated job. ``raw`` is the document as read; the rest are typed views of it."""

    raw: dict[str, Any]
    base_dir: Path
    source: str = "the job"
    job_file: Path | None = None
    _data: pd.DataFrame | None = field(default=None, repr=False)
    _schema: Schema | None = field(default=None, repr=False)
    _models: list | None = field(default=None, repr=False)

    # -- plain settings --------------------------------------------------------------------
    def key(self, path: str) -> str:
        """A key path for messages: ``'job.yaml': models[0].k_anonymity.k``."""
        return f"{self.source}: {path}"

    @property
    def input(self) -> dict[str, Any]:
        """``{path, delimiter, encoding}`` of the input (path resolved)."""
        spec = self.raw.get("input")
        if spec is None:
            raise ConfigError(f"{self.key('input')} is missing; add `input: {{path: data.csv}}`")
        return spec

    @property
    def suppression_limit(self) -> float:
        """Share of records that may be suppressed, in [0, 1] (default 0)."""
        return self.raw.get("suppression_limit", 0.0)

    @property
    def metric(self) -> dict[str, Any] | None:
        """``{name, ...options}``, or None when the job names no metric (``loss`` is used
        where an algorithm optimizes one; the heuristics refuse a metric they cannot use)."""
        return self.raw.get("metric")

    @property
    def algorithm(self) -> str:
        """Anonymization algorithm name (default ``optimal``)."""
        return self.raw.get("algorithm", "optimal")

    @property
    def algorithm_options(self) -> dict[str, Any]:
        """Algorithm-specific options (``options:``)."""
        return dict(self.raw.get("options", {}))

    @property
    def seed(self) -> int | None:
        """The job's seed (None when not given)."""
        return self.raw.get("seed")

    @property
    def methods(self) -> list[tuple[str, dict[str, Any]]]:
        """Masking steps as ``(name, parameters)`` pairs, in order."""
        return [(name, dict(params)) for name, params in self.raw.get("methods", [])]

    @property
    def output(self) -> OutputSpec:
        """Output paths (resolved against the job file's folder)."""
        spec = self.raw.get("output", {})
        return OutputSpec(
            path=self._path(spec.get("path")),
            report=self._path(spec.get("report")),
            json=self._path(spec.get("json")),
            delimiter=spec.get("delimiter") or self._input_delimiter(),
            neutralize_formulas=bool(spec.get("neutralize_formulas", False)),
        )

    def _input_delimiter(self) -> str:
        """The input's delimiter (given or sniffed): CSV outputs use it unless
        ``output.delimiter`` says otherwise; ``,`` for a DataFrame or Parquet input."""
        given = self.raw.get("input", {}).get("delimiter")
        if given:
            return given
        if self._data is not None:
            return self._data.attrs.get("delimiter", ",")
        return ","

    def check_outputs(
        self,
        overrides: Mapping[str, str | Path | None] | None = None,
        inputs: Mapping[str, str | Path | None] | None = None,
    ) -> None:
        """Refuse output paths that would overwrite an input or one another, before any work.

        ``overrides`` maps a command-line flag (``"--json"``) to the path that replaces the
        job's own (``None`` = not given); ``inputs`` adds input files beyond ``input.path``
        (named as they should appear in messages). See :func:`sdckit.core.io.check_output_paths`.
        """
        out = self.output
        outputs: dict[str, str | Path | None] = {
            self.key("output.path"): out.path,
            self.key("output.report"): out.report,
            self.key("output.json"): out.json,
        }
        own = {"--json": self.key("output.json"), "--html": self.key("output.report")}
        for flag, path in (overrides or {}).items():
            if path is not None:
                outputs.pop(own.get(flag, ""), None)
                outputs[flag] = path
        given = self.input_files()
        given.update({k: v for k, v in (inputs or {}).items() if v is not None})
        check_output_paths(outputs, given)

    def require_outputs(self, *given: str | Path | None) -> None:
        """ConfigError when the job would write nothing: no ``output`` path, report or JSON
        and none of the command-line outputs ``given`` (the commands call this, so that a job
        never exits successfully without a word; the Python runners may run output-less)."""
        out = self.output
        if all(v is None for v in (out.path, out.report, out.json, *given)):
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
        if value is None:
            return None
        p = Path(value).expanduser()
        return p if p.is_absolute() else self.base_dir / p

    # -- things that need the data -----------------------------------------------------------
    def read_input(self) -> pd.DataFrame:
        """The input table (read once; a copy of a DataFrame input)."""
        if self._data is None:
            spec = self.input
            src = spec["path"]
            if isinstance(src, pd.DataFrame):
                self._data = read_table(src)
            else:
                self._data = read_table(
                    self._path(src),
                    delimiter=spec.get("delimiter"),
                    encoding=spec.get("encoding", "utf-8"),
                )
        return self._data

    @property
    def schema(self) -> Schema:
        """The schema of the input: roles, types, orders, hierarchies (built from the data)."""
        if self._schema is None:
            self._schema = self._build_schema(self.read_input())
        return self._schema

    @property
    def models(self) -> list:
        """The privacy models (:mod:`sdckit.models` objects), in file order."""
        if self._models is None:
            self._models = [
                build_model(name, params, self, f"models[{i}].{name}")
                for i, (name, params) in enumerate(self.raw.get("models", []))
            ]
        return self._models

    def _build_schema(self, data: pd.DataFrame) -> Schema:
        attrs: dict[str, Attribute] = {}
        for name, spec in self.raw.get("attributes", {}).items():
            where = f"attributes.{name}"
            if name not in data.columns:
                raise ConfigError(
                    f"{self.key(where)}: column {name!r} is not in the input; its columns "
                    f"are {', '.join(map(str, data.columns))}{_did_you_mean(name, data.columns)}"
                )
            hierarchy = spec.get("hierarchy")
            if hierarchy is not None:
                hierarchy = self._hierarchy(hierarchy, data[name], name, f"{where}.hierarchy")
            order = spec.get("order")
            attrs[name] = Attribute(
                name=name,
                role=Role(spec.get("role", "insensitive")),
                type=DataType(spec.get("type", "nominal")),
                hierarchy=hierarchy,
                order=tuple(str(v) for v in order) if order is not None else None,
                format=spec.get("format"),
                pseudonymize=spec.get("pseudonymize"),
            )
        return Schema(attrs)

    def _hierarchy(self, spec: Any, values: pd.Series, name: str, where: str) -> Hierarchy:
        if isinstance(spec, str):
            path = self._path(spec)
            if not path.is_file():
                raise ConfigError(
                    f"{self.key(where)}: hierarchy file {str(path)!r} does not exist; give the "
                    "path of an ARX hierarchy CSV (relative to the job file) or a builder "
                    f"spec ({', '.join(_HIERARCHY_BUILDERS)})"
                )
            return read_hierarchy(path, name=name)
        builder, params = _single_entry(spec, self.key(where), _HIERARCHY_BUILDERS)
        from sdckit.core import hierarchy_builders as hb

        fn = {
            "interval": hb.interval_hierarchy,
            "order": hb.order_hierarchy,
            "masking": hb.masking_hierarchy,
            "date": hb.date_hierarchy,
        }[builder]
        return _call(
            fn, params, self.key(f"{where}.{builder}"), provided={"values": values, "name": name}
        )


def _single_entry(item: Any, where: str, known: tuple[str, ...]) -> tuple[str, dict[str, Any]]:
    """``{name: {params}}`` -> ``(name, params)``; ConfigError naming ``where`` otherwise."""
    if isinstance(item, str) and item in known:
        return item, {}
    if not isinstance(item, Mapping) or len(item) != 1:
        raise ConfigError(
            f"{where} must be a mapping with exactly one key, the name (one of "
            f"{', '.join(known)}), e.g. `{known[0]}: {{...}}`; got {short_repr(item)}"
        )
    ((name, params),) = item.items()
    if name not in known:
        raise ConfigError(
            f"{where}: unknown name {name!r}; use one of {', '.join(known)}"
            f"{_did_you_mean(name, known)}"
        )
    if params is None:
        params = {}
    if not isinstance(params, Mapping):
        raise ConfigError(
            f"{where}.{name} must be a mapping of parameters, got {short_repr(params)}"
        )
    return str(name), dict(params)


def _call(
    fn: Callable,
    params: dict[str, Any],
    where: str,
    provided: Mapping[str, Any] | None = None,
) -> Any:
    """Call ``fn(**provided, **params)``; unknown or missing parameters -> ConfigError.

    ``provided`` are the arguments sdckit supplies itself (e.g. the column's values); the user
    may not set them.
    """
    provided = dict(provided or {})
    sig = inspect.signature(fn)
    allowed = [p for p in sig.parameters if p not in provided]
    unknown = [k for k in params if k not in allowed]
    if unknown:
        raise ConfigError(
            f"{where}: unknown parameter {unknown[0]!r}; allowed: {', '.join(allowed)}"
            f"{_did_you_mean(unknown[0], allowed)}"
        )
    missing = [
        p.name
        for p in sig.parameters.values()
        if p.default is inspect.Parameter.empty
        and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
        and p.name not in params
        and p.name not in provided
    ]
    if missing:
        raise ConfigError(f"{where}: parameter {missing[0]!r} is required")
    try:
        return fn(**provided, **params)
    except SdcInputError as exc:
        raise ConfigError(f"{where}: {exc}") from None
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: {exc}") from None


# -- privacy models ----------------------------------------------------------------------------
def _model_factories() -> dict[str, Callable]:
    from sdckit import models as m

    return {
        "k_anonymity": m.KAnonymity,
        "l_diversity": m.LDiversity,
        "t_closeness": m.TCloseness,
        "delta_presence": m.DeltaPresence,
        "k_map": m.KMap,
        "lkc": m.LKCPrivacy,
        "average_risk": m.AverageRiskThreshold,
        "sample_uniqueness": m.SampleUniquenessThreshold,
    }


#: The model names a job file may use.
MODEL_NAMES = (
    "k_anonymity",
    "l_diversity",
    "t_closeness",
    "delta_presence",
    "k_map",
    "lkc",
    "average_risk",
    "sample_uniqueness",
)


def build_model(name: str, params: Mapping[str, Any], job: Job, where: str):
    """One privacy model from its job-file entry (population tables are read from paths)."""
    params = dict(params)
    if "population" in params and isinstance(params["population"], str):
        path = job._path(params["population"])
        spec = job.raw.get("input", {})
        params["population"] = read_table(path, delimiter=spec.get("delimiter"))
    if name == "t_closeness" and params.get("distance") == "hierarchical":
        h = params.get("hierarchy")
        attr = params.get("attribute")
        if isinstance(h, (str, Mapping)):
            params["hierarchy"] = job._hierarchy(
                h, job.read_input()[attr], str(attr), f"{where}.hierarchy"
            )
        elif h is None and attr in job.raw.get("attributes", {}):
            params["hierarchy"] = job.schema.hierarchy(attr)
    return _call(_model_factories()[name], params, job.key(where))


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
    try:
        if p.suffix.lower() == ".toml":
            doc = tomllib.loads(text)
        else:
            _check_yaml_size(yaml.compose(text, Loader=yaml.SafeLoader), p)
            doc = yaml.safe_load(text)
    except (yaml.YAMLError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(
            f"job file {str(p)!r} is not valid {p.suffix[1:] or 'YAML'}: "
            f"{short_repr(str(exc), 600)[1:-1]}"
        ) from None
    job = job_from_dict(doc, base_dir=p.resolve().parent, source=repr(str(p)))
    job.job_file = p
    return job


#: The largest job file read (bytes) and the most values its YAML may expand to (aliases
#: included): a job names files and parameters, so these bounds are generous, and they stop
#: an alias bomb ("billion laughs") before it costs memory or time.
MAX_JOB_FILE_BYTES = 5_000_000
MAX_JOB_VALUES = 200_000


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
    """Validate a job given as a dict (what a job file holds); paths resolve in ``base_dir``."""
    if document is None:
        document = {}
    if not isinstance(document, Mapping):
        raise ConfigError(f"{source} must be a mapping of keys (input, attributes, ...)")
    doc = dict(document)
    for k in doc:
        if k not in TOP_LEVEL_KEYS:
            raise ConfigError(
                f"{source}: unknown key {k!r}{_did_you_mean(k, TOP_LEVEL_KEYS)} "
                f"(known keys: {', '.join(TOP_LEVEL_KEYS)})"
            )
    job = Job(raw={}, base_dir=Path(base_dir), source=source)
    raw: dict[str, Any] = {}
    if "input" in doc:
        raw["input"] = _validate_input(doc["input"], job)
    if "attributes" in doc:
        raw["attributes"] = _validate_attributes(doc["attributes"], job)
    if "models" in doc:
        raw["models"] = _validate_list_of_named(doc["models"], "models", MODEL_NAMES, job)
    if "methods" in doc:
        raw["methods"] = _validate_list_of_named(doc["methods"], "methods", None, job)
    if "suppression_limit" in doc:
        raw["suppression_limit"] = params.suppression_limit(
            doc["suppression_limit"], job.key("suppression_limit")
        )
    if "metric" in doc:
        raw["metric"] = _validate_metric(doc["metric"], job)
    if "algorithm" in doc:
        if not isinstance(doc["algorithm"], str):
            raise ConfigError(
                f"{job.key('algorithm')} must be a name, got {short_repr(doc['algorithm'])}"
            )
        raw["algorithm"] = doc["algorithm"]
    for key in ("options", "grid"):
        if key in doc:
            if key == "options" and not isinstance(doc[key], Mapping):
                raise ConfigError(f"{job.key(key)} must be a mapping, got {short_repr(doc[key])}")
            raw[key] = doc[key]
    for key in ("columns", "qi"):
        if key in doc:
            v = doc[key]
            if isinstance(v, str):
                v = [c.strip() for c in v.split(",") if c.strip()]
            if not isinstance(v, list) or not all(isinstance(c, str) for c in v):
                raise ConfigError(
                    f"{job.key(key)} must be a list of column names, got {short_repr(v)}"
                )
            raw[key] = v
    if "output" in doc:
        raw["output"] = _validate_keys(doc["output"], "output", _OUTPUT_KEYS, job)
        nf = raw["output"].get("neutralize_formulas", False)
        if not isinstance(nf, bool):
            raise ConfigError(
                f"{job.key('output.neutralize_formulas')} must be true or false, got "
                f"{short_repr(nf)}"
            )
    if "seed" in doc:
        v = doc["seed"]
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
            raise ConfigError(
                f"{job.key('seed')} must be a non-negative integer, got {short_repr(v)}"
            )
        raw["seed"] = v
    job.raw = raw
    return job


def _validate_keys(spec: Any, where: str, known: tuple[str, ...], job: Job) -> dict[str, Any]:
    if not isinstance(spec, Mapping):
        raise ConfigError(
            f"{job.key(where)} must be a mapping ({', '.join(known)}), got {short_repr(spec)}"
        )
    for k in spec:
        if k not in known:
            raise ConfigError(
                f"{job.key(f'{where}.{k}')}: unknown key{_did_you_mean(k, known)} "
                f"(known: {', '.join(known)})"
            )
    return dict(spec)


def _validate_input(spec: Any, job: Job) -> dict[str, Any]:
    if isinstance(spec, (str, Path, pd.DataFrame)):
        spec = {"path": spec}
    spec = _validate_keys(spec, "input", _INPUT_KEYS, job)
    if "path" not in spec:
        raise ConfigError(f"{job.key('input.path')} is missing; name the CSV or Parquet file")
    if not isinstance(spec["path"], pd.DataFrame):
        spec["path"] = str(spec["path"])
    return spec


def _validate_attributes(spec: Any, job: Job) -> dict[str, dict[str, Any]]:
    if not isinstance(spec, Mapping):
        raise ConfigError(
            f"{job.key('attributes')} must map column names to settings, e.g. "
            "`age: {role: quasi_identifying, hierarchy: age.csv}`"
        )
    out: dict[str, dict[str, Any]] = {}
    roles = [r.value for r in Role]
    types = [t.value for t in DataType]
    for name, attr in spec.items():
        where = f"attributes.{name}"
        if isinstance(attr, str):  # shorthand: `age: quasi_identifying`
            attr = {"role": attr}
        attr = _validate_keys(attr if attr is not None else {}, where, _ATTRIBUTE_KEYS, job)
        if "role" in attr and attr["role"] not in roles:
            raise ConfigError(
                f"{job.key(where + '.role')}: unknown role {attr['role']!r}; use one of "
                f"{', '.join(roles)}{_did_you_mean(attr['role'], roles)}"
            )
        if "type" in attr and attr["type"] not in types:
            raise ConfigError(
                f"{job.key(where + '.type')}: unknown type {attr['type']!r}; use one of "
                f"{', '.join(types)}{_did_you_mean(attr['type'], types)}"
            )
        if "order" in attr and not isinstance(attr["order"], list):
            raise ConfigError(f"{job.key(where + '.order')} must list the categories lowest first")
        h = attr.get("hierarchy")
        if h is not None and not isinstance(h, str):
            _single_entry(h, job.key(where + ".hierarchy"), _HIERARCHY_BUILDERS)
        ps = attr.get("pseudonymize")
        if ps is not None:
            if attr.get("role") != "identifying":
                raise ConfigError(
                    f"{job.key(where + '.pseudonymize')}: only identifying attributes are "
                    "pseudonymized; set `role: identifying`"
                )
            if ps is True:
                raise ConfigError(
                    f"{job.key(where + '.pseudonymize')} needs a key: "
                    "`{key_env: SDCKIT_KEY}` or `{key_file: secret.key}` (an unkeyed hash "
                    "can be reversed by hashing every candidate value)"
                )
            ps = _validate_keys(ps, where + ".pseudonymize", ("key_env", "key_file", "length"), job)
            if ("key_env" in ps) == ("key_file" in ps):
                raise ConfigError(
                    f"{job.key(where + '.pseudonymize')} needs exactly one of key_env or key_file"
                )
            if "key_file" in ps:
                ps["key_file"] = str(job._path(ps["key_file"]))
            attr["pseudonymize"] = ps
        out[str(name)] = attr
    return out


def _validate_list_of_named(
    spec: Any, where: str, known: tuple[str, ...] | None, job: Job
) -> list[tuple[str, dict[str, Any]]]:
    if not isinstance(spec, list):
        raise ConfigError(
            f"{job.key(where)} must be a list of entries like `- name: {{parameters}}`, "
            f"got {short_repr(spec)}"
        )
    out = []
    for i, item in enumerate(spec):
        w = job.key(f"{where}[{i}]")
        if known is None:
            if isinstance(item, str):
                item = {item: {}}
            if not isinstance(item, Mapping) or len(item) != 1:
                raise ConfigError(
                    f"{w} must be a mapping with exactly one key, the method name, e.g. "
                    f"`- microaggregation: {{columns: [a, b], k: 3}}`; got {short_repr(item)}"
                )
            ((name, params),) = item.items()
            params = {} if params is None else params
            if not isinstance(params, Mapping):
                raise ConfigError(
                    f"{w}.{name} must be a mapping of parameters, got {short_repr(params)}"
                )
            out.append((str(name), dict(params)))
        else:
            out.append(_single_entry(item, w, known))
    return out


def _validate_metric(spec: Any, job: Job) -> dict[str, Any]:
    if isinstance(spec, str):
        spec = {"name": spec}
    if not isinstance(spec, Mapping) or "name" not in spec:
        raise ConfigError(
            f"{job.key('metric')} must be a metric name or `{{name: loss, aggregate: geometric}}`"
            f", got {short_repr(spec)}"
        )
    return dict(spec)
