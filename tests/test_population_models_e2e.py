"""k-map and δ-presence with a population table, end to end (job file -> sdckit anonymize).

The independent verification re-checks the released rows against the population generalized
by the release's own transformation (it used to look the pseudo-column ``__suppressed__`` up
in the population table and crash). Each case is compared with exhaustive search.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from sdckit.algorithms.optimal import optimal
from sdckit.cli import app
from sdckit.core.hierarchy import read_hierarchy
from sdckit.core.io import read_table
from sdckit.core.schema import Schema
from sdckit.errors import NoSolutionError
from sdckit.models import KAnonymity
from sdckit.models.presence import DeltaPresence, KMap
from sdckit.utility.generalization import MetricSpec
from test_optimal import _exhaustive

QIS = ["sex", "age", "race", "marital-status"]


@pytest.fixture(scope="module")
def adult(shared_data: Path):
    arx = shared_data / "arx"
    return (
        arx,
        read_table(arx / "adult.csv", delimiter=";"),
        read_table(arx / "adult_subset.csv", delimiter=";"),
    )


def _job(tmp_path: Path, arx: Path, model: str, limit: float) -> Path:
    lines = [f'input: {{path: {arx / "adult_subset.csv"}, delimiter: ";"}}', "attributes:"]
    for q in QIS:
        lines.append(
            f"  {q}: {{role: quasi_identifying, hierarchy: {arx}/adult_hierarchy_{q}.csv}}"
        )
    lines += [
        f"models: [{model}]",
        f"suppression_limit: {limit}",
        "output: {path: out.csv, json: out.json}",
    ]
    path = tmp_path / "job.yaml"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("limit", [0.0, 0.05])
@pytest.mark.parametrize(
    ("entry", "factory"),
    [
        ("{k_map: {k: 5, population: POP}}", lambda pop: KMap(5, population=pop)),
        (
            "{delta_presence: {delta_min: 0.0, delta_max: 0.5, population: POP}}",
            lambda pop: DeltaPresence(0.0, 0.5, population=pop),
        ),
    ],
)
def test_population_models_end_to_end(tmp_path, adult, entry, factory, limit) -> None:
    arx, population, subset = adult
    population[QIS].to_csv(tmp_path / "population.csv", sep=";", index=False)
    job = _job(tmp_path, arx, entry.replace("POP", str(tmp_path / "population.csv")), limit)
    res = CliRunner().invoke(app, ["anonymize", "--config", str(job), "--quiet"])
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "out.json").read_text())
    assert doc["verified"] is True
    schema = Schema.from_roles(
        quasi_identifying=QIS,
        hierarchies={q: read_hierarchy(arx / f"adult_hierarchy_{q}.csv", name=q) for q in QIS},
    )
    expected = _exhaustive(subset, schema, [factory(population[QIS])], limit, MetricSpec("loss"))
    assert tuple(doc["transformation"][q] for q in QIS) == expected[1][1]
    assert doc["metrics"]["loss"] == pytest.approx(expected[0], rel=1e-9)


QIS5 = [*QIS, "education"]


@pytest.mark.parametrize("limit", [0.0, 0.05])
@pytest.mark.parametrize(
    "factory",
    [
        lambda pop: [KMap(2, population=pop)],
        lambda pop: [KMap(5, population=pop)],
        lambda pop: [KMap(30, population=pop)],
        lambda pop: [KMap(5, population=pop), KAnonymity(3)],
        lambda pop: [DeltaPresence(0.0, 0.15, population=pop)],
        lambda pop: [DeltaPresence(0.05, 0.15, population=pop)],
        lambda pop: [DeltaPresence(0.0, 0.5, population=pop)],
        lambda pop: [DeltaPresence(0.1, 1.0, population=pop)],
    ],
    ids=["k2", "k5", "k30", "k5+3-anon", "d0-.15", "d.05-.15", "d0-.5", "d.1-1"],
)
def test_population_pruning_keeps_the_optimum(adult, factory, limit) -> None:
    """The search prunes by the population's projections (a projection cell with fewer
    population records than k, or than 1 / delta_max, suppresses its records at every node
    below it) and still finds the exhaustive search's optimum."""
    arx, population, subset = adult
    schema = Schema.from_roles(
        quasi_identifying=QIS5,
        hierarchies={q: read_hierarchy(arx / f"adult_hierarchy_{q}.csv", name=q) for q in QIS5},
    )
    pop = population[QIS5]
    expected = _exhaustive(subset, schema, factory(pop), limit, MetricSpec("loss"))
    models = factory(pop)
    if expected is None:
        with pytest.raises(NoSolutionError):
            optimal(subset, schema, models, suppression_limit=limit)
        return
    out = optimal(subset, schema, models, suppression_limit=limit)
    assert tuple(out.transformation[q] for q in QIS5) == expected[1][1]
    assert out.details["metric_value"] == pytest.approx(expected[0], rel=1e-9)
    if limit == 0 and any(m.minimal_population_class_size() is not None for m in models):
        assert out.details["pruned_nodes"] > 0
