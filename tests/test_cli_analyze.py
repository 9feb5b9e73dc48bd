"""``sdckit analyze`` end to end: JSON keys, HTML page, and bad input."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from sdckit.cli import app
from sdckit.core.hierarchy import Hierarchy
from sdckit.core.schema import Schema
from sdckit.errors import ConfigError, DataError, HierarchyError
from sdckit.models import KAnonymity, check
from sdckit.risk.individual import household_risk, individual_risk

RUNNER = CliRunner()
ADULT_QIS = "sex,age,race,marital-status,education,native-country,workclass,occupation,salary-class"
SDC_KEYS = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]

# The keys ``--json`` promises (scripts rely on them).
BASE_KEYS = {
    "records",
    "equivalence_classes",
    "sample_uniques",
    "sample_uniques_share",
    "prosecutor",
    "journalist",
    "marketer",
    "records_at_risk_share",
    "distinction",
    "separation",
    "suda",
}
RISK_KEYS = {"min", "max", "average"}
SUDA_KEYS = {"records_with_score", "score_sum", "dis_sum"}
POP_KEYS = {"pitman", "zayatz", "snb", "dankar"}
IND_KEYS = {"min", "median", "max", "global_risk", "expected_reidentifications"}


def invoke(*args: str):
    return RUNNER.invoke(app, ["analyze", *map(str, args)])


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def adult_csv(shared_data) -> Path:
    return shared_data / "arx" / "adult.csv"


@pytest.fixture(scope="module")
def testdata_csv(shared_data) -> Path:
    return shared_data / "sdcmicro" / "sdcMicro_testdata.csv"


# ------------------------------------------------------------------ success paths


@pytest.mark.slow
def test_adult_json_keys_values_and_html(adult_csv, tmp_path):
    before = digest(adult_csv)
    js, page = tmp_path / "adult.json", tmp_path / "out" / "adult.html"
    res = invoke(adult_csv, "--qi", ADULT_QIS, "--json", js, "--html", page, "--quiet")
    assert res.exit_code == 0, res.output
    assert res.output == ""  # --quiet
    doc = json.loads(js.read_text())
    assert BASE_KEYS <= set(doc)
    assert not {"population_uniques_share", "individual_risk", "household_risk"} & set(doc)
    assert set(doc["prosecutor"]) == RISK_KEYS and set(doc["journalist"]) == RISK_KEYS
    assert set(doc["suda"]) == SUDA_KEYS
    assert (doc["records"], doc["equivalence_classes"], doc["sample_uniques"]) == (
        30162,
        19502,
        15512,
    )
    assert round(doc["marketer"], 6) == 0.646575
    assert doc["prosecutor"] == {"min": 1 / 45, "max": 1.0, "average": 19502 / 30162}
    # 9 QIs (<= 10): every combination, keyed "A" or "A,B", shares in [0, 1]
    assert len(doc["distinction"]) == len(doc["separation"]) == 2**9 - 1
    assert "sex" in doc["distinction"] and "sex,age" in doc["separation"]
    assert all(0 <= v <= 1 for v in [*doc["distinction"].values(), *doc["separation"].values()])
    assert doc["distinction"][ADULT_QIS.replace(" ", "")] == 19502 / 30162
    assert doc["suda"]["records_with_score"] == 15512  # only sample uniques get a score
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") or html.lstrip().lower().startswith("<!doctype")
    assert "<svg" in html and "Per-record re-identification risk" in html  # the charts
    assert "Re-identification risk" in html and "19,502" in html
    assert digest(adult_csv) == before  # the input is never modified


def test_sdcmicro_testdata_with_weights_households_and_sampling_fraction(testdata_csv, tmp_path):
    js = tmp_path / "t.json"
    res = invoke(
        testdata_csv,
        "--qi",
        ",".join(SDC_KEYS),
        "--weight",
        "sampling_weight",
        "--household",
        "ori_hid",
        "--sampling-fraction",
        "0.01",
        "--json",
        js,
    )
    assert res.exit_code == 0, res.output
    assert "records" in res.output and "4,580" in res.output  # the printed table
    doc = json.loads(js.read_text())
    assert BASE_KEYS | {"population_uniques_share", "individual_risk", "household_risk"} <= set(doc)
    assert POP_KEYS <= set(doc["population_uniques_share"])
    assert all(0 <= doc["population_uniques_share"][k] <= 1 for k in POP_KEYS)
    assert set(doc["individual_risk"]) == IND_KEYS
    assert "expected_reidentifications" in doc["household_risk"]
    # independent: classes from pandas, risk from the Python API on the same codes
    df = pd.read_csv(testdata_csv)
    sizes = df.groupby(SDC_KEYS).size()
    assert doc["records"] == 4580 and doc["equivalence_classes"] == len(sizes) == 412
    assert doc["sample_uniques"] == int((sizes == 1).sum()) == 157
    codes = df[SDC_KEYS].to_numpy()
    ind = individual_risk(codes, df["sampling_weight"].to_numpy(float))
    assert doc["individual_risk"]["expected_reidentifications"] == pytest.approx(
        ind.expected_reidentifications, rel=1e-12
    )
    assert doc["individual_risk"]["expected_reidentifications"] == pytest.approx(
        10.778298918734833, rel=1e-10
    )  # sdcMicro measure_risk on testdata (see test_individual_risk.py)
    hh = household_risk(ind.risk, df["ori_hid"].to_numpy())
    assert doc["household_risk"]["expected_reidentifications"] == pytest.approx(
        hh.expected_reidentifications, rel=1e-12
    )
    # 7 QIs: all 127 combinations
    assert len(doc["distinction"]) == 127


def test_sampling_fraction_only_adds_population_uniqueness(testdata_csv, tmp_path):
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    assert invoke(testdata_csv, "--qi", "urbrur,roof,sex", "--json", a, "-q").exit_code == 0
    res = invoke(testdata_csv, "--qi", "urbrur,roof,sex", "--sampling-fraction", "0.1", "--json", b)
    assert res.exit_code == 0, res.output
    da, db = json.loads(a.read_text()), json.loads(b.read_text())
    assert set(db) - set(da) == {"population_uniques_share", "sampling_fraction"}
    assert POP_KEYS <= set(db["population_uniques_share"])
    for k in BASE_KEYS:
        assert da[k] == db[k]


def test_semicolon_file_with_explicit_delimiter_and_threshold(tmp_path):
    src = tmp_path / "in.csv"
    src.write_text("g;y\nM;1979\nM;1982\nM;1979\nF;1995\nF;1987\nM;1995\n")
    js = tmp_path / "o.json"
    res = invoke(src, "--qi", "g,y", "--delimiter", ";", "--threshold", "0.5", "--json", js)
    assert res.exit_code == 0, res.output
    doc = json.loads(js.read_text())
    # classes (M,1979) x2 and four uniques: risk 1/2 is not above 0.5
    assert doc["equivalence_classes"] == 5 and doc["records_at_risk_share"] == 4 / 6


# ------------------------------------------------------------------ bad input: exit 2, no output


def assert_refused(res, tmp_path: Path, *needles: str) -> None:
    assert res.exit_code == 2, res.output
    text = " ".join(res.output.split())  # rich wraps long lines
    for needle in needles:
        assert needle in text, text
    assert not list(tmp_path.glob("o.*")), "an output was written"
    assert not list(tmp_path.glob(".o.*")), "a temporary file was left behind"


def outputs(tmp_path: Path) -> list[str]:
    return ["--json", str(tmp_path / "o.json"), "--html", str(tmp_path / "o.html")]


def test_unknown_column(adult_csv, tmp_path):
    res = invoke(adult_csv, "--qi", "sex,agee", *outputs(tmp_path))
    assert_refused(res, tmp_path, "'agee' not found", "available columns: sex, age")


def test_unknown_weight_and_household_columns(testdata_csv, tmp_path):
    res = invoke(testdata_csv, "--qi", "urbrur", "--weight", "wgt", *outputs(tmp_path))
    assert_refused(res, tmp_path, "'wgt' not found", "sampling_weight")
    res = invoke(testdata_csv, "--qi", "urbrur", "--weight", "sampling_weight", "--household", "hh")
    assert_refused(res, tmp_path, "household column 'hh' not found")


def test_quasi_identifier_with_no_values(tmp_path):
    src = tmp_path / "in.csv"
    src.write_text("a,b\n1,\n2,\n3,\n")
    res = invoke(src, "--qi", "a,b", *outputs(tmp_path))
    assert_refused(res, tmp_path, "quasi-identifier 'b' has no values", "3 cells are empty")


def test_empty_file_and_header_only(tmp_path):
    src = tmp_path / "in.csv"
    src.write_text("")
    assert_refused(invoke(src, "--qi", "a", *outputs(tmp_path)), tmp_path, "is empty")
    src.write_text("a,b\n")
    assert_refused(invoke(src, "--qi", "a", *outputs(tmp_path)), tmp_path, "has no records")


def test_unparsable_number_in_weight_column(testdata_csv, tmp_path):
    df = pd.read_csv(testdata_csv, dtype=str, keep_default_na=False)
    df.loc[5, "sampling_weight"] = "12,5"
    src = tmp_path / "in.csv"
    df.to_csv(src, index=False)
    res = invoke(src, "--qi", "urbrur,roof", "--weight", "sampling_weight", *outputs(tmp_path))
    assert_refused(res, tmp_path, "weight column 'sampling_weight'", "row 6 has '12,5'")


def test_wrong_delimiter(adult_csv, tmp_path):
    res = invoke(adult_csv, "--qi", "sex,age", "--delimiter", ",", *outputs(tmp_path))
    assert_refused(res, tmp_path, "read as one column", "--delimiter ';'")


def test_undetectable_delimiter(tmp_path):
    src = tmp_path / "in.csv"
    src.write_text("a:b\n1:2\n")  # ':' is not a candidate; one column named 'a:b'
    res = invoke(src, "--qi", "a", *outputs(tmp_path))
    assert_refused(res, tmp_path, "'a' not found")


def test_bad_options(testdata_csv, tmp_path):
    res = invoke(testdata_csv, "--qi", "urbrur", "--sampling-fraction", "2", *outputs(tmp_path))
    assert_refused(res, tmp_path, "--sampling-fraction")
    res = invoke(testdata_csv, "--qi", "urbrur", "--threshold", "0", *outputs(tmp_path))
    assert_refused(res, tmp_path, "--threshold must be in (0, 1]")
    res = invoke(testdata_csv, "--qi", "urbrur", "--household", "ori_hid", *outputs(tmp_path))
    assert_refused(res, tmp_path, "give --weight COL together with --household")
    assert_refused(invoke(testdata_csv, *outputs(tmp_path)), tmp_path, "--qi A,B,C")
    res = invoke(tmp_path / "nope.csv", "--qi", "a", *outputs(tmp_path))
    assert_refused(res, tmp_path, "does not exist")


def test_output_onto_the_input_is_refused(tmp_path):
    src = tmp_path / "in.csv"
    src.write_text("a\n1\n2\n")
    before = src.read_bytes()
    res = invoke(src, "--qi", "a", "--json", src)
    assert res.exit_code == 2 and "the job reads as input" in " ".join(res.output.split())
    assert src.read_bytes() == before


# ------------------------------------------------------------------ bad input via the Python API

TOY = pd.DataFrame({"zip": ["47677", "47602", "47678", "47905"], "age": [29, 22, 27, 43]})


def test_check_hierarchy_lacking_a_value():
    zips = Hierarchy([["47677", "4767*", "*"], ["47602", "4760*", "*"], ["47678", "4767*", "*"]])
    schema = Schema.from_roles(quasi_identifying=["zip", "age"], hierarchies={"zip": zips})
    with pytest.raises(HierarchyError, match=r"1 distinct value\(s\) of column 'zip'.*'47905'"):
        check(TOY, schema, [KAnonymity(2)])


def test_check_k_larger_than_the_data():
    schema = Schema.from_roles(quasi_identifying=["zip", "age"])
    with pytest.raises(ConfigError, match=r"'k' \(5\) is larger than .* \(4\).*choose k <= 4"):
        check(TOY, schema, [KAnonymity(5)])


def test_check_qi_with_no_values_and_unknown_column():
    schema = Schema.from_roles(quasi_identifying=["zip", "age"])
    empty = TOY.assign(age=np.nan)
    with pytest.raises(DataError, match="quasi-identifier 'age' has no values"):
        check(empty, schema, [KAnonymity(2)])
    with pytest.raises(DataError, match=r"'age'.*not in the data"):
        check(TOY[["zip"]], schema, [KAnonymity(2)])


def test_html_page_explains_each_measure(testdata_csv, tmp_path):
    page = tmp_path / "r.html"
    res = invoke(
        testdata_csv,
        "--qi",
        "urbrur,roof,sex",
        "--weight",
        "sampling_weight",
        "--household",
        "ori_hid",
        "--sampling-fraction",
        "0.01",
        "--html",
        page,
        "-q",
    )
    assert res.exit_code == 0, res.output
    html = page.read_text()
    for heading in (
        "Re-identification risk",
        "Population uniqueness (sampling fraction 0.01)",
        "Individual risk with sampling weights (sdcMicro)",
        "SUDA special uniques",
        "Quasi-identifier distinction and separation",
    ):
        assert f"<h2>{heading}</h2>" in html
    assert "risk is 1 / (size of its class)" in html  # the measures are explained
    assert "Dankar et al. decision rule (uses" in html
    assert "expected number of re-identifications" in html
    assert "journalist risk equals prosecutor risk" in html  # no population table given
    assert html.count("<svg") == 1 and "data:image/png" not in html


def test_population_table_gives_journalist_risk(tmp_path):
    sample, population = tmp_path / "s.csv", tmp_path / "p.csv"
    sample.write_text("a\nx\nx\ny\nz\n")
    population.write_text("a\n" + "x\n" * 5 + "y\ny\nz\nw\n")
    js, page = tmp_path / "o.json", tmp_path / "o.html"
    res = invoke(sample, "--qi", "a", "--population", population, "--json", js, "--html", page)
    assert res.exit_code == 0, res.output
    doc = json.loads(js.read_text())
    assert doc["journalist"] == {"min": 0.2, "max": 1.0, "average": (0.2 + 0.2 + 0.5 + 1) / 4}
    assert doc["population_records"] == 9
    assert "journalist risk equals prosecutor risk" not in page.read_text()


def test_help_starts_without_the_numeric_stack():
    # `sdckit CMD --help` imports only CMD's module and neither numpy, pandas nor scipy (cold
    # start: sdckit.cli.build_app with one command), nor pydantic (typer coerces a non-bool
    # value of the root's unset --help flag through a pydantic adapter: sdckit.cli._Group)
    import subprocess
    import sys

    script = (
        "import sys; sys.argv = ['sdckit', 'analyze', '--help']; import sdckit.cli as c\n"
        "try:\n    c.main()\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('numpy', 'pandas', 'scipy', 'numba', 'matplotlib', 'pydantic') "
        "if m in sys.modules]\n"
        "others = [m for m in sys.modules if m.startswith('sdckit.commands.') "
        "and m not in ('sdckit.commands._common', 'sdckit.commands.analyze')]\n"
        "print('HEAVY', heavy, 'OTHERS', others)"
    )
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert "Usage: sdckit analyze" in res.stdout
    assert "HEAVY [] OTHERS []" in res.stdout, res.stdout[-500:]
