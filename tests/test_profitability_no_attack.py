"""No-attack profitability (Wan et al. 2015, as ARX's ProfitabilityProsecutorNoAttack /
-JournalistNoAttack): the derived k by hand (ARX's rounding), the class verdicts, a release
where attacking pays refused by the verification, every anonymized release checked against
a plain reference, the optimum against exhaustive search, the job file and the refusals."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import sdckit
import sdckit.algorithms.anonymize as anon_module
from sdckit.algorithms.optimal import optimal, prepare_base, suppression_budget
from sdckit.cli import app
from sdckit.core.hierarchy import Hierarchy
from sdckit.core.release import AlgorithmOutput
from sdckit.core.schema import Schema
from sdckit.errors import ConfigError, NoSolutionError, ParameterError, VerificationError
from sdckit.models import (
    KAnonymity,
    KMap,
    ProfitabilityJournalistNoAttack,
    ProfitabilityProsecutorNoAttack,
    check,
)
from sdckit.models.presence import PopulationIndex
from sdckit.models.profitability_no_attack import no_attack_k
from sdckit.utility.generalization import LatticeMetrics, MetricSpec

AGE_ROWS = [["20", "20-29", "*"], ["25", "20-29", "*"], ["30", "30-39", "*"], ["35", "30-39", "*"]]
SEX_ROWS = [["m", "*"], ["f", "*"]]
AGE = Hierarchy(AGE_ROWS, name="age")
SEX = Hierarchy(SEX_ROWS, name="sex")
SCHEMA = Schema.from_roles(quasi_identifying=["age", "sex"], hierarchies={"age": AGE, "sex": SEX})
# classes at the leaves: (20,m) x1, (25,m) x2, (30,f) x3, (35,f) x4
DATA = pd.DataFrame(
    {
        "age": ["20", "25", "25", "30", "30", "30", "35", "35", "35", "35"],
        "sex": ["m", "m", "m", "f", "f", "f", "f", "f", "f", "f"],
    }
)
# the population holds the data and more: (20,m) 4, (25,m) 2, (30,f) 6, (35,f) 4, (20,f) 5
POPULATION = pd.concat(
    [
        DATA,
        pd.DataFrame({"age": ["20"] * 3 + ["30"] * 3 + ["20"] * 5, "sex": ["m"] * 3 + ["f"] * 8}),
    ],
    ignore_index=True,
)


@pytest.mark.parametrize(
    ("gain", "cost", "k"),
    [
        (300, 4, 76),  # ARX's defaults: G / C = 75 is whole, so k = 75 + 1
        (8, 4, 3),  # 2 whole: a class of 2 gives the adversary 8/2 - 4 = 0, not < 0
        (10, 4, 3),  # 2.5: ceil
        (3, 4, 1),  # 0.75: ceil; every class deters
        (4, 4, 2),
        (0, 5, 1),  # nothing to gain
        (0, 0, 1),  # ARX tests the gain first: 0 / 0 never arises
        (1, 0, None),  # every attack pays
        (1e308, 1e-308, None),  # the quotient overflows to infinity, as in ARX
        # ARX divides in floating point: 0.3 / 0.1 = 2.9999999999999996, ceil 3 (the exact
        # quotient 3 would give 4)
        (0.3, 0.1, 3),
    ],
)
def test_the_derived_k_by_hand(gain: float, cost: float, k: int | None) -> None:
    assert no_attack_k(gain, cost) == k
    model = ProfitabilityProsecutorNoAttack(adversary_gain=gain, adversary_cost=cost)
    assert model.k == k


def test_prosecutor_class_decisions_by_hand() -> None:
    """G = 8, C = 4, k = 3: classes of 1, 2, 3, 4 give the adversary 8/|c| - 4 = 4, 0, -4/3,
    -2; the class of 2 (payoff exactly 0) is refused with the unique."""
    model = ProfitabilityProsecutorNoAttack(adversary_gain=8, adversary_cost=4)
    res = check(DATA, SCHEMA, [model])
    r = res.results[0]
    assert res.frequency_set.counts.tolist() == [1, 2, 3, 4]
    assert r.violating.tolist() == [True, True, False, False]
    assert r.class_values == pytest.approx([4.0, 0.0, -4 / 3, -2.0], rel=1e-15)
    d = res.to_dict()["models"][0]["details"]
    assert (d["k"], d["attacker_model"], d["min_class_size"]) == (3, "prosecutor", 1)
    assert d["max_adversary_payoff"] == pytest.approx(-4 / 3, rel=1e-15)
    assert (d["violating_classes"], d["violating_records"]) == (2, 3)
    # age at level 1: (20-29, m) x3, (30-39, f) x7 both deter the attack
    assert check(DATA, SCHEMA, [model], levels=[1, 0]).satisfied


def test_journalist_class_decisions_by_hand() -> None:
    """G = 300, C = 100, k = 4 population records: the population classes 4, 2, 6, 4 give
    300/P - 100 = -25, 50, -50, -25; only (25, m) is refused -- the sample's unique (20, m)
    is released, as its population class has 4 records."""
    model = ProfitabilityJournalistNoAttack(
        population=POPULATION, adversary_gain=300, adversary_cost=100
    )
    res = check(DATA, SCHEMA, [model])
    r = res.results[0]
    assert r.violating.tolist() == [False, True, False, False]
    assert r.class_values.tolist() == [-25.0, 50.0, -50.0, -25.0]
    d = res.to_dict()["models"][0]["details"]
    assert (d["k"], d["attacker_model"], d["min_population_class_size"]) == (4, "journalist", 2)
    assert model.describe()["population_records"] == len(POPULATION)
    assert model.minimal_class_size() == 1


def test_a_release_where_attacking_pays_is_refused(monkeypatch) -> None:
    """An algorithm that releases the leaves as they are: with G = 300, C = 100 (k = 4) the
    classes of 1, 2 and 3 records give the adversary 200, 50 and 0; the verification refuses
    the release (and the prosecutor's search suppresses them instead)."""
    model = ProfitabilityProsecutorNoAttack(adversary_gain=300, adversary_cost=100)

    def leaves(data, schema, models, **kwargs):
        del schema, models, kwargs
        share = {q: np.zeros(len(data)) for q in ("age", "sex")}
        return AlgorithmOutput(
            data.copy(), share, np.zeros(len(data), dtype=bool), {"age": 0, "sex": 0}
        )

    with monkeypatch.context() as patch:
        patch.setattr(anon_module, "_resolve", lambda name: leaves)
        with pytest.raises(VerificationError, match=r"no-attack profitability.*3 violating"):
            sdckit.anonymize(DATA, SCHEMA, [model], suppression_limit=1.0)
        journalist = ProfitabilityJournalistNoAttack(
            population=POPULATION, adversary_gain=300, adversary_cost=100
        )
        with pytest.raises(VerificationError, match=r"against its population \(1 violating"):
            sdckit.anonymize(DATA, SCHEMA, [journalist], suppression_limit=1.0)
    res = sdckit.anonymize(DATA, SCHEMA, [model], suppression_limit=1.0)
    assert res.verified
    assert res.details["model_checks"][0]["k"] == 4


def test_refusals_name_the_reason() -> None:
    with pytest.raises(NoSolutionError, match="attacking pays whatever the class size"):
        sdckit.anonymize(DATA, SCHEMA, [ProfitabilityProsecutorNoAttack(adversary_cost=0)])
    with pytest.raises(NoSolutionError, match="fewer than k = 76 records.*only 10 records"):
        sdckit.anonymize(DATA, SCHEMA, [ProfitabilityProsecutorNoAttack()])
    journalist = ProfitabilityJournalistNoAttack(population=POPULATION)
    with pytest.raises(NoSolutionError, match="k = 76.*only 21 population records"):
        sdckit.anonymize(DATA, SCHEMA, [journalist])
    # a limit of 1 allows the empty release, as in ARX
    empty = sdckit.anonymize(DATA, SCHEMA, [journalist], suppression_limit=1.0)
    assert empty.suppressed_records == len(DATA)
    assert empty.details["model_checks"][0]["max_adversary_payoff"] is None
    with pytest.raises(sdckit.errors.DataError, match="must contain every record"):
        check(DATA, SCHEMA, [ProfitabilityJournalistNoAttack(population=DATA.iloc[:5])])


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"adversary_gain": -1}, "parameter 'adversary_gain' must be >= 0"),
        ({"adversary_cost": float("nan")}, "parameter 'adversary_cost' must be a finite"),
    ],
)
def test_bad_amounts_are_parameter_errors(params, message) -> None:
    with pytest.raises(ParameterError, match=message):
        ProfitabilityProsecutorNoAttack(**params)


def test_the_payout_metric_shares_the_configuration() -> None:
    """ARX's one cost/benefit configuration: the publisher_payout metric takes the no-attack
    model's amounts and attacker (the journalist's success probability from its population),
    and refuses a different amount. B = 100, G = 8, C = 4 (k = 3 population records; the
    population is the data twice, so every class has P = 2 |c|): no released class is
    attacked, so the payout of a record is its benefit 100 (1 - IL); the leaves release all
    but (20, m) (P = 2): cost 100 for the suppressed record, the optimum."""
    model = ProfitabilityJournalistNoAttack(
        population=pd.concat([DATA, DATA]), publisher_benefit=100, adversary_gain=8
    )
    res = sdckit.anonymize(DATA, SCHEMA, [model], suppression_limit=1.0, metric="publisher_payout")
    assert res.details["metric_conventions"]["publisher_payout"]["attacker"] == "journalist"
    assert res.transformation == {"age": 0, "sex": 0}
    assert res.suppressed_records == 1
    assert res.metrics["publisher_payout"] == pytest.approx(100.0, rel=1e-12)
    with pytest.raises(ConfigError, match="share one cost/benefit configuration"):
        sdckit.anonymize(
            DATA,
            SCHEMA,
            [model],
            suppression_limit=1.0,
            metric={"name": "publisher_payout", "adversary_gain": 9},
        )


# -- every anonymized release satisfies the model by a plain reference -----------------------
def _labels(rows: list[list[str]]) -> dict[int, dict[str, str]]:
    """Per level, leaf -> its label (from the hierarchy rows, not sdckit's hierarchy)."""
    return {level: {row[0]: row[level] for row in rows} for level in range(len(rows[0]))}


def _released_classes(released: pd.DataFrame, suppressed: int) -> dict[tuple, int]:
    """Released class -> its size; the rows showing ``*`` everywhere count without the
    suppressed records."""
    sizes = released.groupby(["age", "sex"]).size().to_dict()
    if ("*", "*") in sizes:
        sizes[("*", "*")] -= suppressed
    return {key: size for key, size in sizes.items() if size > 0}


@st.composite
def problems(draw, population: bool = False):
    n = draw(st.integers(1, 40))
    ages = st.sampled_from(["20", "25", "30", "35"])
    sexes = st.sampled_from(["m", "f"])
    data = pd.DataFrame(
        {
            "age": draw(st.lists(ages, min_size=n, max_size=n)),
            "sex": draw(st.lists(sexes, min_size=n, max_size=n)),
        }
    )
    gain = draw(st.sampled_from([0, 3, 8, 10, 20, 300]))
    cost = draw(st.sampled_from([1, 2, 4, 7]))
    if not population:
        return data, gain, cost
    m = draw(st.integers(0, 40))
    extra = pd.DataFrame(
        {
            "age": draw(st.lists(ages, min_size=m, max_size=m)),
            "sex": draw(st.lists(sexes, min_size=m, max_size=m)),
        }
    )
    return data, gain, cost, pd.concat([data, extra], ignore_index=True)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem=problems(), algorithm=st.sampled_from(["optimal", "datafly", "mondrian"]))
def test_every_released_class_deters_the_prosecutor(problem, algorithm) -> None:
    """Each released class has ``G / |c| < C``, in whole numbers ``G < C |c|``."""
    data, gain, cost = problem
    model = ProfitabilityProsecutorNoAttack(adversary_gain=gain, adversary_cost=cost)
    result = sdckit.anonymize(data, SCHEMA, [model], suppression_limit=1.0, algorithm=algorithm)
    assert result.verified
    for key, size in _released_classes(result.data, result.suppressed_records).items():
        assert gain < cost * size, (key, size)
    (checked,) = result.details["model_checks"]
    assert checked["k"] == gain // cost + 1


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problem=problems(population=True), algorithm=st.sampled_from(["optimal", "datafly"]))
def test_every_released_class_deters_the_journalist(problem, algorithm) -> None:
    """Each released class matches ``P`` population records with ``G < C P``: the population
    generalized by the release's levels through the hierarchy rows, counted per class."""
    data, gain, cost, population = problem
    model = ProfitabilityJournalistNoAttack(
        population=population, adversary_gain=gain, adversary_cost=cost
    )
    result = sdckit.anonymize(data, SCHEMA, [model], suppression_limit=1.0, algorithm=algorithm)
    assert result.verified
    levels = result.transformation
    age, sex = _labels(AGE_ROWS)[levels["age"]], _labels(SEX_ROWS)[levels["sex"]]
    shown = pd.DataFrame({"age": population["age"].map(age), "sex": population["sex"].map(sex)})
    pcounts = shown.groupby(["age", "sex"]).size()
    for key in _released_classes(result.data, result.suppressed_records):
        assert gain < cost * int(pcounts[key]), key


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    problem=problems(population=True),
    metric=st.sampled_from(["loss", "publisher_payout"]),
    limit=st.sampled_from([0.0, 0.2, 1.0]),
)
def test_the_optimum_equals_exhaustive_search(problem, metric, limit) -> None:
    """The optimal search's answer is the exhaustive search's under k-anonymity (prosecutor)
    and k-map (journalist) with the hand-derived ``k = G // C + 1`` (whole amounts)."""
    data, gain, cost, population = problem
    k = gain // cost + 1
    cases = [
        (ProfitabilityProsecutorNoAttack(adversary_gain=gain, adversary_cost=cost), KAnonymity(k)),
        (
            ProfitabilityJournalistNoAttack(
                population=population, adversary_gain=gain, adversary_cost=cost
            ),
            KMap(k, population=population),
        ),
    ]
    for model, reference in cases:
        spec = MetricSpec(name=metric)
        if metric == "publisher_payout":
            spec = spec.with_params(
                adversary_gain=gain, adversary_cost=cost, attacker=model.attacker
            )
        expected = _exhaustive_search(data, reference, limit, spec, population)
        if expected is None:
            with pytest.raises(NoSolutionError):
                optimal(data, SCHEMA, [model], suppression_limit=limit, metric=spec)
            continue
        try:
            out = optimal(data, SCHEMA, [model], suppression_limit=limit, metric=spec)
        except NoSolutionError:  # only where no release exists below the limit
            pytest.fail(f"{model.name}: no solution, the exhaustive search found {expected}")
        assert out.details["metric_value"] == pytest.approx(expected[0], rel=1e-9, abs=1e-9)
        assert tuple(out.transformation.values()) == expected[1][1]


def _exhaustive_search(data, reference, limit, metric, population):
    """Every node of the lattice, no pruning (as ``test_optimal._exhaustive``): the cheapest
    node whose ``reference`` violations fit the budget (ties: lowest level sum, then
    lexicographic levels), or None. The payout metric against a journalist takes
    ``1 / P`` from the population, counted here from the population's frequency set."""
    base, _ = prepare_base(data, SCHEMA, [reference])
    success = None
    if metric.name == "publisher_payout" and metric.attacker == "journalist":
        index = PopulationIndex(population, base, "reference")
        success = lambda fs: 1.0 / index.join(fs)[0]  # noqa: E731 - P >= |c| >= 1
    lm = LatticeMetrics(base, metric, success=success)
    budget = suppression_budget(limit, len(data))
    best = None
    for levels in np.ndindex(*[q.height for q in base.quasi_identifiers]):
        fs = base.rollup(levels)
        violating = reference.evaluate(fs).violating
        if fs.counts[violating].sum() > budget:
            continue
        cost = lm.cost(fs, violating)
        key = (sum(levels), levels)
        tol = 1e-12 * max(1.0, abs(cost), abs(best[0])) if best else 0.0
        if best is None or cost < best[0] - tol or (abs(cost - best[0]) <= tol and key < best[1]):
            best = (cost, key)
    return best


# -- job file ----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("entry", "attacker", "k"),
    [
        ("{profitability_prosecutor_no_attack: {adversary_gain: 8}}", "prosecutor", 3),
        (
            "{profitability_journalist_no_attack: {adversary_gain: 10, population: pop.csv}}",
            "journalist",
            3,
        ),
    ],
)
def test_a_no_attack_job_via_the_cli(tmp_path: Path, entry: str, attacker: str, k: int) -> None:
    """The model is verified on the release and its derived k reported in ``model_checks``
    (JSON and report); every released class deters the attack (the journalist's population
    is the data twice, so P = 2 |c|)."""
    DATA.to_csv(tmp_path / "data.csv", index=False)
    pd.concat([DATA, DATA]).to_csv(tmp_path / "pop.csv", index=False)
    AGE.to_csv(tmp_path / "age.csv")
    SEX.to_csv(tmp_path / "sex.csv")
    job = tmp_path / "job.yaml"
    job.write_text(
        "input: {path: data.csv}\n"
        "attributes:\n"
        "  age: {role: quasi_identifying, hierarchy: age.csv}\n"
        "  sex: {role: quasi_identifying, hierarchy: sex.csv}\n"
        f"models: [{entry}]\n"
        "suppression_limit: 0.2\n"
        "output: {path: out.csv, json: out.json, report: out.html}\n"
    )
    res = CliRunner().invoke(app, ["anonymize", "--config", str(job), "--quiet"])
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "out.json").read_text())
    assert doc["verified"] is True
    (checked,) = doc["model_checks"]
    assert (checked["attacker_model"], checked["k"]) == (attacker, k)
    assert checked["max_adversary_payoff"] < 0
    assert "max_adversary_payoff" in (tmp_path / "out.html").read_text()
    out = pd.read_csv(tmp_path / "out.csv", dtype=str)
    factor = 2 if attacker == "journalist" else 1
    gain = 8 if attacker == "prosecutor" else 10
    for size in _released_classes(out, doc["suppressed_records"]).values():
        assert gain < 4 * factor * size


def test_a_bad_amount_in_a_job_names_the_key(tmp_path: Path) -> None:
    DATA.to_csv(tmp_path / "data.csv", index=False)
    job = tmp_path / "job.yaml"
    job.write_text(
        "input: {path: data.csv}\n"
        "attributes:\n"
        "  age: {role: quasi_identifying}\n"
        "  sex: {role: quasi_identifying}\n"
        "models: [{profitability_prosecutor_no_attack: {adversary_cost: -4}}]\n"
        "output: {path: out.csv}\n"
    )
    res = CliRunner().invoke(app, ["anonymize", "--config", str(job), "--quiet"])
    assert res.exit_code == 2
    assert "models[0].profitability_prosecutor_no_attack.adversary_cost" in res.output
