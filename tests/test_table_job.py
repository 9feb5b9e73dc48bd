"""Tests: `sdckit table` -- a job file protects a table from microdata or cells with every
method; outputs are written together, every released pattern passes the audit, bad input is a
clear error with nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from sdckit.cli import main
from sdckit.errors import ConfigError, DataError, ParameterError
from sdckit.jobs.config import job_from_dict, load_job
from sdckit.jobs.table import run_table_job
from sdckit.tables import FrequencyRule, PPercentRule, Table, primary_cells
from sdckit.tables.audit import audit

# a small magnitude table: region x sector, a few contributions per cell
MICRO = pd.DataFrame(
    {
        "region": ["N", "N", "N", "N", "S", "S", "S", "S", "S", "E", "E", "E", "E", "E", "E"],
        "sector": ["a", "a", "b", "b", "a", "a", "a", "b", "b", "a", "a", "b", "b", "b", "b"],
        "turnover": [50, 40, 300, 10, 20, 25, 30, 60, 55, 90, 5, 30, 35, 40, 45],
        "group": [
            "g1",
            "g2",
            "g3",
            "g3",
            "g4",
            "g5",
            "g6",
            "g7",
            "g8",
            "g9",
            "g9",
            "g10",
            "g11",
            "g12",
            "g13",
        ],
    }
)


def _write_job(tmp_path: Path, **overrides) -> Path:
    MICRO.to_csv(tmp_path / "micro.csv", index=False)
    doc = {
        "input": {"path": "micro.csv"},
        "dimensions": {"region": {}, "sector": {}},
        "response": "turnover",
        "rules": [{"frequency": {"threshold": 3}}, {"p_percent": {"p": 20}}],
        "method": "optimal",
        "output": {"cells": "cells.csv", "report": "table.html", "json": "table.json"},
    }
    doc.update(overrides)
    path = tmp_path / "table.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def _cells(tmp_path: Path) -> pd.DataFrame:
    return pd.read_csv(tmp_path / "cells.csv", keep_default_na=False, na_values=[""])


@pytest.mark.parametrize("method", ["optimal", "simple"])
def test_a_suppression_job_writes_a_safe_pattern(tmp_path: Path, method: str) -> None:
    outcome = run_table_job(load_job(_write_job(tmp_path, method=method)))
    summary = json.loads((tmp_path / "table.json").read_text())
    for key in (
        "cells",
        "primary",
        "secondary",
        "suppressed_value",
        "safe",
        "method",
        "elapsed_seconds",
        "cells_file",
    ):
        assert key in summary
    assert summary["method"] == method and summary["safe"] is True
    assert summary["cells"] == 4 * 3  # (3 regions + total) x (2 sectors + total)
    cells = _cells(tmp_path)
    assert list(cells.columns[:2]) == ["region", "sector"]
    for col in ("value", "freq", "status", "audit_lower", "audit_upper", "published"):
        assert col in cells.columns
    # the primaries are exactly those the rules flag; each is suppressed
    table = Table.from_microdata(MICRO, ["region", "sector"], "turnover")
    prim = primary_cells(table, [FrequencyRule(3), PPercentRule(20)])
    assert summary["primary"] == prim.count > 0
    status = cells["status"].to_numpy()
    assert (status[prim.unsafe] == "primary").all()
    assert np.isnan(cells["published"].to_numpy()[status != "safe"]).all()
    assert (cells["published"].to_numpy()[status == "safe"] == table.value[status == "safe"]).all()
    # an independent audit of the written pattern
    check = audit(table, status != "safe", prim)
    assert check.safe
    assert summary["secondary"] == int((status == "secondary").sum())
    html = (tmp_path / "table.html").read_text()
    assert 'class="primary"' in html and 'class="secondary"' in html
    assert outcome.summary["run_id"] in html


def test_the_command_line_runs_the_job(tmp_path: Path, monkeypatch, capsys) -> None:
    job = _write_job(tmp_path)
    monkeypatch.setattr("sys.argv", ["sdckit", "table", "--config", str(job), "--quiet"])
    with pytest.raises(SystemExit) as info:
        main()
    assert info.value.code == 0
    assert capsys.readouterr().out == ""
    assert (tmp_path / "cells.csv").is_file() and (tmp_path / "table.json").is_file()


def test_a_job_on_given_cells_protects_the_same_table(tmp_path: Path) -> None:
    table = Table.from_microdata(MICRO, ["region", "sector"], "turnover")
    cells = table.to_frame()
    cells["top1"] = table.top[:, 0]
    cells["top2"] = table.top[:, 1]
    cells.to_csv(tmp_path / "given.csv", index=False)
    job = _write_job(tmp_path, method="optimal")
    doc = yaml.safe_load(job.read_text())
    del doc["input"], doc["response"]
    doc["cells"] = {"path": "given.csv"}
    job.write_text(yaml.safe_dump(doc), encoding="utf-8")
    from_cells = run_table_job(load_job(job)).summary
    (tmp_path / "m").mkdir()
    from_micro = run_table_job(load_job(_write_job(tmp_path / "m"))).summary
    assert from_cells["primary"] == from_micro["primary"]
    assert from_cells["secondary"] == from_micro["secondary"]
    assert from_cells["suppressed_value"] == pytest.approx(from_micro["suppressed_value"])


def test_hierarchical_dimension_from_a_builder(tmp_path: Path) -> None:
    hier = {"order": {"groups": [{"NS": ["N", "S"], "E": ["E"]}]}}
    job = _write_job(tmp_path, dimensions={"region": {"hierarchy": hier}, "sector": {}})
    outcome = run_table_job(load_job(job))
    assert outcome.summary["safe"]
    codes = set(_cells(tmp_path)["region"])
    assert {"NS", "N", "S", "E"} <= codes
    assert outcome.summary["dimensions"]["region"] == 5  # * (root), NS, E, N, S (E merged)


def test_the_table_job_document_round_trips(tmp_path: Path) -> None:
    job = load_job(_write_job(tmp_path))
    again = job_from_dict(job.to_dict(), base_dir=tmp_path)
    assert again.spec == job.spec
    assert job.to_dict()["rules"] == [{"frequency": {"threshold": 3}}, {"p_percent": {"p": 20}}]


@pytest.mark.parametrize(
    ("overrides", "error", "fragment"),
    [
        ({"rules": [{"frequncy": {"threshold": 3}}]}, ConfigError, "did you mean 'frequency'"),
        (
            {"rules": [{"frequency": {"threshold": 0}}]},
            ParameterError,
            "rules[0].frequency.threshold must be >= 1",
        ),
        ({"method": "magic"}, ConfigError, "unknown table method 'magic'"),
        ({"dimensions": {"regio": {}}}, ConfigError, "column 'regio' is not in the input"),
        ({"response": "missing_col"}, DataError, "column 'missing_col' is not in the data"),
        ({"method": "rounding"}, ConfigError, "options.base is required"),
        ({"options": {"bsae": 5}}, ConfigError, "unknown option 'bsae'"),
        (  # an option of another method: refused, not ignored, with the method's own
            {"options": {"base": 5}},
            ConfigError,
            "unknown option 'base'; method 'optimal' takes value, freq, top, top_n, "
            "min_protection, time_limit, singletons",
        ),
        ({"options": {"key": "k"}}, ConfigError, "unknown option 'key'"),
        (
            {"method": "cta", "options": {"singletons": True}},
            ConfigError,
            "method 'cta' takes value, freq, top, top_n, min_protection, time_limit",
        ),
        ({"options": {"time_limit": 0}}, ParameterError, "options.time_limit must be > 0, got 0"),
        (
            {"method": "rounding", "options": {"base": "five"}},
            ParameterError,
            "options.base must be a number",
        ),
    ],
)
def test_bad_jobs_are_clear_errors_and_write_nothing(tmp_path, overrides, error, fragment):
    job = _write_job(tmp_path, **overrides)
    with pytest.raises(error) as info:
        run_table_job(load_job(job))
    assert fragment in str(info.value)
    assert not (tmp_path / "cells.csv").exists() and not (tmp_path / "table.json").exists()


def test_a_code_missing_from_the_hierarchy_is_named(tmp_path: Path) -> None:
    hier = {"order": {"order": ["N", "S"], "group_sizes": [2]}}
    job = _write_job(tmp_path, dimensions={"region": {"hierarchy": hier}, "sector": {}})
    with pytest.raises((DataError, ConfigError)) as info:
        run_table_job(load_job(job))
    assert "'E'" in str(info.value)


def test_negative_contributions_are_refused_by_the_p_percent_rule(tmp_path: Path) -> None:
    micro = MICRO.assign(turnover=MICRO["turnover"] - 100)
    micro.to_csv(tmp_path / "neg.csv", index=False)
    job = _write_job(tmp_path, input={"path": "neg.csv"})
    with pytest.raises(DataError, match="non-negative"):
        run_table_job(load_job(job))


@pytest.mark.parametrize("method", ["hypercube", "modular"])
def test_heuristic_patterns_are_audited_before_release(tmp_path: Path, method: str) -> None:
    hier = {"order": {"groups": [{"NS": ["N", "S"], "E": ["E"]}]}}
    job = _write_job(
        tmp_path, method=method, dimensions={"region": {"hierarchy": hier}, "sector": {}}
    )
    summary = run_table_job(load_job(job)).summary
    assert summary["safe"] and summary["method"] == method
    cells = _cells(tmp_path)
    table = Table.from_microdata(
        MICRO,
        {"region": _hierarchy(hier), "sector": None},
        "turnover",
    )
    prim = primary_cells(table, [FrequencyRule(3), PPercentRule(20)])
    assert audit(table, cells["status"].to_numpy() != "safe", prim).safe


def _hierarchy(spec):
    from sdckit.core.hierarchy_specs import BUILDERS

    ((name, params),) = spec.items()
    return BUILDERS[name].from_dict(params).build(MICRO["region"], name="region")


def test_rounding_job_publishes_an_additive_rounded_table(tmp_path: Path) -> None:
    job = _write_job(tmp_path, method="rounding", options={"base": 10})
    summary = run_table_job(load_job(job)).summary
    cells = _cells(tmp_path)
    published = cells["published"].to_numpy()
    assert (published % 10 == 0).all()
    assert (np.abs(published - cells["value"].to_numpy()) < 10).all()
    table = Table.from_microdata(MICRO, ["region", "sector"], "turnover")
    assert np.abs(table.constraints() @ published).max() < 1e-6
    assert summary["deviation"]["max_abs"] < 10 and summary["safe"]


def test_cta_job_moves_every_primary_out_of_its_interval(tmp_path: Path) -> None:
    job = _write_job(tmp_path, method="cta")
    run_table_job(load_job(job))
    cells = _cells(tmp_path)
    table = Table.from_microdata(MICRO, ["region", "sector"], "turnover")
    prim = primary_cells(table, [FrequencyRule(3), PPercentRule(20)])
    adjusted = cells["published"].to_numpy()
    moved = (adjusted >= table.value + prim.upper - 1e-6) | (
        adjusted <= table.value - prim.lower + 1e-6
    )
    assert moved[prim.unsafe].all()
    assert np.abs(table.constraints() @ adjusted).max() < 1e-6


def test_cell_key_job_on_the_tau_argus_demo(tmp_path: Path, shared_data: Path) -> None:
    argus = shared_data / "argus"
    doc = {
        "input": {"path": str(argus / "tauargus_cellkey_microdata.csv")},
        "dimensions": {"Sex": {}, "Age": {}},
        "method": "cell_key",
        "options": {"ptable": str(argus / "ptab_freq.txt"), "key": "Key"},
        "output": {"cells": "cells.csv", "json": "table.json"},
    }
    job = tmp_path / "ck.yaml"
    job.write_text(yaml.safe_dump(doc), encoding="utf-8")
    run_table_job(load_job(job))
    cells = _cells(tmp_path).astype({"Sex": str, "Age": str}).set_index(["Sex", "Age"])
    # hand-checked: (Sex 1, Age 6) has 6 records and cell key 0.07207875 -> noise -3
    assert cells.loc[("1", "6"), "value"] == 6 and cells.loc[("1", "6"), "published"] == 3
    assert cells.loc[("Total", "Total"), "published"] == 4582


def test_an_excel_workbook_shows_the_table_with_the_offices_mark(tmp_path: Path) -> None:
    openpyxl = pytest.importorskip("openpyxl")
    output = {"cells": "cells.csv", "excel": "protected.xlsx", "mark": "C", "json": "t.json"}
    run_table_job(load_job(_write_job(tmp_path, output=output)))
    cells = _cells(tmp_path)
    book = openpyxl.load_workbook(tmp_path / "protected.xlsx")
    assert book.sheetnames == ["table", "status", "settings"]
    grid = [list(r) for r in book["table"].iter_rows(values_only=True)]
    assert grid[0][0] == "region \\ sector"
    # every cell of the grid: the published value, or the office's mark where suppressed
    sectors = [str(s) for s in grid[0][1:]]
    for row in grid[1:]:
        for sector, shown in zip(sectors, row[1:], strict=True):
            cell = cells[(cells["region"].astype(str) == row[0]) & (cells["sector"] == sector)]
            assert len(cell) == 1
            published = cell["published"].iloc[0]
            assert shown == ("C" if np.isnan(published) else published)
    assert sum(v == "C" for row in grid[1:] for v in row[1:]) == int(
        (cells["status"] != "safe").sum()
    )
    status = [list(r) for r in book["status"].iter_rows(values_only=True)]
    assert status[0] == list(cells.columns) and len(status) == len(cells) + 1
    settings = dict(book["settings"].iter_rows(min_row=2, values_only=True))
    assert settings["suppressed cells shown as"] == "C"
    assert settings["method"] == "optimal" and settings["safe"] is True


def test_a_workbook_without_openpyxl_is_refused_before_any_work(tmp_path, monkeypatch) -> None:
    import importlib.util

    find = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "openpyxl" else find(name, *a)
    )
    job = load_job(_write_job(tmp_path, output={"excel": "protected.xlsx"}))
    with pytest.raises(ConfigError, match=r"output\.excel.*sdckit\[formats\]"):
        run_table_job(job)
    assert not (tmp_path / "protected.xlsx").exists()


def test_linked_tables_get_one_sheet_each(tmp_path: Path) -> None:
    openpyxl = pytest.importorskip("openpyxl")
    job = _write_job(
        tmp_path,
        tables={"by region": ["region"], "by region and sector": ["region", "sector"]},
        output={"excel": "linked.xlsx"},
    )
    run_table_job(load_job(job))
    book = openpyxl.load_workbook(tmp_path / "linked.xlsx")
    assert book.sheetnames == ["by region", "by region and sector", "status", "settings"]
    one_way = [list(r) for r in book["by region"].iter_rows(values_only=True)]
    assert one_way[0] == ["region", "value"] and len(one_way) == 1 + 4  # total + 3 regions


def test_the_optimal_methods_time_limit_is_stated_in_summary_report_and_terminal(
    tmp_path: Path, capsys
) -> None:
    from sdckit.commands.table import print_summary
    from sdckit.tables.suppression import DEFAULT_TIME_LIMIT

    run_table_job(load_job(_write_job(tmp_path)))
    summary = json.loads((tmp_path / "table.json").read_text())
    assert summary["time_limit"] == DEFAULT_TIME_LIMIT
    assert summary["optimal"] is True
    assert 0.0 <= summary["lower_bound"] <= summary["secondary_cost"] + 1e-9
    assert 0.0 <= summary["gap"] <= 1e-3
    html = (tmp_path / "table.html").read_text()
    assert "time limit (s)" in html and "lower bound (secondary cost)" in html
    # the heuristic whose pattern was the search's incumbent
    assert summary["start"] in ("simple", "modular")
    assert "start (incumbent)" in html
    print_summary(summary)
    shown = capsys.readouterr().out
    assert "time limit (s)" in shown and f"{DEFAULT_TIME_LIMIT:g}" in shown
    assert "start (incumbent)" in shown and summary["start"] in shown
    # a limit given in the job's options is the one stated
    (tmp_path / "given").mkdir()
    run_table_job(load_job(_write_job(tmp_path / "given", options={"time_limit": 7})))
    assert json.loads((tmp_path / "given" / "table.json").read_text())["time_limit"] == 7
    # the other methods have no limit to state
    (tmp_path / "simple").mkdir()
    run_table_job(load_job(_write_job(tmp_path / "simple", method="simple")))
    assert "time_limit" not in json.loads((tmp_path / "simple" / "table.json").read_text())


def test_a_flat_dimensions_total_code_names_its_total_cells(tmp_path: Path) -> None:
    """``dimensions.<name>.total`` (tau-Argus' <TOTCODE>) is the code of a flat dimension's
    total in the cells of a microdata table (each dimension its own); the sums are the
    same as with the default ``Total``: region N's turnover 50 + 40 + 300 + 10 = 400."""
    path = _write_job(tmp_path, dimensions={"region": {"total": "All"}, "sector": {"total": "Any"}})
    outcome = run_table_job(load_job(path))
    cells = outcome.protection.cells()
    by = {(r.region, r.sector): r.value for r in cells.itertuples()}
    assert by[("All", "Any")] == MICRO["turnover"].sum()
    assert by[("N", "Any")] == 400 and by[("All", "a")] == 50 + 40 + 20 + 25 + 30 + 90 + 5
    assert "Total" not in set(cells["region"]) | set(cells["sector"])
