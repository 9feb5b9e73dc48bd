"""Singling-out, linkability and inference attacks on synthetic data (Giomi et al. 2023)."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

from sdckit.errors import DataError, ParameterError
from sdckit.risk.synthetic_attacks import (
    Rate,
    inference,
    linkability,
    residual_risk,
    singling_out,
    wilson_rate,
)

Z1 = math.erf(1 / math.sqrt(2))  # the confidence level whose normal quantile is 1


def _population(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "x1": rng.normal(size=n).round(4),
            "x2": rng.normal(size=n).round(4),
            "x3": rng.uniform(0, 100, size=n).round(3),
            "c1": rng.choice(["a", "b", "c", "d"], size=n),
            "s": rng.choice(["u", "v", "w"], size=n),
        }
    )


@pytest.fixture(scope="module")
def data():
    pop = _population(800, 0)
    training, control = pop.iloc[:400].reset_index(drop=True), pop.iloc[400:]
    rng = np.random.default_rng(1)
    independent = pd.DataFrame(
        {c: training[c].to_numpy()[rng.integers(0, 400, 400)] for c in training.columns}
    )
    return training, control.reset_index(drop=True), independent


# ---------------------------------------------------------------- statistics, by hand
def test_wilson_rate_hand_computed():
    r = wilson_rate(2, 4, Z1)  # z = 1: (2 + 1/2) / 5, 1/5 * sqrt(1 + 1/4)
    assert r.value == pytest.approx(0.5, abs=1e-12)
    assert r.error == pytest.approx(1 / (2 * math.sqrt(5)), abs=1e-12)
    r = wilson_rate(1, 3, Z1)  # (1 + 1/2) / 4, 1/4 * sqrt(2/3 + 1/4)
    assert r.value == pytest.approx(0.375, abs=1e-12)
    assert r.error == pytest.approx(0.25 * math.sqrt(11 / 12), abs=1e-12)
    z = 1.959963984540054  # 95%
    r = wilson_rate(0, 10)
    assert r.value == pytest.approx(z * z / 2 / (10 + z * z), abs=1e-12)
    assert r.error == pytest.approx(r.value, abs=1e-12)  # no successes: sqrt(z^2/4) = z/2
    assert r.ci == (0.0, pytest.approx(2 * r.value))


def test_residual_risk_hand_computed():
    attack, control = Rate(6, 10, 0.6, 0.1), Rate(2, 10, 0.2, 0.05)
    residual, risk, (low, high) = residual_risk(attack, control)
    assert residual == pytest.approx(0.5)  # (0.6 - 0.2) / (1 - 0.2)
    err = math.sqrt((0.1 / 0.8) ** 2 + (0.05 * (0.6 - 1) / 0.8**2) ** 2)
    assert err == pytest.approx(math.sqrt(0.0166015625))
    assert risk == pytest.approx(0.5)
    assert (low, high) == (pytest.approx(0.5 - err), pytest.approx(0.5 + err))
    # control more attackable than training: negative residual, risk clipped to 0
    residual, risk, ci = residual_risk(Rate(1, 10, 0.1, 0.05), Rate(3, 10, 0.3, 0.05))
    assert residual == pytest.approx(-0.2 / 0.7)
    assert risk == 0.0 and ci[0] == 0.0 and ci[1] == 0.0


# ---------------------------------------------------------------- the attacks
def test_copy_of_training_is_high_risk(data):
    training, control, _ = data
    link = linkability(training, training, control, (["x1", "x2"], ["x3", "c1"]), n_attacks=200)
    assert link.n_success == 200 and link.risk > 0.9
    inf = inference(training, training, control, ["x1", "x2", "x3", "c1"], "s", n_attacks=200)
    assert inf.n_success == 200 and inf.risk > 0.9
    so = singling_out(training, training, control, n_attacks=100, mode="multivariate", n_cols=2)
    # every predicate that isolates a synthetic record isolates its training original
    assert so.n_success == so.details["n_queries"] > 50 and so.risk > 0.7
    uni = singling_out(training, training, control, n_attacks=50, mode="univariate")
    assert uni.risk > 0.7


def test_independent_marginals_is_low_risk(data):
    training, control, independent = data
    results = [
        linkability(training, independent, control, (["x1", "x2"], ["x3", "c1"]), n_attacks=200),
        inference(training, independent, control, ["x1", "x2", "x3", "c1"], "s", n_attacks=200),
        inference(training, independent, control, ["x1", "c1", "s"], "x3", n_attacks=200),
        singling_out(training, independent, control, n_attacks=100, n_cols=2),
    ]
    for r in results:
        assert r.risk_ci[0] == 0.0 or r.risk < 0.1, r.to_dict()
    assert results[2].details["regression"] is True


def test_same_seed_same_result(data):
    training, control, independent = data

    def run(seed):
        return [
            singling_out(training, independent, control, n_attacks=50, n_cols=2, seed=seed),
            singling_out(
                training, independent, control, n_attacks=50, mode="univariate", seed=seed
            ),
            linkability(training, independent, control, (["x1"], ["x3"]), n_attacks=50, seed=seed),
            inference(training, independent, control, ["x1", "c1"], "s", n_attacks=50, seed=seed),
        ]

    first, again = run(7), run(7)
    assert [r.to_dict() for r in first] == [r.to_dict() for r in again]
    via_generator = inference(
        training, independent, control, ["x1", "c1"], "s", n_attacks=50,
        seed=np.random.default_rng(7),
    )  # fmt: skip
    assert via_generator.to_dict() == first[3].to_dict()


def test_result_is_json_ready(data):
    training, control, independent = data
    r = singling_out(training, independent, control.iloc[:150], n_attacks=30, n_cols=2)
    d = json.loads(json.dumps(r.to_dict()))
    assert d["n_attacks"] == 30 and d["attack"] == "singling_out (multivariate)"
    assert set(d["attack_rate"]) == {"successes", "attacks", "rate", "error", "ci"}
    assert 0 <= d["risk_ci"][0] <= d["risk"] <= d["risk_ci"][1] <= 1


def test_predicates_agree_with_pandas():
    """The compiled predicate counter against pandas on a frame with missing values."""
    from sdckit.risk.synthetic_attacks import _conditions, _singles_out

    x = np.array([[1.0, 0.0], [2.0, np.nan], [np.nan, 1.0], [2.0, 1.0], [3.0, 0.0]])
    frame = pd.DataFrame(x, columns=["a", "b"])
    ops = {0: "==", 1: "!=", 2: "<", 3: "<=", 4: ">", 5: ">="}
    rng = np.random.default_rng(0)
    cols = rng.integers(0, 2, size=(60, 1))
    vals = rng.choice([1.0, 2.0, 0.0, np.nan], size=(60, 1))
    op = rng.integers(0, 6, size=(60, 1))
    got = _singles_out(x, _conditions(cols, vals, op))
    for i in range(60):
        c = frame.iloc[:, cols[i, 0]]
        v = vals[i, 0]
        if np.isnan(v):
            m = c.isna() if op[i, 0] == 0 else c.notna()
        else:
            m = c.notna() & pd.eval(f"c {ops[op[i, 0]]} v")
        assert got[i] == (int(m.sum()) == 1), (cols[i], vals[i], op[i])


def test_missing_values(data):
    training, control, _ = data
    training = training.copy()
    training.loc[3, "x1"] = np.nan  # the one missing x1: "x1 is missing" singles out
    training.loc[5:9, "c1"] = None
    training.loc[10:12, "s"] = None
    uni = singling_out(training, training, control, n_attacks=500, mode="univariate")
    assert uni.n_success == uni.details["n_queries"] and uni.risk > 0.9
    multi = singling_out(training, training, control, n_attacks=40, n_cols=3)
    assert multi.risk > 0.7
    link = linkability(training, training, control, (["x1", "c1"], ["x2"]), n_attacks=100)
    assert link.n_success >= 95  # a tie on x2 may pick the wrong copy
    inf = inference(training, training, control, ["x1", "x2", "c1"], "s", n_attacks=400)
    assert inf.n_success == 400  # a missing secret guessed as missing is right


def test_sparse_gower_space_gives_the_same_result(data, monkeypatch):
    import sdckit.risk.synthetic_attacks as attacks

    training, control, independent = data
    leaky = pd.concat([training.iloc[:100], independent.iloc[100:]], ignore_index=True)

    def run():
        return [
            linkability(training, leaky, control, (["x1", "c1"], ["x3", "s"]), n_attacks=100),
            inference(training, leaky, control, ["x1", "x2", "c1"], "s", n_attacks=100),
        ]

    dense = [r.to_dict() for r in run()]
    monkeypatch.setattr(attacks, "_DENSE_LIMIT", 0)
    assert [r.to_dict() for r in run()] == dense
    assert dense[0]["n_success"] > dense[0]["n_control"]


# ---------------------------------------------------------------- bad input
def test_bad_input_is_named(data):
    training, control, independent = data
    with pytest.raises(DataError, match="'zz'.*original"):
        linkability(
            training, independent.drop(columns="x1").assign(zz=1), control, (["zz"], ["x3"])
        )
    with pytest.raises(DataError, match="'x1'.*synthetic"):
        singling_out(training, independent.drop(columns="x1"), control)
    with pytest.raises(DataError, match="control data has no rows"):
        inference(training, independent, control.iloc[:0], ["x1"], "s")
    with pytest.raises(DataError, match="original data has no rows"):
        singling_out(training.iloc[:0], independent, control)
    with pytest.raises(ParameterError, match="aux_columns.*'x1'"):
        linkability(training, independent, control, (["x1", "x2"], ["x1", "x3"]))
    with pytest.raises(ParameterError, match="aux_columns"):
        linkability(training, independent, control, (["x1"], []))
    with pytest.raises(ParameterError, match="'secret'"):
        inference(training, independent, control, ["x1", "s"], "s")
    with pytest.raises(ParameterError, match="'n_cols'"):
        singling_out(training, independent, control, n_cols=9)
    with pytest.raises(ParameterError, match="'mode'"):
        singling_out(training, independent, control, mode="bivariate")
    with pytest.raises(ParameterError, match="'n_attacks'"):
        inference(training, independent, control, ["x1"], "s", n_attacks=0)
    with pytest.raises(ParameterError, match="'n_neighbors'"):
        linkability(training, independent, control, (["x1"], ["x2"]), n_neighbors=0)
    with pytest.raises(ParameterError, match="'confidence_level'"):
        wilson_rate(1, 2, confidence_level=1.0)
