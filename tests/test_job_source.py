"""The engine is chosen once, behind a data source: ``open_source`` reads ``engine:`` and
nothing below the Spark layer imports Spark to open, check or describe a job."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from sdckit.errors import ConfigError, ParameterError
from sdckit.jobs.config import job_from_dict
from sdckit.jobs.source import ENGINES, LocalSource, check_engine, open_source


@pytest.fixture()
def data(tmp_path: Path) -> Path:
    path = tmp_path / "data.csv"
    pd.DataFrame({"age": [21, 25, 34], "zip": ["476", "476", "479"]}).to_csv(
        path, sep=";", index=False
    )
    return path


def test_the_engines_registry_names_what_the_job_and_the_option_accept() -> None:
    assert ENGINES.names() == ("local", "spark")
    assert ENGINES.traits("spark").release_is_folder and ENGINES.traits("spark").distributed
    assert not ENGINES.traits("local").release_is_folder
    assert check_engine("spark") == "spark"
    with pytest.raises(ConfigError, match="--engine must be local or spark, got 'gpu'"):
        check_engine("gpu")
    with pytest.raises(ParameterError, match="engine must be one of local, spark, got 'sprak'"):
        job_from_dict({"engine": "sprak"})


def test_a_local_job_reads_through_its_local_source_once(data: Path) -> None:
    job = job_from_dict(
        {"input": data.name, "attributes": {"age": "quasi_identifying"}}, data.parent
    )
    source = job.open()
    assert isinstance(source, LocalSource) and source.name == "local"
    assert job.open() is source
    assert job.read_input() is source.frame()
    assert source.columns() == ["age", "zip"]
    assert job.schema.quasi_identifiers == ["age"]
    assert job.output.delimiter == ";"  # sniffed when the input was read
    assert source.table(["zip"]) is not source.frame()  # the columns read afresh
    assert job.with_output(json="x.json").open() is source


def test_opening_and_checking_a_spark_job_does_not_import_spark(data: Path) -> None:
    # the source is chosen by name and the Spark engine's module loaded on first use; its
    # header, delimiter and output checks need neither pyspark nor a session
    script = (
        "import sys\n"
        "from sdckit.jobs.config import job_from_dict\n"
        f"job = job_from_dict({{'input': {str(data)!r}, 'engine': 'spark'}})\n"
        "assert 'sdckit.spark.source' not in sys.modules\n"
        "source = job.open()\n"
        "print(type(source).__name__, source.columns(), job.output.delimiter)\n"
        "job.check_outputs()\n"
        "print('PYSPARK', 'pyspark' in sys.modules)\n"
    )
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert "SparkSource ['age', 'zip'] ;" in res.stdout, res.stderr[-800:]
    assert "PYSPARK False" in res.stdout


def test_open_source_is_the_one_reader_of_the_engine(data: Path) -> None:
    job = job_from_dict({"input": str(data)}).with_engine("spark")
    assert type(open_source(job)).__name__ == "SparkSource"
    with pytest.raises(ConfigError, match="--engine must be local or spark"):
        job.with_engine("cluster")
