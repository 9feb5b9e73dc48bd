"""Synthesizers (sequential CART/parametric, partial, hybrid), combining rules, the
``sdckit.synthesize`` API and the ``sdckit synthesize`` job."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import sdckit
from sdckit.cli import app
from sdckit.errors import DataError, ParameterError
from sdckit.synthesis.combining import combine
from sdckit.synthesis.hybrid import Hybrid, moment_matched
from sdckit.synthesis.partial import Partial, records_at_risk
from sdckit.synthesis.sequential import Sequential

runner = CliRunner()

#: The Bayesian network the data are drawn from: A -> B -> C, A -> X (numeric).
P_A = {"a0": 0.6, "a1": 0.4}
P_B_GIVEN_A = {"a0": {"b0": 0.8, "b1": 0.2}, "a1": {"b0": 0.1, "b1": 0.9}}
P_C_GIVEN_B = {"b0": {"c0": 0.7, "c1": 0.2, "c2": 0.1}, "b1": {"c0": 0.1, "c1": 0.3, "c2": 0.6}}
MEAN_X = {"a0": 10.0, "a1": 30.0}


def network(n: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)

    def child(parent: np.ndarray, table: dict) -> np.ndarray:
        out = np.empty(len(parent), dtype=object)
        for value, dist in table.items():
            rows = parent == value
            out[rows] = rng.choice(list(dist), size=rows.sum(), p=list(dist.values()))
        return out

    a = rng.choice(list(P_A), size=n, p=list(P_A.values())).astype(object)
    b = child(a, P_B_GIVEN_A)
    c = child(b, P_C_GIVEN_B)
    x = np.array([MEAN_X[v] for v in a]) + rng.normal(0, 2, n)
    return pd.DataFrame({"A": a, "B": b, "C": c, "X": x})


@pytest.fixture(scope="module")
def bn() -> pd.DataFrame:
    return network(6000, 11)


def conditional(df: pd.DataFrame, child: str, parent: str) -> pd.DataFrame:
    return pd.crosstab(df[parent], df[child], normalize="index")


@pytest.mark.parametrize("method, tol", [("cart", 0.04), ("parametric", 0.04)])
def test_sequential_recovers_the_network(bn: pd.DataFrame, method: str, tol: float) -> None:
    syn = Sequential(method=method).fit(bn, seed=1).sample(seed=2)
    assert len(syn) == len(bn) and list(syn.columns) == list(bn.columns)
    assert abs((syn["A"] == "a0").mean() - P_A["a0"]) < tol
    for child, parent, table in (("B", "A", P_B_GIVEN_A), ("C", "B", P_C_GIVEN_B)):
        got = conditional(syn, child, parent)
        for p_value, dist in table.items():
            for c_value, prob in dist.items():
                assert abs(got.loc[p_value, c_value] - prob) < tol, (child, p_value, c_value)
    for a_value, mean in MEAN_X.items():
        assert abs(syn.loc[syn["A"] == a_value, "X"].mean() - mean) < 0.5
    # the synthetic values are drawn, not copied row by row
    assert not syn[["A", "X"]].equals(bn[["A", "X"]])


def test_same_seed_same_bytes_and_copies_differ(bn: pd.DataFrame) -> None:
    r1 = sdckit.synthesize(bn, "cart", seed=5, m=2, evaluate=False)
    r2 = sdckit.synthesize(bn, "cart", seed=5, m=2, evaluate=False)
    for a, b in zip(r1.copies, r2.copies, strict=True):
        pd.testing.assert_frame_equal(a, b)
    assert not r1.copies[0].equals(r1.copies[1])
    r3 = sdckit.synthesize(bn, "cart", seed=6, evaluate=False)
    assert not r3.data.equals(r1.data)


def test_visit_sequence_predictors_and_methods(bn: pd.DataFrame) -> None:
    s = Sequential(
        method={"C": "sample"}, visit_sequence=["B", "A", "C", "X"], predictors={"X": ["A"]}
    ).fit(bn, seed=0)
    models = {m["column"]: m for m in s.details["models"]}
    assert models["B"]["method"] == "sample"  # first in the sequence: its marginal
    assert models["A"]["predictors"] == ["B"]
    assert models["C"]["method"] == "sample"
    assert models["X"]["predictors"] == ["A"]
    syn = s.sample(100, seed=1)
    assert len(syn) == 100
    # C sampled from its marginal: independent of B
    big = s.sample(20000, seed=2)
    got = conditional(big, "C", "B")
    assert abs(got.loc["b0", "c0"] - got.loc["b1", "c0"]) < 0.05


def test_sequential_parameter_errors(bn: pd.DataFrame) -> None:
    with pytest.raises(ParameterError, match="method"):
        Sequential(method="forest")
    with pytest.raises(DataError, match="'Q' is not in the data"):
        Sequential(keep=["Q"]).fit(bn)
    with pytest.raises(ParameterError, match="synthesized after it"):
        Sequential(visit_sequence=["A", "B"], predictors={"A": ["B"]}).fit(bn)
    with pytest.raises(ParameterError, match="call fit"):
        Sequential().sample(3)
    with pytest.raises(ParameterError, match="unknown method 'cartt'.*cart"):
        sdckit.synthesize(bn, "cartt")


def test_missing_numeric_values_are_synthesized_with_their_share() -> None:
    df = network(4000, 3)
    rng = np.random.default_rng(0)
    df.loc[rng.random(len(df)) < 0.25, "X"] = np.nan
    syn = Sequential().fit(df, seed=1).sample(seed=2)
    assert abs(syn["X"].isna().mean() - 0.25) < 0.03
    assert syn["X"].dropna().between(df["X"].min(), df["X"].max()).all()


def test_keep_gives_partially_synthetic_records(bn: pd.DataFrame) -> None:
    syn = Sequential(keep=["A"]).fit(bn, seed=1).sample(seed=2)
    pd.testing.assert_series_equal(syn["A"], bn["A"])
    with pytest.raises(ParameterError, match="partial synthesis keeps"):
        Sequential(keep=["A"]).fit(bn, seed=1).sample(10)


def test_partial_changes_only_the_records_at_risk() -> None:
    df = network(3000, 5)
    df["Z"] = np.random.default_rng(1).integers(0, 400, len(df))  # makes uniques
    qis = ["A", "B", "Z"]
    risky = records_at_risk(df, qis, k=2)
    counts = df.groupby(qis).size()
    expected = df.set_index(qis).index.map(counts).to_numpy() < 2
    np.testing.assert_array_equal(risky, expected)
    p = Partial(qis, attributes=["Z"]).fit(df, seed=3)
    syn = p.sample(seed=4)
    assert p.details["records_at_risk"] == int(risky.sum()) > 0
    pd.testing.assert_frame_equal(syn.loc[~risky], df.loc[~risky])
    pd.testing.assert_frame_equal(syn[["A", "B", "C", "X"]], df[["A", "B", "C", "X"]])
    assert (syn.loc[risky, "Z"] != df.loc[risky, "Z"]).mean() > 0.5


def test_hybrid_preserves_group_and_file_moments() -> None:
    rng = np.random.default_rng(2)
    x = rng.normal(size=(997, 3)) @ np.array([[1, 0.5, 0], [0, 1, 0.3], [0, 0, 2]])
    df = pd.DataFrame(x, columns=["u", "v", "w"])
    df["g"] = rng.choice(["p", "q", "r"], len(df))
    h = Hybrid(k=4).fit(df, seed=1)
    syn = h.sample(seed=2)
    np.testing.assert_allclose(syn[["u", "v", "w"]].mean(), df[["u", "v", "w"]].mean(), atol=1e-9)
    np.testing.assert_allclose(syn[["u", "v", "w"]].cov(), df[["u", "v", "w"]].cov(), atol=1e-9)
    assert (syn["g"].value_counts().sort_index() == df["g"].value_counts().sort_index()).all()
    assert not np.isclose(syn["u"], df["u"]).any()
    assert h.details["group_size_min"] >= 4
    pd.testing.assert_frame_equal(Hybrid(k=1).fit(df).sample(seed=0), df)
    with pytest.raises(ParameterError, match="k must be"):
        Hybrid(k=0)


@settings(max_examples=40, deadline=None)
@given(
    k=st.integers(1, 6),
    p=st.integers(1, 5),
    seed=st.integers(0, 10_000),
)
def test_moment_matching_is_exact(k: int, p: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(k, p)) * rng.uniform(0.1, 10, p)
    y = moment_matched(x, rng)
    np.testing.assert_allclose(y.mean(axis=0), x.mean(axis=0), atol=1e-8)
    xc, yc = x - x.mean(axis=0), y - y.mean(axis=0)
    np.testing.assert_allclose(yc.T @ yc, xc.T @ xc, atol=1e-7)


def test_combining_rules_hand_computed() -> None:
    q, v = [1.0, 2.0, 3.0], [0.5, 0.5, 0.5]  # q_bar 2, v_bar 0.5, b 1
    c = combine(q, v, n_original=100, n_synthetic=200)
    assert c.estimate == pytest.approx(2.0)
    assert c.variance == pytest.approx(0.5 * 200 / 100)
    simple = combine(q, v, n_original=100, n_synthetic=200, population_inference=True)
    assert simple.variance == pytest.approx(1.0 * (1 + 0.5 / 3))
    proper = combine(q, v, n_original=100, population_inference=True, proper=True)
    assert proper.variance == pytest.approx(0.5 * (1 + 2 / 3))
    partial = combine(q, v, n_original=100, partial=True)
    assert partial.variance == pytest.approx(0.5 + 1 / 3)
    lo, hi = partial.interval
    assert hi - lo == pytest.approx(2 * 1.959963985 * np.sqrt(0.5 + 1 / 3))
    with pytest.raises(ParameterError, match="m >= 2"):
        combine([1.0], [0.1], n_original=10, partial=True)


#: the public domain of network(): categories and the bounds of X
BN_DECLARED = {
    "domain": {"A": list(P_A), "B": ["b0", "b1"], "C": ["c0", "c1", "c2"]},
    "bounds": {"X": [-10.0, 50.0]},
}


def test_marginal_dp_through_the_api_states_its_budget(bn: pd.DataFrame) -> None:
    r = sdckit.synthesize(
        bn, "marginal_dp", seed=1, epsilon=1.0, delta=1e-6, holdout=0.2, **BN_DECLARED
    )
    d = r.to_dict()
    privacy = d["release"]["privacy"]
    assert privacy["epsilon"] == 1.0 and privacy["delta"] == 1e-6 and privacy["private"]
    ev = d["steward_evaluation"]
    assert ev["training_records"] == 4800 and ev["holdout_records"] == 1200
    assert set(ev["utility"]) >= {"pmse", "s_pmse", "tvd_1way_mean", "tvd_2way_mean"}
    assert 0 <= ev["risk"]["dcr_share_closer_than_holdout"] <= 1
    # the DCR measures a seeded sample of the synthetic records, and says so
    dcr = ev["risk"]["dcr"]
    assert dcr["measured_records"] == min(2000, dcr["synthetic_records"]) == 2000
    assert any("random sample of 2,000" in note for note in ev["notes"])
    with pytest.raises(ParameterError, match="needs its privacy budget"):
        sdckit.synthesize(bn, "marginal_dp")
    with pytest.raises(ParameterError, match="takes no epsilon"):
        sdckit.synthesize(bn, "cart", epsilon=1.0)


def test_safepub_needs_epsilon_and_a_synthesizer_names_its_variant() -> None:
    from sdckit.synthesis.api import make_synthesizer
    from sdckit.synthesis.sequential import Sequential

    # rho is marginal_dp's budget; safepub spends epsilon and has no rho
    with pytest.raises(
        ParameterError, match="'safepub' has no parameter 'rho'; it takes epsilon_s"
    ):
        make_synthesizer("safepub", delta=1e-5, rho=0.5)
    with pytest.raises(ParameterError, match="needs its privacy budget"):
        make_synthesizer("safepub", delta=1e-5)
    assert make_synthesizer("parametric").name == "parametric"
    assert make_synthesizer("cart").name == Sequential.name == "cart"


def _job(tmp_path, df: pd.DataFrame, **keys) -> object:
    df.to_csv(tmp_path / "data.csv", index=False)
    doc = {
        "input": {"path": "data.csv"},
        "seed": 4,
        "output": {"path": "syn.csv", "report": "syn.html", "json": "syn.json"},
        **keys,
    }
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_records_default_to_the_input_size_and_the_option_sets_them(
    tmp_path, bn: pd.DataFrame
) -> None:
    small = bn.head(1000)
    # a fully synthetic method: the input's size, holdout or not
    for holdout in (0.0, 0.3):
        r = sdckit.synthesize(small, "cart", seed=2, holdout=holdout, evaluate=False)
        assert len(r.data) == 1000 and r.training_records == 1000 - round(holdout * 1000)
    # one record per training record for partially synthetic data
    r = sdckit.synthesize(small, "partial", seed=2, holdout=0.3, evaluate=False,
                          quasi_identifiers=["A", "B"], attributes=["C"])  # fmt: skip
    assert len(r.data) == 700
    # the job's records: option; n: (its former name) still works; both at once is refused
    job = _job(tmp_path, small, method="cart", options={"records": 250, "holdout": 0})
    assert runner.invoke(app, ["synthesize", "--config", str(job)]).exit_code == 0
    assert json.loads((tmp_path / "syn.json").read_text())["release"]["records"] == 250
    job = _job(tmp_path, small, method="cart", options={"n": 120, "holdout": 0})
    assert runner.invoke(app, ["synthesize", "--config", str(job)]).exit_code == 0
    assert json.loads((tmp_path / "syn.json").read_text())["release"]["records"] == 120
    job = _job(tmp_path, small, method="cart", options={"n": 120, "records": 5})
    res = runner.invoke(app, ["synthesize", "--config", str(job)])
    assert res.exit_code == 2 and "records" in res.output and "once" in res.output


def test_marginal_dp_scales_its_noisy_count_not_the_exact_size(bn: pd.DataFrame) -> None:
    # the default size of a DP copy is the noisy count of the training records scaled by
    # 1 / (1 - holdout): close to the input's 6,000 records, but not read from it
    r = sdckit.synthesize(
        bn, "marginal_dp", seed=1, epsilon=1.0, delta=1e-6, holdout=0.2, evaluate=False,
        **BN_DECLARED,
    )  # fmt: skip
    estimate = r.synthesizer._n_estimate
    assert len(r.data) == max(1, round(estimate / 0.8))
    assert abs(len(r.data) - 6000) < 300


def test_synthesize_job_writes_copies_report_and_json(tmp_path, bn: pd.DataFrame) -> None:
    job = _job(
        tmp_path,
        bn,
        method="cart",
        m=2,
        attributes={"A": "quasi_identifying", "B": "quasi_identifying", "C": "sensitive"},
    )
    res = runner.invoke(app, ["synthesize", "--config", str(job)])
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "syn.json").read_text())
    release, ev = doc["release"], doc["steward_evaluation"]
    # as many records as the input (synthpop's convention), though 1,200 were held out
    assert release["copies"] == 2 and release["records"] == 6000 and ev["training_records"] == 4800
    assert release["privacy"]["guarantee"] is None and release["details"] == {}
    assert ev["risk"]["tcap"] is not None
    assert {"pmse", "s_pmse", "tvd_1way_mean", "tvd_2way_mean"} <= set(ev["utility"])
    assert "visit_sequence" in ev["method_details"]  # no guarantee covers cart's facts
    first = pd.read_csv(tmp_path / "syn_1.csv")
    assert len(first) == 6000 and (tmp_path / "syn_2.csv").is_file()
    page = (tmp_path / "syn.html").read_text()
    assert "For the data steward, not covered by epsilon: disclosure risk" in page
    # same job, same bytes
    again = runner.invoke(app, ["synthesize", "--config", str(job), "--quiet"])
    assert again.exit_code == 0
    pd.testing.assert_frame_equal(pd.read_csv(tmp_path / "syn_1.csv"), first)


def test_synthesize_job_bad_input_exit_2(tmp_path, bn: pd.DataFrame) -> None:
    res = runner.invoke(app, ["synthesize", "--config", str(_job(tmp_path, bn, method="gan"))])
    assert res.exit_code == 2 and "unknown method 'gan'" in res.output
    res = runner.invoke(
        app,
        ["synthesize", "--config", str(_job(tmp_path, bn, method="safepub", m=2, epsilon=1.0))],
    )
    assert res.exit_code == 2
    res = runner.invoke(
        app,
        ["synthesize", "--config", str(_job(tmp_path, bn, method="cart", options={"leaf": 3}))],
    )
    assert res.exit_code == 2 and "leaf" in res.output
    # an unknown parameter: the key, the ones the method takes and the closest, before the fit
    job = _job(tmp_path, bn, method="hybrid", options={"colums": ["A"], "holdout": 0})
    res = runner.invoke(app, ["synthesize", "--config", str(job)])
    assert res.exit_code == 2, res.output
    assert "options: synthesize: method 'hybrid' has no parameter 'colums'; it takes k, " in (
        " ".join(res.output.split())
    )
    assert "did you mean 'columns'?" in " ".join(res.output.split())
    # a bad value of a safepub option is refused when the synthesizer is built, not in the fit
    job = _job(tmp_path, bn, method="safepub", epsilon=1.0, delta=1e-5, options={"score": "x"})
    res = runner.invoke(app, ["synthesize", "--config", str(job)])
    assert res.exit_code == 2 and "option 'score' must be one of loss" in res.output


def test_a_per_variable_method_mapping_reaches_the_synthesizer(tmp_path, bn: pd.DataFrame) -> None:
    """Sequential's own ``method`` (a mapping variable -> method) is a cart parameter like any
    other in a job's ``options:``, not taken for the job's ``method:``."""
    job = _job(tmp_path, bn.head(400), method="cart",
               options={"method": {"A": "sample"}, "holdout": 0})  # fmt: skip
    res = runner.invoke(app, ["synthesize", "--config", str(job)])
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "syn.json").read_text())
    assert doc["release"]["parameters"]["method"] == {"A": "sample"}


@pytest.mark.parametrize(
    ("method", "parameters", "message"),
    [
        (
            "cart",
            {"keep": "A"},
            "cart: keep must be a list of column names, e.g. [age, sex], got 'A'",
        ),
        ("cart", {"visit_sequence": 3}, "cart: visit_sequence must be a list of column names"),
        ("cart", {"predictors": ["A"]}, "cart: predictors must map each variable"),
        ("cart", {"predictors": {"A": "B"}}, "predictors['A'] must be a list of column names"),
        (
            "partial",
            {"quasi_identifiers": ["A"], "records": ["x"]},
            "records must be a list of true",
        ),
        ("partial", {"quasi_identifiers": "A"}, "quasi_identifiers must be a list of column"),
        ("hybrid", {"columns": {"A": 1}}, "hybrid: columns must be a list of column names"),
        ("hybrid", {"columns": [1.5]}, "got the item 1.5"),
    ],
)
def test_column_list_parameters_are_checked_when_built(method, parameters, message) -> None:
    from sdckit.synthesis.api import make_synthesizer

    with pytest.raises(ParameterError) as info:
        make_synthesizer(method, **parameters)
    assert message in str(info.value)


def test_ci_overlap_and_correlation_differences_hand_cases() -> None:
    from sdckit.utility.regression import ci_overlap, correlation_differences

    rng = np.random.default_rng(0)
    x = rng.normal(size=400)
    df = pd.DataFrame({"x": x, "y": 2 * x + rng.normal(size=400), "g": rng.choice(["a", "b"], 400)})
    same = ci_overlap(df, df, "y", ["x", "g"])
    assert same["mean"] == pytest.approx(1.0)
    assert set(same["coefficients"]) == {"(intercept)", "x", "g=b"}
    shifted = df.assign(y=df["y"] + 100)  # intercept moves far: its intervals are apart
    far = ci_overlap(df, shifted, "y", ["x"])
    assert far["coefficients"]["(intercept)"] < 0
    assert far["coefficients"]["x"] == pytest.approx(1.0)
    corr = correlation_differences(df, df.assign(y=-df["y"]))
    r = np.corrcoef(df["x"], df["y"])[0, 1]
    assert corr["mean_abs"] == pytest.approx(2 * abs(r))
    assert correlation_differences(df[["x", "g"]], df[["x", "g"]])["mean_abs"] is None


def test_synthesize_reports_regression_overlap(bn: pd.DataFrame) -> None:
    r = sdckit.synthesize(bn, "cart", seed=2, regression={"target": "X", "predictors": ["A"]})
    assert 0.3 < r.utility["ci_overlap"]["mean"] <= 1.0


def test_compare_grid_ranks_synthetic_beside_masked_releases(tmp_path, bn: pd.DataFrame) -> None:
    small = bn.iloc[:1500]
    job = _job(
        tmp_path,
        small,
        attributes={"A": "quasi_identifying", "B": "quasi_identifying", "C": "sensitive"},
        grid=[
            {
                "synthesize": {
                    "method": ["cart", "marginal_dp"],
                    "epsilon": [1.0],
                    "delta": 1e-6,
                    "options": BN_DECLARED,  # marginal_dp's domain, not given to cart
                }
            },
            {"pram": {"columns": ["B"], "p_diagonal": 0.7}},
        ],
        output={"json": "cmp.json", "report": "cmp.html"},
    )
    res = runner.invoke(app, ["compare", "--config", str(job)])
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "cmp.json").read_text())
    assert doc["scale"] == "synthetic"
    labels = {r["label"] for r in doc["ranking"]}
    assert labels == {
        "synthesize(cart)",
        "synthesize(marginal_dp, epsilon=1, delta=1e-06)",
        "pram(p_diagonal=0.7)",
    }
    for r in doc["ranking"]:
        assert r["information_loss"] == pytest.approx(100 * r["pmse"] / 0.25, rel=1e-3)
        assert r["disclosure_risk"] == pytest.approx(100 * r["tcap"])
    refused = _job(
        tmp_path,
        small,
        attributes={"A": "quasi_identifying", "C": "sensitive"},
        grid=[{"synthesize": {"method": "cart"}}],
        options={"scale": "reidentification"},
        output={"json": "cmp.json"},
    )
    res = runner.invoke(app, ["compare", "--config", str(refused)])
    assert res.exit_code == 2 and "scale: synthetic" in res.output


@pytest.mark.parametrize("entries", [None, 1000, 1])  # one block; 4 query rows a block; 1
def test_nearest_and_second_nearest_gower_distances_brute_force(monkeypatch, entries) -> None:
    import sdckit.risk.synthetic as synthetic
    from sdckit.risk.synthetic import _nearest_gower, dcr_holdout

    if entries is not None:  # blocks of query rows, the last one partial
        monkeypatch.setattr(synthetic, "_BLOCK_ENTRIES", entries)
    df = network(400, 9).round({"X": 0})
    ref, query = df.iloc[:250], df.iloc[250:]
    d1, d2 = _nearest_gower(ref, query, list(df.columns), ref)
    span = ref["X"].max() - ref["X"].min()
    cat = ["A", "B", "C"]
    brute = (query[cat].to_numpy()[:, None, :] != ref[cat].to_numpy()[None, :, :]).sum(
        axis=2
    ) + np.abs(
        np.clip((query["X"].to_numpy() - ref["X"].min()) / span, -0.5, 1.5)[:, None]
        - ((ref["X"].to_numpy() - ref["X"].min()) / span)[None, :]
    )
    ordered = np.sort(brute, axis=1)
    np.testing.assert_allclose(d1, ordered[:, 0], atol=1e-9)
    np.testing.assert_allclose(d2, ordered[:, 1], atol=1e-9)
    # a synthetic set that copies the training records: NNDR 0 against training
    copies = ref.drop_duplicates().iloc[:100]
    d = dcr_holdout(ref, query, copies)
    assert d.exact_copies == len(copies) and d.dcr_training_median == 0.0
    assert d.nndr_training_median <= d.nndr_holdout_median


def test_a_failed_fit_leaves_the_synthesizer_unfitted(bn: pd.DataFrame) -> None:
    s = Sequential(keep=["nope"])
    with pytest.raises(DataError):
        s.fit(bn)
    assert not s.fitted
    with pytest.raises(ParameterError, match="call fit"):
        s.sample(3)


def test_marginal_dp_job_without_a_declared_domain_is_refused(tmp_path) -> None:
    """Attack: a one-record input with epsilon 1 printed `privacy: epsilon 1` and wrote that
    record six times; the domain was read from the data for free. The job is refused (exit 2)
    with the declaration to write, and nothing is written."""
    one = pd.DataFrame({"sex": ["F"], "age": [87], "diagnosis": ["hiv"]})
    job = _job(tmp_path, one, method="marginal_dp", epsilon=1.0, options={"holdout": 0})
    res = runner.invoke(app, ["synthesize", "--config", str(job)])
    assert res.exit_code == 2, res.output
    assert "'sex', 'age', 'diagnosis' is not declared" in res.output
    assert "sex: [<value>, <value>, ...]" in res.output and "age: [<low>, <high>]" in res.output
    assert "hiv" not in res.output and "Traceback" not in res.output
    assert not (tmp_path / "syn.csv").exists() and not (tmp_path / "syn.json").exists()
    declared = {
        "holdout": 0,
        "domain": {"sex": ["F", "M"], "diagnosis": ["none", "flu", "hiv"]},
        "bounds": {"age": [17, 90]},
    }
    job = _job(tmp_path, one, method="marginal_dp", epsilon=1.0, options=declared)
    res = runner.invoke(app, ["synthesize", "--config", str(job)])
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "syn.json").read_text())
    assert doc["release"]["details"]["columns"]["age"]["bounds"] == [17, 90]


def _noisy_job(tmp_path, bn: pd.DataFrame, folder: str, **options) -> dict:
    (tmp_path / folder).mkdir()
    job = _job(
        tmp_path / folder,
        bn.iloc[:1500],
        method="marginal_dp",
        epsilon=1.0,
        options={"holdout": 0, **BN_DECLARED, **options},
    )
    res = runner.invoke(app, ["synthesize", "--config", str(job)])
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / folder / "syn.json").read_text())
    doc["page"] = (tmp_path / folder / "syn.html").read_text()
    doc["printed"] = res.output
    return doc


def test_the_job_seed_does_not_fix_the_dp_noise(tmp_path, bn: pd.DataFrame) -> None:
    """Attack: anyone holding the job file (the workbench exports it next to the release)
    reran it with its seed, regenerated the noise and subtracted it. Two runs with one seed
    now give different noisy marginals; only insecure_reproducible_noise: true reproduces
    them, and the JSON, the report and the console then say the release is not private."""
    first, second = (_noisy_job(tmp_path, bn, f"run{i}") for i in (1, 2))
    measured = [d["release"]["details"]["estimated_records"] for d in (first, second)]
    assert measured[0] != measured[1]
    assert first["release"]["privacy"]["private"] is True
    assert first["release"]["details"]["randomness"] == "csprng"
    a, b = (
        _noisy_job(tmp_path, bn, f"insecure{i}", insecure_reproducible_noise=True) for i in (1, 2)
    )
    assert (
        a["release"]["details"]["estimated_records"] == b["release"]["details"]["estimated_records"]
    )
    assert (tmp_path / "insecure1" / "syn.csv").read_bytes() == (
        tmp_path / "insecure2" / "syn.csv"
    ).read_bytes()
    privacy = a["release"]["privacy"]
    assert privacy["private"] is False and privacy["statement"].startswith("NOT PRIVATE")
    assert "Privacy guarantee: NOT PRIVATE" in a["page"]
    assert "NOT PRIVATE" in a["printed"]


def test_synthesize_json_keeps_the_release_apart_from_the_steward_evaluation(
    tmp_path, bn: pd.DataFrame
) -> None:
    """Attack: the JSON and report next to a DP release carried exact statistics of the
    original (record count, utility, TCAP) that epsilon does not cover. They are kept, but in
    the steward's part, labelled so; the release part holds only covered facts."""
    doc = _noisy_job(tmp_path, bn, "split")
    from sdckit.synthesis.api import JSON_KEYS, RELEASE_KEYS, STEWARD_KEYS

    assert tuple(k for k in doc if k in JSON_KEYS) == JSON_KEYS
    assert tuple(doc["release"]) == RELEASE_KEYS
    assert tuple(doc["steward_evaluation"]) == STEWARD_KEYS
    release_text = json.dumps(doc["release"])
    for exact in ("training_records", "utility", "tcap", "pmse", "records_fitted"):
        assert exact not in release_text
    ev = doc["steward_evaluation"]
    assert "not covered by epsilon" in ev["label"]
    assert ev["training_records"] == 1500 and ev["method_details"]["records_fitted"] == 1500
    page = doc["page"]
    assert page.index("Release (may be published") < page.index(
        "For the data steward, not covered by epsilon: the evaluation against the original"
    )


# -- released records equal to an original record ---------------------------------------------


def test_original_records_by_hand() -> None:
    from sdckit.risk.original_records import original_records

    original = pd.DataFrame(
        {"age": [39, 40, 41, 39], "sex": ["m", "f", None, "f"], "w": [1.5, 2.0, 2.0, 1.5]}
    )
    released = pd.DataFrame(
        {
            "age": [39.0, 40.0, 41.0, 39.0, 42.0],  # numbers compare as numbers: 39 == 39.0
            "sex": ["m", "f", None, "m", "m"],  # missing equals missing
            "w": [1.5, 2.0, 2.0, 1.5000001, 1.5],
        }
    )
    # rows 0, 1, 2 equal an original; row 3 differs in w (1.5000001), row 4 in age
    r = original_records(original, released, threshold=0.5)
    assert (r.records, r.equal_to_original, r.share) == (5, 3, 0.6)
    assert r.warning is not None and "60.0% of the released records (3 of 5)" in r.warning
    assert original_records(original, released, threshold=0.6).warning is None
    # generalized labels compare as text with the original numbers; only released columns
    labels = pd.DataFrame({"age": ["39", "40-44", "41"]})
    assert original_records(original, labels).equal_to_original == 2
    with pytest.raises(ParameterError, match="original_share_warning"):
        original_records(original, released, threshold=1.5)


def test_hybrid_and_partial_report_their_share_of_original_records() -> None:
    """The attack: hybrid and partial synthesis released mostly original records and nothing
    said so. hybrid with k = 1 replaces each record by its own group's mean: every released
    record is an original one (share 1, by hand); partial leaves the records not at risk as
    they are (at least 8 of the 10 here)."""
    df = pd.DataFrame(
        {
            "x": [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0],
            "g": ["a", "a", "a", "a", "b", "b", "b", "b", "c", "d"],
            "y": [3, 1, 4, 1, 5, 9, 2, 6, 5, 3],
        }
    )
    hybrid = sdckit.synthesize(df, "hybrid", k=1, seed=1, holdout=0, evaluate=False)
    o = hybrid.risk["original_records"]
    assert (o["records"], o["equal_to_original"], o["share"]) == (10, 10, 1.0)
    assert o["threshold"] == 0.1 and "100.0% of the released records" in o["warning"]
    partial = sdckit.synthesize(
        df, "partial", quasi_identifiers=["g"], attributes=["g"], seed=2, holdout=0,
        evaluate=False,
    )  # fmt: skip
    o = partial.risk["original_records"]
    rows = {tuple(r) for r in df.astype(str).itertuples(index=False)}
    expected = sum(tuple(r) in rows for r in partial.data.astype(str).itertuples(index=False))
    assert expected >= 8 and o["equal_to_original"] == expected and o["share"] == expected / 10
    assert o["warning"] is not None
    quiet = sdckit.synthesize(
        df, "hybrid", k=1, seed=1, holdout=0, evaluate=False, original_share_warning=1.0
    )
    assert quiet.risk["original_records"]["warning"] is None


def test_synthesize_job_warns_about_original_records(tmp_path, bn: pd.DataFrame) -> None:
    small = bn.head(300)
    job = _job(tmp_path, small, method="hybrid", options={"k": 1, "holdout": 0.2})
    res = runner.invoke(app, ["synthesize", "--config", str(job)])
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "syn.json").read_text())
    o = doc["steward_evaluation"]["risk"]["original_records"]  # from the original: not released
    assert "original_records" not in json.dumps(doc["release"])
    assert (o["records"], o["equal_to_original"], o["share"]) == (240, 240, 1.0)
    assert o["holdout_share_equal_to_training"] is not None
    html = (tmp_path / "syn.html").read_text()
    assert "warning, released records equal to original records" in html
    assert "share of released records equal to an original record" in html
    job = _job(tmp_path, small, method="hybrid", options={"k": 1, "original_share_warning": 1.0})
    res = runner.invoke(app, ["synthesize", "--config", str(job)])
    assert res.exit_code == 0, res.output
    assert (
        json.loads((tmp_path / "syn.json").read_text())["steward_evaluation"]["risk"][
            "original_records"
        ]["warning"]
        is None
    )
    assert "Warning: released records" not in (tmp_path / "syn.html").read_text()
    job = _job(tmp_path, small, method="hybrid", options={"original_share_warning": "high"})
    res = runner.invoke(app, ["synthesize", "--config", str(job)])
    assert res.exit_code == 2 and "original_share_warning" in res.output


def test_dcr_sample_changes_only_the_records_measured(bn: pd.DataFrame) -> None:
    runs = {
        size: sdckit.synthesize(
            bn,
            "marginal_dp",
            seed=3,
            epsilon=1.0,
            delta=1e-6,
            dcr_sample=size,
            insecure_reproducible_noise=True,
            **BN_DECLARED,
        )  # fmt: skip
        for size in (None, 100)
    }
    pd.testing.assert_frame_equal(runs[None].data, runs[100].data)  # same copies
    everything, sampled = runs[None].risk["dcr"], runs[100].risk["dcr"]
    assert everything["measured_records"] == everything["synthetic_records"] == len(runs[None].data)
    assert sampled["measured_records"] == 100
    assert not any("random sample" in n for n in runs[None].evaluation_notes)
