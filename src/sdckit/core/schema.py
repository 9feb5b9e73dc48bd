"""Attribute roles and types: the schema that travels with a data set.

Roles follow ARX (identifying, quasi-identifying, sensitive, insensitive); types follow what
sdcMicro and ARX users declare (nominal, ordinal, integer, decimal, date).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from sdckit.errors import ConfigError, DataError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from sdckit.core.hierarchy import Hierarchy


class Role(StrEnum):
    """What an attribute is to an intruder (ARX's four attribute types)."""

    IDENTIFYING = "identifying"
    QUASI_IDENTIFYING = "quasi_identifying"
    SENSITIVE = "sensitive"
    INSENSITIVE = "insensitive"


class DataType(StrEnum):
    """The measurement scale of an attribute."""

    NOMINAL = "nominal"
    ORDINAL = "ordinal"
    INTEGER = "integer"
    DECIMAL = "decimal"
    DATE = "date"

    @property
    def numeric(self) -> bool:
        """True for integer and decimal attributes."""
        return self in (DataType.INTEGER, DataType.DECIMAL)


def _data_type(value: DataType | str, column: str) -> DataType:
    """``value`` as a :class:`DataType`; ConfigError naming the column and the choices."""
    try:
        return DataType(value)
    except ValueError:
        raise ConfigError(
            f"column {column!r}: unknown type {value!r}; use one of "
            f"{', '.join(t.value for t in DataType)}"
        ) from None


@dataclass(frozen=True)
class Attribute:
    """One column's role, type and (optional) generalization hierarchy.

    ``order`` lists the categories of an ordinal attribute from lowest to highest; ``format``
    is the strptime format of a date attribute. ``pseudonymize`` (identifying attributes
    only) keeps the column as keyed HMAC tokens instead of dropping it.
    """

    name: str
    role: Role = Role.INSENSITIVE
    type: DataType = DataType.NOMINAL
    hierarchy: Hierarchy | None = None
    order: tuple[str, ...] | None = None
    format: str | None = None
    pseudonymize: Mapping[str, Any] | None = None


@dataclass
class Schema:
    """The attributes of a data set, by name, in column order."""

    attributes: dict[str, Attribute] = field(default_factory=dict)

    @classmethod
    def from_roles(
        cls,
        quasi_identifying: Iterable[str] = (),
        sensitive: Iterable[str] = (),
        identifying: Iterable[str] = (),
        insensitive: Iterable[str] = (),
        hierarchies: Mapping[str, Hierarchy] | None = None,
        types: Mapping[str, DataType | str] | None = None,
    ) -> Schema:
        """Build a schema from lists of column names per role (the common quick path)."""
        hierarchies = dict(hierarchies or {})
        types = {k: _data_type(v, k) for k, v in (types or {}).items()}
        attrs: dict[str, Attribute] = {}
        for role, names in (
            (Role.IDENTIFYING, identifying),
            (Role.QUASI_IDENTIFYING, quasi_identifying),
            (Role.SENSITIVE, sensitive),
            (Role.INSENSITIVE, insensitive),
        ):
            for name in names:
                if name in attrs:
                    raise DataError(
                        f"column {name!r} is given two roles ({attrs[name].role.value} and "
                        f"{role.value}); give each column one role"
                    )
                attrs[name] = Attribute(
                    name=name,
                    role=role,
                    type=DataType(types.get(name, DataType.NOMINAL)),
                    hierarchy=hierarchies.get(name),
                )
        return cls(attrs)

    def names(self, role: Role | str) -> list[str]:
        """Names of the attributes with the given role, in schema order."""
        try:
            role = Role(role)
        except ValueError:
            raise ConfigError(
                f"unknown role {role!r}; use one of {', '.join(r.value for r in Role)}"
            ) from None
        return [a.name for a in self.attributes.values() if a.role is role]

    @property
    def quasi_identifiers(self) -> list[str]:
        """Quasi-identifying attribute names."""
        return self.names(Role.QUASI_IDENTIFYING)

    @property
    def sensitive(self) -> list[str]:
        """Sensitive attribute names."""
        return self.names(Role.SENSITIVE)

    @property
    def identifying(self) -> list[str]:
        """Directly identifying attribute names (dropped or pseudonymized on output)."""
        return self.names(Role.IDENTIFYING)

    def hierarchy(self, name: str) -> Hierarchy | None:
        """The hierarchy of ``name`` (None if it has none)."""
        return self.attributes[name].hierarchy

    def with_attribute(self, attribute: Attribute) -> Schema:
        """A copy with ``attribute`` added or replaced."""
        attrs = dict(self.attributes)
        attrs[attribute.name] = attribute
        return Schema(attrs)

    def with_hierarchy(self, name: str, hierarchy: Hierarchy) -> Schema:
        """A copy where ``name`` has ``hierarchy``."""
        return self.with_attribute(replace(self.attributes[name], hierarchy=hierarchy))

    def check_columns(self, df: pd.DataFrame, source: str = "the data") -> None:
        """Raise :class:`DataError` naming every schema column missing from ``df``."""
        missing = [n for n in self.attributes if n not in df.columns]
        if missing:
            raise DataError(
                f"column(s) {', '.join(map(repr, missing))} not found in {source}; "
                f"available columns: {', '.join(map(str, df.columns))}"
            )
