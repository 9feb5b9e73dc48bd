"""Tests: secondary suppression through :func:`sdckit.tables.protect.protect` -- every method's
pattern passes an independent audit, the optimal pattern costs no more than any heuristic's
and equals exhaustive search on tiny tables; determinism."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdckit.core.hierarchy_builders import order_hierarchy
from sdckit.tables import FrequencyRule, PPercentRule, Table, primary_cells
from sdckit.tables.audit import audit
from sdckit.tables.protect import protect

METHODS = ["optimal", "simple", "hypercube", "modular"]


def _table(seed: int, rows: int = 3, cols: int = 3, n: int = 40) -> Table:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "r": rng.integers(0, rows, n).astype(str),
            "c": rng.integers(0, cols, n).astype(str),
            "v": rng.integers(1, 60, n),
        }
    )
    return Table.from_microdata(df, ["r", "c"], "v")


def _cost(table: Table, pattern: np.ndarray, prim: np.ndarray) -> float:
    return float(table.cost[pattern & ~prim].sum())


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(0, 10_000))
def test_every_method_releases_an_audited_pattern_and_optimal_is_cheapest(seed: int) -> None:
    table = _table(seed)
    rules = [FrequencyRule(3)]
    prim = primary_cells(table, rules)
    costs = {}
    for method in METHODS:
        prot = protect(table, rules, method)
        suppressed = np.isnan(prot.published)
        assert audit(table, suppressed, prim).safe, method
        assert (suppressed[prim.unsafe]).all()
        costs[method] = _cost(table, suppressed, prim.unsafe)
    for method in METHODS[1:]:
        assert costs["optimal"] <= costs[method] + 1e-6, (method, costs)


def _exhaustive_cost(table: Table, prim) -> float:
    """The cheapest protecting pattern by trying every set of secondary cells."""
    candidates = np.flatnonzero(~prim.unsafe & ~((table.freq == 0) & (table.value == 0)))
    best = np.inf
    for size in range(len(candidates) + 1):
        for combo in itertools.combinations(candidates, size):
            pattern = prim.unsafe.copy()
            pattern[list(combo)] = True
            cost = table.cost[list(combo)].sum()
            if cost < best and audit(table, pattern, prim).safe:
                best = cost
    return float(best)


@pytest.mark.parametrize("seed", [1, 7, 21])
def test_optimal_equals_exhaustive_search_on_tiny_tables(seed: int) -> None:
    table = _table(seed, rows=2, cols=2, n=12)
    rules = [FrequencyRule(4)]
    prim = primary_cells(table, rules)
    if prim.count == 0:
        pytest.skip("no primary cell in this draw")
    prot = protect(table, rules, "optimal")
    got = _cost(table, np.isnan(prot.published), prim.unsafe)
    assert got == pytest.approx(_exhaustive_cost(table, prim))
    assert prot.details["optimal"] is True


def test_the_same_table_gives_the_same_pattern() -> None:
    table = _table(5, rows=4, cols=4, n=60)
    rules = [FrequencyRule(3), PPercentRule(15)]
    for method in METHODS:
        a = protect(table, rules, method).status
        b = protect(table, rules, method).status
        assert (a == b).all(), method


def test_hierarchical_table_of_sdctable_microdata2(shared_data) -> None:
    df = pd.read_csv(shared_data / "sdcmicro" / "sdcTable_microdata2.csv")
    eco = order_hierarchy(
        ["Aa", "Ab", "Ba", "Bb"], groups=[{"A": ["Aa", "Ab"], "B": ["Ba", "Bb"]}], name="eco"
    )
    table = Table.from_microdata(
        df, {"region": None, "gender": None, "ecoOld": eco}, "numVal", top_n=2
    )
    assert table.shape == (3, 3, 7)
    rules = [FrequencyRule(3), PPercentRule(20)]
    prim = primary_cells(table, rules)
    assert prim.count > 0
    for method in METHODS:
        prot = protect(table, rules, method)
        assert audit(table, np.isnan(prot.published), prim).safe, method


def test_sdctable_microdata1_region_by_gender(shared_data) -> None:
    df = pd.read_csv(shared_data / "sdcmicro" / "sdcTable_microdata1.csv")
    table = Table.from_microdata(df, ["region", "gender"], "val")
    rules = [FrequencyRule(3), PPercentRule(20)]
    prot = protect(table, rules, "optimal")
    cells = prot.cells().set_index(["region", "gender"])
    # region A, female: 2 records (20) -- the one primary; the cheapest protection suppresses
    # A/male with C (the smallest region total that can hide 20 + UPL) in both genders
    assert cells.loc[("A", "female"), "status"] == "primary"
    assert prot.summary()["primary"] == 1
    suppressed = set(cells.index[cells["status"] != "safe"])
    assert suppressed == {("A", "female"), ("A", "male"), ("C", "female"), ("C", "male")}
