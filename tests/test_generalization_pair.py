"""Tests: the generalization metrics of ``sdckit anonymize`` on any (original, released) pair."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

import sdckit
from sdckit.cli import app
from sdckit.core.hierarchy import Hierarchy
from sdckit.errors import DataError, HierarchyError
from sdckit.utility.generalization_pair import generalization_metrics, output_from_pair

AGE = Hierarchy(
    [["21", "20-29", "*"], ["25", "20-29", "*"], ["34", "30-39", "*"], ["38", "30-39", "*"]],
    name="age",
)
SEX = Hierarchy([["m", "*"], ["f", "*"]], name="sex")
ORIGINAL = pd.DataFrame({"age": [21, 25, 34, 38], "sex": ["m", "f", "m", "f"], "x": [1, 2, 3, 4]})


def test_full_domain_hand_example() -> None:
    released = ORIGINAL.assign(age=["20-29", "20-29", "30-39", "30-39"])
    g = generalization_metrics(ORIGINAL, released, {"age": AGE, "sex": SEX})
    assert g["transformation"] == {"age": 1, "sex": 0}
    # loss_age = (sum shares - n/D) / (n - n/D) = (4 * 2/4 - 1) / (4 - 1) = 1/3; loss_sex = 0
    # geometric aggregate (ARX): sqrt((1 + 1/3) * (1 + 0)) - 1
    assert g["loss"] == pytest.approx(math.sqrt(4 / 3) - 1)
    # precision = 1 - sum_ij h_ij / HGV_i / (n m) = 1 - (4 * 1/2 + 0) / 8
    assert g["precision"] == pytest.approx(0.75)
    assert g["discernibility"] == 4.0 and g["aecs"] == 1.0 and g["height"] == 1.0
    assert g["suppressed_records"] == 0
    json.dumps(g)


def test_local_recoding_and_suppression() -> None:
    released = ORIGINAL.assign(age=["20-29", "20-29", "34", "*"], sex=["*", "*", "m", "*"])
    out = output_from_pair(ORIGINAL, released, {"age": AGE, "sex": SEX})
    assert out.suppressed.tolist() == [False, False, False, True]
    assert out.share["age"].tolist() == [0.5, 0.5, 0.25, 1.0]
    assert out.share["sex"].tolist() == [1.0, 1.0, 0.5, 1.0]
    assert out.transformation is None  # age at levels 1 and 0
    g = generalization_metrics(ORIGINAL, released, {"age": AGE, "sex": SEX})
    # released classes (non-suppressed): (20-29, *) x 2, (34, m) x 1; suppressed record: n
    assert g["discernibility"] == 2**2 + 1**2 + 1 * 4
    assert g["aecs"] == pytest.approx(1.5)


def test_not_a_generalization_names_column_row_and_values() -> None:
    released = ORIGINAL.assign(age=["20-29", "30-39", "30-39", "30-39"])
    with pytest.raises(HierarchyError, match=r"'age', row 2.*'30-39'.*'25'"):
        generalization_metrics(ORIGINAL, released, {"age": AGE})
    with pytest.raises(DataError, match="rows"):
        generalization_metrics(ORIGINAL, released.iloc[:3], {"age": AGE})
    with pytest.raises(HierarchyError, match="'x'"):
        generalization_metrics(ORIGINAL, ORIGINAL, {"age": AGE}, quasi_identifiers=["age", "x"])


@pytest.mark.parametrize("algorithm", ["optimal", "mondrian", "datafly"])
def test_same_metrics_as_the_anonymization_run(algorithm: str) -> None:
    from sdckit.algorithms.anonymize import anonymize
    from sdckit.core.schema import Schema
    from sdckit.datasets import load_adult
    from sdckit.models import KAnonymity

    df, hier = load_adult()
    df = df.iloc[:2000].reset_index(drop=True)
    qi = ["age", "sex", "race", "education"]
    hs = {q: hier[q] for q in qi}
    schema = Schema.from_roles(quasi_identifying=qi, hierarchies=hs)
    limit = 0.0 if algorithm == "mondrian" else 0.02
    res = anonymize(df, schema, KAnonymity(5), suppression_limit=limit, algorithm=algorithm)
    g = generalization_metrics(df, res.data, hs)
    for key, value in res.metrics.items():
        assert g[key] == (None if value is None else pytest.approx(value)), key
    assert g["suppressed_records"] == res.suppressed_records
    assert g["transformation"] == res.transformation


def test_evaluate_and_cli_with_hierarchies(tmp_path) -> None:
    released = ORIGINAL.assign(age=["20-29", "20-29", "30-39", "30-39"], x=[1.5, 2, 3, 4])
    doc = sdckit.evaluate(ORIGINAL, released, hierarchies={"age": AGE, "sex": SEX})
    assert doc["generalization"]["loss"] == pytest.approx(math.sqrt(4 / 3) - 1)
    assert doc["columns"]["categorical"] == ["age", "sex"] and doc["columns"]["numeric"] == ["x"]
    with pytest.raises(DataError, match="'age'"):
        sdckit.evaluate(ORIGINAL, released, columns=["sex", "x"], hierarchies={"age": AGE})

    a, b, h = tmp_path / "a.csv", tmp_path / "b.csv", tmp_path / "age.csv"
    ORIGINAL.to_csv(a, index=False)
    released.to_csv(b, index=False)
    AGE.to_csv(h)
    out = tmp_path / "e.json"
    res = CliRunner().invoke(
        app,
        ["evaluate", "--original", str(a), "--protected", str(b), "--hierarchy", f"age={h}",
         "--json", str(out), "--html", str(tmp_path / "e.html")],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    g = json.loads(out.read_text())["generalization"]
    assert g["qi"] == ["age"] and g["transformation"] == {"age": 1}
    assert g["loss"] == pytest.approx(1 / 3)  # one attribute: the geometric mean is loss_age
    assert "Generalization metrics" in (tmp_path / "e.html").read_text()
    bad = CliRunner().invoke(
        app,
        ["evaluate", "--original", str(a), "--protected", str(b), "--hierarchy", "age",
         "--json", str(tmp_path / "bad.json")],
    )  # fmt: skip
    assert bad.exit_code == 2 and "COLUMN=FILE" in bad.output
    assert not (tmp_path / "bad.json").exists()
    assert np.isfinite(json.loads(out.read_text())["information_loss"]["il1s"])
