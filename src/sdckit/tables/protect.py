"""Protect a table in one call: primary cells by the rules, then one method, then the check.

:func:`protect` is the engine behind ``sdckit table``: it applies the sensitivity rules
(:mod:`sdckit.tables.rules`), protects the table with one method and returns a
:class:`Protection` whose :meth:`Protection.cells` is the released table, one row per cell:

* ``optimal`` / ``simple`` (and ``hypercube`` / ``modular`` where available): secondary cell
  suppression (:mod:`sdckit.tables.suppression`); every pattern is audited
  (:mod:`sdckit.tables.audit`) -- an unsafe pattern is repaired, never released;
* ``rounding``: controlled rounding to a base (:mod:`sdckit.tables.rounding`);
* ``cta``: controlled tabular adjustment (:mod:`sdckit.tables.adjustment`);
* ``cell_key``: the cell key method (:mod:`sdckit.tables.cell_key`; frequency tables).

The independent check before anything is released: for suppression the audit's feasibility
intervals must cover every primary cell's protection interval; for CTA every primary cell must
lie outside its protection interval and the adjusted table must be additive; for rounding every
cell must be a multiple of the base within one base of its value and the table additive; for
the cell key method every perturbed cell must be the count plus the p-table's noise for its
cell key. A failed check raises :class:`~sdckit.errors.VerificationError`.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from sdckit.errors import ConfigError, VerificationError
from sdckit.tables.registry import TABLE_METHODS
from sdckit.tables.rules import Primary, SensitivityRule, primary_cells
from sdckit.tables.table import Table

__all__ = ["METHODS", "Protection", "audit_table", "protect"]

#: Every method name :func:`protect` accepts: those of
#: :data:`sdckit.tables.registry.TABLE_METHODS`.
METHODS = TABLE_METHODS.names()
_TOL = 1e-7


@dataclass
class Protection:
    """A protected table: per-cell ``status`` (``safe | primary | secondary | empty``),
    ``published`` values (NaN where suppressed), the audit's bounds where there is one, and
    the method's summary (``details``)."""

    table: Table
    method: str
    primary: Primary
    status: np.ndarray
    published: np.ndarray
    audit_lower: np.ndarray
    audit_upper: np.ndarray
    safe: bool
    details: dict[str, Any] = field(default_factory=dict)

    def _repr_html_(self) -> str:
        """The protected table in a Jupyter notebook: the summary tables and charts of its HTML
        report, compact (:func:`sdckit.core.display.notebook_html`)."""
        from sdckit.core.display import notebook_html

        return notebook_html("protection", self)

    def cells(self) -> pd.DataFrame:
        """One row per cell: the codes, ``value``, ``freq``, ``status``, ``audit_lower``,
        ``audit_upper``, ``published`` (the released table)."""
        df = self.table.codes()
        df["value"] = self.table.value
        df["freq"] = self.table.freq
        df["status"] = self.status
        df["audit_lower"] = self.audit_lower
        df["audit_upper"] = self.audit_upper
        df["published"] = self.published
        return df

    def summary(self) -> dict[str, Any]:
        """The JSON summary: ``cells``, ``primary``, ``secondary``, ``suppressed_value``,
        ``safe``, ``method`` and the method's figures (information loss by level)."""
        secondary = self.status == "secondary"
        suppressed = np.isnan(self.published)
        by_level: dict[str, dict[str, float]] = {}
        for lev in np.unique(self.table.level):
            at = self.table.level == lev
            by_level[str(int(lev))] = {
                "cells": int(at.sum()),
                "secondary": int((secondary & at).sum()),
                "secondary_value": float(np.abs(self.table.value[secondary & at]).sum()),
            }
        out: dict[str, Any] = {
            "method": self.method,
            "cells": self.table.n_cells,
            "primary": self.primary.count,
            "primary_by_rule": self.primary.summary()["by_rule"],
            "secondary": int(secondary.sum()),
            "suppressed_value": float(np.abs(self.table.value[suppressed]).sum()),
            "secondary_value": float(np.abs(self.table.value[secondary]).sum()),
            "secondary_by_level": by_level,
            "safe": bool(self.safe),
        }
        if self.method in TABLE_METHODS and TABLE_METHODS.traits(self.method).kind != "suppression":
            dev = np.where(np.isnan(self.published), 0.0, self.published - self.table.value)
            rel = np.abs(dev) / np.maximum(np.abs(self.table.value), 1.0)
            out["deviation"] = {
                "sum_abs": float(np.abs(dev).sum()),
                "max_abs": float(np.abs(dev).max()) if dev.size else 0.0,
                "sum_rel": float(rel.sum()),
                "max_rel": float(rel.max()) if rel.size else 0.0,
            }
        out.update(self.details)
        return out


def protect(
    table: Table,
    rules: Sequence[SensitivityRule],
    method: str = "optimal",
    *,
    options: Mapping[str, Any] | None = None,
    min_protection: float = 1.0,
) -> Protection:
    """Apply ``rules`` and protect ``table`` with ``method`` (see the module docstring).

    ``options`` are the method's parameters: ``time_limit`` (seconds; suppression, rounding,
    CTA), ``singletons`` (suppression: also against singletons' respondents,
    :mod:`sdckit.tables.singletons`), ``base`` (rounding), ``ptable`` and ``cell_keys`` (cell
    key method: the p-table and the per-cell keys). Raises
    :class:`~sdckit.errors.ConfigError` for an unknown method or missing parameters and
    :class:`~sdckit.errors.VerificationError` if a result fails its independent check.
    """
    opts = dict(options or {})
    if method not in METHODS:
        raise ConfigError(f"unknown table method {method!r}; use one of {', '.join(METHODS)}")
    t0 = time.perf_counter()
    primary = primary_cells(table, rules, min_protection=min_protection)
    empty = (table.freq == 0) & (table.value == 0)
    nan = np.full(table.n_cells, np.nan)
    if TABLE_METHODS.traits(method).kind == "suppression":
        from sdckit.tables.audit import audit
        from sdckit.tables.suppression import suppress

        single = bool(opts.get("singletons", False))
        result = suppress(
            table, primary, method, time_limit=opts.get("time_limit"), singletons=single
        )
        check = audit(table, result.suppressed, primary)  # independent of the method's own
        if not check.safe:
            raise VerificationError(
                f"{method}: the suppression pattern leaves {len(check.exposed)} primary cell(s) "
                "exposed in the independent audit; nothing was written (a bug in sdckit)"
            )
        if single:
            from sdckit.tables.singletons import singleton_exposures

            if not singleton_exposures(table, result.suppressed, primary).safe:
                raise VerificationError(
                    f"{method}: a singleton's respondent learns a primary cell; nothing was "
                    "written (a bug in sdckit)"
                )
        published = np.where(result.suppressed, np.nan, table.value)
        details = dict(result.details)
        prot = Protection(
            table,
            method,
            primary,
            np.asarray(result.status, dtype=object),
            published,
            check.lower,
            check.upper,
            True,
            details,
        )
    else:
        status = np.where(primary.unsafe, "primary", np.where(empty, "empty", "safe")).astype(
            object
        )
        if method == "rounding":
            from sdckit.tables.rounding import controlled_rounding

            if "base" not in opts:
                raise ConfigError("method rounding needs option `base` (e.g. options: {base: 5})")
            r = controlled_rounding(table, opts["base"], time_limit=opts.get("time_limit"))
            published = np.asarray(r.rounded, dtype=float)
            _check_rounding(table, published, float(opts["base"]))
            details = r.to_dict()
        elif method == "cta":
            from sdckit.tables.adjustment import controlled_adjustment

            a = controlled_adjustment(table, primary, time_limit=opts.get("time_limit"))
            published = np.asarray(a.adjusted, dtype=float)
            _check_adjustment(table, primary, published)
            details = a.to_dict()
        else:
            from sdckit.tables.cell_key import cell_key

            if "ptable" not in opts:
                raise ConfigError("method cell_key needs option `ptable` (a p-table file)")
            c = cell_key(table, opts["ptable"], opts.get("cell_keys"))
            published = np.asarray(c.perturbed, dtype=float)
            details = c.to_dict()
        prot = Protection(table, method, primary, status, published, nan, nan.copy(), True, details)
    prot.details["elapsed_seconds"] = time.perf_counter() - t0
    return prot


def audit_table(
    table: Table,
    status: Sequence[str] | np.ndarray | pd.DataFrame,
    rules: Sequence[SensitivityRule] = (),
    *,
    min_protection: float = 1.0,
    status_column: str = "status",
    primary_statuses: Sequence[str] | None = None,
    secondary_statuses: Sequence[str] | None = None,
    published_statuses: Sequence[str] | None = None,
) -> Protection:
    """Audit a table protected by another tool (tau-Argus, sdcTable, ...): the suppressed
    cells are read from ``status`` (per cell, or a DataFrame with the dimension columns and
    ``status_column``; codes as :func:`sdckit.tables.audit.audit_cells` reads them) and every
    suppressed cell's feasibility interval is computed (Hundepool et al. 2012, sec. 4.3.2).

    With ``rules``, the primary cells and their protection intervals are the rules' (the
    same as for :func:`protect`): a sensitive cell the other tool published, or whose
    interval does not cover its protection interval, is exposed. Without rules, the cells
    with a primary status are the primaries and need a positive-width interval. Nothing is
    changed: ``safe`` reports the finding (False when a cell is exposed), the status column
    says ``primary`` (sensitive by the rules, or so marked without rules), ``secondary``
    (suppressed otherwise), ``safe`` or ``empty``; ``details["exposed"]`` lists the exposed
    cells' codes (at most 20). Cells are taken as non-negative when every value is.
    """
    from sdckit.tables.audit import audit_cells

    t0 = time.perf_counter()
    primary = primary_cells(table, rules, min_protection=min_protection) if rules else None
    nonneg = bool((table.value >= 0).all())
    check = audit_cells(
        table,
        status,
        primary,
        status_column=status_column,
        primary_statuses=primary_statuses,
        suppressed_statuses=secondary_statuses,
        published_statuses=published_statuses,
        lower_bounds=0.0 if nonneg else None,
    )
    if primary is None:
        zero = np.zeros(table.n_cells)
        primary = Primary(check.primary, zero, zero.copy(), {"status": check.primary})
    empty = (table.freq == 0) & (table.value == 0)
    sup = check.suppressed
    status_out = np.where(
        primary.unsafe,
        "primary",
        np.where(sup, "secondary", np.where(empty, "empty", "safe")),
    ).astype(object)
    names = table.names
    codes = table.codes()
    exposed = [{n: str(codes[n].iat[int(i)]) for n in names} for i in check.exposed[:20]]
    details: dict[str, Any] = {
        "audit": check.to_dict(),
        "exposed": exposed,
        "exposed_count": int(len(check.exposed)),
        "sensitive_published": int((primary.unsafe & ~sup).sum()),
        "primaries_from": "rules" if rules else "status",
        "elapsed_seconds": time.perf_counter() - t0,
    }
    published = np.where(sup, np.nan, table.value)
    return Protection(
        table,
        "audit",
        primary,
        status_out,
        published,
        check.lower,
        check.upper,
        check.safe,
        details,
    )


def _check_rounding(table: Table, rounded: np.ndarray, base: float) -> None:
    """Independent check of a controlled rounding: multiples of ``base``, within one base of
    the value (a multiple stays), additive."""
    ratio = rounded / base
    ok = np.abs(ratio - np.rint(ratio)) <= _TOL * np.maximum(1.0, np.abs(ratio))
    ok &= np.abs(rounded - table.value) < base * (1 + _TOL)
    multiple = np.abs(table.value / base - np.rint(table.value / base)) <= _TOL
    ok &= ~multiple | (np.abs(rounded - table.value) <= _TOL * np.maximum(1.0, base))
    if not ok.all() or not _additive(table, rounded):
        raise VerificationError("rounding: the rounded table fails the independent check")


def _check_adjustment(table: Table, primary: Primary, adjusted: np.ndarray) -> None:
    """Independent check of CTA: additive, and every primary outside its interval."""
    a = table.value
    out_up = adjusted >= a + primary.upper - _TOL * np.maximum(1.0, np.abs(a))
    out_down = adjusted <= a - primary.lower + _TOL * np.maximum(1.0, np.abs(a))
    moved = out_up | out_down
    if not _additive(table, adjusted) or not moved[primary.unsafe].all():
        raise VerificationError("cta: the adjusted table fails the independent check")


def _additive(table: Table, values: np.ndarray) -> bool:
    a = table.constraints()
    if a.shape[0] == 0:
        return True
    scale = np.maximum(1.0, np.abs(a) @ np.abs(values))
    return bool((np.abs(a @ values) <= 1e-6 * scale).all())
