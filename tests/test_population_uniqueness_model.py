"""Population uniqueness as a privacy model (ARX ``PopulationUniqueness``): the estimated
share of population uniques of the released records <= a threshold, enforced by suppressing
the smallest classes, found by the optimal search on Adult as by an exhaustive loop, and run
as a job's ``population_uniqueness`` model."""

from __future__ import annotations

import html
import json
import math

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from sdckit.algorithms.optimal import optimal, prepare_base, suppression_budget
from sdckit.cli import app
from sdckit.core.frequency import FrequencySet, frequency_set
from sdckit.core.schema import Schema
from sdckit.datasets import data_dir, load_adult
from sdckit.errors import ConfigError
from sdckit.models import PopulationUniquenessThreshold
from sdckit.models.population_estimators import pitman
from sdckit.utility.generalization import LatticeMetrics, MetricSpec

QIS = ["sex", "age", "race", "marital-status", "education", "native-country"]


def _classes(sizes) -> FrequencySet:
    """A frequency set with one class per entry of ``sizes`` (class ``i`` has ``sizes[i]``
    records)."""
    labels = [f"c{i:03d}" for i, s in enumerate(sizes) for _ in range(int(s))]
    return frequency_set(pd.DataFrame({"a": labels}), ["a"])


def _zayatz_by_hand(sizes, population: int) -> float:
    """Zayatz (1991) with the hypergeometric written out: a population class of size ``i``
    leaves exactly one record in a sample of ``n`` of ``N`` with probability
    ``i C(N - i, n - 1) / C(N, n)``; Bayes' rule with ``p_i = c_i / u`` gives
    ``P(F = 1 | f = 1)``; the population uniques are ``c1 P(F = 1 | f = 1) / f``, divided
    by ``N``."""
    n = sum(sizes)
    classes = {i: sizes.count(i) for i in set(sizes)}

    def one(i: int) -> float:
        return i * math.comb(population - i, n - 1) / math.comb(population, n)

    c1 = classes.get(1, 0)
    posterior = c1 * one(1) / sum(c * one(i) for i, c in classes.items())
    return c1 * posterior / (n / population) / population


def test_zayatz_estimate_by_hand_and_arx_verdicts() -> None:
    sizes = [1, 1, 1, 1, 2, 2, 3, 5, 8]  # n = 24 records, c1 = 4
    fs = _classes(sizes)
    model = PopulationUniquenessThreshold(0.02, "zayatz", population_size=230)
    model.prepare(fs)
    res = model.evaluate(fs)
    expected = _zayatz_by_hand(sizes, 230)
    assert res.details["population_uniqueness"] == pytest.approx(expected, rel=1e-12)
    assert res.details["estimator"] == "zayatz" and res.details["threshold"] == 0.02
    assert res.details["population_size"] == 230 and res.details["sample_uniques"] == 4
    assert not res.satisfied and expected > 0.02  # 0.039
    assert PopulationUniquenessThreshold(0.04, "zayatz", population_size=230).evaluate(fs).satisfied
    # two singletons suppressed: 22 records of the same population of 230
    kept = fs.select(np.arange(fs.n_classes) >= 2)
    assert model.evaluate(kept).details["population_uniqueness"] == pytest.approx(
        _zayatz_by_hand(sizes[2:], 230), rel=1e-12
    )
    assert model.evaluate(kept).satisfied  # 0.0117


def test_dankar_population_and_arx_rules() -> None:
    sizes = [1, 1, 1, 1, 2, 2, 3, 5, 8]
    fs = _classes(sizes)
    # the population from the sampling fraction of the whole data: N = round(24 / 0.1)
    model = PopulationUniquenessThreshold(0.01, sampling_fraction=0.1)
    assert model.estimator == "dankar"  # ARX's default
    model.prepare(fs)
    res = model.evaluate(fs)
    assert res.details["population_size"] == 240
    assert res.details["estimated_by"] == "pitman"  # f <= 0.1
    assert res.details["population_uniqueness"] == pytest.approx(pitman(sizes, 0.1), rel=1e-12)
    # no sample uniques: 0, holds; nothing released: holds
    assert model.evaluate(fs.select(fs.counts > 1)).satisfied
    assert model.evaluate(fs.select(np.zeros(fs.n_classes, dtype=bool))).satisfied
    # all singletons: Pitman has no estimate, and ARX's criterion does not fall back to
    # Zayatz for f <= 0.1, so the model fails; Zayatz's estimate is c1 / f = N uniques
    single = _classes([1] * 5)
    strict = PopulationUniquenessThreshold(0.9, population_size=100)
    r = strict.evaluate(single)
    assert math.isnan(r.details["population_uniqueness"]) and not r.satisfied
    zayatz = PopulationUniquenessThreshold(0.9, "zayatz", population_size=100).evaluate(single)
    assert zayatz.details["population_uniqueness"] == pytest.approx(1.0)
    # flags as ARX: not monotonic with suppression; with generalization for Zayatz only
    assert not model.monotonic and model.is_global and not model.monotonic_with_generalization
    assert PopulationUniquenessThreshold(
        0.1, "zayatz", sampling_fraction=0.5
    ).monotonic_with_generalization


def test_parameters() -> None:
    with pytest.raises(ConfigError, match="not both"):
        PopulationUniquenessThreshold(0.1)
    with pytest.raises(ConfigError, match="not both"):
        PopulationUniquenessThreshold(0.1, sampling_fraction=0.1, population_size=10)
    with pytest.raises(ConfigError, match="'threshold'"):
        PopulationUniquenessThreshold(1.0, sampling_fraction=0.1)
    with pytest.raises(ConfigError, match="'estimator'"):
        PopulationUniquenessThreshold(0.1, "poisson", sampling_fraction=0.1)
    small = PopulationUniquenessThreshold(0.1, population_size=10)
    assert "smaller than the number of records" in small.size_conflict(20)
    assert small.size_conflict(10) is None


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 6), min_size=1, max_size=30),
    estimator=st.sampled_from(["pitman", "zayatz", "snb", "dankar"]),
    fraction=st.sampled_from([0.05, 0.3, 0.8]),
    threshold=st.sampled_from([0.0, 0.005, 0.02, 0.1]),
)
def test_holds_after_removing_smallest_is_the_verdict_on_the_release(
    sizes, estimator, fraction, threshold
) -> None:
    sizes = sorted(sizes)
    fs = _classes(sizes)  # classes in ascending size: class j is the j-th smallest
    model = PopulationUniquenessThreshold(threshold, estimator, sampling_fraction=fraction)
    model.prepare(fs)
    holds = model.holds_after_removing_smallest(np.array(sizes))
    verdict = np.array(
        [
            model.evaluate(fs.select(np.arange(fs.n_classes) >= j)).satisfied
            for j in range(len(sizes) + 1)
        ]
    )
    assert len(holds) == len(sizes) + 1
    first = int(np.argmax(holds))
    assert holds[first] and holds[first:].all() and not holds[:first].any()
    # the j it settles on is a release the model holds at, one fewer fails
    assert verdict[first] and (first == 0 or not verdict[first - 1])
    assert verdict[sizes.count(1) :].all()  # no sample uniques left: always holds
    if np.all(np.diff(verdict.astype(int)) >= 0):  # the verdict changes once along j
        assert np.array_equal(holds, verdict)


def _adult_exhaustive(df, schema, model, limit):
    """Every node of the lattice by a plain loop: without budget the model's verdict on the
    node; with one, the smallest classes the model's enforcement asks for, taken in class
    order, within the budget. The best (cost, level sum, levels)."""
    base, _ = prepare_base(df, schema, [model])
    model.prepare(base)
    budget = suppression_budget(limit, len(df))
    lm = LatticeMetrics(base, MetricSpec("loss"))
    best = None
    for levels in np.ndindex(*[q.height for q in base.quasi_identifiers]):
        fs = base.rollup(levels)
        suppressed = np.zeros(fs.n_classes, dtype=bool)
        if not model.evaluate(fs).satisfied:
            if not budget:
                continue
            order = np.argsort(fs.counts, kind="stable")
            holds = model.holds_after_removing_smallest(fs.counts[order])
            j = int(np.argmax(holds))
            suppressed[order[:j]] = True
            if not holds[j] or int(fs.counts[suppressed].sum()) > budget:
                continue
            assert model.evaluate(fs.select(~suppressed)).satisfied
        key = (lm.cost(fs, suppressed), sum(levels), levels)
        if best is None or key < best:
            best = key
    return best


@pytest.mark.parametrize(("threshold", "limit"), [(0.001, 0.0), (0.01, 0.05)])
def test_optimal_search_equals_the_exhaustive_loop_on_adult(threshold, limit) -> None:
    # a 1% sample of its population, Dankar's rule (Pitman's estimate at f <= 0.1)
    df, h = load_adult()
    schema = Schema.from_roles(quasi_identifying=QIS, hierarchies={q: h[q] for q in QIS})
    model = PopulationUniquenessThreshold(threshold, sampling_fraction=0.01)
    expected = _adult_exhaustive(df, schema, model, limit)
    out = optimal(df, schema, [model], suppression_limit=limit)
    if limit == 0.0:
        assert out.details["metric_value"] == pytest.approx(expected[0], rel=1e-9)
        assert tuple(out.transformation[q] for q in QIS) == expected[2]
        assert out.suppressed_records == 0
    else:  # the cheapest singletons where the loop takes them in class order
        assert out.details["metric_value"] <= expected[0] * (1 + 1e-9)
        assert 0 < out.suppressed_records <= suppression_budget(limit, len(df))


def test_zayatz_monotonic_with_generalization_on_adult() -> None:
    # the flag lets the search prune without budget; its optimum is the exhaustive one
    df, h = load_adult()
    schema = Schema.from_roles(quasi_identifying=QIS, hierarchies={q: h[q] for q in QIS})
    model = PopulationUniquenessThreshold(0.001, "zayatz", sampling_fraction=0.01)
    expected = _adult_exhaustive(df, schema, model, 0.0)
    out = optimal(df, schema, [model], suppression_limit=0.0)
    assert out.details["metric_value"] == pytest.approx(expected[0], rel=1e-9)
    assert tuple(out.transformation[q] for q in QIS) == expected[2]


def test_job_file_population_uniqueness(tmp_path) -> None:
    src = data_dir()
    qis = ["sex", "age", "race", "marital-status"]
    doc = {
        "input": {"path": str(src / "adult.csv"), "delimiter": ";"},
        "attributes": {
            c: {"role": "quasi_identifying", "hierarchy": str(src / f"adult_hierarchy_{c}.csv")}
            for c in qis
        },
        "models": [{"population_uniqueness": {"threshold": 0.001, "sampling_fraction": 0.01}}],
        "suppression_limit": 0.05,
        "output": {"path": "out.csv", "report": "r.html", "json": "r.json"},
    }
    job = tmp_path / "job.yaml"
    job.write_text(yaml.safe_dump(doc))
    res = CliRunner().invoke(app, ["anonymize", "--config", str(job)])
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "r.json").read_text())
    name = "population uniqueness <= 0.001 (dankar)"
    assert summary["verified"] and summary["models_satisfied"] == [name]
    (check,) = summary["model_checks"]
    assert check["model"] == name and check["estimator"] == "dankar"
    assert 0 <= check["population_uniqueness"] <= 0.001
    assert check["population_size"] == round(30162 / 0.01)
    assert [m["model"] for m in summary["attack_coverage"]["models"]] == ["population_uniqueness"]
    page = (tmp_path / "r.html").read_text()
    assert html.escape(name) in page and "population_uniqueness" in page
