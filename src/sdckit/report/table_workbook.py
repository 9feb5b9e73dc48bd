"""A protected table as an Excel workbook, as statistical offices publish tables.

One sheet per table (a linked protection's tables each get theirs): a one- or two-way table
as a grid -- rows the first dimension's codes, columns the second's -- and a table of more
dimensions as one row per cell; a suppressed cell shows the office's mark (``x`` by default,
as Eurostat and most national offices print confidential cells; configurable), published
values as numbers. A sheet ``status`` holds every cell with its value, status (``safe``,
``primary``, ``secondary``, ``empty``), the audit's interval and the published value (the
``cells.csv`` of the job), and a sheet ``settings`` the protection: method, rules and the
summary's figures. Written with openpyxl (the ``formats`` extra), atomically like every
output.
"""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from sdckit.core.uri import Target
from sdckit.errors import DataError

__all__ = ["DEFAULT_MARK", "table_workbook", "write_table_workbook"]

#: What a suppressed cell shows by default.
DEFAULT_MARK = "x"
#: Excel's limit on a sheet name's length.
_SHEET_NAME = 31


def _openpyxl() -> Any:
    try:
        import openpyxl
    except ImportError:
        raise DataError(
            "writing an Excel workbook needs openpyxl: pip install 'sdckit[formats]'"
        ) from None
    return openpyxl


def _published(values: pd.Series, mark: str) -> list[Any]:
    return [mark if pd.isna(v) else float(v) for v in values.to_numpy()]


def _grid_rows(cells: pd.DataFrame, names: Sequence[str], mark: str) -> list[list[Any]]:
    """A one- or two-way table as rows of a sheet (the header first)."""
    if len(names) == 1:
        values = _published(cells["published"], mark)
        codes = [str(code) for code in cells[names[0]]]
        return [[names[0], "value"], *[[c, v] for c, v in zip(codes, values, strict=True)]]
    row_dim, col_dim = names
    rows = list(pd.unique(cells[row_dim]))
    cols = list(pd.unique(cells[col_dim]))
    grid = cells.pivot(index=row_dim, columns=col_dim, values="published").loc[rows, cols]
    out: list[list[Any]] = [[f"{row_dim} \\ {col_dim}", *[str(c) for c in cols]]]
    for r in rows:
        out.append([str(r), *_published(grid.loc[r], mark)])
    return out


def _long_rows(cells: pd.DataFrame, names: Sequence[str], mark: str) -> list[list[Any]]:
    """A table of three or more dimensions: one row per cell."""
    out: list[list[Any]] = [[*names, "value"]]
    published = _published(cells["published"], mark)
    for i, codes in enumerate(cells[list(names)].itertuples(index=False)):
        out.append([*[str(c) for c in codes], published[i]])
    return out


def _sheet_name(name: str, taken: set[str]) -> str:
    base = "".join("_" if ch in "[]:*?/\\" else ch for ch in name)[:_SHEET_NAME] or "table"
    out, i = base, 2
    while out.lower() in taken:
        suffix = f" ({i})"
        out, i = base[: _SHEET_NAME - len(suffix)] + suffix, i + 1
    taken.add(out.lower())
    return out


def table_workbook(
    summary: Mapping[str, Any],
    cells: pd.DataFrame,
    dimensions: Mapping[str, Sequence[str]],
    mark: str = DEFAULT_MARK,
) -> bytes:
    """The workbook (``.xlsx`` bytes) of a protected table: ``cells`` as the job's
    ``cells.csv`` holds them (with a ``table`` column for linked tables), ``dimensions``
    the dimension names of each table (its name -> names; one entry for a single table),
    ``summary`` the job's JSON summary, ``mark`` what a suppressed cell shows."""
    openpyxl = _openpyxl()
    book = openpyxl.Workbook()
    book.remove(book.active)
    taken: set[str] = set()
    for name, names in dimensions.items():
        part = cells[cells["table"] == name] if "table" in cells.columns else cells
        sheet = book.create_sheet(_sheet_name(str(name), taken))
        rows = _grid_rows(part, names, mark) if len(names) <= 2 else _long_rows(part, names, mark)
        for row in rows:
            sheet.append(row)
    status = book.create_sheet(_sheet_name("status", taken))
    columns = [str(c) for c in cells.columns]
    status.append(columns)
    for row in cells.itertuples(index=False):
        status.append([_cell_value(v) for v in row])
    settings = book.create_sheet(_sheet_name("settings", taken))
    settings.append(["setting", "value"])
    settings.append(["suppressed cells shown as", mark])
    for key, value in summary.items():
        if isinstance(value, (str, int, float, bool)) or value is None:
            settings.append([str(key), _cell_value(value)])
        elif key == "rules":
            settings.append(["rules", "; ".join(str(r) for r in value)])
    buffer = io.BytesIO()
    book.save(buffer)
    return buffer.getvalue()


def _cell_value(value: Any) -> Any:
    """A value as openpyxl writes it: numbers and text, missing as an empty cell."""
    if value is None or (isinstance(value, float) and np.isnan(value)):
        return None
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value)
    return str(value)


def write_table_workbook(
    path: Target,
    summary: Mapping[str, Any],
    cells: pd.DataFrame,
    dimensions: Mapping[str, Sequence[str]],
    mark: str = DEFAULT_MARK,
) -> Target:
    """Write :func:`table_workbook` to ``path`` atomically."""
    from sdckit.core.io import write_bytes

    return write_bytes(path, table_workbook(summary, cells, dimensions, mark))
