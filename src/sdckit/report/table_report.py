"""The HTML page of a table job (``sdckit table``): the rules and method, the released table
with primary / secondary / safe cells coloured, the audit intervals beside the protection
intervals, and the information loss; for linked tables (:func:`linked_table_report`) the
same for every table, the audit being that of all the tables together."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from sdckit.report.writer import Report, Section

__all__ = ["linked_table_report", "table_report"]

#: Largest cross-tabulation drawn as a grid (rows x columns).
_GRID_LIMIT = (60, 30)


def _fmt_value(v: float) -> str:
    if v is None or (isinstance(v, float) and np.isnan(v)):
        return "x"
    return f"{v:,.0f}" if float(v).is_integer() else f"{v:,.2f}"


def _grid(cells: pd.DataFrame, names: list[str]) -> tuple[pd.DataFrame, list[list[str]]] | None:
    """The last two dimensions as a grid (other dimensions at their totals), with each
    cell's status as its CSS class; None when the table has one dimension or is too big."""
    if len(names) < 2:
        return None
    row_dim, col_dim = names[-2], names[-1]
    sub = cells
    for name in names[:-2]:
        total = cells[name].iloc[0]  # node 0 of every dimension is its total
        sub = sub[sub[name] == total]
    rows = pd.unique(sub[row_dim])
    cols = pd.unique(sub[col_dim])
    if len(rows) > _GRID_LIMIT[0] or len(cols) > _GRID_LIMIT[1]:
        return None
    values = sub.pivot(index=row_dim, columns=col_dim, values="published").loc[rows, cols]
    status = sub.pivot(index=row_dim, columns=col_dim, values="status").loc[rows, cols]
    shown = pd.DataFrame({f"{row_dim} \\ {col_dim}": [str(r) for r in rows]})
    classes: list[list[str]] = [[""] for _ in rows]
    for c in cols:
        shown[str(c)] = [_fmt_value(v) for v in values[c].to_numpy()]
        for i, st in enumerate(status[c].to_numpy()):
            classes[i].append(str(st))
    return shown, classes


def table_report(summary: dict[str, Any], cells: pd.DataFrame, table: Any) -> Report:
    """The report of a protected table (``summary``: :meth:`Protection.summary` plus the
    job's facts; ``cells``: :meth:`Protection.cells`)."""
    names = [d.name for d in table.dimensions]
    rep = Report("sdckit table", subtitle=f"Protection of the table of {summary.get('input')}")
    rules = ", ".join(
        f"{name}({', '.join(f'{k}={v}' for k, v in params.items() if v is not None)})"
        for entry in summary.get("rules", [])
        for name, params in entry.items()
    )
    rep.add(
        Section(
            "Job",
            facts={
                "input": summary.get("input"),
                "dimensions": ", ".join(
                    f"{k} ({v} codes)" for k, v in summary["dimensions"].items()
                ),
                "response": summary.get("response") or "(frequency table)",
                "rules": rules or "(none)",
                "method": summary["method"],
                "cells": summary["cells"],
                "primary cells": summary["primary"],
                "secondary cells": summary["secondary"],
                "suppressed value": summary["suppressed_value"],
                "safe (independent check)": "yes" if summary["safe"] else "NO",
                **_search_facts(summary),
                "seconds": round(float(summary.get("elapsed_seconds", 0.0)), 3),
            },
        )
    )
    grid = _grid(cells, names)
    if grid is not None:
        shown, classes = grid
        other = ", ".join(f"{n} = total" for n in names[:-2])
        rep.add(
            Section(
                "The released table",
                text=(
                    "Red: primary (sensitive) cells; orange: secondary suppressions; green: "
                    "published; grey: empty. 'x' is a suppressed value."
                    + (f" Shown at {other}." if other else "")
                ),
                table=shown,
                cell_classes=classes,
            )
        )
    if "deviation" in summary:
        rep.add(_deviation_section("Information loss", summary["deviation"]))
    else:
        loss = pd.DataFrame(
            [
                {"level (0 = grand total)": k, **v}
                for k, v in sorted(summary["secondary_by_level"].items(), key=lambda kv: int(kv[0]))
            ]
        )
        rep.add(
            Section(
                "Information loss",
                text=(
                    f"{summary['secondary']} secondary suppression(s) of total value "
                    f"{summary['secondary_value']:,.2f}, by hierarchy level."
                ),
                table=loss,
            )
        )
    suppressed = cells[cells["status"].isin(["primary", "secondary"])]
    if len(suppressed) and np.isfinite(suppressed["audit_lower"].to_numpy(dtype=float)).any():
        rep.add(
            Section(
                "Audit",
                text=(
                    "For every suppressed cell, the interval an intruder can derive from the "
                    "published cells and the table's additivity (linear programming), beside "
                    "the cell's value; a primary cell is safe when the interval reaches its "
                    "protection interval on both sides."
                ),
                table=suppressed[[*names, "value", "status", "audit_lower", "audit_upper"]],
            )
        )
    return rep


def _rules_text(summary: dict[str, Any]) -> str:
    return ", ".join(
        f"{name}({', '.join(f'{k}={v}' for k, v in params.items() if v is not None)})"
        for entry in summary.get("rules", [])
        for name, params in entry.items()
    )


def linked_table_report(summary: dict[str, Any], cells: pd.DataFrame, linked: Any) -> Report:
    """The report of protected linked tables (``summary``: :meth:`LinkedProtection.summary`
    plus the job's facts; ``cells``: :meth:`LinkedProtection.cells`, with its ``table``
    column; ``linked``: the :class:`~sdckit.tables.linked.LinkedTables`)."""
    rep = Report(
        "sdckit table",
        subtitle=f"Consistent protection of {len(linked.tables)} linked tables of "
        f"{summary.get('input')}",
    )
    rep.add(
        Section(
            "Job",
            text=(
                "The tables share cells (same codes where not at a total); every common cell "
                "has one status in all its tables, and the audit sees every table's relations "
                "at once, as an intruder holding all the tables would."
            ),
            facts={
                "input": summary.get("input"),
                "tables": "; ".join(
                    f"{label} ({s['cells']} cells)" for label, s in summary["tables"].items()
                ),
                "dimensions": ", ".join(
                    f"{k} ({v} codes)" for k, v in summary["dimensions"].items()
                ),
                "response": summary.get("response") or "(frequency table)",
                "rules": _rules_text(summary) or "(none)",
                "method": summary["method"],
                "distinct cells": summary["cells"],
                "common cells": summary["common_cells"],
                "primary cells": summary["primary"],
                "secondary cells": summary["secondary"],
                "suppressed value": summary["suppressed_value"],
                "safe (independent check)": "yes" if summary["safe"] else "NO",
                "seconds": round(float(summary.get("elapsed_seconds", 0.0)), 3),
            },
        )
    )
    for (label, s), table in zip(summary["tables"].items(), linked.tables, strict=True):
        names = [d.name for d in table.dimensions]
        mine = cells[cells["table"] == label].reset_index(drop=True)
        rep.add(
            Section(
                f"Table {label}",
                facts={
                    "dimensions": " x ".join(names),
                    "cells": s["cells"],
                    "primary cells": s["primary"],
                    "secondary cells": s["secondary"],
                    "suppressed value": s["suppressed_value"],
                },
            )
        )
        grid = _grid(mine, names)
        if grid is not None:
            shown, classes = grid
            other = ", ".join(f"{n} = total" for n in names[:-2])
            rep.add(
                Section(
                    f"The released table {label}",
                    text=(
                        "Red: primary; orange: secondary; green: published; grey: empty. 'x' "
                        "is a suppressed value." + (f" Shown at {other}." if other else "")
                    ),
                    table=shown,
                    cell_classes=classes,
                )
            )
        suppressed = mine[mine["status"].isin(["primary", "secondary"])]
        if len(suppressed) and np.isfinite(suppressed["audit_lower"].to_numpy(dtype=float)).any():
            rep.add(
                Section(
                    f"Audit of {label}",
                    text=(
                        "For every suppressed cell, the interval an intruder derives from the "
                        "published cells of all the linked tables and their additivity."
                    ),
                    table=suppressed[[*names, "value", "status", "audit_lower", "audit_upper"]],
                )
            )
    if "deviation" in summary:
        rep.add(_deviation_section("Information loss (distinct cells)", summary["deviation"]))
    else:
        rep.add(
            Section(
                "Information loss (distinct cells)",
                text=(
                    f"{summary['secondary']} secondary suppression(s) of total value "
                    f"{summary['secondary_value']:,.2f}."
                ),
                table=pd.DataFrame(
                    [
                        {"table": label, **{k: s[k] for k in ("secondary", "secondary_value")}}
                        for label, s in summary["tables"].items()
                    ]
                ),
            )
        )
    return rep


def _deviation_section(title: str, dev: dict[str, float]) -> Section:
    """The deviations of a perturbative method (rounding, CTA, cell key) as a section."""
    return Section(
        title,
        facts={
            "sum of absolute deviations": dev["sum_abs"],
            "largest absolute deviation": dev["max_abs"],
            "sum of relative deviations": dev["sum_rel"],
            "largest relative deviation": dev["max_rel"],
        },
    )


def _search_facts(summary: dict[str, Any]) -> dict[str, Any]:
    """The optimal method's time limit, whether it proved optimality, the heuristic whose
    pattern was its incumbent, its lower bound on the secondary cost and the gap (nothing
    for the other methods)."""
    if summary.get("time_limit") is None:
        return {}
    facts: dict[str, Any] = {
        "time limit (s)": summary["time_limit"],
        "proven optimal": "yes" if summary.get("optimal") else "no",
    }
    if summary.get("start"):
        facts["start (incumbent)"] = summary["start"]
    if summary.get("lower_bound") is not None:
        facts["lower bound (secondary cost)"] = round(float(summary["lower_bound"]), 2)
        facts["gap"] = f"{100 * float(summary.get('gap', 0.0)):.2f}%"
    return facts
