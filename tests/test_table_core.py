"""Tests: tables from microdata and cells, dimensions, additivity, sensitivity rules --
hand-computed values."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.core.hierarchy_builders import order_hierarchy
from sdckit.errors import DataError, HierarchyError, ParameterError
from sdckit.tables import (
    Dimension,
    DominanceRule,
    FrequencyRule,
    PPercentRule,
    PQRule,
    Table,
    ZeroRule,
    primary_cells,
)


def _one_cell_table(contributions: list[float]) -> Table:
    df = pd.DataFrame({"d": ["a"] * len(contributions), "v": contributions})
    return Table.from_microdata(df, ["d"], "v", top_n=3)


def test_dimension_from_hierarchy_merges_single_child_nodes() -> None:
    h = order_hierarchy(["N", "S", "E"], groups=[{"NS": ["N", "S"], "EE": ["E"]}], name="r")
    d = Dimension.from_hierarchy("region", h)
    assert d.codes[0] == "*"
    # EE has the single child E: one node, the coarser code kept
    assert sorted(d.codes.tolist()) == ["*", "EE", "N", "NS", "S"]
    assert d.codes[d.leaf_of["E"]] == "EE"
    assert d.codes[d.parent[d.index_of["N"]]] == "NS"
    assert d.depth[d.index_of["N"]] == 2 and d.depth[d.index_of["EE"]] == 1
    with pytest.raises(DataError, match="'W'.*not a category"):
        d.leaves_for(["N", "W"])


def test_flat_dimension_refuses_a_category_named_like_the_total() -> None:
    with pytest.raises(DataError, match="'Total'"):
        Dimension.flat("r", ["a", "Total"])


def test_table_from_microdata_sums_every_subtotal() -> None:
    df = pd.DataFrame(
        {"r": ["A", "A", "B", "B", "B"], "g": ["m", "f", "m", "m", "f"], "v": [1, 2, 3, 4, 5]}
    )
    t = Table.from_microdata(df, ["r", "g"], "v")
    f = t.to_frame().set_index(["r", "g"])
    assert f.loc[("Total", "Total"), "value"] == 15
    assert f.loc[("B", "m"), "value"] == 7 and f.loc[("B", "m"), "freq"] == 2
    assert f.loc[("Total", "m"), "value"] == 8 and f.loc[("A", "Total"), "freq"] == 2
    assert t.n_cells == 9
    a = t.constraints()
    # relations: Total row and column for each of the 3 codes of the other dimension
    assert a.shape == (3 + 3, 9)
    assert np.abs(a @ t.value).max() == 0
    # largest contributions per cell, descending
    assert t.top[t.cell_index({"r": "B", "g": "Total"})].tolist() == [5, 4]
    assert t.top[t.cell_index({"r": "Total", "g": "Total"})].tolist() == [5, 4]


def test_frequency_table_counts_records() -> None:
    df = pd.DataFrame({"r": ["A", "A", "B"]})
    t = Table.from_microdata(df, ["r"])
    assert t.value.tolist() == [3, 2, 1] and t.freq.tolist() == [3, 2, 1]


def test_holdings_are_combined_before_the_rules() -> None:
    df = pd.DataFrame({"d": ["a", "a", "a", "b"], "v": [40, 30, 30, 50], "h": ["x", "x", "y", "x"]})
    t = Table.from_microdata(df, ["d"], "v", holding="h")
    a = t.cell_index({"d": "a"})
    total = t.cell_index({"d": "Total"})
    assert t.contributors[a] == 2 and t.freq[a] == 3
    assert t.top[a].tolist() == [70, 30]
    # holding x contributes 40 + 30 + 50 = 120 to the total
    assert t.top[total].tolist() == [120, 30] and t.contributors[total] == 2


def test_hierarchical_table_is_additive_at_every_level() -> None:
    rng = np.random.default_rng(3)
    df = pd.DataFrame(
        {
            "r": rng.choice(["N", "S", "E", "W"], 200),
            "s": rng.choice(["a", "b", "c"], 200),
            "v": rng.integers(1, 100, 200),
        }
    )
    h = order_hierarchy(["N", "S", "E", "W"], groups=[{"NS": ["N", "S"], "EW": ["E", "W"]}])
    t = Table.from_microdata(df, {"r": h, "s": None}, "v")
    assert t.shape == (7, 4)
    assert np.abs(t.constraints() @ t.value).max() < 1e-9
    by = df.groupby("r")["v"].sum()
    assert t.value[t.cell_index({"r": "NS", "s": "Total"})] == by["N"] + by["S"]


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from("abc"), st.sampled_from("xy"), st.integers(0, 50)),
        min_size=1,
        max_size=40,
    )
)
def test_tables_are_additive_and_match_a_groupby(rows) -> None:
    df = pd.DataFrame(rows, columns=["p", "q", "v"])
    t = Table.from_microdata(df, ["p", "q"], "v")
    assert np.abs(t.constraints() @ t.value).max() < 1e-9
    for (p, q), v in df.groupby(["p", "q"])["v"].sum().items():
        assert t.value[t.cell_index({"p": p, "q": q})] == v


def test_table_from_cells_checks_additivity_and_fills_empty_cells() -> None:
    cells = pd.DataFrame({"r": ["Total", "A", "B"], "value": [10.0, 4.0, 6.0], "freq": [5, 2, 3]})
    t = Table.from_cells(cells, ["r"])
    assert t.value.tolist() == [10, 4, 6]
    bad = cells.assign(value=[11.0, 4.0, 6.0])
    with pytest.raises(DataError, match="not additive"):
        Table.from_cells(bad, ["r"])
    with pytest.raises(DataError, match="given twice"):
        Table.from_cells(pd.concat([cells, cells.tail(1)]), ["r"])


def test_a_cells_file_without_total_rows_is_told_to_add_them() -> None:
    """Cells given without their totals: the error says total rows are missing (how many,
    the first one's codes and its parts' sum) and how to have them, not "Total is 0"."""
    cells = pd.DataFrame(
        {"region": ["N", "N", "S"], "sector": ["a", "b", "a"], "value": [50.0, 55.0, 0.0]}
    )
    with pytest.raises(DataError) as err:
        Table.from_cells(cells, ["region", "sector"])
    msg = str(err.value)
    assert msg.startswith(
        "the cells file lacks total rows: 5 of its 5 total and sub-total cells have no row, "
        "e.g. {'region': 'Total', 'sector': 'a'}, whose parts add up to 50."
    )
    assert "{'region': 'Total', 'sector': 'Total'}" in msg and "`input:`" in msg
    # all totals but one given: one missing row (N x Total = 105), named
    full = Table.from_microdata(
        pd.DataFrame({"region": ["N", "N", "S"], "sector": ["a", "b", "a"], "v": [50, 55, 0]}),
        ["region", "sector"],
        "v",
    ).to_frame()
    given = full[~((full["region"] == "N") & (full["sector"] == "Total"))]
    with pytest.raises(DataError, match=r"1 of its 5 .* e\.g\. \{'region': 'N', 'sector': "
                       r"'Total'\}, whose parts add up to 105\."):  # fmt: skip
        Table.from_cells(given, ["region", "sector"])
    # a total given with a wrong value is still "not additive"
    wrong = full.assign(value=np.where(full.index == 0, 1.0, full["value"]))
    with pytest.raises(DataError, match="not additive"):
        Table.from_cells(wrong, ["region", "sector"])


# -- rules: X = 100, x1 = 80, x2 = 15 (three contributors: 80, 15, 5) ----------------------------
def test_p_percent_rule_hand_computed() -> None:
    t = _one_cell_table([80, 15, 5])
    cell = t.cell_index({"d": "a"})
    # X - x1 - x2 = 5 < 0.20 * 80 = 16: unsafe, UPL = 16 - 5 = 11
    assert PPercentRule(20).unsafe(t)[cell]
    assert PPercentRule(20).protection(t)[cell] == pytest.approx(11)
    # p = 5: 5 < 4 is false -> safe
    assert not PPercentRule(5).unsafe(t)[cell]


def test_dominance_rule_hand_computed() -> None:
    t = _one_cell_table([80, 15, 5])
    cell = t.cell_index({"d": "a"})
    assert not DominanceRule(1, 85).unsafe(t)[cell]  # 80 <= 85
    assert DominanceRule(2, 85).unsafe(t)[cell]  # 95 > 85
    assert DominanceRule(2, 85).protection(t)[cell] == pytest.approx(100 / 85 * 95 - 100)


def test_pq_rule_hand_computed() -> None:
    t = _one_cell_table([80, 15, 5])
    cell = t.cell_index({"d": "a"})
    # 5 < 20/50 * 80 = 32: unsafe, UPL = 27
    assert PQRule(20, 50).protection(t)[cell] == pytest.approx(27)
    with pytest.raises(ParameterError, match="p < q"):
        PQRule(50, 20)


def test_frequency_and_zero_rules() -> None:
    df = pd.DataFrame({"d": ["a", "a", "b", "c"], "v": [10, 20, 0, 7]})
    t = Table.from_microdata(df, ["d"], "v")
    a, b, c = (t.cell_index({"d": x}) for x in "abc")
    rule = FrequencyRule(3, safety_range=30)
    assert rule.unsafe(t)[[a, b, c]].tolist() == [True, True, True]
    assert rule.protection(t)[a] == pytest.approx(9)
    assert ZeroRule().unsafe(t)[[a, b, c]].tolist() == [False, True, False]


def test_primary_cells_take_the_largest_level_and_a_minimum() -> None:
    t = _one_cell_table([80, 15, 5])
    cell = t.cell_index({"d": "a"})
    prim = primary_cells(t, [PPercentRule(20), PQRule(20, 50), FrequencyRule(4)])
    assert prim.unsafe[cell] and prim.upper[cell] == pytest.approx(27)
    assert prim.summary()["by_rule"] == {"p_percent": 2, "pq": 2, "frequency": 2}
    only_freq = primary_cells(t, [FrequencyRule(4)], min_protection=2.5)
    assert only_freq.upper[cell] == 2.5
    # LPL never below zero for a non-negative table
    small = _one_cell_table([1])
    prim2 = primary_cells(small, [FrequencyRule(3, safety_range=500)])
    assert prim2.lower[small.cell_index({"d": "a"})] == 1


def test_contribution_rules_refuse_negative_values() -> None:
    t = _one_cell_table([80, -15, 5])
    with pytest.raises(DataError, match="non-negative"):
        primary_cells(t, [PPercentRule(20)])


def test_bad_hierarchy_root_is_refused() -> None:
    h = order_hierarchy(["a", "b", "c"], group_sizes=[2])  # levels: leaves, groups, *
    d = Dimension.from_hierarchy("x", h)
    assert d.codes[0] == "*"
    with pytest.raises(HierarchyError):
        Dimension("x", np.array(["*", "a", "a"], dtype=object), np.array([-1, 0, 0]), {})
