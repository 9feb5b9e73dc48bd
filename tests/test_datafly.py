"""Datafly (Sweeney 2002): a hand-traced example and properties."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from heuristics_checks import assert_contract, assert_models_hold
from sdckit.algorithms.datafly import datafly
from sdckit.core.hierarchy import Hierarchy
from sdckit.core.schema import Schema
from sdckit.errors import ConfigError, NoSolutionError
from sdckit.models import KAnonymity, LDiversity

ZIPS = ["47677", "47602", "47678", "47905", "47909", "47906"]
AGES = ["29", "22", "27", "43", "52", "47"]
DF = pd.DataFrame({"zip": ZIPS, "age": AGES, "disease": ["a", "b", "c", "a", "b", "c"]})
ZIP_H = Hierarchy([[z, z[:4] + "*", z[:3] + "**", "*"] for z in ZIPS], "zip")
AGE_H = Hierarchy([[a, a[0] + "0-" + a[0] + "9", "*"] for a in AGES], "age")
SCHEMA = Schema.from_roles(
    quasi_identifying=["zip", "age"],
    sensitive=["disease"],
    hierarchies={"zip": ZIP_H, "age": AGE_H},
)


def test_hand_traced_k2_without_suppression():
    """Trace (k=2): (0,0) all unique; zip and age both 6 distinct -> zip (schema order).
    (1,0): zip 3 distinct, age 6 -> age. (1,1): classes (4767*,20s)=2, (4760*,20s)=1,
    (4790*,40s)=2, (4790*,50s)=1 -> 2 violating; zip 3 = age 3 -> zip. (2,1): (479**,50s)=1
    violates; age 3 > zip 2 -> age. (2,2): 476** x3, 479** x3: 2-anonymous."""
    out = datafly(DF, SCHEMA, [KAnonymity(2)])
    assert out.transformation == {"zip": 2, "age": 2}
    assert [s["attribute"] for s in out.details["steps"]] == ["zip", "age", "zip", "age"]
    assert [s["violating_records"] for s in out.details["steps"]] == [6, 6, 2, 1]
    assert out.nodes_checked == 5
    assert out.data["zip"].tolist() == ["476**"] * 3 + ["479**"] * 3
    assert out.data["age"].tolist() == ["*"] * 6
    np.testing.assert_allclose(out.share["zip"], [0.5] * 6)  # 3 of the 6 leaves
    np.testing.assert_allclose(out.share["age"], [1.0] * 6)
    assert not out.suppressed.any()


def test_progress():
    calls = []
    datafly(DF, SCHEMA, [KAnonymity(2)], progress=lambda d, t: calls.append((d, t)))
    assert calls == [(0, 5), (1, 5), (2, 5), (3, 5), (4, 5), (5, 5)]


def test_hand_traced_k2_with_suppression():
    """With 2 of 6 records suppressible the search stops at (1,1) and suppresses the two
    records in singleton classes (rows 1 and 4)."""
    out = datafly(DF, SCHEMA, [KAnonymity(2)], suppression_limit=2 / 6)
    assert out.transformation == {"zip": 1, "age": 1}
    assert out.suppressed.tolist() == [False, True, False, False, True, False]
    assert out.data["zip"].tolist() == ["4767*", "*", "4767*", "4790*", "*", "4790*"]
    assert out.data["age"].tolist() == ["20-29", "*", "20-29", "40-49", "*", "40-49"]
    np.testing.assert_allclose(out.share["zip"], [2 / 6, 1, 2 / 6, 3 / 6, 1, 3 / 6])
    assert out.suppressed_records == 2


def test_no_solution_and_bad_input():
    unbalanced = DF.assign(disease=["a"] * 5 + ["b"])  # entropy of 1.57 values at most
    with pytest.raises(NoSolutionError, match="top level"):
        datafly(unbalanced, SCHEMA, [LDiversity("disease", 2, "entropy")])
    with pytest.raises(NoSolutionError, match="lower l to at most 1"):
        datafly(DF.assign(disease="a"), SCHEMA, [LDiversity("disease", 2)])
    schema = Schema.from_roles(quasi_identifying=["zip", "age"], hierarchies={"zip": ZIP_H})
    with pytest.raises(ConfigError, match="'age'.*interval_hierarchy"):
        datafly(DF, schema, [KAnonymity(2)])
    with pytest.raises(ConfigError, match="unknown option"):
        datafly(DF, SCHEMA, [KAnonymity(2)], relaxed=True)
    with pytest.raises(ConfigError, match="suppression_limit"):
        datafly(DF, SCHEMA, [KAnonymity(2)], suppression_limit=-0.1)


LEAVES = [str(i) for i in range(8)]
H8 = Hierarchy([[v, str(int(v) // 2), str(int(v) // 4), "*"] for v in LEAVES], "h8")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(3, 40).flatmap(
        lambda n: st.tuples(
            st.lists(st.sampled_from(LEAVES), min_size=n, max_size=n),
            st.lists(st.sampled_from(LEAVES), min_size=n, max_size=n),
            st.lists(st.sampled_from("pqr"), min_size=n, max_size=n),
            st.integers(1, 3),
            st.sampled_from([0.0, 0.1, 0.3]),
            st.booleans(),
        )
    )
)
def test_property_output_satisfies_models(case):
    a, b, s, k, limit, with_l = case
    df = pd.DataFrame({"a": a, "b": b, "s": s})
    schema = Schema.from_roles(
        quasi_identifying=["a", "b"], sensitive=["s"], hierarchies={"a": H8, "b": H8}
    )
    models = [KAnonymity(k)] + ([LDiversity("s", 2)] if with_l else [])
    try:
        out = datafly(df, schema, models, suppression_limit=limit)
    except NoSolutionError:
        assert with_l and df["s"].nunique() < 2
        return
    assert_contract(out, df, schema, limit)
    assert_models_hold(out, df, schema, models)
    # full-domain: every kept released value is the hierarchy label at the chosen level
    for q in ("a", "b"):
        lv = out.transformation[q]
        kept = ~out.suppressed
        expected = H8.table[H8.leaf_index(df[q]), lv]
        assert (out.data[q].to_numpy(dtype=object)[kept] == expected[kept]).all()


@pytest.mark.slow
def test_adult_k5_five_percent():
    from sdckit.datasets import load_adult

    df, hier = load_adult()
    schema = Schema.from_roles(quasi_identifying=list(df.columns), hierarchies=hier)
    out = datafly(df, schema, [KAnonymity(5)], suppression_limit=0.05)
    assert_contract(out, df, schema, 0.05)
    assert_models_hold(out, df, schema, [KAnonymity(5)])
