"""The attack-model table (Fung, Wang, Chen & Yu 2010, Table II) and its use: every model
has a row, coverage of model lists, the analyze and anonymize JSON and HTML."""

from __future__ import annotations

import importlib
import inspect
import json
import pkgutil
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

import sdckit.models
from sdckit.cli import app
from sdckit.datasets import data_dir
from sdckit.errors import ParameterError
from sdckit.jobs.spec import MODEL_NAMES
from sdckit.models import KAnonymity, LDiversity, LKCPrivacy
from sdckit.models.attacks import ATTACK_TABLE, ATTACKS, attack_coverage
from sdckit.models.base import PrivacyModel
from sdckit.risk.analyze import measured_models

RL, AL, TL, PA = ATTACKS

#: Table II of the survey (the rows sdckit copies from it).
SURVEY_TABLE_II = {
    "k_anonymity": {RL},
    "multir_k_anonymity": {RL},
    "l_diversity": {RL, AL},
    "confidence_bounding": {AL},
    "alpha_k_anonymity": {RL, AL},
    "xy_privacy": {RL, AL},
    "ke_anonymity": {AL},
    "epsilon_m_anonymity": {AL},
    "personalized_privacy": {AL},
    "t_closeness": {AL, PA},
    "delta_presence": {TL},
    "ct_isolation": {RL, PA},
    "differential_privacy": {TL, PA},
    "dgamma_privacy": {TL, PA},
    "distributional_privacy": {TL, PA},
}
#: Models being added by other engineers while this table was written.
ANNOUNCED = (
    "alpha_k_anonymity",
    "confidence_bounding",
    "beta_likeness",
    "delta_disclosure",
    "ke_anonymity",
    "epsilon_m_anonymity",
    "personalized_privacy",
    "multir_k_anonymity",
    "xy_privacy",
)


def _model_classes() -> dict[str, type]:
    """Every PrivacyModel subclass with a spec_name in the modules of sdckit.models."""
    found: dict[str, type] = {}
    for info in pkgutil.iter_modules(sdckit.models.__path__):
        module = importlib.import_module(f"sdckit.models.{info.name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            name = getattr(cls, "spec_name", None)
            if issubclass(cls, PrivacyModel) and isinstance(name, str) and name:
                found[name] = cls
    return found


def test_every_job_model_has_a_row() -> None:
    missing = [name for name in MODEL_NAMES if name not in ATTACK_TABLE]
    assert not missing, f"add these models to sdckit.models.attacks.ATTACK_TABLE: {missing}"


def test_every_model_class_has_a_row() -> None:
    classes = _model_classes()
    assert "k_anonymity" in classes and "lkc" in classes  # the scan finds models
    missing = sorted(set(classes) - set(ATTACK_TABLE))
    assert not missing, f"add these models to sdckit.models.attacks.ATTACK_TABLE: {missing}"


def test_announced_models_have_rows() -> None:
    assert all(name in ATTACK_TABLE for name in ANNOUNCED)


def test_survey_rows() -> None:
    for name, attacks in SURVEY_TABLE_II.items():
        row = ATTACK_TABLE[name]
        assert set(row.attacks) == attacks, name
        assert "Table II" in row.source


def test_rows_outside_the_survey() -> None:
    expected = {
        "k_map": {RL},
        "lkc": {RL, AL},
        "average_risk": {RL},
        "sample_uniqueness": {RL},
        "population_uniqueness": {RL},
        "beta_likeness": {AL, PA},
        "delta_disclosure": {AL, PA},
        "profitability_prosecutor": {RL},
        "profitability_journalist": {RL},
        "profitability_prosecutor_no_attack": {RL},
        "profitability_journalist_no_attack": {RL},
    }
    for name, attacks in expected.items():
        row = ATTACK_TABLE[name]
        assert set(row.attacks) == attacks, name
        assert "Table II" not in row.source and len(row.source) > 40  # its own justification
    assert set(ATTACK_TABLE) == set(SURVEY_TABLE_II) | set(expected)
    for row in ATTACK_TABLE.values():  # each attack once, in the survey's column order
        assert list(row.attacks) == [a for a in ATTACKS if a in row.attacks]


def test_coverage_of_a_model_list() -> None:
    cov = attack_coverage(["k_anonymity", "l_diversity"])
    assert cov["covered"] == [RL, AL]
    assert cov["uncovered"] == [TL, PA]
    assert cov["by_attack"] == {
        RL: ["k_anonymity", "l_diversity"],
        AL: ["l_diversity"],
        TL: [],
        PA: [],
    }
    assert [m["model"] for m in cov["models"]] == ["k_anonymity", "l_diversity"]
    full = attack_coverage(["t_closeness", "delta_presence", "k_anonymity"])
    assert full["uncovered"] == [] and full["covered"] == list(ATTACKS)
    assert attack_coverage([])["uncovered"] == list(ATTACKS)


def test_models_describe_mappings_and_duplicates() -> None:
    k5 = KAnonymity(5)
    cov = attack_coverage([k5, k5.describe(), LDiversity("occupation", 2), "k_anonymity"])
    assert [m["model"] for m in cov["models"]] == ["k_anonymity", "l_diversity"]
    lkc = LKCPrivacy(L=2, K=3, C=0.5)
    assert lkc.describe()["model"] == "lkc_privacy"  # described under its older name
    assert attack_coverage([lkc.describe()])["models"][0]["model"] == "lkc"


@pytest.mark.parametrize(("model", "fragment"), [("k_anonimity", "k_anonymity"), (3, "not a")])
def test_unknown_model(model, fragment) -> None:
    with pytest.raises(ParameterError, match=fragment):
        attack_coverage([model])


# --------------------------------------------------------------------------------------------
# analyze and anonymize
# --------------------------------------------------------------------------------------------
runner = CliRunner()


def test_analyze_json_and_html(tmp_path: Path) -> None:
    src = tmp_path / "d.csv"
    pd.DataFrame({"age": [30, 30, 40, 40, 50], "sex": list("mmffm"), "dx": list("abaab")}).to_csv(
        src, index=False
    )
    js, page = tmp_path / "r.json", tmp_path / "r.html"
    args = ["analyze", str(src), "--qi", "age,sex", "--json", str(js), "--html", str(page), "-q"]
    assert runner.invoke(app, args).exit_code == 0
    cov = json.loads(js.read_text())["attack_coverage"]
    assert [m["model"] for m in cov["models"]] == [
        "k_anonymity",
        "average_risk",
        "sample_uniqueness",
    ]
    assert cov["uncovered"] == [AL, TL, PA]
    assert "Attacks the privacy models defend against" in page.read_text()
    res = runner.invoke(app, [*args, "--sensitive", "dx"])
    assert res.exit_code == 0, res.output
    summary = json.loads(js.read_text())
    cov = summary["attack_coverage"]
    names = [m["model"] for m in cov["models"]]
    assert names == measured_models(summary) and "l_diversity" in names
    assert AL in cov["covered"] and TL in cov["uncovered"]
    assert cov == attack_coverage(names)
    assert "table linkage" in page.read_text().split("Not covered by any of these models:")[1]


def test_measured_models_without_sensitive_attributes() -> None:
    base = ["k_anonymity", "average_risk", "sample_uniqueness"]
    assert measured_models({"records": 5}) == base
    assert measured_models({"population_records": 100}) == [*base, "k_map"]
    shares = {"population_uniques_share": {"dankar": 0.01}}
    assert measured_models(shares) == [*base, "population_uniqueness"]


def test_anonymize_json_and_html(tmp_path: Path) -> None:
    import yaml

    src = data_dir()
    doc = {
        "input": {"path": str(src / "adult.csv"), "delimiter": ";"},
        "attributes": {
            c: {"role": "quasi_identifying", "hierarchy": str(src / f"adult_hierarchy_{c}.csv")}
            for c in ("sex", "race")
        }
        | {"occupation": {"role": "sensitive"}},
        "models": [
            {"k_anonymity": {"k": 5}},
            {"t_closeness": {"attribute": "occupation", "t": 0.5}},
        ],
        "suppression_limit": 0.05,
        "output": {"report": "r.html", "json": "r.json"},
    }
    job = tmp_path / "job.yaml"
    job.write_text(yaml.safe_dump(doc))
    res = runner.invoke(app, ["anonymize", "--config", str(job)])
    assert res.exit_code == 0, res.output
    assert "table linkage" in res.output  # the uncovered attack, in the terminal table
    cov = json.loads((tmp_path / "r.json").read_text())["attack_coverage"]
    assert [m["model"] for m in cov["models"]] == ["k_anonymity", "t_closeness"]
    assert cov["covered"] == [RL, AL, PA] and cov["uncovered"] == [TL]
    page = (tmp_path / "r.html").read_text()
    assert "Attacks the privacy models defend against" in page
    assert "Not covered by any of these models: table linkage." in page


def test_docs_table_agrees() -> None:
    """The compact table of the docs' privacy-models page lists every job model under the
    attacks of its row."""
    import re

    page = Path(__file__).resolve().parents[1] / "docs" / "privacy-models.md"
    text = page.read_text(encoding="utf-8")
    section = text.split("## The attacks, and the models that bound them", 1)[1]
    codes = {"RL": RL, "AL": AL, "TL": TL, "PA": PA}
    listed: dict[str, set[str]] = {}
    for line in section.split("\n## ", 1)[0].splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 2 or not re.fullmatch(r"[A-Z]{2}( \+ [A-Z]{2})*", cells[0]):
            continue
        attacks = {codes[c] for c in cells[0].split(" + ")}
        for name in re.findall(r"`([a-z_]+)`", cells[1]):
            if name in ATTACK_TABLE:
                listed[name] = attacks
    assert set(MODEL_NAMES) <= set(listed)
    for name, attacks in listed.items():
        assert set(ATTACK_TABLE[name].attacks) == attacks, name
