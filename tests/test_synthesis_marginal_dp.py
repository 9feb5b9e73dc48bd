"""MarginalDP (MST): recovery of a known Bayesian network, exact budget accounting,
reproducibility, parameter and data errors."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from sdckit.dp import Accountant, BudgetExhausted, rho_for_approx_dp
from sdckit.errors import DataError, ParameterError
from sdckit.synthesis.marginal_dp import MarginalDP
from sdckit.utility.marginals import marginal_distances

# A -> B -> C -> X, and an independent integer column "age".
P_A = np.array([0.5, 0.3, 0.2])
P_B_GIVEN_A = np.array([[0.7, 0.1, 0.1, 0.1], [0.1, 0.7, 0.1, 0.1], [0.1, 0.1, 0.1, 0.7]])
P_C_GIVEN_B = np.array([[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8], [0.3, 0.3, 0.4]])
A_VALUES = ["a0", "a1", "a2"]
B_VALUES = ["b0", "b1", "b2", "b3"]
C_VALUES = ["c0", "c1", "c2"]
BOUNDS = {"x": (-10.0, 40.0), "age": (18, 90)}


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
    model = MarginalDP(epsilon=50.0, bounds=BOUNDS).fit(data, seed=11)
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
    assert columns["age"]["encoding"] == "binned" and columns["age"]["bounds_from_data"] is False
    assert len(columns["age"]["bins"]) == 32 and columns["age"]["bins"][0][0] == 18
    assert columns["A"]["encoding"] == "categorical" and columns["A"]["domain_from_data"] is True
    assert set(model.details["data_dependent"]) == {"A", "B", "C"}
    assert model.details["randomness"] == "seeded"
    # the default size is the noisy estimate of the number of records, not the exact count
    assert len(synthetic) == round(model.details["estimated_records"])
    assert abs(len(synthetic) - 20_000) < 100


def test_spent_budget_equals_declared_budget(data):
    model = MarginalDP(epsilon=1.0, delta=1e-6, bounds=BOUNDS, max_iterations=20).fit(data, seed=1)
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
    model = MarginalDP(rho=0.01, accountant=shared, bounds=BOUNDS, max_iterations=20)
    model.fit(data, seed=1)
    assert model.accountant is shared
    assert math.isclose(shared.spent().rho, 0.01, rel_tol=1e-12)

    small = Accountant(0.5, 1e-6, composition="zcdp")
    with pytest.raises(BudgetExhausted):
        MarginalDP(epsilon=1.0, accountant=small, bounds=BOUNDS).fit(data, seed=1)
    assert small.spent().rho == 0.0  # nothing charged, nothing released


def test_same_seed_same_output_different_seed_different(data):
    small = data.iloc[:3000]

    def run(fit_seed: int, sample_seed: int) -> pd.DataFrame:
        model = MarginalDP(epsilon=1.0, bounds=BOUNDS, max_iterations=50).fit(small, seed=fit_seed)
        return model.sample(500, seed=sample_seed)

    pd.testing.assert_frame_equal(run(5, 6), run(5, 6))
    assert not run(5, 6).equals(run(7, 6))
    assert not run(5, 6).equals(run(5, 8))


def test_unseeded_fit_uses_the_csprng(data):
    model = MarginalDP(epsilon=1.0).fit(data.iloc[:2000, :3])
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
    two = MarginalDP(epsilon=5.0).fit(frame, seed=1)
    assert two.details["selected_edges"] == [["k", "y"]]
    assert math.isclose(two.accountant.spent().rho, two.privacy["rho"], rel_tol=1e-12)
    out = two.sample(4000, seed=2)
    assert abs(out["y"].isna().mean() - 0.2) < 0.03
    assert abs(out["k"].isna().mean() - frame["k"].isna().mean()) < 0.03
    one = MarginalDP(epsilon=5.0).fit(frame[["k"]], seed=1)
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


def test_value_outside_public_domain_raises_data_error(data):
    synth = MarginalDP(epsilon=1.0, domain={"B": ["b0", "b1", "b2"]}, bounds=BOUNDS)
    with pytest.raises(DataError, match="column 'B' holds 'b3'.*domain"):
        synth.fit(data, seed=1)
    with pytest.raises(DataError, match="column 'age' holds .*bounds"):
        MarginalDP(epsilon=1.0, bounds={"age": (20, 90)}).fit(data, seed=1)
    # a declared domain may list values the data lacks (still a public domain)
    model = MarginalDP(epsilon=50.0, domain={"A": [*A_VALUES, "a3"]}, bounds=BOUNDS)
    model.fit(data.iloc[:5000], seed=1)
    assert model.details["columns"]["A"]["domain_from_data"] is False
    assert model.details["columns"]["A"]["size"] == 4
