"""Spark settings from the command line (``--spark-conf KEY=VALUE``)."""

from __future__ import annotations

import time

import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from sdckit.cli import app
from sdckit.errors import ConfigError
from sdckit.jobs.config import job_from_dict, spark_conf_options

RUNNER = CliRunner()

#: One small job per command that takes --spark-conf (the options are checked first).
JOBS = {
    "mask": {"methods": [{"rounding": {"columns": ["x"], "base": 2}}]},
    "anonymize": {
        "attributes": {"g": {"role": "quasi_identifying", "hierarchy": {"masking": {}}}},
        "models": [{"k_anonymity": {"k": 2}}],
    },
    "table": {"dimensions": {"g": {}}, "response": "x"},
    "analyze": {"qi": ["g"]},
}


def test_spark_conf_options_split_at_the_first_equals_sign():
    assert spark_conf_options(["a.b=1", "c= x=y ", "a.b=2"]) == {"a.b": "2", "c": " x=y "}
    for bad in ("spark.executor.memory", "=4g", " =4g"):
        with pytest.raises(ConfigError, match="KEY=VALUE"):
            spark_conf_options([bad])


def test_with_engine_merges_the_command_line_over_the_job_file(tmp_path):
    doc = {"input": "in.csv", "spark": {"master": "local[1]", "conf": {"a": 1, "b": "x"}}}
    job = job_from_dict(doc, base_dir=tmp_path)
    spark = job.with_engine("spark", None, ["b=y", "c=z"]).spec.spark
    assert (spark.master, spark.conf) == ("local[1]", {"a": 1, "b": "y", "c": "z"})
    spark = job.with_engine(None, "local[3]", ["a=2"]).spec.spark
    assert (spark.master, spark.conf) == ("local[3]", {"a": "2", "b": "x"})
    assert job.with_engine(None, None, []) is job


@pytest.fixture
def no_spark(monkeypatch):
    """Starting Spark fails the test (an internal error, exit 1, naming it)."""
    import sdckit.spark.session as session

    def refuse(*args, **kwargs):
        raise AssertionError("Spark was started")

    monkeypatch.setattr(session, "spark_session", refuse)


@pytest.mark.parametrize("command", list(JOBS))
@pytest.mark.parametrize("value", ["spark.executor.memory", "=4g"])
def test_a_malformed_spark_conf_exits_2_before_spark_starts(command, value, tmp_path, no_spark):
    pd.DataFrame({"x": [1, 2, 3, 4], "g": list("aabb")}).to_csv(tmp_path / "in.csv", index=False)
    doc = {"input": "in.csv", "engine": "spark", **JOBS[command], "output": {"json": "s.json"}}
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(doc))
    runs = [[command, "--config", str(tmp_path / "job.yaml")]]
    if command == "analyze":  # also without a job file
        runs.append(["analyze", str(tmp_path / "in.csv"), "--qi", "g", "--engine", "spark"])
    for args in runs:
        start = time.perf_counter()
        res = RUNNER.invoke(app, [*args, "--spark-conf", "a=1", "--spark-conf", value, "-q"])
        took = time.perf_counter() - start
        assert res.exit_code == 2, res.output
        said = " ".join(res.output.split())
        assert f"--spark-conf {value!r}" in said and "KEY=VALUE" in said, said
        assert "--spark-conf spark.executor.memory=4g" in said
        assert took < 1.0, took
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "job.yaml"]
