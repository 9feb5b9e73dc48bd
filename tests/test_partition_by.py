"""``output.partition_by`` writes the Spark release as Hive partition folders
(``sex=f/part-...``); refused on the local engine and for a column the release lacks."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from sdckit.cli import app
from sdckit.core.io import read_table

RUNNER = CliRunner()
_ATTRIBUTES = {
    "age": {"role": "quasi_identifying", "type": "integer",
            "hierarchy": {"interval": {"widths": [10, 20], "bottom": 0}}},
    "sex": {"role": "quasi_identifying", "hierarchy": {"masking": {}}},
    "diag": {"role": "sensitive"},
    "name": {"role": "identifying"},
}  # fmt: skip


def _job(folder: Path, engine: str, output: dict, **changes) -> Path:
    rng = np.random.default_rng(5)
    pd.DataFrame(
        {"age": rng.integers(18, 90, 60), "sex": rng.choice(["f", "m"], 60),
         "diag": rng.choice(["a", "b", "c"], 60), "name": [f"p{i}" for i in range(60)]}
    ).to_csv(folder / "in.csv", index=False)  # fmt: skip
    doc = {"input": "in.csv", "engine": engine, "attributes": _ATTRIBUTES,
           "models": [{"k_anonymity": {"k": 3}}], "output": output, **changes}  # fmt: skip
    (folder / "job.yaml").write_text(yaml.safe_dump(doc))
    return folder / "job.yaml"


def test_partition_by_is_refused_on_the_local_engine(tmp_path: Path) -> None:
    job = _job(tmp_path, "local", {"path": "r.csv", "partition_by": ["sex"]})
    res = RUNNER.invoke(app, ["anonymize", "--config", str(job), "-q"])
    assert res.exit_code == 2, res.output
    text = " ".join(res.output.split())
    assert "output.partition_by" in text and "engine: spark" in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "job.yaml"]


@pytest.mark.parametrize(
    ("columns", "fragment"),
    [(["name"], "'name', not a column of the release"),
     (["sexx"], "'sexx', not a column of the release"),
     (["sex", "sex"], "names a column twice")],
)  # fmt: skip
def test_a_column_not_in_the_release_is_refused_before_spark_starts(
    tmp_path: Path, no_spark, columns: list, fragment: str
) -> None:
    job = _job(tmp_path, "spark", {"path": "r.parquet", "partition_by": columns})
    res = RUNNER.invoke(app, ["anonymize", "--config", str(job), "-q"])
    assert res.exit_code == 2, res.output
    assert fragment in " ".join(res.output.split())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "job.yaml"]


@pytest.mark.parametrize("release", ["released.parquet", "released.csv"])
def test_spark_writes_the_release_partitioned(spark, tmp_path: Path, release: str) -> None:
    job = _job(tmp_path, "spark", {"path": release, "partition_by": ["sex"]})
    for _ in range(2):  # the second run replaces the partitioned release of the first
        res = RUNNER.invoke(
            app, ["anonymize", "--config", str(job), "-q", "--json", str(tmp_path / "s.json")]
        )
        assert res.exit_code == 0, res.output
    folder = tmp_path / release
    parts = sorted(p.name for p in folder.iterdir() if p.is_dir())
    assert parts and all(p.startswith("sex=") for p in parts)
    assert all(p.name.startswith(("part-", "_", ".")) for p in folder.iterdir() if p.is_file())
    if release.endswith(".parquet"):
        table = read_table(folder)
        assert list(table.columns) == ["age", "diag", "sex"] and len(table) == 60
    else:
        header = next((folder / parts[0]).glob("part-*.csv")).read_text().splitlines()[0]
        assert header == "age,diag"


def test_a_spark_mask_release_is_partitioned_too(spark, tmp_path: Path) -> None:
    job = _job(
        tmp_path, "spark", {"path": "masked.parquet", "partition_by": ["sex"]},
        methods=[{"rounding": {"columns": ["age"], "base": 5}}],
    )  # fmt: skip
    doc = yaml.safe_load(job.read_text())
    del doc["models"]
    job.write_text(yaml.safe_dump(doc))
    res = RUNNER.invoke(app, ["mask", "--config", str(job), "-q"])
    assert res.exit_code == 0, res.output
    table = read_table(tmp_path / "masked.parquet")
    assert list(table.columns) == ["age", "diag", "sex"] and len(table) == 60
    assert (table["age"].astype(float) % 5 == 0).all()
