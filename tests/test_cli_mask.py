"""Tests: ``sdckit mask`` (run_mask_job + CLI): outputs, report contents, bad input -> exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from sdckit.cli import app
from sdckit.evaluation.masking_summary import column_changes, numeric_evaluation
from sdckit.jobs.mask import run_mask_job

runner = CliRunner()


def _data(n: int = 40) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    return pd.DataFrame(
        {
            "name": [f"person {i}" for i in range(n)],
            "pid": [f"P{i:04d}" for i in range(n)],
            "income": rng.integers(1000, 9000, n),
            "age": rng.integers(18, 90, n),
            "zip": [f"0{v}" for v in rng.integers(1000, 9999, n)],
            "region": rng.choice(["north", "south", "east"], n),
            "const": 7,
        }
    )


def _job(tmp_path: Path, methods: list, **extra) -> Path:
    _data().to_csv(tmp_path / "in.csv", index=False)
    doc = {
        "input": "in.csv",
        "attributes": {"name": {"role": "identifying"}},
        "methods": methods,
        "output": {"path": "out/masked.csv", "report": "out/report.html"},
        "seed": 5,
        **extra,
    }
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def _squeeze(text: str) -> str:
    """Text without any whitespace (Rich wraps long error lines, even inside paths)."""
    return "".join(text.split())


def _invoke(path: Path, *args: str):
    return runner.invoke(app, ["mask", "--config", str(path), *args])


def test_mask_cli_writes_outputs_and_report(tmp_path):
    job = _job(
        tmp_path,
        [
            {"microaggregation": {"columns": ["income", "age"], "k": 4}},
            {"pram": {"columns": ["region"], "p_diagonal": 0.7}},
        ],
    )
    res = _invoke(job, "--json", str(tmp_path / "s.json"))
    assert res.exit_code == 0, res.output
    out = pd.read_csv(tmp_path / "out/masked.csv", dtype={"zip": str})
    assert "name" not in out.columns  # identifying attribute dropped
    assert out["zip"].str.startswith("0").all()  # codes with leading zeros stay text
    assert out.groupby(["income", "age"]).size().min() >= 4
    summary = json.loads((tmp_path / "s.json").read_text())
    assert summary["identifiers"] == {"dropped": ["name"], "pseudonymized": []}
    assert [m["method"] for m in summary["methods"]] == ["mdav", "pram"]
    assert summary["methods"][1]["details"]["region"]["matrix"][0][0] == pytest.approx(0.7)
    inc = summary["columns"][0]
    orig = _data()["income"]
    assert inc["column"] == "income" and inc["kind"] == "numeric"
    assert inc["mean before"] == pytest.approx(orig.mean())
    assert inc["mean after"] == pytest.approx(orig.mean())  # group means keep the mean
    assert inc["sd before"] == pytest.approx(orig.std(ddof=1))
    assert inc["max before"] == orig.max() and inc["distinct before"] == orig.nunique()
    ev = summary["numeric_evaluation"]
    assert ev["columns"] == ["income", "age"] and 0 <= ev["dbrl"] <= 1
    assert ev["il_sse_sst"] == pytest.approx(
        summary["methods"][0]["details"]["groups"][0]["information_loss"]
    )
    html = (tmp_path / "out/report.html").read_text()
    for text in (
        "Step 1: mdav",
        "Step 2: pram",
        "p_diagonal",
        "Columns before and after",
        "Category frequencies",
        "IL1s",
        "record linkage",
    ):
        assert text in html


def test_mask_is_reproducible_with_the_seed(tmp_path):
    job = _job(tmp_path, [{"rank_swapping": {"columns": ["income"], "p_percent": 20}}])
    assert _invoke(job, "-q").exit_code == 0
    first = (tmp_path / "out/masked.csv").read_text()
    assert _invoke(job, "-q").exit_code == 0
    assert (tmp_path / "out/masked.csv").read_text() == first
    out = pd.read_csv(tmp_path / "out/masked.csv")
    assert sorted(out["income"]) == sorted(_data()["income"])  # marginal kept exactly
    assert not out["income"].equals(_data()["income"])


def test_pseudonymized_identifier_and_parquet_output(tmp_path, monkeypatch):
    monkeypatch.setenv("SDCKIT_TEST_KEY", "k" * 32)
    job = _job(
        tmp_path,
        [{"rounding": {"columns": ["income"], "base": 100}}],
        attributes={"pid": {"role": "identifying", "pseudonymize": {"key_env": "SDCKIT_TEST_KEY"}}},
        output={"path": "out/masked.parquet"},
    )
    res = run_mask_job(job)
    out = pd.read_parquet(tmp_path / "out/masked.parquet")
    assert res.summary["identifiers"] == {"dropped": [], "pseudonymized": ["pid"]}
    assert out["pid"].str.fullmatch(r"[0-9a-f]{16}").all()
    assert (out["income"] % 100 == 0).all() and "name" in out.columns
    assert set(res.written) == {"data"}


BAD = [
    ({"noise": {"columns": ["region"]}}, "column 'region'"),
    ({"microaggregation": {"columns": ["income"], "k": 41}}, "k=41 is larger than the 40 rows"),
    ({"rank_swapping": {"columns": ["income"], "p_percent": 0}}, "p_percent"),
    ({"rank_swapping": {"columns": ["income"], "p_percent": 101}}, "p_percent must be <= 100"),
    (
        {
            "pram": {
                "columns": ["region"],
                "matrix": {
                    "north": {"north": 0.9, "south": 0.2},
                    "south": {"south": 1.0},
                    "east": {"east": 1},
                },
            }
        },
        "north",
    ),
    (
        {
            "pram": {
                "columns": ["region"],
                "matrix": {"north": {"north": 1.0}, "south": {"south": 1.0}},
            }
        },
        "east",
    ),
    ({"microaggregation": {"columns": ["income", "const"], "k": 3}}, "'const'"),
    ({"microaggregation": {"columns": ["income"], "method": "kmeans"}}, "must be one of mdav"),
    ({"sampling": {"fraction": 0.5, "strata": ["nosuch"]}}, "nosuch"),
]


@pytest.mark.parametrize(("method", "fragment"), BAD)
def test_bad_input_exit_2_names_the_problem_and_writes_nothing(tmp_path, method, fragment):
    job = _job(
        tmp_path,
        [{"rounding": {"columns": ["age"], "base": 5}}, method],
        output={"path": "out/masked.csv", "report": "out/r.html", "json": "out/r.json"},
    )
    res = _invoke(job)
    assert res.exit_code == 2, res.output
    assert "methods[1]" in _squeeze(res.output)
    assert _squeeze(fragment) in _squeeze(res.output)
    assert not (tmp_path / "out").exists()


def test_job_without_methods_is_a_config_error(tmp_path):
    job = _job(tmp_path, [])
    res = _invoke(job)
    assert res.exit_code == 2 and "atleastonemethod" in _squeeze(res.output)


def test_missing_job_file_exit_2(tmp_path):
    res = _invoke(tmp_path / "nope.yaml")
    assert res.exit_code == 2 and "doesnotexist" in _squeeze(res.output)


def test_column_changes_hand_values():
    before = pd.DataFrame({"x": [1.0, 2.0, 3.0, 6.0], "c": ["a", "a", "b", "c"]})
    after = pd.DataFrame({"x": [1.5, 1.5, 4.5, 4.5], "c": ["a", "b", "b", "b"]})
    num, cats = column_changes(before, after, ["x", "c"])
    assert num[0]["mean before"] == 3.0 and num[0]["mean after"] == 3.0
    assert num[0]["sd after"] == pytest.approx(np.sqrt(3.0))  # deviations +-1.5, ddof 1
    assert num[0]["distinct before"] == 4 and num[0]["distinct after"] == 2
    assert num[1] == {
        "column": "c",
        "kind": "categorical",
        "distinct before": 3,
        "distinct after": 2,
        "missing before": 0,
        "missing after": 0,
    }
    assert cats[0] == {"column": "c", "category": "b", "before": 1, "after": 3, "change": 2}
    assert {r["category"]: r["change"] for r in cats} == {"b": 2, "a": -1, "c": -1}


def test_numeric_evaluation_hand_values_and_sampled_rows():
    before = pd.DataFrame({"x": [0.0, 1.0, 2.0, 3.0]}, index=[10, 11, 12, 13])
    same = numeric_evaluation(before, before.copy(), ["x"])
    assert same["il1s"] == 0.0 and same["il_sse_sst"] == 0.0 and same["dbrl"] == 1.0
    # a subsample keeps the original index: compared row by row with its originals
    sub = before.loc[[11, 13]] + 0.0
    ev = numeric_evaluation(before, sub, ["x"])
    assert ev["records"] == 2 and ev["il1s"] == 0.0
    masked = pd.DataFrame({"x": [1.0, 0.0, 3.0, 2.0]}, index=before.index)  # pairs swapped
    ev = numeric_evaluation(before, masked, ["x"])
    sd = before["x"].std(ddof=1)
    assert ev["il1s"] == pytest.approx(1 / (np.sqrt(2) * sd))  # every |diff| = 1
    assert ev["il_sse_sst"] == pytest.approx(100 * 4 / 5)  # SSE 4, SST 5 (raw scale)
    assert ev["dbrl"] == 0.0


def test_method_naming_a_dropped_identifier_is_a_config_error(tmp_path):
    job = _job(tmp_path, [{"data_swapping": {"columns": ["region"], "match_columns": ["name"]}}])
    res = _invoke(job)
    assert res.exit_code == 2
    assert _squeeze("methods[0].data_swapping.match_columns: column 'name' is an identifying") in (
        _squeeze(res.output)
    )
    assert not (tmp_path / "out").exists()


def test_numeric_evaluation_samples_intruders_on_large_files():
    rng = np.random.default_rng(0)
    before = pd.DataFrame({"x": rng.normal(size=500), "y": rng.normal(size=500)})
    ev_all = numeric_evaluation(before, before.copy(), ["x", "y"], linkage_records=None)
    ev = numeric_evaluation(before, before.copy(), ["x", "y"], linkage_records=50, seed=1)
    assert ev_all["dbrl_intruder_records"] == 500 and ev["dbrl_intruder_records"] == 50
    assert ev["dbrl"] == ev_all["dbrl"] == 1.0  # unmasked: every record links to itself
    assert ev == numeric_evaluation(before, before.copy(), ["x", "y"], linkage_records=50, seed=1)


def test_missing_cells_integers_kept_and_evaluation_on_complete_rows(tmp_path):
    (tmp_path / "in.csv").write_text("a,b,c\n1,2.5,x\n,3.5,y\n3,,x\n4,1.0,\n5,2.0,y\n6,7.0,x\n")
    (tmp_path / "job.yaml").write_text(
        yaml.safe_dump(
            {
                "input": "in.csv",
                "methods": [
                    {"rank_swapping": {"columns": ["a"], "p_percent": 50}},
                    {"pram": {"columns": ["c"], "p_diagonal": 0.5}},
                ],
                "output": {"path": "out.csv"},
                "seed": 1,
            }
        )
    )
    res = run_mask_job(tmp_path / "job.yaml")
    text = (tmp_path / "out.csv").read_text().splitlines()
    a = [line.split(",")[0] for line in text[1:]]
    assert a[1] == "" and sorted(a[:1] + a[2:]) == ["1", "3", "4", "5", "6"]  # ints stay ints
    assert res.data["c"].isna().tolist() == [False, False, False, True, False, False]
    ev = res.summary["numeric_evaluation"]
    assert ev["columns"] == ["a"] and ev["records"] == 5 and ev["records_left_out_missing"] == 1
    c = next(r for r in res.summary["columns"] if r["column"] == "c")
    assert c["missing before"] == 1 and c["missing after"] == 1  # PRAM leaves missing alone


def test_integer_like():
    from sdckit.masking.base import integer_like

    ints = pd.Series([1, 2, 3])
    assert integer_like(ints, np.array([3.0, 1.0, 2.0])).dtype == np.int64
    got = integer_like(ints, np.array([3.0, np.nan, 2.0]))
    assert str(got.dtype) == "Int64" and got.isna().tolist() == [False, True, False]
    assert integer_like(ints, np.array([1.5, 2.0, 3.0])).dtype == np.float64
    assert integer_like(pd.Series([1.0, 2.0]), np.array([1.0, 2.0])).dtype == np.float64


def test_config_errors_name_the_job_file_and_suggest(tmp_path):
    job = _job(tmp_path, [{"rank_swapping": {"columns": ["income"], "p_percnt": 5}}])
    res = _invoke(job)
    assert res.exit_code == 2
    text = _squeeze(res.output)
    assert _squeeze("job.yaml': methods[0].rank_swapping: unknown parameter 'p_percnt'") in text
    assert _squeeze("did you mean 'p_percent'?") in text


def test_mask_reports_the_share_of_released_records_equal_to_an_original(tmp_path):
    """The attack: a masking that leaves most records as they were was reported without
    saying so. Top-coding age at 60 changes only the records above 60 (pid is unique, so a
    changed record equals no original): the others are released as collected."""
    methods = [{"top_bottom_coding": {"columns": ["age"], "top": 60}}]
    unchanged = int((_data()["age"] <= 60).sum())
    job = _job(tmp_path, methods, output={"report": "out/r.html", "json": "out/s.json"})
    res = runner.invoke(app, ["mask", "--config", str(job)])
    assert res.exit_code == 0, res.output
    assert f"equal to an original record: {unchanged / 40:.1%}" in res.output
    assert "warning:" in res.output
    o = json.loads((tmp_path / "out/s.json").read_text())["original_records"]
    assert (o["records"], o["equal_to_original"]) == (40, unchanged)
    assert o["share"] == unchanged / 40 and 0.1 < o["share"] < 1
    assert "name" not in o["columns"] and "pid" in o["columns"]
    assert o["warning"].startswith(f"{unchanged / 40:.1%} of the released records")
    html = (tmp_path / "out/r.html").read_text()
    assert "Warning: released records equal to original records" in html
    job = _job(
        tmp_path, methods, output={"report": "out/r.html", "json": "out/s.json"},
        options={"original_share_warning": 1.0},
    )  # fmt: skip
    assert runner.invoke(app, ["mask", "--config", str(job)]).exit_code == 0
    o = json.loads((tmp_path / "out/s.json").read_text())["original_records"]
    assert o["warning"] is None and o["threshold"] == 1.0
    assert "Warning: released records" not in (tmp_path / "out/r.html").read_text()
    assert "Released records equal to original records" in (tmp_path / "out/r.html").read_text()
    for options, fragment in (
        ({"original_share_warning": 2}, "options.original_share_warning"),
        ({"k": 3}, "options.k"),
    ):
        job = _job(tmp_path, methods, options=options)
        res = runner.invoke(app, ["mask", "--config", str(job)])
        assert res.exit_code == 2 and fragment in res.output, res.output


def test_text_columns_typed_from_their_distinct_values():
    # each distinct value is parsed once; the rules stay: numbers with missing tokens become
    # Int64/float64, a leading zero or one non-number keeps text, an empty cell is missing
    import pandas as pd

    from sdckit.jobs.mask import _typed

    class NoRoles:
        attributes: dict = {}

    frame = pd.DataFrame(
        {
            "a": ["1", "2", " 3", "NA", None, ""],
            "b": ["01", "2", "3", "4", "5", "6"],
            "c": ["x", "", " ", "NA", None, "y"],
            "d": ["1.5", "2", "?", ".", "nan", "7"],
            "g": ["1", "2", "3", "4", "5", "6"],
        },
        dtype=object,
    )
    out = _typed(frame, NoRoles())
    assert str(out["a"].dtype) == "Int64" and out["a"].tolist()[:3] == [1, 2, 3]
    assert out["a"].isna().tolist() == [False, False, False, True, True, True]
    assert out["b"].tolist() == ["01", "2", "3", "4", "5", "6"]
    assert out["c"].isna().tolist() == [False, True, True, False, True, False]
    assert out["c"][3] == "NA"
    assert out["d"].dtype == "float64" and out["d"].isna().sum() == 3
    assert out["g"].dtype == "int64" and out["g"].sum() == 21
