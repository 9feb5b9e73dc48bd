"""Top-down specialization (TDS/HDTDS) for LKC-privacy: the blood-transfusion example.

The data is the 11-record Job/Sex/Age table with class attribute Transfuse and sensitive
attribute Surgery of Mohammed, Fung, Hung & Lee (KDD 2009), Table 1 (as reproduced in the
course material, seed 003, section 6.2), with L=2, K=2, C=50%, S={Transgender}.
Every InfoGain below is computed by hand (entropies in bits).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from heuristics_checks import assert_contract, assert_models_hold
from sdckit.algorithms.tds import entropy_bits, info_gain, tds
from sdckit.core.hierarchy import Hierarchy
from sdckit.core.schema import Schema
from sdckit.errors import ConfigError, NoSolutionError
from sdckit.models import KAnonymity, LKCPrivacy

ROWS = [
    ("Janitor", "M", 34, "Y", "Transgender"),
    ("Doctor", "M", 58, "N", "Plastic"),
    ("Mover", "M", 34, "Y", "Transgender"),
    ("Lawyer", "M", 24, "N", "Vascular"),
    ("Mover", "M", 58, "N", "Urology"),
    ("Janitor", "M", 44, "Y", "Plastic"),
    ("Doctor", "M", 24, "N", "Urology"),
    ("Lawyer", "F", 58, "N", "Plastic"),
    ("Doctor", "F", 44, "N", "Vascular"),
    ("Carpenter", "F", 63, "Y", "Vascular"),
    ("Technician", "F", 63, "Y", "Plastic"),
]
DF = pd.DataFrame(ROWS, columns=["Job", "Sex", "Age", "Transfuse", "Surgery"])
JOB = Hierarchy(
    [
        ["Janitor", "Non-Technical", "Blue-collar", "ANY"],
        ["Mover", "Non-Technical", "Blue-collar", "ANY"],
        ["Carpenter", "Technical", "Blue-collar", "ANY"],
        ["Technician", "Technical", "Blue-collar", "ANY"],
        ["Doctor", "Professional", "White-collar", "ANY"],
        ["Lawyer", "Professional", "White-collar", "ANY"],
    ],
    "Job",
)
SEX = Hierarchy([["M", "ANY"], ["F", "ANY"]], "Sex")
LKC = LKCPrivacy(2, 2, 0.5, {"Surgery": ["Transgender"]})


def _h(p: float) -> float:
    return -sum(x * math.log2(x) for x in (p, 1 - p) if x > 0)


def _schema(age_hierarchy=None):
    hier = {"Job": JOB, "Sex": SEX}
    types = {}
    if age_hierarchy is None:
        types["Age"] = "integer"
    else:
        hier["Age"] = age_hierarchy
    return Schema.from_roles(
        quasi_identifying=["Job", "Sex", "Age"],
        sensitive=["Surgery"],
        insensitive=["Transfuse"],
        hierarchies=hier,
        types=types,
    )


def test_info_gain_helpers():
    assert entropy_bits(np.array([[5, 6]]))[0] == pytest.approx(_h(5 / 11))
    assert info_gain([5, 6], [[5, 1], [0, 5]]) == pytest.approx(_h(5 / 11) - 6 / 11 * _h(5 / 6))
    assert info_gain([0, 0], [[0, 0]]) == 0.0


def test_blood_transfusion_example_numeric_age():
    out = tds(DF, _schema(), [LKC], class_attribute="Transfuse")
    steps = out.details["specializations"]
    e = _h(5 / 11)
    expected = [
        # ANY -> Blue-collar (5Y 1N) | White-collar (5N)
        ("Job", "ANY", ["Blue-collar", "White-collar"], e - 6 / 11 * _h(5 / 6)),
        # best cut of [24, 63]: <= 58 (3Y 6N) | 63 (2Y)
        ("Age", "[24, 63]", ["[24, 58]", "63"], e - 9 / 11 * _h(1 / 3)),
        # (the best cut of [24, 58], at 44 with gain 1 - ... = 0.2516, is invalid: the class
        #  (Blue-collar, [24, 44]) would hold 2 Transgender of 3 > C)
        ("Job", "Blue-collar", ["Non-Technical", "Technical"], _h(5 / 6) - 4 / 6 * _h(3 / 4)),
        ("Job", "Non-Technical", ["Janitor", "Mover"], _h(3 / 4) - 2 / 4 * 1.0),
        # M (3Y 4N) | F (2Y 2N)
        ("Sex", "ANY", ["M", "F"], e - 7 / 11 * _h(3 / 7) - 4 / 11 * 1.0),
        ("Job", "White-collar", ["Professional"], 0.0),
    ]
    assert len(steps) == len(expected)
    for step, (attr, frm, to, gain) in zip(steps, expected, strict=True):
        assert (step["attribute"], step["from"], step["to"]) == (attr, frm, to)
        assert step["info_gain"] == pytest.approx(gain, abs=1e-12)
    assert steps[1]["threshold"] == 58.0
    # still invalid at the end: Age [24, 58] (any cut), Technical, Professional
    assert out.details["invalid_candidates"] == 3
    assert out.data["Job"].tolist() == [
        "Janitor",
        "Professional",
        "Mover",
        "Professional",
        "Mover",
        "Janitor",
        "Professional",
        "Professional",
        "Professional",
        "Technical",
        "Technical",
    ]
    assert out.data["Age"].tolist() == ["[24, 58]"] * 9 + ["63", "63"]
    assert out.data["Sex"].tolist() == DF["Sex"].tolist()
    np.testing.assert_allclose(out.share["Age"], [34 / 39] * 9 + [0, 0])
    np.testing.assert_allclose(out.share["Job"][[0, 1, 9]], [1 / 6, 2 / 6, 2 / 6])
    assert_contract(out, DF, _schema(), 0.0)
    assert_models_hold(out, DF, _schema(), [LKC])
    assert out.details["class_attribute"] == "Transfuse"


AGE = Hierarchy(
    [
        ["24", "[1-30)", "[1-60)", "[1-99)"],
        ["34", "[30-60)", "[1-60)", "[1-99)"],
        ["44", "[30-60)", "[1-60)", "[1-99)"],
        ["58", "[30-60)", "[1-60)", "[1-99)"],
        ["63", "[60-99)", "[60-99)", "[1-99)"],
    ],
    "Age",
)


def test_blood_transfusion_example_age_hierarchy():
    """With the paper's Age taxonomy: the released table satisfies LKC (L=2, K=2, C=50%) while
    not being 2-anonymous (LKC-privacy bounds only combinations of <= L values; Mohammed et
    al. 2009, Section 3: <Professional, M, [30-60)> is unique in Table 6.2)."""
    schema = _schema(AGE)
    out = tds(DF, schema, [LKC], class_attribute="Transfuse")
    assert_models_hold(out, DF, schema, [LKC])
    assert out.details["specializations"][0]["from"] == "ANY"
    classes = out.data.groupby(["Job", "Sex", "Age"]).size()
    assert classes.min() == 1
    assert classes[("Professional", "M", "[30-60)")] == 1


def test_no_solution_and_bad_input():
    strict = LKCPrivacy(1, 2, 0.1, {"Surgery": ["Transgender"]})  # 2/11 > 0.1 at the root
    with pytest.raises(NoSolutionError, match="most general"):
        tds(DF, _schema(), [strict], class_attribute="Transfuse")
    with pytest.raises(ConfigError, match="class_attribute"):
        tds(DF, _schema(), [LKC], class_attribute="Nope")
    with pytest.raises(ConfigError, match="quasi-identifier"):
        tds(DF, _schema(), [LKC], class_attribute="Job")
    with pytest.raises(ConfigError, match="unknown option"):
        tds(DF, _schema(), [LKC], clas_attribute="Transfuse")
    no_class = Schema.from_roles(quasi_identifying=["Job"], hierarchies={"Job": JOB})
    with pytest.raises(ConfigError, match="no class attribute"):
        tds(DF[["Job"]], no_class, [KAnonymity(2)])


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(4, 20).flatmap(
        lambda n: st.tuples(
            st.lists(st.sampled_from(JOB.leaves.tolist()), min_size=n, max_size=n),
            st.lists(st.sampled_from(["M", "F"]), min_size=n, max_size=n),
            st.lists(st.integers(20, 32), min_size=n, max_size=n),
            st.lists(st.sampled_from(["Y", "N"]), min_size=n, max_size=n),
            st.lists(st.sampled_from(["s1", "s2", "s3"]), min_size=n, max_size=n),
            st.integers(1, 4),
            st.sampled_from(["k", "lkc"]),
            st.sampled_from([0.0, 0.2]),
        )
    )
)
def test_property_output_satisfies_models(case):
    job, sex, age, cls, s, k, kind, limit = case
    df = pd.DataFrame({"Job": job, "Sex": sex, "Age": age, "Transfuse": cls, "Surgery": s})
    df.loc[0, "Surgery"] = "s1"  # LKC's sensitive value must occur
    schema = _schema()
    models = [KAnonymity(k)] if kind == "k" else [LKCPrivacy(2, k, 0.8, {"Surgery": ["s1"]})]
    try:
        out = tds(df, schema, models, suppression_limit=limit)
    except NoSolutionError:
        assert kind == "lkc" and (df["Surgery"] == "s1").mean() > 0.8
        return
    assert_contract(out, df, schema, limit)
    assert_models_hold(out, df, schema, models)
    assert out.details["class_attribute"] == "Surgery"  # first sensitive attribute
