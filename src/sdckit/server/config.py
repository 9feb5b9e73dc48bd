"""The server file (``sdckit serve --config server.yaml``) -> a validated :class:`ServerConfig`.

::

    database: {duckdb: data.duckdb}      # or {duckdb: ":memory:"}
                                         # or {postgresql: "postgresql://user@/db?host=/tmp/pg"}
    datasets:
      adult:
        load: {path: adult.csv, delimiter: ";"}   # optional: loaded once, when the table is absent
        table: adult                              # default: the dataset's name
        mode: dp                                  # dp | restriction | camouflage
        budget: {epsilon: 1.0, query_epsilon: 0.1}   # dp: per analyst; default per-query epsilon
        bounds: {age: [17, 90]}                   # clamping ranges of numeric columns
        public_keys: [sex, race]                  # GROUP BY keys (or {sex: [Female, Male]})
        public: [sex, race, education]            # restriction/camouflage: may select records
        identifiers: [pid]                        # restriction/camouflage: never used at all
        min_query_set: 5                          # restriction
        camouflage: {range_percent: 10, columns: [age]}   # camouflage
    analysts: {alice: {key_env: ALICE_KEY}}       # keys read from environment variables
    listen: {host: 127.0.0.1, port: 8765}

Relative paths are resolved against the file's folder. The file is read as the job files are
(:func:`sdckit.jobs.config.load_job`'s conventions: UTF-8, YAML alias bombs refused, errors are
:class:`~sdckit.errors.ConfigError` naming the file and the key, ``datasets.adult.bounds.age``).
In restriction and camouflage modes every column has a role (:mod:`sdckit.server.roles`):
``public`` (and the ``public_keys``) may select records, ``identifiers`` are never used, every
other column is confidential. Analyst keys never appear in the file: each is read from the
environment variable its ``key_env`` names (surrounding whitespace removed, as the server
removes it from the ``Authorization`` header; at least
:data:`~sdckit.core.web.MIN_SECRET_CHARS` characters) and kept only as its SHA-256 digest.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from sdckit.core.web import MIN_SECRET_CHARS
from sdckit.errors import ConfigError, short_repr

__all__ = [
    "AnalystSpec",
    "DatasetSpec",
    "ServerConfig",
    "config_from_dict",
    "key_digest",
    "load_server_config",
]

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: The prefix of the server's own tables and columns (ledger, record ids): refused for data.
RESERVED_PREFIX = "_sdc_"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class DatabaseSpec(_Strict):
    """``database:``: exactly one of ``duckdb`` (a file or ``:memory:``) and ``postgresql``."""

    duckdb: str | None = None
    postgresql: str | None = None


class LoadSpec(_Strict):
    """``load:``: a CSV (or Parquet) file loaded into the table when the table is absent."""

    path: str
    delimiter: str | None = None
    encoding: str = "utf-8"


class BudgetSpec(_Strict):
    """``budget:``: the privacy budget of each analyst on the dataset (dp mode)."""

    epsilon: float = Field(gt=0, le=1000)
    query_epsilon: float | None = Field(default=None, gt=0)


class CamouflageSpec(_Strict):
    """``camouflage:``: the relative half-width of each value's interval and its columns."""

    range_percent: float = Field(gt=0, le=100)
    columns: list[str] | None = None


class DatasetSpec(_Strict):
    """One entry of ``datasets:``."""

    load: LoadSpec | str | None = None
    table: str | None = None
    mode: Literal["dp", "restriction", "camouflage"] = "dp"
    budget: BudgetSpec | None = None
    bounds: dict[str, tuple[float, float]] = Field(default_factory=dict)
    public_keys: list[str] | dict[str, list[Any] | None] = Field(default_factory=list)
    public: list[str] = Field(default_factory=list)
    identifiers: list[str] = Field(default_factory=list)
    min_query_set: int | None = Field(default=None, ge=1)
    camouflage: CamouflageSpec | None = None

    @field_validator("bounds")
    @classmethod
    def _ordered(cls, value: dict[str, tuple[float, float]]) -> dict[str, tuple[float, float]]:
        for column, (lo, hi) in value.items():
            if not lo < hi:
                raise ValueError(f"{column}: lower ({lo}) must be smaller than upper ({hi})")
        return value


class AnalystSpec(_Strict):
    """One entry of ``analysts:``: the environment variable holding the analyst's key."""

    key_env: str


class ListenSpec(_Strict):
    """``listen:``: where the HTTP server listens."""

    host: str = "127.0.0.1"
    port: int = Field(default=8765, ge=0, le=65535)


class ServerSpec(_Strict):
    """The whole file."""

    database: DatabaseSpec = Field(default_factory=lambda: DatabaseSpec(duckdb=":memory:"))
    datasets: dict[str, DatasetSpec]
    analysts: dict[str, AnalystSpec]
    listen: ListenSpec = Field(default_factory=ListenSpec)


@dataclass(frozen=True)
class Dataset:
    """A dataset's resolved settings (paths absolute, defaults filled in)."""

    name: str
    table: str
    mode: str
    load: LoadSpec | None
    load_path: Path | None
    epsilon: float | None
    query_epsilon: float | None
    bounds: dict[str, tuple[float, float]]
    public_keys: dict[str, list[Any] | None]
    public: tuple[str, ...]  # declared public columns and the public keys, in that order
    identifiers: tuple[str, ...]
    min_query_set: int | None
    range_percent: float | None
    camouflage_columns: list[str] | None

    def key(self, path: str) -> str:
        """The configuration key of a setting, for messages: ``datasets.adult.bounds``."""
        return f"datasets.{self.name}.{path}" if path else f"datasets.{self.name}"


@dataclass(frozen=True)
class ServerConfig:
    """A validated server configuration."""

    source: str
    database_kind: str  # "duckdb" | "postgresql"
    database: str  # a DuckDB file path (absolute) or ":memory:", or a PostgreSQL conninfo
    datasets: dict[str, Dataset]
    analysts: dict[str, bytes]  # analyst -> SHA-256 digest of the key
    host: str
    port: int


KEY_HINT = 'a long random string, e.g. python -c "import secrets; print(secrets.token_hex(16))"'


def key_digest(key: str) -> bytes:
    """SHA-256 digest of an analyst key (what the server keeps and compares, FIPS 180-4)."""
    return hashlib.sha256(key.encode("utf-8")).digest()


def _pydantic_error(exc: ValidationError, source: str) -> ConfigError:
    parts = []
    for error in exc.errors()[:5]:
        key = ".".join(str(p) for p in error["loc"]) or "(top level)"
        message = error["msg"]
        if error["type"] == "extra_forbidden":
            message = "unknown key; remove it or check its spelling"
        elif error["type"] == "missing":
            message = "is missing; add it"
        parts.append(f"{key}: {message}")
    more = f" (and {len(exc.errors()) - 5} more)" if len(exc.errors()) > 5 else ""
    first = [str(p) for p in exc.errors()[0]["loc"]] if exc.errors() else []
    named = [p for p in first if not p.isdigit()]
    return ConfigError(
        f"server config {source}: " + "; ".join(parts) + more,
        key=".".join(first) or None,
        parameter=named[-1] if named else None,
    )


def _dataset(name: str, spec: DatasetSpec, base: Path, source: str) -> Dataset:
    where = f"server config {source}: datasets.{name}"
    table = spec.table or name
    for label, value in (("name", name), ("table", table)):
        if not _IDENTIFIER.match(value) or value.lower().startswith(RESERVED_PREFIX):
            raise ConfigError(
                f"{where}: the {label} {value!r} must be a plain identifier (letters, digits, "
                f"_; not starting with a digit or {RESERVED_PREFIX!r})"
            )
    if spec.mode == "dp" and spec.budget is None:
        raise ConfigError(f"{where}.budget is missing; dp mode needs e.g. budget: {{epsilon: 1}}")
    if spec.mode == "restriction" and spec.min_query_set is None:
        raise ConfigError(f"{where}.min_query_set is missing; restriction mode needs e.g. 5")
    if spec.mode == "camouflage" and spec.camouflage is None:
        raise ConfigError(
            f"{where}.camouflage is missing; camouflage mode needs e.g. "
            "camouflage: {range_percent: 10}"
        )
    load = LoadSpec(path=spec.load) if isinstance(spec.load, str) else spec.load
    keys = (
        dict.fromkeys(spec.public_keys)
        if isinstance(spec.public_keys, list)
        else dict(spec.public_keys)
    )
    public = tuple(dict.fromkeys([*spec.public, *keys]))
    _check_roles(where, spec, public, keys)
    budget = spec.budget
    return Dataset(
        name=name,
        table=table,
        mode=spec.mode,
        load=load,
        load_path=(base / load.path) if load else None,
        epsilon=budget.epsilon if budget else None,
        query_epsilon=budget.query_epsilon if budget else None,
        bounds={c: (float(lo), float(hi)) for c, (lo, hi) in spec.bounds.items()},
        public_keys=keys,
        public=public,
        identifiers=tuple(spec.identifiers),
        min_query_set=spec.min_query_set,
        range_percent=spec.camouflage.range_percent if spec.camouflage else None,
        camouflage_columns=spec.camouflage.columns if spec.camouflage else None,
    )


def _check_roles(
    where: str, spec: DatasetSpec, public: tuple[str, ...], keys: dict[str, Any]
) -> None:
    """The column roles of a dataset must not contradict each other (the names themselves
    are checked against the table when the server starts)."""
    if spec.mode == "dp" and (spec.public or spec.identifiers):
        key = "public" if spec.public else "identifiers"
        raise ConfigError(
            f"{where}.{key}: column roles apply to restriction and camouflage modes; dp mode "
            "protects every column with noise and lets any column select records: remove it"
        )
    for key, names in (("public", spec.public), ("identifiers", spec.identifiers)):
        if len(set(names)) != len(names):
            raise ConfigError(f"{where}.{key} names a column twice; name each column once")
    for name in spec.identifiers:
        if name in public:
            declared = "public_keys" if name in keys else "public"
            raise ConfigError(
                f"{where}: {name!r} is in identifiers and in {declared}; an identifier never "
                f"selects records: remove it from one of them"
            )
    if spec.mode == "camouflage" and spec.camouflage and spec.camouflage.columns:
        for name in spec.camouflage.columns:
            if name in public or name in spec.identifiers:
                role = "identifiers" if name in spec.identifiers else "public (or public_keys)"
                raise ConfigError(
                    f"{where}.camouflage.columns names {name!r}, which is also in {role}; a "
                    "camouflaged column is confidential: remove it from one of them"
                )


def config_from_dict(
    document: Any,
    base_dir: str | Path = ".",
    source: str = "(dict)",
    environ: dict[str, str] | None = None,
) -> ServerConfig:
    """Validate a server configuration document (the parsed YAML) and resolve it.

    ``environ`` (default :data:`os.environ`) supplies the analysts' keys.
    """
    if not isinstance(document, dict):
        raise ConfigError(
            f"server config {source} must be a mapping with database, datasets, analysts; "
            f"got {short_repr(document)}"
        )
    try:
        spec = ServerSpec.model_validate(document)
    except ValidationError as exc:
        raise _pydantic_error(exc, source) from None
    base = Path(base_dir)
    db = spec.database
    if (db.duckdb is None) == (db.postgresql is None):
        raise ConfigError(
            f"server config {source}: database must name exactly one of duckdb (a file or "
            '":memory:") and postgresql (a connection string)'
        )
    if db.duckdb is not None:
        kind = "duckdb"
        target = db.duckdb if db.duckdb == ":memory:" else str((base / db.duckdb).resolve())
    else:
        kind, target = "postgresql", str(db.postgresql)
    if not spec.datasets:
        raise ConfigError(f"server config {source}: datasets is empty; declare one dataset")
    if not spec.analysts:
        raise ConfigError(f"server config {source}: analysts is empty; declare one analyst")
    datasets = {n: _dataset(n, s, base, source) for n, s in spec.datasets.items()}
    tables = [d.table.lower() for d in datasets.values()]
    if len(set(tables)) != len(tables):
        raise ConfigError(f"server config {source}: two datasets use the same table")
    env = os.environ if environ is None else environ
    analysts: dict[str, bytes] = {}
    seen: set[bytes] = set()
    for name, analyst in spec.analysts.items():
        key = env.get(analyst.key_env, "").strip()
        if not key:
            raise ConfigError(
                f"server config {source}: analysts.{name}.key_env names the environment "
                f"variable {analyst.key_env!r}, which is not set (or empty); export it with "
                f"the analyst's key ({KEY_HINT})"
            )
        if len(key) < MIN_SECRET_CHARS:
            raise ConfigError(
                f"server config {source}: analysts.{name}: the key in the environment "
                f"variable {analyst.key_env!r} is too short ({len(key)} of the {MIN_SECRET_CHARS} "
                f"characters an analyst key needs at least); export a longer one ({KEY_HINT})"
            )
        digest = key_digest(key)
        if digest in seen:
            raise ConfigError(
                f"server config {source}: analysts.{name} has the same key as another analyst"
            )
        seen.add(digest)
        analysts[name] = digest
    return ServerConfig(
        source=source,
        database_kind=kind,
        database=target,
        datasets=datasets,
        analysts=analysts,
        host=spec.listen.host,
        port=spec.listen.port,
    )


#: The largest server file read (bytes).
MAX_CONFIG_BYTES = 1_000_000


def load_server_config(path: str | Path, environ: dict[str, str] | None = None) -> ServerConfig:
    """Read and validate a server YAML file (relative paths resolved against its folder)."""
    from sdckit.jobs.config import load_yaml_checked

    p = Path(path)
    if not p.is_file():
        raise ConfigError(f"server config {str(p)!r} does not exist; check the path")
    if p.stat().st_size > MAX_CONFIG_BYTES:
        raise ConfigError(f"server config {str(p)!r} is larger than {MAX_CONFIG_BYTES:,} bytes")
    try:
        text = p.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ConfigError(f"server config {str(p)!r} is not UTF-8 text ({exc.reason})") from None
    try:
        document = load_yaml_checked(text, p)
    except yaml.YAMLError as exc:
        raise ConfigError(
            f"server config {str(p)!r} is not valid YAML: {short_repr(str(exc), 600)[1:-1]}"
        ) from None
    return config_from_dict(document, p.resolve().parent, repr(str(p)), environ)
