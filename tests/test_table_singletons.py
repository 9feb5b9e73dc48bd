"""Tests: singletons -- a suppressed single-contributor cell is known to its respondent; the
extended audit finds what that respondent learns, the repair protects against it; checked by
an independent LP with the singleton's value published."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from sdckit.errors import ConfigError
from sdckit.tables import FrequencyRule, Table, primary_cells
from sdckit.tables.protect import protect
from sdckit.tables.singletons import protect_singletons, singleton_exposures, singletons
from sdckit.tables.suppression import suppress


def one_row() -> Table:
    """a = 10 (one contributor), b = 5 + 7 (two), c = 6 x 5 (five); total 52."""
    micro = pd.DataFrame({"k": ["a", "b", "b", *["c"] * 5], "v": [10.0, 5.0, 7.0, *[6.0] * 5]})
    return Table.from_microdata(micro, ["k"], "v")


def cell(t: Table, code: str) -> int:
    return t.cell_index({"k": code})


def safe_for_respondent(t: Table, pattern: np.ndarray, prim, s: int) -> bool:
    """Independent LP: every primary other than ``s`` keeps its protection interval when
    ``x_s`` is published (x >= 0, the table's relations)."""
    a = t.constraints().toarray()
    known = pattern.copy()
    known[s] = False
    lb = np.where(known, 0.0, t.value)
    ub = np.where(known, np.inf, t.value)
    for p in np.flatnonzero(prim.unsafe):
        if p == s:
            continue
        for sense, need in ((1, prim.upper[p]), (-1, prim.lower[p])):
            c = np.zeros(t.n_cells)
            c[p] = -sense
            res = linprog(c, A_eq=a, b_eq=np.zeros(len(a)), bounds=np.column_stack([lb, ub]))
            reach = sense * -res.fun if res.status == 0 else np.inf
            if reach < sense * t.value[p] + need - 1e-6:
                return False
    return True


def test_the_singletons_respondent_learns_the_other_cell_of_a_pair() -> None:
    t = one_row()
    prim = primary_cells(t, [FrequencyRule(threshold=3, safety_range=20)])
    a, b, c = cell(t, "a"), cell(t, "b"), cell(t, "c")
    assert np.flatnonzero(prim.unsafe).tolist() == sorted([a, b])
    assert np.flatnonzero(singletons(t, prim)).tolist() == [a]
    plain = suppress(t, prim, "optimal")
    # the outsiders' optimum: a and b alone (a + b = 52 - 30 known; each in [0, 22])
    assert np.flatnonzero(plain.suppressed).tolist() == sorted([a, b])
    # a's respondent knows a = 10, so b = 22 - 10 = 12 exactly
    check = singleton_exposures(t, plain.suppressed, prim)
    assert check.pairs == [(a, b)] and not check.safe
    assert not safe_for_respondent(t, plain.suppressed, prim, a)
    extended = suppress(t, prim, "optimal", singletons=True)
    # the cheapest addition is c (cost 30 < the total's 52): b + c = 42, b in [0, 42]
    assert np.flatnonzero(extended.suppressed).tolist() == sorted([a, b, c])
    assert extended.details["singletons"] == {"cells": 1, "added": 1}
    assert safe_for_respondent(t, extended.suppressed, prim, a)


def test_two_singletons_in_one_relation_each_expose_the_other() -> None:
    micro = pd.DataFrame({"k": ["a", "b", *["c"] * 4], "v": [10.0, 12.0, *[5.0] * 4]})
    t = Table.from_microdata(micro, ["k"], "v")
    prim = primary_cells(t, [FrequencyRule(threshold=2, safety_range=10)])
    a, b = cell(t, "a"), cell(t, "b")
    pattern = np.zeros(t.n_cells, dtype=bool)
    pattern[[a, b]] = True
    assert sorted(singleton_exposures(t, pattern, prim).pairs) == [(a, b), (b, a)]
    fixed, added = protect_singletons(t, prim, pattern)
    assert added == 1 and fixed[cell(t, "c")]
    assert singleton_exposures(t, fixed, prim).safe


def test_the_option_runs_through_protect_and_is_refused_for_linked_tables() -> None:
    t = one_row()
    rules = [FrequencyRule(threshold=3, safety_range=20)]
    prot = protect(t, rules, "simple", options={"singletons": True})
    assert prot.details["singletons"]["cells"] == 1
    assert (prot.status == "secondary").sum() >= 1
    from sdckit.tables.linked import protect_linked

    with pytest.raises(ConfigError, match="singletons option"):
        protect_linked({"t1": t, "t2": one_row()}, rules, options={"singletons": True})


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    counts=st.lists(st.integers(0, 4), min_size=12, max_size=12),
    seed=st.integers(0, 10_000),
    method=st.sampled_from(["optimal", "simple"]),
)
def test_every_singleton_pattern_passes_the_independent_respondent_audit(
    counts: list[int], seed: int, method: str
) -> None:
    """3 x 4 tables with random contributor counts (0-4) and values: after suppression with
    singletons, no singleton's respondent learns another primary (independent LP)."""
    rng = np.random.default_rng(seed)
    recs = []
    for i, n in enumerate(counts):
        for _ in range(n):
            recs.append((f"r{i // 4}", f"c{i % 4}", float(rng.integers(1, 50))))
    if len(recs) < 3:
        return
    micro = pd.DataFrame(recs, columns=["r", "c", "v"])
    t = Table.from_microdata(micro, ["r", "c"], "v")
    prim = primary_cells(t, [FrequencyRule(threshold=3, safety_range=15)])
    if not prim.unsafe.any():
        return
    try:
        result = suppress(t, prim, method, singletons=True)
    except Exception as exc:  # an unprotectable table must say so clearly
        assert "cannot be protected" in str(exc) or "no suppression pattern" in str(exc)
        return
    for s in np.flatnonzero(singletons(t, prim) & result.suppressed):
        assert safe_for_respondent(t, result.suppressed, prim, s)
