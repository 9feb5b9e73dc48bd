"""The Spark engine: frequency sets, analyze and anonymize equal the local engine's.

Every test runs on Spark in local[2] (the ``spark`` fixture; skipped without PySpark/Java).
The engines must agree exactly: same classes in the same order, same risk summary, same
optimum, metrics and released rows (as a multiset; Spark does not keep the row order).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from sdckit import anonymize
from sdckit.cli import app
from sdckit.core.frequency import frequency_set
from sdckit.core.hierarchy import read_hierarchy
from sdckit.core.io import read_table
from sdckit.core.schema import Schema
from sdckit.datasets import load_adult
from sdckit.errors import (
    ConfigError,
    DataError,
    NoSolutionError,
    SdcInputError,
    VerificationError,
)
from sdckit.models import KAnonymity, LDiversity, TCloseness
from sdckit.risk.analyze import analyze
from spark_support import assert_same_anonymization, no_time, released_rows, same_rows

pytest.importorskip("pyspark")

RUNNER = CliRunner()
ADULT = load_adult()
QI8 = [c for c in ADULT.data.columns if c != "occupation"]


def _assert_same_frequency_set(a, b) -> None:
    assert a.names == b.names
    assert np.array_equal(a.keys, b.keys)
    assert np.array_equal(a.counts, b.counts)
    for q, p in zip(a.quasi_identifiers, b.quasi_identifiers, strict=True):
        assert list(q.values) == list(p.values)
    assert set(a.sensitive) == set(b.sensitive)
    for name in a.sensitive:
        assert (a.sensitive[name] != b.sensitive[name]).nnz == 0
        assert list(a.sensitive_values[name]) == list(b.sensitive_values[name])
    if a.weights is None:
        assert b.weights is None
    else:
        np.testing.assert_allclose(a.weights, b.weights, rtol=1e-12)


@pytest.fixture(scope="module")
def adult_sdf(spark):
    from sdckit.spark.io import read_spark

    return read_spark(spark, ADULT.path)


# -- frequency sets ------------------------------------------------------------------------
def test_base_frequency_set_equals_local_on_adult(adult_sdf):
    from sdckit.spark.frequency import base_frequency_set

    qis = ["age", "sex", "race", "education", "marital-status"]
    hier = {q: ADULT.hierarchies[q] for q in qis if q != "race"}  # one QI without hierarchy
    sens = ["occupation", "salary-class"]
    local = frequency_set(ADULT.data, qis, sens, hier)
    remote = base_frequency_set(adult_sdf, qis, sens, hier)
    _assert_same_frequency_set(local, remote)
    assert remote.base_row_class is None  # counted classes map no rows
    # roll-ups of the counted set equal the local ones (what the search reads)
    levels = (2, 1, 0, 1, 1)
    _assert_same_frequency_set(local.rollup(levels), remote.rollup(levels))


def test_typed_parquet_values_get_the_local_text(spark, tmp_path):
    """Integers, floats with missing values and integral floats are matched as the local
    engine's canonical text (39.0 -> "39", NaN/null -> ""), so codes and labels agree."""
    from sdckit.spark.frequency import base_frequency_set
    from sdckit.spark.io import read_spark

    df = pd.DataFrame(
        {
            "a": pd.array([1, 2, None, 2, 1, 3], dtype="Int64"),
            "b": [39.0, 39.5, np.nan, 40.0, 39.0, 41.0],
            "c": ["x", "y", None, "x", "", "y"],
            "w": [1.5, 2.0, 3.0, 1.0, 2.5, 4.0],
        }
    )
    path = tmp_path / "typed.parquet"
    df.to_parquet(path, index=False)
    local = frequency_set(pd.read_parquet(path), ["a", "b", "c"], weights="w")
    remote = base_frequency_set(read_spark(spark, path), ["a", "b", "c"], weights="w")
    _assert_same_frequency_set(local, remote)
    assert list(remote.quasi_identifiers[1].values) == ["", "39", "39.5", "40", "41"]


def test_bad_weight_names_the_value(spark):
    from sdckit.spark.frequency import base_frequency_set

    sdf = spark.createDataFrame(pd.DataFrame({"a": ["1", "2"], "w": ["3", "-1"]}))
    with pytest.raises(DataError, match=r"weight column 'w' must hold positive numbers.*'-1'"):
        base_frequency_set(sdf, ["a"], weights="w")


def test_too_many_classes_says_how_many_and_what_to_do(spark):
    from sdckit.spark.frequency import base_frequency_set

    sdf = spark.createDataFrame(pd.DataFrame({"a": [str(i % 150) for i in range(600)]}))
    with pytest.raises(DataError, match=r"has 150 distinct combinations of a.*fewer quasi"):
        base_frequency_set(sdf, ["a"], max_classes=100)


def test_unknown_hierarchy_value_is_the_local_error(spark):
    from sdckit.spark.frequency import base_frequency_set

    df = ADULT.data.head(50).copy()
    df.loc[3, "sex"] = "Other"
    with pytest.raises(SdcInputError) as local:
        frequency_set(df, ["sex"], hierarchies={"sex": ADULT.hierarchies["sex"]})
    with pytest.raises(SdcInputError) as remote:
        base_frequency_set(
            spark.createDataFrame(df), ["sex"], hierarchies={"sex": ADULT.hierarchies["sex"]}
        )
    assert str(remote.value) == str(local.value)


# -- analyze -------------------------------------------------------------------------------
def test_analyze_equals_local_on_adult(spark, adult_sdf):
    from sdckit.spark.analyze import analyze_spark

    qis = ["age", "sex", "race", "education", "marital-status", "native-country"]
    local = analyze(ADULT.data, qis, sensitive=["occupation"], sampling_fraction=0.01)
    remote = analyze_spark(adult_sdf, qis, sensitive=["occupation"], sampling_fraction=0.01)
    assert no_time(remote.summary) == no_time(local.summary)
    assert np.array_equal(remote.class_risk, local.class_risk)
    # a population table (journalist and marketer risk against it)
    sample = ADULT.data.iloc[:4000]
    local = analyze(sample, qis, population=ADULT.data, measures=[])
    remote = analyze_spark(spark.createDataFrame(sample), qis, population=adult_sdf, measures=[])
    assert no_time(remote.summary) == no_time(local.summary)
    assert remote.summary["journalist"] != remote.summary["prosecutor"]


@pytest.mark.parametrize("missing", ["wildcard", "category"])
def test_analyze_equals_local_on_sdcmicro_testdata_with_weights(spark, shared_data, missing):
    """sdcMicro's testdata: individual risk with sampling weights, missing keys (wildcard)."""
    from sdckit.spark.analyze import analyze_spark
    from sdckit.spark.io import read_spark

    path = shared_data / "sdcmicro" / "sdcMicro_testdata.csv"
    keys = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
    local = analyze(read_table(path), keys, weight="sampling_weight", missing=missing)
    remote = analyze_spark(read_spark(spark, path), keys, weight="sampling_weight", missing=missing)
    assert no_time(remote.summary) == no_time(local.summary)
    assert "individual_risk" in remote.summary


def test_household_risk_is_refused_on_spark(adult_sdf):
    from sdckit.spark.analyze import analyze_spark

    with pytest.raises(DataError, match="household risk needs each member's record"):
        analyze_spark(adult_sdf, ["sex"], weight="age", household="race")


# -- anonymize ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "models, limit",
    [
        ([KAnonymity(5), LDiversity("occupation", 2)], 0.05),
        ([TCloseness("occupation", 0.2)], 0.05),
    ],
    ids=["k5-l2-5%", "t0.2-5%"],
)
def test_anonymize_equals_local_on_adult(adult_sdf, tmp_path, models, limit):
    from sdckit.spark.anonymize import anonymize_spark

    schema = Schema.from_roles(
        quasi_identifying=QI8, sensitive=["occupation"], hierarchies=ADULT.hierarchies
    )
    local = anonymize(ADULT.data, schema, models, suppression_limit=limit)
    out = tmp_path / "released.parquet"
    remote = anonymize_spark(adult_sdf, schema, models, out, suppression_limit=limit)
    assert_same_anonymization(local, remote, out)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporaries


def test_a_release_that_fails_the_recount_is_not_written(adult_sdf, tmp_path, monkeypatch):
    """Break the distributed application (no suppression): the recount of the written files
    catches it and the folder never appears."""
    import sdckit.spark.anonymize as sa

    real = sa.release_frame

    def unsuppressed(data, columns, base, solution, counted):
        solution.violating[:] = False
        return real(data, columns, base, solution, counted)

    monkeypatch.setattr(sa, "release_frame", unsuppressed)
    schema = Schema.from_roles(quasi_identifying=QI8, hierarchies=ADULT.hierarchies)
    out = tmp_path / "released.csv"
    with pytest.raises(VerificationError, match="does not satisfy 5-anonymity"):
        sa.anonymize_spark(adult_sdf, schema, [KAnonymity(5)], out, suppression_limit=0.05)
    assert list(tmp_path.iterdir()) == []


def test_spark_refuses_what_it_cannot_do(adult_sdf, tmp_path):
    from sdckit.spark.anonymize import anonymize_spark

    schema = Schema.from_roles(quasi_identifying=QI8, hierarchies=ADULT.hierarchies)
    with pytest.raises(ConfigError, match="engine spark runs the optimal search"):
        anonymize_spark(adult_sdf, schema, [KAnonymity(5)], tmp_path / "x", algorithm="mondrian")
    with pytest.raises(NoSolutionError):
        anonymize_spark(adult_sdf, schema, [KAnonymity(40000)], tmp_path / "x")
    assert list(tmp_path.iterdir()) == []


# -- job files and the command line ---------------------------------------------------------
def _demo_job(tmp_path: Path, **changes) -> Path:
    src = Path(ADULT.path).parent
    doc = yaml.safe_load((src / "adult_demo_job.yaml").read_text())
    doc["input"]["path"] = str(ADULT.path)
    for spec in doc["attributes"].values():
        if "hierarchy" in spec:
            spec["hierarchy"] = str(src / spec["hierarchy"])
    doc.update(changes)
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_job_file_with_engine_spark_end_to_end(spark, tmp_path):
    """`sdckit anonymize --config` with `engine: spark` writes the verified folder, the report
    and the JSON; the local job on the same file gives the same summary and rows; `sdckit
    analyze --config` reads the same job (QIs and sensitive attribute from its roles)."""
    out = {"path": "released.csv", "report": "report.html", "json": "report.json",
           "delimiter": ";"}  # fmt: skip
    job = _demo_job(tmp_path, engine="spark", output=out)
    res = RUNNER.invoke(app, ["anonymize", "--config", str(job), "--quiet"])
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "report.json").read_text())
    assert summary["engine"] == "spark" and summary["verified"] is True
    assert (tmp_path / "report.html").read_text().count("sdckit anonymization") >= 1
    local_dir = tmp_path / "local"
    local_dir.mkdir()
    local_job = _demo_job(local_dir, output={"path": "released.csv", "delimiter": ";"})
    res = RUNNER.invoke(
        app, ["anonymize", "-c", str(local_job), "-q", "--json", str(local_dir / "l.json")]
    )
    assert res.exit_code == 0, res.output
    local = json.loads((local_dir / "l.json").read_text())
    assert same_rows(
        pd.read_csv(local_dir / "released.csv", sep=";", dtype=str, keep_default_na=False),
        released_rows(tmp_path / "released.csv", ";"),
    )
    for key in ("transformation", "suppressed_records", "metrics", "models_satisfied"):
        assert summary[key] == local[key], key
    assert no_time(summary["risk_after"]) == no_time(local["risk_after"])
    # analyze from the same job file, both engines
    res = RUNNER.invoke(
        app, ["analyze", "--config", str(job), "--json", str(tmp_path / "risk.json"), "-q"]
    )
    assert res.exit_code == 0, res.output
    res = RUNNER.invoke(
        app,
        ["analyze", "--config", str(job), "--engine", "local", "-q",
         "--json", str(tmp_path / "risk_local.json")],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    risk = json.loads((tmp_path / "risk.json").read_text())
    risk_local = json.loads((tmp_path / "risk_local.json").read_text())
    assert risk.pop("engine") == "spark" and risk_local.pop("engine") == "local"
    assert no_time(risk) == no_time(risk_local)
    assert risk["quasi_identifiers"] == [
        c for c in yaml.safe_load(job.read_text())["attributes"] if c != "occupation"
    ]


def test_cli_errors_exit_2_with_a_message(spark, tmp_path):
    job = _demo_job(tmp_path, engine="spark", algorithm="mondrian",
                    output={"path": "released.parquet"})  # fmt: skip
    res = RUNNER.invoke(app, ["anonymize", "--config", str(job)])
    assert res.exit_code == 2
    assert "engine spark runs the optimal search" in res.output
    res = RUNNER.invoke(app, ["anonymize", "--config", str(job), "--engine", "cluster"])
    assert res.exit_code == 2 and "--engine must be local or spark" in res.output
    assert not (tmp_path / "released.parquet").exists()


_AGE = {"interval": {"widths": [10, 20], "bottom": 0}}
_ANON = {
    "attributes": {
        "age": {"role": "quasi_identifying", "type": "integer", "hierarchy": _AGE},
        "sex": {"role": "quasi_identifying", "hierarchy": {"masking": {}}},
        "diag": {"role": "sensitive"},
        "name": {"role": "identifying"},
    },
    "models": [{"k_anonymity": {"k": 5}}],
}
_TABLE = {"dimensions": {"region": {}, "sex": {}}, "response": "income",
          "rules": [{"frequency": {"threshold": 3}}]}  # fmt: skip


def _bad(command: str, base: dict, change: Callable[[dict], None]) -> tuple[str, dict]:
    doc = json.loads(json.dumps(base))
    change(doc)
    return command, doc


def _set(path: str, value) -> Callable[[dict], None]:
    def change(doc: dict) -> None:
        *parents, last = path.split(".")
        node = doc
        for p in parents:
            node = node[p]
        node[last] = value

    return change


#: Bad spark jobs, each refused before Spark starts: (command, job, what the message says).
BAD_SPARK_JOBS = {
    "profitability model": (
        *_bad("anonymize", _ANON, _set("models", [{"profitability_prosecutor": {}}])),
        "is not available on the Spark engine",
    ),
    "publisher payout metric": (
        *_bad("anonymize", _ANON, _set("metric", "publisher_payout")),
        "metric publisher_payout is not available on the Spark engine",
    ),
    "model parameter": (
        *_bad("anonymize", _ANON, _set("models", [{"k_anonymity": {"k": 0}}])),
        "models[0].k_anonymity.k must be >= 1, got 0",
    ),
    "attribute column": (
        *_bad(
            "anonymize", _ANON, lambda d: d["attributes"].update(agee=d["attributes"].pop("age"))
        ),
        "attributes.agee: column 'agee' is not in the input",
    ),
    "builder parameter": (
        *_bad("anonymize", _ANON, _set("attributes.age.hierarchy", {"interval": {"widths": [-5]}})),
        "attributes.age.hierarchy.interval: widths[0] = -5.0 must be a positive number",
    ),
    "quasi-identifier without hierarchy": (
        *_bad("anonymize", _ANON, lambda d: d["attributes"]["sex"].pop("hierarchy")),
        "attributes.sex: quasi-identifier 'sex' has no hierarchy",
    ),
    "algorithm option": (
        *_bad("anonymize", _ANON, _set("options", {"bogus": 1})),
        "unknown option 'bogus'",
    ),
    "sensitive quasi-identifier": (
        *_bad("anonymize", _ANON, _set("models", [{"l_diversity": {"attribute": "age", "l": 2}}])),
        "attribute 'age' is a quasi-identifier in the schema",
    ),
    "analyzed attribute": (
        *_bad("analyze", _ANON, lambda d: d["attributes"].update(agee=d["attributes"].pop("age"))),
        "attributes.agee: column 'agee' is not in the input",
    ),
    "method column": (
        "mask",
        {"methods": [{"noise": {"columns": ["incme"]}}]},
        "methods[0].noise: column(s) 'incme' not found; available columns: age, sex, region",
    ),
    "strata column": (
        "mask",
        {"methods": [{"microaggregation": {"columns": ["income"], "k": 3, "strata": ["regio"]}}]},
        "methods[0].microaggregation: column(s) 'regio' not found",
    ),
    "dropped identifier": (
        "mask",
        {
            "attributes": {"name": {"role": "identifying"}},
            "methods": [{"pram": {"columns": ["name"]}}],
        },
        "methods[0].pram.columns: column 'name' is an identifying attribute",
    ),
    "rule parameter": (
        *_bad("table", _TABLE, _set("rules", [{"dominance": {"n": 1, "k": 185}}])),
        "rules[0].dominance.k must be <= 100, got 185",
    ),
    "dimension column": (
        *_bad("table", _TABLE, _set("dimensions.regon", {})),
        "dimensions.regon: column 'regon' is not in the input",
    ),
    "response column": (
        *_bad("table", _TABLE, _set("response", "incomee")),
        "column 'incomee' is not in the data",
    ),
    "table method": (
        *_bad("table", _TABLE, _set("method", "optimall")),
        "unknown table method 'optimall'",
    ),
}


@pytest.fixture
def no_spark(monkeypatch):
    """Starting Spark fails the test (an internal error, exit 1, naming it)."""
    import sdckit.spark.session as session

    def refuse(*args, **kwargs):
        raise AssertionError("Spark was started")

    monkeypatch.setattr(session, "spark_session", refuse)


@pytest.mark.parametrize("case", list(BAD_SPARK_JOBS))
def test_a_bad_spark_job_is_refused_before_spark_starts(case, tmp_path, no_spark):
    command, doc, fragment = BAD_SPARK_JOBS[case]
    rng = np.random.default_rng(1)
    pd.DataFrame(
        {"age": rng.integers(18, 90, 50), "sex": rng.choice(["f", "m"], 50),
         "region": rng.choice(list("nsew"), 50), "income": rng.integers(1000, 9000, 50),
         "diag": rng.choice(["a", "b"], 50), "name": [f"p{i}" for i in range(50)]}
    ).to_csv(tmp_path / "in.csv", index=False)  # fmt: skip
    out = {"cells": "c.csv"} if command == "table" else {"path": "out.csv"}
    job = {"input": "in.csv", "engine": "spark", **doc, "output": {**out, "json": "s.json"}}
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(job))
    res = RUNNER.invoke(app, [command, "--config", str(tmp_path / "job.yaml"), "-q"])
    assert res.exit_code == 2, res.output
    assert fragment in " ".join(res.output.split())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "job.yaml"]


def test_analyze_on_spark_checks_the_quasi_identifiers_before_spark_starts(tmp_path, no_spark):
    pd.DataFrame({"age": [30, 40], "sex": ["f", "m"]}).to_csv(tmp_path / "in.csv", index=False)
    args = ["analyze", str(tmp_path / "in.csv"), "--engine", "spark", "-q"]
    res = RUNNER.invoke(app, [*args, "--qi", "age,sexx"])
    assert res.exit_code == 2 and "'sexx'" in res.output, res.output
    res = RUNNER.invoke(app, [*args, "--qi", "age,sex", "--household", "sex"])
    assert res.exit_code == 2 and "household risk needs each member's record" in res.output


def test_a_good_spark_job_does_start_spark(tmp_path, no_spark):
    """The counterpart: the checks pass, and the job asks for Spark (the refusal above is
    the checks', not a job that never gets to Spark)."""
    pd.DataFrame({"x": [1, 2, 3], "g": ["a", "b", "c"]}).to_csv(tmp_path / "in.csv", index=False)
    job = {"input": "in.csv", "engine": "spark", "output": {"json": "s.json"},
           "methods": [{"rounding": {"columns": ["x"], "base": 2}}]}  # fmt: skip
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(job))
    res = RUNNER.invoke(app, ["mask", "--config", str(tmp_path / "job.yaml"), "-q"])
    assert res.exit_code == 1 and "Spark was started" in res.output


def test_a_quiet_spark_run_prints_nothing_and_spark_logs_to_its_file(tmp_path):
    """`sdckit mask -q` on Spark in a fresh process: nothing from Spark, log4j or the JVM
    (banner, warnings, incubator notice) reaches the terminal; it is in the Spark log."""
    import os
    import subprocess
    import sys

    pd.DataFrame({"x": [1, 2, 3, 4, 5, 6], "g": list("aabbcc")}).to_csv(
        tmp_path / "in.csv", index=False
    )
    job = {
        "input": "in.csv",
        "engine": "spark",
        "spark": {
            "conf": {
                "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1",
                "spark.sql.shuffle.partitions": 1,
                "spark.sql.codegen.wholeStage": False,
            }
        },
        "methods": [{"rounding": {"columns": ["x"], "base": 2}}],
        "output": {"path": "out.csv", "json": "s.json"},
    }
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(job))
    env = {**os.environ, "SDCKIT_SPARK_LOG": str(tmp_path / "spark.log")}
    cli = [sys.executable, "-c", "from sdckit.cli import main; main()"]
    res = subprocess.run(
        [*cli, "mask", "-c", str(tmp_path / "job.yaml"), "-q"],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    assert (res.stdout, res.stderr) == ("", "")
    assert json.loads((tmp_path / "s.json").read_text())["engine"] == "spark"
    assert (tmp_path / "spark.log").is_file()  # where the JVM's output went


# -- the ARX benchmark cases: identical optima on both engines --------------------------------
def _arx_cases(shared_data: Path):
    adult = read_table(shared_data / "arx" / "adult.csv", delimiter=";")
    adult_h = {
        c: read_hierarchy(shared_data / "arx" / f"adult_hierarchy_{c}.csv", name=c)
        for c in adult.columns
    }
    cup = read_table(shared_data / "arx" / "cup.csv", delimiter=";")
    cup_h = {
        c: read_hierarchy(shared_data / "arx" / f"cup_hierarchy_{c}.csv", name=c)
        for c in cup.columns
    }
    for name, df, hier, sensitive in (
        ("adult", adult, adult_h, "occupation"),
        ("cup", cup, cup_h, "MINRAMNT"),
    ):
        qis = [c for c in df.columns if c != sensitive]
        schema = Schema.from_roles(quasi_identifying=qis, sensitive=[sensitive], hierarchies=hier)
        for label, models in (
            ("k=5", lambda s=sensitive: [KAnonymity(5)]),
            ("l=3", lambda s=sensitive: [LDiversity(s, 3)]),
            ("t=0.2", lambda s=sensitive: [TCloseness(s, 0.2)]),
            ("k=5+l=2", lambda s=sensitive: [KAnonymity(5), LDiversity(s, 2)]),
        ):
            for limit in (0.0, 0.05):
                yield f"{name} {label} {limit:.0%}", df, schema, models, limit


@pytest.mark.slow
def test_arx_benchmark_optima_identical_between_engines(spark, shared_data):
    """Adult and Cup x {k=5, l=3, t=0.2, k=5+l=2} x {0%, 5%}: the 16 benchmark cases give the
    same optimum (or the same absence of one) from the Spark-counted frequency set."""
    from sdckit.algorithms.optimal import optimal, solve
    from sdckit.spark.frequency import base_frequency_set
    from sdckit.utility.generalization import parse_metric

    bases: dict[int, object] = {}
    for name, df, schema, make, limit in _arx_cases(shared_data):
        key = id(df)
        if key not in bases:
            sens = schema.sensitive
            bases[key] = base_frequency_set(
                spark.createDataFrame(df), schema.quasi_identifiers, sens,
                {q: schema.hierarchy(q) for q in schema.quasi_identifiers},
            )  # fmt: skip
        base = bases[key]
        try:
            local = optimal(df, schema, make(), suppression_limit=limit)
        except NoSolutionError:
            models = make()
            for m in models:
                m.prepare(base)
            with pytest.raises(NoSolutionError):
                solve(base, models, limit, parse_metric("loss"))
            continue
        models = make()
        for m in models:
            m.prepare(base)
        remote = solve(base, models, limit, parse_metric("loss"))
        assert remote.transformation == local.transformation, name
        assert remote.suppressed_records == local.suppressed_records, name
        assert remote.details["metrics"] == local.details["metrics"], name


def test_a_relative_input_path_is_this_process_s_folder(spark, tmp_path, monkeypatch) -> None:
    """A relative local path is read from this process's folder, not from the folder the
    JVM of a joined session was started in (a notebook that changed folder; the docs'
    Spark page, whose commands join one session)."""
    from sdckit.spark.io import read_spark

    monkeypatch.chdir(tmp_path)
    pd.DataFrame({"a": ["x", "y"], "b": ["1", "2"]}).to_csv("rel.csv", index=False)
    pd.DataFrame({"a": ["x"]}).to_parquet("rel.parquet")
    assert sorted(r["a"] for r in read_spark(spark, "rel.csv").collect()) == ["x", "y"]
    assert read_spark(spark, "rel.parquet").count() == 1
