"""Tests of the propensity, categorical and analysis-specific utility measures."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import stats

from sdckit.errors import DataError
from sdckit.utility.analysis import classifier_accuracy, regression_comparison
from sdckit.utility.categorical import (
    changed_values_share,
    contingency_table_loss,
    entropy_loss,
)
from sdckit.utility.propensity import propensity_mse, propensity_score_utility


# ------------------------------------------------------------------------------- propensity
def test_propensity_saturated_model_hand_value() -> None:
    # one categorical column; stacked: A = 3 original + 1 protected, B = 1 original + 3
    # protected. The (unpenalized) logistic fit of a saturated model reproduces the cell shares:
    # p_hat(A) = 1/4, p_hat(B) = 3/4; c = 4/8 = 1/2.
    # U = 1/8 [4 (1/4 - 1/2)^2 + 4 (3/4 - 1/2)^2] = 1/16
    o = pd.DataFrame({"c": list("AAAB")})
    p = pd.DataFrame({"c": list("ABBB")})
    assert propensity_score_utility(o, p) == pytest.approx(1 / 16, abs=1e-5)


def test_propensity_unequal_sizes_uses_protected_share() -> None:
    # 2 original + 6 protected records, same single category -> p_hat = c = 6/8: U = 0;
    # with the column differing completely the files are separable: U -> c(1-c) = 3/16
    o = pd.DataFrame({"c": ["A", "A"]})
    assert propensity_score_utility(o, pd.DataFrame({"c": ["A"] * 6})) == 0.0
    sep = propensity_score_utility(o, pd.DataFrame({"c": ["B"] * 6}))
    assert sep == pytest.approx(3 / 16, abs=1e-4)


def test_propensity_identical_data_is_zero_and_separable_near_max() -> None:
    rng = np.random.default_rng(0)
    o = pd.DataFrame({"x": rng.uniform(0, 1, 200), "k": rng.choice(list("abc"), 200)})
    assert propensity_score_utility(o, o.copy()) == pytest.approx(0.0, abs=1e-10)
    shifted = o.assign(x=o["x"] + 10)  # x ranges do not overlap: completely separable
    assert propensity_score_utility(o, shifted) == pytest.approx(0.25, abs=1e-3)
    mild = o.assign(x=o["x"] + rng.normal(0, 0.05, 200))
    u = propensity_score_utility(o, mild)
    assert 0 < u < 0.01


def test_propensity_mixed_types_and_missing_category() -> None:
    # numeric age in the original, generalized text in the protected: treated as categories
    o = pd.DataFrame({"age": [21, 35, 47, 52], "sex": ["m", "f", "m", "f"]})
    p = pd.DataFrame({"age": ["20-39", "20-39", "40-59", "40-59"], "sex": ["m", None, "m", "f"]})
    u = propensity_score_utility(o, p, ["age", "sex"])
    assert 0 <= u <= 0.25 + 1e-9
    assert u == propensity_score_utility(o, p, ["age", "sex"], seed=0)


def test_propensity_errors() -> None:
    o = pd.DataFrame({"x": [1.0, 2.0, 3.0]})
    with pytest.raises(DataError, match="'y'.*original"):
        propensity_score_utility(o, o, ["y"])
    with pytest.raises(DataError, match=r"'x'.*protected.*row 2"):
        propensity_score_utility(o, pd.DataFrame({"x": [1.0, np.nan, 3.0]}))


# ------------------------------------------------------------------------------- categorical
CAT_O = pd.DataFrame({"c": list("aabb"), "d": [1, 2, 1, 2]})
CAT_P = pd.DataFrame({"c": list("aaab"), "d": [1.0, 2.0, None, 2.0]})


def test_changed_values_share_hand_value() -> None:
    # changed cells: c row 3 (b -> a), d row 3 (1 -> missing); 1.0 == 1 in text form: 2 of 8
    assert changed_values_share(CAT_O, CAT_P, ["c", "d"]) == pytest.approx(2 / 8)
    assert changed_values_share(CAT_O, CAT_O, ["c", "d"]) == 0.0
    both_missing = pd.DataFrame({"d": [None, 1.0]})
    assert changed_values_share(both_missing, both_missing.copy(), "d") == 0.0


def test_contingency_table_loss_hand_value() -> None:
    # table c: original a2 b2, protected a3 b1                 -> |2-3| + |2-1| = 2
    # table d: original 1:2 2:2, protected 1:1 2:2 missing:1   -> 1 + 0 + 1 = 2
    # table c x d: original (a1)(a2)(b1)(b2), protected (a1)(a2)(a,missing)(b2) -> 1 + 1 = 2
    r = contingency_table_loss(CAT_O, CAT_P, ["c", "d"])
    assert r["ctbil"] == 6.0
    assert r["tables"] == 3
    assert r["ctbil_share"] == pytest.approx(6 / (2 * 4 * 3))
    # max_order 1: only the two marginal tables
    assert contingency_table_loss(CAT_O, CAT_P, ["c", "d"], max_order=1)["ctbil"] == 4.0
    assert contingency_table_loss(CAT_O, CAT_O, ["c", "d"])["ctbil"] == 0.0


def test_contingency_table_loss_swap_keeps_marginals() -> None:
    # swapping the c values of rows 1 and 3 keeps both marginal tables (loss 0); the c x d
    # table goes from (a1)(a2)(b3)(b4) to (b1)(a2)(a3)(b4): 4 cells differ by 1
    o = pd.DataFrame({"c": list("aabb"), "d": [1, 2, 3, 4]})
    p = pd.DataFrame({"c": list("baab"), "d": [1, 2, 3, 4]})
    r = contingency_table_loss(o, p, ["c", "d"])
    assert r["ctbil"] == 4.0


def test_contingency_table_loss_bad_order() -> None:
    with pytest.raises(DataError, match="max_order"):
        contingency_table_loss(CAT_O, CAT_P, ["c"], max_order=0)


def test_entropy_loss_hand_value() -> None:
    # released a: originals {a: 2, b: 1} -> H = -(2/3 ln 2/3 + 1/3 ln 1/3) = ln 3 - 2/3 ln 2
    # released b: originals {b: 1}       -> H = 0
    # EBIL = 3 (ln 3 - 2/3 ln 2) + 1 * 0 = 3 ln 3 - 2 ln 2
    r = entropy_loss(CAT_O, CAT_P, "c")
    assert r["ebil"] == pytest.approx(3 * math.log(3) - 2 * math.log(2))
    assert r["ebil_per_record"] == pytest.approx(r["ebil"] / 4)
    bits = entropy_loss(CAT_O, CAT_P, "c", base=2)
    assert bits["ebil"] == pytest.approx(r["ebil"] / math.log(2))


def test_entropy_loss_extremes() -> None:
    o = pd.DataFrame({"c": list("aabbbc")})
    # one-to-one recoding loses nothing
    assert entropy_loss(o, pd.DataFrame({"c": list("xxyyyz")}), "c")["ebil"] == 0.0
    # one released value for all: n H(original) = -(2 ln 2/6 + 3 ln 3/6 + ln 1/6)
    flat = entropy_loss(o, pd.DataFrame({"c": ["*"] * 6}), "c")["ebil"]
    assert flat == pytest.approx(-(2 * math.log(2 / 6) + 3 * math.log(3 / 6) + math.log(1 / 6)))


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.sampled_from("abc"), st.sampled_from("abcd")), min_size=1, max_size=30)
)
def test_property_categorical_bounds(rows: list[tuple[str, str]]) -> None:
    o = pd.DataFrame({"c": [r[0] for r in rows]})
    p = pd.DataFrame({"c": [r[1] for r in rows]})
    share = changed_values_share(o, p, "c")
    assert 0.0 <= share <= 1.0
    ct = contingency_table_loss(o, p, ["c"])
    assert 0.0 <= ct["ctbil_share"] <= share + 1e-12  # a table moves at most the changed rows
    e = entropy_loss(o, p, "c")
    # 0 <= H(X | X') <= H(X)
    counts = o["c"].value_counts().to_numpy()
    h = -np.sum(counts * np.log(counts / len(o)))
    assert -1e-12 <= e["ebil"] <= h + 1e-9


def test_categorical_errors() -> None:
    with pytest.raises(DataError, match="aligned records"):
        changed_values_share(CAT_O, CAT_P.iloc[:2], ["c"])
    with pytest.raises(DataError, match="one column"):
        entropy_loss(CAT_O, CAT_P, ["c", "d"])


# ------------------------------------------------------------------------------- analysis
REG_O = pd.DataFrame({"x": [0.0, 1.0, 2.0, 3.0], "y": [1.0, 3.0, 2.0, 5.0]})


def test_regression_comparison_hand_value() -> None:
    # xbar 1.5, ybar 2.75, Sxx 5, Sxy = 5.5 -> slope 1.1, intercept 2.75 - 1.65 = 1.1
    # residuals -.1 .8 -1.3 .6, RSS 2.7, sigma^2 = 2.7 / 2 = 1.35
    # se(slope) = sqrt(1.35/5); se(intercept) = sqrt(1.35 (1/4 + 1.5^2/5)) = sqrt(0.945)
    # protected: y + 1 -> slope identical, intercept + 1, same standard errors
    r = regression_comparison(REG_O, REG_O.assign(y=REG_O["y"] + 1), "y", ["x"])
    t = stats.t.ppf(0.975, 2)  # 4.302652...
    slope, inter = r["coefficients"]["x"], r["coefficients"]["intercept"]
    assert slope["original"] == pytest.approx(1.1)
    assert inter["original"] == pytest.approx(1.1)
    assert inter["protected"] == pytest.approx(2.1)
    assert slope["original_ci"] == pytest.approx(
        [1.1 - t * math.sqrt(0.27), 1.1 + t * math.sqrt(0.27)]
    )
    assert slope["difference"] == pytest.approx(0.0, abs=1e-12)
    assert slope["ci_overlap"] == pytest.approx(1.0)
    # intercept intervals of width w = 2 t se shifted by 1: overlap (w - 1) / w in both terms
    w = 2 * t * math.sqrt(0.945)
    assert inter["ci_overlap"] == pytest.approx((w - 1) / w)
    assert r["mean_ci_overlap"] == pytest.approx((1 + (w - 1) / w) / 2)
    assert r["mean_abs_coefficient_difference"] == pytest.approx(0.5)


def test_regression_comparison_identical_and_disjoint() -> None:
    rng = np.random.default_rng(3)
    x = rng.normal(size=(100, 2))
    o = pd.DataFrame(
        {"a": x[:, 0], "b": x[:, 1], "y": 1 + 2 * x[:, 0] - x[:, 1] + rng.normal(0, 0.1, 100)}
    )
    same = regression_comparison(o, o.copy(), "y", ["a", "b"])
    assert same["mean_ci_overlap"] == pytest.approx(1.0)
    assert same["mean_abs_coefficient_difference"] == 0.0
    # a protected y with the opposite slope on a: intervals far apart -> negative overlap
    far = regression_comparison(o, o.assign(y=1 - 2 * o["a"] - o["b"]), "y", ["a", "b"])
    assert far["coefficients"]["a"]["ci_overlap"] < 0


def test_regression_comparison_errors() -> None:
    with pytest.raises(DataError, match="collinear"):
        regression_comparison(
            REG_O.assign(z=2 * REG_O["x"]), REG_O.assign(z=REG_O["x"]), "y", ["x", "z"]
        )
    with pytest.raises(DataError, match="also listed"):
        regression_comparison(REG_O, REG_O, "y", ["y"])
    with pytest.raises(DataError, match=r"'x'.*non-numeric"):
        regression_comparison(
            REG_O, REG_O.astype({"x": object}).assign(x=["a", 1, 2, 3]), "y", ["x"]
        )


def _classification_data(n: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(1)
    d = pd.DataFrame({"a": rng.normal(size=n), "k": rng.choice(list("xyz"), n)})
    d["t"] = np.where(d["a"] > 0, "hi", "lo")
    return d


def test_classifier_accuracy_identical_and_destroyed_target() -> None:
    d = _classification_data()
    same = classifier_accuracy(d, d.copy(), "t", ["a", "k"], seed=7)
    assert same["accuracy_original"] == same["accuracy_protected"]
    assert same["accuracy_loss"] == 0.0
    assert same["n_test"] == 90 and same["n_train"] == 210
    # the rule t = (a > 0) is learnt almost perfectly from 210 records
    assert same["accuracy_original"] > 0.95
    # protected target shuffled: the relation is gone, accuracy drops to about chance
    rng = np.random.default_rng(2)
    shuffled = d.assign(t=rng.permutation(d["t"].to_numpy()))
    lost = classifier_accuracy(d, shuffled, "t", ["a", "k"], seed=7)
    assert lost["accuracy_protected"] < 0.75
    assert lost["accuracy_loss"] > 0.2
    # same seed, same result
    assert classifier_accuracy(d, shuffled, "t", ["a", "k"], seed=7) == lost


def test_classifier_accuracy_errors() -> None:
    d = _classification_data(10)
    with pytest.raises(DataError, match="test_share"):
        classifier_accuracy(d, d, "t", ["a"], test_share=1.5)
    with pytest.raises(DataError, match="too few"):
        classifier_accuracy(d.iloc[:2], d.iloc[:2], "t", ["a"])


def _sample(rng: np.random.Generator, n: int, shift: float = 0.0) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "x": rng.normal(shift, 1.0, n),
            "y": rng.exponential(1.0, n),
            "g": rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2]),
        }
    )


def test_s_pmse_null_expectation_and_ratio() -> None:
    """Under one common distribution pMSE * N / (c (1-c)) is asymptotically chi-square with
    k - 1 degrees of freedom (the logistic fit's Wald statistic), so S_pMSE averages 1 (SD
    sqrt(2 / (k-1)) per pair) and the ratio with Snoke et al.'s printed expectation
    (k-1)(1-c)^2 c / N averages 1 / (1 - c) = 2; a shifted file is far above both."""
    rng = np.random.default_rng(2018)
    ratios = []
    for _ in range(40):
        r = propensity_mse(_sample(rng, 2000), _sample(rng, 2000))
        ratios.append(r.s_pmse)
    # k = intercept + x + y + 2 dummies of g
    assert r.parameters == 5 and r.c == 0.5 and r.n == 4000
    assert r.expected_null == pytest.approx(4 * 0.5 * 0.5 / 4000)  # 2.5e-4
    assert r.s_pmse_published == pytest.approx(2 * r.s_pmse)
    assert 0.7 <= float(np.mean(ratios)) <= 1.3  # 40 pairs: standard error ~0.11
    shifted = propensity_mse(_sample(rng, 2000), _sample(rng, 2000, shift=0.5))
    assert shifted.s_pmse > 20
    # U_p of Woo et al. is the same pMSE; unequal sizes change c
    a, b = _sample(rng, 1000), _sample(rng, 3000)
    both = propensity_mse(a, b)
    assert both.c == 0.75 and propensity_score_utility(a, b) == both.pmse
    assert both.to_dict()["s_pmse"] == both.s_pmse


def _duplicated_pair(seed: int, n_original: int, n_protected: int) -> tuple[pd.DataFrame, ...]:
    """Two files of few distinct records (an integer age of 11 values, three categories),
    the protected one shifted in age and region: not separable, many records repeated."""
    rng = np.random.default_rng(seed)

    def frame(n: int, shift: float) -> pd.DataFrame:
        return pd.DataFrame(
            {
                "age": rng.integers(20, 30, n) + (rng.random(n) < shift),
                "sex": rng.choice(["F", "M"], n),
                "edu": rng.choice(["a", "b", "c", "d"], n, p=[0.4, 0.3, 0.2, 0.1]),
                "reg": rng.choice(["n", "s", "e"], n, p=[0.5 - shift, 0.3, 0.2 + shift]),
            }
        )

    return frame(n_original, 0.0), frame(n_protected, 0.1)


def _row_design(original: pd.DataFrame, protected: pd.DataFrame) -> np.ndarray:
    """The record-by-record main-effects design: age z-scored, the rest drop-first dummies."""
    stacked = pd.concat([original, protected], ignore_index=True)
    age = stacked["age"].to_numpy(dtype=float)
    dummies = pd.get_dummies(stacked[["sex", "edu", "reg"]], drop_first=True)
    return np.column_stack([(age - age.mean()) / age.std(), dummies.to_numpy(dtype=float)])


def test_pmse_on_distinct_records_equals_the_record_by_record_fit() -> None:
    """The regression runs on the distinct stacked records, each weighted by its counts (255
    distinct of 5,000 here); its estimate is the record-by-record logistic regression's:
    scikit-learn's Newton solver on the full indicator design, same objective and C."""
    from sklearn.linear_model import LogisticRegression

    from sdckit.utility.propensity import PROPENSITY_C, _design, _logistic_fit

    o, p = _duplicated_pair(3, 3000, 2000)
    x = _row_design(o, p)
    t = np.r_[np.zeros(len(o)), np.ones(len(p))]
    fit = LogisticRegression(C=PROPENSITY_C, solver="newton-cholesky", tol=1e-14, max_iter=100)
    p_rows = fit.fit(x, t).predict_proba(x)[:, 1]
    row_pmse = float(np.mean((p_rows - 0.4) ** 2))
    r = propensity_mse(o, p)
    assert r.parameters == x.shape[1] + 1 == 8 and r.c == 0.4 and r.n == 5000
    assert r.pmse == pytest.approx(row_pmse, rel=0, abs=1e-9)
    assert r.pmse > 1e-3  # the shift is visible: the comparison is not of two zeros
    # the intercept is not penalized: the mean probability is the protected share (nearly)
    design = _design(pd.concat([o, p], ignore_index=True), o, p, list(o.columns))
    assert len(design.records) == 255
    p_hat = _logistic_fit(design, PROPENSITY_C)
    assert design.records @ p_hat / 5000 == pytest.approx(0.4, abs=1e-6)


def test_design_products_equal_the_indicator_matrix() -> None:
    """X w, X' r and X' diag(h) X from the level codes equal the products with the explicit
    matrix of the intercept, the numeric columns and the drop-first indicators."""
    from sdckit.utility.propensity import _design

    o, p = _duplicated_pair(5, 400, 300)
    o = o.assign(score=np.random.default_rng(1).normal(size=len(o)).round(1))
    p = p.assign(score=np.random.default_rng(2).normal(size=len(p)).round(1))
    stacked = pd.concat([o, p], ignore_index=True)
    design = _design(stacked, o, p, list(o.columns))
    assert design.records.sum() == 700 and design.protected.sum() == 300
    assert len(design.records) < 700  # some records merged
    codes = [np.eye(k)[f][:, 1:] for f, k in zip(design.factors, design.levels, strict=True)]
    x = np.hstack([design.numeric, *codes])
    assert x.shape[1] == design.columns == 1 + 2 + 1 + 3 + 2
    rng = np.random.default_rng(0)
    w, r, h = rng.normal(size=x.shape[1]), rng.normal(size=len(x)), rng.random(len(x))
    np.testing.assert_allclose(design.linear(w), x @ w, rtol=0, atol=1e-12)
    np.testing.assert_allclose(design.transposed(r), x.T @ r, rtol=0, atol=1e-12)
    np.testing.assert_allclose(design.gram(h), (x * h[:, None]).T @ x, rtol=0, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 10_000), st.integers(20, 200), st.integers(20, 200))
def test_pmse_does_not_depend_on_the_records_order(seed: int, n_o: int, n_p: int) -> None:
    o, p = _duplicated_pair(seed, n_o, n_p)
    r = propensity_mse(o, p)
    shuffled = propensity_mse(o.sample(frac=1, random_state=seed), p.sample(frac=1, random_state=1))
    assert shuffled.pmse == pytest.approx(r.pmse, rel=1e-9, abs=1e-12)
    assert 0.0 <= r.pmse <= r.c * (1 - r.c) + 1e-12


def test_pmse_of_nearly_distinct_records_equals_the_record_by_record_fit() -> None:
    """A continuous column makes nearly every record distinct: nothing is merged (each
    record weighs 1) and the estimate is still scikit-learn's record-by-record one."""
    from sklearn.linear_model import LogisticRegression

    from sdckit.utility.propensity import PROPENSITY_C, _design

    rng = np.random.default_rng(4)
    o = pd.DataFrame({"x": rng.normal(size=1500), "g": rng.choice(list("abc"), 1500)})
    p = pd.DataFrame({"x": rng.normal(0.2, 1, 1000), "g": rng.choice(list("abc"), 1000)})
    stacked = pd.concat([o, p], ignore_index=True)
    design = _design(stacked, o, p, ["x", "g"])
    assert len(design.records) == 2500 and (design.records == 1).all()
    x = stacked["x"].to_numpy()
    dummies = pd.get_dummies(stacked["g"], drop_first=True).to_numpy(dtype=float)
    x = np.column_stack([(x - x.mean()) / x.std(), dummies])
    t = np.r_[np.zeros(1500), np.ones(1000)]
    fit = LogisticRegression(C=PROPENSITY_C, solver="newton-cholesky", tol=1e-14, max_iter=100)
    p_rows = fit.fit(x, t).predict_proba(x)[:, 1]
    r = propensity_mse(o, p)
    assert r.pmse == pytest.approx(float(np.mean((p_rows - 0.4) ** 2)), rel=0, abs=1e-9)
    assert r.pmse > 1e-4
