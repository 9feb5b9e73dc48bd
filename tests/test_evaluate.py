"""Tests: ``sdckit.evaluate`` (every measure in one document) and ``sdckit evaluate``."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

import sdckit
from sdckit.cli import app
from sdckit.errors import DataError, SdcInputError
from sdckit.evaluation.protected_file import MATRIX_KEYS
from sdckit.report.evaluation_report import evaluation_report
from sdckit.risk.interval_disclosure import interval_disclosure
from sdckit.risk.linkage import distance_linkage
from sdckit.risk.probabilistic_linkage import probabilistic_linkage
from sdckit.utility.numeric import bounded_information_loss, il1s, score_information_loss
from sdckit.utility.propensity import propensity_score_utility

COLS = ["v1", "v2", "v3", "v4"]
# Seed 004 (Nin, Herranz & Torra 2008): ranks 1..10, rank swapping with a window of 2 ranks.
SEED4_ORIGINAL = pd.DataFrame(
    [(8, 9, 1, 3), (6, 7, 10, 2), (10, 3, 4, 1), (7, 1, 2, 6), (9, 4, 6, 4),
     (2, 2, 8, 8), (1, 10, 3, 9), (4, 8, 7, 10), (5, 5, 5, 5), (3, 6, 9, 7)],
    columns=COLS,
)  # fmt: skip
SEED4_PROTECTED = pd.DataFrame(
    [(10, 10, 3, 5), (5, 5, 8, 1), (8, 4, 2, 2), (9, 2, 4, 4), (7, 3, 5, 6),
     (4, 1, 10, 10), (3, 9, 1, 7), (2, 6, 9, 8), (6, 7, 6, 3), (1, 8, 7, 9)],
    columns=COLS,
)  # fmt: skip

runner = CliRunner()


def _frame(n: int = 40, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 3)) @ np.array([[1.0, 0.5, 0.2], [0, 1, 0.3], [0, 0, 1]]) + 10.0
    return pd.DataFrame(x, columns=["a", "b", "c"])


def test_document_has_the_promised_keys_and_is_json() -> None:
    x = _frame()
    y = x + np.random.default_rng(1).normal(scale=0.3, size=x.shape)
    doc = sdckit.evaluate(x, y)
    il, dr = doc["information_loss"], doc["disclosure_risk"]
    assert {"il1s", "propensity_u", "bounded_il", "score_il", *MATRIX_KEYS} <= set(il)
    assert {"mse_x", "mae_r", "mv_v"} <= set(il)
    assert set(dr) == {"dbrl", "prl", "interval_disclosure", "score_dr"}
    assert all(0.0 <= dr[k] <= 1.0 for k in dr)
    assert "transparency_attack" not in doc
    json.dumps(doc)


def test_measures_are_those_of_the_library_and_the_2001_score() -> None:
    x = _frame(50, 3)
    y = x + np.random.default_rng(4).normal(scale=0.5, size=x.shape)
    doc = sdckit.evaluate(x, y, seed=2)
    il, dr = doc["information_loss"], doc["disclosure_risk"]
    cols = ["a", "b", "c"]
    assert il["il1s"] == pytest.approx(il1s(x, y, cols))
    assert il["bounded_il"] == pytest.approx(bounded_information_loss(x, y, cols)["bounded_il"])
    assert il["score_il"] == pytest.approx(score_information_loss(x, y, cols)["score_il"])
    assert il["propensity_u"] == pytest.approx(propensity_score_utility(x, y, cols, seed=2))
    assert dr["dbrl"] == pytest.approx(distance_linkage(x, y, cols).dbrl)
    assert dr["prl"] == pytest.approx(probabilistic_linkage(x, y, cols, seed=2).prl)
    assert dr["interval_disclosure"] == pytest.approx(
        interval_disclosure(x, y, cols).interval_disclosure
    )
    # Domingo-Ferrer, Mateo-Sanz & Torra (2001): DR = 0.25 DLD + 0.25 PLD + 0.5 ID
    score_dr = 0.25 * dr["dbrl"] + 0.25 * dr["prl"] + 0.5 * dr["interval_disclosure"]
    assert dr["score_dr"] == pytest.approx(score_dr)
    assert doc["score"] == pytest.approx((il["score_il"] + 100 * score_dr) / 2)


def test_large_files_use_blocked_prl_with_random_pair_u() -> None:
    x = _frame(120, 7)
    y = x + np.random.default_rng(8).normal(scale=0.05, size=x.shape)
    full = sdckit.evaluate(x, y)
    blocked = sdckit.evaluate(x, y, max_full_pairs=1000)
    assert full["details"]["prl"]["blocking"] == "full"
    assert blocked["details"]["prl"]["blocking"] == "sorted_neighbourhood"
    assert any("sorted-neighbourhood" in n for n in blocked["notes"])
    assert abs(blocked["disclosure_risk"]["prl"] - full["disclosure_risk"]["prl"]) <= 0.1


def test_identical_files_lose_nothing_and_disclose_everything() -> None:
    x = pd.DataFrame(
        np.random.default_rng(0).permutation(np.arange(60.0).reshape(20, 3)) + 1.0,
        columns=list("abc"),
    )
    doc = sdckit.evaluate(x, x.copy())
    il, dr = doc["information_loss"], doc["disclosure_risk"]
    assert il["il1s"] == 0 and il["score_il"] == 0 and il["bounded_il"] == 0
    assert all(il[k] == pytest.approx(0, abs=1e-12) for k in MATRIX_KEYS)
    assert il["propensity_u"] == pytest.approx(0, abs=1e-9)
    assert dr == {"dbrl": 1.0, "prl": 1.0, "interval_disclosure": 1.0, "score_dr": 1.0}
    assert doc["score"] == pytest.approx(50.0)  # (0 + 100 * 1) / 2


def test_row_swap_hand_example() -> None:
    """Swapping two whole records keeps every statistic: only mv_x and the links change."""
    x = pd.DataFrame({"a": [1.0, 2, 3, 4, 5, 6], "b": [2.0, 1, 4, 3, 6, 8]})
    y = x.iloc[[1, 0, 2, 3, 4, 5]].reset_index(drop=True)
    doc = sdckit.evaluate(x, y)
    il, dr = doc["information_loss"], doc["disclosure_risk"]
    # mv_x = sum |x - x'| / |x| / (n p): a: 1/1 + 1/2, b: 1/2 + 1/1 -> 3 / 12
    assert il["mv_x"] == pytest.approx(3 / 12)
    for key in ("mv_mean", "mv_var", "mv_v", "mae_r"):
        assert il[key] == pytest.approx(0, abs=1e-12)
    assert il["score_il"] == pytest.approx(100 * (3 / 12) / 5)
    # records 0 and 1 link to each other's protected version: 4 of 6 correct
    assert dr["dbrl"] == pytest.approx(4 / 6)
    # IL1s: |d| = 1 in four cells; sd(a) = sqrt(3.5), sd(b) = sqrt(6.8)
    expected = (2 / (np.sqrt(2) * np.sqrt(3.5)) + 2 / (np.sqrt(2) * np.sqrt(6.8))) / 12
    assert il["il1s"] == pytest.approx(expected)


def test_seed_004_transparency_attack_through_evaluate() -> None:
    # a window of 2 ranks on n = 10 records is p = 20 %
    doc = sdckit.evaluate(
        SEED4_ORIGINAL, SEED4_PROTECTED, known_method="rank_swapping", p_percent=20
    )
    ta = doc["transparency_attack"]
    assert ta["parameter"]["window"] == 2
    assert ta["certain_matches"] == pytest.approx(0.7)
    assert ta["reidentified"] == pytest.approx(0.7)


def test_microaggregation_attack_and_intruder_subset_of_columns() -> None:
    x = pd.DataFrame({"a": [1.0, 2, 3, 10, 11, 12], "b": [5.0, 6, 7, 1, 2, 3]})
    # individual ranking, k = 3: each column replaced by its group means
    y = pd.DataFrame({"a": [2.0, 2, 2, 11, 11, 11], "b": [6.0, 6, 6, 2, 2, 2]})
    doc = sdckit.evaluate(x, y, quasi_identifiers=["a"], known_method="microaggregation", k=3)
    assert doc["columns"]["qi"] == ["a"]
    assert doc["transparency_attack"]["columns"] == ["a"]
    # B(x) is the cluster of 3 records for everyone: no certain match, 1/3 by distance
    assert doc["transparency_attack"]["certain_matches"] == 0
    assert doc["transparency_attack"]["reidentified"] == pytest.approx(1 / 3)
    assert doc["disclosure_risk"]["dbrl"] == pytest.approx(1 / 3)


def test_intruder_subset_of_records() -> None:
    # seed 004 example: records 1 and 4 are the intruder's; record 1 is a certain match,
    # record 4 has the 2-set {3, 4} and its nearest is the wrong one (see test_transparency)
    doc = sdckit.evaluate(
        SEED4_ORIGINAL,
        SEED4_PROTECTED,
        known_method="rank_swapping",
        p_percent=20,
        intruder_rows=[1, 4],
    )
    ta = doc["transparency_attack"]
    assert ta["n_intruder"] == 2 and ta["certain_matches"] == pytest.approx(0.5)
    assert ta["reidentified"] == pytest.approx(0.5)
    assert doc["details"]["dbrl"]["n_intruder"] == 2
    share = sdckit.evaluate(SEED4_ORIGINAL, SEED4_PROTECTED, intruder_share=0.3, seed=4)
    assert share["details"]["dbrl"]["n_intruder"] == 3
    again = sdckit.evaluate(SEED4_ORIGINAL, SEED4_PROTECTED, intruder_share=0.3, seed=4)
    assert again["disclosure_risk"] == share["disclosure_risk"]
    with pytest.raises(SdcInputError, match="intruder_share"):
        sdckit.evaluate(SEED4_ORIGINAL, SEED4_PROTECTED, intruder_share=1.5)
    with pytest.raises(SdcInputError, match="not both"):
        sdckit.evaluate(SEED4_ORIGINAL, SEED4_PROTECTED, intruder_share=0.5, intruder_rows=[1])
    with pytest.raises(SdcInputError, match="outside"):
        sdckit.evaluate(SEED4_ORIGINAL, SEED4_PROTECTED, intruder_rows=[1, 99])


def test_categorical_columns_get_categorical_measures() -> None:
    x = pd.DataFrame(
        {
            "age": [20.0, 30, 40, 50, 60, 70, 25, 35],
            "inc": [1.0, 3, 2, 5, 4, 6, 2, 8],
            "sex": list("mfmfmfmf"),
            "reg": list("aabbccdd"),
        }
    )
    y = x.copy()
    y["sex"] = list("mmmfmfmf")  # one value changed
    y["reg"] = list("aabbccdd")
    doc = sdckit.evaluate(x, y, quasi_identifiers=["age", "inc", "sex"])
    assert doc["columns"]["numeric"] == ["age", "inc"]
    assert doc["columns"]["categorical"] == ["sex", "reg"]
    cat = doc["categorical"]
    assert cat["changed_values_share"] == pytest.approx(1 / 16)
    assert cat["changed_by_column"] == {"sex": pytest.approx(1 / 8), "reg": 0.0}
    # one record moves m -> f... (f -> m): sex table differs by 2, sex x reg by 2 (3 tables)
    assert cat["ctbil"] == 4.0
    assert doc["details"]["prl"]["columns"] == ["age", "inc", "sex"]
    json.dumps(doc)


def test_generalized_column_must_be_declared_categorical() -> None:
    x = pd.DataFrame({"age": ["21", "35", "47", "52"], "w": ["1", "2", "3", "5"]})
    y = pd.DataFrame({"age": ["20-29", "30-39", "40-49", "50-59"], "w": ["1", "2", "3", "4"]})
    with pytest.raises(DataError, match=r"'age'.*'20-29'.*categorical"):
        sdckit.evaluate(x, y)
    doc = sdckit.evaluate(x, y, categorical=["age"])
    assert doc["columns"]["categorical"] == ["age"] and doc["columns"]["qi"] == ["w"]
    assert doc["categorical"]["changed_values_share"] == 1.0


def test_identifier_like_column_left_out_of_propensity(monkeypatch) -> None:
    import sdckit.evaluation.protected_file as ev

    monkeypatch.setattr(ev, "MAX_PROPENSITY_LEVELS", 5)
    x = pd.DataFrame({"a": np.arange(1.0, 9.0), "id": [f"r{i}" for i in range(8)]})
    doc = sdckit.evaluate(x, x.copy())
    assert doc["information_loss"]["propensity_u"] == pytest.approx(0, abs=1e-9)
    assert any("'id'" in n and "propensity_u" in n for n in doc["notes"])


def test_no_numeric_columns_gives_none_and_a_note() -> None:
    x = pd.DataFrame({"s": list("aabbc"), "t": list("xyxyx")})
    doc = sdckit.evaluate(x, x.copy())
    assert doc["information_loss"]["il1s"] is None and doc["score"] is None
    assert doc["disclosure_risk"]["dbrl"] is None
    assert doc["disclosure_risk"]["prl"] is None  # default qi: numeric columns only
    assert doc["notes"]
    doc2 = sdckit.evaluate(x, x.copy(), quasi_identifiers=["s", "t"])
    assert doc2["disclosure_risk"]["prl"] is not None


def test_use_specific_and_worst_case_linkage() -> None:
    x = _frame(30, 5)
    y = x + np.random.default_rng(6).normal(scale=0.4, size=x.shape)
    doc = sdckit.evaluate(x, y, target="a", learned_distance=["weighted_mean", "owa"])
    reg = doc["use_specific"]["regression"]
    assert set(reg["coefficients"]) == {"intercept", "b", "c"}
    for fam in ("weighted_mean", "owa"):
        r = doc["worst_case_linkage"][fam]
        # the learned distance links at least as many records as the plain Euclidean one
        assert r["linked_share"] >= r["euclidean_share"] - 1e-12
        assert sum(r["weights"].values()) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"columns": ["a", "zz"]}, "'zz'"),
        ({"quasi_identifiers": ["a", "q"]}, "intruder column"),
        ({"known_method": "rank_swapping"}, "p_percent"),
        ({"known_method": "microaggregation", "k": 0}, "k=0"),
        ({"known_method": "pram", "k": 3}, "unknown"),
        ({"p_percent": 5}, "known_method"),
        ({"learned_distance": ["sugeno"]}, "sugeno"),
        ({"categorical": ["nope"]}, "'nope'"),
    ],
)
def test_bad_arguments(kwargs, match) -> None:
    x = _frame(10)
    with pytest.raises(SdcInputError, match=match):
        sdckit.evaluate(x, x.copy(), **kwargs)


def test_bad_data() -> None:
    x = _frame(10)
    with pytest.raises(DataError, match="10 rows.*9"):
        sdckit.evaluate(x, x.iloc[:9])
    with pytest.raises(DataError, match="not in the protected file"):
        sdckit.evaluate(x, x.drop(columns="b"))
    const = x.assign(c=1.0)
    with pytest.raises(DataError, match="'c'.*zero variance"):
        sdckit.evaluate(const, const.copy())
    bad = x.astype(object)
    bad.loc[3, "a"] = "oops"
    with pytest.raises(DataError, match=r"'a'.*'oops'"):
        sdckit.evaluate(x, bad)
    gap = x.copy()
    gap.loc[2, "b"] = np.nan
    with pytest.raises(DataError, match="'b'"):
        sdckit.evaluate(x, gap)


@settings(max_examples=15, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    scale=st.floats(0.0, 3.0),
    n=st.integers(8, 40),
)
def test_property_shares_bounded_and_score_formula(seed: int, scale: float, n: int) -> None:
    x = _frame(n, seed)
    y = x + np.random.default_rng(seed + 1).normal(scale=scale, size=x.shape)
    doc = sdckit.evaluate(x, y)
    il, dr = doc["information_loss"], doc["disclosure_risk"]
    assert all(0.0 <= dr[k] <= 1.0 for k in dr)
    assert 0.0 <= il["bounded_il"] <= 1.0
    assert 0.0 <= il["propensity_u"] <= 0.25 + 1e-12
    assert il["il1s"] >= 0 and il["score_il"] >= 0
    assert doc["score"] == pytest.approx((il["score_il"] + 100 * dr["score_dr"]) / 2)


def test_report_renders_every_section() -> None:
    x = pd.DataFrame(
        {
            "a": np.arange(1.0, 21.0),
            "b": np.arange(20.0, 0.0, -1) ** 1.5,
            "s": list("xy") * 10,
        }
    )
    y = x.copy()
    y["a"] = y["a"] + 0.5
    y["s"] = list("xx") + list("xy") * 9
    doc = sdckit.evaluate(x, y, known_method="rank_swapping", p_percent=10, target="s")
    html = evaluation_report(doc, x, y).render_html()
    for heading in (
        "Summary",
        "Columns: original vs protected",
        "Numerical information loss",
        "Categorical information loss",
        "Disclosure risk",
        "Transparency attack",
        "Classifier for s",
    ):
        assert heading in html
    assert html.count("data:image/png;base64,") >= 3


# --------------------------------------------------------------------------------------------
# the command line
# --------------------------------------------------------------------------------------------
def _write(tmp_path, name: str, df: pd.DataFrame, sep: str = ",") -> str:
    path = tmp_path / name
    df.to_csv(path, index=False, sep=sep)
    return str(path)


def test_cli_writes_json_and_html(tmp_path) -> None:
    a = _write(tmp_path, "a.csv", SEED4_ORIGINAL, ";")
    b = _write(tmp_path, "b.csv", SEED4_PROTECTED, ";")
    out_json, out_html = tmp_path / "ev.json", tmp_path / "ev.html"
    res = runner.invoke(
        app,
        [
            "evaluate", "--original", a, "--protected", b, "--delimiter", ";",
            "--json", str(out_json), "--html", str(out_html),
            "--known-method", "rank_swapping", "--p-percent", "20",
        ],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    doc = json.loads(out_json.read_text())
    assert doc["transparency_attack"]["certain_matches"] == pytest.approx(0.7)
    assert doc["transparency_attack"]["reidentified"] == pytest.approx(0.7)
    assert doc["columns"]["numeric"] == COLS
    assert "Transparency attack" in out_html.read_text()
    assert "certain matches" in res.output


@pytest.mark.parametrize(
    ("protected", "extra", "match"),
    [
        (SEED4_PROTECTED.iloc[:9], [], "rows"),
        (SEED4_PROTECTED.drop(columns="v4"), [], "not in the protected file"),
        (SEED4_PROTECTED.assign(v2=["x"] * 10), [], "'v2'"),
        (SEED4_PROTECTED, ["--qi", "v1,zz"], "intruder column"),
        (SEED4_PROTECTED, ["--known-method", "microaggregation"], "needs k"),
        (SEED4_PROTECTED, ["--columns", "v1,v2,nope"], "nope"),
        (SEED4_PROTECTED, ["--intruder-share", "2"], "intruder_share"),
        (SEED4_PROTECTED, ["--learned-distance", "sugeno"], "sugeno"),
    ],
)
def test_cli_bad_input_exit_2_and_nothing_written(tmp_path, protected, extra, match) -> None:
    a = _write(tmp_path, "a.csv", SEED4_ORIGINAL)
    b = _write(tmp_path, "b.csv", protected)
    out_json, out_html = tmp_path / "ev.json", tmp_path / "ev.html"
    res = runner.invoke(
        app,
        [
            "evaluate", "--original", a, "--protected", b,
            "--json", str(out_json), "--html", str(out_html), *extra,
        ],
    )  # fmt: skip
    assert res.exit_code == 2, res.output
    assert match in " ".join(res.output.split())
    assert not out_json.exists() and not out_html.exists()


def test_cli_zero_variance_exit_2(tmp_path) -> None:
    a = _write(tmp_path, "a.csv", SEED4_ORIGINAL.assign(v3=4))
    b = _write(tmp_path, "b.csv", SEED4_PROTECTED.assign(v3=4))
    out_json = tmp_path / "ev.json"
    res = runner.invoke(
        app, ["evaluate", "--original", a, "--protected", b, "--json", str(out_json)]
    )
    assert res.exit_code == 2 and "zero variance" in " ".join(res.output.split())
    assert not out_json.exists()
