"""PRAM (Gouweleeuw et al. 1998 / sdcMicro pram) and randomized response (Warner 1965)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.dp.randomness import INSECURE_KIND, NOT_PRIVATE
from sdckit.errors import DataError
from sdckit.masking import RandomizedResponse
from sdckit.masking.randomization import (
    invariant_matrix,
    pram,
    pram_estimate,
    randomized_response,
    rr_estimate,
)


def _cats(n, probs, labels, seed=0):
    return np.random.default_rng(seed).choice(labels, size=n, p=probs)


def test_identity_matrix_changes_nothing():
    df = pd.DataFrame({"c": ["a", "b", "b", None, "c"], "x": [1, 2, 3, 4, 5]})
    eye = pd.DataFrame(np.eye(3), index=list("abc"), columns=list("abc"))
    res = pram(df, "c", matrix=eye, seed=1)
    pd.testing.assert_frame_equal(res.data, df)
    assert res.details["c"]["n_changed"] == 0


def test_deterministic_matrix_maps_exactly_and_keeps_labels_and_dtype():
    df = pd.DataFrame({"c": [1, 2, 2, 3]})
    # 1 -> 2, 2 -> 1, 3 stays; the released category may be absent from the data (4 unused)
    P = pd.DataFrame(
        [[0, 1, 0, 0], [1, 0, 0, 0], [0, 0, 1, 0], [0, 0, 0, 1]],
        index=[1, 2, 3, 4],
        columns=[1, 2, 3, 4],
        dtype=float,
    )
    res = pram(df, "c", matrix=P, seed=0)
    assert res.data["c"].tolist() == [2, 1, 1, 3]
    assert res.data["c"].dtype == np.int64
    assert res.details["c"]["categories"] == ["1", "2", "3", "4"]
    assert res.details["c"]["original_counts"] == [1, 2, 1, 0]
    assert res.details["c"]["released_counts"] == [2, 1, 1, 0]
    assert res.details["c"]["n_changed"] == 3
    assert df["c"].tolist() == [1, 2, 2, 3]


def test_default_matrix_construction_is_published():
    df = pd.DataFrame({"c": list("xyzzy")})
    res = pram(df, "c", p_diagonal=0.7, seed=3)
    P = np.array(res.details["c"]["matrix"])
    np.testing.assert_allclose(P, [[0.7, 0.15, 0.15], [0.15, 0.7, 0.15], [0.15, 0.15, 0.7]])
    assert res.details["c"]["categories"] == ["x", "y", "z"]
    rnd = pram(df, "c", p_diagonal=0.7, random_diagonal=True, seed=3)
    R = np.array(rnd.details["c"]["matrix"])
    assert np.all((np.diag(R) >= 0.7) & (np.diag(R) <= 1.0))
    np.testing.assert_allclose(R.sum(axis=1), 1.0)
    off = R[~np.eye(3, dtype=bool)].reshape(3, 2)
    np.testing.assert_allclose(off[:, 0], off[:, 1])  # rest spread evenly


def test_invariant_matrix_hand_computed():
    # f = (3, 1), P = [[.8, .2], [.2, .8]]: Q = [[12/13, 1/13], [3/7, 4/7]],
    # R = PQ = [[75, 16], [48, 43]] / 91; alpha = 0.5: (R + I)/2 = [[166, 16], [48, 134]] / 182
    P = np.array([[0.8, 0.2], [0.2, 0.8]])
    np.testing.assert_allclose(
        invariant_matrix(P, [3, 1], alpha=1.0), np.array([[75, 16], [48, 43]]) / 91
    )
    np.testing.assert_allclose(
        invariant_matrix(P, [0.75, 0.25], alpha=0.5), np.array([[166, 16], [48, 134]]) / 182
    )


@settings(max_examples=50, deadline=None)
@given(st.integers(2, 6), st.integers(0, 10**6), st.floats(0, 1))
def test_invariant_matrix_preserves_frequencies(L, seed, alpha):
    rng = np.random.default_rng(seed)
    P = rng.random((L, L)) + np.eye(L)
    P /= P.sum(axis=1, keepdims=True)
    f = rng.integers(0, 50, L).astype(float)
    f[0] += 1
    R = invariant_matrix(P, f, alpha)
    np.testing.assert_allclose(R.sum(axis=1), 1.0)
    np.testing.assert_allclose(f @ R, f, rtol=1e-9, atol=1e-9)
    assert (R >= -1e-12).all()


def test_invariant_pram_keeps_frequencies_in_expectation():
    n = 200_000
    df = pd.DataFrame({"c": _cats(n, [0.6, 0.3, 0.1], ["a", "b", "c"])})
    res = pram(df, "c", p_diagonal=0.6, invariant=True, seed=9)
    orig = np.array(res.details["c"]["original_counts"])
    rel = np.array(res.details["c"]["released_counts"])
    assert np.all(np.abs(rel - orig) < 5 * np.sqrt(orig))
    assert res.details["c"]["n_changed"] > 0.05 * n
    f = orig / orig.sum()
    np.testing.assert_allclose(f @ np.array(res.details["c"]["matrix"]), f)


def test_pram_estimate_exact_on_expected_counts_and_labels():
    P = np.array([[0.8, 0.1, 0.1], [0.2, 0.7, 0.1], [0.0, 0.3, 0.7]])
    t = np.array([100.0, 50.0, 25.0])
    np.testing.assert_allclose(pram_estimate(P.T @ t, P), t)
    Pl = pd.DataFrame(P, index=["a", "b", "c"], columns=["a", "b", "c"])
    est = pram_estimate(dict(zip("cab", (P.T @ t)[[2, 0, 1]], strict=True)), Pl)
    assert list(est.index) == ["a", "b", "c"]
    np.testing.assert_allclose(est.to_numpy(), t)


def test_pram_estimate_recovers_true_counts():
    n = 300_000
    df = pd.DataFrame({"c": _cats(n, [0.5, 0.3, 0.15, 0.05], [1, 2, 3, 4], seed=4)})
    res = pram(df, "c", p_diagonal=0.7, seed=12)
    d = res.details["c"]
    est = pram_estimate(d["released_counts"], d["matrix"])
    true = np.array(d["original_counts"])
    assert np.all(np.abs(est - true) < 0.02 * n)
    assert not np.array_equal(d["released_counts"], d["original_counts"])


def test_pram_estimate_rejects_singular_matrix():
    with pytest.raises(DataError, match="singular"):
        pram_estimate([5, 5], np.full((2, 2), 0.5))


def test_pram_seeded_missing_kept_categorical_kept():
    df = pd.DataFrame({"c": pd.Categorical(["a", "b", None, "c", "a"] * 20), "d": ["u", "v"] * 50})
    r1 = pram(df, ["c", "d"], p_diagonal=0.5, seed=5)
    r2 = pram(df, ["c", "d"], p_diagonal=0.5, seed=5)
    pd.testing.assert_frame_equal(r1.data, r2.data)
    assert isinstance(r1.data["c"].dtype, pd.CategoricalDtype)
    assert r1.data["c"].isna().tolist() == df["c"].isna().tolist()
    assert set(r1.data["d"]) <= {"u", "v"}
    assert not r1.data.equals(pram(df, ["c", "d"], p_diagonal=0.5, seed=6).data)


def test_pram_vectorized_draws_follow_the_matrix():
    n = 100_000
    df = pd.DataFrame({"c": ["a"] * n})
    P = pd.DataFrame(
        [[0.5, 0.3, 0.2], [0, 1, 0], [0, 0, 1]], index=list("abc"), columns=list("abc")
    )
    res = pram(df, "c", matrix={"c": P}, seed=2)
    freq = res.data["c"].value_counts(normalize=True)
    np.testing.assert_allclose([freq["a"], freq["b"], freq["c"]], [0.5, 0.3, 0.2], atol=0.01)


def test_pram_matrix_validation_names_row_and_categories():
    df = pd.DataFrame({"c": ["a", "b", "z"]})
    bad_row = pd.DataFrame(
        [[0.9, 0.2, 0.0], [0, 1, 0], [0, 0, 1]], index=list("abz"), columns=list("abz")
    )
    with pytest.raises(DataError, match="row 'a'.*sums to 1.1"):
        pram(df, "c", matrix=bad_row)
    missing = pd.DataFrame(np.eye(2), index=list("ab"), columns=list("ab"))
    with pytest.raises(DataError, match="no row for the category 'z'"):
        pram(df, "c", matrix=missing)
    notsquare = pd.DataFrame(np.eye(3), index=list("abz"), columns=list("abq"))
    with pytest.raises(DataError, match="rows only: 'z'.*columns only: 'q'"):
        pram(df, "c", matrix=notsquare)
    with pytest.raises(DataError, match="unlabelled"):
        pram(df, "c", matrix=np.eye(3))
    negative = pd.DataFrame(
        [[1.5, -0.5, 0], [0, 1, 0], [0, 0, 1]], index=list("abz"), columns=list("abz")
    )
    with pytest.raises(DataError, match="probabilities must lie in"):
        pram(df, "c", matrix=negative)
    with pytest.raises(DataError, match="p_diagonal"):
        pram(df, "c", p_diagonal=1.5)


# --------------------------------------------------------------------------- randomized response


def test_rr_estimate_hand_value():
    assert rr_estimate(40, 100, 0.75) == pytest.approx(0.3)  # (0.4 - 0.25) / 0.5
    assert rr_estimate(25, 100, 0.75) == pytest.approx(0.0)
    with pytest.raises(DataError, match="0.5"):
        rr_estimate(1, 2, 0.5)


def test_randomized_response_epsilon_and_keep_probability_one():
    df = pd.DataFrame({"y": ["no", "yes", "no", None]})
    res = randomized_response(df, "y", p=1.0, seed=0)
    pd.testing.assert_frame_equal(res.data, df)
    assert res.details["epsilon"] is None
    assert res.details["positive"] == "yes"
    res = randomized_response(df, "y", p=0.75, seed=0)
    assert res.details["epsilon"] == pytest.approx(np.log(3))


def test_randomized_response_estimator_is_unbiased():
    n = 200_000
    truth = (np.random.default_rng(1).random(n) < 0.3).astype(int)
    df = pd.DataFrame({"y": truth})
    ests = []
    for seed in range(5):
        res = randomized_response(df, "y", p=0.7, seed=seed)
        assert res.details["n"] == n
        m = int((res.data["y"] == 1).sum())
        assert res.details["released_positive"] == m
        ests.append(res.details["estimated_positive_proportion"])
        flips = (res.data["y"] != df["y"]).mean()
        assert abs(flips - 0.3) < 0.01
    assert abs(np.mean(ests) - truth.mean()) < 0.005


def test_randomized_response_input_errors():
    with pytest.raises(DataError, match="not binary"):
        randomized_response(pd.DataFrame({"y": [1, 2, 3]}), "y")
    with pytest.raises(DataError, match="categories=\\(negative, positive\\)"):
        randomized_response(pd.DataFrame({"y": [1, 1]}), "y")
    res = randomized_response(pd.DataFrame({"y": [1, 1] * 50}), "y", categories=(0, 1), seed=1)
    assert set(res.data["y"]) <= {0, 1} and (res.data["y"] == 0).any()
    with pytest.raises(DataError, match=r"\(0.5, 1\]"):
        randomized_response(pd.DataFrame({"y": [0, 1]}), "y", p=0.4)
    with pytest.raises(DataError, match="outside categories"):
        randomized_response(pd.DataFrame({"y": [0, 1, 2]}), "y", categories=(0, 1))


def test_randomized_response_is_seeded_only_under_the_insecure_switch():
    df = pd.DataFrame({"y": ["a", "b"] * 200})
    r1 = randomized_response(df, "y", p=0.6, seed=17, insecure_reproducible_noise=True)
    r2 = randomized_response(df, "y", p=0.6, seed=17, insecure_reproducible_noise=True)
    pd.testing.assert_frame_equal(r1.data, r2.data)
    assert r1.details == r2.details
    assert r1.details["privacy"] == NOT_PRIVATE
    assert r1.details["randomness"] == INSECURE_KIND
    other = randomized_response(df, "y", p=0.6, seed=18, insecure_reproducible_noise=True)
    assert not r1.data.equals(other.data)


def test_randomized_response_seed_does_not_reproduce_the_flips():
    """The attack: whoever holds the job file (its seed) reruns it to regenerate the flips.
    The flips come from the OS CSPRNG, so a rerun with the same seed gives other flips."""
    df = pd.DataFrame({"y": ["a", "b"] * 200})
    r1 = randomized_response(df, "y", p=0.6, seed=17)
    r2 = randomized_response(df, "y", p=0.6, seed=17)
    assert not r1.data.equals(r2.data)
    assert r1.details["randomness"] == "csprng"
    assert "privacy" not in r1.details
    spec = {"randomized_response": {"column": "y", "p": 0.6}}
    m1 = RandomizedResponse.model_validate(spec["randomized_response"])
    assert not m1.apply(df, 17)[0].data.equals(m1.apply(df, 17)[0].data)
    m2 = RandomizedResponse.model_validate(
        {**spec["randomized_response"], "insecure_reproducible_noise": True}
    )
    a, b = m2.apply(df, 17)[0], m2.apply(df, 17)[0]
    pd.testing.assert_frame_equal(a.data, b.data)
    assert a.details["privacy"] == NOT_PRIVATE


def test_randomized_response_on_a_many_valued_column_names_five_and_counts_the_rest():
    with pytest.raises(DataError) as ei:
        randomized_response(pd.DataFrame({"y": [i % 30 for i in range(90)]}), "y")
    assert str(ei.value) == (
        "randomized_response: column 'y' is not binary: it has 30 categories (0, 1, 2, 3, 4, "
        "... (+25 more)); recode it to two categories or use pram"
    )
    with pytest.raises(DataError) as ei:
        randomized_response(
            pd.DataFrame({"y": [0, 1, 2, 3, 4, 5, 6, 7, 1]}), "y", categories=(0, 1)
        )
    assert "has value(s) 2, 3, 4, 5, 6, ... (+1 more) outside categories [0, 1]" in str(ei.value)
    recoded = pd.Categorical(
        ["(0, 1]", "(1, 2]", "(2, 3]"], categories=["(2, 3]", "(1, 2]", "(0, 1]"]
    )
    with pytest.raises(DataError, match=r"3 categories \('\(2, 3\]', '\(1, 2\]', '\(0, 1\]'\)"):
        randomized_response(pd.DataFrame({"y": recoded}), "y")  # a recoded column: its order
