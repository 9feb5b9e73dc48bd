"""Singletons: a primary cell with one contributor is known exactly to that contributor.

A suppressed cell with a single contributor (a *singleton*; one holding when contributions
of a holding are combined) hides nothing from its own respondent, who knows the cell's value.
That respondent is an intruder with more knowledge than the outsider of the ordinary audit:
for them the singleton is a published cell. If two singletons are the only suppressed cells
of a relation, each respondent computes the other's value exactly; more generally any
primary cell whose feasibility interval shrinks below its protection interval once one
singleton's value is known is disclosed to that respondent (tau-Argus manual, sec. 4.2.3,
"singletons" and the "extended protection" of the modular method; Hundepool et al. 2012,
*Statistical Disclosure Control*, sec. 4.3.5, "singletons and the self-knowledge of
contributors"; sdcTable's ``detectSingletons`` heuristic patches the simplest case, two
suppressed cells in a relation).

The check here is exact, by LP: for every suppressed singleton ``s``, the audit of the other
primary cells of ``s``'s component with ``x_s`` published
(:func:`singleton_exposures`). The repair (:func:`protect_singletons`) completes a pattern
against each such respondent in turn with the attacker-inequality machinery of
:mod:`sdckit.tables.patterns` (the singleton locked as published, the pattern's other
cells fixed), adding cells only, until no respondent learns a primary cell within its
protection interval. Only the one-respondent intruder is modelled: coalitions of several
singletons' respondents are not.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from sdckit.errors import DataError, ParameterError
from sdckit.tables._lp import components
from sdckit.tables.audit import audit
from sdckit.tables.patterns import AttackerModel, cell_costs, resolve_nonnegative
from sdckit.tables.rules import Primary
from sdckit.tables.table import Table

__all__ = ["SingletonCheck", "protect_singletons", "singleton_exposures", "singletons"]


def singletons(table: Table, primary: Primary) -> np.ndarray:
    """The primary cells with exactly one contributor (mask)."""
    return np.asarray(primary.unsafe, dtype=bool) & (np.asarray(table.contributors) == 1)


@dataclass
class SingletonCheck:
    """Per suppressed singleton, the primary cells its respondent would learn within their
    protection interval: ``pairs`` of (singleton cell, exposed primary cell)."""

    pairs: list[tuple[int, int]]
    checked: int

    @property
    def safe(self) -> bool:
        """No respondent of a singleton learns another primary cell."""
        return not self.pairs


def _groups(table: Table, suppressed: np.ndarray) -> dict[int, np.ndarray]:
    """Suppressed cell -> the suppressed cells of its component."""
    out: dict[int, np.ndarray] = {}
    for comp in components(table.constraints().tocsr(), np.flatnonzero(suppressed)):
        for c in comp.cells:
            out[int(c)] = comp.cells
    return out


def singleton_exposures(
    table: Table, suppressed: np.ndarray, primary: Primary, *, nonnegative: bool | None = None
) -> SingletonCheck:
    """The audit against every singleton's respondent (module docstring): for each
    suppressed singleton ``s`` whose component holds other primary cells, those cells'
    feasibility intervals with ``s`` published; a cell not reaching ``value ± LPL/UPL`` (or
    of width 0) is exposed to ``s``'s respondent."""
    mask = np.asarray(suppressed, dtype=bool)
    if mask.shape != (table.n_cells,):
        raise ParameterError(f"the pattern must hold one flag per cell ({table.n_cells})")
    nonneg = bool((table.value >= 0).all()) if nonnegative is None else nonnegative
    single = singletons(table, primary) & mask
    groups = _groups(table, mask)
    prim = np.asarray(primary.unsafe, dtype=bool)
    pairs: list[tuple[int, int]] = []
    checked = 0
    for s in np.flatnonzero(single):
        comp = groups.get(int(s))
        others = comp[prim[comp] & (comp != s)] if comp is not None else np.zeros(0, int)
        if len(others) == 0:
            continue
        checked += 1
        known = mask.copy()
        known[s] = False
        sub = Primary(
            np.isin(np.arange(table.n_cells), others),
            primary.upper,
            primary.lower,
            {"singleton": np.zeros(table.n_cells, dtype=bool)},
        )
        check = audit(table, known, sub, lower_bounds=0.0 if nonneg else None)
        pairs.extend((int(s), int(p)) for p in check.exposed)
    return SingletonCheck(pairs, checked)


def protect_singletons(
    table: Table,
    primary: Primary,
    suppressed: np.ndarray,
    cost: np.ndarray | None = None,
    *,
    nonnegative: bool | None = None,
    max_passes: int = 20,
) -> tuple[np.ndarray, int]:
    """Complete ``suppressed`` (a pattern protecting ``primary`` against outsiders) so that
    no singleton's respondent learns another primary cell (module docstring); returns the
    pattern and the number of cells added. Cells are only added, so the outsiders' audit
    stays safe. :class:`~sdckit.errors.DataError` when a primary cell cannot be protected
    from a singleton's respondent (e.g. the two are alone in a relation with a published
    total and nothing else to suppress)."""
    y = np.asarray(suppressed, dtype=bool) | np.asarray(primary.unsafe, dtype=bool)
    start = int(y.sum())
    c = cell_costs(table, cost)
    nonneg = resolve_nonnegative(table, nonnegative)
    for _ in range(max_passes):
        check = singleton_exposures(table, y, primary, nonnegative=nonneg)
        if check.safe:
            return y, int(y.sum()) - start
        for s in sorted({s for s, _ in check.pairs}):
            exposed = np.array(sorted({p for t, p in check.pairs if t == s}), dtype=np.int64)
            s_mask = np.zeros(table.n_cells, dtype=bool)
            s_mask[s] = True
            others = Primary(
                np.asarray(primary.unsafe, dtype=bool) & ~s_mask,
                primary.upper,
                primary.lower,
                {"singleton": np.zeros(table.n_cells, dtype=bool)},
            )
            model = AttackerModel(table, others, c, nonneg, published=s_mask)
            model.fix(y & ~s_mask)
            y = model.sequential(model.fixed1.copy(), exposed) | s_mask | y
    check = singleton_exposures(table, y, primary, nonnegative=nonneg)
    if not check.safe:
        raise DataError(
            f"singletons: {len(check.pairs)} primary cell(s) still exposed to a singleton's "
            f"respondent after {max_passes} passes of additions; protect without the "
            "singleton option or merge categories"
        )
    return y, int(y.sum()) - start
