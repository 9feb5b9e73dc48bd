"""SafePub (Bild, Kuhn & Prasser 2018): parameters, guarantee, reproducibility, Adult."""

from __future__ import annotations

import math
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sdckit
from sdckit.algorithms.anonymize import verify_output
from sdckit.algorithms.safepub import safepub
from sdckit.core.hierarchy import Hierarchy, read_hierarchy
from sdckit.core.release import SUPPRESSED, AlgorithmOutput
from sdckit.core.schema import Schema
from sdckit.dp import Accountant, BudgetExhausted
from sdckit.errors import ConfigError, ParameterError
from sdckit.models import KAnonymity
from sdckit.models.differential_privacy import (
    DifferentialPrivacy,
    safepub_delta,
    safepub_parameters,
    sampling_probability,
)
from sdckit.report.anonymization_report import anonymization_report

# -- the derived parameters -------------------------------------------------------------


def _d_brute(k: int, beta: float, eps: float, n_max: int) -> float:
    """d(k, beta, eps) by brute force: the maximum over n_m <= n <= n_max of the binomial
    tail, summed term by term in log space (no Chernoff stop, no scipy.stats)."""
    from scipy.special import gammaln

    gamma = (math.exp(eps) - 1 + beta) / math.exp(eps)
    n_m = max(0, math.ceil(k / gamma - 1))
    best = 0.0
    for n in range(n_m, n_max + 1):
        j = np.arange(math.floor(gamma * n) + 1, n + 1)
        if not j.size:
            continue
        logs = (
            gammaln(n + 1) - gammaln(j + 1) - gammaln(n - j + 1)
            + j * math.log(beta) + (n - j) * math.log1p(-beta)
        )  # fmt: skip
        best = max(best, float(np.exp(logs).sum()))
    return best


def test_delta_by_hand():
    # beta = 1/2, epsilon = ln 3: gamma = (3 - 1 + 1/2) / 3 = 5/6, n_m(k) = ceil(6k/5 - 1).
    # k=1: n >= 1, a_1 = P(X_1 > 5/6) = 1/2 is the largest term; k=2: n >= 2,
    # a_2 = P(X_2 = 2) = 1/4; k=3: n >= 3, a_3 = P(X_3 = 3) = 1/8.
    eps = math.log(3)
    assert safepub_delta(1, 0.5, eps) == pytest.approx(0.5, rel=1e-12)
    assert safepub_delta(2, 0.5, eps) == pytest.approx(0.25, rel=1e-12)
    assert safepub_delta(3, 0.5, eps) == pytest.approx(0.125, rel=1e-12)


@pytest.mark.parametrize(
    ("eps", "delta", "k"),
    [
        (1.0, 1e-5, 62), (0.9, 1e-5, 59), (2.0, 1e-6, 132), (0.5, 1e-3, 28),
        # the k ARX computes (ParameterCalculation(epsilon_anon, delta).getK())
        (2.0, 1e-5, 114), (1.5, 1e-6, 100), (1.0, 1e-8, 105), (0.5, 1e-5, 52), (3.0, 1e-6, 272),
    ],
)  # fmt: skip
def test_beta_and_k_against_independent_computation(eps, delta, k):
    params = safepub_parameters(eps, delta)
    beta = params.beta
    # beta = 1 - e^-eps, rounded down to a multiple of 2**-53
    assert beta == pytest.approx(1 - math.exp(-eps), rel=1e-15, abs=3e-16)
    assert beta <= 1 - math.exp(-eps) + 1e-16
    assert beta * 2**53 == int(beta * 2**53)
    assert params.k == k
    # brute force over n far beyond where the Chernoff bound is below delta
    gamma = (math.exp(eps) - 1 + beta) / math.exp(eps)
    rate = gamma * math.log(gamma / beta) - (gamma - beta)
    n_max = int(2 * math.log(1 / delta) / rate) + 50
    # ARX's calculateK: k is one more than the smallest k' with d(k') < delta
    assert _d_brute(k - 1, beta, eps, n_max) < delta <= _d_brute(k - 2, beta, eps, n_max)
    assert params.delta_k == pytest.approx(_d_brute(k, beta, eps, n_max), rel=1e-9)
    assert params.delta_k < delta


def test_model_parameters_and_errors():
    m = DifferentialPrivacy(epsilon=1.0, delta=1e-5)
    assert m.epsilon_anon == pytest.approx(0.9)
    assert m.k == safepub_parameters(0.9, 1e-5).k == 59
    assert m.beta == sampling_probability(0.9)
    assert DifferentialPrivacy.from_dict(m.to_dict()) == m
    for kwargs, name in [
        ({"epsilon": 0, "delta": 1e-5}, "epsilon"),
        ({"epsilon": 1, "delta": 1.0}, "delta"),
        ({"epsilon": 1, "delta": 0}, "delta"),
        ({"epsilon": 1, "delta": 1e-5, "epsilon_search": 1.0}, "epsilon_search"),
        ({"epsilon": 1, "delta": 1e-5, "epsilon_search": -0.1}, "epsilon_search"),
    ]:
        with pytest.raises(ParameterError, match=name):
            DifferentialPrivacy(**kwargs)


# -- small tables ---------------------------------------------------------------------------

AGE = Hierarchy(
    [
        [str(a), f"{a // 10 * 10}-{a // 10 * 10 + 9}", f"{a // 20 * 20}-{a // 20 * 20 + 19}", "*"]
        for a in range(20, 60)
    ],  # fmt: skip
    name="age",
)
ZIP = Hierarchy(
    [[z, z[:3] + "**", z[:2] + "***", "*"] for z in [f"47{i:03d}" for i in range(0, 400, 25)]],
    name="zip",
)
SEX = Hierarchy([["m", "*"], ["f", "*"]], name="sex")


def _table(rows: int, seed: int) -> tuple[pd.DataFrame, Schema]:
    rng = np.random.default_rng(seed)
    df = pd.DataFrame(
        {
            "age": rng.integers(20, 60, rows).astype(str),
            "zip": rng.choice(ZIP.leaves, rows),
            "sex": rng.choice(["m", "f"], rows),
            "disease": rng.choice(["flu", "cold", "hiv"], rows),
        }
    )
    schema = Schema.from_roles(
        quasi_identifying=["age", "zip", "sex"],
        sensitive=["disease"],
        hierarchies={"age": AGE, "zip": ZIP, "sex": SEX},
    )
    return df, schema


def _check_release(out: AlgorithmOutput, df: pd.DataFrame, k: int) -> None:
    supp = np.asarray(out.suppressed, dtype=bool)
    rows = out.data
    assert len(rows) == len(df)
    assert (rows.loc[supp, ["age", "zip", "sex"]].astype(object) == SUPPRESSED).all().all()
    sizes = rows.loc[~supp, ["age", "zip", "sex"]].astype(str).value_counts()
    assert (sizes >= k).all()
    assert (rows["disease"] == df["disease"]).all()  # truthful: non-QI columns untouched


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    rows=st.integers(50, 600),
    seed=st.integers(0, 2**32 - 1),
    eps=st.sampled_from([0.5, 1.0, 2.0, 3.0]),
    delta=st.sampled_from([1e-2, 1e-3, 1e-4]),
    score=st.sampled_from(["loss", "discernibility", "aecs"]),
    output=st.sampled_from(["exponential", "last", "best_exact"]),
)
def test_released_rows_are_k_anonymous(rows, seed, eps, delta, score, output):
    df, schema = _table(rows, seed % 1000)
    model = DifferentialPrivacy(epsilon=eps, delta=delta)
    out = safepub(df, schema, [model], seed=seed, search_steps=10, score=score, output=output)
    # the independent check sdckit.anonymize runs before release
    assert verify_output(df, out, schema, [model], 1.0) == [model.name]
    d = out.details
    assert d["k"] == model.k
    _check_release(out, df, model.k)
    assert d["records_suppressed"] == out.suppressed_records
    assert d["records_not_sampled"] + d["records_sampled"] == rows
    assert d["records_suppressed"] >= d["records_not_sampled"]


def test_accountant_spends_exactly_epsilon_and_delta():
    df, schema = _table(400, 1)
    acct = Accountant(epsilon=1.0, delta=1e-5)
    model = DifferentialPrivacy(epsilon=1.0, delta=1e-5, epsilon_search=0.25)
    res = sdckit.anonymize(
        df, schema, [model], algorithm="safepub", seed=3, accountant=acct, search_steps=20,
        risk=False,
    )  # fmt: skip
    spent = acct.spent()
    assert spent.epsilon == pytest.approx(1.0, rel=1e-12)
    assert spent.delta == pytest.approx(1e-5, rel=1e-12)
    labels = [label for label, _ in acct.ledger]
    assert labels[0] == "safepub sampling + k-anonymization"
    # the default output is a final exponential-mechanism choice: 20 search steps + 1 choice
    assert labels[1:] == ["exponential"] * 21
    assert acct.ledger[0][1].epsilon == pytest.approx(0.75)
    assert all(c.epsilon == pytest.approx(0.25 / 21) and c.delta == 0 for _, c in acct.ledger[1:])
    assert res.details["accountant_spent"]["epsilon"] == pytest.approx(1.0)
    # a budget that cannot pay is refused before anything is drawn
    small = Accountant(epsilon=0.5, delta=1e-5)
    with pytest.raises(BudgetExhausted):
        sdckit.anonymize(df, schema, [model], algorithm="safepub", seed=3, accountant=small)
    assert small.ledger == ()


def test_default_output_is_covered_by_the_accounting():
    """The attack: the default output used to be the visited pivot of the highest exact score,
    a data-dependent choice outside the epsilon accounting. The default's reported
    accounting now has the output step, and the charges add up to epsilon."""
    df, schema = _table(400, 1)
    model = DifferentialPrivacy(epsilon=1.0, delta=1e-5, epsilon_search=0.25)
    acct = Accountant(epsilon=1.0, delta=1e-5)
    res = sdckit.anonymize(
        df, schema, [model], algorithm="safepub", seed=3, accountant=acct, search_steps=20,
        risk=False,
    )  # fmt: skip
    doc = res.to_dict()
    privacy = doc["privacy"]
    assert privacy["output"] == "exponential" and privacy["covered_by_epsilon"] is True
    assert privacy["private"] is True and privacy["randomness"] == "csprng"
    steps = [a["step"] for a in privacy["accounting"]]
    assert steps[-1] == "output: exponential-mechanism choice among the visited pivots"
    eps = [a["epsilon"] for a in privacy["accounting"]]
    assert eps == pytest.approx([0.75, 20 * 0.25 / 21, 0.25 / 21])
    assert sum(eps) == pytest.approx(acct.spent().epsilon) == pytest.approx(1.0)
    assert (privacy["epsilon"], privacy["delta"]) == (pytest.approx(1.0), 1e-5)
    assert res.details["epsilon_final_choice"] == pytest.approx(0.25 / 21)
    # the released transformation is one of the visited pivots
    assert list(res.transformation.values()) in res.details["search_path"]
    html = anonymization_report(res).write_html(Path(tempfile.mkdtemp()) / "r.html").read_text()
    assert "output: one exponential-mechanism choice among the visited pivots" in html
    assert "NOT covered" not in html
    # output: last spends the search budget on the search steps alone, and is covered
    acct = Accountant(epsilon=1.0, delta=1e-5)
    last = sdckit.anonymize(
        df, schema, [model], algorithm="safepub", seed=3, accountant=acct, search_steps=20,
        output="last", risk=False,
    )  # fmt: skip
    assert len(acct.ledger) == 21 and acct.ledger[-1][1].epsilon == pytest.approx(0.25 / 20)
    assert list(last.transformation.values()) == last.details["search_path"][-1]
    assert last.to_dict()["privacy"]["covered_by_epsilon"] is True


def test_arx_output_says_it_is_not_covered(tmp_path):
    df, schema = _table(400, 1)
    model = DifferentialPrivacy(epsilon=1.0, delta=1e-5)
    res = sdckit.anonymize(
        df, schema, [model], algorithm="safepub", seed=3, search_steps=20,
        output="best_exact", risk=False,
    )  # fmt: skip
    privacy = res.to_dict()["privacy"]
    assert privacy["covered_by_epsilon"] is False and privacy["private"] is False
    assert privacy["epsilon"] is None and privacy["delta"] is None
    assert privacy["guarantee"].startswith("NOT covered by epsilon")
    assert res.details["covered_by_epsilon"] is False
    html = anonymization_report(res).write_html(tmp_path / "r.html").read_text()
    assert "Differential privacy: NOT covered" in html
    assert "not covered by epsilon" in html
    # the old name is refused with the new one
    with pytest.raises(ParameterError, match="best_exact"):
        sdckit.anonymize(df, schema, [model], algorithm="safepub", output="best")
    # as a synthesizer no epsilon is claimed
    syn = sdckit.synthesize(
        df, "safepub", epsilon=1.0, delta=1e-5, schema=schema, seed=1, output="best_exact",
        holdout=0, evaluate=False, search_steps=5,
    )  # fmt: skip
    released = syn.to_dict()["release"]["privacy"]
    assert syn.privacy is None and released["epsilon"] is None and released["private"] is False
    assert released["statement"].startswith("NOT covered by epsilon")
    assert syn.synthesizer.details["covered_by_epsilon"] is False
    # best_exact with the noise from the seed says both
    both = sdckit.anonymize(
        df, schema, [model], algorithm="safepub", seed=3, search_steps=20,
        output="best_exact", insecure_reproducible_noise=True, risk=False,
    )  # fmt: skip
    guarantee = both.to_dict()["privacy"]["guarantee"]
    assert guarantee.startswith("NOT PRIVATE") and "NOT covered by epsilon" in guarantee
    html = anonymization_report(both).write_html(tmp_path / "both.html").read_text()
    assert "NOT PRIVATE" in html and "NOT covered by epsilon" in html


def test_the_seed_does_not_fix_the_sampling_and_search():
    """Attack: the job's seed regenerated SafePub's random sampling and search (its privacy
    mechanism). Two runs with one seed now draw different samples (from the CSPRNG); only
    insecure_reproducible_noise reproduces a run, and the details then say it is not private."""
    df, schema = _table(500, 2)
    model = DifferentialPrivacy(epsilon=2.0, delta=1e-4)
    a, b = (
        sdckit.anonymize(df, schema, [model], algorithm="safepub", seed=7, risk=False)
        for _ in range(2)
    )
    assert not a.data.equals(b.data)  # 500 records drawn again: a different sample
    assert a.details["randomness"] == "csprng" and a.details["privacy"]["private"] is True

    def insecure(seed):
        return sdckit.anonymize(
            df, schema, [model], algorithm="safepub", seed=seed, risk=False,
            insecure_reproducible_noise=True,
        )  # fmt: skip

    runs = [insecure(s) for s in (7, 7, 8)]
    a, b, c = runs
    assert a.data.to_csv().encode() == b.data.to_csv().encode()
    assert a.transformation == b.transformation
    assert a.details["search_path"] == b.details["search_path"]
    assert a.details["search_path"] != c.details["search_path"] or not a.data.equals(c.data)
    assert insecure(np.random.default_rng(7)).data.equals(a.data)
    assert a.details["randomness"] == "insecure_reproducible_noise"
    assert a.details["privacy"]["private"] is False
    assert a.details["privacy"]["randomness"] == "insecure_reproducible_noise"
    assert a.details["privacy"]["guarantee"].startswith("NOT PRIVATE")
    assert a.details["privacy"]["covered_by_epsilon"] is True  # the accounting, not the noise
    assert "NOT PRIVATE" in anonymization_report(a).render_html()


def test_bad_options_and_combinations():
    df, schema = _table(100, 0)
    model = DifferentialPrivacy(epsilon=1.0, delta=1e-3)
    with pytest.raises(ParameterError, match="search_steps"):
        sdckit.anonymize(df, schema, [model], algorithm="safepub", search_steps=0)
    with pytest.raises(ParameterError, match="score"):
        sdckit.anonymize(df, schema, [model], algorithm="safepub", score="entropyx")
    with pytest.raises(ParameterError, match="output"):
        sdckit.anonymize(df, schema, [model], algorithm="safepub", output="first")
    with pytest.raises(ConfigError, match="safepub"):
        sdckit.anonymize(df, schema, [model], algorithm="optimal")
    with pytest.raises(ConfigError, match="DifferentialPrivacy"):
        sdckit.anonymize(df, schema, [model, KAnonymity(2)], algorithm="safepub")
    with pytest.raises(ConfigError, match="metric"):
        sdckit.anonymize(df, schema, [model], algorithm="safepub", metric="loss")


# -- Adult ------------------------------------------------------------------------------------


def test_adult_epsilon_1(shared_data):
    folder = shared_data / "arx"
    if not (folder / "adult.csv").is_file():
        pytest.skip("ARX's adult.csv is not present")
    df = pd.read_csv(folder / "adult.csv", sep=";", dtype=str, keep_default_na=False)
    hierarchies = {
        c: read_hierarchy(folder / f"adult_hierarchy_{c}.csv")
        for c in df.columns
        if (folder / f"adult_hierarchy_{c}.csv").is_file()
    }
    schema = Schema.from_roles(quasi_identifying=list(hierarchies), hierarchies=hierarchies)
    model = DifferentialPrivacy(epsilon=1.0, delta=1e-5)
    acct = Accountant(1.0, 1e-5)
    t0 = time.perf_counter()
    res = sdckit.anonymize(
        df, schema, [model], algorithm="safepub", seed=2018, accountant=acct, risk=False
    )
    elapsed = time.perf_counter() - t0
    assert res.verified
    d = res.details
    assert (d["k"], d["search_steps"], d["steps_run"]) == (59, 100, 100)
    assert d["beta"] == pytest.approx(1 - math.exp(-0.9))
    assert acct.spent().epsilon == pytest.approx(1.0)
    # about beta of the 30,162 records are drawn
    assert abs(d["records_sampled"] - 30162 * d["beta"]) < 5 * math.sqrt(30162 * 0.25)
    assert 0.0 < res.metrics["loss"] < 1.0
    print(
        f"\nAdult safepub eps=1 delta=1e-5: {elapsed:.2f}s, k={d['k']}, beta={d['beta']:.4f}, "
        f"transformation={res.transformation}, sampled={d['records_sampled']}, "
        f"suppressed={res.suppressed_records}, loss={res.metrics['loss']:.4f}"
    )


def test_anonymize_job_states_what_epsilon_covers(tmp_path):
    import json

    import yaml
    from typer.testing import CliRunner

    from sdckit.cli import app
    from sdckit.datasets import load_adult

    adult = load_adult()
    adult.data.head(3000).to_csv(tmp_path / "in.csv", sep=";", index=False)
    doc = {
        "input": {"path": "in.csv", "delimiter": ";"},
        "attributes": {
            c: {"role": "quasi_identifying", "hierarchy": str(adult.hierarchy_paths[c])}
            for c in ("age", "sex", "race")
        },
        "models": [{"differential_privacy": {"epsilon": 2.0, "delta": 1e-4}}],
        "algorithm": "safepub",
        "options": {"search_steps": 10},
        "seed": 1,
        "output": {"path": "out.csv", "report": "r.html", "json": "s.json"},
    }
    for output, covered in ((None, True), ("best_exact", False)):
        if output:
            doc["options"]["output"] = output
        (tmp_path / "job.yaml").write_text(yaml.safe_dump(doc))
        res = CliRunner().invoke(app, ["anonymize", "--config", str(tmp_path / "job.yaml")])
        assert res.exit_code == 0, res.output
        privacy = json.loads((tmp_path / "s.json").read_text())["privacy"]
        assert privacy["covered_by_epsilon"] is covered
        assert privacy["output"] == (output or "exponential")
        assert len(privacy["accounting"]) == (3 if covered else 2)
        html = (tmp_path / "r.html").read_text()
        assert ("Differential privacy: NOT covered" in html) is not covered
