"""Prosecutor / journalist / marketer risk (El Emam & Dankar 2008) on hand-computed examples."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.errors import DataError
from sdckit.risk.analyze import analyze, population_class_sizes
from sdckit.risk.reidentification import (
    class_size_distribution,
    journalist_risk,
    marketer_risk,
    prosecutor_risk,
    records_at_risk_share,
)
from sdckit.risk.suda import suda2

# Sample: x x y z (classes 2, 1, 1). Population: x x x x x, y y, z, w w w (w not in sample).
SAMPLE = pd.DataFrame({"a": ["x", "x", "y", "z"], "b": ["1"] * 4})
POPULATION = pd.DataFrame({"a": list("xxxxxyyzwww"), "b": ["1"] * 11})


def test_prosecutor_from_class_sizes():
    # sizes 1, 2, 5 (8 records): max 1, min 1/5, average J/n = 3/8
    r = prosecutor_risk(np.array([1, 2, 5, 0]))  # empty classes are ignored
    assert (r.min, r.max, r.average) == (0.2, 1.0, 3 / 8)
    assert prosecutor_risk(np.array([], dtype=int)).to_dict() == {
        "min": 0.0,
        "max": 0.0,
        "average": 0.0,
    }


def test_journalist_and_marketer_with_population_table():
    res = analyze(SAMPLE, ["a", "b"], population=POPULATION, suda=False)
    # F: x 5, y 2, z 1 -> journalist per record 1/5, 1/5, 1/2, 1
    assert res["journalist"] == {"min": 0.2, "max": 1.0, "average": (0.2 + 0.2 + 0.5 + 1) / 4}
    # marketer (1/n) sum f_j / F_j = (2/5 + 1/2 + 1/1) / 4
    assert res["marketer"] == pytest.approx((2 / 5 + 1 / 2 + 1) / 4, abs=1e-15)
    # prosecutor ignores the population: 1/2, 1/2, 1, 1
    assert res["prosecutor"] == {"min": 0.5, "max": 1.0, "average": 3 / 4}
    fs = res.frequency_set
    assert population_class_sizes(fs, POPULATION, SAMPLE).tolist() == [5, 2, 1]


def test_without_population_journalist_is_prosecutor_and_marketer_is_j_over_n():
    counts = np.array([3, 1, 1, 5])
    assert journalist_risk(counts) == prosecutor_risk(counts)
    assert marketer_risk(counts) == 4 / 10
    assert marketer_risk(np.array([], dtype=int)) == 0.0


def test_population_smaller_than_sample_is_an_input_error():
    with pytest.raises(DataError, match="subset of the population"):
        journalist_risk(np.array([2, 1]), np.array([1, 1]))
    with pytest.raises(DataError, match=r"lacks the quasi-identifier column\(s\) \['b'\]"):
        analyze(SAMPLE, ["a", "b"], population=POPULATION[["a"]], suda=False)


def test_records_at_risk_threshold_is_strict():
    counts = np.array([1, 4, 5, 10])  # risks 1, 0.25, 0.2, 0.1
    assert records_at_risk_share(counts, 0.2) == 5 / 20  # 0.2 itself is not above 0.2
    assert records_at_risk_share(counts, 0.1) == 10 / 20
    assert records_at_risk_share(counts, 1.0) == 0.0
    for bad in (0.0, -0.1, 1.5):
        with pytest.raises(DataError, match="--threshold must be in"):
            records_at_risk_share(counts, bad)


def test_class_size_distribution():
    assert class_size_distribution(np.array([2, 1, 2, 0])) == [
        {"size": 1, "classes": 1, "records": 1, "records_share": 0.2},
        {"size": 2, "classes": 2, "records": 4, "records_share": 0.8},
    ]


@settings(max_examples=50, deadline=None)
@given(values=st.lists(st.integers(0, 6), min_size=1, max_size=60))
def test_per_record_definitions(values):
    """min/max/average over records of 1/f and the at-risk share, row by row."""
    df = pd.DataFrame({"q": values})
    res = analyze(df, ["q"], suda=False)
    f = df.groupby("q")["q"].transform("size").to_numpy()
    risk = 1.0 / f
    assert res["prosecutor"]["min"] == risk.min() and res["prosecutor"]["max"] == risk.max()
    assert res["prosecutor"]["average"] == pytest.approx(risk.mean())
    assert res["marketer"] == pytest.approx(risk.mean())  # J/n
    assert res["records_at_risk_share"] == pytest.approx((risk > 0.2).mean())
    assert np.array_equal(res.record_risk, risk)
    assert res["sample_uniques"] == int((f == 1).sum())


# ------------------------------------------------------------------ SUDA inside analyze


def test_analyze_suda_ignores_missing_values_in_msus():
    """(y, missing) is unique only through the missing cell: no MSU (sdcMicro's rule).

    Rows (x,1) (x,1) (y,"") (y,2): record 4 has the MSU {b} (b = 2 occurs once), weight
    (M - 1)! = 1; record 3's only unique single is its missing b, which cannot be an MSU,
    and {a, b} is not minimal. So one record with a score and score sum 1.
    """
    df = pd.DataFrame({"a": ["x", "x", "y", "y"], "b": ["1", "1", "", "2"]})
    assert analyze(df, ["a", "b"])["suda"]["records_with_score"] == 1
    assert analyze(df, ["a", "b"])["suda"]["score_sum"] == 1.0


@settings(max_examples=40, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.integers(0, 3), st.integers(0, 2), st.integers(0, 2)), min_size=1, max_size=40
    )
)
def test_suda_on_classes_equals_suda_on_records(rows):
    codes = np.asarray(rows, dtype=np.int64)
    fs_keys, inverse, counts = np.unique(codes, axis=0, return_inverse=True, return_counts=True)
    per_record = suda2(codes)
    per_class = suda2(fs_keys, counts=counts)
    assert np.allclose(per_class.score[inverse.ravel()], per_record.score)
    assert np.allclose(per_class.dis_score[inverse.ravel()], per_record.dis_score)
    assert per_class.to_dict() == pytest.approx(per_record.to_dict())
    with pytest.raises(DataError, match="one positive record count per row"):
        suda2(fs_keys, counts=counts[:-1] if len(counts) > 1 else np.array([0]))
