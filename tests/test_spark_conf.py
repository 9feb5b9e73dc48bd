"""Spark settings from the command line (``--spark-conf KEY=VALUE``) and the executors'
Python (``spark.pyspark.python``, checked to import sdckit before the first stage).

A Spark session is one per process, so the runs that need their own settings start the CLI
in a subprocess (a JVM each: slow, kept few).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

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


def _run_cli(tmp_path: Path, conf: dict, options: list[str], command: str = "mask") -> dict:
    """``sdckit mask`` (or ``analyze``) on local[2] in a fresh process, then the settings of
    the session it used: the CLI's exit code and output, the SparkContext's conf and
    ``PYSPARK_PYTHON``."""
    pd.DataFrame({"x": [1, 2, 3, 4, 5, 6], "g": list("aabbcc")}).to_csv(
        tmp_path / "in.csv", index=False
    )
    job = {
        "input": "in.csv",
        "engine": "spark",
        "spark": {"conf": {"spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1", **conf}},
        **JOBS[command],
        "output": {"path": "out.csv", "json": "s.json"},
    }
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(job))
    args = [command, "-c", str(tmp_path / "job.yaml"), "-q", *options]
    script = (
        "import json, os, sys\n"
        "from typer.testing import CliRunner\n"
        "from sdckit.cli import app\n"
        f"res = CliRunner().invoke(app, {args!r})\n"
        "from pyspark import SparkContext\n"
        "sc = SparkContext._active_spark_context\n"
        "conf = dict(sc.getConf().getAll()) if sc is not None else {}\n"
        "print(json.dumps({'exit': res.exit_code, 'output': res.output, 'conf': conf,\n"
        "                  'python': os.environ.get('PYSPARK_PYTHON')}))\n"
    )
    env = {**os.environ, "SDCKIT_SPARK_LOG": str(tmp_path / "spark.log")}
    env.pop("PYSPARK_PYTHON", None)
    res = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300
    )
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout.strip().splitlines()[-1])


def test_spark_conf_reaches_the_session_and_names_the_executors_python(tmp_path):
    pytest.importorskip("pyspark")
    found = _run_cli(
        tmp_path,
        {"spark.sql.shuffle.partitions": 1},
        ["--spark-conf", "spark.sql.shuffle.partitions=3",
         "--spark-conf", f"spark.pyspark.python={sys.executable}"],
    )  # fmt: skip
    assert found["exit"] == 0, found["output"]
    assert found["conf"]["spark.sql.shuffle.partitions"] == "3"  # the command line wins
    assert found["python"] == sys.executable
    assert (tmp_path / "out.csv").exists()  # (a folder of parts on Spark)


def test_executors_without_sdckits_needs_are_refused_with_the_fix(tmp_path):
    """A Python without numpy, pandas, pyarrow (a fresh venv without packages) named in the
    job file: exit 2 naming it, the missing module and both fixes; nothing written."""
    pytest.importorskip("pyspark")
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "bare")], check=True
    )
    bare = str(tmp_path / "bare" / "bin" / "python")
    found = _run_cli(tmp_path, {"spark.pyspark.python": bare}, [])
    said = " ".join(found["output"].split())
    assert found["exit"] == 2, said
    assert f"the Spark executors' Python '{bare}'" in said
    assert "cannot import 'numpy'" in said or "cannot import 'sdckit'" in said, said
    assert "--spark-conf spark.pyspark.python=/path/to/python-with-sdckit" in said
    assert (
        "spark.archives=env.tar.gz#env --spark-conf spark.pyspark.python=./env/bin/python" in said
    )
    assert not (tmp_path / "out.csv").exists()


def test_a_job_without_python_on_the_executors_is_not_checked(tmp_path):
    """``analyze`` runs only Spark's built-ins on the executors: the same bare Python does
    not stop it (and is not started)."""
    pytest.importorskip("pyspark")
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(tmp_path / "bare")], check=True
    )
    bare = str(tmp_path / "bare" / "bin" / "python")
    found = _run_cli(tmp_path, {"spark.pyspark.python": bare}, [], command="analyze")
    assert found["exit"] == 0, found["output"]
    assert found["python"] == bare
    assert json.loads((tmp_path / "s.json").read_text())["engine"] == "spark"
