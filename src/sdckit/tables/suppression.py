"""Secondary cell suppression: hide more cells until every primary cell is protected.

Suppressing the primary (sensitive) cells alone rarely protects them: a hidden cell alone in
a relation is its total minus the published parts. A *pattern* of suppressed cells protects
a primary cell ``p`` (value ``a_p``, protection levels ``UPL_p``/``LPL_p`` from
:func:`sdckit.tables.rules.primary_cells`) when an intruder who knows the published cells,
the additivity of the table and that cells are non-negative can only bound ``x_p`` by an
interval reaching ``a_p + UPL_p`` and ``a_p - LPL_p`` (Hundepool et al. 2012, *Statistical
Disclosure Control*, sec. 4.3; tau-Argus manual, "Secondary cell suppression").
:mod:`sdckit.tables.audit` checks exactly that, and :func:`suppress` audits every pattern
before returning it: an unsafe pattern is repaired, never returned.

Methods (:func:`suppress`):

* ``optimal`` -- the cheapest pattern (sum of the cells' costs), by the model of Fischetti &
  Salazar (2001), "Solving the cell suppression problem on tabular data with linear
  constraints", *Management Science* 47(7), 1008-1027: a binary ``y_c`` per cell
  (1 = suppressed; primaries fixed to 1, empty cells to 0) and, for every primary and
  direction, the *attacker LP* at the current pattern; its dual gives a linear inequality in
  ``y`` that every protecting pattern satisfies. A master MILP (:func:`scipy.optimize.milp`,
  HiGHS) minimizes the cost under the inequalities found so far; the attacker LPs at its
  solution either prove the solution protects every primary (it is then optimal) or yield
  violated inequalities, and the loop repeats (constraint generation; :func:`optimal_pattern`
  derives the inequality; the model is :class:`sdckit.tables.patterns.AttackerModel`).
  Anytime: the cheaper of the ``simple`` and ``modular`` heuristics' patterns is the
  masters' incumbent, so a search stopped by its time limit returns nothing dearer; each
  master's pattern joined with the incumbent and cleaned replaces it when cheaper.
* ``simple`` -- a fast deterministic heuristic: every relation holding a suppressed cell gets
  a second one (among the non-empty cells of the relation, the one completing the most other
  relations, then the cheapest), primaries first in cell order, until no relation holds a
  single suppressed cell; then audit and repair.
* ``hypercube`` -- GHMiter-style hypercubes (:mod:`sdckit.tables.hypercube`), then audit
  and repair.
* ``modular`` -- HiTaS: every non-hierarchical sub-table from the top down
  (:mod:`sdckit.tables.modular`): a hypercube cover completed by the attacker LPs, and the
  optimal method (bounded) on small sub-tables; then audit and repair on the whole table.

Every pattern that is not a proven optimum then goes through one removal pass
(:func:`~sdckit.tables.patterns.release_unneeded`): each secondary cell, the dearest first,
is published again when every primary stays protected without it (``details["released"]``
counts them). Hypercubes and the relation rule over-protect: on a table whose primaries
protect one another no secondary is left.

The attacker model, the patterns and their completion (:func:`repair`: additions only,
the cheapest by the optimal loop or the unprotected primaries one at a time) live in
:mod:`sdckit.tables.patterns`, with their limits; this module picks the method and audits.
Empty cells (no contributor, value 0) are known zeros: never chosen, status ``empty``. Every
step is deterministic (HiGHS is, ties are broken by cell order), so the same input gives the
same pattern.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sdckit.errors import ConfigError, ParameterError, VerificationError
from sdckit.tables.audit import Audit, audit
from sdckit.tables.patterns import (
    Pattern,
    cell_costs,
    check_primary,
    optimal_pattern,
    release_unneeded,
    repair,
    resolve_nonnegative,
    simple_pattern,
)
from sdckit.tables.registry import suppression_methods
from sdckit.tables.rules import Primary
from sdckit.tables.table import Table

__all__ = [
    "CUT_ROUNDS",
    "DEFAULT_TIME_LIMIT",
    "METHODS",
    "MODULAR_SHARE",
    "QUICK_SHARE",
    "Pattern",
    "Suppression",
    "optimal_pattern",
    "repair",
    "simple_pattern",
    "suppress",
]

#: The suppression methods :func:`suppress` accepts: the table methods of kind
#: ``suppression`` (:data:`sdckit.tables.registry.TABLE_METHODS`).
METHODS = suppression_methods()
#: The optimal method's time limit (seconds) when none is given. It bounds the search
#: (cuts, master MILPs, completion, clean-up), and the simple method's pattern -- the
#: incumbent, computed whole so that nothing dearer is ever returned -- counts against it;
#: only that incumbent, the modular start's covers and completions once begun, and the
#: final audit may run past it.
DEFAULT_TIME_LIMIT = 15.0
#: Share of the optimal method's time limit (from the modular pattern's start) by which
#: the modular heuristic's exact search on its sub-tables stops when it builds the
#: incumbent; its covers and their completions always run. Measured on the 3-D 8x8x8 table
#: of ``benchmarks/bench_tables.py`` (one sub-table): the modular pattern cost the same
#: (1,091, against 1,377 for ``simple``) with 0, 1, 2.5 and 5 s of exact search, the
#: completed cover giving it; on the hier x 10 x 10 table the same with none (7,829 against
#: 10,182; the whole method takes ~1.6 s). The rest of the limit goes to the master MILPs.
MODULAR_SHARE = 0.2
#: Share of the optimal method's time limit for a first search from the simple pattern
#: (once that is built) before the modular one is built: a table it solves (the 2-D
#: 50 x 50 benchmark table, in 0.9 s) is not slowed by the modular pattern (1.2 s more
#: there).
QUICK_SHARE = 0.1
#: Rounds of cuts at the master's LP relaxation before the first MILP (the optimal method).
#: None by default: measured within a 15 s limit, the integer masters alone proved the better
#: bound (3-D 8x8x8: lower bound 693 with none, 684 with 10 rounds, 690 with 30, 630 with
#: 100; hier x 10 x 10: 5,343 with none, 4,517 with 10, 4,197 with 30) -- the LP rounds'
#: cuts made each master slower to solve than their bound gained.
CUT_ROUNDS = 0


@dataclass
class Suppression:
    """A protected table: per-cell ``status`` (``safe | primary | secondary | empty``), the
    ``suppressed`` and ``secondary`` masks, the pattern's :class:`~sdckit.tables.audit.Audit`
    and ``details`` (method, optimal, iterations, cuts, secondary count and cost, elapsed
    seconds)."""

    status: np.ndarray
    suppressed: np.ndarray
    secondary: np.ndarray
    audit: Audit
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary: the details and the audit's counts."""
        return {**self.details, "audit": self.audit.to_dict()}


def _repaired_and_cleaned(
    table: Table,
    primary: Primary,
    pattern: np.ndarray,
    c: np.ndarray,
    nonneg: bool,
    deadline: float | None = None,
) -> tuple[Pattern, np.ndarray, int]:
    """A heuristic's ``pattern`` made a release: repaired one unprotected primary at a time
    (:func:`~sdckit.tables.patterns.repair`), then the secondaries that protect nothing once
    the others are in place published again
    (:func:`~sdckit.tables.patterns.release_unneeded`, until ``deadline``: a cleaning
    stopped there leaves a protecting pattern): (the repair, the cleaned pattern, cells
    published)."""
    fixed = repair(table, primary, pattern, c, method="sequential", nonnegative=nonneg)
    cleaned, released = release_unneeded(
        table, primary, fixed.suppressed, c, nonnegative=nonneg, deadline=deadline
    )
    return fixed, cleaned, released


def suppress(
    table: Table,
    primary: Primary,
    method: str = "optimal",
    *,
    cost: np.ndarray | None = None,
    time_limit: float | None = None,
    nonnegative: bool | None = None,
    singletons: bool = False,
) -> Suppression:
    """Protect the ``primary`` cells of ``table`` by secondary cell suppression with
    ``method`` (``optimal``, ``simple``, ``hypercube``, ``modular``; see the module
    docstring). ``cost`` per cell defaults to ``table.cost``; ``time_limit`` (seconds) bounds
    the optimal method's search (default :data:`DEFAULT_TIME_LIMIT`): it starts from the
    cheaper of two heuristic patterns, each repaired and cleaned -- the simple method's,
    always, and, when a first search from it (:data:`QUICK_SHARE` of the limit) proves no
    optimum and time is left (and ``table`` is one table, not a linked set), the modular
    method's (its exact search on small sub-tables stopped at :data:`MODULAR_SHARE` of the
    limit, its cleaning at the limit) -- the incumbent, so nothing dearer than either is
    ever returned (``details["start"]``: ``simple`` or ``modular``; the second search
    starts from the cheaper of the first's pattern and the modular one, and the better of
    the two proven bounds holds); it runs :data:`CUT_ROUNDS` rounds of cuts at the LP
    relaxation (none by default) and then the master MILPs warm-started from the
    incumbent, checking the clock in every loop; stopped by the limit, the last master's
    pattern is completed one primary at a time and cleaned if time is left, and the
    cheaper of it and the incumbent is released (``details["start_kept"]`` when that is
    the incumbent; ``details["simple_was_cheaper"]`` when that incumbent is the simple
    method's), ``details["optimal"]`` False. The limit bounds the search after the
    simple pattern: that whole pattern (built, repaired and cleaned, so the answer is never
    dearer than ``simple``'s), the modular method's covers and their completions once
    begun, and the final audit run to their end, so a table whose simple pattern alone
    takes longer than the limit ends that much later (``details["elapsed_seconds"]``
    says). ``details`` state
    ``time_limit``, ``lower_bound`` (proven: no protecting pattern has a cheaper secondary
    cost) and ``gap`` (``(cost - lower_bound) / cost``); for
    ``modular`` it bounds the exact search on each small sub-table (default none: bounded by
    work, :data:`sdckit.tables.modular.EXACT_NODES`, so the pattern does not depend on the
    machine's speed); ``nonnegative`` (default:
    whether every cell is >= 0) is the intruder's a-priori knowledge. ``singletons``: also
    protect every primary cell from the respondent of a suppressed single-contributor cell,
    who knows that cell's value (:mod:`sdckit.tables.singletons`).

    The heuristics' patterns are repaired one unprotected primary at a time
    (:func:`repair` with ``method="sequential"``); then every pattern that is not a proven
    optimum publishes again the secondaries no primary needs
    (:func:`~sdckit.tables.patterns.release_unneeded`). Every pattern is audited
    (:func:`sdckit.tables.audit.audit`) before it is returned. Raises
    :class:`~sdckit.errors.ConfigError` for an unknown method and
    :class:`~sdckit.errors.ParameterError` for malformed costs or protection levels.
    """
    if method not in METHODS:
        raise ConfigError(f"unknown suppression method {method!r}; use one of {', '.join(METHODS)}")
    if time_limit is not None and not time_limit > 0:
        raise ParameterError(f"time_limit must be positive seconds, got {time_limit!r}")
    check_primary(table, primary)
    c = cell_costs(table, cost)
    nonneg = resolve_nonnegative(table, nonnegative)
    t0 = time.perf_counter()
    fallback = False
    released = 0
    start_name = ""
    if method == "optimal":
        limit = DEFAULT_TIME_LIMIT if time_limit is None else float(time_limit)
        deadline = t0 + limit
        # the incumbent: the simple heuristic's pattern, repaired and cleaned -- the optimal
        # method never returns anything dearer
        simple, start, start_released = _repaired_and_cleaned(
            table, primary, simple_pattern(table, primary, c), c, nonneg
        )
        start_name, start_lps = "simple", simple.lps

        def search(incumbent: np.ndarray, until: float) -> Pattern:
            return optimal_pattern(
                table,
                primary,
                c,
                time_limit=max(until - time.perf_counter(), 0.0),
                nonnegative=nonneg,
                start=incumbent,
                cut_rounds=CUT_ROUNDS,
            )

        # a short search first: a table it solves needs no other start
        found = search(start, min(deadline, time.perf_counter() + QUICK_SHARE * limit))
        if not found.optimal and isinstance(table, Table) and time.perf_counter() < deadline:
            # a better incumbent: the modular heuristic, its exact search within a share of
            # the limit (linked tables have no sub-tables of one grid: no modular pattern)
            from sdckit.tables.modular import hitas_solver, modular_pattern

            exact_until = min(deadline, time.perf_counter() + MODULAR_SHARE * limit)
            solver = hitas_solver(nonneg, None, deadline=exact_until)
            fixed, modular, modular_released = _repaired_and_cleaned(
                table, primary, modular_pattern(table, primary, c, solver), c, nonneg, deadline
            )
            start_lps += fixed.lps
            incumbent = found.suppressed  # the short search's best: the start or cheaper
            if c[modular].sum() < c[start].sum():
                start, start_released, start_name = modular, modular_released, "modular"
                if c[modular].sum() < c[incumbent].sum():
                    incumbent = modular
            quick = found
            found = search(incumbent, deadline)
            # both searches' bounds are proven: the better one holds
            found.lower_bound = max(found.lower_bound, quick.lower_bound)
            found.iterations += quick.iterations
            found.cuts += quick.cuts
            found.lps += quick.lps
        fallback = not found.optimal and bool(np.array_equal(found.suppressed, start))
        released = start_released if fallback else 0
        if not found.optimal and not fallback and time.perf_counter() < deadline:
            # a completed pattern: publish again what it does not need (within the limit)
            cleaned, released = release_unneeded(
                table, primary, found.suppressed, c, nonnegative=nonneg, deadline=deadline
            )
            if c[cleaned].sum() <= c[start].sum():
                found.suppressed = cleaned
            else:
                found.suppressed, fallback, released = start, True, start_released
        result = Pattern(
            found.suppressed,
            optimal=found.optimal,
            iterations=found.iterations,
            cuts=found.cuts,
            lps=found.lps + start_lps,
            completed=0 if fallback else found.completed,
            time_limit_hit=found.time_limit_hit,
            lower_bound=found.lower_bound,
            cut_rounds=found.cut_rounds,
        )
        repaired = 0
    else:
        if method == "simple":
            pattern = simple_pattern(table, primary, c)
        elif method == "hypercube":
            from sdckit.tables.hypercube import hypercube_pattern

            pattern = hypercube_pattern(table, primary, c)
        else:
            from sdckit.tables.modular import SUBTABLE_SECONDS, hitas_solver, modular_pattern

            per_sub = SUBTABLE_SECONDS if time_limit is None else time_limit
            pattern = modular_pattern(table, primary, c, hitas_solver(nonneg, per_sub))
        result, suppressed, released = _repaired_and_cleaned(table, primary, pattern, c, nonneg)
        repaired = result.completed
        result.suppressed = suppressed
    pattern = result.suppressed
    single: dict[str, Any] | None = None
    if singletons:
        from sdckit.tables.singletons import protect_singletons
        from sdckit.tables.singletons import singletons as singleton_cells

        pattern, added = protect_singletons(table, primary, pattern, c, nonnegative=nonneg)
        single = {"cells": int(singleton_cells(table, primary).sum()), "added": added}
    check = audit(table, pattern, primary, lower_bounds=0.0 if nonneg else None)
    if not check.safe:
        raise VerificationError(
            f"{method}: the suppression pattern leaves {len(check.exposed)} primary cell(s) "
            "exposed after repair (a bug in sdckit)"
        )
    empty = (table.freq == 0) & (table.value == 0)
    prim = np.asarray(primary.unsafe, dtype=bool)
    secondary = pattern & ~prim
    status = np.where(
        prim, "primary", np.where(secondary, "secondary", np.where(empty, "empty", "safe"))
    ).astype(object)
    details: dict[str, Any] = {
        "method": method,
        "optimal": bool(result.optimal) if method == "optimal" else False,
        "iterations": result.iterations,
        "cuts": result.cuts,
        "attacker_lps": result.lps,
        "secondary_cost": float(c[secondary].sum()),
        "repaired": repaired,
        "released": released,
        "completed_after_time_limit": result.completed if method == "optimal" else 0,
        "simple_was_cheaper": fallback and start_name == "simple",
        "time_limit_hit": bool(result.time_limit_hit),
        "elapsed_seconds": time.perf_counter() - t0,
    }
    if method == "optimal":
        details["start"] = start_name
        details["start_kept"] = fallback
        cost_found = details["secondary_cost"]
        bound = min(result.lower_bound, cost_found)
        details["time_limit"] = limit
        details["lower_bound"] = bound
        details["gap"] = (cost_found - bound) / cost_found if cost_found > 0 else 0.0
        details["cut_rounds"] = result.cut_rounds
    if single is not None:
        details["singletons"] = single
    return Suppression(status, pattern, secondary, check, details)
