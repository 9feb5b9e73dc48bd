"""Mondrian (LeFevre, DeWitt & Ramakrishnan 2006): worked examples and properties."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from heuristics_checks import assert_contract, assert_models_hold, parse_range
from sdckit.algorithms.mondrian import mondrian
from sdckit.core.hierarchy import Hierarchy
from sdckit.core.schema import Schema
from sdckit.errors import ConfigError, NoSolutionError
from sdckit.models import KAnonymity, LDiversity, LKCPrivacy, TCloseness

# LeFevre et al. 2006, Figure 1: the patients table (Age, Zipcode; Sex used below)
PATIENTS = pd.DataFrame(
    {
        "Age": [25, 25, 26, 27, 27, 28],
        "Sex": ["Male", "Female", "Male", "Male", "Female", "Male"],
        "Zipcode": [53711, 53712, 53711, 53710, 53712, 53711],
        "Disease": ["Flu", "Hepatitis", "Bronchitis", "Broken Arm", "AIDS", "Hang Nail"],
    }
)
SEX = Hierarchy([["Male", "*"], ["Female", "*"]], "Sex")


def _schema(qis, hier=None, types=None, sensitive=("Disease",)):
    return Schema.from_roles(
        quasi_identifying=qis, sensitive=sensitive, hierarchies=hier or {}, types=types or {}
    )


def test_two_dimensional_numeric_example_k2():
    """Hand-computed: Age (span 3) and Zipcode (span 2) both have normalized width 1; the tie
    goes to Age (schema order), cut at the lower median 26 -> {25,25,26} | {27,27,28}. In
    {25,25,26}: Zipcode (1/2) beats Age (1/3), but cutting at 53711 leaves {53712} alone (< k)
    and Age's cut at 25 leaves {26} alone: final. Same for {27,27,28}."""
    schema = _schema(["Age", "Zipcode"], types={"Age": "integer", "Zipcode": "integer"})
    out = mondrian(PATIENTS, schema, [KAnonymity(2)])
    assert out.data["Age"].tolist() == ["[25, 26]"] * 3 + ["[27, 28]"] * 3
    assert out.data["Zipcode"].tolist() == ["[53711, 53712]"] * 3 + ["[53710, 53712]"] * 3
    np.testing.assert_allclose(out.share["Age"], [1 / 3] * 6)
    np.testing.assert_allclose(out.share["Zipcode"], [0.5] * 3 + [1.0] * 3)
    assert out.details["partitions"] == 2
    assert out.transformation is None
    assert not out.suppressed.any()
    # root (1) + the accepted cut (2 parts) + 4 rejected cuts (2 parts each)
    assert out.nodes_checked == 1 + 2 + 8
    assert out.data["Disease"].tolist() == PATIENTS["Disease"].tolist()


def test_numeric_share_counts_hierarchy_leaves():
    """A numeric QI with a hierarchy: share = leaves inside the range / all leaves (5 here)."""
    age_h = Hierarchy([[str(a), "*"] for a in (25, 26, 27, 28, 29)], "Age")
    schema = _schema(
        ["Age", "Zipcode"], hier={"Age": age_h}, types={"Age": "integer", "Zipcode": "integer"}
    )
    out = mondrian(PATIENTS, schema, [KAnonymity(2)])
    assert out.data["Age"].tolist() == ["[25, 26]"] * 3 + ["[27, 28]"] * 3
    np.testing.assert_allclose(out.share["Age"], [2 / 5] * 6)


def test_categorical_split_along_hierarchy():
    """Sex (leaves 2/2 = width 1) ties with Age (width 1) and comes first: split into Male
    {25,26,27,28} and Female {25,27}. Male: Age cut at 26 -> {25,26} | {27,28}, both >= 2.
    Female {25,27}: cut leaves singletons -> final."""
    schema = _schema(["Sex", "Age"], hier={"Sex": SEX}, types={"Age": "integer"})
    out = mondrian(PATIENTS, schema, [KAnonymity(2)])
    assert out.data["Sex"].tolist() == ["Male", "Female", "Male", "Male", "Female", "Male"]
    assert out.data["Age"].tolist() == [
        "[25, 26]",
        "[25, 27]",
        "[25, 26]",
        "[27, 28]",
        "[25, 27]",
        "[27, 28]",
    ]
    np.testing.assert_allclose(out.share["Sex"], [0.5] * 6)
    np.testing.assert_allclose(out.share["Age"], [1 / 3, 2 / 3, 1 / 3, 1 / 3, 2 / 3, 1 / 3])


def test_progress_reports_all_records_done():
    calls = []
    schema = _schema(["Age", "Zipcode"], types={"Age": "integer", "Zipcode": "integer"})
    mondrian(PATIENTS, schema, [KAnonymity(2)], progress=lambda d, t: calls.append((d, t)))
    assert calls[0] == (0, 6) and calls[-1] == (6, 6)
    assert all(a[0] <= b[0] for a, b in zip(calls, calls[1:], strict=False))


def test_relaxed_cuts_through_equal_values():
    """Strict: lower median 1 < max 2 -> {1,1,1} | {2}: rejected for k=2, one partition.
    Relaxed: halves by rank {1,1} | {1,2}: allowed."""
    df = pd.DataFrame({"x": [1, 1, 1, 2], "s": ["a", "b", "c", "d"]})
    schema = Schema.from_roles(quasi_identifying=["x"], insensitive=["s"], types={"x": "integer"})
    strict = mondrian(df, schema, [KAnonymity(2)])
    assert strict.data["x"].tolist() == ["[1, 2]"] * 4
    relaxed = mondrian(df, schema, [KAnonymity(2)], relaxed=True)
    assert relaxed.data["x"].tolist() == ["1", "1", "[1, 2]", "[1, 2]"]
    np.testing.assert_allclose(relaxed.share["x"], [0, 0, 1, 1])


def test_l_diversity_blocks_a_homogeneous_half():
    """k=1 alone splits everything; distinct 2-diversity forbids the cut that would give
    {10, 11} (both 'flu') its own partition."""
    df = pd.DataFrame({"age": [10, 11, 20, 21], "d": ["flu", "flu", "flu", "cold"]})
    schema = Schema.from_roles(quasi_identifying=["age"], sensitive=["d"], types={"age": "integer"})
    out = mondrian(df, schema, [LDiversity("d", 2)])
    assert out.data["age"].tolist() == ["[10, 21]"] * 4
    out1 = mondrian(df, schema, [KAnonymity(1)])
    assert out1.data["age"].tolist() == ["10", "11", "20", "21"]


def test_whole_table_violating_is_no_solution_or_suppressed():
    df = pd.DataFrame({"age": [10, 11, 20], "d": ["flu", "flu", "flu"]})
    schema = Schema.from_roles(quasi_identifying=["age"], sensitive=["d"], types={"age": "integer"})
    with pytest.raises(NoSolutionError, match="only 1 distinct value.*lower l to at most 1"):
        mondrian(df, schema, [LDiversity("d", 2)])
    out = mondrian(df, schema, [LDiversity("d", 2)], suppression_limit=1.0)
    assert out.suppressed.all()
    assert out.data["age"].tolist() == ["*"] * 3


def test_bad_input():
    schema = _schema(["Age"], types={"Age": "integer"})
    with pytest.raises(ConfigError, match="cannot be checked partition by partition"):
        mondrian(PATIENTS, schema, [LKCPrivacy(2, 2, 0.5)])
    with pytest.raises(ConfigError, match="unknown option"):
        mondrian(PATIENTS, schema, [KAnonymity(2)], strict=True)
    with pytest.raises(ConfigError, match="relaxed"):
        mondrian(PATIENTS, schema, [KAnonymity(2)], relaxed="yes")
    with pytest.raises(ConfigError, match="suppression_limit"):
        mondrian(PATIENTS, schema, [KAnonymity(2)], suppression_limit=1.5)
    with pytest.raises(ConfigError, match="larger than the number of records"):
        mondrian(PATIENTS, schema, [KAnonymity(7)])


CITY = Hierarchy(
    [["a1", "A", "*"], ["a2", "A", "*"], ["b1", "B", "*"], ["b2", "B", "*"], ["c1", "C", "*"]],
    "city",
)


@st.composite
def _tables(draw):
    n = draw(st.integers(2, 40))
    age = draw(st.lists(st.integers(0, 9), min_size=n, max_size=n))
    city = draw(st.lists(st.sampled_from(["a1", "a2", "b1", "b2", "c1"]), min_size=n, max_size=n))
    col = draw(st.lists(st.sampled_from(["x", "y"]), min_size=n, max_size=n))
    s = draw(st.lists(st.sampled_from(["s1", "s2", "s3"]), min_size=n, max_size=n))
    df = pd.DataFrame({"age": age, "city": city, "colour": col, "s": s, "id": range(n)})
    k = draw(st.integers(1, min(4, n)))
    kind = draw(st.sampled_from(["k", "kl", "t"]))
    relaxed = draw(st.booleans())
    return df, k, kind, relaxed


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_tables())
def test_property_output_satisfies_models(case):
    df, k, kind, relaxed = case
    schema = Schema.from_roles(
        quasi_identifying=["age", "city", "colour"],
        sensitive=["s"],
        insensitive=["id"],
        hierarchies={"city": CITY},
        types={"age": "integer"},
    )
    models = {
        "k": [KAnonymity(k)],
        "kl": [KAnonymity(k), LDiversity("s", 2)],
        "t": [TCloseness("s", 0.3)],
    }[kind]
    try:
        out = mondrian(df, schema, models, relaxed=relaxed)
    except NoSolutionError:
        assert kind == "kl" and df["s"].nunique() < 2
        return
    assert_contract(out, df, schema, 0.0)
    assert_models_hold(out, df, schema, models)
    # truthful generalization: every released value covers the original
    for lab, v in zip(out.data["age"], df["age"], strict=True):
        lo, hi = parse_range(lab)
        assert lo <= v <= hi
    for lab, v in zip(out.data["city"], df["city"], strict=True):
        assert lab in (v, "*", v[0].upper())
    for lab, v in zip(out.data["colour"], df["colour"], strict=True):
        assert lab in (v, "*")


@pytest.mark.slow
def test_adult_k5_is_k_anonymous():
    from sdckit.datasets import load_adult

    df, hier = load_adult()
    qis = [c for c in df.columns if c != "occupation"]
    schema = Schema.from_roles(
        quasi_identifying=qis, sensitive=["occupation"], hierarchies=hier, types={"age": "integer"}
    )
    models = [KAnonymity(5), LDiversity("occupation", 2)]
    out = mondrian(df, schema, models)
    assert_contract(out, df, schema, 0.0)
    assert_models_hold(out, df, schema, models)
    assert out.details["partitions"] > 1000
