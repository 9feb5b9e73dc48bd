"""Linked tables: several tables of the same microdata protected as one system.

Tables built from the same microdata over shared spanning variables have cells in common:
region x gender's cell (r1, Total) and region x age's cell (r1, Total) are both "region r1",
the same records and the same value. Protected one at a time, such a cell may be suppressed
in one table and published in the other, and the published copy undoes the suppression (the
intruder combines the tables' additivity relations). Linked tables must therefore be
protected *consistently* -- a common cell is suppressed in all its tables or in none -- and
audited on what an intruder sees: every table's relations at once (Hundepool et al. 2012,
*Statistical Disclosure Control*, ch. 4 on linked tables; de Wolf & Giessing 2009,
"Adjusting the tau-ARGUS modular approach to deal with linked tables", *Data & Knowledge
Engineering* 68(11), 1160-1174; the R package GaussSuppression's vignette "Linked table
suppression" calls this the *global* protection).

**Cell identity.** A cell of a table is identified by its codes in the dimensions where it is
not at the total (root): a table over dimensions ``D`` is the slice of the cross-classification
of all the tables' dimensions where every dimension outside ``D`` is at its total. Two tables'
cells with the same non-total codes are one cell; :class:`LinkedTables` numbers the distinct
cells (lexicographically by their nodes in every dimension, so the grand total is cell 0),
checks that the copies of a common cell agree in value (DataError otherwise), and stacks every
table's additivity relations over the distinct cells into one system ``A x = 0`` (identical
relations, e.g. "region total = sum of regions" found in both tables, are kept once).

**Protection** (:func:`protect_linked`): the primary cells of every table by the rules (a
common cell flagged in any table is primary, with the largest protection levels), then

* ``optimal`` and ``simple``: the suppression engine (:mod:`sdckit.tables.suppression`) on the
  combined system -- the Fischetti & Salazar (2001) model is defined for any table with
  linear constraints, so its optimum is the cheapest consistent pattern that protects every
  primary against an intruder who sees all the tables;
* ``hypercube`` and ``modular``: the heuristic on every table in turn, each table's pattern
  forced to contain the common cells suppressed so far (they are its primaries, those
  suppressed as secondaries with the least protection ``min_protection``, as HiTaS treats
  cells suppressed in a higher sub-table), repeated until a full pass adds nothing (the
  iterative approach of sdcTable's ``protectLinkedTables`` and of tau-Argus for linked
  tables; the pattern only grows, so it ends); then the repair and the audit of the combined
  system, as for every heuristic;
* ``rounding`` and ``cta``: controlled rounding and controlled tabular adjustment of the
  combined system (one value per distinct cell, so consistent; every table's relations hold);
* ``cell_key``: the cell key method per table; a cell's noise depends only on its count and
  cell key, so the copies of a common cell get the same noise (checked).

Every suppression pattern is audited on the combined system (:func:`sdckit.tables.audit.audit`)
before release; a pattern that leaves a primary exposed raises VerificationError.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sdckit.core.frequency import group_keys
from sdckit.errors import ConfigError, DataError, ParameterError, VerificationError, preview
from sdckit.tables.dimension import Dimension
from sdckit.tables.registry import TABLE_METHODS
from sdckit.tables.rules import Primary, SensitivityRule, primary_cells
from sdckit.tables.table import ADDITIVITY_TOLERANCE, Table, cell_levels

if TYPE_CHECKING:
    from scipy import sparse

    from sdckit.tables.protect import Protection

__all__ = ["LINKED_METHODS", "LinkedProtection", "LinkedTables", "linked_primary", "protect_linked"]

#: The methods :func:`protect_linked` accepts: those of
#: :data:`sdckit.tables.registry.TABLE_METHODS` whose traits say ``linked``.
LINKED_METHODS = TABLE_METHODS.where(lambda t: t.linked)
_TOL = 1e-7


class LinkedTables:
    """Several tables over shared dimensions as one system of distinct cells.

    ``tables``: the tables (built from the same microdata; a dimension of the same name must
    have the same codes and hierarchy in every table that spans it); ``labels``: their names
    (default ``"region x gender"`` from the dimensions). Per distinct cell: ``value``,
    ``freq``, ``contributors``, ``top`` (the largest contributions), ``cost`` (from the first
    table holding the cell); ``cells_of[t]`` maps table ``t``'s cells to the distinct cells.

    The object offers what the suppression, audit, rounding and adjustment engines read from
    a :class:`~sdckit.tables.table.Table` (``n_cells``, ``value``, ``freq``, ``cost``,
    :meth:`constraints`, :meth:`codes`, ``level``), so they run on the combined system
    unchanged; the heuristics that walk a table's grid (hypercube, modular) run per table
    (:func:`protect_linked`).
    """

    def __init__(self, tables: Sequence[Table], labels: Sequence[str] | None = None) -> None:
        tables = list(tables)
        if not tables:
            raise ParameterError("linked tables need at least one table")
        for i, t in enumerate(tables):
            if not isinstance(t, Table):
                raise ParameterError(
                    f"linked table {i} is a {type(t).__name__}, not a Table; build each with "
                    "Table.from_microdata on the same data"
                )
        if labels is None:
            labels = [" x ".join(t.names) for t in tables]
        labels = [str(x) for x in labels]
        if len(labels) != len(tables):
            raise ParameterError(f"{len(labels)} labels for {len(tables)} linked tables")
        dup = pd.Index(labels).duplicated()
        if dup.any():
            raise ParameterError(
                f"two linked tables are called {labels[int(np.argmax(dup))]!r}; give each "
                "table its own label"
            )
        responses = {t.response for t in tables}
        if len(responses) > 1:
            raise DataError(
                "the linked tables sum different responses "
                f"({preview(sorted(map(str, responses)))}); "
                "linked tables share their cells, so they must all sum the same response"
            )
        self.tables = tables
        self.labels = labels
        self.dimensions = _union_dimensions(tables, labels)
        names = [d.name for d in self.dimensions]
        # every table cell as nodes in all dimensions (the total where the table lacks one)
        full: list[np.ndarray] = []
        for t in tables:
            nodes = np.zeros((t.n_cells, len(names)), dtype=np.int64)
            for j, d in enumerate(t.dimensions):
                nodes[:, names.index(d.name)] = t.nodes[:, j]
            full.append(nodes)
        stacked = np.concatenate(full)
        columns = [stacked[:, j] for j in range(stacked.shape[1])]
        inverse, _, first = group_keys(columns)
        uniq = stacked[first]  # the distinct cells in lexicographic order of their nodes
        self.nodes: np.ndarray = uniq
        offsets = np.cumsum([0, *[t.n_cells for t in tables]])
        self.cells_of: list[np.ndarray] = [
            inverse[offsets[i] : offsets[i + 1]] for i in range(len(tables))
        ]
        n = len(uniq)
        # the first table holding a cell gives its figures; the others must agree in value
        owner = np.full(n, -1, dtype=np.int64)
        local = np.zeros(n, dtype=np.int64)
        for i in range(len(tables) - 1, -1, -1):
            owner[self.cells_of[i]] = i
            local[self.cells_of[i]] = np.arange(tables[i].n_cells)
        self._owner = owner
        width = max(t.top.shape[1] for t in tables)
        self.value = np.zeros(n)
        self.freq = np.zeros(n, dtype=np.int64)
        self.contributors = np.zeros(n, dtype=np.int64)
        self.top = np.zeros((n, width))
        self.cost = np.zeros(n)
        for i, t in enumerate(tables):
            mine = np.flatnonzero(owner == i)
            src = local[mine]
            self.value[mine] = t.value[src]
            self.freq[mine] = t.freq[src]
            self.contributors[mine] = t.contributors[src]
            self.top[mine, : t.top.shape[1]] = t.top[src]
            self.cost[mine] = t.cost[src]
        self._check_common_values()
        self.response = tables[0].response
        self.holding = tables[0].holding
        self.negative_contributions = any(t.negative_contributions for t in tables)
        self._constraints: sparse.csr_matrix | None = None

    # -- shape -------------------------------------------------------------------------------
    @property
    def n_cells(self) -> int:
        """Number of distinct cells over all the tables."""
        return int(len(self.value))

    @property
    def names(self) -> list[str]:
        """The dimensions' names (every table's, in order of first appearance)."""
        return [d.name for d in self.dimensions]

    @cached_property
    def level(self) -> np.ndarray:
        """Each cell's hierarchy level: the sum of its nodes' depths (0 = grand total)."""
        return cell_levels(self.dimensions, self.nodes)

    @cached_property
    def tables_of(self) -> np.ndarray:
        """``(n_cells, n_tables)``: whether each distinct cell belongs to each table."""
        out = np.zeros((self.n_cells, len(self.tables)), dtype=bool)
        for i, cells in enumerate(self.cells_of):
            out[cells, i] = True
        return out

    @property
    def common(self) -> np.ndarray:
        """The cells that belong to two tables or more."""
        return self.tables_of.sum(axis=1) >= 2

    def codes(self) -> pd.DataFrame:
        """One row per distinct cell: its code in every dimension (the total's code where it
        is at the total)."""
        return pd.DataFrame(
            {d.name: d.codes[self.nodes[:, j]] for j, d in enumerate(self.dimensions)}
        )

    @cached_property
    def _index(self) -> dict[tuple[int, ...], int]:
        return {tuple(row): i for i, row in enumerate(self.nodes.tolist())}

    def cell_index(self, codes: Mapping[str, str]) -> int:
        """The distinct cell with ``codes`` (dimension name -> code; a dimension left out is
        at its total). DataError for an unknown dimension or code, or a cell of no table."""
        unknown = [k for k in codes if k not in self.names]
        if unknown:
            raise DataError(
                f"no linked table has dimension {unknown[0]!r} (dimensions: {preview(self.names)})"
            )
        key = []
        for d in self.dimensions:
            code = str(codes.get(d.name, d.codes[0]))
            if code not in d.index_of:
                raise DataError(f"dimension {d.name!r} has no code {code!r}")
            key.append(d.index_of[code])
        if tuple(key) not in self._index:
            raise DataError(
                f"no linked table holds the cell {dict(codes)}: its non-total codes span no "
                "table's dimensions"
            )
        return self._index[tuple(key)]

    # -- additivity ------------------------------------------------------------------------
    def constraints(self) -> sparse.csr_matrix:
        """Every table's additivity relations (:meth:`Table.constraints`) over the distinct
        cells, one row per distinct relation."""
        if self._constraints is None:
            from scipy import sparse

            blocks = []
            for t, cells in zip(self.tables, self.cells_of, strict=True):
                a = t.constraints().tocoo()
                blocks.append(
                    sparse.csr_matrix(
                        (a.data, (a.row, cells[a.col])), shape=(a.shape[0], self.n_cells)
                    )
                )
            a = sparse.vstack(blocks, format="csr") if blocks else sparse.csr_matrix((0, 0))
            a.sum_duplicates()
            a.sort_indices()
            seen: set[tuple[bytes, bytes]] = set()
            keep = []
            for r in range(a.shape[0]):
                lo, hi = a.indptr[r], a.indptr[r + 1]
                key = (a.indices[lo:hi].tobytes(), a.data[lo:hi].tobytes())
                if key not in seen:
                    seen.add(key)
                    keep.append(r)
            self._constraints = a[np.array(keep, dtype=np.int64)].tocsr()
        return self._constraints

    def check_additive(self) -> None:
        """DataError unless every table is additive (:meth:`Table.check_additive`)."""
        for t in self.tables:
            t.check_additive()

    def to_frame(self) -> pd.DataFrame:
        """The distinct cells: codes, ``value``, ``freq``, ``contributors`` and ``tables``
        (the labels of the tables holding each cell, ``;``-separated)."""
        df = self.codes()
        df["value"] = self.value
        df["freq"] = self.freq
        df["contributors"] = self.contributors
        df["tables"] = [
            ";".join(lab for lab, on in zip(self.labels, row, strict=True) if on)
            for row in self.tables_of
        ]
        return df

    def _check_common_values(self) -> None:
        for i, (t, cells) in enumerate(zip(self.tables, self.cells_of, strict=True)):
            scale = np.maximum(1.0, np.abs(self.value[cells]))
            bad = np.abs(t.value - self.value[cells]) > ADDITIVITY_TOLERANCE * scale
            if bad.any():
                k = int(np.flatnonzero(bad)[0])
                c = int(cells[k])
                raise DataError(
                    f"the cell {_label_codes(self, c)} is {self.value[c]:g} in table "
                    f"{self.labels[int(self._owner[c])]!r} but {t.value[k]:g} in table "
                    f"{self.labels[i]!r} "
                    f"({int(bad.sum())} such cell(s)); linked tables must come from the same "
                    "microdata (and response), so that a common cell has one value"
                )


def _union_dimensions(tables: Sequence[Table], labels: Sequence[str]) -> list[Dimension]:
    """The tables' dimensions, each once; DataError when two tables' dimensions of the same
    name differ (codes or hierarchy)."""
    out: dict[str, tuple[Dimension, str]] = {}
    for t, label in zip(tables, labels, strict=True):
        for d in t.dimensions:
            if d.name not in out:
                out[d.name] = (d, label)
                continue
            ref, where = out[d.name]
            same = (
                len(ref) == len(d)
                and (ref.codes == d.codes).all()
                and (ref.parent == d.parent).all()
            )
            if not same:
                raise DataError(
                    f"dimension {d.name!r} differs between table {where!r} and table "
                    f"{label!r} (codes {preview(list(ref.codes))} vs {preview(list(d.codes))}); "
                    "linked tables must share their dimensions: build every table from the "
                    "same data with the same hierarchy for a dimension"
                )
    return [d for d, _ in out.values()]


def _label_codes(linked: LinkedTables, cell: int) -> dict[str, str]:
    """A distinct cell's non-total codes (the grand total: every dimension's total)."""
    codes = {
        d.name: str(d.codes[linked.nodes[cell, j]])
        for j, d in enumerate(linked.dimensions)
        if linked.nodes[cell, j] != 0
    }
    return codes or {d.name: str(d.codes[0]) for d in linked.dimensions}


# -- protection ---------------------------------------------------------------------------------
@dataclass
class LinkedProtection:
    """Protected linked tables: ``combined`` is the protection of the distinct cells (a
    :class:`~sdckit.tables.protect.Protection` over :class:`LinkedTables`), ``tables`` one
    Protection per table (its cells' statuses, published values and the *combined* audit's
    intervals, i.e. what an intruder derives from all the tables)."""

    linked: LinkedTables
    combined: Protection
    tables: list[Protection]

    @property
    def safe(self) -> bool:
        """Every check passed (the combined audit for suppression)."""
        return bool(self.combined.safe)

    @property
    def method(self) -> str:
        """The method used."""
        return self.combined.method

    def cells(self) -> pd.DataFrame:
        """One row per cell of every table (a common cell once per table holding it): the
        ``table`` label, the codes in every dimension of the linked tables (a dimension the
        table does not span holds its total's code), ``value``, ``freq``, ``status``,
        ``audit_lower``, ``audit_upper``, ``published``."""
        frames = []
        names = self.linked.names
        for label, prot in zip(self.linked.labels, self.tables, strict=True):
            df = prot.cells()
            for d in self.linked.dimensions:
                if d.name not in df.columns:
                    df[d.name] = d.codes[0]
            df["table"] = label
            rest = [c for c in df.columns if c not in names and c != "table"]
            frames.append(df[["table", *names, *rest]])
        return pd.concat(frames, ignore_index=True)

    def summary(self) -> dict[str, Any]:
        """The JSON summary: the combined figures over the distinct cells (``cells``,
        ``primary``, ``secondary``, ``suppressed_value``, ``safe``, ``method``, ...),
        ``common_cells`` and ``tables``: each table's own summary
        (:meth:`Protection.summary`)."""
        out = self.combined.summary()
        out["linked"] = True
        out["common_cells"] = int(self.linked.common.sum())
        out["tables"] = {
            label: {"dimensions": prot.table.names, **prot.summary()}
            for label, prot in zip(self.linked.labels, self.tables, strict=True)
        }
        return out


def linked_primary(
    linked: LinkedTables, rules: Sequence[SensitivityRule], *, min_protection: float = 1.0
) -> Primary:
    """The primary cells of the linked tables: the rules on every table
    (:func:`~sdckit.tables.rules.primary_cells`), a common cell primary when any table flags
    it, with the largest protection levels."""
    n = linked.n_cells
    unsafe = np.zeros(n, dtype=bool)
    upper = np.zeros(n)
    lower = np.zeros(n)
    by_rule: dict[str, np.ndarray] = {}
    for t, cells in zip(linked.tables, linked.cells_of, strict=True):
        p = primary_cells(t, rules, min_protection=min_protection)
        unsafe[cells] |= p.unsafe
        np.maximum.at(upper, cells, np.where(p.unsafe, p.upper, 0.0))
        np.maximum.at(lower, cells, np.where(p.unsafe, p.lower, 0.0))
        for key, flag in p.by_rule.items():
            mask = by_rule.setdefault(key, np.zeros(n, dtype=bool))
            mask[cells] |= flag
    return Primary(unsafe, upper, lower, by_rule)


def protect_linked(
    tables: LinkedTables | Sequence[Table] | Mapping[str, Table],
    rules: Sequence[SensitivityRule],
    method: str = "optimal",
    *,
    options: Mapping[str, Any] | None = None,
    min_protection: float = 1.0,
) -> LinkedProtection:
    """Apply ``rules`` to linked tables and protect them consistently with ``method`` (see
    the module docstring).

    ``tables``: a :class:`LinkedTables`, a list of tables, or a mapping label -> table.
    ``options`` as for :func:`sdckit.tables.protect.protect`: ``time_limit`` (seconds),
    ``base`` (rounding), ``ptable`` and ``cell_keys`` (cell key method: one key per distinct
    cell of the :class:`LinkedTables`, or a list with one key array per table).
    Raises :class:`~sdckit.errors.ConfigError` for an unknown method or missing parameters,
    :class:`~sdckit.errors.DataError` for tables whose common cells disagree and
    :class:`~sdckit.errors.VerificationError` if the result fails its check.
    """
    import time

    from sdckit.tables.protect import Protection

    if method not in LINKED_METHODS:
        raise ConfigError(
            f"unknown table method {method!r}; linked tables take {', '.join(LINKED_METHODS)}"
        )
    if isinstance(tables, LinkedTables):
        linked = tables
    elif isinstance(tables, Mapping):
        linked = LinkedTables(list(tables.values()), list(tables.keys()))
    else:
        linked = LinkedTables(tables)
    opts = dict(options or {})
    if opts.get("singletons"):
        raise ConfigError(
            "the singletons option is not available for linked tables: protect each table "
            "on its own with it, or link them without it"
        )
    t0 = time.perf_counter()
    primary = linked_primary(linked, rules, min_protection=min_protection)
    n = linked.n_cells
    empty = (linked.freq == 0) & (linked.value == 0)
    nan = np.full(n, np.nan)
    if TABLE_METHODS.traits(method).kind == "suppression":
        status, published, lower, upper, details = _suppress_linked(
            linked, primary, method, opts.get("time_limit"), min_protection
        )
    else:
        status = np.where(primary.unsafe, "primary", np.where(empty, "empty", "safe")).astype(
            object
        )
        lower, upper = nan, nan.copy()
        published, details = _perturb_linked(linked, primary, method, opts)
    view: Any = linked  # Protection reads codes(), value, freq, level, n_cells
    combined = Protection(
        view,
        method,
        primary,
        status,
        published,
        lower,
        upper,
        True,
        details,
    )
    per_table = [
        _table_protection(t, cells, combined)
        for t, cells in zip(linked.tables, linked.cells_of, strict=True)
    ]
    _check_consistent(linked, per_table)
    combined.details["elapsed_seconds"] = time.perf_counter() - t0
    return LinkedProtection(linked, combined, per_table)


def _suppress_linked(
    linked: LinkedTables,
    primary: Primary,
    method: str,
    time_limit: float | None,
    min_protection: float,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
    """Secondary suppression of the combined system; the pattern audited on it."""
    import time

    from sdckit.tables.audit import audit
    from sdckit.tables.patterns import repair
    from sdckit.tables.suppression import suppress

    table: Any = linked  # the engines read n_cells, value, freq, cost, constraints(), codes()
    t0 = time.perf_counter()
    if method in ("optimal", "simple"):
        result = suppress(table, primary, method, time_limit=time_limit)
        pattern = result.suppressed
        details = dict(result.details)
    else:
        start, passes = _per_table_pattern(linked, primary, method, min_protection)
        nonneg = bool((linked.value >= 0).all())
        fixed = repair(table, primary, start, linked.cost, method="sequential", nonnegative=nonneg)
        pattern = fixed.suppressed
        prim = np.asarray(primary.unsafe, dtype=bool)
        details = {
            "method": method,
            "optimal": False,
            "iterations": passes,
            "cuts": 0,
            "attacker_lps": fixed.lps,
            "secondary_cost": float(linked.cost[pattern & ~prim].sum()),
            "repaired": fixed.completed,
            "completed_after_time_limit": 0,
            "time_limit_hit": False,
            "elapsed_seconds": time.perf_counter() - t0,
        }
    # the release check: the pattern audited on every table's relations at once
    check = audit(table, pattern, primary)
    if not check.safe:
        raise VerificationError(
            f"{method}: the linked suppression pattern leaves {len(check.exposed)} primary "
            "cell(s) exposed in the audit of the combined tables; nothing was written (a bug "
            "in sdckit)"
        )
    prim = np.asarray(primary.unsafe, dtype=bool)
    empty = (linked.freq == 0) & (linked.value == 0)
    secondary = pattern & ~prim
    status = np.where(
        prim, "primary", np.where(secondary, "secondary", np.where(empty, "empty", "safe"))
    ).astype(object)
    published = np.where(pattern, np.nan, linked.value)
    return status, published, check.lower, check.upper, details


def _per_table_pattern(
    linked: LinkedTables, primary: Primary, method: str, min_protection: float
) -> tuple[np.ndarray, int]:
    """The heuristic on every table in turn until no table adds a cell (module docstring):
    the consistent pattern before the combined repair, and the number of passes."""
    from sdckit.tables.hypercube import hypercube_pattern
    from sdckit.tables.modular import hitas_solver, modular_pattern

    solver = hitas_solver(bool((linked.value >= 0).all()))

    s = np.asarray(primary.unsafe, dtype=bool).copy()
    common = linked.common
    passes = 0
    while True:
        passes += 1
        before = s.copy()
        for t, cells in zip(linked.tables, linked.cells_of, strict=True):
            # the primaries and the common cells suppressed so far (by any table); the table's
            # own other secondaries are found again from these
            must = primary.unsafe[cells] | (s[cells] & common[cells])
            if not must.any():
                continue
            is_prim = primary.unsafe[cells]
            value = np.maximum(t.value, 0.0)
            sub = Primary(
                must,
                np.where(is_prim, primary.upper[cells], np.where(must, min_protection, 0.0)),
                np.where(
                    is_prim,
                    primary.lower[cells],
                    np.where(must, np.minimum(min_protection, value), 0.0),
                ),
                {"linked": must},
            )
            if method == "hypercube":
                pattern = hypercube_pattern(t, sub, t.cost)
            else:
                pattern = modular_pattern(t, sub, t.cost, solver, min_protection=min_protection)
            s[cells[np.asarray(pattern, dtype=bool)]] = True
        if (s == before).all():
            return s, passes


def _perturb_linked(
    linked: LinkedTables, primary: Primary, method: str, opts: dict[str, Any]
) -> tuple[np.ndarray, dict[str, Any]]:
    """Rounding and CTA of the combined system, the cell key method per table; each
    result checked as :func:`sdckit.tables.protect.protect` checks it."""
    from sdckit.tables.protect import _check_adjustment, _check_rounding

    table: Any = linked  # rounding and CTA read value, cost, constraints(), codes()
    if method == "rounding":
        from sdckit.tables.rounding import controlled_rounding

        if "base" not in opts:
            raise ConfigError("method rounding needs option `base` (e.g. options: {base: 5})")
        r = controlled_rounding(table, opts["base"], time_limit=opts.get("time_limit"))
        published = np.asarray(r.rounded, dtype=float)
        _check_rounding(table, published, float(opts["base"]))
        return published, r.to_dict()
    if method == "cta":
        from sdckit.tables.adjustment import controlled_adjustment

        a = controlled_adjustment(table, primary, time_limit=opts.get("time_limit"))
        published = np.asarray(a.adjusted, dtype=float)
        _check_adjustment(table, primary, published)
        return published, a.to_dict()
    from sdckit.tables.cell_key import cell_key

    if "ptable" not in opts:
        raise ConfigError("method cell_key needs option `ptable` (a p-table file)")
    keys = opts.get("cell_keys")
    if keys is None:
        raise ConfigError(
            "method cell_key on linked tables needs option `cell_keys` (one key per cell of "
            "the linked tables, or one array per table; see sdckit.tables.cell_key.cell_keys)"
        )
    if isinstance(keys, np.ndarray) and keys.ndim == 1:
        if keys.shape != (linked.n_cells,):
            raise ParameterError(
                f"cell_keys must hold one key per distinct cell ({linked.n_cells}), got "
                f"{keys.shape[0]}; or give a list with one array per table"
            )
        per_table = [keys[cells] for cells in linked.cells_of]
    else:
        per_table = list(keys)
        if len(per_table) != len(linked.tables):
            raise ParameterError(
                f"cell_keys holds {len(per_table)} arrays for {len(linked.tables)} tables"
            )
    published = np.full(linked.n_cells, np.nan)
    details: dict[str, Any] = {}
    for i, (t, cells) in enumerate(zip(linked.tables, linked.cells_of, strict=True)):
        res = cell_key(t, opts["ptable"], np.asarray(per_table[i], dtype=float))
        known = ~np.isnan(published[cells])
        differ = known & (published[cells] != res.perturbed)
        if differ.any():
            c = int(cells[np.flatnonzero(differ)[0]])
            raise DataError(
                f"the cell {_label_codes(linked, c)} gets different noise in table "
                f"{linked.labels[i]!r} than in an earlier table: its cell keys differ; compute "
                "every table's keys from the same record keys (cell_keys on the same microdata)"
            )
        published[cells] = res.perturbed
        details = {"ptable": res.details["ptable"], "ptable_max_i": res.details["ptable_max_i"]}
    # the figures of sdckit.tables.cell_key over the distinct cells
    cons = linked.constraints()
    broken = int((np.abs(cons @ published) > 1e-9).sum()) if cons.shape[0] else 0
    counts = np.rint(linked.value)
    noise = published - counts
    filled = counts > 0
    details.update(
        {
            "cells_perturbed": int((noise != 0).sum()),
            "sum_abs_noise": float(np.abs(noise).sum()),
            "max_abs_noise": float(np.abs(noise).max(initial=0.0)),
            "mean_abs_noise": float(np.abs(noise[filled]).mean()) if filled.any() else 0.0,
            "max_rel_noise": float((np.abs(noise) / np.maximum(counts, 1)).max(initial=0.0)),
            "relations_broken": broken,
        }
    )
    return published, details


def _table_protection(table: Table, cells: np.ndarray, combined: Protection) -> Protection:
    """One table's view of the combined protection."""
    from sdckit.tables.protect import Protection

    p = combined.primary
    primary = Primary(
        p.unsafe[cells],
        p.upper[cells],
        p.lower[cells],
        {k: v[cells] for k, v in p.by_rule.items()},
    )
    return Protection(
        table,
        combined.method,
        primary,
        combined.status[cells],
        combined.published[cells],
        combined.audit_lower[cells],
        combined.audit_upper[cells],
        combined.safe,
        {},
    )


def _check_consistent(linked: LinkedTables, per_table: list[Protection]) -> None:
    """Every copy of a common cell has one status and one published value (VerificationError
    otherwise: a bug, the tables are views of one protection)."""
    status = np.full(linked.n_cells, None, dtype=object)
    published = np.full(linked.n_cells, np.nan)
    seen = np.zeros(linked.n_cells, dtype=bool)
    for prot, cells in zip(per_table, linked.cells_of, strict=True):
        old = seen[cells]
        same_status = status[cells][old] == prot.status[old]
        a, b = published[cells][old], prot.published[old]
        same_value = (np.isnan(a) & np.isnan(b)) | (np.abs(a - b) <= _TOL * np.maximum(1, abs(a)))
        if not (same_status.all() and same_value.all()):
            raise VerificationError("linked tables: a common cell differs between tables (a bug)")
        status[cells] = prot.status
        published[cells] = prot.published
        seen[cells] = True
