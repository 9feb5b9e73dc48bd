"""The cell key method (CKM) for frequency tables, as the ABS, Destatis and tau-Argus 4.2 do.

Every microdata record carries a *record key*, a number drawn uniformly from ``[0, 1)`` once
and stored with the record (:func:`record_keys`, or a column such as ``Key``). A cell's *cell
key* is the fractional part of the sum of the record keys of the cell's records
(:func:`cell_keys`). A *perturbation table* (p-table, :func:`read_ptable`) maps the cell's
count ``i`` and its cell key to a noise value ``v``; the published count is ``i + v``
(Fraser & Wooton 2005, "A proposed method for confidentialising tabular output to protect
against differencing", UNECE work session; Thompson, Broadfoot & Elazar 2013, "Methodology
for the automatic confidentialisation of statistical outputs from remote servers at the
Australian Bureau of Statistics", UNECE; Giessing 2016, "Computational issues in the design
of transition probabilities and disclosure risk estimation for additive noise", PSD 2016,
LNCS 9867; tau-Argus 4.2 manual, sec. "Cell Key Method").

The p-table format is tau-Argus's (the output of the R package ``ptable``): ``;``-separated,
a header line and columns ``i;j;p;v;p_int_ub`` (``p_ij_ub`` in older files, an optional
``p_int_lb`` and ``type``): for each original count ``i`` its rows give the perturbed count
``j = i + v`` with probability ``p`` and the cumulative upper bound ``p_int_ub`` of the
row's interval. A cell with count ``i`` and cell key ``ck`` gets the ``v`` of the row of
``i`` whose interval ``[p_int_lb, p_int_ub)`` contains ``ck`` (``p_int_lb`` is the previous
row's upper bound for the same ``i``, 0 for the first); counts above the table's largest
``i`` use the rows of the largest ``i``. Empty cells (count 0) keep 0 unless the p-table has
rows for ``i = 0``.

Properties: the noise is *consistent* -- a cell made of the same records gets the same cell
key and so the same noise in every table that contains it (given the same record keys and
p-table) -- which defeats differencing attacks between tables; it is bounded by the p-table
(``max |v|``). The perturbed table is **not additive**: every cell, totals and sub-totals
included, is perturbed independently, so published parts need not add up to the published
total (:attr:`CellKeyResult.details` counts the relations that no longer hold).

Magnitude tables: the p-tables with a ``type`` column (``all`` / ``even`` / ``odd`` /
``small_cells``, non-integer noise, e.g. ``ptab_savings_*.txt``) are read by
:func:`read_ptable`, but the cell key method for magnitude tables (noise scaled by the
cell's largest contributions through tau-Argus's flex function) is **not provided**: only
frequency (count) tables are perturbed here.

Cell keys are summed exactly: record keys are taken on the grid of ``2**-52`` and summed
modulo 1 in integer arithmetic, so a cell's key does not depend on the order in which its
records are summed (a floating-point sum could differ by rounding between two tables and,
for a key on a p-table boundary, change the noise).
"""

from __future__ import annotations

import csv
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sdckit.core.hierarchy import Hierarchy
from sdckit.errors import DataError, ParameterError, preview
from sdckit.tables.table import Table, roll_up

__all__ = [
    "CellKeyResult",
    "PTable",
    "cell_key",
    "cell_keys",
    "cell_keys_from_leaf_sums",
    "constant_record_key",
    "read_ptable",
    "record_keys",
]

#: Record keys are summed on the grid of 2**-KEY_BITS (exactly, modulo 1).
KEY_BITS = 52
_ONE = np.uint64(1) << np.uint64(KEY_BITS)
_MASK = _ONE - np.uint64(1)
#: Tolerance of the p-table checks (cumulative bounds against the probabilities).
_PTABLE_TOL = 1e-6

_UPPER_NAMES = ("p_int_ub", "p_ij_ub")
_LOWER_NAMES = ("p_int_lb", "p_ij_lb")


# -- p-table ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class PTable:
    """A perturbation table: one row per (original count ``i``, noise ``v``).

    ``lower``/``upper`` bound each row's cell-key interval ``[lower, upper)`` (the last row
    of every ``i`` ends at 1); ``type`` is ``"all"`` unless the file has a ``type`` column;
    ``line`` is each row's line number in ``source``.
    """

    i: np.ndarray
    j: np.ndarray
    p: np.ndarray
    v: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    type: np.ndarray
    line: np.ndarray
    source: str = "<p-table>"

    @property
    def max_i(self) -> int:
        """The largest original count with rows of its own."""
        return int(self.i.max())

    @property
    def max_noise(self) -> float:
        """The largest absolute noise, ``max |v|``."""
        return float(np.abs(self.v).max())

    @property
    def is_frequency(self) -> bool:
        """Integer noise and a single row set per ``i`` (type ``all``): a p-table for counts."""
        return bool(np.all(self.v == np.rint(self.v)) and np.all(self.type == "all"))

    def noise(self, counts: np.ndarray, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The noise of cells with ``counts`` and cell ``keys``, and the p-table row hit
        (``-1`` for an empty cell when the p-table has no rows for ``i = 0``).

        A count above :attr:`max_i` uses the rows of :attr:`max_i`. Raises
        :class:`~sdckit.errors.DataError` for a magnitude p-table or a count whose ``i``
        has no rows.
        """
        if not self.is_frequency:
            raise DataError(
                f"{self.source}: a p-table for magnitude tables (non-integer noise or a `type` "
                "other than 'all'); the cell key method here perturbs frequency tables only -- "
                "give a p-table for counts (e.g. ptable::create_cnt_ptable)"
            )
        counts = np.asarray(counts, dtype=np.int64)
        keys = np.asarray(keys, dtype=np.float64)
        eff = np.minimum(counts, self.max_i)
        noise = np.zeros(len(counts))
        row = np.full(len(counts), -1, dtype=np.int64)
        present = np.unique(self.i)
        for i in np.unique(eff):
            at = np.flatnonzero(eff == i)
            if i not in present:
                if i == 0:
                    continue  # empty cells stay 0
                raise DataError(
                    f"{self.source}: no rows for i = {i} (counts {i} occur in the table); the "
                    f"p-table must give rows for every count 1..{self.max_i}"
                )
            rows = np.flatnonzero(self.i == i)
            pos = np.searchsorted(self.upper[rows], keys[at], side="right")
            hit = rows[np.minimum(pos, len(rows) - 1)]
            row[at] = hit
            noise[at] = self.v[hit]
        return noise, row


def read_ptable(path: str | os.PathLike) -> PTable:
    """Read a p-table in tau-Argus's format (module docstring).

    Raises :class:`~sdckit.errors.DataError` naming the file and the line for a missing
    column, a value that is not a number, a row whose ``j`` is not ``i + v``, or rows of one
    ``i`` that are not together, not cumulative (``p_int_ub`` rising by ``p``) or do not end
    at 1.
    """
    p = Path(path)
    name = str(p)
    try:
        text = p.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise DataError(f"p-table {name}: file not found") from None
    except (OSError, UnicodeDecodeError) as e:
        raise DataError(f"p-table {name}: cannot read it ({e})") from None
    lines = [(k + 1, ln) for k, ln in enumerate(text.splitlines()) if ln.strip()]
    if not lines:
        raise DataError(f"p-table {name}: the file is empty")
    rows = list(csv.reader([ln for _, ln in lines], delimiter=";", quotechar='"'))
    header = [h.strip().strip('"').strip().lower() for h in rows[0]]
    col = {h: k for k, h in enumerate(header)}
    upper_name = next((h for h in _UPPER_NAMES if h in col), None)
    lower_name = next((h for h in _LOWER_NAMES if h in col), None)
    missing = [h for h in ("i", "j", "p", "v") if h not in col]
    if upper_name is None:
        missing.append("p_int_ub")
    if missing:
        raise DataError(
            f"p-table {name}, line {lines[0][0]}: the header lacks column(s) {preview(missing)} "
            f"(header: {preview(header)}); a tau-Argus p-table has i;j;p;v;p_int_ub"
        )
    upper_col = upper_name or "p_int_ub"  # found: checked above
    numeric: list[str] = ["i", "j", "p", "v", upper_col]
    if lower_name is not None:
        numeric.append(lower_name)
    values = {h: np.empty(len(rows) - 1) for h in numeric}
    types = np.empty(len(rows) - 1, dtype=object)
    line_no = np.array([ln for ln, _ in lines[1:]], dtype=np.int64)
    for r, fields in enumerate(rows[1:]):
        where = f"p-table {name}, line {line_no[r]}"
        if len(fields) != len(header):
            raise DataError(f"{where}: {len(fields)} field(s) but the header has {len(header)}")
        for h in numeric:
            raw = fields[col[h]].strip().strip('"')
            try:
                x = float(raw)
            except ValueError:
                raise DataError(f"{where}: {h} = {raw!r} is not a number") from None
            if not np.isfinite(x):
                raise DataError(f"{where}: {h} = {raw!r} is not a finite number")
            values[h][r] = x
        types[r] = fields[col["type"]].strip().strip('"') if "type" in col else "all"
    if len(line_no) == 0:
        raise DataError(f"p-table {name}: no rows after the header")
    i, j, prob, v = values["i"], values["j"], values["p"], values["v"]
    upper = values[upper_col]

    def fail(k: int, what: str) -> DataError:
        return DataError(f"p-table {name}, line {line_no[k]}: {what}")

    for k in range(len(i)):
        if i[k] < 0 or i[k] != np.rint(i[k]):
            raise fail(k, f"i = {i[k]:g} is not a count (a non-negative integer)")
        if not 0 <= prob[k] <= 1:
            raise fail(k, f"p = {prob[k]:g} is not a probability")
        if abs(j[k] - (i[k] + v[k])) > 1e-9 * max(1.0, abs(j[k])):
            raise fail(k, f"j = {j[k]:g} is not i + v = {i[k] + v[k]:g}")
        if not -_PTABLE_TOL <= upper[k] <= 1 + _PTABLE_TOL:
            raise fail(k, f"{upper_name} = {upper[k]:g} is outside [0, 1]")
    group = pd.factorize(pd.MultiIndex.from_arrays([types, i]))[0]
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    if len(starts) != group.max() + 1:
        seen: set[int] = set()
        for s in starts.tolist():
            if group[s] in seen:
                raise fail(s, f"the rows of i = {i[s]:g} (type {types[s]!r}) are not together")
            seen.add(int(group[s]))
    lower = np.empty_like(upper)
    ends = np.r_[starts[1:], len(i)]
    for s, end in zip(starts.tolist(), ends.tolist(), strict=True):
        prev = np.r_[0.0, upper[s : end - 1]]
        lower[s:end] = prev
        for k in range(s, end):
            if upper[k] < prev[k - s] - _PTABLE_TOL:
                raise fail(k, f"{upper_name} = {upper[k]:g} is below the previous row's")
            if abs(upper[k] - prev[k - s] - prob[k]) > _PTABLE_TOL:
                raise fail(
                    k,
                    f"{upper_name} = {upper[k]:g} is not the previous bound {prev[k - s]:g} plus "
                    f"p = {prob[k]:g} (the bounds are cumulative probabilities)",
                )
            if lower_name and abs(values[lower_name][k] - prev[k - s]) > _PTABLE_TOL:
                raise fail(k, f"{lower_name} is not the previous row's {upper_name}")
        if abs(upper[end - 1] - 1.0) > _PTABLE_TOL:
            raise fail(
                end - 1,
                f"the rows of i = {i[s]:g} end at {upper[end - 1]:g}, not at 1 (p sums to 1)",
            )
        upper[end - 1] = 1.0
    return PTable(
        i=i.astype(np.int64),
        j=j,
        p=prob,
        v=v,
        lower=lower,
        upper=upper,
        type=types,
        line=line_no,
        source=name,
    )


# -- record and cell keys --------------------------------------------------------------------
def record_keys(n: int | pd.DataFrame, seed: int | np.random.Generator) -> np.ndarray:
    """``n`` record keys (one per row of a DataFrame) uniform in ``[0, 1)`` from ``seed``.

    Store them with the microdata and reuse them for every table: the consistency of the
    cell key method rests on each record keeping its key.
    """
    size = len(n) if isinstance(n, pd.DataFrame) else int(n)
    if seed is None:
        raise ParameterError("record keys need a seed (an int or a numpy Generator)")
    return np.random.default_rng(seed).random(size)


def cell_keys(
    data: pd.DataFrame,
    table: Table,
    *,
    key: str | None = None,
    seed: int | np.random.Generator | None = None,
    count: str | None = None,
) -> np.ndarray:
    """Every cell's key: the sum of its records' keys modulo 1 (exact, module docstring).

    The record keys are the column ``key`` of ``data`` (numbers in ``[0, 1]``) or drawn with
    ``seed`` (:func:`record_keys`). ``count``: a 0/1 column; only records with 1 count (and
    bring their key), as for a table counting e.g. ``HighIncome`` records. ``table`` must be
    built on ``data``'s columns (its dimensions place every record in its cells).
    """
    rk = _record_keys(data, key, seed)
    if count is not None:
        rk = np.where(_indicator(data, count), rk, 0.0)
    q = np.rint(rk * float(_ONE)).astype(np.uint64)
    leaves = [d.leaves_for(data[d.name], d.name) for d in table.dimensions]
    leaf = np.ravel_multi_index(tuple(leaves), table.shape)
    cells, inv = np.unique(leaf, return_inverse=True)
    sums = np.zeros(len(cells), dtype=np.uint64)
    np.add.at(sums, inv, q)  # uint64 addition wraps modulo 2**64, a multiple of 2**52
    return cell_keys_from_leaf_sums(table, cells, sums)


def cell_keys_from_leaf_sums(table: Table, cells: np.ndarray, sums: np.ndarray) -> np.ndarray:
    """Every cell's key from the leaf cells' sums of record keys: ``sums[i]`` is the sum,
    modulo ``2**KEY_BITS`` (or any multiple of it up to ``2**64``), of the keys of the records
    in leaf cell ``cells[i]``, each key as the integer ``rint(key * 2**KEY_BITS)``. (The Spark
    engine computes these sums on the cluster, :func:`sdckit.spark.tables.spark_cell_keys`.)"""
    sums = np.asarray(sums, dtype=np.uint64)
    up_cells, up_rows = roll_up(np.asarray(cells, dtype=np.int64), table.dimensions, table.shape)
    total = np.zeros(table.n_cells, dtype=np.uint64)
    np.add.at(total, up_cells, sums[up_rows])  # wraps modulo 2**64, a multiple of 2**52
    return (total & _MASK).astype(np.float64) / float(_ONE)


def bad_record_key(key: str, row: int, value: object, count: int) -> DataError:
    """The error for a record key that is not a number in ``[0, 1]``: the first one, at
    0-based ``row``, and how many there are."""
    return DataError(
        f"record key column {key!r}, row {row + 1}: {value!r} is not a number in "
        f"[0, 1] ({count} such value(s)); record keys are uniform in [0, 1)"
    )


def constant_record_key(key: str, value: object, n: int) -> DataError:
    """The error for a record key column with one value in all ``n`` (>= 2) records.

    The cell key method's protection rests on record keys that vary independently per record
    (Thompson, Broadfoot & Elazar 2013, "Methodology for the automatic confidentialisation of
    statistical outputs from remote servers at the Australian Bureau of Statistics"): with a
    constant key ``c`` a cell of ``i`` records has key ``i * c mod 1``, a function of its count
    alone, so every cell of the same count gets the same noise and the noise can be undone.
    """
    return DataError(
        f"record key column {key!r} has the same value ({value!r}) in all {n:,} records: the "
        "cell key method needs a key that varies per record (uniform in [0, 1)); with a "
        "constant key every cell's key depends only on its count, so all cells of one count "
        "get the same noise and nothing is protected. Fill the column with random keys "
        "(sdckit.tables.cell_key.record_keys) and store them with the microdata"
    )


def _record_keys(
    data: pd.DataFrame, key: str | None, seed: int | np.random.Generator | None
) -> np.ndarray:
    if (key is None) == (seed is None):
        raise ParameterError(
            "the cell key method needs record keys: give either `key` (a column of keys in "
            "[0, 1)) or `seed` (to draw them), not both"
            if key is not None
            else "the cell key method needs record keys: give `key` (a column of the data "
            "with keys in [0, 1)) or `seed` (to draw them)"
        )
    if seed is not None:
        return record_keys(len(data), seed)
    if key not in data.columns:
        raise DataError(
            f"record key column {key!r} is not in the data (columns: {preview(list(data.columns))})"
        )
    vals = pd.to_numeric(data[key], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    bad = ~np.isfinite(vals) | (vals < 0) | (vals > 1)
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise bad_record_key(str(key), r, data[key].iloc[r], int(bad.sum()))
    if len(vals) > 1 and vals.min() == vals.max():
        raise constant_record_key(str(key), float(vals[0]), len(vals))
    return vals


def _indicator(data: pd.DataFrame, column: str) -> np.ndarray:
    if column not in data.columns:
        raise DataError(
            f"count column {column!r} is not in the data (columns: {preview(list(data.columns))})"
        )
    vals = pd.to_numeric(data[column], errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    bad = ~np.isin(vals, (0.0, 1.0))
    if bad.any():
        r = int(np.flatnonzero(bad)[0])
        raise DataError(
            f"count column {column!r}, row {r + 1}: {data[column].iloc[r]!r} is not 0 or 1 "
            f"({int(bad.sum())} such value(s)); a count variable marks the records counted"
        )
    return vals == 1.0


# -- the method ------------------------------------------------------------------------------
@dataclass
class CellKeyResult:
    """A frequency table perturbed by the cell key method.

    Per cell: ``count`` (the original count ``i``), ``cell_key``, ``noise`` (``v``),
    ``perturbed`` (``i + v``) and ``row`` (the p-table row hit, an index into ``ptable``'s
    arrays; ``-1`` for an empty cell left as is). ``details``: see :meth:`to_dict`.
    """

    table: Table
    count: np.ndarray
    cell_key: np.ndarray
    noise: np.ndarray
    perturbed: np.ndarray
    row: np.ndarray
    ptable: PTable
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary: ``ptable`` (its file), ``ptable_max_i``, ``cells_perturbed``
        (noise not 0), ``sum_abs_noise``, ``max_abs_noise``, ``mean_abs_noise`` (over
        non-empty cells), ``max_rel_noise`` (relative to ``max(count, 1)``) and
        ``relations_broken`` (additivity relations the perturbed table no longer satisfies;
        the method does not keep additivity)."""
        return dict(self.details)

    def to_frame(self) -> pd.DataFrame:
        """One row per cell: its codes, ``count``, ``cell_key``, ``noise``, ``perturbed``."""
        df = self.table.codes()
        df["count"] = self.count
        df["cell_key"] = self.cell_key
        df["noise"] = self.noise
        df["perturbed"] = self.perturbed
        return df


def cell_key(
    source: Table | pd.DataFrame,
    ptable: PTable | str | os.PathLike,
    keys: np.ndarray | None = None,
    *,
    dimensions: Sequence[str] | Mapping[str, Hierarchy | None] | None = None,
    key: str | None = None,
    seed: int | np.random.Generator | None = None,
    count: str | None = None,
) -> CellKeyResult:
    """Perturb a frequency table with the cell key method (module docstring).

    ``source`` is either microdata (a DataFrame: the table over ``dimensions`` is built and
    the cell keys computed from the record keys in column ``key`` or drawn with ``seed``;
    ``count`` optionally names a 0/1 column counted instead of the records) or a frequency
    :class:`~sdckit.tables.table.Table` with its per-cell keys in ``keys`` (e.g. from
    :func:`cell_keys`). ``ptable``: a :class:`PTable` or its file (:func:`read_ptable`).

    Raises :class:`~sdckit.errors.ParameterError` for missing keys or a magnitude table and
    :class:`~sdckit.errors.DataError` for a p-table that does not fit the table.
    """
    pt = ptable if isinstance(ptable, PTable) else read_ptable(ptable)
    if isinstance(source, pd.DataFrame):
        if dimensions is None:
            raise ParameterError("cell_key on microdata needs `dimensions` (the table's columns)")
        if keys is not None:
            raise ParameterError(
                "give the cell keys only with a Table; on microdata they come from `key`/`seed`"
            )
        table = Table.from_microdata(source, dimensions, count, top_n=1)
        ck = cell_keys(source, table, key=key, seed=seed, count=count)
        counts = np.rint(table.value).astype(np.int64)
    elif isinstance(source, Table):
        table = source
        if key is not None or seed is not None or count is not None or dimensions is not None:
            raise ParameterError(
                "with a Table give its cell keys (`keys`, see cell_keys()); `key`, `seed`, "
                "`count` and `dimensions` apply to microdata"
            )
        if keys is None:
            raise ParameterError(
                "the cell key method needs each cell's key, the sum of its records' keys "
                "modulo 1: compute them with cell_keys(microdata, table, key=...) (in a job: "
                "options `key: <record key column>` on microdata input)"
            )
        if table.response is not None:
            raise ParameterError(
                f"the table sums {table.response!r} (a magnitude table); the cell key method "
                "here perturbs frequency (count) tables only"
            )
        ck = np.asarray(keys, dtype=np.float64)
        if ck.shape != (table.n_cells,):
            raise ParameterError(
                f"the cell keys must have one entry per cell ({table.n_cells}), got {ck.shape}"
            )
        if not np.all((ck >= 0) & (ck < 1)):
            raise ParameterError("cell keys must lie in [0, 1) (a sum of record keys modulo 1)")
        counts = _counts(table)
    else:
        raise ParameterError(
            f"cell_key needs microdata (a DataFrame) or a Table, got {type(source).__name__}"
        )
    noise, row = pt.noise(counts, ck)
    perturbed = counts + noise
    if (perturbed < 0).any():
        k = int(np.flatnonzero(perturbed < 0)[0])
        raise DataError(
            f"{pt.source}, line {pt.line[row[k]]}: noise {noise[k]:g} for count {counts[k]} "
            "gives a negative count; the p-table needs v >= -i"
        )
    cons = table.constraints()
    broken = int((np.abs(cons @ perturbed) > 1e-9).sum()) if cons.shape[0] else 0
    filled = counts > 0
    details = {
        "ptable": pt.source,
        "ptable_max_i": pt.max_i,
        "cells_perturbed": int((noise != 0).sum()),
        "sum_abs_noise": float(np.abs(noise).sum()),
        "max_abs_noise": float(np.abs(noise).max(initial=0.0)),
        "mean_abs_noise": float(np.abs(noise[filled]).mean()) if filled.any() else 0.0,
        "max_rel_noise": float((np.abs(noise) / np.maximum(counts, 1)).max(initial=0.0)),
        "relations_broken": broken,
    }
    return CellKeyResult(table, counts, ck, noise, perturbed, row, pt, details)


def _counts(table: Table) -> np.ndarray:
    v = np.asarray(table.value, dtype=np.float64)
    bad = (v < 0) | (v != np.rint(v))
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise DataError(
            f"the cell {table.codes().iloc[k].to_dict()} is {v[k]:g}, not a count; the cell key "
            "method perturbs frequency tables (non-negative whole counts)"
        )
    return np.rint(v).astype(np.int64)
