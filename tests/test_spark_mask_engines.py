"""Tests: a seeded mask job gives the same release on ``engine: local`` and ``engine: spark``.

Every random method the Spark engine runs draws per block of records with a generator per
block (:mod:`sdckit.masking.blocks`) on both engines, and the statistics a plan reads are
exact (:mod:`sdckit.masking.moments`), so the released values are the same bits. The jobs
run with blocks of :data:`BLOCK` records on an input read in several partitions, so block
boundaries fall inside partitions. One ``local[2]`` session (conftest's ``spark``).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

pytest.importorskip("pyspark")

N = 2400
#: Records per block in these tests (the input's partitions hold about 1,000 records each).
BLOCK = 700

#: Seeded jobs covering every random method the Spark engine runs (each variant), with
#: deterministic steps between them (the last one released as CSV too).
CASES = {
    "numeric_noise": [
        {"noise": {"columns": ["w", "income"], "alpha": 0.2}},
        {"multiplicative_noise": {"columns": ["income", "h"], "sd": 0.1}},
        {"noise": {"columns": ["age", "h"], "alpha": 0.3, "method": "correlated"}},
        {"noise": {"columns": ["h", "w"], "alpha": 0.2, "method": "kim"}},
    ],
    "categorical_randomization": [
        {"pram": {"columns": ["region", "zip"], "p_diagonal": 0.8, "invariant": True}},
        {"pram": {"columns": ["sex"], "p_diagonal": 0.7, "random_diagonal": True}},
        {
            "randomized_response": {
                "column": "sex",
                "p": 0.8,
                "insecure_reproducible_noise": True,  # seeded flips: reproducible
            }
        },
    ],
    "mixed": [
        {"top_bottom_coding": {"columns": ["income"], "top_quantile": 0.95, "replace": "mean"}},
        {"noise": {"columns": ["income"], "alpha": 0.1}},
        {"pram": {"columns": ["region"], "p_diagonal": 0.9}},
        {"rounding": {"columns": ["age"], "base": 5}},
        {
            "microaggregation": {
                "columns": ["age", "h"],
                "k": 4,
                "method": "fuzzy",
                "strata": ["sex"],
            }
        },
    ],
}


def _frame(n: int = N, seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    age = rng.integers(18, 90, n)
    frame = pd.DataFrame(
        {
            "income": rng.lognormal(8, 0.6, n).round(0).astype(int),
            "age": age,
            "h": np.round(100 + 0.8 * age + rng.normal(0, 8, n), 1),
            "w": rng.normal(50, 10, n).round(6),
            "region": rng.choice(["north", "south", "east", "west"], n, p=[0.4, 0.3, 0.2, 0.1]),
            "sex": rng.choice(["f", "m"], n),
            "zip": [f"0{v}" for v in rng.integers(100, 110, n)],
        }
    )
    # missing values, one at a block boundary
    frame.loc[[r for r in (3, BLOCK, 2 * BLOCK + 1) if r < n], "w"] = np.nan
    frame.loc[[9, n - 5], "region"] = None
    return frame


@pytest.fixture(scope="module")
def csv(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("engines") / "in.csv"
    _frame().to_csv(path, index=False)
    return path


@pytest.fixture(scope="module")
def split_input(spark):
    """The session reading a CSV file in partitions of ~24 kB (about 1,000 records) with
    few shuffle tasks; restored after the module."""
    settings = {
        "spark.sql.files.maxPartitionBytes": "24k",
        "spark.sql.shuffle.partitions": "3",
        "spark.sql.codegen.wholeStage": "false",
        "spark.sql.adaptive.enabled": "false",
    }
    previous = {k: spark.conf.get(k) for k in settings}
    for k, v in settings.items():
        spark.conf.set(k, v)
    yield spark
    for k, v in previous.items():
        spark.conf.set(k, v)


def _job(folder: Path, csv: Path, methods: list, engine: str, out: str, suffix: str) -> Path:
    doc = {
        "input": str(csv),
        "engine": engine,
        "methods": methods,
        "output": {"path": f"{out}/masked{suffix}", "json": f"{out}/summary.json"},
        "seed": 2024,
    }
    if engine == "spark":
        doc["spark"] = {"master": "local[2]", "conf": {"spark.sql.shuffle.partitions": 3}}
    path = folder / f"{out}.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def _spark_rows(folder: Path) -> list[str]:
    """The data lines of a Spark CSV release (its part files in order, headers dropped)."""
    lines: list[str] = []
    for part in sorted(folder.glob("part-*.csv")):
        lines += part.read_text(encoding="utf-8").splitlines()[1:]
    return lines


def _bits(s: pd.Series) -> object:
    """A column as what its bits say: doubles as their IEEE 754 bytes with the missing
    positions, other values as text (missing as None)."""
    if pd.api.types.is_numeric_dtype(s.dtype):
        x = s.to_numpy(dtype=np.float64, na_value=np.nan)
        ok = ~np.isnan(x)
        return ok.tobytes(), x[ok].tobytes()
    return [None if pd.isna(v) else str(v) for v in s.astype(object)]


def _numbers(lines: list[str]) -> list[list[object]]:
    """CSV data lines with every cell that parses as a number read as a double (Spark writes
    ``1.0E7`` where pandas writes ``10000000.0``: the same double)."""
    out = []
    for line in lines:
        row: list[object] = []
        for cell in line.split(","):
            try:
                row.append(float(cell))
            except ValueError:
                row.append(cell)
        out.append(row)
    return out


@pytest.mark.parametrize("case", list(CASES))
def test_a_seeded_mask_job_releases_the_same_bits_on_both_engines(
    split_input, csv, tmp_path, monkeypatch, case
):
    from sdckit.jobs.mask import run_mask_job
    from sdckit.masking import blocks

    monkeypatch.setattr(blocks, "BLOCK_ROWS", BLOCK)
    methods = CASES[case]
    suffix = ".csv" if case == "mixed" else ".parquet"
    run_mask_job(_job(tmp_path, csv, methods, "local", "local", suffix))
    run_mask_job(_job(tmp_path, csv, methods, "spark", "spark", suffix))
    if suffix == ".csv":  # the same lines, or lines that read as the same doubles
        local_lines = (tmp_path / "local/masked.csv").read_text(encoding="utf-8").splitlines()
        spark_lines = _spark_rows(tmp_path / "spark/masked.csv")
        assert len(spark_lines) == len(local_lines) - 1 == N
        assert _numbers(spark_lines) == _numbers(local_lines[1:])
    else:
        local = pd.read_parquet(tmp_path / "local/masked.parquet")
        remote = pd.read_parquet(tmp_path / "spark/masked.parquet")  # part files in order
        assert list(remote.columns) == list(local.columns) and len(remote) == len(local) == N
        for c in local.columns:
            assert _bits(remote[c]) == _bits(local[c]), c
    # the published records (noise levels, PRAM matrices and counts, ...) are the same
    summary = json.loads((tmp_path / "spark/summary.json").read_text())
    local_summary = json.loads((tmp_path / "local/summary.json").read_text())
    assert summary["methods"] == local_summary["methods"]
    assert summary["randomness"]["block_rows"] == BLOCK


def test_every_random_method_of_the_spark_engine_has_a_case():
    """A method the Spark engine runs that draws random numbers needs a case above: the
    perturbative ones, and microaggregation (its ``fuzzy`` method)."""
    from sdckit.masking import Microaggregation
    from sdckit.masking.pipeline import METHODS, Pipeline

    covered = {type(s) for methods in CASES.values() for s in Pipeline.from_entries(methods).steps}
    spark = [METHODS.load(n) for n in METHODS.where(lambda traits: "spark" in traits.engines)]
    random = {cls for cls in spark if cls.must_change} | {Microaggregation}
    assert random <= set(spark) and len(random) == 5
    assert random <= covered, random - covered
