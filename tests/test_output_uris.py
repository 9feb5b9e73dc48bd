"""Outputs given as URIs: a ``file://`` URI is written exactly where it names (never under
the job's folder) on both engines, other schemes are refused before any work where the engine
cannot write them (the local engine; Spark's Hadoop file systems: tests/test_remote_outputs.py),
and a failed Spark run leaves nothing at the URIs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from sdckit.cli import app

RUNNER = CliRunner()
_ATTRIBUTES = {
    "age": {"role": "quasi_identifying", "type": "integer",
            "hierarchy": {"interval": {"widths": [10, 20], "bottom": 0}}},
    "sex": {"role": "quasi_identifying", "hierarchy": {"masking": {}}},
    "diag": {"role": "sensitive"},
}  # fmt: skip


def _job(folder: Path, engine: str, output: dict) -> Path:
    """A small anonymization job in ``folder`` (its input ``in.csv`` beside it)."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(3)
    pd.DataFrame(
        {"age": rng.integers(18, 90, 60), "sex": rng.choice(["f", "m"], 60),
         "diag": rng.choice(["a", "b", "c"], 60)}
    ).to_csv(folder / "in.csv", index=False)  # fmt: skip
    doc = {"input": "in.csv", "engine": engine, "attributes": _ATTRIBUTES,
           "models": [{"k_anonymity": {"k": 3}}], "output": output}  # fmt: skip
    (folder / "job.yaml").write_text(yaml.safe_dump(doc))
    return folder / "job.yaml"


def _uris(out: Path, release: str = "released.csv") -> dict:
    return {
        "path": (out / release).as_uri(),
        "report": (out / "report.html").as_uri(),
        "json": (out / "summary.json").as_uri(),
    }


def test_file_uris_on_the_local_engine_are_the_local_paths(tmp_path: Path) -> None:
    out = tmp_path / "elsewhere" / "out"
    job = _job(tmp_path / "jobdir", "local", _uris(out))
    res = RUNNER.invoke(app, ["anonymize", "--config", str(job), "-q"])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in out.iterdir()) == ["released.csv", "report.html", "summary.json"]
    assert sorted(p.name for p in job.parent.iterdir()) == ["in.csv", "job.yaml"]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["outputs"]["data"] == str(out / "released.csv")


@pytest.mark.parametrize("key", ["path", "report", "json"])
def test_another_scheme_on_the_local_engine_names_the_key(tmp_path: Path, key: str) -> None:
    job = _job(tmp_path, "local", {"path": "r.csv", key: "hdfs://nn:8020/releases/r1"})
    res = RUNNER.invoke(app, ["anonymize", "--config", str(job), "-q"])
    assert res.exit_code == 2, res.output
    text = " ".join(res.output.split())
    assert f"output.{key}" in text and "is a hdfs:// URI" in text
    assert "use `engine: spark` (or --engine spark)" in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "job.yaml"]


def test_a_file_uri_input_on_the_local_engine_is_the_local_path(tmp_path: Path) -> None:
    out = tmp_path / "out"
    job = _job(tmp_path / "jobdir", "local", {"path": str(out / "released.csv")})
    doc = yaml.safe_load(job.read_text())
    doc["input"] = {"path": (job.parent / "in.csv").as_uri()}
    job.write_text(yaml.safe_dump(doc))
    res = RUNNER.invoke(app, ["anonymize", "--config", str(job), "-q"])
    assert res.exit_code == 0, res.output
    assert (out / "released.csv").is_file()


@pytest.mark.parametrize(
    ("output", "fragment"),
    [
        ({"path": "file://host/out/r.csv"}, "not a local file URI"),
        ({"path": "in.csv", "json": "file:///nowhere/s.json"}, "input.path"),
    ],
)
def test_spark_refuses_what_it_cannot_write_before_it_starts(
    tmp_path: Path, no_spark, output: dict, fragment: str
) -> None:
    job = _job(tmp_path, "spark", output)
    if output["path"] == "in.csv":  # the input named as a file:// URI: still the input
        doc = yaml.safe_load(job.read_text())
        doc["input"] = {"path": (tmp_path / "in.csv").as_uri()}
        doc["output"]["path"] = (tmp_path / "in.csv").as_uri()
        job.write_text(yaml.safe_dump(doc))
    res = RUNNER.invoke(app, ["anonymize", "--config", str(job), "-q"])
    assert res.exit_code == 2, res.output
    assert fragment in " ".join(res.output.split())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "job.yaml"]


def test_file_uris_on_spark_land_exactly_there(spark, tmp_path: Path) -> None:
    out = tmp_path / "elsewhere" / "out"
    job = _job(tmp_path / "jobdir", "spark", _uris(out, "released.parquet"))
    res = RUNNER.invoke(app, ["anonymize", "--config", str(job), "-q"])
    assert res.exit_code == 0, res.output
    assert sorted(p.name for p in out.iterdir()) == [
        "released.parquet", "report.html", "summary.json"
    ]  # fmt: skip
    assert any(p.name.startswith("part-") for p in (out / "released.parquet").iterdir())
    assert len(pd.read_parquet(out / "released.parquet")) == 60
    assert sorted(p.name for p in job.parent.iterdir()) == ["in.csv", "job.yaml"]
    assert json.loads((out / "summary.json").read_text())["engine"] == "spark"


def test_a_spark_run_that_fails_after_staging_leaves_nothing(
    spark, tmp_path: Path, monkeypatch
) -> None:
    import sdckit.report.anonymization_report as report

    def broken(*args, **kwargs):
        raise RuntimeError("the report failed")

    monkeypatch.setattr(report, "anonymization_report", broken)
    out = tmp_path / "out"
    job = _job(tmp_path / "jobdir", "spark", _uris(out))
    res = RUNNER.invoke(app, ["anonymize", "--config", str(job), "-q"])
    assert res.exit_code != 0
    assert not out.exists() or list(out.rglob("*")) == []
    assert sorted(p.name for p in job.parent.iterdir()) == ["in.csv", "job.yaml"]
