"""SPSS, Stata and SAS microdata in and out (the ``formats`` extra): labels, missing values,
weights, through the reader, the writer and the commands."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from sdckit.cli import app
from sdckit.core.formats import FileMeta, file_meta
from sdckit.core.io import read_table, write_table
from sdckit.errors import DataError

pyreadstat = pytest.importorskip("pyreadstat")

RUNNER = CliRunner()
SEX_LABELS = {1: "male", 2: "female"}
REGION_LABELS = {1: "North", 2: "South", 3: "East", 4: "West"}  # West never occurs


def _survey(n: int = 300, seed: int = 7) -> pd.DataFrame:
    """Codes as a statistical office keeps them: sex 1/2, age in years, region 1-3, weights."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "sex": rng.integers(1, 3, n).astype(float),
            "age": rng.integers(18, 90, n).astype(float),
            "region": rng.integers(1, 4, n).astype(float),
            "weight": rng.uniform(10, 500, n).round(4),
        }
    )


COLUMN_LABELS = {"age": "Age in years", "weight": "Survey weight", "sex": "Sex"}


def _stata(path: Path) -> pd.DataFrame:
    df = _survey()
    pyreadstat.write_dta(
        df,
        str(path),
        column_labels=COLUMN_LABELS,
        variable_value_labels={"sex": SEX_LABELS, "region": REGION_LABELS},
    )
    return df


def _spss(path: Path) -> pd.DataFrame:
    df = _survey()
    df.loc[[0, 5, 9], "age"] = 99.0  # "no answer", declared user-missing
    pyreadstat.write_sav(
        df,
        str(path),
        column_labels=COLUMN_LABELS,
        variable_value_labels={"sex": SEX_LABELS, "region": REGION_LABELS},
        missing_ranges={"age": [99]},
    )
    return df


def test_a_labelled_stata_file_reads_as_its_labels(tmp_path: Path) -> None:
    raw = _stata(tmp_path / "s.dta")
    df = read_table(tmp_path / "s.dta")
    assert set(df["sex"]) == {"male", "female"}
    assert (df["sex"] == raw["sex"].map({1.0: "male", 2.0: "female"})).all()
    np.testing.assert_array_equal(df["weight"], raw["weight"])
    meta = file_meta(df)
    assert meta is not None and meta.format == "dta"
    assert meta.column_labels == COLUMN_LABELS
    assert meta.value_labels["sex"] == SEX_LABELS
    assert {"sex", "age", "region", "weight"} <= meta.numeric


def test_spss_user_missing_codes_are_missing(tmp_path: Path) -> None:
    _spss(tmp_path / "s.sav")
    df = read_table(tmp_path / "s.sav")
    assert df["age"].isna().sum() == 3 and not (df["age"] == 99).any()
    assert file_meta(df).missing_ranges == {"age": [{"lo": 99.0, "hi": 99.0}]}  # type: ignore[union-attr]


def test_an_unlabelled_code_stays_its_number(tmp_path: Path) -> None:
    df = pd.DataFrame({"sex": [1.0, 2.0, 3.0, np.nan], "x": [1.0, 2.0, 3.0, 4.0]})
    pyreadstat.write_sav(df, str(tmp_path / "u.sav"), variable_value_labels={"sex": SEX_LABELS})
    got = read_table(tmp_path / "u.sav")["sex"]
    assert got.iloc[:3].tolist() == ["male", "female", "3"] and pd.isna(got.iloc[3])


def test_sas_transport_and_spss_portable_read(tmp_path: Path) -> None:
    df = _survey(20)
    pyreadstat.write_xport(df, str(tmp_path / "s.xpt"), column_labels={"age": "Age in years"})
    got = read_table(tmp_path / "s.xpt")
    np.testing.assert_array_equal(got["age"], df["age"])
    assert file_meta(got).column_labels == {"age": "Age in years"}  # type: ignore[union-attr]
    pyreadstat.write_por(df, str(tmp_path / "s.por"))
    assert len(read_table(tmp_path / "s.por")) == 20


def test_generalized_values_are_written_as_labelled_codes(tmp_path: Path) -> None:
    df = pd.DataFrame(
        {
            "sex": ["male", "*", "female", "male"],
            "age": ["20-39", "5-19", None, "40-59"],
            "city": ["a", "b", "", "a"],
            "w": [1.5, 2.0, 3.0, 4.0],
        }
    )
    meta = FileMeta(
        format="dta",
        column_labels={"age": "Age in years"},
        value_labels={"sex": {1: "male", 2: "female", 3: "other"}},
        numeric={"sex", "age", "w"},
    )
    write_table(df, tmp_path / "o.dta", meta=meta)
    back, m = pyreadstat.read_dta(str(tmp_path / "o.dta"))
    # original labels keep their codes; only the categories that remain are labelled
    assert m.variable_value_labels["sex"] == {1: "male", 2: "female", 4: "*"}
    assert back["sex"].tolist() == [1.0, 4.0, 2.0, 1.0]
    # a generalized number column: codes 1..n in natural order, the intervals as labels
    assert m.variable_value_labels["age"] == {1: "5-19", 2: "20-39", 3: "40-59"}
    assert back["age"].iloc[[0, 1, 3]].tolist() == [2.0, 1.0, 3.0] and np.isnan(back["age"][2])
    assert back["city"].tolist() == ["a", "b", "", "a"]  # a string variable
    assert m.column_names_to_labels["age"] == "Age in years"
    assert back["w"].tolist() == [1.5, 2.0, 3.0, 4.0]


def test_csv_input_written_as_spss_keeps_numbers_numeric(tmp_path: Path) -> None:
    (tmp_path / "in.csv").write_text("a,b\n1,x\n2.5,y\n,z\n", encoding="utf-8")
    write_table(read_table(tmp_path / "in.csv"), tmp_path / "o.zsav")
    back, _ = pyreadstat.read_sav(str(tmp_path / "o.zsav"))
    assert back["a"].iloc[:2].tolist() == [1.0, 2.5] and np.isnan(back["a"][2])
    assert back["b"].tolist() == ["x", "y", "z"]


def test_sas7bdat_cannot_be_written(tmp_path: Path) -> None:
    with pytest.raises(DataError, match=r"\.xpt"):
        write_table(_survey(5), tmp_path / "o.sas7bdat")
    assert not list(tmp_path.iterdir())  # nothing left behind


def _job(tmp_path: Path, data: str, release: str) -> Path:
    doc = {
        "input": data,
        "attributes": {
            "sex": {"role": "quasi_identifying", "hierarchy": {"order": {"group_sizes": [2]}}},
            "age": {
                "role": "quasi_identifying",
                "type": "integer",
                "hierarchy": {"interval": {"widths": [20, 40], "bottom": 0}},
            },
            "region": {"role": "quasi_identifying", "hierarchy": {"order": {"group_sizes": [4]}}},
        },
        "models": [{"k_anonymity": {"k": 5}}],
        "suppression_limit": 0.1,
        "output": {"path": release, "json": "report.json", "report": "report.html"},
    }
    job = tmp_path / "job.yaml"
    job.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return job


@pytest.mark.parametrize(("data", "release"), [("in.dta", "release.dta"), ("in.sav", "r.sav")])
def test_anonymize_writes_the_release_in_the_inputs_format(
    tmp_path: Path, data: str, release: str
) -> None:
    raw = (_stata if data.endswith(".dta") else _spss)(tmp_path / data)
    res = RUNNER.invoke(app, ["anonymize", "--config", str(_job(tmp_path, data, release))])
    assert res.exit_code == 0, res.output
    reader = pyreadstat.read_dta if release.endswith(".dta") else pyreadstat.read_sav
    back, meta = reader(str(tmp_path / release))
    labels = meta.variable_value_labels
    # the remaining categories keep their codes and labels; West (never used) is gone
    assert set(labels["sex"].values()) - {"*"} <= {"male", "female"}
    kept = back["sex"].isin([1.0, 2.0])
    assert (back["sex"][kept] == raw["sex"][kept]).all()
    assert "West" not in labels.get("region", {}).values()
    # age generalized: labelled codes whose labels are the intervals
    assert all(("[" in v and ")" in v) or v == "*" for v in labels["age"].values())
    assert set(back["age"].dropna()) <= set(labels["age"])
    assert meta.column_names_to_labels["age"] == "Age in years"
    assert meta.column_names_to_labels["weight"] == "Survey weight"
    np.testing.assert_array_equal(back["weight"].to_numpy(), raw["weight"].to_numpy())
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert "Age in years" in html  # the variable labels beside the attributes
    if release.endswith(".sav"):  # the user-missing ages: missing (or suppressed), declared
        ages = back["age"].iloc[[0, 5, 9]]
        assert all(np.isnan(a) or labels["age"][a] == "*" for a in ages)
        assert 99.0 not in set(back["age"])
        _, declared = pyreadstat.read_sav(str(tmp_path / release), user_missing=True)
        assert declared.missing_ranges["age"] == [{"lo": 99.0, "hi": 99.0}]


def test_analyze_counts_spss_user_missing_as_missing(tmp_path: Path) -> None:
    _spss(tmp_path / "s.sav")
    out = tmp_path / "risk.json"
    res = RUNNER.invoke(
        app,
        ["analyze", str(tmp_path / "s.sav"), "--qi", "sex,age,region", "--json", str(out)],
    )
    assert res.exit_code == 0, res.output
    summary = json.loads(out.read_text(encoding="utf-8"))
    assert summary["records"] == 300
    assert summary["missing_values"]["records_with_missing_key"] == 3


def test_without_pyreadstat_the_message_names_the_extra(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _stata(tmp_path / "s.dta")
    monkeypatch.setitem(sys.modules, "pyreadstat", None)  # import pyreadstat -> ImportError
    with pytest.raises(DataError, match=r"s\.dta.*pip install 'sdckit\[formats\]'"):
        read_table(tmp_path / "s.dta")
    with pytest.raises(DataError, match=r"sdckit\[formats\]"):
        write_table(_survey(5), tmp_path / "o.sav")
    assert not (tmp_path / "o.sav").exists()


def test_the_spark_engine_refuses_these_files(tmp_path: Path) -> None:
    from sdckit.spark.io import input_columns

    _stata(tmp_path / "s.dta")
    with pytest.raises(DataError, match="convert it to Parquet first"):
        input_columns(tmp_path / "s.dta")


def test_the_workbench_uploads_a_labelled_file(tmp_path: Path) -> None:
    pytest.importorskip("fastapi")
    pytest.importorskip("python_multipart")
    from fastapi.testclient import TestClient

    from sdckit.ui.app import create_app
    from sdckit.ui.projects import ProjectStore, preview

    token = "test-token-0123456789"
    client = TestClient(create_app(tmp_path / "ui", token=token), base_url="http://127.0.0.1")
    assert client.get(f"/?token={token}", follow_redirects=False).status_code == 303
    _spss(tmp_path / "survey.sav")
    body = (tmp_path / "survey.sav").read_bytes()
    r = client.post("/projects/upload", files={"file": ("survey.sav", body)})
    assert r.status_code in (200, 303), r.text
    (folder,) = (tmp_path / "ui" / "projects").iterdir()
    project = json.loads((folder / "project.json").read_text(encoding="utf-8"))
    assert project["columns"] == ["sex", "age", "region", "weight"]
    shown = preview(ProjectStore(tmp_path / "ui").get(folder.name))
    assert set(shown["sex"]) == {"male", "female"} and shown["age"].isna().sum() == 3


def test_a_spark_job_refuses_such_a_release_before_spark_starts(tmp_path: Path) -> None:
    from sdckit.jobs.config import load_job

    (tmp_path / "in.csv").write_text("age,x\n23,1\n45,2\n", encoding="utf-8")
    doc = {
        "input": "in.csv",
        "engine": "spark",
        "attributes": {
            "age": {
                "role": "quasi_identifying",
                "type": "integer",
                "hierarchy": {"interval": {"widths": [20], "bottom": 0}},
            }
        },
        "models": [{"k_anonymity": {"k": 2}}],
        "output": {"path": "release.dta"},
    }
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    with pytest.raises(DataError, match="output.path .* cannot write .* Parquet"):
        load_job(tmp_path / "job.yaml").open().check_anonymization()


def test_labelled_input_written_as_csv_and_parquet_without_warning(tmp_path: Path) -> None:
    """The labels an input carries (``attrs["file_meta"]``, not JSON) are not handed to
    pyarrow, which would warn that it cannot store them; the values are the labels."""
    import warnings

    pd.DataFrame({"a": [1.0, 2.0], "b": ["x", "y"]}).pipe(
        lambda df: pyreadstat.write_sav(
            df, str(tmp_path / "s.sav"), variable_value_labels={"a": {1: "one", 2: "two"}}
        )
    )
    data = read_table(tmp_path / "s.sav")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        write_table(data, tmp_path / "o.csv")
        write_table(data, tmp_path / "o.parquet")
    assert (tmp_path / "o.csv").read_text() == "a,b\none,x\ntwo,y\n"
    assert pd.read_parquet(tmp_path / "o.parquet")["a"].tolist() == ["one", "two"]
    assert file_meta(data) is not None  # the input keeps its labels
