"""Check data against privacy models: "does it satisfy them, and where not?".

:func:`check` builds the frequency set of the data (quasi-identifiers and hierarchies from the
schema, the sensitive attributes the models need, optional generalization levels), prepares
every model with the ungeneralized frequency set of all records and evaluates it on the
(generalized) one. This is what ARX reports for a given transformation (its "privacy model
fulfilled" check on a ``DataHandle``), without anonymizing anything.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from sdckit.core.frequency import (
    FrequencySet,
    attribute_columns,
    frequency_set,
    require_values,
)
from sdckit.core.hierarchy import Hierarchy
from sdckit.core.schema import Schema
from sdckit.errors import ConfigError, DataError
from sdckit.models.base import ModelResult, PrivacyModel

__all__ = ["CheckResult", "check"]


@dataclass
class CheckResult:
    """The verdicts of several models on one data set (at given generalization levels)."""

    satisfied: bool
    results: list[ModelResult]
    frequency_set: FrequencySet = field(repr=False)

    def violations(self) -> pd.DataFrame:
        """The violating classes: QI labels, ``count`` and ``models`` (names, ``"; "``-joined).

        Global models (average risk, sample uniqueness) flag no class; see ``results``.
        """
        fs = self.frequency_set
        table = fs.labels()
        flagged = np.zeros(fs.n_classes, dtype=bool)
        names = np.full(fs.n_classes, "", dtype=object)
        for r in self.results:
            v = np.asarray(r.violating, dtype=bool)
            if not v.any():
                continue
            sep = np.where(flagged, "; ", "")
            names = np.where(v, names + sep + r.model, names)
            flagged |= v
        table["models"] = names
        out = table[flagged]
        out.index.name = "class"
        return out

    def to_dict(self) -> dict:
        """JSON-ready summary: overall verdict and, per model, its verdict and details."""
        return {
            "satisfied": self.satisfied,
            "n_classes": self.frequency_set.n_classes,
            "n_records": self.frequency_set.n_records,
            "levels": list(self.frequency_set.levels),
            "models": [
                {
                    "model": r.model,
                    "satisfied": r.satisfied,
                    "violating_classes": r.n_violating_classes,
                    "details": r.details,
                }
                for r in self.results
            ],
        }


def _levels(levels, qis: list[str]) -> tuple[int, ...] | None:
    """Normalize ``levels`` (sequence aligned with the QIs, or mapping name -> level)."""
    if levels is None:
        return None
    if isinstance(levels, Mapping):
        unknown = [n for n in levels if n not in qis]
        if unknown:
            raise ConfigError(
                f"levels: {unknown} are not quasi-identifiers of the schema "
                f"(quasi-identifiers: {qis})"
            )
        raw = [levels.get(n, 0) for n in qis]
    elif isinstance(levels, Sequence) and not isinstance(levels, (str, bytes)):
        raw = list(levels)
        if len(raw) != len(qis):
            raise ConfigError(
                f"levels: expected one level per quasi-identifier ({len(qis)}: "
                f"{qis}), got {len(raw)}"
            )
    else:
        raise ConfigError(
            f"levels must be a list of integers or a mapping column -> level, got {levels!r}"
        )
    out = []
    for name, lv in zip(qis, raw, strict=True):
        if isinstance(lv, bool) or not isinstance(lv, (int, np.integer)) or lv < 0:
            raise ConfigError(f"levels: the level of {name!r} must be an integer >= 0, got {lv!r}")
        out.append(int(lv))
    return tuple(out)


def _validate(data: pd.DataFrame, schema: Schema, models: Sequence[PrivacyModel]) -> list[str]:
    """Check models against data and schema; return the sensitive attributes needed."""
    if not isinstance(models, Sequence) or isinstance(models, (str, bytes)) or not models:
        raise ConfigError("check: give a non-empty list of privacy models, e.g. [KAnonymity(5)]")
    qis = schema.quasi_identifiers
    sensitive: list[str] = []
    for m in models:
        if not isinstance(m, PrivacyModel):
            raise ConfigError(f"check: {m!r} is not a privacy model (sdckit.models.*)")
        for attr in m.sensitive_attributes:
            for col in attribute_columns(attr):
                if col not in data.columns:
                    raise ConfigError(
                        f"model {m.name}: attribute {col!r} is not a column of the data "
                        f"(columns: {', '.join(map(str, data.columns))})"
                    )
                if col in qis:
                    raise ConfigError(
                        f"model {m.name}: attribute {col!r} is a quasi-identifier in the "
                        "schema; a sensitive attribute must not also be a quasi-identifier"
                    )
            if attr not in sensitive:
                sensitive.append(attr)
    for m in models:
        conflict = m.size_conflict(len(data))
        if conflict:
            raise ConfigError(f"model {m.name}: {conflict}")
    return sensitive


def check(
    data: pd.DataFrame,
    schema: Schema,
    models: Sequence[PrivacyModel],
    levels: Sequence[int] | Mapping[str, int] | None = None,
) -> CheckResult:
    """Evaluate ``models`` on ``data`` (generalized to ``levels``; default: as it is).

    The quasi-identifiers and their hierarchies come from ``schema`` (hierarchies are needed
    for levels above 0); ``levels`` is one level per quasi-identifier (schema order) or a
    mapping ``column -> level`` (others 0). Returns a :class:`CheckResult` whose
    ``satisfied`` is true when every model is satisfied and whose ``violations()`` lists the
    violating classes.
    """
    if not isinstance(data, pd.DataFrame):
        raise ConfigError(f"check: data must be a pandas DataFrame, got {type(data).__name__}")
    if not isinstance(schema, Schema):
        raise ConfigError(f"check: schema must be a sdckit Schema, got {type(schema).__name__}")
    qis = schema.quasi_identifiers
    if not qis:
        raise ConfigError(
            "check: the schema has no quasi-identifying attribute; mark the "
            "columns an intruder could know as quasi_identifying"
        )
    sensitive = _validate(data, schema, models)
    absent = [q for q in qis if q not in data.columns]
    if absent:
        raise DataError(
            f"check: quasi-identifier column(s) {', '.join(map(repr, absent))} of the schema "
            f"are not in the data; available columns: {', '.join(map(str, data.columns))}"
        )
    lv = _levels(levels, qis)
    hierarchies: dict[str, Hierarchy] = {}
    for q in qis:
        h = schema.hierarchy(q) if q in schema.attributes else None
        if h is not None:
            hierarchies[q] = h
    orders: dict[str, tuple[str, ...]] = {}
    for a in sensitive:
        order = schema.attributes[a].order if a in schema.attributes else None
        if order is not None:
            orders[a] = order
    base = frequency_set(
        data, qis, sensitive=sensitive, hierarchies=hierarchies, orders=orders or None
    )
    require_values(base)
    for m in models:
        m.prepare(base)
    fs = base if lv is None or not any(lv) else base.rollup(lv)
    results = [m.evaluate(fs) for m in models]
    return CheckResult(all(r.satisfied for r in results), results, fs)
