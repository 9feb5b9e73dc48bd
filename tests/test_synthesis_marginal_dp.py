"""MarginalDP (MST): recovery of a known Bayesian network, exact budget accounting, a domain
that is declared (never read from the data), noise from the CSPRNG whatever the seed,
parameter errors."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from sdckit.dp import Accountant, BudgetExhausted, rho_for_approx_dp
from sdckit.errors import ParameterError
from sdckit.synthesis.marginal_dp import MarginalDP, declaration_snippet
from sdckit.utility.marginals import marginal_distances

# A -> B -> C -> X, and an independent integer column "age".
P_A = np.array([0.5, 0.3, 0.2])
P_B_GIVEN_A = np.array([[0.7, 0.1, 0.1, 0.1], [0.1, 0.7, 0.1, 0.1], [0.1, 0.1, 0.1, 0.7]])
P_C_GIVEN_B = np.array([[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8], [0.3, 0.3, 0.4]])
A_VALUES = ["a0", "a1", "a2"]
B_VALUES = ["b0", "b1", "b2", "b3"]
C_VALUES = ["c0", "c1", "c2"]
BOUNDS = {"x": (-10.0, 40.0), "age": (18, 90)}
DOMAIN = {"A": A_VALUES, "B": B_VALUES, "C": C_VALUES}
#: the whole public domain of network_data
DECLARED = {"bounds": BOUNDS, "domain": DOMAIN}


def _draw(cond: np.ndarray, parent: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    cdf = np.cumsum(cond, axis=1)[parent]
    return (rng.random(len(parent))[:, None] > cdf).sum(axis=1)


def network_data(n: int = 20_000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a = rng.choice(3, size=n, p=P_A)
    b = _draw(P_B_GIVEN_A, a, rng)
    c = _draw(P_C_GIVEN_B, b, rng)
    x = np.clip(10.0 * c + rng.normal(0.0, 2.0, n), -10.0, 40.0)
    age = rng.integers(18, 91, n)
    return pd.DataFrame(
        {
            "A": np.array(A_VALUES, dtype=object)[a],
            "B": np.array(B_VALUES, dtype=object)[b],
            "C": np.array(C_VALUES, dtype=object)[c],
            "x": x,
            "age": age,
        }
    )


def _share(frame: pd.DataFrame, cols: list[str], values: list[list[str]]) -> np.ndarray:
    index = pd.MultiIndex.from_product(values) if len(cols) > 1 else pd.Index(values[0])
    counts = frame.groupby(cols).size() if len(cols) > 1 else frame[cols[0]].value_counts()
    return counts.reindex(index, fill_value=0).to_numpy().reshape([len(v) for v in values]) / len(
        frame
    )


def _tvd(p: np.ndarray, q: np.ndarray) -> float:
    return float(0.5 * np.abs(p - q).sum())


@pytest.fixture(scope="module")
def data() -> pd.DataFrame:
    return network_data()


@pytest.fixture(scope="module")
def fitted(data: pd.DataFrame) -> tuple[MarginalDP, pd.DataFrame]:
    model = MarginalDP(epsilon=50.0, **DECLARED).fit(data, seed=11)
    return model, model.sample(seed=12)


def test_large_epsilon_recovers_the_network(fitted):
    model, synthetic = fitted
    # the true population marginals, from the conditional tables
    p_ab = P_A[:, None] * P_B_GIVEN_A
    p_b = p_ab.sum(axis=0)
    p_bc = p_b[:, None] * P_C_GIVEN_B
    p_c = p_bc.sum(axis=0)
    p_ac = p_ab @ P_C_GIVEN_B
    assert _tvd(_share(synthetic, ["A"], [A_VALUES]), P_A) < 0.02
    assert _tvd(_share(synthetic, ["B"], [B_VALUES]), p_b) < 0.02
    assert _tvd(_share(synthetic, ["C"], [C_VALUES]), p_c) < 0.02
    assert _tvd(_share(synthetic, ["A", "B"], [A_VALUES, B_VALUES]), p_ab) < 0.03
    assert _tvd(_share(synthetic, ["B", "C"], [B_VALUES, C_VALUES]), p_bc) < 0.03
    # A-C is not measured: it follows from the tree (A and C independent given B)
    assert _tvd(_share(synthetic, ["A", "C"], [A_VALUES, C_VALUES]), p_ac) < 0.03
    # the dependencies are what the selected tree contains
    edges = {frozenset(e) for e in model.details["selected_edges"]}
    assert len(edges) == 4
    assert {frozenset("AB"), frozenset("BC"), frozenset({"C", "x"})} <= edges


def test_large_epsilon_marginals_match_the_data(data, fitted):
    _, synthetic = fitted
    distances = marginal_distances(data, synthetic)
    assert max(distances.one_way.values()) < 0.03
    assert max(distances.two_way.values()) < 0.05
    assert distances.tvd_2way_mean < 0.03
    # numeric columns come back as numbers inside the public bounds; integers stay integers
    assert pd.api.types.is_integer_dtype(synthetic["age"].dtype)
    assert synthetic["age"].between(18, 90).all()
    assert synthetic["x"].between(-10.0, 40.0).all()
    assert abs(synthetic["x"].mean() - data["x"].mean()) < 0.5


def test_details_and_privacy_are_reported(fitted):
    model, synthetic = fitted
    json.dumps(model.details)  # JSON-ready
    assert model.privacy == {"epsilon": 50.0, "delta": 1e-6, "rho": rho_for_approx_dp(50.0, 1e-6)}
    columns = model.details["columns"]
    assert columns["age"]["encoding"] == "binned" and columns["age"]["bounds"] == [18, 90]
    assert len(columns["age"]["bins"]) == 32 and columns["age"]["bins"][0][0] == 18
    assert columns["A"]["encoding"] == "categorical" and columns["A"]["categories"] == A_VALUES
    # the seed fixes the sampling only: the noise comes from the CSPRNG
    assert model.details["randomness"] == "csprng" and model.details["privacy"] == "private"
    assert model.steward_details["records_fitted"] == 20_000
    # the default size is the noisy estimate of the number of records, not the exact count
    assert len(synthetic) == round(model.details["estimated_records"])
    assert abs(len(synthetic) - 20_000) < 100


def test_spent_budget_equals_declared_budget(data):
    model = MarginalDP(epsilon=1.0, delta=1e-6, **DECLARED, max_iterations=20).fit(data, seed=1)
    rho = rho_for_approx_dp(1.0, 1e-6)
    spent = model.accountant.spent()
    assert math.isclose(spent.rho, rho, rel_tol=1e-12)
    assert math.isclose(spent.epsilon, 1.0, rel_tol=1e-9)
    assert model.privacy["rho"] == rho
    labels = [label for label, _ in model.accountant.ledger]
    d = data.shape[1]
    assert labels.count("discrete_gaussian") == d + (d - 1)  # 1-way, then the tree's 2-way
    assert sum("exponential" in label for label in labels) == d - 1

    shared = Accountant(3.0, 1e-6, composition="zcdp")
    model = MarginalDP(rho=0.01, accountant=shared, **DECLARED, max_iterations=20)
    model.fit(data, seed=1)
    assert model.accountant is shared
    assert math.isclose(shared.spent().rho, 0.01, rel_tol=1e-12)

    small = Accountant(0.5, 1e-6, composition="zcdp")
    with pytest.raises(BudgetExhausted):
        MarginalDP(epsilon=1.0, accountant=small, **DECLARED).fit(data, seed=1)
    assert small.spent().rho == 0.0  # nothing charged, nothing released


def test_the_seed_does_not_fix_the_noise(data):
    """Attack: whoever holds the job file (its seed) regenerates the noise and subtracts it.
    Two fits with one seed must give different noisy marginals; only the switch named
    insecure_reproducible_noise reproduces them, and then the release says it is not
    private."""
    small = data.iloc[:3000]

    def run(fit_seed: int, sample_seed: int, insecure: bool = False) -> MarginalDP:
        model = MarginalDP(
            epsilon=1.0, **DECLARED, max_iterations=50, insecure_reproducible_noise=insecure
        )
        return model.fit(small, seed=fit_seed)

    first, second = run(5, 6), run(5, 6)
    assert first.details["estimated_records"] != second.details["estimated_records"]
    assert first.details["privacy"] == "private"
    a, b = run(5, 6, True), run(5, 6, True)
    assert a.details["estimated_records"] == b.details["estimated_records"]
    pd.testing.assert_frame_equal(a.sample(500, seed=6), b.sample(500, seed=6))
    assert not a.sample(500, seed=6).equals(a.sample(500, seed=8))  # the seed samples
    assert a.details["randomness"] == "insecure_reproducible_noise"
    assert a.details["privacy"].startswith("NOT PRIVATE")
    with pytest.raises(ParameterError, match="needs a seed"):
        MarginalDP(epsilon=1.0, **DECLARED, insecure_reproducible_noise=True).fit(small)
    with pytest.raises(ParameterError, match="insecure_reproducible_noise"):
        MarginalDP(epsilon=1.0, insecure_reproducible_noise="yes")


def test_unseeded_fit_uses_the_csprng(data):
    model = MarginalDP(epsilon=1.0, domain=DOMAIN).fit(data.iloc[:2000, :3])
    assert model.details["randomness"] == "csprng"
    assert len(model.sample(100)) == 100


def test_few_columns_and_missing_values():
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(
        {
            "k": rng.choice(np.array(["u", "v", None], dtype=object), 4000),
            "y": np.where(rng.random(4000) < 0.2, np.nan, rng.normal(size=4000)),
        }
    )
    declared = {"domain": {"k": ["u", "v", None]}, "bounds": {"y": (-4, 4)}, "nullable": ["y"]}
    two = MarginalDP(epsilon=5.0, **declared).fit(frame, seed=1)
    assert two.details["selected_edges"] == [["k", "y"]]
    assert math.isclose(two.accountant.spent().rho, two.privacy["rho"], rel_tol=1e-12)
    out = two.sample(4000, seed=2)
    assert abs(out["y"].isna().mean() - 0.2) < 0.03
    assert abs(out["k"].isna().mean() - frame["k"].isna().mean()) < 0.03
    one = MarginalDP(epsilon=5.0, domain=declared["domain"]).fit(frame[["k"]], seed=1)
    assert one.details["selected_edges"] == []
    assert math.isclose(one.accountant.spent().rho, one.privacy["rho"], rel_tol=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "parameter"),
    [
        ({"epsilon": 0.0}, "'epsilon'"),
        ({"epsilon": -1.0}, "'epsilon'"),
        ({"epsilon": float("nan")}, "'epsilon'"),
        ({"epsilon": 1.0, "delta": 0.0}, "'delta'"),
        ({"epsilon": 1.0, "delta": 1.0}, "'delta'"),
        ({"epsilon": 1.0, "delta": 1.5}, "'delta'"),
        ({}, "'epsilon'"),
        ({"epsilon": 1.0, "rho": 0.1}, "'rho'"),
        ({"rho": 0.0}, "'rho'"),
        ({"epsilon": 1.0, "max_categories": 1}, "'max_categories'"),
        ({"epsilon": 1.0, "bounds": {"x": (5, 1)}}, "'bounds'"),
        ({"epsilon": 1.0, "domain": {"A": []}}, "'domain'"),
        ({"epsilon": 1.0, "domain": {"A": ["a0", "a0"]}}, "'domain'"),
        ({"epsilon": 1.0, "accountant": Accountant(1.0)}, "'accountant'"),
    ],
)
def test_bad_parameters_raise_parameter_error(kwargs, parameter):
    with pytest.raises(ParameterError, match=parameter):
        MarginalDP(**kwargs)


def test_unknown_columns_raise_parameter_error(data):
    with pytest.raises(ParameterError, match="'bounds'.*'salary'"):
        MarginalDP(epsilon=1.0, bounds={"salary": (0, 10)}).fit(data, seed=1)
    with pytest.raises(ParameterError, match="'domain'.*'colour'"):
        MarginalDP(epsilon=1.0, domain={"colour": ["red"]}).fit(data, seed=1)
    with pytest.raises(ParameterError, match="'bounds'.*'A'.*not numeric"):
        MarginalDP(epsilon=1.0, bounds={"A": (0, 1)}).fit(data, seed=1)
    with pytest.raises(ParameterError, match="'other'.*'A'.*'a9'.*does not list"):
        MarginalDP(epsilon=1.0, domain=DOMAIN, other={"A": "a9"})
    with pytest.raises(ParameterError, match="'other'.*'age'.*no 'domain'"):
        MarginalDP(epsilon=1.0, **DECLARED, other={"age": 20})
    with pytest.raises(ParameterError, match="'nullable'.*list"):
        MarginalDP(epsilon=1.0, nullable="age")
    with pytest.raises(ParameterError, match="'nullable'/'other'.*'height'"):
        MarginalDP(epsilon=1.0, **DECLARED, nullable=["height"]).fit(data, seed=1)


def test_an_undeclared_domain_is_refused_before_anything_is_read():
    """Attack: a one-record input with epsilon 1 came back as that record, repeated: the
    domain (the values present, a minimum and maximum) was read from the data for free."""
    one = pd.DataFrame({"sex": ["F"], "age": [87], "diagnosis": ["hiv"]})
    budget = Accountant(1.0, 1e-6, composition="zcdp")
    with pytest.raises(ParameterError) as caught:
        MarginalDP(epsilon=1.0, accountant=budget, bounds={"age": (17, 90)}).fit(one, seed=1)
    message = str(caught.value)
    assert "'sex', 'diagnosis' is not declared" in message
    assert "  domain:" in message and "    sex: [<value>, <value>, ...]" in message
    assert "F" not in message.split("e.g.")[1] and "hiv" not in message  # no data value
    assert budget.spent().rho == 0.0  # refused before anything was charged
    assert "    age: [<low>, <high>]" in declaration_snippet(["age"], {"age": "numeric"})


def test_values_outside_the_declared_domain_never_reach_the_release(data):
    """Attack: the JSON listed every observed value (all ages present, nobody 87 or 89), and a
    value outside a declared domain was refused naming it (a refusal that depends on the
    records). Now numbers are clamped, unknown categories counted as the declared ``other``
    or their records left out; the release lists the declaration only, and the counts are
    the steward's."""
    frame = data.iloc[:4000].copy()
    frame.loc[:9, "B"] = "secret-value"
    frame.loc[:4, "age"] = 150  # above the declared bounds
    frame["age"] = frame["age"].where(~frame["age"].isin([87, 89]), 88)
    model = MarginalDP(epsilon=50.0, **DECLARED, other={"B": "b3"}).fit(frame, seed=1)
    text = json.dumps(model.details)
    assert "secret-value" not in text and "150" not in text
    assert model.details["columns"]["B"]["categories"] == B_VALUES
    assert model.details["columns"]["B"]["other"] == "b3"
    # the bins are the declaration's, whatever ages occur (87 and 89 are absent from the data)
    bins = model.details["columns"]["age"]["bins"]
    same = MarginalDP(epsilon=50.0, **DECLARED, other={"B": "b3"}).fit(data.iloc[:4000], seed=1)
    assert bins == same.details["columns"]["age"]["bins"]
    synthetic = model.sample(4000, seed=2)
    assert "secret-value" not in set(synthetic["B"]) and synthetic["age"].between(18, 90).all()
    steward = model.steward_details["values_outside_declared_domain"]
    assert steward["B"] == {"outside_domain": 10, "counted_as_other": 10}
    assert steward["age"] == {"clamped": 5, "left_out": 0}
    assert model.steward_details["records_fitted"] == 4000
    # without `other` the records are left out (a row filter: the guarantee holds)
    dropped = MarginalDP(epsilon=50.0, **DECLARED).fit(frame, seed=1)
    assert dropped.steward_details["records_left_out"] == 10
    assert dropped.steward_details["values_outside_declared_domain"]["B"]["left_out"] == 10
    # a declared domain may list values the data lacks (still a public domain)
    model = MarginalDP(epsilon=50.0, domain={**DOMAIN, "A": [*A_VALUES, "a3"]}, bounds=BOUNDS)
    model.fit(data.iloc[:5000], seed=1)
    assert model.details["columns"]["A"]["size"] == 4


def test_a_domain_found_with_budget(data):
    """The alternative to declaring: a categorical column's values found by DP partition
    selection, accounted in the same budget (approximate zCDP) and reported; a value one
    record holds is not found, and its record counts as the column's discover label."""
    from sdckit.dp.partition_selection import partition_threshold

    frame = data.iloc[:6000].copy()
    frame.loc[0, "B"] = "only-one-person"
    declared = {"domain": {"A": A_VALUES, "C": C_VALUES}, "bounds": BOUNDS}
    model = MarginalDP(epsilon=1.0, delta=1e-6, **declared, discover={"B": "other"})
    model.fit(frame, seed=1)
    found = model.details["columns"]["B"]["categories"]
    assert found == [*B_VALUES, "other"] and model.details["columns"]["B"]["other"] == "other"
    assert "only-one-person" not in json.dumps(model.details)
    spent = model.accountant.spent()
    assert math.isclose(spent.epsilon, 1.0, rel_tol=1e-9) and spent.delta == 1e-6
    assert model.privacy["discovery_delta"] == 5e-7
    assert model.rho == rho_for_approx_dp(1.0, 5e-7)
    labels = [label for label, _ in model.accountant.ledger]
    assert labels[0] == "partition_selection"
    report = model.details["discovery"]["B"]
    assert report["values_found"] == 4 and report["delta"] == 5e-7
    assert report["rho"] == pytest.approx(0.1 * model.rho)
    assert report["threshold"] == partition_threshold(report["sigma"], 5e-7)
    assert model.details["budget_rho"]["discovery"] == pytest.approx(0.1 * model.rho)
    assert model.steward_details["values_outside_declared_domain"]["B"] == {
        "outside_domain": 1,
        "counted_as_other": 1,
    }
    with pytest.raises(ParameterError, match="'discover'.*'x'.*numeric"):
        MarginalDP(
            epsilon=1.0, domain=DOMAIN, bounds={"age": BOUNDS["age"]}, discover={"x": "other"}
        ).fit(frame, seed=1)
    with pytest.raises(ParameterError, match="'B'.*more than one"):
        MarginalDP(epsilon=1.0, **DECLARED, discover={"B": "other"}).fit(frame, seed=1)
    with pytest.raises(ParameterError, match="'discover'.*label"):
        MarginalDP(epsilon=1.0, discover={"B": None})
    with pytest.raises(ParameterError, match="'discover_share'"):
        MarginalDP(epsilon=1.0, discover={"B": "other"}, discover_share=1.0)
