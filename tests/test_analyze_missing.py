"""Missing key values in the risk analysis: wildcard (sdcMicro/mu-Argus) or category (ARX)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from sdckit.cli import app
from sdckit.core.frequency import wildcard_frequencies
from sdckit.errors import DataError
from sdckit.masking.suppression import local_suppression
from sdckit.risk.analyze import analyze
from test_local_suppression import brute_fk

HAND = pd.DataFrame({"a": ["1", "1", "1", "2", ""], "b": ["x", "x", "", "y", "y"]})


def test_hand_example_wildcard_and_category():
    # wildcard: (1,x) matches rows 0,1,2 -> 3; (1,NA) matches 0,1,2 and (NA,y) -> 4;
    # (2,y) matches itself and (NA,y) -> 2; (NA,y) matches (1,NA), (2,y), itself -> 3
    wild = analyze(HAND, ["a", "b"], measures=[]).summary
    assert wild["missing_values"]["semantics"] == "wildcard"
    assert wild["missing_values"]["records_with_missing_key"] == 2
    assert wild["sample_uniques"] == 0
    assert wild["prosecutor"]["max"] == pytest.approx(1 / 2)
    assert wild["prosecutor"]["min"] == pytest.approx(1 / 4)
    assert wild["prosecutor"]["average"] == pytest.approx(
        (1 / 3 + 1 / 3 + 1 / 4 + 1 / 2 + 1 / 3) / 5
    )
    assert wild["marketer"] == pytest.approx((1 / 3 + 1 / 3 + 1 / 4 + 1 / 2 + 1 / 3) / 5)
    # category (ARX): classes (1,x):2, (1,""):1, (2,y):1, ("",y):1
    cat = analyze(HAND, ["a", "b"], measures=[], missing="category").summary
    assert cat["sample_uniques"] == 3
    assert cat["prosecutor"]["max"] == 1.0
    assert cat["marketer"] == pytest.approx(4 / 5)


def test_without_missing_values_both_semantics_agree():
    df = pd.DataFrame({"a": list("aabbc"), "b": list("xxyyz")})
    wild = analyze(df, ["a", "b"], measures=[]).summary
    cat = analyze(df, ["a", "b"], measures=[], missing="category").summary
    for key in ("sample_uniques", "prosecutor", "marketer", "records_at_risk_share"):
        assert wild[key] == cat[key]
    assert wild["missing_values"]["records_with_missing_key"] == 0


def _brute_weighted(keys: np.ndarray, missing: np.ndarray, w: np.ndarray) -> np.ndarray:
    n = len(keys)
    out = np.zeros(n)
    for i in range(n):
        for j in range(n):
            if all(
                missing[i, c] or missing[j, c] or keys[i, c] == keys[j, c]
                for c in range(keys.shape[1])
            ):
                out[i] += w[j]
    return out


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.integers(0, 2),
            st.integers(0, 2),
            st.integers(0, 1),
            st.booleans(),
            st.booleans(),
            st.booleans(),
            st.floats(0.5, 20),
        ),
        min_size=1,
        max_size=20,
    )
)
def test_core_wildcard_frequencies_match_pairwise_reference(rows):
    keys = np.array([r[:3] for r in rows])
    missing = np.array([r[3:6] for r in rows])
    w = np.array([r[6] for r in rows])
    counts = np.ones(len(rows))
    fk, big_f = wildcard_frequencies(keys, counts, missing, w)
    assert fk.tolist() == _brute_weighted(keys, missing, counts).astype(int).tolist()
    np.testing.assert_allclose(big_f, _brute_weighted(keys, missing, w))


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["0", "1", ""]), st.sampled_from(["p", "q", "NA"])),
        min_size=1,
        max_size=25,
    )
)
def test_analyze_risk_is_one_over_pairwise_fk(rows):
    df = pd.DataFrame(rows, columns=["a", "b"])
    assume((df["a"] != "").any() and (df["b"] != "NA").any())  # an all-empty QI is refused
    ref = brute_fk(df.replace({"": None, "NA": None}), ["a", "b"])
    res = analyze(df, ["a", "b"], measures=[])
    np.testing.assert_allclose(res.record_risk, 1.0 / ref)
    assert res.summary["sample_uniques"] == int((ref == 1).sum())


def test_population_risk_needs_category_semantics():
    with pytest.raises(DataError, match="--missing category"):
        analyze(HAND, ["a", "b"], sampling_fraction=0.1, measures=[])
    cat = analyze(HAND, ["a", "b"], sampling_fraction=0.1, measures=[], missing="category")
    assert "population_uniques_share" in cat.summary


def test_bad_semantics_is_an_error():
    with pytest.raises(DataError, match="missing must be one of"):
        analyze(HAND, ["a", "b"], missing="ignore")


def test_testdata_after_local_suppression(shared_data):
    # sdcMicro's testdata, made 3-anonymous by local suppression ("missing matches all"): the
    # analysis with sdcMicro's semantics confirms k=3; ARX's semantics sees the suppressed
    # values as categories and reports sample uniques
    td = pd.read_csv(shared_data / "sdcmicro" / "sdcMicro_testdata.csv")
    keys = ["urbrur", "roof", "walls", "water", "electcon", "relat", "sex"]
    released = local_suppression(td, keys, k=3).data.astype("string").fillna("")
    wild = analyze(released, keys, measures=[]).summary
    assert wild["missing_values"]["records_with_missing_key"] > 0
    assert wild["sample_uniques"] == 0
    assert wild["prosecutor"]["max"] <= 1 / 3
    cat = analyze(released, keys, measures=[], missing="category").summary
    assert cat["prosecutor"]["max"] > 1 / 3


def test_cli_missing_option(tmp_path):
    src = tmp_path / "d.csv"
    HAND.to_csv(src, index=False)
    runner = CliRunner()
    for how, uniques in (("wildcard", 0), ("category", 3)):
        js = tmp_path / f"{how}.json"
        r = runner.invoke(
            app, ["analyze", str(src), "--qi", "a,b", "--missing", how, "--json", str(js)]
        )
        assert r.exit_code == 0, r.output
        assert f"records with a missing key ({how})" in r.output
        summary = json.loads(js.read_text())
        assert summary["sample_uniques"] == uniques
        assert summary["missing_values"]["semantics"] == how
    r = runner.invoke(app, ["analyze", str(src), "--qi", "a,b", "--missing", "maybe"])
    assert r.exit_code == 2
    assert "missing must be one of" in r.output


def test_sdcmicro_freqcalc_example_with_missings(shared_data):
    # sdcMicro's documented freqCalc example: francdat with keyVars Key1..Key4 and weight w,
    # then x[3,5] <- NA (row 3 Key3), x[4,2] <- x[4,4] <- NA (row 4 Key1, Key2), x[5,6] <- NA
    # (row 5 Key4), x[6,2] <- NA (row 6 Key1). Hand-computed under its rule ("a missing value
    # stands for any of the possible categories"), e.g. row 4 (NA,NA,1,5) matches row 5
    # (4,3,1,NA) and row 7 (6,2,1,5): fk 3, Fk 17 + 541 + 5 = 563.
    fr = pd.read_csv(shared_data / "sdcmicro" / "sdcMicro_francdat.csv")
    keys = ["Key1", "Key2", "Key3", "Key4"]
    x = fr[keys].astype("string")
    x.loc[2, "Key3"] = ""
    x.loc[3, ["Key1", "Key2"]] = ""
    x.loc[4, "Key4"] = ""
    x.loc[5, "Key1"] = ""
    x["w"] = fr["w"]
    fk_expected = [3, 2, 4, 3, 3, 2, 2, 3]
    big_f_expected = [149, 84.5, 194.5, 563, 566, 549, 22, 149]
    codes = np.stack([pd.factorize(x[k])[0] for k in keys], axis=1)
    fk, big_f = wildcard_frequencies(
        codes, np.ones(8), (x[keys] == "").to_numpy(), x["w"].to_numpy(float)
    )
    assert fk.tolist() == fk_expected
    np.testing.assert_allclose(big_f, big_f_expected)
    res = analyze(x, keys, weight="w", measures=[])
    np.testing.assert_allclose(res.record_risk, 1.0 / np.array(fk_expected))
    assert res.summary["sample_uniques"] == 0
    from sdckit.risk.individual import benedetti_franconi_risk

    expected_risk = benedetti_franconi_risk(np.array(fk_expected), np.array(big_f_expected))
    assert res.summary["individual_risk"]["max"] == pytest.approx(float(expected_risk.max()))
