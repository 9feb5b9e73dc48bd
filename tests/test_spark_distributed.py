"""The Spark engine with the classes kept on Spark (``spark.sdckit.driverClasses``).

Beyond the driver limit the distinct combinations are never collected: the risk measures
come from a class-size histogram and per-shard minima/maxima/sums, the optimal search
decides each node by shards, and the release is applied and re-verified on Spark. Forced on
small data (limit 0, or a limit between the base's classes and a roll-up's), every figure
must be the local engine's.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from sdckit import anonymize
from sdckit.cli import app
from sdckit.core.schema import Schema
from sdckit.datasets import load_adult
from sdckit.errors import DataError, VerificationError
from sdckit.models import KAnonymity, LDiversity, TCloseness
from sdckit.models.risk_thresholds import AverageRiskThreshold
from sdckit.risk.analyze import analyze
from spark_support import assert_same_anonymization, no_time

pytest.importorskip("pyspark")

ADULT = load_adult()
LIMIT = "spark.sdckit.driverClasses"
QI4 = ["age", "sex", "race", "education"]
QI6 = ["age", "sex", "race", "education", "marital-status", "native-country"]


@pytest.fixture(scope="module")
def adult_sdf(spark):
    from sdckit.spark.io import read_spark

    return read_spark(spark, ADULT.path)


@pytest.fixture
def limit(spark):
    """Set the driver's class limit for one test (restored after)."""

    def set_limit(n: int) -> None:
        spark.conf.set(LIMIT, str(n))

    yield set_limit
    spark.conf.unset(LIMIT)


def _size_histogram(risk: np.ndarray, records: np.ndarray) -> dict[float, int]:
    out: dict[float, int] = {}
    for r, n in zip(risk.tolist(), records.tolist(), strict=True):
        out[r] = out.get(r, 0) + int(n)
    return out


# -- analyze -------------------------------------------------------------------------------
def test_analyze_on_spark_classes_equals_local(adult_sdf, limit):
    from sdckit.spark.analyze import analyze_spark

    limit(0)
    options = {"sensitive": ["occupation"], "sampling_fraction": 0.01, "measures": []}
    local = analyze(ADULT.data, QI6, **options)
    remote = analyze_spark(adult_sdf, QI6, **options)
    assert remote.summary["frequency_set"] == {
        "path": "distributed",
        "classes": int(ADULT.data[QI6 + ["occupation"]].drop_duplicates().shape[0]),
        "driver_classes": 0,
    }
    assert remote.frequency_set is None  # nothing per class on the driver
    assert no_time(remote.summary) == no_time(local.summary)
    # the class risks come as one entry per class size, weighted by its records
    assert len(remote.class_risk) < local.frequency_set.n_classes
    assert _size_histogram(remote.class_risk, remote.class_records) == _size_histogram(
        local.class_risk, local.frequency_set.counts
    )


def test_analyze_on_spark_classes_at_levels_and_skipped_measures(adult_sdf, limit):
    from sdckit.spark.analyze import analyze_spark

    limit(0)
    hierarchies = {q: ADULT.hierarchies[q] for q in QI4}
    local = analyze(ADULT.data, QI4, hierarchies=hierarchies, levels=[2, 0, 1, 1], measures=[])
    remote = analyze_spark(
        adult_sdf, QI4, hierarchies=hierarchies, levels=[2, 0, 1, 1], measures=[]
    )
    assert no_time(remote.summary) == no_time(local.summary)
    # by default distinction and SUDA run; they compare classes, so on Spark they are skipped
    skipped = analyze_spark(adult_sdf, QI4).summary["skipped"]
    assert set(skipped) == {"distinction", "suda"}
    assert "keeps the" in skipped["suda"] and "classes on the cluster" in skipped["suda"]


def test_analyze_on_spark_classes_refuses_what_needs_every_class(spark, adult_sdf, limit):
    from sdckit.spark.analyze import analyze_spark

    limit(0)
    with pytest.raises(DataError, match="individual risk.*spark.sdckit.driverClasses"):
        analyze_spark(adult_sdf, QI4, weight="age")
    with pytest.raises(DataError, match="population table"):
        analyze_spark(adult_sdf, QI4, population=adult_sdf)
    with pytest.raises(DataError, match="suda.*drop --measures"):
        analyze_spark(adult_sdf, QI4, measures=["suda"])
    # a missing key value matching any value compares classes: refused, category works
    df = ADULT.data[QI4].head(200).copy()
    df.loc[3, "race"] = None
    sdf = spark.createDataFrame(df.astype(object).where(df.notna(), None))
    with pytest.raises(DataError, match="wildcard matching.*--missing category"):
        analyze_spark(sdf, QI4)
    local = analyze(df, QI4, missing="category", measures=[])
    remote = analyze_spark(sdf, QI4, missing="category", measures=[])
    assert no_time(remote.summary) == no_time(local.summary)
    assert remote.summary["missing_values"]["records_with_missing_key"] == 1


# -- anonymize -----------------------------------------------------------------------------
def _schema(qis: list[str]) -> Schema:
    return Schema.from_roles(
        quasi_identifying=qis,
        sensitive=["occupation"],
        hierarchies={q: ADULT.hierarchies[q] for q in qis},
    )


@pytest.mark.parametrize(
    "qis, models, metric",
    [
        (QI4, [KAnonymity(5), LDiversity("occupation", 2)], None),
        (QI4[:3], [TCloseness("occupation", 0.2)], "entropy"),
    ],
    ids=["k5-l2-loss", "t0.2-entropy"],
)
def test_search_on_spark_classes_equals_local(adult_sdf, tmp_path, limit, qis, models, metric):
    """Every node decided by shards (limit 0): the same nodes, optimum, metrics, release."""
    from sdckit.spark.anonymize import anonymize_spark

    limit(0)
    data = ADULT.data[[*qis, "occupation"]]
    local = anonymize(data, _schema(qis), models, suppression_limit=0.05, metric=metric)
    out = tmp_path / "released.parquet"
    remote = anonymize_spark(
        adult_sdf.select(*qis, "occupation"),
        _schema(qis),
        models,
        out,
        suppression_limit=0.05,
        metric=metric,
    )
    assert remote.details["frequency_set"]["path"] == "distributed"
    assert_same_anonymization(local, remote, out)
    # the same nodes with the same verdicts; costs summed over shards equal up to the order
    # of floating additions
    space, expected = remote.details["solution_space"], local.details["solution_space"]
    assert [{**n, "metric": None} for n in space] == [{**n, "metric": None} for n in expected]
    costs = [(n["metric"], m["metric"]) for n, m in zip(space, expected, strict=True)]
    assert all(a == b or a == pytest.approx(b, rel=1e-12) for a, b in costs)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporaries


def test_search_collects_a_roll_up_small_enough_for_the_driver(adult_sdf, tmp_path, limit):
    """Base classes above the limit, a roll-up below it: the nodes above the roll-up are
    decided on the driver from it; the answer is still the local engine's."""
    from sdckit.spark.anonymize import anonymize_spark
    from sdckit.spark.search import DistributedLatticeSearch

    base_classes = ADULT.data[[*QI6, "occupation"]].drop_duplicates().shape[0]
    limit(base_classes // 3)
    collected = []
    real = DistributedLatticeSearch._store

    def spy(self, index, fs):
        if fs is not None and fs.n_classes:
            collected.append(index)
        return real(self, index, fs)

    models = [KAnonymity(5), LDiversity("occupation", 2)]
    local = anonymize(
        ADULT.data[[*QI6, "occupation"]], _schema(QI6), models, suppression_limit=0.05
    )
    out = tmp_path / "released.csv"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(DistributedLatticeSearch, "_store", spy)
        remote = anonymize_spark(
            adult_sdf.select(*QI6, "occupation"), _schema(QI6), models, out, suppression_limit=0.05
        )
    assert remote.details["frequency_set"]["path"] == "distributed"
    assert collected  # some nodes were decided on the driver
    assert_same_anonymization(local, remote, out)


def test_models_judging_the_whole_release_are_refused_on_spark_classes(adult_sdf, tmp_path, limit):
    from sdckit.spark.anonymize import anonymize_spark

    limit(0)
    with pytest.raises(DataError, match="average.*spark.sdckit.driverClasses"):
        anonymize_spark(
            adult_sdf.select(*QI4, "occupation"),
            _schema(QI4),
            [KAnonymity(2), AverageRiskThreshold(0.1)],
            tmp_path / "x.csv",
            suppression_limit=0.05,
        )
    assert list(tmp_path.iterdir()) == []


def test_a_release_on_spark_classes_that_fails_the_recount_is_not_written(
    adult_sdf, tmp_path, limit, monkeypatch
):
    """Break the application on Spark (no record suppressed): the recount of the written
    files catches it and nothing appears."""
    import sdckit.spark.anonymize_distributed as ad
    from sdckit.spark.anonymize import anonymize_spark

    limit(0)
    real = ad.release_distributed

    def unsuppressed(data, columns, table, levels, suppressed):
        return real(data, columns, table, levels, suppressed.limit(0))

    monkeypatch.setattr(ad, "release_distributed", unsuppressed)
    with pytest.raises(VerificationError, match="suppresses 0 records"):
        anonymize_spark(
            adult_sdf.select(*QI4, "occupation"),
            _schema(QI4),
            [KAnonymity(5)],
            tmp_path / "released.csv",
            suppression_limit=0.05,
        )
    assert list(tmp_path.iterdir()) == []


def test_cli_keeps_classes_on_spark_and_says_so(adult_sdf, tmp_path, limit):
    """``--spark-conf spark.sdckit.driverClasses=0``: the JSON and report state the path."""
    import yaml

    limit(0)
    data = tmp_path / "adult.csv"
    ADULT.data[[*QI4, "occupation"]].to_csv(data, index=False)
    hierarchy_files = {q: str(ADULT.hierarchy_paths[q]) for q in QI4}
    job = {
        "input": {"path": data.name},
        "attributes": {
            **{q: {"role": "quasi_identifying", "hierarchy": hierarchy_files[q]} for q in QI4},
            "occupation": {"role": "sensitive"},
        },
        "models": [{"k_anonymity": {"k": 5}}],
        "suppression_limit": 0.05,
        "output": {"path": "out.csv", "json": "out.json", "report": "out.html"},
    }
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(job))
    res = CliRunner().invoke(
        app,
        ["anonymize", "--config", str(tmp_path / "job.yaml"), "--engine", "spark",
         "--spark-conf", f"{LIMIT}=0", "-q"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "out.json").read_text())
    found = json.dumps(doc)
    assert '"path": "distributed"' in found
    assert "kept on Spark" in (tmp_path / "out.html").read_text()
