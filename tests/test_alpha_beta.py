"""The (alpha, beta)-algorithm (Rastogi, Suciu & Hong 2007) as a synthesizer."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from sdckit.errors import DataError, ParameterError
from sdckit.synthesis.alpha_beta import AlphaBeta, dgamma_privacy


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


# --------------------------------------------------------------------------------------------
# (d, gamma)-privacy (Rastogi, Suciu & Hong 2007, Definition 2.2)
# --------------------------------------------------------------------------------------------
def test_dgamma_hand_values_private() -> None:
    # alpha = 0.4, beta = 0.1, d = 0.01, gamma = 0.05
    # (a) largest posterior = 0.01 * 0.5 / (0.01 * 0.5 + 0.99 * 0.1) = 0.005 / 0.104
    #     = 0.0480769... <= 0.05
    # (b) smallest ratio = (1 - 0.5) / (1 - 0.1) = 0.5555... >= d / gamma = 0.2
    # least gamma = max(0.0480769, 0.01 * 0.9 / 0.5 = 0.018) = 0.0480769
    r = dgamma_privacy(0.4, 0.1, 0.01, 0.05)
    assert r["dgamma_private"] is True
    assert r["positive_disclosure"]["largest_posterior"] == pytest.approx(0.005 / 0.104)
    assert r["negative_disclosure"]["smallest_posterior_over_prior"] == pytest.approx(5 / 9)
    assert r["negative_disclosure"]["bound"] == pytest.approx(0.2)
    assert r["smallest_gamma"] == pytest.approx(0.005 / 0.104)
    # gamma = 0.04 < 0.0480769: positive disclosure fails, (b) still holds (5/9 >= 0.25)
    r = dgamma_privacy(0.4, 0.1, 0.01, 0.04)
    assert r["dgamma_private"] is False
    assert r["positive_disclosure"]["holds"] is False and r["negative_disclosure"]["holds"]


def test_dgamma_negative_disclosure() -> None:
    # alpha = 0.85, beta = 0.1, d = 0.1, gamma = 0.9
    # (a) 0.1 * 0.95 / (0.095 + 0.9 * 0.1) = 0.095 / 0.185 = 0.5135 <= 0.9: holds
    # (b) (1 - 0.95) / (1 - 0.1) = 0.0556 < d / gamma = 0.1111: a tuple missing from the
    #     view is almost surely not in the instance -> fails; no gamma < 1 works, since
    #     d (1 - beta) / (1 - alpha - beta) = 0.1 * 0.9 / 0.05 = 1.8 >= 1
    r = dgamma_privacy(0.85, 0.1, 0.1, 0.9)
    assert r["positive_disclosure"]["largest_posterior"] == pytest.approx(0.095 / 0.185)
    assert r["positive_disclosure"]["holds"] is True
    assert r["negative_disclosure"]["smallest_posterior_over_prior"] == pytest.approx(0.05 / 0.9)
    assert r["negative_disclosure"]["holds"] is False
    assert r["dgamma_private"] is False and r["smallest_gamma"] is None


def test_dgamma_boundary_holds() -> None:
    # alpha = 0.25, beta = 0.5, d = 0.1, gamma = 0.2: (b) (1 - 0.75) / (1 - 0.5) = 0.5 equals
    # d / gamma = 0.5 (the bound holds with equality); (a) 0.075 / (0.075 + 0.45) = 1/7 <= 0.2
    r = dgamma_privacy(0.25, 0.5, 0.1, 0.2)
    assert r["dgamma_private"] is True
    assert r["smallest_gamma"] == pytest.approx(0.2)  # max(1/7, 0.1 * 0.5 / 0.25)
    assert dgamma_privacy(0.25, 0.5, 0.1, 0.19)["dgamma_private"] is False


@settings(max_examples=200, deadline=None)
@given(
    a=st.floats(0.01, 0.9),
    b=st.floats(0.01, 0.9),
    d=st.floats(0.001, 0.5),
    g=st.floats(0.01, 0.99),
)
def test_dgamma_matches_bayes_over_priors(a, b, d, g) -> None:
    """The verdict equals Definition 2.2 checked by Bayes' rule over a grid of priors p <= d."""
    assume(a + b < 0.99 and d < g)
    pos = d * (a + b) / (d * (a + b) + (1 - d) * b)
    neg = (1 - a - b) / (1 - b)
    assume(abs(pos - g) > 1e-6 and abs(neg - d / g) > 1e-6)  # away from the boundary
    p = np.concatenate([np.geomspace(1e-9, d, 200), [d]])
    in_view = p * (a + b) / (p * (a + b) + (1 - p) * b)  # posterior, t in V
    not_in_view = p * (1 - a - b) / (p * (1 - a - b) + (1 - p) * (1 - b))  # t not in V
    ok = bool(
        (in_view <= g).all()
        and (not_in_view <= g).all()
        and (in_view / p >= d / g).all()
        and (not_in_view / p >= d / g - 1e-7).all()
    )
    assert dgamma_privacy(a, b, d, g)["dgamma_private"] is ok


def test_dgamma_parameters_and_synthesize_json() -> None:
    with pytest.raises(ParameterError, match="d < gamma"):
        dgamma_privacy(0.4, 0.1, 0.3, 0.2)
    with pytest.raises(ParameterError, match="'gamma' needs 'd'"):
        AlphaBeta(0.4, 0.1, gamma=0.5)
    with pytest.raises(ParameterError, match="gamma"):
        AlphaBeta(0.4, 0.1, d=0.01, gamma=1.5)
    import sdckit

    data = _instance(rows=400)
    res = sdckit.synthesize(
        data, method="alpha_beta", seed=2, alpha=0.4, beta=0.1, d=0.01, gamma=0.05, evaluate=False
    )
    g = res.to_dict()["steward_evaluation"]["method_details"]["guarantee"]
    assert g["dgamma"]["dgamma_private"] is True
    assert g["dgamma"]["positive_disclosure"]["largest_posterior"] == pytest.approx(0.005 / 0.104)
    # the domain (values seen in the data: at most 20 x 4 x 50) and the instance size give the
    # uniform prior n / m and the paper's k = d m / n
    n = res.synthesizer.details["instance_tuples"]
    m = res.synthesizer.details["domain_tuples"]
    assert m == math.prod(res.synthesizer.details["domain_sizes"].values()) <= 4000
    assert g["uniform_prior"] == pytest.approx(n / m)
    assert g["k"] == pytest.approx(0.01 * m / n)


def test_synthesize_command_json_and_html(tmp_path) -> None:
    import json

    import yaml
    from typer.testing import CliRunner

    from sdckit.cli import app

    _instance(rows=300).to_csv(tmp_path / "in.csv", index=False)
    job = {
        "input": {"path": "in.csv"},
        "method": "alpha_beta",
        "seed": 1,
        "options": {"alpha": 0.85, "beta": 0.1, "d": 0.1, "gamma": 0.9, "holdout": 0},
        "output": {"path": "out.csv", "report": "s.html", "json": "s.json"},
    }
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(job))
    res = CliRunner().invoke(app, ["synthesize", "--config", str(tmp_path / "job.yaml"), "-q"])
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "s.json").read_text())
    dg = doc["steward_evaluation"]["method_details"]["guarantee"]["dgamma"]
    # hand values of test_dgamma_negative_disclosure
    assert dg["dgamma_private"] is False and dg["negative_disclosure"]["holds"] is False
    page = (tmp_path / "s.html").read_text()
    assert "(d, gamma)-privacy (d = 0.1, gamma = 0.9)" in page and "fails" in page
    (tmp_path / "s.json").unlink()
    job["options"]["gamma"] = 0.05  # below d
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(job))
    res = CliRunner().invoke(app, ["synthesize", "--config", str(tmp_path / "job.yaml"), "-q"])
    assert res.exit_code == 2 and "d < gamma" in res.output
    assert not (tmp_path / "s.json").exists()


# --------------------------------------------------------------------------------------------
# memory bound and missing parameters
# --------------------------------------------------------------------------------------------
def test_adult_view_too_large_is_refused_before_drawing() -> None:
    """The attack: alpha = 0.5, beta = 0.01 on Adult (a domain of 6.5e8 tuples) drew a view of
    6.5 million tuples and the process was killed at 7.7 GB. fit now computes the view's
    size from the domain and refuses, with the estimate and the beta that fits."""
    import sdckit.datasets

    adult = sdckit.datasets.load_adult().data
    synth = AlphaBeta(0.5, 0.01)
    with pytest.raises(ParameterError) as err:
        synth.fit(adult, seed=1)
    msg = str(err.value)
    assert "648,023,040 tuples" in msg and "about 6 GB in memory" in msg
    assert "max_memory_mb=1024" in msg and "Lower beta to at most 0.00163," in msg
    assert not synth.fitted
    fits = AlphaBeta(0.5, 0.00163).fit(adult, seed=1)  # the suggested beta fits
    assert fits.details["memory_estimate_mb"] <= 1024


def test_memory_bound_by_hand() -> None:
    data = pd.DataFrame({"a": [0, 1, 2], "b": [0, 0, 1], "c": [5, 5, 5]})
    domain = {c: list(range(100)) for c in "abc"}  # 10**6 tuples, 3 of them true
    synth = AlphaBeta(0.5, 0.001, domain=domain, max_memory_mb=1)
    est = synth.memory_estimate(10**6, 3, 3)
    free = 10**6 - 3
    assert est["expected_view_size"] == pytest.approx(0.501 * 3 + 0.001 * free)
    bound = est["expected_view_size"] + 6 * math.sqrt(free * 0.001 * 0.999)
    assert est["view_size_bound"] == pytest.approx(bound)
    assert est["bytes"] == pytest.approx(bound * 3 * 110)
    # beta_max: 3 + free b + 6 sqrt(free b) = 2**20 / 330 (the bound without the (1 - b))
    b = est["beta_max"]
    assert 3 + free * b + 6 * math.sqrt(free * b) == pytest.approx(2**20 / 330)
    synth.fit(data)  # 1,000 tuples: 0.35 MB
    with pytest.raises(ParameterError, match="over the limit max_memory_mb=1"):
        AlphaBeta(0.5, 0.01, domain=domain, max_memory_mb=1).fit(data)
    with pytest.raises(ParameterError, match="max_memory_mb"):
        AlphaBeta(0.5, 0.01, max_memory_mb=0)


def test_missing_alpha_beta_named_with_an_example(tmp_path) -> None:
    import yaml
    from typer.testing import CliRunner

    import sdckit
    from sdckit.cli import app

    with pytest.raises(ParameterError, match=r"needs the parameters alpha and beta \(missing: "
                       r"alpha, beta\).*alpha: 0.5, beta: 0.001"):  # fmt: skip
        sdckit.synthesize(_instance(rows=50), "alpha_beta")
    with pytest.raises(ParameterError, match=r"\(missing: beta\)"):
        sdckit.synthesize(_instance(rows=50), "alpha_beta", alpha=0.5)
    _instance(rows=50).to_csv(tmp_path / "in.csv", index=False)
    job = {"input": {"path": "in.csv"}, "method": "alpha_beta", "output": {"path": "o.csv"}}
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(job))
    res = CliRunner().invoke(app, ["synthesize", "--config", str(tmp_path / "job.yaml")])
    assert res.exit_code == 2, res.output
    assert "needs the parameters alpha and beta" in res.output
    assert "__init__" not in res.output and "Traceback" not in res.output
