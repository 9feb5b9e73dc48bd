"""Tests: linked tables -- several tables of the same microdata sharing dimensions are
protected consistently (a common cell is suppressed in all its tables or in none) and audited
on all the tables' relations at once; separately protected tables can expose a cell."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy.optimize import linprog
from typer.testing import CliRunner

from sdckit.cli import app
from sdckit.core.hierarchy_builders import order_hierarchy
from sdckit.errors import ConfigError, DataError, ParameterError
from sdckit.jobs.config import load_job
from sdckit.jobs.table import run_table_job
from sdckit.tables import FrequencyRule, PPercentRule, Table
from sdckit.tables.audit import audit
from sdckit.tables.cell_key import cell_keys
from sdckit.tables.linked import LinkedTables, linked_primary, protect_linked
from sdckit.tables.protect import protect

RULES = [FrequencyRule(3)]
SUPPRESSION = ("optimal", "simple", "hypercube", "modular")


def _micro() -> pd.DataFrame:
    """20 records: region r1 (f: 2, m: 5), r2 (f: 3), r3 (f: 10); ages as below.

    region x gender: (r1, f) has 2 < 3 records, the only primary cell of either table (every
    other non-empty cell has >= 3 records). (r2, m) and (r3, m) are empty, so the cheapest
    protection of region x gender alone is the rectangle (r1, f), (r1, Total), (r2, f),
    (r2, Total) (cost 2 + 7 + 3 + 3), cheaper than any rectangle through gender m. region x
    age has no primary: alone, it publishes (r1, Total) = 7, and then (r1, f) = 7 - (r1, m)
    = 7 - 5 = 2 exactly.
    """
    rows: list[tuple[str, str, str]] = []
    for region, gender, age, n in [
        ("r1", "f", "y", 1),
        ("r1", "f", "o", 1),
        ("r1", "m", "y", 2),
        ("r1", "m", "o", 3),
        ("r2", "f", "y", 3),
        ("r3", "f", "y", 5),
        ("r3", "f", "o", 5),
    ]:
        rows += [(region, gender, age)] * n
    return pd.DataFrame(rows, columns=["region", "gender", "age"])


def _linked() -> tuple[Table, Table, LinkedTables]:
    df = _micro()
    t1 = Table.from_microdata(df, ["region", "gender"])
    t2 = Table.from_microdata(df, ["region", "age"])
    return t1, t2, LinkedTables([t1, t2], ["by_gender", "by_age"])


def _key(table: Table, i: int) -> frozenset[tuple[str, str]]:
    """A cell's identity written apart from sdckit: its non-total codes."""
    return frozenset(
        (d.name, str(d.codes[table.nodes[i, j]]))
        for j, d in enumerate(table.dimensions)
        if table.nodes[i, j] != 0
    )


def independent_exposed(tables: list[Table], suppressed: list[np.ndarray]) -> list:
    """The primary cells (frequency rule, threshold 3, protection 1) that an intruder holding
    every table pins within less than 1, by a plain LP over the distinct cells, written
    apart from sdckit's LinkedTables and audit. Also checks the statuses are consistent."""
    index: dict[frozenset, int] = {}
    value: list[float] = []
    hidden: dict[int, bool] = {}
    for t, s in zip(tables, suppressed, strict=True):
        for i in range(t.n_cells):
            k = index.setdefault(_key(t, i), len(index))
            if k == len(value):
                value.append(float(t.value[i]))
            assert hidden.setdefault(k, bool(s[i])) == bool(s[i]), "inconsistent common cell"
    rows = []
    for t in tables:
        a = t.constraints().toarray()
        for r in a:
            row = np.zeros(len(index))
            for i in np.flatnonzero(r):
                row[index[_key(t, i)]] += r[i]
            rows.append(row)
    a_eq = np.array(rows)
    v = np.array(value)
    h = np.array([hidden[k] for k in range(len(index))])
    bounds = np.column_stack([np.where(h, 0.0, v), np.where(h, np.inf, v)])
    exposed = []
    for t in tables:
        for i in np.flatnonzero((t.freq > 0) & (t.freq < 3)):
            k = index[_key(t, i)]
            obj = np.zeros(len(v))
            obj[k] = 1.0
            lo = linprog(obj, A_eq=a_eq, b_eq=np.zeros(len(a_eq)), bounds=bounds)
            hi = linprog(-obj, A_eq=a_eq, b_eq=np.zeros(len(a_eq)), bounds=bounds)
            upper = np.inf if hi.status == 3 else -hi.fun
            if not h[k] or upper < v[k] + 1 - 1e-6 or lo.fun > v[k] - 1 + 1e-6:
                exposed.append(dict(_key(t, i)))
    return exposed


# -- the linked system -----------------------------------------------------------------------------
def test_common_cells_are_identified_by_their_non_total_codes() -> None:
    t1, t2, linked = _linked()
    # 12 + 12 cells, 4 in common: the grand total and the three region totals
    assert linked.n_cells == 20
    common = linked.codes()[linked.common]
    assert sorted(common["region"]) == ["Total", "r1", "r2", "r3"]
    assert (common["gender"] == "Total").all() and (common["age"] == "Total").all()
    i = linked.cell_index({"region": "r1"})
    assert linked.value[i] == 7
    assert linked.cells_of[0][t1.cell_index({"region": "r1", "gender": "Total"})] == i
    assert linked.cells_of[1][t2.cell_index({"region": "r1", "age": "Total"})] == i
    # 7 relations per table; "Total = r1 + r2 + r3" at gender Total and at age Total is one
    assert linked.constraints().shape == (13, 20)
    assert np.abs(linked.constraints() @ linked.value).max() == 0


def test_separate_protection_is_inconsistent_and_the_combined_audit_exposes_a_cell() -> None:
    t1, t2, linked = _linked()
    p1, p2 = protect(t1, RULES, "optimal"), protect(t2, RULES, "optimal")
    s1 = p1.cells().set_index(["region", "gender"])["status"]
    s2 = p2.cells().set_index(["region", "age"])["status"]
    assert s1[("r1", "Total")] == "secondary" and s2[("r1", "Total")] == "safe"
    assert set(s1.index[s1.isin(["primary", "secondary"])]) == {
        ("r1", "f"),
        ("r1", "Total"),
        ("r2", "f"),
        ("r2", "Total"),
    }
    assert s2.isin(["safe", "empty"]).all()
    # the intruder combines the tables: (r1, f) = 7 - 5 exactly
    pattern = np.zeros(linked.n_cells, dtype=bool)
    pattern[linked.cells_of[0][np.isnan(p1.published)]] = True
    pattern[linked.cells_of[1][np.isnan(p2.published)]] = True
    check = audit(linked, pattern, linked_primary(linked, RULES))
    r1f = linked.cell_index({"region": "r1", "gender": "f"})
    assert not check.safe and check.exposed.tolist() == [r1f]
    assert (check.lower[r1f], check.upper[r1f]) == (2.0, 2.0)


def test_protect_linked_optimal_is_consistent_safe_and_as_computed_by_hand() -> None:
    t1, t2, linked = _linked()
    prot = protect_linked(linked, RULES, "optimal")
    assert prot.safe and prot.combined.details["optimal"]
    cells = prot.cells()
    assert list(cells.columns[:4]) == ["table", "region", "gender", "age"]
    hidden = cells[cells["status"] != "safe"]
    hidden = hidden[hidden["status"] != "empty"]
    got = {(r.table, r.region, r.gender, r.age, r.status) for r in hidden.itertuples()}
    # (r1, Total) hidden in by_gender must be hidden in by_age too, which needs a partner in
    # row r1 of by_age -- (r1, y) = 3 -- and in the column of region totals (r2, Total) = 3,
    # itself completed by (r2, f) = 3 and (r2, y) = 3: 7 + 3 + 3 + 3 + 3 = 19, cheaper than
    # the rectangles through gender m ((r1, m) 5 + (Total, f) 15 + (Total, m) 5 = 25)
    assert got == {
        ("by_gender", "r1", "f", "Total", "primary"),
        ("by_gender", "r1", "Total", "Total", "secondary"),
        ("by_gender", "r2", "f", "Total", "secondary"),
        ("by_gender", "r2", "Total", "Total", "secondary"),
        ("by_age", "r1", "Total", "Total", "secondary"),
        ("by_age", "r1", "Total", "y", "secondary"),
        ("by_age", "r2", "Total", "Total", "secondary"),
        ("by_age", "r2", "Total", "y", "secondary"),
    }
    summary = prot.summary()
    assert summary["secondary_cost"] == 19.0 and summary["secondary"] == 5
    assert summary["cells"] == 20 and summary["common_cells"] == 4 and summary["safe"]
    assert summary["tables"]["by_gender"]["secondary"] == 3
    assert summary["tables"]["by_age"]["secondary"] == 4
    # (r1, f) = 2 moves with (r2, f) = 3 and (r2, y) = 3 in the other direction: [0, 5]
    r1f = cells[(cells["region"] == "r1") & (cells["gender"] == "f")].iloc[0]
    assert (r1f["audit_lower"], r1f["audit_upper"]) == pytest.approx((0.0, 5.0))
    assert len(cells) == t1.n_cells + t2.n_cells
    masks = [np.isnan(p.published) for p in prot.tables]
    assert independent_exposed([t1, t2], masks) == []


@pytest.mark.parametrize("method", SUPPRESSION)
def test_every_suppression_method_is_consistent_and_safe_on_the_combined_system(
    method: str,
) -> None:
    t1, t2, linked = _linked()
    prot = protect_linked(linked, RULES, method)
    assert prot.safe and prot.method == method
    masks = [np.isnan(p.published) for p in prot.tables]
    # the same cell hidden in both tables or in neither (checked inside), nothing exposed
    assert independent_exposed([t1, t2], masks) == []
    for table_prot, cells in zip(prot.tables, linked.cells_of, strict=True):
        assert (table_prot.status == prot.combined.status[cells]).all()


def test_optimal_costs_no_more_than_the_heuristics() -> None:
    _, _, linked = _linked()
    cost = {m: protect_linked(linked, RULES, m).summary()["secondary_cost"] for m in SUPPRESSION}
    assert cost["optimal"] == 19.0
    assert cost["optimal"] <= min(cost.values()) + 1e-9


def test_rounding_and_cta_of_the_combined_system_keep_every_table_additive() -> None:
    t1, t2, linked = _linked()
    for method, opts in (("rounding", {"base": 5}), ("cta", {})):
        prot = protect_linked(linked, RULES, method, options=opts)
        for t, p in zip((t1, t2), prot.tables, strict=True):
            assert np.abs(t.constraints() @ p.published).max() < 1e-6, method
        r1f = linked.cell_index({"region": "r1", "gender": "f"})
        if method == "rounding":
            assert (prot.combined.published % 5 == 0).all()
        else:  # the primary moved out of [2 - 1, 2 + 1]
            assert abs(prot.combined.published[r1f] - 2.0) >= 1.0 - 1e-7


def test_cell_key_noise_is_the_same_in_every_table(tmp_path: Path) -> None:
    pt = tmp_path / "pt.txt"
    pt.write_text(
        "i;j;p;v;p_int_ub\n1;0;0.5;-1;0.5\n1;2;0.5;1;1\n2;1;0.5;-1;0.5\n2;3;0.5;1;1\n"
        "3;2;0.5;-1;0.5\n3;4;0.5;1;1\n"
    )
    df = _micro()
    df["rkey"] = (np.arange(len(df)) * 0.137) % 1.0
    t1, t2, linked = _linked()
    keys = [cell_keys(df, t, key="rkey") for t in (t1, t2)]
    prot = protect_linked(linked, [], "cell_key", options={"ptable": pt, "cell_keys": keys})
    # every row of the p-table moves a count by 1 (counts above 3 use the rows of i = 3)
    noise = prot.combined.published - linked.value
    filled = linked.value > 0
    assert set(np.abs(noise[filled]).tolist()) == {1.0}
    for p, cells in zip(prot.tables, linked.cells_of, strict=True):
        assert (p.published == prot.combined.published[cells]).all()
    keys[1] = (keys[1] + 0.5) % 1.0  # other record keys: the common cells disagree
    with pytest.raises(DataError, match="different noise.*cell keys differ"):
        protect_linked(linked, [], "cell_key", options={"ptable": pt, "cell_keys": keys})


# -- bad input -------------------------------------------------------------------------------------
def test_common_cells_must_agree_in_value() -> None:
    df = _micro()
    t1 = Table.from_microdata(df, ["region", "gender"])
    t2 = Table.from_microdata(df.iloc[1:], ["region", "age"])  # one r1 record fewer
    # the grand total (20 vs 19) and region r1 (7 vs 6) differ; the first is named
    match = r"cell \{'region': 'Total', .*\} is 20 in table 'a' but 19 in table 'b' \(2 such"
    with pytest.raises(DataError, match=match):
        LinkedTables([t1, t2], ["a", "b"])


def test_a_dimension_must_be_the_same_in_every_table() -> None:
    df = _micro()
    t1 = Table.from_microdata(df, ["region", "gender"])
    h = order_hierarchy(df["region"], groups=[{"north": ["r1", "r2"], "south": ["r3"]}])
    t2 = Table.from_microdata(df, {"region": h, "age": None})
    with pytest.raises(DataError, match="dimension 'region' differs between table"):
        LinkedTables([t1, t2])


def test_bad_arguments_are_named() -> None:
    t1, t2, _ = _linked()
    with pytest.raises(ParameterError, match="two linked tables are called 'x'"):
        LinkedTables([t1, t2], ["x", "x"])
    with pytest.raises(ParameterError, match="at least one table"):
        LinkedTables([])
    with pytest.raises(ConfigError, match="unknown table method 'best'"):
        protect_linked([t1, t2], RULES, "best")
    with pytest.raises(ConfigError, match="needs option `base`"):
        protect_linked({"a": t1, "b": t2}, RULES, "rounding")


# -- sdcTable's linked example ---------------------------------------------------------------------
def test_sdctable_microdata2_two_tables_sharing_region_and_gender(shared_data: Path) -> None:
    """sdcTable's protectLinkedTables example: region x gender x ecoOld and region x gender x
    ecoNew, linked through the region x gender margin (ecoOld and ecoNew at their totals)."""
    df = pd.read_csv(shared_data / "sdcmicro" / "sdcTable_microdata2.csv")
    old = order_hierarchy(df["ecoOld"], groups=[{"A": ["Aa", "Ab"], "B": ["Ba", "Bb"]}])
    new = order_hierarchy(df["ecoNew"], groups=[{"C": ["Ca", "Cb", "Cc"], "D": ["Da", "Db", "Dc"]}])
    t1 = Table.from_microdata(df, {"region": None, "gender": None, "ecoOld": old}, "numVal")
    t2 = Table.from_microdata(df, {"region": None, "gender": None, "ecoNew": new}, "numVal")
    linked = LinkedTables([t1, t2])
    assert (t1.shape, t2.shape) == ((3, 3, 7), (3, 3, 9))
    assert linked.n_cells == 63 + 81 - 9 and int(linked.common.sum()) == 9
    rules = [FrequencyRule(threshold=6, safety_range=20), PPercentRule(p=20)]
    prim = linked_primary(linked, rules)
    assert prim.count > 0
    cost = {}
    for method in SUPPRESSION:
        prot = protect_linked(linked, rules, method)
        pattern = np.isnan(prot.combined.published)
        assert audit(linked, pattern, prim).safe, method
        for p, cells in zip(prot.tables, linked.cells_of, strict=True):
            assert (np.isnan(p.published) == pattern[cells]).all(), method
        cost[method] = prot.summary()["secondary_cost"]
    assert cost["optimal"] <= min(cost.values()) + 1e-9
    # the linked optimum restricted to one table protects it against that table alone (fewer
    # relations, wider intervals), so it costs at least the table's own optimum
    opt = protect_linked(linked, rules, "optimal")
    for t, p in zip((t1, t2), opt.tables, strict=True):
        alone = protect(t, rules, "optimal").summary()["secondary_value"]
        assert p.summary()["secondary_value"] >= alone - 1e-6


# -- the job ---------------------------------------------------------------------------------------
def _write_job(tmp_path: Path, **overrides) -> Path:
    _micro().to_csv(tmp_path / "micro.csv", index=False)
    doc = {
        "input": {"path": "micro.csv"},
        "dimensions": {"region": {}, "gender": {}, "age": {}},
        "tables": [["region", "gender"], ["region", "age"]],
        "rules": [{"frequency": {"threshold": 3}}],
        "method": "optimal",
        "output": {"cells": "cells.csv", "report": "table.html", "json": "table.json"},
    }
    doc.update(overrides)
    path = tmp_path / "table.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def test_the_command_line_protects_linked_tables(tmp_path: Path) -> None:
    job = _write_job(tmp_path)
    res = CliRunner().invoke(app, ["table", "--config", str(job), "--quiet"])
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "table.json").read_text())
    assert summary["safe"] is True and summary["linked"] is True
    assert summary["cells"] == 20 and summary["secondary_cost"] == 19.0
    assert set(summary["tables"]) == {"region x gender", "region x age"}
    assert summary["tables"]["region x gender"]["dimensions"] == ["region", "gender"]
    assert all(s["safe"] for s in summary["tables"].values())
    cells = pd.read_csv(tmp_path / "cells.csv", keep_default_na=False, na_values=[""])
    assert list(cells.columns[:4]) == ["table", "region", "gender", "age"]
    assert len(cells) == 24
    # every common cell: one status and one published value in both tables
    common = cells[(cells["gender"] == "Total") & (cells["age"] == "Total")]
    per_cell = common.groupby("region")["status"].nunique()
    assert (per_cell == 1).all() and len(per_cell) == 4
    r1 = common[common["region"] == "r1"]
    assert (r1["status"] == "secondary").all() and r1["published"].isna().all()
    html = (tmp_path / "table.html").read_text()
    assert "Table region x gender" in html and "Table region x age" in html
    assert 'class="primary"' in html and 'class="secondary"' in html


def test_a_job_names_tables_by_a_mapping_and_runs_a_heuristic(tmp_path: Path) -> None:
    job = _write_job(
        tmp_path,
        tables={"by_gender": ["region", "gender"], "by_age": "region, age"},
        method="hypercube",
    )
    outcome = run_table_job(load_job(job))
    assert set(outcome.summary["tables"]) == {"by_gender", "by_age"}
    assert outcome.summary["safe"]
    cells = pd.read_csv(tmp_path / "cells.csv", keep_default_na=False, na_values=[""])
    assert set(cells["table"]) == {"by_gender", "by_age"}


def test_a_table_naming_an_undeclared_dimension_is_refused(tmp_path: Path) -> None:
    job = _write_job(tmp_path, tables=[["region", "gender"], ["region", "sex"]])
    with pytest.raises(ConfigError, match=r"tables\.region x sex: dimension 'sex' is not declared"):
        run_table_job(load_job(job))
    res = CliRunner().invoke(app, ["table", "--config", str(job)])
    assert res.exit_code == 2 and "'sex' is not declared" in res.output
    assert not (tmp_path / "cells.csv").exists() and not (tmp_path / "table.json").exists()


@pytest.mark.parametrize(
    ("tables", "match"),
    [
        ([["region", "region"]], "names a dimension twice"),
        ([["region"], ["region"]], "repeats table 'region'"),
        ("region", "must list the linked tables"),
        ([], "names no table"),
    ],
)
def test_malformed_tables_key(tmp_path: Path, tables, match: str) -> None:
    with pytest.raises(ParameterError, match=match):
        load_job(_write_job(tmp_path, tables=tables))


def test_linked_tables_need_microdata(tmp_path: Path) -> None:
    t1, _, _ = _linked()
    t1.to_frame().to_csv(tmp_path / "given.csv", index=False)
    job = _write_job(tmp_path, input=None, cells={"path": "given.csv"})
    with pytest.raises(ConfigError, match="linked tables are built from microdata"):
        run_table_job(load_job(job))
