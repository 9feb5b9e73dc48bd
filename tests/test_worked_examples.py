"""The worked examples of the seed tables (seed 003) as exact unit tests.

The homogeneity-attack table (3-anonymous class (476**, 2*) with distinct-l = 1) and the LKC
example (table 6.2 satisfies LKC L=2, K=2, C=50% but not 2-anonymity) are tested in
``tests/test_models.py`` (``test_homogeneity_attack_three_anonymous_but_one_diverse`` and
``test_lkc_privacy_holds_but_not_two_anonymity``).
"""

from __future__ import annotations

from fractions import Fraction

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sdckit.core.frequency import frequency_set
from sdckit.core.hierarchy_builders import interval_hierarchy
from sdckit.risk.analyze import analyze
from sdckit.risk.distinction import (
    attribute_combinations,
    distinction,
    distinction_separation,
    separation,
)

# Seed 003: 5 records (age, sex, state).
FIVE = pd.DataFrame(
    {
        "age": [20, 30, 40, 20, 40],
        "sex": ["F", "F", "F", "M", "M"],
        "state": ["CA", "CA", "TX", "NY", "CA"],
    }
)

# Seed 003: 11 records (Gender, Year of Birth).
ELEVEN = pd.DataFrame(
    {
        "Gender": list("MMMFFMMFMFM"),
        "YOB": [1979, 1982, 1979, 1995, 1987, 1995, 1998, 1984, 1979, 1995, 1987],
    }
)


def test_five_records_distinction_and_separation():
    dist, sep = distinction_separation(frequency_set(FIVE, ["age", "sex", "state"]))
    # age: 3 distinct values / 5 records; pairs with equal age: (20,20), (40,40) of 10
    assert dist["age"] == pytest.approx(0.6, abs=1e-15)
    assert sep["age"] == pytest.approx(0.8, abs=1e-15)
    # (sex, state): (F,CA) x2, (F,TX), (M,NY), (M,CA) -> 4 / 5; one equal pair of 10
    assert dist["sex,state"] == pytest.approx(0.8, abs=1e-15)
    assert sep["sex,state"] == pytest.approx(0.9, abs=1e-15)
    # all 7 combinations of 3 QIs, singles first
    assert list(dist) == [
        "age",
        "sex",
        "state",
        "age,sex",
        "age,state",
        "sex,state",
        "age,sex,state",
    ]
    assert dist["age,sex,state"] == 1.0 and sep["age,sex,state"] == 1.0


def test_eleven_records_prosecutor_risk():
    """8 classes; max 1, min 1/3, average 8/11 (M1979 x3, F1995 x2, M1987 ... )."""
    res = analyze(ELEVEN, ["Gender", "YOB"], suda=False)
    assert res["equivalence_classes"] == 8
    assert res["prosecutor"] == {"max": 1.0, "min": 1 / 3, "average": 8 / 11}
    assert res["sample_uniques"] == 6
    # records with risk > 0.2: all 11 (smallest risk is 1/3)
    assert res["records_at_risk_share"] == 1.0
    assert res["class_size_distribution"] == [
        {"size": 1, "classes": 6, "records": 6, "records_share": 6 / 11},
        {"size": 2, "classes": 1, "records": 2, "records_share": 2 / 11},
        {"size": 3, "classes": 1, "records": 3, "records_share": 3 / 11},
    ]


def test_eleven_records_generalized_to_decades():
    """YOB -> decade: 5 classes; max 1/2, min 1/3, average 5/11."""
    decades = interval_hierarchy(ELEVEN["YOB"], widths=[10])
    fs = frequency_set(ELEVEN, ["Gender", "YOB"], hierarchies={"YOB": decades}, levels=[0, 1])
    assert sorted(fs.counts.tolist()) == [2, 2, 2, 2, 3]
    res = analyze(
        ELEVEN, ["Gender", "YOB"], hierarchies={"YOB": decades}, levels=[0, 1], suda=False
    )
    assert res["equivalence_classes"] == 5
    assert res["prosecutor"] == {"max": 1 / 2, "min": 1 / 3, "average": 5 / 11}
    assert res["sample_uniques"] == 0


def test_eleven_records_match_arx_attribute_risk_figures():
    """ARX's figures on the same 11 records, to the 5 decimals (in %) ARX shows."""
    res = analyze(ELEVEN, ["Gender", "YOB"], suda=False)
    dist = {k: round(v * 100, 5) for k, v in res["distinction"].items()}
    sep = {k: round(v * 100, 5) for k, v in res["separation"].items()}
    assert dist == {"Gender": 18.18182, "YOB": 54.54545, "Gender,YOB": 72.72727}
    assert sep == {"Gender": 50.90909, "YOB": 87.27273, "Gender,YOB": 92.72727}
    # exact fractions: 2/11, 6/11, 8/11; 1 - 27/55, 1 - 7/55, 1 - 4/55
    assert res["separation"]["Gender"] == pytest.approx(float(1 - Fraction(27, 55)), abs=1e-15)
    assert res["separation"]["YOB"] == pytest.approx(float(1 - Fraction(7, 55)), abs=1e-15)


def test_combination_sizes():
    names = [f"q{i}" for i in range(12)]
    assert len(attribute_combinations(names[:10])) == 2**10 - 1  # all when <= 10 QIs
    assert len(attribute_combinations(names)) == 12 + 66 + 220  # up to 3 when more
    assert len(attribute_combinations(names[:5], max_size=2)) == 5 + 10
    assert distinction([]) == 0.0 and separation([1]) == 1.0 and separation([]) == 0.0


@settings(max_examples=40, deadline=None)
@given(rows=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2)), min_size=2, max_size=30))
def test_distinction_separation_equal_pair_counting(rows):
    """Against the definitions: distinct combinations / n and differing pairs / all pairs."""
    df = pd.DataFrame(rows, columns=["a", "b"])
    dist, sep = distinction_separation(frequency_set(df, ["a", "b"]))
    n = len(rows)
    for combo, cols in (("a", [0]), ("b", [1]), ("a,b", [0, 1])):
        proj = [tuple(r[c] for c in cols) for r in rows]
        differing = sum(proj[i] != proj[j] for i in range(n) for j in range(i + 1, n))
        assert dist[combo] == pytest.approx(len(set(proj)) / n)
        assert sep[combo] == pytest.approx(differing / (n * (n - 1) / 2))
