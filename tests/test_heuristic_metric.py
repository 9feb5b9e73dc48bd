"""The heuristics choose by their own rule: a metric given to them is refused, not ignored."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

import sdckit
from sdckit.core.hierarchy import Hierarchy
from sdckit.core.schema import Schema
from sdckit.errors import ConfigError
from sdckit.models import KAnonymity, LDiversity

DF = pd.DataFrame(
    {"a": ["1", "2", "1", "2", "3", "3"], "b": [10, 20, 10, 20, 30, 30], "s": list("xyxyyx")}
)
SCHEMA = Schema.from_roles(
    quasi_identifying=["a", "b"],
    sensitive=["s"],
    hierarchies={
        "a": Hierarchy([["1", "*"], ["2", "*"], ["3", "*"]], name="a"),
        "b": Hierarchy([["10", "*"], ["20", "*"], ["30", "*"]], name="b"),
    },
    types={"b": "integer"},
)


@pytest.mark.parametrize("algorithm", ["mondrian", "datafly", "tds", "anatomy"])
@pytest.mark.parametrize("metric", ["loss", {"name": "discernibility"}])
def test_heuristics_refuse_a_metric(algorithm: str, metric) -> None:
    models = [KAnonymity(2), LDiversity("s", 2)]
    with pytest.raises(ConfigError, match=f"{algorithm}: a metric does not steer") as err:
        sdckit.anonymize(DF, SCHEMA, models, algorithm=algorithm, metric=metric)
    assert "algorithm 'optimal'" in str(err.value)
    # without a metric the algorithm runs and every metric of its result is reported
    result = sdckit.anonymize(DF, SCHEMA, models, algorithm=algorithm)
    assert result.metrics["loss"] is not None


def test_optimal_uses_the_metric_and_defaults_to_loss() -> None:
    models = [KAnonymity(2)]
    default = sdckit.anonymize(DF, SCHEMA, models)
    named = sdckit.anonymize(DF, SCHEMA, models, metric="loss")
    assert default.transformation == named.transformation
    assert default.details["metric"] == "loss"


def test_job_file_with_a_metric_for_mondrian_is_a_usage_error(tmp_path: Path) -> None:
    DF.to_csv(tmp_path / "d.csv", index=False)
    job = (
        "input: {path: d.csv}\n"
        "attributes:\n"
        "  a: {role: quasi_identifying, hierarchy: {masking: {}}}\n"
        "  b: {role: quasi_identifying, type: integer,"
        " hierarchy: {interval: {widths: [20], bottom: 0}}}\n"
        "models: [{k_anonymity: {k: 2}}]\n"
        "algorithm: mondrian\n"
        "output: {path: out.csv}\n"
    )
    (tmp_path / "ok.yaml").write_text(job)
    (tmp_path / "bad.yaml").write_text(job + "metric: loss\n")
    run = [sys.executable, "-m", "sdckit.cli", "anonymize", "--quiet", "--config"]
    ok = subprocess.run([*run, str(tmp_path / "ok.yaml")], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stderr
    (tmp_path / "out.csv").unlink()
    bad = subprocess.run([*run, str(tmp_path / "bad.yaml")], capture_output=True, text=True)
    assert bad.returncode == 2
    assert "mondrian: a metric does not steer" in bad.stderr
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.parametrize("algorithm", ["optimal", "mondrian"])
def test_missing_hierarchy_is_told_in_the_language_of_the_interface(
    tmp_path: Path, algorithm: str
) -> None:
    from sdckit.errors import MissingHierarchyError

    schema = Schema.from_roles(quasi_identifying=["a"], sensitive=["s"])
    with pytest.raises(MissingHierarchyError) as api:
        sdckit.anonymize(DF, schema, [KAnonymity(2)], algorithm=algorithm)
    assert "sdckit.core.hierarchy_builders" in str(api.value)
    assert "`hierarchy:" not in str(api.value)
    DF.to_csv(tmp_path / "d.csv", index=False)
    (tmp_path / "job.yaml").write_text(
        "input: {path: d.csv}\nattributes:\n  a: {role: quasi_identifying}\n"
        f"models: [{{k_anonymity: {{k: 2}}}}]\nalgorithm: {algorithm}\noutput: {{path: o.csv}}\n"
    )
    run = [sys.executable, "-m", "sdckit.cli", "anonymize", "--config", str(tmp_path / "job.yaml")]
    res = subprocess.run(run, capture_output=True, text=True)
    assert res.returncode == 2
    assert "attributes.a" in res.stderr and "`hierarchy: {masking: {}}`" in res.stderr
    assert "sdckit.core" not in res.stderr
