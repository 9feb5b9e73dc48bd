"""Tests: tables on Spark (``engine: spark``) equal the local engine's cell for cell -- values,
frequencies, contributors, largest contributions, costs -- from hand-built data, the Adult demo
and job files (``run_table_job`` and ``sdckit table``); bad data gives the local errors.

Sums of floating-point values are compared with a relative tolerance of 1e-12: Spark adds in
another order than the local engine, so the last bits may differ (integer data is exact)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from sdckit.cli import main
from sdckit.datasets import load_adult
from sdckit.errors import ConfigError, DataError
from sdckit.jobs.config import load_job
from sdckit.jobs.table import run_table_job
from sdckit.tables.cell_key import record_keys
from sdckit.tables.table import Table
from table_support import PTABLE

pytest.importorskip("pyspark")

RTOL = 1e-12

# a magnitude table with a few contributions per cell, a negative one and holdings
MICRO = pd.DataFrame(
    {
        "region": ["N", "N", "N", "N", "S", "S", "S", "S", "S", "E", "E", "E", "E", "E", "E"],
        "sector": ["a", "a", "b", "b", "a", "a", "a", "b", "b", "a", "a", "b", "b", "b", "b"],
        "size": [1, 2, 2, 1, 1, 1, 2, 1, 2, 2, 2, 1, 1, 1, 2],
        "turnover": [50.5, 40, 300, 10, 20, 25, 30, 60, 55, 90, 5, 30, 35, 40, 45],
        "profit": [5.25, -4, 30, 1, 2, 2.5, 3, 6, 5.5, 9, 0.5, 3, 3.5, 4, 4.5],
        "staff": [3, 1, 20, 2, 1, 1, 2, 4, 3, 5, 1, 2, 2, 3, 3],
        "group": ["g1", "g2", "g3", "g3", "g4", "g5", "g5", "g7", "g8", "g9", "g9", "g10"]
        + ["g10", "g12", "g13"],
    }
)


def _assert_same(local: Table, spark: Table) -> None:
    assert local.shape == spark.shape
    for a, b in zip(local.dimensions, spark.dimensions, strict=True):
        assert a.name == b.name
        assert list(a.codes) == list(b.codes) and list(a.parent) == list(b.parent)
    np.testing.assert_allclose(spark.value, local.value, rtol=RTOL, atol=0)
    np.testing.assert_array_equal(spark.freq, local.freq)
    np.testing.assert_array_equal(spark.contributors, local.contributors)
    assert spark.top.shape == local.top.shape
    np.testing.assert_allclose(spark.top, local.top, rtol=RTOL, atol=0)
    np.testing.assert_allclose(spark.cost, local.cost, rtol=RTOL, atol=0)
    assert spark.negative_contributions == local.negative_contributions
    assert (spark.response, spark.holding) == (local.response, local.holding)


def _region_hierarchy():
    from sdckit.core.hierarchy_specs import BUILDERS

    spec = BUILDERS["order"].from_dict({"groups": [{"NS": ["N", "S"], "E": ["E"]}]})
    return spec.build(MICRO["region"], name="region")


def test_a_small_magnitude_table_equals_the_local_engines(spark) -> None:
    """Numbers as Spark types; a hierarchy, a shadow variable with a negative value, a cost
    column, three largest contributions."""
    from sdckit.spark.tables import spark_table

    kwargs = {"response": "turnover", "shadow": "profit", "cost": "staff", "top_n": 3}
    dims = {"region": _region_hierarchy(), "sector": None}
    local = Table.from_microdata(MICRO, dims, **kwargs)
    assert local.negative_contributions
    sdf = spark.createDataFrame(MICRO).repartition(3)  # records spread over partitions
    _assert_same(local, spark_table(sdf, dims, **kwargs))


def test_a_flat_dimensions_total_code_is_the_local_engines(spark) -> None:
    """``totals`` (a job's ``dimensions.<name>.total``, tau-Argus' <TOTCODE>) names a flat
    dimension's total on both engines alike."""
    from sdckit.spark.tables import spark_table

    dims = {"region": _region_hierarchy(), "sector": None}
    local = Table.from_microdata(MICRO, dims, "turnover", totals={"sector": "All"})
    assert local.dimensions[1].codes[0] == "All"
    _assert_same(
        local, spark_table(spark.createDataFrame(MICRO), dims, "turnover", totals={"sector": "All"})
    )


def test_a_small_table_with_holdings_from_text_equals_the_local_engines(spark, tmp_path) -> None:
    """Numbers as CSV text in the forms pandas reads (white space, signs, exponents, bare
    points); contributions of a holding combined; numeric codes of a flat dimension."""
    from sdckit.core.io import read_table
    from sdckit.spark.io import read_spark
    from sdckit.spark.tables import spark_table

    text = MICRO.astype(str)
    text.loc[[0, 3, 6, 9, 12], "turnover"] = [" 50.5", "+1e1", "3E+1\t", "90.", "35 "]
    text.loc[[1, 10], "profit"] = ["-4.0e0", ".5"]
    text.to_csv(tmp_path / "micro.csv", index=False)
    local_frame = read_table(tmp_path / "micro.csv")
    sdf = read_spark(spark, tmp_path / "micro.csv")
    kwargs = {"response": "turnover", "shadow": "profit", "holding": "group"}
    local = Table.from_microdata(local_frame, ["size", "region"], **kwargs)
    np.testing.assert_array_equal(
        local.value, Table.from_microdata(MICRO, ["size", "region"], **kwargs).value
    )
    _assert_same(local, spark_table(sdf, ["size", "region"], **kwargs))


@pytest.fixture(scope="module")
def adult(spark):
    """The Adult demo: the local frame, its hierarchies and the CSV read by Spark (text)."""
    from sdckit.spark.io import read_spark

    demo = load_adult()
    return demo.data, demo.hierarchies, read_spark(spark, demo.path, delimiter=";")


def test_an_adult_table_equals_the_local_engines(adult) -> None:
    """The demo data read from its CSV file: sex x race x education (a hierarchy) of age."""
    from sdckit.spark.tables import spark_table

    data, hierarchies, sdf = adult
    dims = {"sex": None, "race": None, "education": hierarchies["education"]}
    local = Table.from_microdata(data, dims, "age")
    assert local.n_cells > 100 and local.freq[0] == len(data)
    _assert_same(local, spark_table(sdf, dims, "age"))


def _errors(call_local, call_spark) -> tuple[str, str]:
    with pytest.raises(DataError) as a:
        call_local()
    with pytest.raises(DataError) as b:
        call_spark()
    return str(a.value), str(b.value)


def _many_partitions(spark):
    spark.conf.set("spark.sql.files.maxPartitionBytes", "128k")


def test_an_unknown_code_is_the_local_error_naming_its_row(spark, adult, tmp_path) -> None:
    from sdckit.spark.io import read_spark
    from sdckit.spark.tables import spark_table

    data, hierarchies, _ = adult
    bad = data.copy()
    bad.loc[[20000, 25000], "education"] = "Postdoc"
    bad.loc[[22000], "education"] = "Apprentice"
    path = tmp_path / "adult.csv"
    bad.to_csv(path, sep=";", index=False)
    dims = {"sex": None, "education": hierarchies["education"]}
    _many_partitions(spark)
    try:
        sdf = read_spark(spark, path)
        assert sdf.rdd.getNumPartitions() > 2
        local, remote = _errors(
            lambda: Table.from_microdata(bad, dims, "age"),
            lambda: spark_table(sdf, dims, "age"),
        )
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
    assert "'Postdoc' (row 20001)" in local and "'Apprentice'" in local
    assert remote == local


def test_a_bad_number_late_in_a_large_file_is_named_by_row(spark, adult, tmp_path) -> None:
    from sdckit.spark.io import read_spark
    from sdckit.spark.tables import spark_table

    data = adult[0].copy()
    # Spark's cast alone reads 1d, 1f and hexadecimal floats; pandas does not
    data.loc[[27000, 28000, 28500, 29000, 29500], "age"] = ["1d", "0x1p3", "1f", "", "inf"]
    path = tmp_path / "adult.csv"
    data.to_csv(path, sep=";", index=False)
    _many_partitions(spark)
    try:
        sdf = read_spark(spark, path)
        local_msg, spark_msg = _errors(
            lambda: Table.from_microdata(data, ["sex"], "age"),
            lambda: spark_table(sdf, ["sex"], "age"),
        )
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
    assert "row 27001: '1d' is not a number (5 such value(s))" in local_msg
    assert spark_msg == local_msg


# -- job files -------------------------------------------------------------------------------
def _write_job(folder: Path, engine: str, **overrides) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    MICRO.to_csv(folder / "micro.csv", index=False)
    doc = {
        "input": {"path": "micro.csv"},
        "engine": engine,
        "dimensions": {
            "region": {"hierarchy": {"order": {"groups": [{"NS": ["N", "S"], "E": ["E"]}]}}},
            "sector": {},
        },
        "response": "turnover",
        "holding": "group",
        "rules": [{"frequency": {"threshold": 3}}, {"p_percent": {"p": 20}}],
        "method": "optimal",
        "output": {"cells": "cells.csv", "json": "table.json"},
    }
    doc.update(overrides)
    doc = {k: v for k, v in doc.items() if v is not None}
    path = folder / "table.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def _outputs(folder: Path) -> tuple[pd.DataFrame, dict]:
    cells = pd.read_csv(folder / "cells.csv", keep_default_na=False, na_values=[""])
    return cells, json.loads((folder / "table.json").read_text())


def _assert_same_outputs(local: Path, remote: Path) -> None:
    cells_l, summary_l = _outputs(local)
    cells_s, summary_s = _outputs(remote)
    pd.testing.assert_frame_equal(cells_s, cells_l, rtol=RTOL)
    assert (summary_l["engine"], summary_s["engine"]) == ("local", "spark")
    for key in ("cells", "primary", "secondary", "safe", "dimensions", "suppressed_value"):
        assert summary_s[key] == summary_l[key], key


def test_a_spark_job_writes_the_local_jobs_outputs(spark, tmp_path) -> None:
    for name in ("local", "spark"):
        outcome = run_table_job(load_job(_write_job(tmp_path / name, name)))
        assert outcome.summary["safe"]
    _assert_same_outputs(tmp_path / "local", tmp_path / "spark")
    cells, summary = _outputs(tmp_path / "spark")
    assert summary["secondary"] > 0 and (cells["status"] == "secondary").any()


def test_the_command_line_runs_a_spark_job_of_linked_tables(spark, tmp_path, monkeypatch) -> None:
    linked = {
        "dimensions": {"region": {}, "sector": {}},
        "tables": [["region", "sector"], ["region"]],
        "holding": None,
    }
    run_table_job(load_job(_write_job(tmp_path / "local", "local", **linked)))
    job = _write_job(tmp_path / "spark", "spark", **linked)
    monkeypatch.setattr("sys.argv", ["sdckit", "table", "--config", str(job), "--quiet"])
    with pytest.raises(SystemExit) as info:
        main()
    assert info.value.code == 0
    _assert_same_outputs(tmp_path / "local", tmp_path / "spark")
    assert set(_outputs(tmp_path / "spark")[0]["table"]) == {"region x sector", "region"}


def test_a_spark_job_reports_a_builder_hierarchys_error_as_locally(spark, tmp_path) -> None:
    order = {"order": {"order": ["N", "S"], "group_sizes": [2]}}  # the data also has E
    messages = []
    for name in ("local", "spark"):
        path = _write_job(
            tmp_path / name, name, dimensions={"region": {"hierarchy": order}, "sector": {}}
        )
        with pytest.raises(ConfigError) as info:
            run_table_job(load_job(path))
        messages.append(str(info.value).replace(f"/{name}/", "/"))
        assert not (tmp_path / name / "cells.csv").exists()
    assert "'E'" in messages[0] and messages[1] == messages[0]


def test_a_spark_cell_key_job_perturbs_as_the_local_job(spark, tmp_path) -> None:
    micro = MICRO.assign(rkey=record_keys(len(MICRO), seed=11))
    for name in ("local", "spark"):
        path = _write_job(
            tmp_path / name,
            name,
            response=None,
            holding=None,
            rules=None,
            method="cell_key",
            options={"ptable": "p.txt", "key": "rkey"},
        )
        micro.to_csv(tmp_path / name / "micro.csv", index=False)
        (tmp_path / name / "p.txt").write_text(PTABLE, encoding="utf-8")
        run_table_job(load_job(path))
    _assert_same_outputs(tmp_path / "local", tmp_path / "spark")
    cells = _outputs(tmp_path / "spark")[0]
    assert (cells["published"] != cells["value"]).any()  # the keys moved some counts


def test_a_constant_record_key_is_refused_by_both_engines(spark, tmp_path) -> None:
    messages = []
    for name in ("local", "spark"):
        path = _write_job(
            tmp_path / name,
            name,
            response=None,
            holding=None,
            rules=None,
            method="cell_key",
            options={"ptable": "p.txt", "key": "rkey"},
        )
        MICRO.assign(rkey=0.375).to_csv(tmp_path / name / "micro.csv", index=False)
        (tmp_path / name / "p.txt").write_text(PTABLE, encoding="utf-8")
        with pytest.raises(DataError) as info:
            run_table_job(load_job(path))
        messages.append(str(info.value))
        assert not (tmp_path / name / "cells.csv").exists()
    assert messages[0].startswith("record key column 'rkey' has the same value (0.375) in all 15")
    assert messages[1] == messages[0]
