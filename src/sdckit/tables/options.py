"""The parameters each table protection method takes (a table job's ``options:``), as specs.

One frozen :class:`~sdckit.core.spec.Spec` per kind of method (:data:`OPTIONS`, by the
method names of :data:`sdckit.tables.registry.TABLE_METHODS`) declares the options the
method reads, with their types and defaults; :func:`parse_table_options` validates a mapping
naming the key path in a job file, so a bad value or an option the method does not read
(``base`` for ``optimal``) is refused before the data is read, with the allowed ones.

==================  =========================================================================
``optimal``,        ``time_limit`` (seconds: bounds the optimal search, and each sub-table's
``simple``,         exact search of ``modular``), ``singletons`` (also protect against a
``hypercube``,      suppressed single-contributor cell's respondent)
``modular``
``rounding``        ``base`` (required), ``time_limit``
``cta``             ``time_limit``
``cell_key``        ``ptable`` (required: the p-table file), ``key`` (the microdata's record
                    key column; required for linked tables)
==================  =========================================================================

``method: audit`` (a table protected by another tool, audited: :class:`AuditOptions`) takes
``status`` and the status code lists. The options that build the table (``value``, ``freq``,
``top``, ``top_n``, ``min_protection``) are the job's (:mod:`sdckit.jobs.table`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, ClassVar

from pydantic import BeforeValidator, Field

from sdckit.core.spec import Boolean, ColumnName, Number, Spec
from sdckit.errors import ConfigError

__all__ = [
    "AuditOptions",
    "CellKeyOptions",
    "CtaOptions",
    "OPTIONS",
    "RoundingOptions",
    "SuppressionOptions",
    "TableMethodOptions",
    "parse_table_options",
]

#: Seconds (> 0); ``None``: the method's default.
Seconds = Annotated[Number, Field(gt=0)]


class TableMethodOptions(Spec):
    """Options of one table protection method (``spec_name`` is the method's kind)."""

    spec_noun: ClassVar[str] = "option"


class SuppressionOptions(TableMethodOptions):
    """Secondary cell suppression (:func:`sdckit.tables.suppression.suppress`).

    Parameters
    ----------
    time_limit : float, optional
        Seconds the optimal search may take (default 15,
        :data:`~sdckit.tables.suppression.DEFAULT_TIME_LIMIT`); for ``modular``, each sub-table's
        exact search (default: bounded by work, not time). The heuristics ``simple`` and
        ``hypercube`` run until done.
    singletons : bool
        Also protect every primary cell from the respondent of a suppressed
        single-contributor cell, who knows that cell's value (:mod:`sdckit.tables.singletons`).
    """

    spec_name: ClassVar[str] = "suppression"

    time_limit: Seconds | None = None
    singletons: Boolean = False


class RoundingOptions(TableMethodOptions):
    """Controlled rounding (:func:`sdckit.tables.rounding.controlled_rounding`).

    Parameters
    ----------
    base : float
        The rounding base: every cell is published as an adjacent multiple of it.
    time_limit : float, optional
        Seconds the search may take; the best rounding found by then is released.
    """

    spec_name: ClassVar[str] = "rounding"

    base: Annotated[Number, Field(gt=0)]
    time_limit: Seconds | None = None


class CtaOptions(TableMethodOptions):
    """Controlled tabular adjustment (:func:`sdckit.tables.adjustment.controlled_adjustment`).

    Parameters
    ----------
    time_limit : float, optional
        Seconds the search may take; the best adjustment found by then is released.
    """

    spec_name: ClassVar[str] = "cta"

    time_limit: Seconds | None = None


class CellKeyOptions(TableMethodOptions):
    """The cell key method (:func:`sdckit.tables.cell_key.cell_key`).

    Parameters
    ----------
    ptable : str
        The perturbation table file (tau-Argus / ptable format), relative to the job file.
    key : str, optional
        The microdata's column of record keys (numbers in [0, 1]); each cell's key is their
        sum modulo 1. Required for linked tables.
    """

    spec_name: ClassVar[str] = "cell_key"

    ptable: Annotated[str, Field(min_length=1)]
    key: ColumnName | None = None


def _codes(value: Any) -> Any:
    """A list of status codes as text (a YAML number is a code too); one code alone is
    refused, as a list is meant."""
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    if value is not None:
        raise ValueError("must be a list of codes, e.g. [u, D]")
    return value


#: Status codes of a cells file.
Codes = Annotated[list[str], BeforeValidator(_codes)]


class AuditOptions(TableMethodOptions):
    """Auditing a table protected by another tool (``method: audit``,
    :func:`sdckit.tables.protect.audit_table`): the status of each cell is read from the
    cells file, with codes as :func:`sdckit.tables.audit.audit_cells` reads them.

    Parameters
    ----------
    status : str
        The cells file's column holding each cell's suppression status.
    primary_statuses : list of str, optional
        The codes of primary (sensitive) suppressions (default
        :data:`~sdckit.tables.audit.PRIMARY_STATUSES`).
    secondary_statuses : list of str, optional
        The codes of secondary suppressions (default
        :data:`~sdckit.tables.audit.SECONDARY_STATUSES`).
    published_statuses : list of str, optional
        The codes of published cells (default :data:`~sdckit.tables.audit.PUBLISHED_STATUSES`).
    """

    spec_name: ClassVar[str] = "audit"

    status: Annotated[str, Field(min_length=1)] = "status"
    primary_statuses: Codes | None = None
    secondary_statuses: Codes | None = None
    published_statuses: Codes | None = None


#: Table method name -> the spec of its options.
OPTIONS: dict[str, type[TableMethodOptions]] = {
    **{name: SuppressionOptions for name in ("optimal", "simple", "hypercube", "modular")},
    "rounding": RoundingOptions,
    "cta": CtaOptions,
    "cell_key": CellKeyOptions,
}


def parse_table_options(
    method: str, options: Mapping[str, Any] | None, where: str | None = None
) -> TableMethodOptions:
    """Validate the ``options`` of table method ``method`` (or ``audit``).

    Raises :class:`~sdckit.errors.ParameterError` naming the option (and ``where``, the key
    path in a job file): ``'job.yaml': options: unknown option 'base'; allowed: time_limit,
    singletons``; :class:`~sdckit.errors.ConfigError` for an unknown method.
    """
    cls = AuditOptions if method == "audit" else OPTIONS.get(method)
    if cls is None:
        raise ConfigError(f"unknown table method {method!r}; use one of {', '.join(OPTIONS)}")
    return cls.from_dict(options, where)
