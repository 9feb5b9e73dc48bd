"""Tests of sdckit.utility.numeric: matrix measures, IL1s, bounded IL, score IL.

The tiny example used throughout (n = 4 records, p = 2 columns), one cell changed:

    original  a = 1 2 3 4   b = 1 3 2 4
    protected a = 1 2 3 6   b = 1 3 2 4

Hand statistics (ddof 1 unless said otherwise):
    means      a 2.5 -> 3.0,  b 2.5 -> 2.5
    deviations a -1.5 -.5 .5 1.5 (SS 5)   a' -2 -1 0 3 (SS 14)   b -1.5 .5 -.5 1.5 (SS 5)
    variances  a 5/3 -> 14/3,  b 5/3 -> 5/3
    covariance (a,b): products 2.25 -.25 -.25 2.25 = 4 -> 4/3; (a',b): 3 -.5 0 4.5 = 7 -> 7/3
    correlation r = (4/3)/(5/3) = 0.8;  r' = (7/3)/sqrt(14/3 * 5/3) = 7/sqrt(70)
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from sdckit.errors import DataError
from sdckit.utility.numeric import (
    bounded_information_loss,
    il1s,
    matrix_measures,
    score_information_loss,
)

ORIG = pd.DataFrame({"a": [1, 2, 3, 4], "b": [1, 3, 2, 4]})
PROT = pd.DataFrame({"a": [1, 2, 3, 6], "b": [1, 3, 2, 4]})
COLS = ["a", "b"]
R = 0.8
R2 = 7 / math.sqrt(70)


def test_matrix_measures_hand_example_data_means_variances_covariances() -> None:
    m = matrix_measures(ORIG, PROT, COLS)
    # X: one cell differs by 2 (original 4), n p = 8 cells
    assert m["mse_x"] == pytest.approx(4 / 8)
    assert m["mae_x"] == pytest.approx(2 / 8)
    assert m["mv_x"] == pytest.approx((2 / 4) / 8)
    # means: a differs by 0.5 (original 2.5), p = 2
    assert m["mse_mean"] == pytest.approx(0.25 / 2)
    assert m["mae_mean"] == pytest.approx(0.5 / 2)
    assert m["mv_mean"] == pytest.approx((0.5 / 2.5) / 2)
    # V upper triangle incl. diagonal (var a, cov ab, var b): differences 3, 1, 0; p(p+1)/2 = 3
    assert m["mse_v"] == pytest.approx((9 + 1 + 0) / 3)
    assert m["mae_v"] == pytest.approx((3 + 1 + 0) / 3)
    assert m["mv_v"] == pytest.approx((3 / (5 / 3) + 1 / (4 / 3) + 0) / 3)  # = 0.85
    # variances: differences 3, 0
    assert m["mse_var"] == pytest.approx(9 / 2)
    assert m["mae_var"] == pytest.approx(3 / 2)
    assert m["mv_var"] == pytest.approx((3 / (5 / 3)) / 2)  # = 0.9
    # R strict upper triangle: one pair, p(p-1)/2 = 1
    assert m["mse_r"] == pytest.approx((R2 - R) ** 2)
    assert m["mae_r"] == pytest.approx(R2 - R)
    assert m["mv_r"] == pytest.approx((R2 - R) / R)


def test_matrix_measures_hand_example_principal_components() -> None:
    # 2x2 correlation matrix [[1, r], [r, 1]]: eigenvalues 1+r, 1-r with eigenvectors
    # (1, 1)/sqrt2 and (1, -1)/sqrt2 (signs: largest entry -- the first on the tie -- positive;
    # the protected vectors point the same way). Weights w = ((1+r)/2, (1-r)/2) = (0.9, 0.1).
    m = matrix_measures(ORIG, PROT, COLS)
    w1, w2 = 0.9, 0.1
    # RF = v_ij sqrt(lambda_j): column 1 = sqrt((1+r)/2) twice, column 2 = +-sqrt((1-r)/2)
    d1 = math.sqrt((1 + R2) / 2) - math.sqrt((1 + R) / 2)
    d2 = math.sqrt((1 - R2) / 2) - math.sqrt((1 - R) / 2)
    assert m["mse_rf"] == pytest.approx((w1 * 2 * d1**2 + w2 * 2 * d2**2) / 4)
    assert m["mae_rf"] == pytest.approx((w1 * 2 * abs(d1) + w2 * 2 * abs(d2)) / 4)
    assert m["mv_rf"] == pytest.approx(
        (w1 * 2 * abs(d1) / math.sqrt(0.9) + w2 * 2 * abs(d2) / math.sqrt(0.1)) / 4
    )
    # C = RF_i1^2 = (1+r)/2 for both attributes: 0.9 -> (1+r')/2
    dc = (1 + R2) / 2 - 0.9
    assert m["mse_c"] == pytest.approx(dc**2)
    assert m["mae_c"] == pytest.approx(abs(dc))
    assert m["mv_c"] == pytest.approx(abs(dc) / 0.9)
    # F = v_ij / sqrt(lambda_j): column 1 = 1/sqrt(2(1+r)), column 2 = +-1/sqrt(2(1-r))
    f1, f1p = 1 / math.sqrt(2 * (1 + R)), 1 / math.sqrt(2 * (1 + R2))
    f2, f2p = 1 / math.sqrt(2 * (1 - R)), 1 / math.sqrt(2 * (1 - R2))
    assert m["mse_f"] == pytest.approx((w1 * 2 * (f1p - f1) ** 2 + w2 * 2 * (f2p - f2) ** 2) / 4)
    assert m["mae_f"] == pytest.approx((w1 * 2 * abs(f1p - f1) + w2 * 2 * abs(f2p - f2)) / 4)
    assert m["mv_f"] == pytest.approx(
        (w1 * 2 * abs(f1p - f1) / f1 + w2 * 2 * abs(f2p - f2) / f2) / 4
    )


def test_matrix_measures_keys_and_json_ready() -> None:
    m = matrix_measures(ORIG, PROT, COLS)
    expected = {
        f"{e}_{k}"
        for e in ("mse", "mae", "mv")
        for k in ("x", "v", "r", "rf", "c", "f", "mean", "var")
    }
    assert set(m) == expected
    assert all(type(v) is float for v in m.values())


def test_mean_variation_skips_zero_original_cells() -> None:
    # column a has original zeros: those cells are skipped in mv_x, kept in mse/mae
    o = pd.DataFrame({"a": [0.0, 2.0, 0.0, 4.0], "b": [1.0, 3.0, 2.0, 5.0]})
    p = pd.DataFrame({"a": [1.0, 2.0, 0.0, 2.0], "b": [1.0, 3.0, 2.0, 5.0]})
    m = matrix_measures(o, p, ["a", "b"])
    assert m["mae_x"] == pytest.approx((1 + 2) / 8)
    # valid cells: the 6 non-zero originals; relative errors 0, 2/4 and four zeros
    assert m["mv_x"] == pytest.approx((2 / 4) / 6)


def test_mean_variation_undefined_when_all_means_zero_and_score_refuses() -> None:
    o = pd.DataFrame({"a": [-1.0, 1.0, -2.0, 2.0], "b": [1.0, -1.0, 3.0, -3.0]})
    p = o + 0.5
    m = matrix_measures(o, p, ["a", "b"])
    assert m["mv_mean"] is None
    assert m["mae_mean"] == pytest.approx(0.5)
    with pytest.raises(DataError, match="mv_mean"):
        score_information_loss(o, p, ["a", "b"])


def test_single_column_has_no_correlation_loss() -> None:
    m = matrix_measures(ORIG, PROT, ["a"])
    assert m["mse_r"] == 0.0 and m["mae_r"] == 0.0
    # 1x1 correlation matrix: RF, C and F are all 1 in both files
    assert m["mse_rf"] == 0.0 and m["mse_c"] == 0.0 and m["mse_f"] == 0.0
    assert m["mse_x"] == pytest.approx(4 / 4)


def test_score_information_loss_hand_example() -> None:
    s = score_information_loss(ORIG, PROT, COLS)
    # 100 * mean(mv_x, mv_mean, mv_v, mv_var, mae_r)
    expected = 100 * (0.0625 + 0.1 + 0.85 + 0.9 + (R2 - R)) / 5
    assert s["score_il"] == pytest.approx(expected)  # 38.98320...
    assert s["mv_v"] == pytest.approx(0.85)
    assert s["mae_r"] == pytest.approx(R2 - R)


def test_il1s_hand_example_and_sdcmicro_unnormalized_variant() -> None:
    # one cell: |4 - 6| / (sqrt2 * sd_a), sd_a = sqrt(5/3); n p = 8
    cell = 2 / (math.sqrt(2) * math.sqrt(5 / 3))
    assert il1s(ORIG, PROT, COLS) == pytest.approx(cell / 8)  # 0.136930...
    # sdcMicro's current dUtility(method = "IL1s") returns the sum without 1/(np)
    assert il1s(ORIG, PROT, COLS, normalize=False) == pytest.approx(cell)


def test_bounded_information_loss_hand_example() -> None:
    b = bounded_information_loss(ORIG, PROT, COLS, quantile_levels=[0.75])

    def pil(d: float, sd: float) -> float:  # 2 Phi(|d|/sd) - 1
        return math.erf(abs(d) / sd / math.sqrt(2))

    # means: a moves 0.5; Var(xbar) = mu2 / n = 1.25 / 4; b unchanged (pil 0)
    assert b["pil_means"] == pytest.approx(pil(0.5, math.sqrt(1.25 / 4)) / 2)
    # variances (divisor n): a 1.25 -> 3.5; mu4 = (2 * 1.5^4 + 2 * 0.5^4) / 4 = 2.5625
    # Var(m2) = (n-1)/n^3 ((n-1) mu4 - (n-3) mu2^2) = 3/64 (3 * 2.5625 - 1.5625) = 0.287109375
    assert b["pil_variances"] == pytest.approx(pil(2.25, math.sqrt(0.287109375)) / 2)
    # covariance (divisor n): 1 -> 1.75; mu22 = (2 * 2.25^2 + 2 * 0.25^2) / 4 = 2.5625
    # Var(m11) = 3/64 (3 * 2.5625 - 2 * 1^2 + 1.25 * 1.25) = 3/64 * 7.25 = 0.33984375
    assert b["pil_covariances"] == pytest.approx(pil(0.75, math.sqrt(0.33984375)))
    # correlation 0.8 -> 7/sqrt70; mu40 = mu04 = mu22 = 2.5625, mu31 = mu13 = 2.5
    # Var(r) = 1/4 [1.64 + 0.16 (1.64 + 1.64 + 2 * 1.64) - 0.8 (1.6 + 1.6)] = 0.1296 / 4 = 0.0324
    # (equal here to the normal-theory (1 - rho^2)^2 / n = 0.36^2 / 4)
    assert b["pil_correlations"] == pytest.approx(pil(R2 - R, 0.18))
    # quantile 0.75 (linear): a 3.25 -> 3.75; h = sqrt(.75 * .25 / 4); the quantile function
    # has slope 3 between the order statistics, so sd = h * 3; b unchanged
    h = math.sqrt(0.75 * 0.25 / 4)
    assert b["pil_quantiles"] == pytest.approx(pil(0.5, 3 * h) / 2)
    # overall: mean of the five components
    comps = [
        b[k]
        for k in (
            "pil_quantiles",
            "pil_means",
            "pil_variances",
            "pil_covariances",
            "pil_correlations",
        )
    ]
    assert b["bounded_il"] == pytest.approx(sum(comps) / 5)
    # record level (not in the overall): one cell, |d| = 2, S_a = sqrt(5/3), 8 cells
    assert b["pil_x"] == pytest.approx(pil(2, math.sqrt(5 / 3)) / 8)


def test_bounded_information_loss_single_column_has_no_pairs() -> None:
    b = bounded_information_loss(ORIG, PROT, ["a"])
    assert b["pil_covariances"] is None and b["pil_correlations"] is None
    three = [b["pil_quantiles"], b["pil_means"], b["pil_variances"]]
    assert b["bounded_il"] == pytest.approx(sum(three) / 3)


def test_positive_affine_masking_preserves_correlation_structure() -> None:
    rng = np.random.default_rng(5)
    x = rng.normal(size=(200, 3)) @ np.array([[1.0, 0.5, 0.2], [0.0, 1.0, 0.4], [0, 0, 1.0]])
    o = pd.DataFrame(x, columns=["a", "b", "c"])
    p = o * [2.0, 0.5, 3.0] + [1.0, -4.0, 10.0]
    m = matrix_measures(o, p, ["a", "b", "c"])
    for key in ("mse_r", "mse_rf", "mse_c", "mse_f", "mv_rf", "mv_f"):
        assert m[key] == pytest.approx(0.0, abs=1e-20 if key.startswith("mse") else 1e-9)
    assert m["mse_x"] > 0


# ------------------------------------------------------------------------------- errors
def test_unaligned_rows_rejected() -> None:
    with pytest.raises(DataError, match="aligned records.*4 rows.*3"):
        matrix_measures(ORIG, PROT.iloc[:3], COLS)


def test_missing_column_names_the_file() -> None:
    with pytest.raises(DataError, match="'c'.*protected"):
        il1s(ORIG.assign(c=1.0), PROT, ["a", "c"])


def test_non_numeric_value_named() -> None:
    bad = PROT.astype({"b": object})
    bad.loc[2, "b"] = "x7"
    with pytest.raises(DataError, match=r"'b'.*protected.*'x7'.*row 3"):
        matrix_measures(ORIG, bad, COLS)


def test_missing_value_rejected() -> None:
    bad = PROT.astype(float)
    bad.loc[1, "a"] = np.nan
    with pytest.raises(DataError, match=r"'a'.*protected.*missing.*row 2"):
        bounded_information_loss(ORIG, bad, COLS)


def test_zero_variance_column_rejected() -> None:
    flat = PROT.assign(b=5)
    with pytest.raises(DataError, match=r"'b'.*protected.*zero variance"):
        matrix_measures(ORIG, flat, COLS)
    with pytest.raises(DataError, match=r"'b'.*original.*zero variance"):
        il1s(flat, ORIG, COLS)


def test_numeric_text_columns_are_accepted() -> None:
    o = ORIG.astype(str)
    assert il1s(o, PROT, COLS) == pytest.approx(il1s(ORIG, PROT, COLS))


# ------------------------------------------------------------------------------- properties
def _frames(data: np.ndarray, noise: np.ndarray) -> tuple[pd.DataFrame, pd.DataFrame]:
    cols = [f"v{j}" for j in range(data.shape[1])]
    return pd.DataFrame(data, columns=cols), pd.DataFrame(data + noise, columns=cols)


pairs = st.integers(6, 25).flatmap(
    lambda n: st.integers(1, 3).flatmap(
        lambda p: st.tuples(
            arrays(np.float64, (n, p), elements=st.floats(-100, 100).map(lambda v: round(v, 3))),
            arrays(np.float64, (n, p), elements=st.floats(-10, 10).map(lambda v: round(v, 3))),
        )
    )
)


def _usable(o: pd.DataFrame, p: pd.DataFrame) -> bool:
    return bool((o.std() > 1e-3).all() and (p.std() > 1e-3).all())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(pairs)
def test_property_measures_nonnegative_and_bounded(pair: tuple[np.ndarray, np.ndarray]) -> None:
    o, p = _frames(*pair)
    assume(_usable(o, p))
    cols = list(o.columns)
    m = matrix_measures(o, p, cols)
    assert all(v is None or v >= 0 for v in m.values())
    assert il1s(o, p, cols) >= 0
    b = bounded_information_loss(o, p, cols)
    assert all(v is None or 0.0 <= v <= 1.0 for v in b.values())


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(pairs)
def test_property_identical_data_loses_nothing(pair: tuple[np.ndarray, np.ndarray]) -> None:
    o, _ = _frames(*pair)
    assume(_usable(o, o))
    cols = list(o.columns)
    assert all(v in (0.0, None) for v in matrix_measures(o, o.copy(), cols).values())
    assert il1s(o, o.copy(), cols) == 0.0
    assert all(v in (0.0, None) for v in bounded_information_loss(o, o.copy(), cols).values())
    if (o.mean().abs() > 0).all():
        assert score_information_loss(o, o.copy(), cols)["score_il"] == 0.0


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.filter_too_much])
@given(pairs, st.randoms(use_true_random=False))
def test_property_column_order_does_not_matter(pair, rnd) -> None:
    o, p = _frames(*pair)
    assume(_usable(o, p))
    cols = list(o.columns)
    perm = cols[:]
    rnd.shuffle(perm)
    a, b = matrix_measures(o, p, cols), matrix_measures(o, p, perm)
    for key in ("mse_x", "mv_x", "mse_v", "mse_r", "mse_mean", "mv_var", "mse_c"):
        assert (a[key] is None and b[key] is None) or b[key] == pytest.approx(
            a[key], rel=1e-6, abs=1e-12
        )
    assert bounded_information_loss(o, p, perm)["bounded_il"] == pytest.approx(
        bounded_information_loss(o, p, cols)["bounded_il"], rel=1e-9, abs=1e-12
    )


def test_more_noise_more_loss() -> None:
    rng = np.random.default_rng(0)
    o = pd.DataFrame(rng.gamma(2.0, 10.0, size=(500, 3)), columns=list("abc"))
    small = o + rng.normal(0, 0.5, size=o.shape)
    large = o + rng.normal(0, 5.0, size=o.shape)
    cols = list("abc")
    assert il1s(o, small, cols) < il1s(o, large, cols)
    assert (
        bounded_information_loss(o, small, cols)["pil_x"]
        < bounded_information_loss(o, large, cols)["pil_x"]
    )
    assert (
        score_information_loss(o, small, cols)["mv_x"]
        < score_information_loss(o, large, cols)["mv_x"]
    )
