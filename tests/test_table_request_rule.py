"""Tests: tau-Argus' request rule (``request``) -- each branch of its definition on
hand-computed cells, the requesting contributions rolled up a hierarchy, invariants against a
brute-force recount, a table job end to end, and bad input as clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.cli import main
from sdckit.core.hierarchy_builders import order_hierarchy
from sdckit.errors import ConfigError, DataError, ParameterError
from sdckit.jobs.config import job_from_dict, load_job
from sdckit.jobs.table import run_table_job
from sdckit.tables import RequestRule, Table, primary_cells

# One flat dimension; every cell is one branch of the definition. Codes R (30 %) and S (60 %),
# min_frequency 3, safety_margin 10 %.
RECORDS = [
    # cell, value, request
    ("a", 50, "R"),  # a: X = 100, largest requester 50 (R): 50 > 30% of 100 = 30 -> unsafe
    ("a", 30, ""),
    ("a", 20, ""),
    ("b", 50, "S"),  # b: X = 100, largest requester 50 (S): 50 > 60 is false; 3 records -> safe
    ("b", 30, ""),
    ("b", 20, ""),
    ("c", 10, "R"),  # c: X = 100, requester 10 (R): 10 > 30 false; non-requesters don't count
    ("c", 45, ""),
    ("c", 45, ""),
    ("e", 2, "R"),  # e: X = 42, 2 > 12.6 false, but 2 records < 3 with a requester -> unsafe
    ("e", 40, ""),
    ("f", 40, ""),  # f: 2 records < 3 but nobody asked -> safe
    ("f", 2, ""),
    ("g", 60, "S"),  # g: X = 100, largest requester 60 (S): 60 > 60 false; the R requester's
    ("g", 35, "R"),  # 35 > 30 is not tested (only the largest requesting contribution) -> safe
    ("g", 5, ""),
    ("h", 40, "R"),  # h: X = 100, tie 40 (R) = 40 (S): R's test 40 > 30 -> unsafe
    ("h", 40, "S"),
    ("h", 20, ""),
    ("i", 0, "R"),  # i: the requester contributes 0: tau-Argus counts positive ones only,
    ("i", 5, ""),  # so no request, and 2 records < 3 does not flag -> safe
]
EXPECTED = {"a": True, "b": False, "c": False, "e": True, "f": False, "g": False, "h": True}
EXPECTED["i"] = False


def _micro() -> pd.DataFrame:
    return pd.DataFrame(RECORDS, columns=["d", "v", "asked"])


def _rule(**changes) -> RequestRule:
    params = dict(
        column="asked", codes=["R", "S"], percentages=[30, 60], min_frequency=3, safety_margin=10
    )
    params.update(changes)
    return RequestRule(**params)


def _table(df: pd.DataFrame | None = None, dims=("d",), codes=("R", "S")) -> Table:
    df = _micro() if df is None else df
    return Table.from_microdata(df, list(dims), "v", request="asked", request_codes=codes)


def test_every_branch_of_the_definition_on_hand_computed_cells() -> None:
    t = _table()
    rule = _rule()
    flags = rule.unsafe(t)
    for code, unsafe in EXPECTED.items():
        assert bool(flags[t.cell_index({"d": code})]) is unsafe, code
    # the largest requesting contribution per code, e.g. g: R 35, S 60; i: none positive
    g = t.requested[t.cell_index({"d": "g"})]
    assert g.tolist() == [35.0, 60.0]
    assert t.requested[t.cell_index({"d": "i"})].tolist() == [0.0, 0.0]
    # the total: X = 100 * 5 (a, b, c, g, h) + 42 (e) + 42 (f) + 5 (i) = 589 over 21 records;
    # largest requester 60 (S): 60 > 0.6 * 589 is false -> safe
    total = t.cell_index({"d": "Total"})
    assert t.value[total] == 589 and t.freq[total] == 21 and not flags[total]


def test_a_zero_percentage_switches_that_codes_test_off() -> None:
    t = _table()
    a, e = t.cell_index({"d": "a"}), t.cell_index({"d": "e"})
    # R's percentage 0: a (50 > 30% of 100) is no longer flagged; e still is (2 records < 3)
    flags = _rule(percentages=[0, 60]).unsafe(t)
    assert not flags[a] and flags[e]
    # min_frequency 0: e (2 > 12.6 false) is safe, a still unsafe
    flags = _rule(min_frequency=0).unsafe(t)
    assert flags[a] and not flags[e]


def test_one_code_and_a_percentage_at_the_boundary() -> None:
    t = _table(codes=("R",))
    rule = _rule(codes=["R"], percentages=[50], min_frequency=0)
    # a: 50 > 50% of 100 is false (strict, as tau-Argus); with 49 % it is true
    assert not rule.unsafe(t)[t.cell_index({"d": "a"})]
    assert _rule(codes=["R"], percentages=[49], min_frequency=0).unsafe(t)[t.cell_index({"d": "a"})]
    # the S records are not requests for a rule whose only code is R: b is safe
    assert not rule.unsafe(t)[t.cell_index({"d": "b"})]


def test_protection_is_the_safety_margin_of_the_value() -> None:
    t = _table()
    prim = primary_cells(t, [_rule()], min_protection=1.0)
    a, e, h = (t.cell_index({"d": c}) for c in "aeh")
    # a: 10 % of 100 = 10; e: 10 % of 42 = 4.2; h: 10 % of 100 = 10
    assert prim.upper[[a, e, h]].tolist() == pytest.approx([10.0, 4.2, 10.0])
    assert prim.lower[e] == pytest.approx(4.2)
    assert prim.summary()["by_rule"] == {"request": 3}
    # margin 0: the minimum protection (1) as for every primary cell
    assert primary_cells(t, [_rule(safety_margin=0)]).upper[a] == 1.0


def test_the_requesting_contributions_roll_up_the_hierarchy() -> None:
    # A = {a1, a2}: a1 one requester 50 (R); a2 two non-requesters 30, 20
    df = pd.DataFrame(
        {
            "d": ["a1", "a2", "a2", "b1", "b1", "b1"],
            "v": [50, 30, 20, 10, 10, 10],
            "asked": ["R", "", "", "", "", ""],
        }
    )
    h = order_hierarchy(["a1", "a2", "b1"], groups=[{"A": ["a1", "a2"], "B": ["b1"]}])
    t = Table.from_microdata(df, {"d": h}, "v", request="asked", request_codes=["R"])
    rule = RequestRule(column="asked", codes=["R"], percentages=[30], min_frequency=3)
    flags = rule.unsafe(t)
    cell = {c: t.cell_index({"d": c}) for c in ("a1", "a2", "A", "B")}
    # a1: 50 > 15 -> unsafe; a2: nobody asked -> safe; A: X = 100, 50 > 30 -> unsafe;
    # B (b1 merged into it): nobody asked -> safe; root: X = 130, 50 > 39 -> unsafe
    assert [bool(flags[cell[c]]) for c in ("a1", "a2", "A", "B")] == [True, False, True, False]
    root = int(np.flatnonzero(t.level == 0)[0])
    assert t.value[root] == 130 and flags[root]


def test_holdings_do_not_change_the_records_requests() -> None:
    # tau-Argus' cell-level request rule reads single records, holdings or not
    df = _micro().assign(group=[f"g{i % 4}" for i in range(len(RECORDS))])
    t = Table.from_microdata(
        df, ["d"], "v", holding="group", request="asked", request_codes=["R", "S"]
    )
    np.testing.assert_array_equal(t.requested, _table().requested)


records = st.lists(
    st.tuples(
        st.sampled_from(["x", "y", "z"]),
        st.sampled_from(["p", "q"]),
        st.integers(min_value=0, max_value=50),
        st.sampled_from(["", "R", "S", "T"]),
    ),
    min_size=1,
    max_size=30,
)


@settings(max_examples=60, deadline=None)
@given(records)
def test_requested_is_the_largest_requesting_value_of_every_cell(rows) -> None:
    df = pd.DataFrame(rows, columns=["d", "e", "v", "asked"])
    if not df["asked"].isin(["R", "S"]).any():
        df.loc[0, "asked"] = "R"
    t = _table(df, dims=("d", "e"))
    codes = t.codes()
    for i in range(t.n_cells):
        inside = np.ones(len(df), dtype=bool)
        for name in ("d", "e"):
            if codes[name].iloc[i] != "Total":
                inside &= (df[name] == codes[name].iloc[i]).to_numpy()
        for j, code in enumerate(("R", "S")):
            mine = df["v"].to_numpy()[inside & (df["asked"] == code).to_numpy()]
            assert t.requested[i, j] == max([0, *mine])


@settings(max_examples=40, deadline=None)
@given(records, st.randoms(use_true_random=False))
def test_the_rule_does_not_depend_on_the_order_of_the_records(rows, rnd) -> None:
    df = pd.DataFrame(rows, columns=["d", "e", "v", "asked"])
    df.loc[0, "asked"] = "R"
    order = list(range(len(df)))
    rnd.shuffle(order)
    rule = _rule(percentages=[20, 40], min_frequency=2)
    a = rule.unsafe(_table(df, dims=("d", "e")))
    b = rule.unsafe(_table(df.iloc[order].reset_index(drop=True), dims=("d", "e")))
    np.testing.assert_array_equal(a, b)


# -- bad input ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("params", "fragment"),
    [
        ({"codes": ["R", "R"], "percentages": [10, 20]}, "must differ"),
        ({"codes": ["R", "S"], "percentages": [10]}, "one percentage per request code"),
        ({"codes": ["R", "S", "T"], "percentages": [1, 2, 3]}, "codes"),
        ({"codes": [""], "percentages": [10]}, "codes"),
        ({"percentages": [0, 0], "min_frequency": 0}, "flags nothing"),
        ({"percentages": [10, 120]}, "percentages"),
    ],
)
def test_bad_parameters_are_named(params, fragment) -> None:
    with pytest.raises(ParameterError) as info:
        _rule(**params)
    assert fragment in str(info.value)


def test_bad_data_is_a_clear_error() -> None:
    df = _micro()
    with pytest.raises(DataError, match=r"holds none of the request codes \['Y'\].*'R', 'S'"):
        Table.from_microdata(df, ["d"], "v", request="asked", request_codes=["Y"])
    with pytest.raises(DataError, match="column 'nope' is not in the data"):
        Table.from_microdata(df, ["d"], "v", request="nope", request_codes=["R"])
    with pytest.raises(DataError, match="frequency table has no contributions"):
        Table.from_microdata(df, ["d"], None, request="asked", request_codes=["R"])
    plain = Table.from_microdata(df, ["d"], "v")
    with pytest.raises(DataError, match="built without it; build it from the microdata"):
        primary_cells(plain, [_rule()])
    with pytest.raises(DataError, match="built with column 'asked' and codes \\['R'\\]"):
        _rule().unsafe(_table(codes=("R",)))


def test_numeric_codes_match_the_columns_text() -> None:
    df = _micro().assign(asked=[1.0 if a == "R" else np.nan for a in _micro()["asked"]])
    rule = RequestRule.from_dict(
        {"column": "asked", "codes": [1], "percentages": [30], "min_frequency": 3}
    )
    assert rule.codes == ("1",)
    t = Table.from_microdata(df, ["d"], "v", request="asked", request_codes=rule.codes)
    assert rule.unsafe(t)[t.cell_index({"d": "a"})]


# -- the table job -----------------------------------------------------------------------------
def _write_job(tmp_path: Path, **overrides) -> Path:
    _micro().to_csv(tmp_path / "micro.csv", index=False)
    doc = {
        "input": {"path": "micro.csv"},
        "dimensions": {"d": {}},
        "response": "v",
        "rules": [
            {
                "request": {
                    "column": "asked",
                    "codes": ["R", "S"],
                    "percentages": [30, 60],
                    "min_frequency": 3,
                    "safety_margin": 10,
                }
            }
        ],
        "method": "optimal",
        "output": {"cells": "cells.csv", "report": "table.html", "json": "table.json"},
    }
    doc.update(overrides)
    path = tmp_path / "table.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def test_a_job_with_the_request_rule_runs_end_to_end(tmp_path: Path) -> None:
    job = load_job(_write_job(tmp_path))
    outcome = run_table_job(job)
    summary = json.loads((tmp_path / "table.json").read_text())
    assert summary["primary"] == 3 and summary["primary_by_rule"] == {"request": 3}
    assert summary["safe"]
    assert summary["rules"] == [
        {
            "request": {
                "column": "asked",
                "codes": ["R", "S"],
                "percentages": [30.0, 60.0],
                "min_frequency": 3,
                "safety_margin": 10.0,
            }
        }
    ]
    cells = pd.read_csv(tmp_path / "cells.csv", keep_default_na=False, na_values=[""])
    primary = set(cells.loc[cells["status"] == "primary", "d"])
    assert primary == {c for c, unsafe in EXPECTED.items() if unsafe}
    html = (tmp_path / "table.html").read_text()
    assert "request(column=asked" in html and outcome.summary["run_id"] in html
    again = job_from_dict(job.to_dict(), base_dir=tmp_path)
    assert again.spec == job.spec


def _request(**changes) -> dict:
    params = {"column": "asked", "codes": ["R"], "percentages": [30]}
    params.update(changes)
    return {"request": params}


@pytest.mark.parametrize(
    ("overrides", "error", "fragment"),
    [
        ({"rules": [_request(column="nope")]}, ConfigError, "rules[0].request.column: column"),
        ({"rules": [_request(codes=["Y"])]}, DataError, "holds none of the request codes"),
        (
            {"rules": [_request(codes=["R", "S"])]},
            ParameterError,
            "one percentage per request code",
        ),
        ({"rules": [_request(), _request()]}, ConfigError, "rules[1].request: a table takes one"),
        ({"response": None}, ConfigError, "give `response:`"),
    ],
)
def test_bad_request_jobs_are_clear_errors_and_write_nothing(tmp_path, overrides, error, fragment):
    job = _write_job(tmp_path, **overrides)
    with pytest.raises(error) as info:
        run_table_job(load_job(job))
    assert fragment in str(info.value)
    assert not (tmp_path / "cells.csv").exists() and not (tmp_path / "table.json").exists()


def test_the_request_rule_on_given_cells_is_refused(tmp_path: Path) -> None:
    _table().to_frame().to_csv(tmp_path / "given.csv", index=False)
    job = _write_job(tmp_path)
    doc = yaml.safe_load(job.read_text())
    del doc["input"]
    doc["cells"] = {"path": "given.csv"}
    job.write_text(yaml.safe_dump(doc), encoding="utf-8")
    with pytest.raises(ConfigError, match="a table given cell by cell"):
        run_table_job(load_job(job))


def test_the_command_line_exits_2_on_a_missing_request_column(tmp_path, monkeypatch, capsys):
    job = _write_job(tmp_path, rules=[_request(column="nope")])
    monkeypatch.setattr("sys.argv", ["sdckit", "table", "--config", str(job), "--quiet"])
    with pytest.raises(SystemExit) as info:
        main()
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "column 'nope' is not in the input" in err and "Traceback" not in err


# -- the Spark engine --------------------------------------------------------------------------
def test_the_spark_engine_keeps_the_local_requesting_contributions(spark, tmp_path) -> None:
    """Requests with and without holdings, a shadow variable with a negative requesting value
    (tau-Argus counts positive ones only), a job with ``engine: spark``, a mistyped code."""
    from sdckit.spark.tables import spark_table

    df = _micro().assign(
        group=[f"g{i % 4}" for i in range(len(RECORDS))],
        shadow=[v if i != 6 else -10 for i, (_, v, _) in enumerate(RECORDS)],
    )
    sdf = spark.createDataFrame(df).repartition(3)
    for kwargs in ({}, {"holding": "group"}, {"shadow": "shadow"}):
        local = Table.from_microdata(
            df, ["d"], "v", request="asked", request_codes=["R", "S"], **kwargs
        )
        remote = spark_table(sdf, ["d"], "v", request="asked", request_codes=["R", "S"], **kwargs)
        assert (remote.request, remote.request_codes) == ("asked", ("R", "S"))
        np.testing.assert_array_equal(remote.requested, local.requested)
        np.testing.assert_array_equal(_rule().unsafe(remote), _rule().unsafe(local))
    # the last one read the shadow: c's requester has -10, no positive requesting contribution
    assert remote.requested[remote.cell_index({"d": "c"})].tolist() == [0.0, 0.0]
    with pytest.raises(DataError, match=r"holds none of the request codes \['Y'\].*'R', 'S'"):
        spark_table(sdf, ["d"], "v", request="asked", request_codes=["Y"])
    run_table_job(load_job(_write_job(tmp_path)))
    local_cells = pd.read_csv(tmp_path / "cells.csv")
    (tmp_path / "s").mkdir()
    run_table_job(load_job(_write_job(tmp_path / "s", engine="spark")))
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "s" / "cells.csv"), local_cells)
