"""Privacy models on hand-made and published examples (exact, hand-checked values)."""

from __future__ import annotations

import json
import math
import time

import numpy as np
import pandas as pd
import pytest

from sdckit.core.frequency import frequency_set
from sdckit.core.hierarchy import Hierarchy
from sdckit.core.schema import Schema
from sdckit.errors import ConfigError, DataError, HierarchyError
from sdckit.models import (
    AverageRiskThreshold,
    DeltaPresence,
    KAnonymity,
    KMap,
    LDiversity,
    LKCPrivacy,
    SampleUniquenessThreshold,
    TCloseness,
    check,
)
from sdckit.models.presence import derive_k

# ------------------------------------------------------------------ shared hierarchies


def zip_hierarchy(zips) -> Hierarchy:
    """ARX's masking hierarchy for 5-digit ZIP codes (data/test2_hierarchy_ZIPCode.csv)."""
    rows = [
        [z, z[:4] + "*", z[:3] + "**", z[:2] + "***", z[:1] + "****", "*****"]
        for z in sorted({str(z) for z in zips})
    ]
    return Hierarchy(rows, "ZIPCode")


# Li, Li & Venkatasubramanian (ICDE 2007), Table 1: the 9-record patient table.
LI_TABLE = pd.DataFrame(
    {
        "ZIPCode": [47677, 47602, 47678, 47905, 47909, 47906, 47605, 47673, 47607],
        "Age": [29, 22, 27, 43, 52, 47, 30, 36, 32],
        "Salary": [3, 4, 5, 6, 11, 8, 7, 9, 10],  # in K
        "Disease": [
            "gastric ulcer",
            "gastritis",
            "stomach cancer",
            "gastritis",
            "flu",
            "bronchitis",
            "bronchitis",
            "pneumonia",
            "stomach cancer",
        ],
    }
)

# Li et al.'s Disease hierarchy (leaves -> category -> system -> root, height H = 3), with the
# leaves the example does not use; the same tree as ARX's data/test2_hierarchy_Disease.csv.
DISEASE_TREE = Hierarchy(
    [
        ["gastric ulcer", "stomach diseases", "digestive system diseases", "*"],
        ["gastritis", "stomach diseases", "digestive system diseases", "*"],
        ["stomach cancer", "stomach diseases", "digestive system diseases", "*"],
        ["colitis", "colon diseases", "digestive system diseases", "*"],
        ["colon cancer", "colon diseases", "digestive system diseases", "*"],
        ["flu", "respiratory infection", "respiratory system diseases", "*"],
        ["pneumonia", "respiratory infection", "respiratory system diseases", "*"],
        ["bronchitis", "respiratory infection", "respiratory system diseases", "*"],
        ["pulmonary edema", "vascular lung diseases", "respiratory system diseases", "*"],
        ["pulmonary embolism", "vascular lung diseases", "respiratory system diseases", "*"],
    ],
    "Disease",
)


def age_hierarchy(ages, bands) -> Hierarchy:
    """Ages -> band label (``bands(age)``) -> ``*``."""
    return Hierarchy([[str(a), bands(a), "*"] for a in sorted(set(ages))], "Age")


# ------------------------------------------------------------------ k-anonymity


def test_k_anonymity_counts_and_details():
    df = pd.DataFrame({"a": list("xxxyyz"), "b": [1, 1, 1, 2, 2, 3]})
    fs = frequency_set(df, ["a", "b"])
    res = KAnonymity(2).evaluate(fs)
    # classes in key order: (x,1): 3, (y,2): 2, (z,3): 1
    assert fs.counts.tolist() == [3, 2, 1]
    assert res.violating.tolist() == [False, False, True]
    assert not res.satisfied and res.model == "2-anonymity"
    assert res.details == {
        "k": 2,
        "n_classes": 3,
        "min_class_size": 1,
        "violating_classes": 1,
        "violating_records": 1,
    }
    assert KAnonymity(1).evaluate(fs).satisfied
    assert KAnonymity(2).evaluate(fs.select(~res.violating)).satisfied
    assert KAnonymity(3).describe() == {"model": "k_anonymity", "k": 3}
    json.dumps(res.details)


@pytest.mark.parametrize("k", [0, -1, 1.5, True, "5", None])
def test_k_anonymity_rejects_bad_k(k):
    with pytest.raises(ConfigError, match="'k'"):
        KAnonymity(k)


# ------------------------------------------------------------------ homogeneity (l-diversity)

HOMOGENEITY = pd.DataFrame(
    {
        "zip": ["47677", "47602", "47678", "47905", "47909", "47906", "47605", "47673", "47607"],
        "age": [29, 22, 27, 43, 45, 47, 30, 36, 32],
        "disease": ["Heart Disease"] * 3
        + ["Flu", "Heart Disease", "Cancer", "Heart Disease", "Cancer", "Cancer"],
    }
)


def _homogeneity_schema() -> Schema:
    ages = age_hierarchy(HOMOGENEITY["age"], lambda a: f"{a // 10}*")
    return Schema.from_roles(
        quasi_identifying=["zip", "age"],
        sensitive=["disease"],
        hierarchies={"zip": zip_hierarchy(HOMOGENEITY["zip"]), "age": ages},
    )


def test_homogeneity_attack_three_anonymous_but_one_diverse():
    """3-anonymous, yet the class (476**, 2*) has only Heart Disease: distinct l = 1."""
    schema = _homogeneity_schema()
    models = [KAnonymity(3), LDiversity("disease", 2)]
    res = check(HOMOGENEITY, schema, models, levels={"zip": 2, "age": 1})
    k_res, l_res = res.results
    assert k_res.satisfied and k_res.details["min_class_size"] == 3
    assert not l_res.satisfied and not res.satisfied
    assert l_res.details["min_distinct_values"] == 1
    viol = res.violations()
    assert len(viol) == 1
    row = viol.iloc[0]
    assert (row["zip"], row["age"], row["count"]) == ("476**", "2*", 3)
    assert row["models"] == "distinct-2-diversity (disease)"
    # distinct values per class: (476**,2*) 1, (476**,3*) 2, (479**,4*) 3
    assert sorted(LDiversity("disease", 2).distinct_values(res.frequency_set)) == [1, 2, 3]
    summary = res.to_dict()
    json.dumps(summary)
    assert summary["satisfied"] is False and summary["levels"] == [2, 1]


def test_check_violations_join_several_models():
    schema = _homogeneity_schema()
    res = check(HOMOGENEITY, schema, [KAnonymity(4), LDiversity("disease", 2)], levels=[2, 1])
    viol = res.violations()
    assert len(viol) == 3  # every class has 3 < 4 records
    keys = zip(viol["zip"], viol["age"], strict=True)
    models = dict(zip(keys, viol["models"], strict=True))
    assert models[("476**", "2*")] == "4-anonymity; distinct-2-diversity (disease)"
    assert models[("479**", "4*")] == "4-anonymity"


def test_check_validates_models_and_levels():
    schema = _homogeneity_schema()
    with pytest.raises(ConfigError, match=r"distinct-2-diversity \(diagnosis\).*'diagnosis'"):
        check(HOMOGENEITY, schema, [LDiversity("diagnosis", 2)])
    with pytest.raises(ConfigError, match=r"'k' \(10\).*9"):
        check(HOMOGENEITY, schema, [KAnonymity(10)])
    with pytest.raises(ConfigError, match="quasi-identifier"):
        check(HOMOGENEITY, schema, [LDiversity("zip", 2)])
    with pytest.raises(ConfigError, match="one level per quasi-identifier"):
        check(HOMOGENEITY, schema, [KAnonymity(2)], levels=[1])
    with pytest.raises(ConfigError, match="non-empty list"):
        check(HOMOGENEITY, schema, [])
    with pytest.raises(DataError, match="level 7"):
        check(HOMOGENEITY, schema, [KAnonymity(2)], levels={"zip": 7})


# ------------------------------------------------------------------ l-diversity variants

# Four classes with sensitive counts (hand-made histograms):
#   a: x3 y1 z1 w1 (6 records)   b: x2 y2   c: x5   d: x1 y1 z1
LDIV = pd.DataFrame(
    {
        "g": list("aaaaaa") + list("bbbb") + list("ccccc") + list("ddd"),
        "s": list("xxxyzw") + list("xxyy") + list("xxxxx") + list("xyz"),
    }
)


@pytest.fixture(scope="module")
def ldiv_fs():
    return frequency_set(LDIV, ["g"], sensitive=["s"])


def test_distinct_l_diversity(ldiv_fs):
    m = LDiversity("s", 3)
    assert m.distinct_values(ldiv_fs).tolist() == [4, 2, 1, 3]
    res = m.evaluate(ldiv_fs)
    assert res.violating.tolist() == [False, True, True, False]
    assert res.details["violating_records"] == 9 and m.monotonic
    assert m.name == "distinct-3-diversity (s)" and m.minimal_class_size() == 3


def test_entropy_l_diversity(ldiv_fs):
    m = LDiversity("s", 3, variant="entropy")
    # a: H = -(1/2 ln 1/2 + 3 * 1/6 ln 1/6) = ln 6 - (3 ln 3)/6 = 1.791759 - 0.549306
    #      = 1.242453 (>= ln 3 = 1.098612: entropy-3-diverse; exp(H) = 3.4641)
    # b: ln 2 = 0.693147; c: 0; d: three equal values, H = ln 3 exactly (boundary: passes)
    expected = [math.log(6) - 3 * math.log(3) / 6, math.log(2), 0.0, math.log(3)]
    np.testing.assert_allclose(m.entropies(ldiv_fs), expected, rtol=0, atol=1e-12)
    assert expected[0] == pytest.approx(1.242453, abs=1e-6)
    res = m.evaluate(ldiv_fs)
    assert res.violating.tolist() == [False, True, True, False]
    assert res.details["min_entropy"] == 0.0
    # l = 3.5: ln 3.5 = 1.252763 > H(a) = 1.242453, so a fails too (ceil(3.5) = 4 distinct ok)
    assert LDiversity("s", 3.5, "entropy").evaluate(ldiv_fs).violating.tolist() == [
        True,
        True,
        True,
        True,
    ]
    # l = 3.4: ln 3.4 = 1.223775 <= 1.242453
    assert LDiversity("s", 3.4, "entropy").evaluate(ldiv_fs).violating.tolist() == [
        False,
        True,
        True,
        True,
    ]
    assert not m.monotonic and m.monotonic_with_generalization


@pytest.mark.parametrize(
    ("c", "l", "expected"),
    [
        # a sorted (3,1,1,1); b (2,2); c (5); d (1,1,1). Condition r1 < c (r_l + ... + r_m).
        # l=2: a 3 < 1.5*3 = 4.5 ok; b 2 < 1.5*2 = 3 ok; c has 1 < 2 values; d 1 < 1.5*2 ok
        (1.5, 2, [False, False, True, False]),
        # c=1, l=2: a 3 < 3 no; b 2 < 2 no; d 1 < 2 ok
        (1.0, 2, [True, True, True, False]),
        # l=3: a 3 < 1.5*(1+1) = 3 no; b has 2 < 3 values; d 1 < 1.5*1 ok
        (1.5, 3, [True, True, True, False]),
        # c=2, l=3: a 3 < 2*2 = 4 ok; d 1 < 2 ok
        (2.0, 3, [False, True, True, False]),
        # c=1, l=3: a 3 < 2 no; d 1 < 1*1 no
        (1.0, 3, [True, True, True, True]),
    ],
)
def test_recursive_cl_diversity(ldiv_fs, c, l, expected):
    m = LDiversity("s", l, variant="recursive", c=c)
    assert m.evaluate(ldiv_fs).violating.tolist() == expected


def test_recursive_terms_by_hand(ldiv_fs):
    r1, tail = LDiversity("s", 2, "recursive", c=3).recursive_terms(ldiv_fs)
    assert r1.tolist() == [3, 2, 5, 1]
    assert tail.tolist() == [3, 2, 0, 2]  # r_2 + ... + r_m


def test_l_diversity_parameter_errors():
    with pytest.raises(ConfigError, match="'c'"):
        LDiversity("s", 2, "recursive")
    with pytest.raises(ConfigError, match="'c'"):
        LDiversity("s", 2, "distinct", c=2)
    with pytest.raises(ConfigError, match="'variant'"):
        LDiversity("s", 2, "probabilistic")
    with pytest.raises(ConfigError, match="'l'"):
        LDiversity("s", 0)
    with pytest.raises(ConfigError, match="'l'"):
        LDiversity("s", 2.5)  # distinct l must be an integer
    with pytest.raises(ConfigError, match="not a sensitive attribute"):
        LDiversity("t", 2).evaluate(frequency_set(LDIV, ["g"], sensitive=["s"]))


# ------------------------------------------------------------------ t-closeness (Li et al.)


def _li_groups(table: str) -> pd.DataFrame:
    """Li et al.'s Table 3 (3-diverse) or Table 4 (0.167-close) classes as a column ``g``."""
    if table == "3":  # (476**, 2*), (4790*, >=40), (476**, 3*)
        g = {
            47677: 1,
            47602: 1,
            47678: 1,
            47905: 2,
            47909: 2,
            47906: 2,
            47605: 3,
            47673: 3,
            47607: 3,
        }
    else:  # (4767*, <=40), (4790*, >=40), (4760*, <=40)
        g = {
            47677: 1,
            47678: 1,
            47673: 1,
            47905: 2,
            47909: 2,
            47906: 2,
            47602: 3,
            47605: 3,
            47607: 3,
        }
    return LI_TABLE.assign(g=LI_TABLE["ZIPCode"].map(g))


def _distances(table: str, model: TCloseness) -> np.ndarray:
    fs = frequency_set(_li_groups(table), ["g"], sensitive=[model.attribute])
    model.prepare(fs)
    return model.distances(fs)


def test_li_ordered_emd_table3_first_class_is_0_375():
    # Li et al. Sec. 4.2: class {3K,4K,5K} vs the 9 salaries 3K..11K: r = (2,2,2,-1,...,-1)/9,
    # cumulative (2,4,6,5,4,3,2,1,0)/9, sum 27/9 = 3, / (m-1 = 8) = 0.375.
    # Class 2 {6K,8K,11K}: |cum| = (1,2,3,1,2,0,1,2,0)/9 -> 12/72; class 3 {7K,9K,10K}:
    # (1,2,3,4,2,3,1,1,0)/9 -> 17/72.
    d = _distances("3", TCloseness("Salary", 0.5, "ordered"))
    np.testing.assert_allclose(d, [0.375, 12 / 72, 17 / 72], atol=1e-12)


def test_li_table4_is_0_167_close_wrt_salary():
    # Table 4 classes {3K,5K,9K}, {6K,8K,11K}, {4K,7K,10K}: 12/72, 12/72, 6/72
    model = TCloseness("Salary", 1 / 6, "ordered")
    d = _distances("4", model)
    np.testing.assert_allclose(d, [1 / 6, 1 / 6, 1 / 12], atol=1e-12)
    fs = frequency_set(_li_groups("4"), ["g"], sensitive=["Salary"])
    model.prepare(fs)
    assert model.evaluate(fs).satisfied  # exactly 1/6 <= t = 1/6
    strict = TCloseness("Salary", 0.16, "ordered")
    strict.prepare(fs)
    assert strict.evaluate(fs).violating.tolist() == [True, True, False]


def test_li_equal_distance():
    # every class has 3 distinct values (1/3 each) vs 9 values (1/9 each):
    # 1/2 (3 * 2/9 + 6 * 1/9) = 2/3
    for table in ("3", "4"):
        np.testing.assert_allclose(
            _distances(table, TCloseness("Salary", 0.5, "equal")), [2 / 3] * 3, atol=1e-12
        )
    # Disease, Table 3 class 1 {gastric ulcer, gastritis, stomach cancer}: overall
    # (gu 1, gastritis 2, sc 2, flu 1, bronchitis 2, pneumonia 1)/9;
    # 1/2 (2/9 + 1/9 + 1/9 + 1/9 + 2/9 + 1/9) = 4/9
    d = _distances("3", TCloseness("Disease", 0.5, "equal"))
    assert d[0] == pytest.approx(4 / 9, abs=1e-12)


def test_li_hierarchical_emd_with_arx_formula():
    # Tree formula, H = 3 (Li et al. Sec. 4.3, ARX HierarchicalDistanceTCloseness).
    # Table 3 class 1: extras (class - overall) gu +2, gastritis +1, sc +1, flu -1,
    # bronchitis -2, pneumonia -1 (ninths); stomach and respiratory nodes are one-signed
    # (cost 0); the root moves 4/9 at height 3/3: D = 4/9.
    d3 = _distances("3", TCloseness("Disease", 0.5, "hierarchical", DISEASE_TREE))
    assert d3[0] == pytest.approx(4 / 9, abs=1e-12)
    # Table 4: class 1 {gu, sc, pneumonia}: extras gu +2, gastritis -2, sc +1 | flu -1,
    #   bronchitis -2, pneumonia +2: stomach min(3,2)=2, respiratory min(2,3)=2 at 1/3;
    #   root min(1,1)=1 at 1: (2/3 + 2/3 + 1)/9 = 7/27
    # class 2 {gastritis, flu, bronchitis}: stomach min(1,3), respiratory min(3,1) at 1/3;
    #   root min(2,2): (1/3 + 1/3 + 2)/9 = 8/27
    # class 3 {gastritis, bronchitis, sc}: (1/3 + 1/3 + 1)/9 = 5/27
    d4 = _distances("4", TCloseness("Disease", 0.5, "hierarchical", DISEASE_TREE))
    np.testing.assert_allclose(d4, [7 / 27, 8 / 27, 5 / 27], atol=1e-12)


def test_li_table4_published_0_278_needs_four_levels_above_the_leaves():
    """Li et al. report Table 4 as 0.278-closeness w.r.t. Disease. With their formula that
    value (5/18) results when the leaf categories weigh 1/4 and the root 4/4, i.e. the tree
    has four levels above the leaves; with the three-level tree (ARX's test2 hierarchy) the
    formula gives 8/27 = 0.296 (test above). Here the three-level tree with its top
    category level repeated (height 4, single-child nodes cost nothing):
    class 2: (1/4 + 1/4 + 2)/9 = 5/18; class 1: (2/4 + 2/4 + 1)/9 = 2/9; class 3: 1/6."""
    table = DISEASE_TREE.table
    four = Hierarchy(np.column_stack([table[:, :3], table[:, 2:]]), "Disease4")
    assert four.height == 5
    d = _distances("4", TCloseness("Disease", 0.5, "hierarchical", four))
    np.testing.assert_allclose(d, [2 / 9, 5 / 18, 1 / 6], atol=1e-12)
    assert round(float(d.max()), 3) == 0.278


def test_li_tables_through_check_with_zip_and_age_hierarchies():
    ages = age_hierarchy(
        LI_TABLE["Age"], lambda a: "<30" if a < 30 else ("3*" if a < 40 else ">=40")
    )
    schema = Schema.from_roles(
        quasi_identifying=["ZIPCode", "Age"],
        sensitive=["Salary", "Disease"],
        hierarchies={"ZIPCode": zip_hierarchy(LI_TABLE["ZIPCode"]), "Age": ages},
    )
    # Table 3 = (ZIP level 2, age band): 3-diverse, yet class (476**, <30) is 0.375 from the
    # overall salary distribution
    res = check(
        LI_TABLE,
        schema,
        [LDiversity("Disease", 3), TCloseness("Salary", 0.3, "ordered")],
        levels=[2, 1],
    )
    assert res.results[0].satisfied
    assert res.results[1].details["max_distance"] == pytest.approx(0.375, abs=1e-12)
    viol = res.violations()
    assert viol[["ZIPCode", "Age"]].values.tolist() == [["476**", "<30"]]
    # Table 4 = ZIP level 1 (4767*, 4760*, 4790*), age suppressed: 0.167-close on salary
    res4 = check(
        LI_TABLE,
        schema,
        [
            TCloseness("Salary", 1 / 6, "ordered"),
            TCloseness("Disease", 8 / 27, "hierarchical", DISEASE_TREE),
        ],
        levels=[1, 2],
    )
    assert res4.satisfied
    assert res4.results[0].details["max_distance"] == pytest.approx(1 / 6, abs=1e-12)


def test_t_closeness_errors():
    with pytest.raises(ConfigError, match="'hierarchy'"):
        TCloseness("Disease", 0.2, "hierarchical")
    with pytest.raises(ConfigError, match="'t'"):
        TCloseness("Disease", 1.5)
    with pytest.raises(ConfigError, match="prepare"):
        TCloseness("Salary", 0.2).evaluate(
            frequency_set(LI_TABLE, ["ZIPCode"], sensitive=["Salary"])
        )
    small = Hierarchy([["flu", "*"], ["gastritis", "*"]], "d")
    model = TCloseness("Disease", 0.2, "hierarchical", small)
    with pytest.raises(HierarchyError, match="Disease"):
        model.prepare(frequency_set(LI_TABLE, ["ZIPCode"], sensitive=["Disease"]))


# ------------------------------------------------------------------ delta-presence and k-map

POPULATION = pd.DataFrame(
    {
        "age": [25, 27, 23, 35, 38, 31, 33, 45, 47, 52],
        "sex": ["M", "M", "M", "F", "F", "F", "F", "M", "M", "F"],
    }
)
SAMPLE = POPULATION.iloc[[0, 3, 4, 7]].reset_index(drop=True)  # (25,M) (35,F) (38,F) (45,M)
DECADES = age_hierarchy(POPULATION["age"], lambda a: f"{a // 10}*")


def _presence_fs(levels=(1, 0)):
    base = frequency_set(SAMPLE, ["age", "sex"], hierarchies={"age": DECADES})
    return base, base.rollup(levels)


def test_delta_presence_by_hand():
    # decades: population (2*,M) 3, (3*,F) 4, (4*,M) 2, (5*,F) 1 -- sample 1, 2, 1, 0
    # delta: 1/3, 1/2, 1/2; (5*,F) has no released record (not checked, as in ARX)
    base, fs = _presence_fs()
    labels = fs.labels()
    assert list(zip(labels["age"], labels["sex"], strict=True)) == [
        ("2*", "M"),
        ("3*", "F"),
        ("4*", "M"),
    ]
    m = DeltaPresence(0.3, 0.5, POPULATION)
    m.prepare(base)
    np.testing.assert_allclose(m.deltas(fs), [1 / 3, 1 / 2, 1 / 2])
    res = m.evaluate(fs)
    assert res.satisfied and res.details["empty_population_classes"] == 1
    m2 = DeltaPresence(0.4, 0.5, POPULATION)
    m2.prepare(base)
    assert m2.evaluate(fs).violating.tolist() == [True, False, False]
    m3 = DeltaPresence(0.0, 0.4, POPULATION)
    m3.prepare(base)
    assert m3.evaluate(fs).violating.tolist() == [False, True, True]
    # ungeneralized every released record is unique in the population: delta = 1
    assert m.evaluate(base).violating.all()
    assert m.name == "(0.3,0.5)-presence" and not m.monotonic


def test_delta_presence_population_errors():
    base, _ = _presence_fs()
    bad = POPULATION.assign(age=[25, 27, 23, 35, 38, 31, 33, 45, 47, 99])
    with pytest.raises(HierarchyError, match="population.*'99'"):
        DeltaPresence(0.1, 0.5, bad).prepare(base)
    not_superset = POPULATION.iloc[1:]  # lacks (25, M)
    with pytest.raises(DataError, match="population table must contain"):
        DeltaPresence(0.1, 0.5, not_superset).prepare(base)
    with pytest.raises(DataError, match="'sex'"):
        DeltaPresence(0.1, 0.5, POPULATION[["age"]]).prepare(base)
    with pytest.raises(ConfigError, match="delta_min"):
        DeltaPresence(0.6, 0.5, POPULATION)


def test_population_values_unknown_to_the_sample_form_own_classes():
    # sex has no hierarchy: the population value "X" is absent from the sample and only
    # adds population records to a class of its own
    base = frequency_set(SAMPLE, ["age", "sex"], hierarchies={"age": DECADES})
    pop = pd.concat([POPULATION, pd.DataFrame({"age": [25], "sex": ["X"]})])
    m = DeltaPresence(0.0, 1.0, pop)
    m.prepare(base)
    res = m.evaluate(base.rollup((1, 0)))
    assert res.satisfied and res.details["empty_population_classes"] == 2


def test_k_map_with_population():
    base, fs = _presence_fs()
    m2 = KMap(2, population=POPULATION)
    m2.prepare(base)
    assert m2.evaluate(fs).satisfied  # population sizes 3, 4, 2
    m3 = KMap(3, population=POPULATION)
    m3.prepare(base)
    res = m3.evaluate(fs)
    assert res.violating.tolist() == [False, False, True]
    assert res.details["min_population_class_size"] == 2
    assert m3.monotonic


def test_k_map_estimators_derived_k_by_hand():
    # k = 5, f = 0.1: lambda = 0.5. Poisson cdf: 0.60653, 0.90980, 0.98561 -> first x with
    # cdf >= 0.95 is 2, ARX returns x + 2 = 4 (type-I error 1 - 0.98561 = 0.01439).
    k, err = derive_k(5, 0.1, "poisson", 0.05)
    assert k == 4 and err == pytest.approx(0.014388, abs=1e-6)
    # zero-truncated: P(X=j)/(1 - e^-0.5) = (0.5^j e^-0.5 / j!) / 0.393469: j=1 0.770747,
    # j=2 0.192687 -> 0.963434 >= 0.95 at x = 2, ARX returns x + 1 = 3 (error 0.036566)
    k, err = derive_k(5, 0.1, "zero_truncated_poisson", 0.05)
    assert k == 3 and err == pytest.approx(0.036566, abs=1e-6)
    m = KMap(5, estimator="poisson", sampling_fraction=0.1)
    assert m.derived_k == 4 and m.minimal_class_size() == 4
    fs = frequency_set(pd.DataFrame({"a": list("xxxxyyy")}), ["a"])
    m.prepare(fs)
    assert m.evaluate(fs).violating.tolist() == [False, True]
    # the derived k is capped by k and by the number of records (ARX KMap.initialize)
    big = KMap(10, estimator="poisson", sampling_fraction=1.0)
    assert big.estimated_k == 17  # Poisson(10): cdf(14) = 0.9165, cdf(15) = 0.9513
    big.prepare(fs)
    assert big.derived_k == 7


def test_k_map_parameter_errors():
    with pytest.raises(ConfigError, match="'estimator'"):
        KMap(5)
    with pytest.raises(ConfigError, match="not both"):
        KMap(5, population=POPULATION, estimator="poisson", sampling_fraction=0.1)
    with pytest.raises(ConfigError, match="'sampling_fraction'"):
        KMap(5, estimator="poisson", sampling_fraction=0)
    with pytest.raises(ConfigError, match="'estimator'"):
        KMap(5, estimator="binomial", sampling_fraction=0.1)


# ------------------------------------------------------------------ LKC-privacy

# Modelled on Mohammed, Fung, Hung & Lee (KDD 2009), Table 1 (raw patient data) and its
# anonymization for L = 2, K = 2, C = 50%: Job -> Blue-collar / Professional -> ANY,
# Age -> [1-30) / [30-60) / [60-99) -> *.
LKC_TABLE = pd.DataFrame(
    {
        "Job": [
            "Janitor",
            "Doctor",
            "Mover",
            "Lawyer",
            "Mover",
            "Janitor",
            "Doctor",
            "Lawyer",
            "Doctor",
            "Carpenter",
            "Technician",
        ],
        "Sex": ["M", "M", "M", "M", "M", "M", "M", "F", "F", "F", "F"],
        "Age": [34, 58, 34, 24, 58, 44, 24, 58, 44, 63, 63],
        "Surgery": [
            "Transgender",
            "Plastic",
            "Transgender",
            "Vascular",
            "Urology",
            "Plastic",
            "Urology",
            "Plastic",
            "Vascular",
            "Vascular",
            "Plastic",
        ],
    }
)


def _lkc_schema() -> Schema:
    jobs = Hierarchy(
        [
            [j, "Professional" if j in ("Doctor", "Lawyer") else "Blue-collar", "ANY"]
            for j in sorted(set(LKC_TABLE["Job"]))
        ],
        "Job",
    )
    sexes = Hierarchy([["M", "*"], ["F", "*"]], "Sex")
    ages = age_hierarchy(
        LKC_TABLE["Age"], lambda a: "[1-30)" if a < 30 else ("[30-60)" if a < 60 else "[60-99)")
    )
    return Schema.from_roles(
        quasi_identifying=["Job", "Sex", "Age"],
        sensitive=["Surgery"],
        hierarchies={"Job": jobs, "Sex": sexes, "Age": ages},
    )


def test_check_refuses_an_lkc_K_or_a_k_map_k_that_no_class_can_reach():
    # LKC-privacy's K above the records, k-map's k above the population: parameter errors
    # (the check finds these classes although sdckit.models loads neither module up front)
    sens = {"Surgery": ["Transgender", "Urology"]}
    n = len(LKC_TABLE)
    with pytest.raises(ConfigError, match=rf"'K' \({n + 1}\).*records \({n}\)"):
        check(LKC_TABLE, _lkc_schema(), [LKCPrivacy(2, n + 1, 0.5, sens)])
    schema = Schema.from_roles(quasi_identifying=["age", "sex"], hierarchies={"age": DECADES})
    with pytest.raises(ConfigError, match=r"'k' \(11\).*population \(10 records\)"):
        check(SAMPLE, schema, [KMap(11, population=POPULATION)])
    assert check(SAMPLE, schema, [KMap(2, population=POPULATION)], levels=[1, 0]).satisfied


def test_lkc_privacy_holds_but_not_two_anonymity():
    # Generalized: every pair of QI values is shared by >= 2 records, e.g.
    # (Blue-collar, M) 4, (Professional, M) 3, (Professional, F) 2, (Blue-collar, F) 2;
    # confidences of Transgender/Urology <= 2/4. But <Professional, M, [30-60)> is record 2
    # alone: not 2-anonymous.
    sens = {"Surgery": ["Transgender", "Urology"]}
    res = check(
        LKC_TABLE, _lkc_schema(), [LKCPrivacy(2, 2, 0.5, sens), KAnonymity(2)], levels=[1, 0, 1]
    )
    lkc, k2 = res.results
    assert lkc.satisfied and lkc.details["max_confidence"] == 0.5
    assert not k2.satisfied
    viol = res.violations()
    assert viol[["Job", "Sex", "Age", "count"]].values.tolist() == [
        ["Professional", "M", "[30-60)", 1]
    ]
    assert viol["models"].tolist() == ["2-anonymity"]
    # L = 3 includes the full combination, which then violates K = 2
    res3 = check(LKC_TABLE, _lkc_schema(), [LKCPrivacy(3, 2, 0.5, sens)], levels=[1, 0, 1])
    assert res3.violations()[["Job", "Sex", "Age"]].values.tolist() == [
        ["Professional", "M", "[30-60)"]
    ]
    # C = 0.4: (Blue-collar, M) and (Blue-collar, [30-60)) have 2/4 Transgender, and
    # [1-30), (Professional, [1-30)), (M, [1-30)) have 1/2 Urology (records 4, 7); (M, [30-60))
    # has 2/5 = 0.4 and Blue-collar 2/6, which pass. Violating classes:
    # <Blue-collar, M, [30-60)> (records 1, 3, 5, 6) and <Professional, M, [1-30)> (4, 7).
    res4 = check(LKC_TABLE, _lkc_schema(), [LKCPrivacy(2, 2, 0.4, sens)], levels=[1, 0, 1])
    viol4 = res4.violations()
    assert viol4[["Job", "Sex", "Age", "count"]].values.tolist() == [
        ["Blue-collar", "M", "[30-60)", 4],
        ["Professional", "M", "[1-30)", 2],
    ]
    assert set(res4.results[0].details["violating_qi_subsets"]) == {
        "Age",
        "Job+Sex",
        "Job+Age",
        "Sex+Age",
    }


def test_lkc_errors():
    with pytest.raises(ConfigError, match="do not occur"):
        check(LKC_TABLE, _lkc_schema(), [LKCPrivacy(2, 2, 0.5, {"Surgery": ["Cardio"]})])
    with pytest.raises(ConfigError, match="'C'"):
        LKCPrivacy(2, 2, 1.5, {"Surgery": ["Urology"]})
    with pytest.raises(ConfigError, match="non-empty list"):
        LKCPrivacy(2, 2, 0.5, {"Surgery": "Urology"})


# ------------------------------------------------------------------ global risk thresholds


def test_average_risk_and_sample_uniqueness():
    # class sizes 1, 1, 2, 3, 3: 5 classes / 10 records = 0.5; uniques 2/10
    df = pd.DataFrame({"a": list("abccdddeee")})
    fs = frequency_set(df, ["a"])
    assert AverageRiskThreshold.average_risk(fs) == 0.5
    assert SampleUniquenessThreshold.sample_uniqueness(fs) == 0.2
    assert AverageRiskThreshold(0.5).evaluate(fs).satisfied
    res = AverageRiskThreshold(0.49).evaluate(fs)
    assert not res.satisfied and not res.violating.any() and len(res.violating) == 5
    assert SampleUniquenessThreshold(0.2).evaluate(fs).satisfied
    assert not SampleUniquenessThreshold(0.19).evaluate(fs).satisfied
    # after suppressing the two unique classes: 3 classes / 8 records
    kept = fs.select(fs.counts > 1)
    assert AverageRiskThreshold.average_risk(kept) == 3 / 8
    assert SampleUniquenessThreshold(0.0).evaluate(kept).satisfied
    with pytest.raises(ConfigError, match="'threshold'"):
        AverageRiskThreshold(1.0)


# ------------------------------------------------------------------ speed on Adult


def test_speed_adult_k_anonymity_and_t_closeness(shared_data, capsys):
    df = pd.read_csv(shared_data / "arx" / "adult.csv", sep=";")
    qis = [c for c in df.columns if c != "occupation"]
    t_k, t_t = [], []
    for _ in range(5):
        t0 = time.perf_counter()
        res_k = KAnonymity(5).evaluate(frequency_set(df, qis))
        t1 = time.perf_counter()
        fs = frequency_set(df, qis, sensitive=["occupation"])
        model = TCloseness("occupation", 0.2, "equal")
        model.prepare(fs)
        res_t = model.evaluate(fs)
        t2 = time.perf_counter()
        t_k.append(t1 - t0)
        t_t.append(t2 - t1)
    sizes = df.groupby(qis).size()  # independent check of the classes
    assert res_k.details["n_classes"] == len(sizes)
    assert res_k.details["violating_records"] == int(sizes[sizes < 5].sum())
    assert res_t.details["violating_classes"] == len(sizes)  # no class is 0.2-close
    with capsys.disabled():
        print(
            f"\n[adult n={len(df)}] k-anonymity {1000 * min(t_k):.1f} ms, "
            f"t-closeness (equal) {1000 * min(t_t):.1f} ms (build included, best of 5)"
        )
    assert min(t_t) < 1.8  # pycanon: 36 s
    assert min(t_k) < 0.29  # pycanon: 0.29 s
