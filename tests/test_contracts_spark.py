"""The local engine equals the Spark engine for every method whose traits say it runs on Spark.

Loops over the registries: every algorithm of :data:`sdckit.algorithms.registry.ALGORITHMS`
and every table method of :data:`sdckit.tables.registry.TABLE_METHODS` whose ``engines``
include ``spark`` runs on the same small data with both engines (one ``local[2]`` session,
the ``spark`` fixture; skipped without PySpark or Java), and the released data and the summary
numbers must agree: for an algorithm the transformation, suppressed records, metrics, models,
nodes checked, risk and the released rows (as a multiset: Spark does not keep the row order);
for a table method the released cells file and the summary's figures.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from sdckit import anonymize
from sdckit.algorithms.registry import ALGORITHMS
from sdckit.core.hierarchy import Hierarchy
from sdckit.core.io import read_table
from sdckit.core.schema import Schema
from sdckit.models import MODELS
from sdckit.tables.cell_key import record_keys
from sdckit.tables.registry import TABLE_METHODS
from spark_support import assert_same_anonymization
from table_support import PTABLE

pytest.importorskip("pyspark")

SPARK_ALGORITHMS = ALGORITHMS.where(lambda t: "spark" in t.engines)
SPARK_TABLE_METHODS = TABLE_METHODS.where(lambda t: "spark" in t.engines)

_RNG = np.random.default_rng(11)
DATA = pd.DataFrame(
    {
        "c": _RNG.choice(list("abcd"), 80),
        "g": _RNG.choice(list("pq"), 80),
        "z": _RNG.integers(0, 100, 80),
        "region": _RNG.choice(list("RST"), 80),
        "rkey": record_keys(80, seed=3),
    }
)
#: the models each Spark algorithm is compared with (job-file parameters): one on the classes'
#: sizes, two on a sensitive attribute
SPARK_MODELS = {
    "k_anonymity": {"k": 3},
    "l_diversity": {"attribute": "region", "l": 2},
    "t_closeness": {"attribute": "region", "t": 0.5},
}


@pytest.fixture(scope="module")
def data_csv(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("contract") / "data.csv"
    DATA.to_csv(path, index=False)
    return path


def test_the_spark_methods_are_listed_by_the_traits():
    assert SPARK_ALGORITHMS and SPARK_TABLE_METHODS
    assert set(SPARK_MODELS) <= set(MODELS)


@pytest.mark.parametrize("algorithm", SPARK_ALGORITHMS)
@pytest.mark.parametrize("model", list(SPARK_MODELS))
def test_an_algorithm_on_spark_equals_the_local_engine(
    spark, data_csv: Path, tmp_path: Path, algorithm: str, model: str
):
    from sdckit.spark.anonymize import anonymize_spark
    from sdckit.spark.io import read_spark

    local_data = read_table(data_csv)[["c", "g", "z", "region"]]
    hierarchies = {
        q: Hierarchy([[str(v), "*"] for v in sorted(set(local_data[q].astype(str)))], name=q)
        for q in ("c", "g")
    }
    hierarchies["z"] = Hierarchy(
        [[str(v), "low" if v < 50 else "high", "*"] for v in sorted(set(DATA["z"].tolist()))],
        name="z",
    )
    schema = Schema.from_roles(
        quasi_identifying=["c", "g", "z"],
        sensitive=["region"],
        hierarchies=hierarchies,
        types={"z": "integer"},
    )
    models = [MODELS.load(model).from_dict(SPARK_MODELS[model])]
    local = anonymize(local_data, schema, models, suppression_limit=0.1, algorithm=algorithm)
    out = tmp_path / "released.csv"
    sdf = read_spark(spark, data_csv).select("c", "g", "z", "region")
    remote = anonymize_spark(sdf, schema, models, out, suppression_limit=0.1, algorithm=algorithm)
    assert_same_anonymization(local, remote, out)


#: the options of a table job for each method (``p.txt`` is :data:`PTABLE`)
TABLE_OPTIONS: dict[str, dict] = {
    "rounding": {"base": 3},
    "cell_key": {"ptable": "p.txt", "key": "rkey"},
}


def _table_job(folder: Path, engine: str, method: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    DATA.to_csv(folder / "micro.csv", index=False)
    (folder / "p.txt").write_text(PTABLE, encoding="utf-8")
    doc = {
        "input": {"path": "micro.csv"},
        "engine": engine,
        "dimensions": {"c": {}, "g": {}, "region": {}},
        "method": method,
        "output": {"cells": "cells.csv", "json": "table.json"},
    }
    if TABLE_METHODS.traits(method).needs_rules:
        doc["rules"] = [{"frequency": {"threshold": 3}}]
    if method in TABLE_OPTIONS:
        doc["options"] = TABLE_OPTIONS[method]
    path = folder / "table.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def _outputs(folder: Path) -> tuple[pd.DataFrame, dict]:
    cells = pd.read_csv(folder / "cells.csv", keep_default_na=False, na_values=[""])
    return cells, json.loads((folder / "table.json").read_text())


def test_every_table_method_with_options_is_registered():
    assert set(TABLE_OPTIONS) <= set(TABLE_METHODS)


@pytest.mark.parametrize("method", SPARK_TABLE_METHODS)
def test_a_table_method_on_spark_equals_the_local_engine(spark, tmp_path: Path, method: str):
    from sdckit.jobs.config import load_job
    from sdckit.jobs.table import run_table_job

    for engine in ("local", "spark"):
        outcome = run_table_job(load_job(_table_job(tmp_path / engine, engine, method)))
        assert outcome.summary["safe"]
    cells_l, summary_l = _outputs(tmp_path / "local")
    cells_s, summary_s = _outputs(tmp_path / "spark")
    pd.testing.assert_frame_equal(cells_s, cells_l)
    assert (summary_l["engine"], summary_s["engine"]) == ("local", "spark")
    for key in ("cells", "primary", "secondary", "safe", "dimensions", "suppressed_value"):
        assert summary_s[key] == summary_l[key], key
    assert summary_s.get("deviation") == summary_l.get("deviation")
