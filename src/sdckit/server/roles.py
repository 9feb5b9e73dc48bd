"""Column roles of a restriction or camouflage dataset, and the check of a query against them.

The model of a statistical database (Denning & Schlörer 1983, "Inference controls for
statistical databases", IEEE Computer 16(7); Adam & Wortmann 1989, "Security-control methods
for statistical databases", ACM Computing Surveys 21(4), §2): records are selected by a
*characteristic formula* over attributes the analyst may know, and only *aggregates* of the
confidential attributes are released. Each column therefore has one role:

* **public** (``public:`` and the ``public_keys`` of the dataset): may select records, in
  ``WHERE`` and (public keys) ``GROUP BY``, and be aggregated;
* **identifier** (``identifiers:``): never selects records and is never aggregated (it would
  select one record, or count one);
* **confidential** (every other column): may only be aggregated (``SUM``/``AVG``/
  ``COUNT(col)``); in camouflage mode only the camouflaged ones may, and they may also appear
  in ``WHERE``: the answer is then computed from their camouflage intervals, never from the
  values (Gopal, Garfinkel & Goes 2002, sec. 3), so it tells only what the intervals tell.

A query that breaks a role is refused before any data is read, by :meth:`ColumnRoles.guard`,
which :func:`sdckit.server.sql.parse_query` calls for every column it resolves. The decision
depends on the query text alone, so a refusal reveals nothing about the data. A query that
passes selects records by public columns only, so its *query set* is a function of public
values: the decisions the restriction auditor takes on query sets (size control and audit,
:mod:`sdckit.server.restriction`) are then simulatable in the sense of Kenthapadi, Mishra &
Nissim 2005 ("Simulatable auditing", PODS): the analyst could compute them without the
confidential values, so neither an answer's presence nor a refusal depends on those values.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from sdckit.server.config import Dataset
from sdckit.server.sql import UnsupportedQuery

__all__ = ["CONFIDENTIAL_AGGREGATE", "CONFIDENTIAL_PREDICATE", "ColumnRefused", "ColumnRoles"]

#: refusal code: WHERE / GROUP BY reads a column that may not select records
CONFIDENTIAL_PREDICATE = "confidential_predicate"
#: refusal code: an aggregate of an identifier (or, in camouflage mode, of a confidential
#: column that is not camouflaged)
CONFIDENTIAL_AGGREGATE = "confidential_aggregate"

#: the clauses in which a column selects records
SELECTING = ("WHERE", "GROUP BY")


class ColumnRefused(UnsupportedQuery):
    """A query uses a column against its role (HTTP 403, code :attr:`code`)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass(frozen=True)
class ColumnRoles:
    """The role of every column of a dataset (module docstring) and the checks of a query."""

    dataset: str
    mode: str
    public: tuple[str, ...]
    identifiers: tuple[str, ...]
    confidential: tuple[str, ...]
    camouflaged: frozenset[str]

    @classmethod
    def of(
        cls, dataset: Dataset, columns: Mapping[str, str], camouflaged: frozenset[str]
    ) -> ColumnRoles:
        """The roles of ``dataset``'s ``columns`` (those of its table, in table order):
        declared public and identifier columns; every other column is confidential."""
        public = tuple(c for c in columns if c in dataset.public)
        identifiers = tuple(c for c in columns if c in dataset.identifiers)
        confidential = tuple(c for c in columns if c not in public and c not in identifiers)
        return cls(
            dataset.name,
            dataset.mode,
            public,
            identifiers,
            confidential,
            camouflaged if dataset.mode == "camouflage" else frozenset(),
        )

    def describe(self) -> dict[str, list[str]]:
        """The roles for ``GET /v1/datasets``."""
        return {
            "public": list(self.public),
            "confidential": list(self.confidential),
            "identifiers": list(self.identifiers),
        }

    def guard(self, column: str, clause: str) -> None:
        """Refuse (:class:`ColumnRefused`) ``column`` used in ``clause`` (``WHERE``,
        ``GROUP BY`` or an aggregate's name, ``COUNT``, ``SUM``, ``AVG``, ``QUANTILE``) when its
        role forbids it; the decision reads the query text only."""
        where = f"datasets.{self.dataset}"
        if column in self.identifiers:
            code = CONFIDENTIAL_PREDICATE if clause in SELECTING else CONFIDENTIAL_AGGREGATE
            raise ColumnRefused(
                code,
                f"{clause} uses {column!r}, an identifier of dataset {self.dataset!r} "
                f"({where}.identifiers): an identifier singles out records, so it never "
                "selects records and is never aggregated; select records by public columns "
                f"({self._public_list()})",
            )
        if column in self.public:
            return
        if clause in SELECTING:
            if column in self.camouflaged and clause == "WHERE":
                return  # answered from the camouflage intervals, never from the values
            raise ColumnRefused(
                CONFIDENTIAL_PREDICATE,
                f"{clause} uses {column!r}, a confidential column of dataset {self.dataset!r}: "
                "records may be selected by public columns only "
                f"({self._public_list()}), since a query set chosen by a confidential value "
                "discloses it. If every analyst may know the values of "
                f"{column!r}, the server operator declares it in {where}.public",
            )
        if self.mode == "camouflage" and column not in self.camouflaged:
            raise ColumnRefused(
                CONFIDENTIAL_AGGREGATE,
                f"{clause}({column}): {column!r} is a confidential column of dataset "
                f"{self.dataset!r} without camouflage intervals, so its aggregates would be "
                f"exact; only public and camouflaged columns "
                f"({', '.join(sorted(self.camouflaged)) or 'none'}) are aggregated in "
                f"camouflage mode (the operator adds it to {where}.camouflage.columns)",
            )

    def _public_list(self) -> str:
        return ", ".join(self.public) or "none declared"
