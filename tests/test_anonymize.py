"""sdckit.anonymize: validation, identifiers, verification, JSON keys, report."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import sdckit
from sdckit.algorithms import anonymize as anon_module
from sdckit.core.hierarchy import Hierarchy
from sdckit.core.release import AlgorithmOutput
from sdckit.core.schema import Attribute, DataType, Role, Schema
from sdckit.datasets import load_adult
from sdckit.errors import (
    ConfigError,
    DataError,
    HierarchyError,
    NoSolutionError,
    SdcInputError,
    VerificationError,
)
from sdckit.models import KAnonymity, LDiversity, TCloseness
from sdckit.report.anonymization_report import anonymization_report

AGE = Hierarchy(
    [[str(a), f"{a // 10 * 10}-{a // 10 * 10 + 9}", "*"] for a in range(20, 40)], name="age"
)
ZIP = Hierarchy(
    [[z, z[:4] + "*", z[:3] + "**", "*"] for z in ["47677", "47602", "47678", "47905", "47909"]],
    name="zip",
)


def _small():
    df = pd.DataFrame(
        {
            "name": ["Ann", "Bob", "Cid", "Dee", "Eve", "Fay"],
            "age": [21, 23, 28, 29, 35, 36],
            "zip": ["47677", "47602", "47678", "47905", "47909", "47905"],
            "disease": ["flu", "cold", "flu", "hiv", "cold", "flu"],
        }
    )
    schema = Schema.from_roles(
        identifying=["name"],
        quasi_identifying=["age", "zip"],
        sensitive=["disease"],
        hierarchies={"age": AGE, "zip": ZIP},
        types={"age": "integer"},
    )
    return df, schema


def test_result_and_json_keys(tmp_path):
    df, schema = _small()
    res = sdckit.anonymize(df, schema, [KAnonymity(2)], suppression_limit=0.0)
    assert list(res.to_dict()) == list(anon_module.JSON_KEYS)
    assert set(res.metrics) == set(anon_module.METRIC_KEYS)
    assert res.verified and res.models_satisfied == ["2-anonymity"]
    assert "name" not in res.data.columns  # identifying column dropped
    assert res.transformation is not None and res.nodes_checked >= 1
    counts = res.data.groupby(["age", "zip"], observed=True).size()
    assert counts.min() >= 2
    assert res.risk_before["records"] == 6 and res.risk_after["prosecutor"]["max"] <= 0.5
    json.dumps(res.to_dict())
    page = anonymization_report(res).write_html(tmp_path / "r.html").read_text()
    assert "Solution space" in page and "2-anonymity" in page and "Information loss" in page


def test_pseudonymized_identifier_kept(monkeypatch, tmp_path):
    df, schema = _small()
    monkeypatch.setenv("SDCKIT_TEST_KEY", "0123456789abcdef0123")
    schema = schema.with_attribute(
        Attribute("name", Role.IDENTIFYING, pseudonymize={"key_env": "SDCKIT_TEST_KEY"})
    )
    res = sdckit.anonymize(df, schema, [KAnonymity(2)])
    assert list(res.data.columns) == ["name", "age", "zip", "disease"]
    tokens = res.data["name"].tolist()
    assert len(set(tokens)) == 6 and all(len(t) == 16 for t in tokens)
    assert not set(tokens) & set(df["name"])
    page = anonymization_report(res).write_html(tmp_path / "r.html").read_text()
    assert "still personal data" in page and "recital 26" in page


@pytest.mark.parametrize(
    ("kwargs", "error", "pattern"),
    [
        ({"suppression_limit": 1.5}, ConfigError, "between 0 and 1"),
        ({"suppression_limit": -0.1}, ConfigError, "between 0 and 1"),
        ({"algorithm": "simulated-annealing"}, ConfigError, "optimal, mondrian"),
    ],
)
def test_bad_arguments(kwargs, error, pattern):
    df, schema = _small()
    with pytest.raises(error, match=pattern):
        sdckit.anonymize(df, schema, [KAnonymity(2)], **kwargs)


def test_bad_models():
    df, schema = _small()
    with pytest.raises(ConfigError, match="'income' is not a column"):
        sdckit.anonymize(df, schema, [LDiversity("income", 2)])
    with pytest.raises(ConfigError, match=r"larger than the number of records \(6\)"):
        sdckit.anonymize(df, schema, [KAnonymity(7)])
    with pytest.raises(ConfigError, match="'k' must be >= 1"):
        sdckit.anonymize(df, schema, [KAnonymity(0)])


def test_missing_hierarchy_says_which_builder():
    df, schema = _small()
    schema = schema.with_attribute(Attribute("age", Role.QUASI_IDENTIFYING, DataType.INTEGER))
    with pytest.raises(HierarchyError, match=r"'age'.*interval_hierarchy"):
        sdckit.anonymize(df, schema, [KAnonymity(2)])
    with pytest.raises(DataError, match="'zip'"):
        sdckit.anonymize(df.drop(columns="zip"), schema, [KAnonymity(2)])


def test_no_solution_is_input_error():
    df, schema = _small()
    # whole-data entropy of disease (3 flu, 2 cold, 1 hiv) is that of 2.75 values: reachable
    # by distinct count (3 values), but no transformation reaches entropy 2.9 at 0%
    with pytest.raises(NoSolutionError, match="closest transformation") as info:
        sdckit.anonymize(df, schema, [LDiversity("disease", 2.9, "entropy"), KAnonymity(2)])
    assert isinstance(info.value, SdcInputError)
    with pytest.raises(NoSolutionError, match="only 3 distinct value.*lower l to at most 3"):
        sdckit.anonymize(df, schema, [LDiversity("disease", 4), KAnonymity(2)])


def test_verification_catches_a_wrong_release(monkeypatch):
    """An algorithm that claims success but releases a unique record: VerificationError."""
    df, schema = _small()

    def broken(data, schema, models, **kwargs):
        out = data.copy()
        share = {q: np.full(len(data), 0.5) for q in schema.quasi_identifiers}
        return AlgorithmOutput(out, share, np.zeros(len(data), dtype=bool), {"age": 0, "zip": 0})

    monkeypatch.setattr(anon_module, "_resolve", lambda name: broken)
    with pytest.raises(VerificationError, match="2-anonymity"):
        sdckit.anonymize(df, schema, [KAnonymity(2)])


@pytest.mark.slow
def test_adult_t_closeness_release_is_verified():
    df, h = load_adult()
    qi = [c for c in df.columns if c != "occupation"]
    schema = Schema.from_roles(quasi_identifying=qi, sensitive=["occupation"], hierarchies=h)
    res = sdckit.anonymize(
        df, schema, [KAnonymity(5), TCloseness("occupation", 0.2)], suppression_limit=0.05
    )
    assert res.verified and res.suppressed_records <= int(0.05 * len(df))
    # independent check with pandas: every released class is 0.2-close (equal distance:
    # half the L1 distance to the distribution of occupation over all records)
    overall = df["occupation"].value_counts(normalize=True)
    released = res.data[(res.data[qi] != "*").any(axis=1)]
    assert len(released) == len(df) - res.suppressed_records
    shares = released.groupby(qi, observed=True)["occupation"].value_counts(normalize=True)
    table = shares.unstack(fill_value=0.0).reindex(columns=overall.index, fill_value=0.0)
    distance = 0.5 * (table - overall).abs().sum(axis=1)
    assert distance.max() <= 0.2 + 1e-12


def _without_timing(summary: dict) -> dict:
    """The summary flattened to ``path -> value`` (for pytest.approx), timing left out."""
    flat: dict = {}

    def walk(value, path: str) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, f"{path}.{k}")
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, f"{path}[{i}]")
        else:
            flat[path] = value

    walk({k: v for k, v in summary.items() if k != "elapsed_seconds"}, "")
    return flat


@pytest.mark.parametrize(
    ("algorithm", "limit", "with_missing"),
    [("optimal", 0.0, False), ("optimal", 0.05, True), ("datafly", 0.05, False)],
)
def test_risk_before_and_after_equal_the_analysis_of_the_rows(algorithm, limit, with_missing):
    # the risk is read from the classes the search and the verification counted; it must be
    # what sdckit.analyze says of the input and of the released rows (suppressed and missing
    # values a category of their own)
    from sdckit.risk.analyze import analyze

    df, h = load_adult()
    df = df.iloc[:3000].reset_index(drop=True)
    if with_missing:  # a missing value the hierarchy knows: "" under "*"
        df = df.copy()
        df.loc[::97, "race"] = ""
        h = dict(h)
        h["race"] = Hierarchy([[leaf, "*"] for leaf in [*h["race"].leaves, ""]], name="race")
    qis = ["sex", "age", "race", "education", "marital-status"]
    schema = Schema.from_roles(quasi_identifying=qis, hierarchies={q: h[q] for q in qis})
    res = sdckit.anonymize(
        df, schema, [KAnonymity(3)], suppression_limit=limit, algorithm=algorithm
    )
    before = analyze(df[qis], qis, measures=[], missing="category").summary
    after = analyze(res.data, qis, measures=[], missing="category").summary
    assert _without_timing(res.risk_before) == pytest.approx(_without_timing(before))
    assert _without_timing(res.risk_after) == pytest.approx(_without_timing(after))
    assert res.risk_before["missing_values"]["records_with_missing_key"] == (
        len(range(0, 3000, 97)) if with_missing else 0
    )
