"""The (alpha, beta)-algorithm (Rastogi, Suciu & Hong 2007) as a synthesizer."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from sdckit.errors import DataError, ParameterError
from sdckit.synthesis.alpha_beta import AlphaBeta


def _instance(seed: int = 0, rows: int = 3000) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "a": rng.integers(0, 20, rows),
            "b": rng.choice(["x", "y", "z", "w"], rows),
            "c": rng.integers(0, 50, rows),
        }
    )


def _codes(df: pd.DataFrame) -> set[tuple]:
    return set(map(tuple, df.astype(object).to_numpy().tolist()))


def _within(observed: int, trials: int, p: float, sigmas: float = 5.0) -> bool:
    return abs(observed - trials * p) <= sigmas * math.sqrt(trials * p * (1 - p)) + 1


def test_shares_match_alpha_plus_beta_and_beta():
    data = _instance()
    alpha, beta = 0.4, 0.05
    domain = {"a": list(range(20)), "b": ["w", "x", "y", "z"], "c": list(range(50))}
    synth = AlphaBeta(alpha, beta, domain=domain).fit(data, seed=1)
    true = _codes(data)
    size = synth.details["domain_tuples"]
    assert size == 20 * 4 * 50
    assert synth.details["instance_tuples"] == len(true)
    kept = fake = 0
    views = 20
    for s in range(views):
        view = synth.sample(seed=s)
        tuples = _codes(view)
        assert len(tuples) == len(view)  # a set: no duplicates
        kept += len(tuples & true)
        fake += len(tuples - true)
    assert _within(kept, views * len(true), alpha + beta)
    assert _within(fake, views * (size - len(true)), beta)


def test_only_domain_tuples_and_dtypes():
    data = _instance(rows=500)
    synth = AlphaBeta(0.5, 0.1).fit(data, seed=0)
    view = synth.sample(seed=3)
    assert list(view.columns) == ["a", "b", "c"]
    assert view["a"].dtype == data["a"].dtype and view["c"].dtype == data["c"].dtype
    assert set(view["a"]) <= set(data["a"]) and set(view["b"]) <= set(data["b"])
    assert synth.details["domain_source"] == {"a": "data", "b": "data", "c": "data"}


def test_same_seed_same_bytes_and_n_ignored():
    data = _instance(rows=400)
    synth = AlphaBeta(0.3, 0.02).fit(data)
    one = synth.sample(5, seed=11)
    two = synth.sample(10_000, seed=11)
    assert one.to_csv(index=False).encode() == two.to_csv(index=False).encode()
    assert not one.equals(synth.sample(seed=12))


def test_large_domain_uses_rejection_without_enumerating():
    rng = np.random.default_rng(0)
    data = pd.DataFrame({f"c{i}": rng.integers(0, 100, 200) for i in range(5)})
    domain = {f"c{i}": list(range(100)) for i in range(5)}  # 10**10 tuples
    synth = AlphaBeta(0.5, 1e-7, domain=domain).fit(data, seed=0)
    view = synth.sample(seed=1)
    last = synth.details["last_view"]
    assert last["size"] == len(view)
    assert _within(last["fake_tuples"], 10**10 - synth.details["instance_tuples"], 1e-7)
    assert view.drop_duplicates().shape[0] == len(view)
    assert ((view >= 0) & (view < 100)).all().all()


def test_guarantee_formula():
    synth = AlphaBeta(0.4, 0.1, d=0.01)
    g = synth.guarantee()
    assert g["gamma"] == pytest.approx(0.01 * 0.5 / (0.01 * 0.5 + 0.99 * 0.1))
    # the (d, gamma) condition holds with equality at the reported gamma
    lhs = 0.1 / 0.5
    rhs = 0.01 * (1 - g["gamma"]) / (g["gamma"] * (1 - 0.01))
    assert lhs == pytest.approx(rhs)
    assert g["epsilon"] == pytest.approx(max(math.log(5), math.log(0.9 / 0.5)))
    assert synth.estimate_count(60, 100) == pytest.approx((60 - 10) / 0.4)


@pytest.mark.parametrize(
    ("kwargs", "name"),
    [
        ({"alpha": 0.0, "beta": 0.1}, "alpha"),
        ({"alpha": 0.5, "beta": -0.1}, "beta"),
        ({"alpha": "x", "beta": 0.1}, "alpha"),
        ({"alpha": 0.5, "beta": 0.1, "d": 2.0}, "d"),
    ],
)
def test_bad_parameters(kwargs, name):
    with pytest.raises(ParameterError, match=name):
        AlphaBeta(**kwargs)


def test_alpha_plus_beta_below_one_and_domain_checks():
    with pytest.raises(ParameterError, match="alpha \\+ beta"):
        AlphaBeta(0.7, 0.3)
    data = pd.DataFrame({"a": [1, 2, 3]})
    with pytest.raises(DataError, match="not in its domain"):
        AlphaBeta(0.5, 0.1, domain={"a": [1, 2]}).fit(data)
    with pytest.raises(ParameterError, match="domain"):
        AlphaBeta(0.5, 0.1, domain={"zz": [1]}).fit(data)
