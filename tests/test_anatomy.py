"""Anatomy (Xiao & Tao 2006): hand-traced groupings, eligibility, join-back properties."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from heuristics_checks import assert_contract
from sdckit.algorithms._anatomy_kernel import anatomize_counts
from sdckit.algorithms.anatomy import anatomy, eligible_cap
from sdckit.core.schema import Schema
from sdckit.errors import ConfigError, NoSolutionError
from sdckit.models import KAnonymity, LDiversity


def _schema():
    return Schema.from_roles(
        quasi_identifying=["age", "zip"], sensitive=["s"], types={"age": "integer"}
    )


def test_kernel_hand_trace():
    """Sizes A3 B2 C2 D1, l=2: {A,B} (B beats C on the id tie) -> A2 B1 C2 D1; {A,C} ->
    all 1; {A,B} -> C1 D1; {C,D}."""
    groups, left = anatomize_counts(np.array([3, 2, 2, 1]), 2)
    assert groups.tolist() == [[0, 1], [0, 2], [0, 1], [2, 3]]
    assert left.tolist() == [0, 0, 0, 0]
    groups, left = anatomize_counts(np.array([1, 1, 1, 1]), 3)
    assert groups.tolist() == [[0, 1, 2]]
    assert left.tolist() == [0, 0, 0, 1]


def test_eligible_cap():
    assert eligible_cap(np.array([4, 1, 1]), 2) == 2  # 2*2 <= 2+1+1, 2*3 > 3+1+1
    assert eligible_cap(np.array([3, 2, 2, 1]), 2) == 3
    assert eligible_cap(np.array([5]), 2) == 0
    assert eligible_cap(np.array([2, 2, 2]), 3) == 2
    assert eligible_cap(np.array([10, 3, 3, 2]), 3) == 4  # 3*4 <= 4+3+3+2; 3*5 > 5+3+3+2


def test_hand_traced_tables():
    df = pd.DataFrame(
        {"age": [30, 31, 32, 33, 34, 35, 36, 37], "zip": list("pqrstuvw"), "s": list("ABCADBCA")}
    )
    out = anatomy(df, _schema(), [LDiversity("s", 2)])
    # A rows 0,3,7; B rows 1,5; C rows 2,6; D row 4 -> groups {A,B},{A,C},{A,B},{C,D}
    assert out.data["group_id"].tolist() == [1, 1, 2, 2, 4, 3, 4, 3]
    assert list(out.data.columns) == ["age", "zip", "group_id"]
    assert out.data["age"].tolist() == df["age"].tolist()
    st_ = out.extra_tables["sensitive_table"]
    assert st_.values.tolist() == [
        [1, "A", 1],
        [1, "B", 1],
        [2, "A", 1],
        [2, "C", 1],
        [3, "A", 1],
        [3, "B", 1],
        [4, "C", 1],
        [4, "D", 1],
    ]
    np.testing.assert_allclose(out.share["age"], 0.0)
    np.testing.assert_allclose(out.share["zip"], 0.0)  # no hierarchy: an unchanged value
    assert out.details["verification_key"] == ["group_id"]
    assert out.details["groups"] == 4 and out.transformation is None


def test_residual_goes_to_a_group_without_its_value():
    df = pd.DataFrame({"age": [1, 2, 3, 4], "zip": list("abcd"), "s": list("ABCD")})
    out = anatomy(df, _schema(), [], l=3)
    assert out.data["group_id"].tolist() == [1, 1, 1, 1]
    assert out.details["residual_records"] == 1


def test_eligibility_by_suppression():
    df = pd.DataFrame({"age": range(6), "zip": list("abcdef"), "s": list("AAABAC")})
    with pytest.raises(NoSolutionError, match="1/2"):
        anatomy(df, _schema(), [LDiversity("s", 2)])
    out = anatomy(df, _schema(), [LDiversity("s", 2)], suppression_limit=2 / 6)
    # A is in rows 0, 1, 2, 4; cap 2: its last two rows (2 and 4) go
    assert out.suppressed.tolist() == [False, False, True, False, True, False]
    assert out.data["age"].tolist() == [0, 1, "*", 3, "*", 5]
    assert out.data["group_id"].isna().tolist() == [False, False, True, False, True, False]


def test_bad_input():
    df = pd.DataFrame({"age": [1, 2], "zip": ["a", "b"], "s": ["A", "B"]})
    with pytest.raises(ConfigError, match="option l"):
        anatomy(df, _schema(), [KAnonymity(1)])
    with pytest.raises(ConfigError, match="'l'"):
        anatomy(df, _schema(), [], l=1)
    with pytest.raises(ConfigError, match="unknown option"):
        anatomy(df, _schema(), [], l=2, k=3)
    four = df.iloc[[0, 1, 0, 1]].reset_index(drop=True)  # two groups of 2 records
    with pytest.raises(NoSolutionError, match="Anatomy guarantees"):
        anatomy(four, _schema(), [LDiversity("s", 2), KAnonymity(3)])


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.integers(2, 60).flatmap(
        lambda n: st.tuples(
            st.lists(st.integers(0, 99), min_size=n, max_size=n),
            st.lists(st.sampled_from("abcdefgh"), min_size=n, max_size=n),
            st.integers(2, 4),
            st.sampled_from([0.0, 0.3, 1.0]),
            st.one_of(st.none(), st.integers(0, 5)),
            st.integers(1, 6),
        )
    )
)
def test_property_groups_l_diverse_and_join_back(case):
    s, _, l_val, limit, seed, n_values = case
    n = len(s)
    s = [chr(ord("A") + v % n_values) for v in s]
    df = pd.DataFrame({"age": np.arange(n), "zip": [f"z{i % 3}" for i in range(n)], "s": s})
    try:
        out = anatomy(df, _schema(), [LDiversity("s", l_val)], suppression_limit=limit, seed=seed)
    except NoSolutionError:
        counts = np.array(list(Counter(s).values()))
        needed = int(np.maximum(counts - eligible_cap(counts, l_val), 0).sum())
        assert needed > int(np.floor(limit * n + 1e-9)) or len(counts) < l_val
        return
    assert_contract(out, df, _schema(), limit, dropped=("s",))
    kept = ~out.suppressed
    gid = out.data["group_id"]
    assert gid[kept].notna().all() and gid[~kept].isna().all()
    sens = out.extra_tables["sensitive_table"]
    for g, members in df[kept].groupby(gid[kept].astype(int).to_numpy()):
        vals = Counter(members["s"])
        assert len(members) >= l_val
        assert max(vals.values()) == 1  # pairwise distinct: each value <= 1/l of the group
        table = sens[sens["group_id"] == g]
        assert dict(zip(table["s"], table["count"], strict=True)) == dict(vals)
    # the two tables join back to the original multiset of (QIs, sensitive) of kept rows
    joined = out.data[kept].merge(sens, on="group_id")
    assert len(joined) >= kept.sum()
    assert Counter(sens["s"].repeat(sens["count"])) == Counter(df["s"][kept])
    assert set(out.data.columns) == {"age", "zip", "group_id"}
    if seed is not None:
        again = anatomy(df, _schema(), [LDiversity("s", l_val)], suppression_limit=limit, seed=seed)
        pd.testing.assert_frame_equal(again.data, out.data)


@pytest.mark.slow
def test_adult_l5():
    from sdckit.datasets import load_adult

    df, hier = load_adult()
    qis = [c for c in df.columns if c != "occupation"]
    schema = Schema.from_roles(quasi_identifying=qis, sensitive=["occupation"], hierarchies=hier)
    out = anatomy(df, schema, [LDiversity("occupation", 5)], seed=0)
    sizes = out.data.groupby("group_id").size()
    assert sizes.min() >= 5 and out.details["groups"] == len(sizes)
    per_group = out.extra_tables["sensitive_table"].groupby("group_id")["count"].max()
    assert per_group.max() == 1


def test_class_metrics_count_the_groups():
    # the hand-traced table: 8 distinct QI rows in 4 groups of 2 -> aecs 8/4 = 2 and
    # discernibility 4 * 2^2 = 16 (on the QI labels every record would be alone: 1 and 8);
    # with the suppression example (rows 2 and 4 suppressed, 4 released in 2 groups of 2):
    # aecs 2, discernibility 2 * 2^2 + 2 suppressed * 6 records = 20
    import sdckit

    df = pd.DataFrame(
        {"age": [30, 31, 32, 33, 34, 35, 36, 37], "zip": list("pqrstuvw"), "s": list("ABCADBCA")}
    )
    res = sdckit.anonymize(df, _schema(), [LDiversity("s", 2)], algorithm="anatomy")
    assert res.metrics["aecs"] == 2.0
    assert res.metrics["discernibility"] == 16.0
    df = pd.DataFrame({"age": range(6), "zip": list("abcdef"), "s": list("AAABAC")})
    res = sdckit.anonymize(
        df, _schema(), [LDiversity("s", 2)], algorithm="anatomy", suppression_limit=2 / 6
    )
    assert res.suppressed_records == 2
    assert res.metrics["aecs"] == 2.0
    assert res.metrics["discernibility"] == 20.0


@pytest.mark.parametrize(
    "model",
    [
        {"k_map": {"k": 2}},
        {"delta_presence": {"delta_min": 0.0, "delta_max": 0.9}},
        {
            "confidence_bounding": {
                "attribute": "s",
                "templates": [{"quasi_identifiers": ["a"], "value": "p", "h": 0.9}],
            }
        },
    ],
)
def test_models_anatomy_cannot_give_are_refused_by_name_before_the_data(model):
    """Anatomy publishes the quasi-identifiers unchanged: a model that reads them against a
    population or a template is refused up front with the reason -- not with the internal
    error of the frequency set it never builds for them."""
    import sdckit
    from sdckit.models import MODELS

    ((name, params),) = model.items()
    data = pd.DataFrame({"a": list("xyxyxy"), "s": list("pqrpqr")})
    schema = Schema.from_roles(quasi_identifying=["a"], sensitive=["s"])
    population = pd.DataFrame({"a": list("xyxyxyxy")})
    if name in ("k_map", "delta_presence"):
        params = {**params, "population": population}
    m = MODELS.load(name).from_dict(params, f"models[0].{name}")
    with pytest.raises(ConfigError) as info:
        sdckit.anonymize(data, schema, [m], algorithm="anatomy", l=2)
    message = str(info.value)
    assert f"model {m.name} cannot be given by algorithm 'anatomy'" in message
    assert "publishes the quasi-identifiers unchanged" in message
    assert "prepare()" not in message and "__partition__" not in message
