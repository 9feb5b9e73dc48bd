"""Tests: DCR against a holdout -- a copy of the training data is caught, a fresh sample of
the same distribution is not, hand-computed Gower distances."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from sdckit.risk.synthetic import dcr_holdout


def population(rng: np.random.Generator, n: int) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "age": rng.integers(18, 90, n),
            "income": rng.lognormal(10, 0.5, n).round(),
            "region": rng.choice(["n", "s", "e", "w"], n),
        }
    )


def test_hand_computed_gower_distances() -> None:
    training = pd.DataFrame({"v": [0.0, 10.0], "g": ["a", "b"]})
    holdout = pd.DataFrame({"v": [4.0], "g": ["b"]})
    synthetic = pd.DataFrame({"v": [1.0, 5.0], "g": ["a", "b"]})
    r = dcr_holdout(training, holdout, synthetic)
    # (1, a): training (0, a) -> (0.1 + 0)/2 = 0.05; holdout (4, b) -> (0.3 + 1)/2 = 0.65
    # (5, b): training (10, b) -> 0.25; holdout (4, b) -> 0.05
    assert r.share_closer_to_training == 0.5
    assert r.dcr_training_median == pytest.approx((0.05 + 0.25) / 2)
    assert r.dcr_holdout_median == pytest.approx((0.65 + 0.05) / 2)
    assert r.expected_share == pytest.approx(2 / 3) and r.exact_copies == 0


def test_a_copy_is_caught_and_a_fresh_sample_is_not() -> None:
    rng = np.random.default_rng(21)
    training, holdout = population(rng, 2000), population(rng, 2000)
    copied = dcr_holdout(training, holdout, training.sample(1000, random_state=1))
    assert copied.share_closer_to_training == 1.0 and copied.exact_copies == 1000
    fresh = dcr_holdout(training, holdout, population(rng, 1000))
    assert abs(fresh.share_closer_to_training - fresh.expected_share) < 0.06
    assert fresh.to_dict()["dcr_share_closer_than_holdout"] == fresh.share_closer_to_training


def test_tcap_hand_computed() -> None:
    from sdckit.risk.synthetic import tcap

    original = pd.DataFrame(
        {
            "age": ["30", "30", "30", "40", "40", "50"],
            "sex": ["f", "f", "f", "m", "m", "m"],
            "job": ["a", "a", "b", "c", "d", "e"],
        }
    )
    synthetic = pd.DataFrame(
        {
            "age": ["30", "30", "40", "40", "60"],
            "sex": ["f", "f", "m", "m", "m"],
            "job": ["a", "a", "c", "d", "e"],
        }
    )
    r = tcap(original, synthetic, ["age", "sex"], "job")
    # (30, f): synthetic all "a" -> attributed; original 3 records, 2 with "a"
    # (40, m): synthetic c and d -> not homogeneous; (50, m): absent from synthetic
    assert r.matched_records == 3 and r.matched_share == pytest.approx(0.5)
    assert r.tcap == pytest.approx(2 / 3)
    # baseline: job shares 2/6, 1/6 x 4 -> 4/36 + 4/36
    assert r.baseline == pytest.approx((2 / 6) ** 2 + 4 * (1 / 6) ** 2)
    # the original itself as "synthetic": every homogeneous class attributes correctly
    assert tcap(original, original, ["age", "sex"], "job").tcap == 1.0


def test_dcr_sample_is_the_dcr_of_a_seeded_subset() -> None:
    from sdckit.errors import ParameterError

    rng = np.random.default_rng(5)
    training, holdout, synthetic = population(rng, 800), population(rng, 200), population(rng, 600)
    full = dcr_holdout(training, holdout, synthetic)
    assert (full.synthetic_records, full.measured_records) == (600, 600)
    # a sample at least the file's size measures every record: the same figures
    assert dcr_holdout(training, holdout, synthetic, sample=600) == full
    sampled = dcr_holdout(training, holdout, synthetic, sample=150, seed=7)
    assert (sampled.synthetic_records, sampled.measured_records) == (600, 150)
    # the same as the DCR of the records the seed picks, measured directly
    picked = np.sort(np.random.default_rng(7).choice(600, 150, replace=False))
    direct = dcr_holdout(training, holdout, synthetic.iloc[picked])
    assert sampled.share_closer_to_training == direct.share_closer_to_training
    assert sampled.dcr_training_median == direct.dcr_training_median
    assert sampled.to_dict()["measured_records"] == 150
    assert dcr_holdout(training, holdout, synthetic, sample=150, seed=7) == sampled
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ParameterError, match="sample must be"):
            dcr_holdout(training, holdout, synthetic, sample=bad)  # type: ignore[arg-type]


def _mixed(rng: np.random.Generator, n: int) -> pd.DataFrame:
    """Few categories (many records share a class) and a number to one decimal, a missing
    value in each kind of column now and then."""
    age = rng.normal(40, 10, n).round(1)
    age[rng.random(n) < 0.02] = np.nan
    region = rng.choice(["n", "s", "e"], n).astype(object)
    region[rng.random(n) < 0.02] = None
    return pd.DataFrame({"age": age, "region": region, "sex": rng.choice(["F", "M"], n)})


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_nearest_within_the_class_first_changes_no_distance(monkeypatch, seed) -> None:
    """The nearest and second nearest are looked for first among the reference records of
    the query's class (its categorical values); where the second is at most 1 away they are
    the nearest overall. Every figure equals the search over all records, bit for bit, and
    the shortcut is taken for most queries here."""
    import sdckit.risk.synthetic as synthetic

    rng = np.random.default_rng(seed)
    training, holdout, syn = _mixed(rng, 600), _mixed(rng, 300), _mixed(rng, 400)
    taken = []
    inner = synthetic._nearest_in_class

    def spy(*args):
        found = inner(*args)
        taken.append(0 if found is None else int((found[1] <= 1.0).sum()))
        return found

    monkeypatch.setattr(synthetic, "_nearest_in_class", spy)
    shortcut = dcr_holdout(training, holdout, syn).to_dict()
    assert len(taken) == 2 and min(taken) > 100
    monkeypatch.setattr(synthetic, "_CLASS_PAIRS", 0)  # every query against every record
    everything = dcr_holdout(training, holdout, syn).to_dict()
    assert shortcut == everything
    d1, d2 = synthetic._nearest_gower(training, syn, list(syn.columns), training)
    monkeypatch.setattr(synthetic, "_CLASS_PAIRS", 2**20)
    e1, e2 = synthetic._nearest_gower(training, syn, list(syn.columns), training)
    assert np.array_equal(d1, e1) and np.array_equal(d2, e2)
