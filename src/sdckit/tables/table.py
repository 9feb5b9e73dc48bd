"""Frequency and magnitude tables with every sub-total, their contributors and additivity.

A :class:`Table` holds one cell for every combination of codes of its dimensions (totals and
sub-totals included): the cell's value (the response summed, or the count of records for a
frequency table), its frequency (records), its number of contributors (records, or holdings
when contributions of one holding are combined first, as tau-Argus does), its largest
contributions (for the dominance and p% rules), its cost and, when some contributors asked
for protection (tau-Argus' request variable), the largest contribution of a requesting record
per request code (for the request rule). Cells are numbered in row-major order over the
dimensions' nodes (:meth:`Table.cell_index`).

The table's additivity -- every node's cell equals the sum of its children's cells, for
every combination of the other dimensions' codes -- is the linear system ``A x = 0`` of
:meth:`Table.constraints` that the suppression, audit, rounding and adjustment methods use
(Willenborg & de Waal 2001, ch. 4; Fischetti & Salazar 2001; de Wolf 2002 for hierarchical
tables).

Building from microdata aggregates once per leaf cell (:func:`leaf_aggregates`, the one pass
over the records) and rolls the aggregates up the hierarchies (each leaf cell is added to all
its ancestors' cells, :meth:`Table.from_leaf_aggregates`), so the work is proportional to
(records + leaf cells x hierarchy depths), not to records x cells. The Spark engine runs the
first step on a cluster (:mod:`sdckit.spark.tables`) and the second on the driver.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from sdckit.core.encoding import as_text
from sdckit.core.hierarchy import Hierarchy
from sdckit.errors import DataError, preview
from sdckit.tables.dimension import TOTAL, Dimension

if TYPE_CHECKING:
    from scipy import sparse

__all__ = [
    "LeafAggregates",
    "Table",
    "check_request_codes",
    "leaf_aggregates",
    "no_request_code",
    "request_without_response",
    "requested_contributions",
    "roll_up",
    "table_dimensions",
]

#: Relative tolerance of the additivity check of a given table.
ADDITIVITY_TOLERANCE = 1e-9


def cell_levels(dimensions: Sequence[Dimension], nodes: np.ndarray) -> np.ndarray:
    """Each cell's hierarchy level from its ``(n_cells, n_dimensions)`` nodes: the sum of the
    nodes' depths (0 = grand total)."""
    out = np.zeros(len(nodes), dtype=np.int64)
    for j, d in enumerate(dimensions):
        out += d.depth[nodes[:, j]]
    return out


@dataclass
class Table:
    """A table over ``dimensions`` (see the module docstring).

    ``top`` holds, per cell, its largest contributions in descending order (zero-padded;
    ``top.shape[1]`` of them); ``cost`` the cost of suppressing each cell. With a ``request``
    column, ``requested[:, j]`` is the largest rule value of a record of the cell whose
    request code is ``request_codes[j]`` (0 when there is none, or none positive).
    """

    dimensions: list[Dimension]
    value: np.ndarray
    freq: np.ndarray
    contributors: np.ndarray
    top: np.ndarray
    cost: np.ndarray
    response: str | None = None
    holding: str | None = None
    negative_contributions: bool = False
    requested: np.ndarray | None = None
    request: str | None = None
    request_codes: tuple[str, ...] = ()
    _constraints: sparse.csr_matrix | None = field(default=None, repr=False)

    # -- shape -------------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        """Nodes per dimension."""
        return tuple(len(d) for d in self.dimensions)

    @property
    def n_cells(self) -> int:
        """Number of cells (totals and sub-totals included)."""
        return int(np.prod(self.shape))

    @property
    def names(self) -> list[str]:
        """The dimensions' names."""
        return [d.name for d in self.dimensions]

    def cell_index(self, codes: Mapping[str, str]) -> int:
        """The cell with ``codes`` (dimension name -> code)."""
        nodes = []
        for d in self.dimensions:
            code = str(codes[d.name])
            if code not in d.index_of:
                raise DataError(f"dimension {d.name!r} has no code {code!r}")
            nodes.append(d.index_of[code])
        return int(np.ravel_multi_index(tuple(nodes), self.shape))

    @cached_property
    def nodes(self) -> np.ndarray:
        """``(n_cells, n_dimensions)``: each cell's node in every dimension."""
        grids = np.unravel_index(np.arange(self.n_cells), self.shape)
        return np.stack(grids, axis=1)

    @cached_property
    def level(self) -> np.ndarray:
        """Each cell's hierarchy level: the sum of its nodes' depths (0 = grand total)."""
        return cell_levels(self.dimensions, self.nodes)

    @cached_property
    def is_inner(self) -> np.ndarray:
        """Cells that are leaves in every dimension (no sub-total)."""
        out = np.ones(self.n_cells, dtype=bool)
        for j, d in enumerate(self.dimensions):
            out &= d.is_leaf[self.nodes[:, j]]
        return out

    def codes(self) -> pd.DataFrame:
        """One row per cell: its code in every dimension."""
        return pd.DataFrame(
            {d.name: d.codes[self.nodes[:, j]] for j, d in enumerate(self.dimensions)}
        )

    # -- additivity ------------------------------------------------------------------------
    def constraints(self) -> sparse.csr_matrix:
        """The additivity relations as a sparse matrix ``A`` (one row per relation): for a
        node ``p`` of dimension ``d`` with children ``c_1..c_m`` and every combination ``g``
        of the other dimensions' nodes, ``x[p, g] - sum_i x[c_i, g] = 0``."""
        if self._constraints is None:
            from scipy import sparse

            idx = np.arange(self.n_cells).reshape(self.shape)
            rows: list[np.ndarray] = []
            cols: list[np.ndarray] = []
            vals: list[np.ndarray] = []
            r0 = 0
            for j, d in enumerate(self.dimensions):
                per_node = np.moveaxis(idx, j, 0).reshape(len(d), -1)
                g = per_node.shape[1]
                for p in np.flatnonzero(~d.is_leaf):
                    kids = d.children[p]
                    block = np.arange(r0, r0 + g)
                    rows.append(np.tile(block, 1 + len(kids)))
                    cols.append(np.concatenate([per_node[p], per_node[kids].ravel()]))
                    vals.append(np.concatenate([np.ones(g), -np.ones(g * len(kids))]))
                    r0 += g
            if rows:
                a = sparse.csr_matrix(
                    (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                    shape=(r0, self.n_cells),
                )
            else:
                a = sparse.csr_matrix((0, self.n_cells))
            self._constraints = a
        return self._constraints

    # -- construction ------------------------------------------------------------------------
    @classmethod
    def from_microdata(
        cls,
        data: pd.DataFrame,
        dimensions: Sequence[str] | Mapping[str, Hierarchy | None],
        response: str | None = None,
        *,
        shadow: str | None = None,
        cost: str | None = None,
        holding: str | None = None,
        top_n: int = 2,
        request: str | None = None,
        request_codes: Sequence[str] = (),
        totals: Mapping[str, str] | None = None,
    ) -> Table:
        """The table of ``data`` spanned by ``dimensions`` (name -> hierarchy or None).

        ``response``: the column summed (None: a frequency table, value = records);
        ``shadow``: the column the sensitivity rules read (default the response); ``cost``:
        a column summed as the cells' suppression cost (default: the value); ``holding``: a
        column whose units' contributions are combined before the rules (tau-Argus holdings);
        ``top_n``: how many largest contributions to keep per cell; ``request``: the column
        flagging the records that asked for protection, with the codes ``request_codes`` (one
        or two, as tau-Argus' request variable) -- needed by the request rule; ``totals``:
        the total's code of a flat dimension (name -> code, default ``Total``; tau-Argus'
        ``<TOTCODE>``).

        Two steps: :func:`leaf_aggregates` (the one pass over the records) and
        :meth:`from_leaf_aggregates` (the roll-up to every cell); the Spark engine computes
        the first step on a cluster (:func:`sdckit.spark.tables.spark_leaf_aggregates`).
        """
        agg = leaf_aggregates(
            data,
            dimensions,
            response,
            shadow=shadow,
            cost=cost,
            holding=holding,
            top_n=top_n,
            request=request,
            request_codes=request_codes,
            totals=totals,
        )
        return cls.from_leaf_aggregates(agg)

    @classmethod
    def from_leaf_aggregates(cls, agg: LeafAggregates) -> Table:
        """The table whose leaf cells hold ``agg``: every aggregate rolled up to all the
        ancestor cells (sub-totals and totals), the contributors counted and the largest
        contributions kept per cell.

        Without holdings a cell's contributors are its records and its largest contributions
        are among its leaf cells' largest ones (which is all ``agg`` keeps); with holdings a
        holding's contributions to the leaf cells below a cell are summed first, so a cell's
        contributors are the distinct holdings among those leaf cells.
        """
        dims = agg.dimensions
        shape = tuple(len(d) for d in dims)
        n_cells = int(np.prod(shape))
        sums = {"value": agg.value, "freq": agg.freq.astype(np.float64)}
        if agg.cost is not None:
            sums["cost"] = agg.cost
        up_cells, up_rows = roll_up(agg.cells, dims, shape)
        out = {
            k: np.bincount(up_cells, weights=v[up_rows], minlength=n_cells) for k, v in sums.items()
        }

        # contributors and their largest contributions
        if agg.contribution_holding is not None:
            rc, rr = roll_up(agg.contribution_cell, dims, shape)
            merged = pd.DataFrame(
                {
                    "cell": rc,
                    "h": agg.contribution_holding[rr],
                    "v": agg.contribution[rr],
                }
            )
            merged = merged.groupby(["cell", "h"], sort=False)["v"].sum().reset_index()
            m_cell = merged["cell"].to_numpy()
            m_val = merged["v"].to_numpy()
            contributors = np.bincount(m_cell, minlength=n_cells)
        else:
            # the largest contributions of a cell are among its leaf cells' largest ones
            rc, rr = roll_up(agg.contribution_cell, dims, shape)
            m_cell, m_val = rc, agg.contribution[rr]
            contributors = out["freq"].astype(np.int64)
        top = _top_by_cell(m_cell, m_val, n_cells, agg.top_n)
        requested = None
        if agg.requested is not None:
            # a cell's largest requesting contribution is its leaf cells' largest one
            requested = np.zeros((n_cells, agg.requested.shape[1]))
            np.maximum.at(requested, up_cells, agg.requested[up_rows])
        freq = out["freq"].astype(np.int64)
        table_value = out["value"]
        cost_cells = out.get("cost", np.abs(table_value))
        return cls(
            dimensions=list(dims),
            value=table_value,
            freq=freq,
            contributors=np.asarray(contributors, dtype=np.int64),
            top=top,
            cost=np.asarray(cost_cells, dtype=np.float64),
            response=agg.response,
            holding=agg.holding,
            negative_contributions=agg.negative_contributions,
            requested=requested,
            request=agg.request,
            request_codes=agg.request_codes,
        )

    @classmethod
    def from_cells(
        cls,
        cells: pd.DataFrame,
        dimensions: Sequence[str] | Mapping[str, Hierarchy | None],
        value: str = "value",
        *,
        freq: str | None = "freq",
        top: Sequence[str] = (),
        cost: str | None = None,
        total: str = TOTAL,
    ) -> Table:
        """A table given cell by cell (e.g. as published): one row per cell with its codes.

        Dimensions without hierarchy are flat, their total named ``total``. Cells the input
        lacks are empty (0). ``top`` names the columns of the largest contributions (for
        dominance and p% rules). The table must be additive (DataError naming a relation
        that does not add up otherwise).
        """
        names = list(dimensions)
        missing = [c for c in [*names, value] if c not in cells.columns]
        if missing:
            raise DataError(
                f"the cells file lacks column(s) {preview(missing)} (columns: "
                f"{preview(list(cells.columns))})"
            )
        dims: list[Dimension] = []
        for name in names:
            h = dimensions.get(name) if isinstance(dimensions, Mapping) else None
            if h is not None:
                dims.append(Dimension.from_hierarchy(name, h))
            else:
                codes = pd.unique(np.asarray(as_text(cells[name]), dtype=object))
                cats = [c for c in codes if c != total]
                dims.append(Dimension.flat(name, cats, total))
        nodes = []
        for d in dims:
            text = np.asarray(as_text(cells[d.name]), dtype=object)
            idx = pd.Index(list(d.index_of)).get_indexer(pd.Index(text))
            if (idx < 0).any():
                i = int(np.flatnonzero(idx < 0)[0])
                raise DataError(
                    f"cells file, row {i + 1}: code {text[i]!r} of {d.name!r} is not in its "
                    "hierarchy; add it"
                )
            nodes.append(np.fromiter(d.index_of.values(), dtype=np.int64)[idx])
        shape = tuple(len(d) for d in dims)
        cell = np.ravel_multi_index(tuple(nodes), shape)
        dup = pd.Index(cell).duplicated()
        if dup.any():
            i = int(np.flatnonzero(dup)[0])
            raise DataError(f"cells file, row {i + 1}: the same cell is given twice")
        n_cells = int(np.prod(shape))
        vals = np.zeros(n_cells)
        vals[cell] = _numeric(cells, value)
        fr = np.zeros(n_cells, dtype=np.int64)
        if freq is not None and freq in cells.columns:
            fr[cell] = _numeric(cells, freq).astype(np.int64)
        else:
            fr[cell] = 1
        tops = np.zeros((n_cells, max(len(top), 1)))
        for j, col in enumerate(top):
            tops[cell, j] = _numeric(cells, col)
        costs = np.abs(vals)
        if cost is not None:
            costs = np.zeros(n_cells)
            costs[cell] = _numeric(cells, cost)
        table = cls(dims, vals, fr, fr.copy(), tops, costs)
        given = np.zeros(n_cells, dtype=bool)
        given[cell] = True
        table.check_additive(given)
        return table

    def check_additive(self, given: np.ndarray | None = None) -> None:
        """DataError naming the first relation whose cells do not add up.

        ``given``: which cells the input had a row for (a cells file). A relation that fails
        because its total has no row (read as 0) gets an error saying that total rows are
        missing and that a cells file's totals are not computed from its parts.
        """
        a = self.constraints()
        if a.shape[0] == 0:
            return
        resid = a @ self.value
        scale = np.maximum(1.0, np.abs(a) @ np.abs(self.value))
        bad = np.abs(resid) > ADDITIVITY_TOLERANCE * scale
        if bad.any():
            r = int(np.flatnonzero(bad)[0])
            if given is not None:
                totals = (a > 0).tocsr().indices  # one +1 entry per relation: its total cell
                absent = pd.unique(totals[bad][~given[totals[bad]]])
                if len(absent):
                    raise self._missing_totals(int(absent[0]), totals, resid, given)
            row = a.getrow(r)
            total_cell = int(row.indices[row.data > 0][0])
            codes = self.codes().iloc[total_cell].to_dict()
            raise DataError(
                f"the table is not additive: the cell {codes} is {self.value[total_cell]:g} but "
                f"its parts add up to {self.value[total_cell] - resid[r]:g} ({int(bad.sum())} "
                "such relation(s)); give every sub-total as the sum of its parts"
            )

    def _missing_totals(
        self, first: int, totals: np.ndarray, resid: np.ndarray, given: np.ndarray
    ) -> DataError:
        """The error for a cells file without rows for total cells: ``first``, a total whose
        parts are not 0 (its codes and their sum), and how many total cells have no row."""
        parts = float(-resid[int(np.flatnonzero(totals == first)[0])])
        codes = self.codes().iloc[first].to_dict()
        every = np.unique(totals)
        roots = {d.name: str(d.codes[0]) for d in self.dimensions}
        return DataError(
            f"the cells file lacks total rows: {int((~given[every]).sum())} of its "
            f"{len(every)} total and sub-total cells have no row, e.g. {codes}, whose parts "
            f"add up to {parts:g}. Totals are not computed from a cells file: add one row per "
            f"total and sub-total with the sum of its parts (the totals' codes: {roots}; a "
            "hierarchy's inner codes are its sub-totals), or build the table from the "
            "microdata (a table job's `input:`), which computes every total"
        )

    def to_frame(self) -> pd.DataFrame:
        """The cells as a DataFrame: codes, ``value``, ``freq``, ``contributors``."""
        df = self.codes()
        df["value"] = self.value
        df["freq"] = self.freq
        df["contributors"] = self.contributors
        return df


# -- the records' pass: aggregates per leaf cell --------------------------------------------
@dataclass(frozen=True)
class LeafAggregates:
    """What a table needs from its records, per *leaf* cell (a cell that is a leaf in every
    dimension; numbered as :meth:`Table.cell_index` numbers cells), before the roll-up of
    :meth:`Table.from_leaf_aggregates`.

    ``cells``: the non-empty leaf cells (distinct); ``value``/``freq``/``cost``: their
    response sums (records for a frequency table), record counts and cost sums (``cost``
    None: the cost is the value). The contributions are either each leaf cell's ``top_n``
    largest rule (shadow) values (``contribution_holding`` None; fewer where a cell has
    fewer records) or, with a ``holding`` column, one entry per (leaf cell, holding): the
    holding's summed rule values there, ``contribution_holding`` an integer code per holding
    (any coding that tells holdings apart). ``negative_contributions``: whether any rule
    value is below zero. ``requested`` (with a ``request`` column and its ``request_codes``):
    per leaf cell and request code, the largest positive rule value of a record with that
    code (0 when there is none), always of single records, holdings or not.
    """

    dimensions: list[Dimension]
    cells: np.ndarray
    value: np.ndarray
    freq: np.ndarray
    cost: np.ndarray | None
    contribution_cell: np.ndarray
    contribution: np.ndarray
    contribution_holding: np.ndarray | None
    negative_contributions: bool
    top_n: int
    response: str | None = None
    holding: str | None = None
    requested: np.ndarray | None = None
    request: str | None = None
    request_codes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        n = len(self.cells)
        sizes = {"value": len(self.value), "freq": len(self.freq)}
        if self.cost is not None:
            sizes["cost"] = len(self.cost)
        wrong = [k for k, v in sizes.items() if v != n]
        m = len(self.contribution_cell)
        if len(self.contribution) != m or (
            self.contribution_holding is not None and len(self.contribution_holding) != m
        ):
            wrong.append("contribution")
        if self.requested is not None and self.requested.shape != (n, len(self.request_codes)):
            wrong.append("requested")
        if wrong:
            raise DataError(
                f"leaf aggregates: {', '.join(wrong)} do not match the {n} leaf cells "
                "(one entry per cell, one per contribution)"
            )
        if (self.holding is None) != (self.contribution_holding is None):
            raise DataError(
                "leaf aggregates: give the holding column's name together with the per-holding "
                "contributions (or neither)"
            )
        if (self.request is None) != (self.requested is None):
            raise DataError(
                "leaf aggregates: give the request column's name together with the requesting "
                "contributions (or neither)"
            )


def leaf_aggregates(
    data: pd.DataFrame,
    dimensions: Sequence[str] | Mapping[str, Hierarchy | None],
    response: str | None = None,
    *,
    shadow: str | None = None,
    cost: str | None = None,
    holding: str | None = None,
    top_n: int = 2,
    request: str | None = None,
    request_codes: Sequence[str] = (),
    totals: Mapping[str, str] | None = None,
) -> LeafAggregates:
    """The per-leaf-cell aggregates of ``data`` (parameters as :meth:`Table.from_microdata`):
    the one pass over the records, proportional to their number.

    DataError for an empty data set, a missing column, a value no dimension's hierarchy
    knows, a response/shadow/cost value that is not a finite number (naming the column,
    the row and the value), or a request column without response or without any record
    carrying one of the request codes.
    """
    dims = table_dimensions(
        list(data.columns),
        dimensions,
        lambda name: pd.unique(np.asarray(as_text(data[name]), dtype=object)),
        totals,
    )
    n = len(data)
    if n == 0:
        raise DataError("the data has no records; there is no table to build")
    check_columns(list(data.columns), [response, shadow, cost, holding, request])
    leaf_nodes = [d.leaves_for(data[d.name], d.name) for d in dims]
    shape = tuple(len(d) for d in dims)
    leaf_cell = np.ravel_multi_index(tuple(leaf_nodes), shape)
    value = _numeric(data, response) if response is not None else np.ones(n)
    rule_values = _numeric(data, shadow) if shadow is not None else value
    cost_values = _numeric(data, cost) if cost is not None else None
    negative = bool((rule_values < 0).any())

    cells, inv = np.unique(leaf_cell, return_inverse=True)
    value_sum = np.bincount(inv, weights=value)
    freq = np.bincount(inv).astype(np.int64)
    cost_sum = np.bincount(inv, weights=cost_values) if cost_values is not None else None
    requested = None
    if request is not None:
        if response is None:
            raise request_without_response(request)
        requested = requested_contributions(
            data[request], request, request_codes, rule_values, inv, len(cells)
        )
    c_hold: np.ndarray | None = None
    contrib: np.ndarray
    if holding is not None:
        hold_codes = pd.factorize(as_text(data[holding]), use_na_sentinel=False)[0]
        key = pd.MultiIndex.from_arrays([leaf_cell, hold_codes])
        codes, uniq = pd.factorize(key)
        contrib = np.bincount(codes, weights=rule_values)
        c_leaf = uniq.get_level_values(0).to_numpy()
        c_hold = uniq.get_level_values(1).to_numpy()
    else:
        # each leaf cell's top_n largest rule values
        order = np.lexsort((-rule_values, leaf_cell))
        s_cell = leaf_cell[order]
        start = np.searchsorted(s_cell, s_cell, side="left")
        rank = np.arange(n) - start
        keep = order[rank < top_n]
        c_leaf = leaf_cell[keep]
        contrib = rule_values[keep]
    return LeafAggregates(
        dimensions=dims,
        cells=cells,
        value=value_sum,
        freq=freq,
        cost=cost_sum,
        contribution_cell=c_leaf,
        contribution=contrib,
        contribution_holding=c_hold,
        negative_contributions=negative,
        top_n=top_n,
        response=response,
        holding=holding,
        requested=requested,
        request=request,
        request_codes=tuple(str(c) for c in request_codes) if request is not None else (),
    )


def requested_contributions(
    flags: pd.Series,
    column: str,
    codes: Sequence[str],
    values: np.ndarray,
    group: np.ndarray,
    n_groups: int,
) -> np.ndarray:
    """``(n_groups, len(codes))``: per group (``group[i]`` the group of record ``i``) and
    request code, the largest positive value of ``values`` among the records whose ``flags``
    (canonical text) equal the code; 0 where there is none.

    This is what tau-Argus keeps per cell for its request rule (``CDataCell::PeepCell``, the
    largest contribution of a requesting record, starting from 0 so that only positive ones
    count), kept per code so that the rule can apply each code's percentage. DataError when
    no code is given, a code repeats, or no record carries any of the codes (naming the
    column's values, so a mistyped code is seen)."""
    codes = check_request_codes(column, codes)
    text = np.asarray(as_text(flags), dtype=object)
    which = pd.Index(codes).get_indexer(pd.Index(text))
    if not (which >= 0).any():
        raise no_request_code(column, codes, pd.unique(text).tolist())
    out = np.zeros((n_groups, len(codes)))
    asked = which >= 0
    np.maximum.at(out, (group[asked], which[asked]), np.maximum(values[asked], 0.0))
    return out


def check_request_codes(column: str, codes: Sequence[str]) -> list[str]:
    """The request codes as texts; DataError when none is given or one repeats."""
    texts = [str(c) for c in codes]
    if not texts or len(set(texts)) != len(texts):
        raise DataError(
            f"request column {column!r}: give one or two distinct request codes, got {texts}"
        )
    return texts


def no_request_code(column: str, codes: Sequence[str], values: Iterable[str]) -> DataError:
    """The error for a request column holding none of the request ``codes`` (``values``: its
    distinct canonical texts, or some of them), which is almost surely a mistyped code."""
    seen = sorted(values, key=_sort_key)
    return DataError(
        f"request column {column!r} holds none of the request codes {list(codes)} (its values: "
        f"{preview(seen)}); give the codes that mark the records asking for protection"
    )


def request_without_response(column: str) -> DataError:
    """The error for a request column on a frequency table."""
    return DataError(
        f"request column {column!r}: the request rule compares a contribution with the cell "
        "total, and a frequency table has no contributions; give a response"
    )


# -- helpers ---------------------------------------------------------------------------------
def table_dimensions(
    columns: Sequence[str],
    dimensions: Sequence[str] | Mapping[str, Hierarchy | None],
    distinct_texts: Callable[[str], Iterable[str]],
    totals: Mapping[str, str] | None = None,
) -> list[Dimension]:
    """The dimensions of a table over a data set with ``columns``: a hierarchy's tree, or
    a flat dimension over the column's distinct canonical texts (``distinct_texts(name)``,
    in any order: they are sorted, numbers numerically before other texts) whose total is
    ``totals[name]`` (default ``Total``). DataError naming a dimension that is not a
    column."""
    if isinstance(dimensions, str):
        dimensions = [dimensions]
    out = []
    for name in dimension_names(columns, dimensions):
        h = dimensions.get(name) if isinstance(dimensions, Mapping) else None
        if h is not None:
            out.append(Dimension.from_hierarchy(name, h))
        else:
            cats = sorted(distinct_texts(name), key=_sort_key)
            out.append(Dimension.flat(name, cats, (totals or {}).get(name, TOTAL)))
    return out


def dimension_names(
    columns: Sequence[str], dimensions: str | Sequence[str] | Mapping[str, Hierarchy | None]
) -> list[str]:
    """The names of ``dimensions``; DataError when there is none or one is not a column."""
    names = [dimensions] if isinstance(dimensions, str) else list(dimensions)
    if not names:
        raise DataError("a table needs at least one dimension (spanning variable)")
    for name in names:
        if name not in columns:
            raise DataError(
                f"dimension {name!r} is not a column of the data (columns: "
                f"{preview(list(columns))})"
            )
    return names


def check_columns(columns: Sequence[str], names: Sequence[str | None]) -> None:
    """DataError naming the first of ``names`` (None: not used) that is not in ``columns``."""
    for col in [c for c in names if c is not None]:
        if col not in columns:
            raise DataError(
                f"column {col!r} is not in the data (columns: {preview(list(columns))})"
            )


def _sort_key(v: str) -> tuple[int, float | str, str]:
    # numbers numerically, then other texts; ties ("1", "01") by text, so the order does not
    # depend on the order of the records
    try:
        x = float(v)
    except ValueError:
        return (1, v, v)
    return (0, x, v) if x == x else (1, v, v)  # NaN ("nan") does not order: a text


def not_a_number(column: str, row: int, value: object, count: int) -> DataError:
    """The error for a response, shadow or cost value that is not a finite number: the
    first such value, at 0-based ``row``, and how many there are."""
    return DataError(
        f"column {column!r}, row {row + 1}: {value!r} is not a number "
        f"({count} such value(s)); a table sums numbers"
    )


def _numeric(frame: pd.DataFrame, column: str) -> np.ndarray:
    values = pd.to_numeric(frame[column], errors="coerce")
    bad = values.isna().to_numpy() | ~np.isfinite(values.to_numpy(dtype=float, na_value=np.nan))
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise not_a_number(column, i, frame[column].iloc[i], int(bad.sum()))
    return values.to_numpy(dtype=np.float64)


def roll_up(
    cells: np.ndarray, dims: Sequence[Dimension], shape: tuple[int, ...]
) -> tuple[np.ndarray, np.ndarray]:
    """Every cell ``cells[i]`` expanded to all its ancestor cells (itself included):
    ``(ancestor cells, i)`` pairs."""
    nodes = list(np.unravel_index(np.asarray(cells, dtype=np.int64), shape))
    rows = np.arange(len(cells))
    for j, d in enumerate(dims):
        chains = d.ancestors
        lengths = np.array([len(c) for c in chains], dtype=np.int64)
        flat = np.concatenate(chains)
        offsets = np.concatenate([[0], np.cumsum(lengths)[:-1]])
        reps = lengths[nodes[j]]
        pos = np.arange(int(reps.sum())) - np.repeat(np.cumsum(reps) - reps, reps)
        new_j = flat[np.repeat(offsets[nodes[j]], reps) + pos]
        nodes = [np.repeat(nd, reps) for nd in nodes]
        nodes[j] = new_j
        rows = np.repeat(rows, reps)
    return np.ravel_multi_index(tuple(nodes), shape), rows


def _top_by_cell(cell: np.ndarray, value: np.ndarray, n_cells: int, top_n: int) -> np.ndarray:
    """``(n_cells, top_n)``: each cell's largest values, descending, zero-padded."""
    out = np.zeros((n_cells, max(top_n, 1)))
    if len(cell) == 0:
        return out
    order = np.lexsort((-value, cell))
    s_cell = cell[order]
    start = np.searchsorted(s_cell, s_cell, side="left")
    rank = np.arange(len(cell)) - start
    keep = rank < top_n
    out[s_cell[keep], rank[keep]] = value[order][keep]
    return out
