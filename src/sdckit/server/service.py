"""The query service behind the HTTP API: authentication, datasets, modes, ledger.

:class:`QueryService` is what :mod:`sdckit.server.app` calls; it raises :class:`Refusal` (an
HTTP status and an error code) and never puts a value read from the data into a message: the
database's own error texts (which can quote a cell) are replaced by a fixed message.
"""

from __future__ import annotations

import hmac
import logging
import math
import os
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction
from typing import Any

import numpy as np
import pandas as pd

from sdckit.core.io import read_table
from sdckit.dp.mechanisms import MAX_LAPLACE_SCALE
from sdckit.errors import ConfigError, DataError
from sdckit.server.backends import ID_COLUMN, Backend, open_backend
from sdckit.server.config import Dataset, ServerConfig, key_digest
from sdckit.server.ledger import UNITS, AuditCopy, Ledger, epsilon_units, query_key, units_epsilon
from sdckit.server.modes import (
    ENDS_PREFIX,
    Answer,
    Domain,
    answer_camouflage,
    answer_dp,
    answer_exact,
    camouflage_ends,
    camouflaged_columns,
    dp_epsilon_floor,
    end_columns,
    query_sets,
)
from sdckit.server.roles import ColumnRoles
from sdckit.server.sql import ParsedQuery, UnsupportedQuery, parse_query

__all__ = ["QueryService", "Refusal"]

log = logging.getLogger("sdckit.server")


class Refusal(Exception):
    """A refused request: HTTP ``status``, error ``code`` and a message free of data values."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


@dataclass
class _Served:
    """A dataset at run time: its settings, columns, key domains, column roles (restriction
    and camouflage) and (restriction) auditor."""

    spec: Dataset
    columns: dict[str, str]
    domain: Domain
    n_records: int
    camouflaged: frozenset[str]
    roles: ColumnRoles | None = None
    auditor: AuditCopy | None = None


def _read(dataset: Dataset) -> pd.DataFrame:
    """The load file, with numbers parsed (read as text first, as every sdckit reader does)."""
    assert dataset.load is not None and dataset.load_path is not None
    data = read_table(dataset.load_path, dataset.load.delimiter, dataset.load.encoding)
    for name in data.columns:
        text = data[name].mask(data[name].astype(str).str.strip() == "")
        converted = pd.to_numeric(text, errors="coerce")
        if converted.notna().sum() == text.notna().sum() and text.notna().any():
            whole = converted.dropna()
            data[name] = converted.astype("Int64") if (whole == whole.round()).all() else converted
    return data


def _with_camouflage(d: Dataset, data: pd.DataFrame) -> pd.DataFrame:
    """The data with each camouflaged column's interval ends (:func:`camouflage_ends`), drawn
    from the operating system's CSPRNG; columns named like the ends are refused."""
    reserved = [c for c in data.columns if str(c).startswith(ENDS_PREFIX)]
    if reserved:
        raise DataError(
            f"{d.key('load')}: column {reserved[0]!r} starts with {ENDS_PREFIX!r}, which the "
            "server reserves; rename it"
        )
    kinds = {
        str(c): "numeric" if pd.api.types.is_numeric_dtype(data[c]) else "text"
        for c in data.columns
    }
    rng = np.random.default_rng(int.from_bytes(os.urandom(16), "big"))
    out = data.copy()
    for name in sorted(camouflaged_columns(d, kinds)):
        if kinds.get(name) != "numeric":
            continue  # named in the error of _prepare
        lo, hi = camouflage_ends(
            out[name].to_numpy(dtype=np.float64, na_value=np.nan),
            float(d.range_percent or 0.0) / 100.0,
            rng,
        )
        lo_name, hi_name = end_columns(name)
        out[lo_name], out[hi_name] = lo, hi
    return out


def _decimal_at_least(x: Fraction) -> str:
    """The smallest number of three significant decimal digits ``>= x`` (``x > 0``), as text
    that reads back (JSON, Python) as exactly that decimal."""
    exponent = len(str(x.numerator)) - len(str(x.denominator))
    if Fraction(10) ** exponent > x:
        exponent -= 1  # now 10**exponent <= x < 10**(exponent + 1)
    step = Fraction(10) ** (exponent - 2)
    digits = math.ceil(x / step)
    return repr(float(Decimal(digits).scaleb(exponent - 2)))


class QueryService:
    """Everything the API does, without HTTP."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.backend: Backend = open_backend(config.database_kind, config.database)
        try:
            self.ledger = Ledger(self.backend)
            self.datasets = {name: self._prepare(d) for name, d in config.datasets.items()}
            self.ledger.ensure_budgets(
                {
                    (analyst, name): float(d.epsilon or 0)
                    for analyst in config.analysts
                    for name, d in config.datasets.items()
                    if d.mode == "dp"
                }
            )
        except BaseException:
            self.backend.close()
            raise

    # -- start-up ------------------------------------------------------------------------------
    def _prepare(self, d: Dataset) -> _Served:
        if not self.backend.table_exists(d.table):
            if d.load is None:
                raise ConfigError(
                    f"server config: {d.key('table')}: the table {d.table!r} does not exist in "
                    f"the database; create it or add {d.key('load')}: {{path: data.csv}}"
                )
            data = _read(d)
            if d.mode == "camouflage":
                data = _with_camouflage(d, data)
            self.backend.load(d.table, data)
        columns = self.backend.columns(d.table)
        if ID_COLUMN not in columns:
            raise ConfigError(
                f"server config: {d.key('table')}: the table {d.table!r} has no {ID_COLUMN!r} "
                "record-id column; let the server create it with load: {path: ...}"
            )
        stored = set(columns)
        columns = {k: v for k, v in columns.items() if not k.startswith(ENDS_PREFIX)}
        for where, names in (
            ("bounds", list(d.bounds)),
            ("public_keys", list(d.public_keys)),
            ("camouflage.columns", list(d.camouflage_columns or [])),
            ("public", list(d.public)),
            ("identifiers", list(d.identifiers)),
        ):
            for name in names:
                if name not in columns:
                    raise ConfigError(
                        f"server config: {d.key(where)} names {name!r}, which is not a column "
                        f"of {d.table!r} (columns: {', '.join(columns)})"
                    )
        for name in d.bounds:
            if columns[name] != "numeric":
                raise ConfigError(
                    f"server config: {d.key('bounds')}.{name}: {name!r} is not a numeric column"
                )
        domain = Domain({k: self._domain(d, k, v) for k, v in d.public_keys.items()})
        n = int(self.backend.frame(f'SELECT count(*) AS n FROM "{d.table}"')["n"].iloc[0])
        served = _Served(d, columns, domain, n, camouflaged_columns(d, columns))
        if d.mode == "camouflage":
            for name in served.camouflaged:
                if columns[name] != "numeric":
                    raise ConfigError(
                        f"server config: {d.key('camouflage.columns')}: {name!r} is not numeric"
                    )
                if not set(end_columns(name)) <= stored:
                    raise ConfigError(
                        f"server config: {d.key('mode')}: the table {d.table!r} was loaded "
                        f"without camouflage intervals for {name!r}; they are drawn when the "
                        "server loads the data: drop the table (or use a new database) and "
                        "start again with load: {path: ...}"
                    )
        if d.mode != "dp":
            served.roles = self._roles(d, served)
        if d.mode == "restriction":
            served.auditor = self.ledger.open_audit(d.name, n, int(d.min_query_set or 1))
        return served

    @staticmethod
    def _roles(d: Dataset, served: _Served) -> ColumnRoles:
        """The column roles; a camouflaged column (``camouflage.columns`` or, by default, the
        numeric columns with bounds) may not also be public or an identifier."""
        roles = ColumnRoles.of(d, served.columns, served.camouflaged)
        clash = sorted(roles.camouflaged & {*roles.public, *roles.identifiers})
        if clash:
            raise ConfigError(
                f"server config: {d.key('camouflage.columns')}: {clash[0]!r} is camouflaged "
                "(camouflage.columns, by default the numeric columns with bounds) and also "
                "public or an identifier; a camouflaged column is confidential: name the "
                "camouflaged columns in camouflage.columns, or remove it from public"
            )
        return roles

    def _domain(self, d: Dataset, key: str, declared: list[Any] | None) -> list[Any]:
        """The public values of a key: declared in the config, or read from the data now
        (which makes the set of values itself public; see docs/getting-started/serve.md)."""
        if declared is not None:
            if not declared or len(set(map(repr, declared))) != len(declared):
                raise ConfigError(
                    f"server config: {d.key('public_keys')}.{key} must list distinct values"
                )
            return list(declared)
        frame = self.backend.frame(
            f'SELECT DISTINCT "{key}" AS v FROM "{d.table}" WHERE "{key}" IS NOT NULL ORDER BY 1'
        )
        return [v.item() if hasattr(v, "item") else v for v in frame["v"].tolist()]

    def close(self) -> None:
        """Close the database."""
        self.backend.close()

    # -- requests --------------------------------------------------------------------------
    def authenticate(self, header: str | None) -> str:
        """The analyst of an ``Authorization: Bearer KEY`` header (constant-time compare of
        SHA-256 digests, every analyst checked); :class:`Refusal` 401 otherwise."""
        if not header or not header.startswith("Bearer ") or not header[7:].strip():
            raise Refusal(401, "unauthorized", "send the header Authorization: Bearer YOUR_KEY")
        digest = key_digest(header[7:].strip())
        found = None
        for name, stored in self.config.analysts.items():
            if hmac.compare_digest(digest, stored):
                found = name
        if found is None:
            raise Refusal(401, "unauthorized", "the key is not valid")
        return found

    def _dataset(self, name: str | None, sql: str) -> _Served:
        if name is None:
            name = self._dataset_of(sql)
        served = self.datasets.get(name)
        if served is None:
            raise Refusal(
                404,
                "unknown_dataset",
                f"no dataset {name!r}; the datasets are: {', '.join(self.datasets)}",
            )
        return served

    def _dataset_of(self, sql: str) -> str:
        """The dataset a request without one means: the only one, or the one whose table the
        FROM clause names."""
        if len(self.datasets) == 1:
            return next(iter(self.datasets))
        import sqlglot
        from sqlglot import exp

        try:
            tables = {t.name.lower() for t in sqlglot.parse_one(sql).find_all(exp.Table)}
        except Exception:  # noqa: BLE001 - any parse failure: ask for the dataset
            tables = set()
        found = [n for n, s in self.datasets.items() if s.spec.table.lower() in tables]
        if len(found) != 1:
            raise Refusal(404, "unknown_dataset", 'give the dataset: {"dataset": NAME, ...}')
        return found[0]

    def query(
        self, analyst: str, dataset: str | None, sql: str, epsilon: float | None
    ) -> dict[str, Any]:
        """Answer (or refuse) one query; the JSON body of a 200 response."""
        served = self._dataset(dataset, sql)
        spec = served.spec
        try:
            guard = served.roles.guard if served.roles is not None else None
            parsed = parse_query(sql, spec.table, served.columns, spec.public_keys, guard)
            if spec.mode == "dp":
                return self._dp(analyst, served, parsed, epsilon)
            if spec.mode == "restriction":
                return self._restriction(analyst, served, parsed)
            return self._camouflage(analyst, served, parsed)
        except UnsupportedQuery as exc:
            self.ledger.log(analyst, spec.name, spec.mode, exc.code)
            raise Refusal(403, exc.code, str(exc)) from None
        except Refusal as exc:
            if exc.status == 403:
                self.ledger.log(analyst, spec.name, spec.mode, exc.code)
            raise

    def _dp(
        self, analyst: str, served: _Served, parsed: ParsedQuery, epsilon: float | None
    ) -> dict[str, Any]:
        spec = served.spec
        if epsilon is None:
            epsilon = spec.query_epsilon
            if epsilon is None:
                raise Refusal(
                    400,
                    "bad_request",
                    f"give epsilon (the dataset has no default: {spec.key('budget')}"
                    ".query_epsilon)",
                )
            where = f" ({spec.key('budget')}.query_epsilon)"
        else:
            where = ""
        if (
            isinstance(epsilon, bool)
            or not isinstance(epsilon, (int, float))
            or not 0 < epsilon < float("inf")
        ):
            raise Refusal(400, "bad_request", f"epsilon{where} must be a JSON number > 0, e.g. 0.1")
        units, exact = epsilon_units(epsilon)
        floor = max(Fraction(1, UNITS), dp_epsilon_floor(spec, parsed))
        if exact < floor:
            raise Refusal(
                400,
                "bad_request",
                f"epsilon {epsilon:g}{where} is too small for this query; the smallest accepted "
                f"is {_decimal_at_least(floor)} (the ledger counts epsilon in units of "
                f"{1 / UNITS:g}, and each noise draw may have a scale of at most "
                f"{float(MAX_LAPLACE_SCALE):.4g} grid steps)",
            )
        key = query_key(spec.name, parsed.normalized, units)
        stored = self.ledger.cached(analyst, spec.name, key)
        if stored is not None:
            return self._cached_body(analyst, spec, stored)
        budget, spent = self.ledger.balance(analyst, spec.name)
        if spent + units > budget:
            raise Refusal(403, "budget_exhausted", self._exhausted(spec, budget, spent, epsilon))
        answer = self._run(lambda: answer_dp(self.backend, spec, parsed, exact, served.domain))
        body = {"rows": answer.rows, "mode": "dp", "noise": answer.details}
        outcome, stored = self.ledger.release_or_refuse(
            analyst,
            spec.name,
            key,
            parsed.normalized,
            units,
            body,
            noise_variance=answer.noise_variance,
            cells=answer.cells,
        )
        if outcome == "cached":
            assert stored is not None
            return self._cached_body(analyst, spec, stored)
        if outcome == "exhausted":
            budget, spent = self.ledger.balance(analyst, spec.name)
            raise Refusal(403, "budget_exhausted", self._exhausted(spec, budget, spent, epsilon))
        budget, spent = self.ledger.balance(analyst, spec.name)
        return {
            **body,
            "epsilon_spent": units_epsilon(units),
            "budget_remaining": units_epsilon(budget - spent),
            "cached": False,
        }

    @staticmethod
    def _exhausted(spec: Dataset, budget: int, spent: int, epsilon: float) -> str:
        return (
            f"the query needs epsilon {epsilon:g} but only {units_epsilon(budget - spent):g} of "
            f"your budget of {units_epsilon(budget):g} on {spec.name!r} is left"
        )

    def _cached_body(self, analyst: str, spec: Dataset, stored: dict[str, Any]) -> dict[str, Any]:
        budget, spent = self.ledger.balance(analyst, spec.name)
        return {
            **stored,
            "epsilon_spent": 0.0,
            "budget_remaining": units_epsilon(budget - spent),
            "cached": True,
        }

    def _run(self, compute: Any) -> Answer:
        """Run a computation on the data; a database error becomes a fixed message (its own
        text could quote a value of the data)."""
        try:
            return compute()
        except (UnsupportedQuery, Refusal):
            raise
        except Exception as exc:  # noqa: BLE001 - the database's error types vary
            log.warning("query failed in the database: %s", type(exc).__name__)
            raise UnsupportedQuery(
                "the database could not run the query (a literal may not match its column's "
                f"type); error type {type(exc).__name__}"
            ) from None

    def _restriction(self, analyst: str, served: _Served, parsed: ParsedQuery) -> dict[str, Any]:
        spec = served.spec
        for agg in parsed.aggregates:
            if agg.func == "quantile":
                raise UnsupportedQuery("MEDIAN and QUANTILE are answered in dp mode only")
        assert served.auditor is not None
        cells, sets = self._run_sets(served, parsed)

        def exact() -> tuple[Answer, int]:
            found = self._run(lambda: answer_exact(self.backend, spec, parsed, cells))
            return found, found.cells

        # one audit per dataset, shared by every analyst and every server on the database
        decision, answer = self.ledger.audit_release(analyst, served.auditor, sets, exact)
        if answer is None:
            raise Refusal(403, str(decision.code or "audit_refused"), decision.message)
        return {
            "rows": answer.rows,
            "mode": "restriction",
            "epsilon_spent": 0.0,
            "budget_remaining": None,
        }

    def _run_sets(self, served: _Served, parsed: ParsedQuery) -> tuple[list[Any], list[Any]]:
        try:
            return query_sets(self.backend, served.spec, parsed, served.domain)
        except UnsupportedQuery:
            raise
        except Exception as exc:  # noqa: BLE001
            raise UnsupportedQuery(
                "the database could not run the query (a literal may not match its column's "
                f"type); error type {type(exc).__name__}"
            ) from None

    def _camouflage(self, analyst: str, served: _Served, parsed: ParsedQuery) -> dict[str, Any]:
        spec = served.spec
        answer = self._run(
            lambda: answer_camouflage(self.backend, spec, parsed, served.domain, served.camouflaged)
        )
        self.ledger.log(
            analyst,
            spec.name,
            "camouflage",
            "answered",
            interval_width=answer.interval_width,
            cells=answer.cells,
        )
        return {
            "rows": answer.rows,
            "mode": "camouflage",
            "intervals": answer.details,
            "range_percent": spec.range_percent,
            "epsilon_spent": 0.0,
            "budget_remaining": None,
        }

    def budget(self, analyst: str) -> dict[str, Any]:
        """The caller's budget on each dp dataset."""
        return {
            "analyst": analyst,
            "datasets": {
                name: {
                    "budget": units_epsilon(b),
                    "spent": units_epsilon(s),
                    "remaining": units_epsilon(b - s),
                }
                for name, (b, s) in self.ledger.balances(analyst).items()
                if name in self.datasets
            },
        }

    def usage(self, analyst: str) -> dict[str, Any]:
        """The caller's query log summary (noise variance, refusals, interval widths)."""
        return {"analyst": analyst, "datasets": self.ledger.usage(analyst)}

    def describe(self) -> dict[str, Any]:
        """Public metadata of every dataset (never a value of the data, except the declared
        or enumerated public key values)."""
        out = {}
        for name, served in self.datasets.items():
            spec = served.spec
            entry: dict[str, Any] = {
                "table": spec.table,
                "mode": spec.mode,
                "columns": served.columns,
                "bounds": {c: list(b) for c, b in spec.bounds.items()},
                "public_keys": served.domain.values,
            }
            if served.roles is not None:
                entry["column_roles"] = served.roles.describe()
            if spec.mode == "dp":
                entry["budget_epsilon"] = spec.epsilon
                entry["query_epsilon"] = spec.query_epsilon
            if spec.mode == "restriction":
                entry["min_query_set"] = spec.min_query_set
            if spec.mode == "camouflage":
                entry["range_percent"] = spec.range_percent
                entry["camouflaged_columns"] = sorted(served.camouflaged)
            out[name] = entry
        return {"datasets": out}
