"""A Hive-partitioned Parquet folder (``sex=f/part-0.parquet``, ``sex=m/...``; no suffix on
the folder) is an input on both engines: the partition keys come back as columns, after the
files' own, and both engines give the same answers."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import yaml
from typer.testing import CliRunner

from sdckit.cli import app
from sdckit.core.encoding import as_text
from sdckit.core.io import read_table

RUNNER = CliRunner()


def _people(folder: Path) -> Path:
    """200 records written as Parquet partitioned by ``sex`` and then ``region``."""
    rng = np.random.default_rng(7)
    data = pd.DataFrame(
        {"age": rng.integers(18, 90, 200), "diag": rng.choice(["a", "b", "c"], 200),
         "sex": rng.choice(["Female", "Male"], 200), "region": rng.choice([1, 2, 3], 200)}
    )  # fmt: skip
    root = folder / "people"
    pq.write_to_dataset(
        pa.Table.from_pandas(data, preserve_index=False), root, partition_cols=["sex", "region"]
    )
    (root / "_SUCCESS").write_text("")
    return root


def test_the_local_engine_reads_a_hive_folder(tmp_path: Path) -> None:
    from sdckit.spark.io import input_columns, is_parquet

    root = _people(tmp_path)
    assert any(root.glob("sex=*/region=*/*.parquet")) and not any(root.glob("*.parquet"))
    table = read_table(root)
    assert list(table.columns) == ["age", "diag", "sex", "region"]
    assert len(table) == 200
    assert sorted(set(as_text(table["region"]))) == ["1", "2", "3"]
    assert is_parquet(root) and input_columns(root) == list(table.columns)


def test_spark_reads_a_hive_folder_as_the_local_engine_does(spark, tmp_path: Path) -> None:
    from sdckit.spark.io import read_spark, text_column

    root = _people(tmp_path)
    local = read_table(root)
    sdf = read_spark(spark, root)
    assert list(sdf.columns) == list(local.columns)
    rows = sdf.select([text_column(sdf, c).alias(c) for c in sdf.columns]).toPandas()
    key = list(local.columns)
    mine = local.assign(**{c: as_text(local[c]) for c in key}).sort_values(key)
    theirs = rows.sort_values(key)
    assert mine.reset_index(drop=True).equals(theirs.reset_index(drop=True))


def test_analyze_on_a_hive_folder_is_the_same_on_both_engines(spark, tmp_path: Path) -> None:
    root = _people(tmp_path)
    doc = {"input": str(root), "engine": "spark",
           "attributes": {"age": {"role": "quasi_identifying"},
                          "sex": {"role": "quasi_identifying"},
                          "region": {"role": "quasi_identifying"},
                          "diag": {"role": "sensitive"}}}  # fmt: skip
    job = tmp_path / "job.yaml"
    job.write_text(yaml.safe_dump(doc))
    figures = {}
    for engine in ("spark", "local"):
        out = tmp_path / f"{engine}.json"
        res = RUNNER.invoke(
            app, ["analyze", "--config", str(job), "--engine", engine, "-q", "--json", str(out)]
        )
        assert res.exit_code == 0, res.output
        figures[engine] = json.loads(out.read_text())
    assert figures["spark"].pop("engine") == "spark"
    assert figures["local"].pop("engine") == "local"
    assert figures["spark"].pop("frequency_set")["path"] == "driver"
    for summary in figures.values():
        for key in [k for k in summary if k in ("elapsed_seconds", "run_id")]:
            summary.pop(key)
    assert figures["spark"] == figures["local"]
