"""(k,e)-anonymity, (epsilon,m)-anonymity, personalized privacy, MultiR k-anonymity and
(X,Y)-privacy: hand-computed tables, boundaries, bad parameters, job files end to end, an
independent pandas check of optimal releases, and optimal == exhaustive search."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from sdckit.algorithms.optimal import optimal, suppression_budget
from sdckit.cli import app
from sdckit.core.frequency import frequency_set
from sdckit.core.hierarchy import Hierarchy
from sdckit.core.schema import Schema
from sdckit.errors import DataError, HierarchyError, NoSolutionError, ParameterError
from sdckit.jobs.spec import MODEL_NAMES
from sdckit.models import (
    EpsilonMAnonymity,
    KEAnonymity,
    MultiRKAnonymity,
    PersonalizedPrivacy,
    XYPrivacy,
    check,
)
from sdckit.utility.generalization import METRICS, MetricSpec
from test_optimal import _check_against_exhaustive, _random_qi_table

runner = CliRunner()

DISEASES = Hierarchy(
    [
        ["flu", "respiratory", "*"],
        ["cold", "respiratory", "*"],
        ["gastritis", "digestive", "*"],
        ["ulcer", "digestive", "*"],
    ],
    "disease",
)


def _evaluate(model, df: pd.DataFrame, sensitive: list[str], qis=("z",)):
    fs = frequency_set(df, list(qis), sensitive=sensitive)
    model.prepare(fs)
    return model.evaluate(fs)


# -- (k,e)-anonymity -------------------------------------------------------------------------
KE_TABLE = pd.DataFrame(
    {
        "z": ["a", "a", "a", "b", "b", "c", "c", "c"],
        "salary": ["30000", "40000", "30000.0", "10000", "25000", "5", "5", "5"],
    }
)


def test_ke_anonymity_hand_computed():
    # class a: values {30000, 40000} ("30000.0" is 30000): 2 distinct, range 10000
    # class b: {10000, 25000}: 2 distinct, range 15000
    # class c: {5}: 1 distinct, range 0
    r = _evaluate(KEAnonymity("salary", 2, 10000), KE_TABLE, ["salary"])
    assert r.violating.tolist() == [False, False, True]
    assert r.details["min_distinct_values"] == 1 and r.details["min_range"] == 0.0
    assert r.details["violating_records"] == 3
    # e = 10001 > range of a (10000): a fails too; range exactly e passes (boundary)
    r = _evaluate(KEAnonymity("salary", 2, 10001), KE_TABLE, ["salary"])
    assert r.violating.tolist() == [True, False, True]
    # k = 3: no class holds 3 distinct values
    assert _evaluate(KEAnonymity("salary", 3, 0), KE_TABLE, ["salary"]).violating.all()


def test_ke_anonymity_unreachable_and_flags():
    fs = frequency_set(KE_TABLE, ["z"], sensitive=["salary"])
    # the whole data: {5, 10000, 25000, 30000, 40000}: 5 distinct, range 39995
    assert KEAnonymity("salary", 5, 39995).unreachable(fs) is None
    assert "5 distinct value(s)" in KEAnonymity("salary", 6, 1).unreachable(fs)
    assert "39995" in KEAnonymity("salary", 2, 40000).unreachable(fs)
    m = KEAnonymity("salary", 4, 1)
    assert m.monotonic and m.monotonic_with_generalization and m.minimal_class_size() == 4


def test_numeric_models_read_numbers_whatever_the_code_order():
    """A declared order (codes not in numeric order) gives the same verdicts: the histogram's
    columns are permuted into numeric order first."""
    df = pd.DataFrame({"z": ["a"] * 4 + ["b"] * 3, "s": [5, 1, 30, 12, 7, 7, 9]})
    order = ["30", "12", "9", "7", "5", "1"]  # descending: the reverse of numeric order
    for model in (KEAnonymity("s", 3, 11), EpsilonMAnonymity("s", 4, 2)):
        plain = frequency_set(df, ["z"], sensitive=["s"])
        shuffled = frequency_set(df, ["z"], sensitive=["s"], orders={"s": order})
        assert list(shuffled.sensitive_values["s"]) == order
        a, b = model.evaluate(plain), model.evaluate(shuffled)
        assert a.violating.tolist() == b.violating.tolist()
        assert a.class_values.tolist() == b.class_values.tolist()
    # (3,11): a {1, 5, 12, 30}: 4 values, range 29; b {7, 9}: 2 values -> violates
    assert KEAnonymity("s", 3, 11).evaluate(shuffled).violating.tolist() == [False, True]
    # (4,2): a: [1,5] around 1 and 5 holds {1, 5}: 2 of 4 -> ok; b: [3,11] around 7 holds all 3
    assert EpsilonMAnonymity("s", 4, 2).evaluate(shuffled).violating.tolist() == [False, True]


def test_numeric_models_name_a_non_numeric_value():
    df = pd.DataFrame({"z": ["a", "a"], "salary": ["100", "n/a"]})
    for model in (KEAnonymity("salary", 2, 1), EpsilonMAnonymity("salary", 1, 2)):
        with pytest.raises(DataError, match=r"'salary'.*'n/a'"):
            _evaluate(model, df, ["salary"])


# -- (epsilon,m)-anonymity -------------------------------------------------------------------
def test_epsilon_m_absolute_hand_computed():
    df = pd.DataFrame(
        {
            "z": ["a"] * 4 + ["b"] * 4,
            "salary": [10, 20, 31, 50] + [10, 20, 30, 50],
        }
    )
    # epsilon = 10, m = 2. Class a: neighbourhoods [0,20] -> {10,20}: 2; [10,30] -> {10,20}: 2;
    #   [21,41] -> {31}: 1; [40,60] -> {50}: 1; max 2, 2 * 2 <= 4: satisfied.
    # Class b: [10,30] around 20 holds {10,20,30} (bounds inclusive): 3, 2 * 3 > 4: violated.
    r = _evaluate(EpsilonMAnonymity("salary", 10, 2), df, ["salary"])
    assert r.violating.tolist() == [False, True]
    assert r.class_values.tolist() == [0.5, 0.75]
    assert r.details["max_neighbourhood_share"] == 0.75
    # m = 4 needs every value alone in its neighbourhood: a fails (c(10) = 2)
    assert _evaluate(EpsilonMAnonymity("salary", 10, 4), df, ["salary"]).violating.all()
    # epsilon = 0: c(x) is the multiplicity of x; m = 4: each value once in 4 records
    assert not _evaluate(EpsilonMAnonymity("salary", 0, 4), df, ["salary"]).violating.any()


def test_epsilon_m_relative_hand_computed():
    df = pd.DataFrame({"z": ["a"] * 4, "salary": [100, 110, 121, 200]})
    # epsilon = 10% relative: [90,110] around 100 -> {100,110}: 2; [99,121] around 110 ->
    # {100,110,121}: 3; [108.9,133.1] around 121 -> {110,121}: 2; [180,220] -> {200}: 1.
    # m = 2: 2 * 3 > 4 -> violated; the absolute epsilon 10 gives max 2 -> satisfied.
    assert _evaluate(EpsilonMAnonymity("salary", 0.1, 2, relative=True), df, ["salary"]).violating[
        0
    ]
    r = _evaluate(EpsilonMAnonymity("salary", 10, 2), df, ["salary"])
    assert not r.violating[0] and r.class_values[0] == 0.5


def test_epsilon_m_is_not_monotonic_the_docstring_counterexample():
    # {0, 2} and {1, 100} each satisfy (1,2)-anonymity; merged, [0, 2] around 1 holds 3 of 4
    df = pd.DataFrame({"z": ["p", "p", "q", "q"], "g": ["*"] * 4, "s": [0, 2, 1, 100]})
    model = EpsilonMAnonymity("s", 1, 2)
    assert not _evaluate(model, df, ["s"]).violating.any()
    assert _evaluate(model, df, ["s"], qis=("g",)).violating.all()
    assert not model.monotonic and not model.monotonic_with_generalization
    assert model.minimal_class_size() == 2


def test_epsilon_m_unreachable_counts_separated_values():
    df = pd.DataFrame({"z": ["a", "b", "c", "d"], "s": [0, 5, 10, 30]})
    fs = frequency_set(df, ["z"], sensitive=["s"])
    # greedy chain with epsilon 5: 0 -> next value > 5 is 10 -> next > 15 is 30: 3 values
    assert EpsilonMAnonymity("s", 5, 3).unreachable(fs) is None
    assert "only 3 neighbourhood" in EpsilonMAnonymity("s", 5, 4).unreachable(fs)
    # relative 100%: hi(0) = 0, hi(5) = 10, hi(30) = 60 -> 0, 5, 30: 3 values
    assert EpsilonMAnonymity("s", 1, 3, relative=True).unreachable(fs) is None
    assert EpsilonMAnonymity("s", 1, 4, relative=True).unreachable(fs) is not None


# -- MultiR k-anonymity ----------------------------------------------------------------------
def test_multir_counts_persons_not_rows():
    df = pd.DataFrame(
        {
            "z": ["a"] * 4 + ["b"] * 3,
            "pid": [7, 7, 7, 8] + [1, 2, 3],
        }
    )
    # class a: 4 rows but persons {7, 8}: 2; class b: persons {1, 2, 3}: 3
    r = _evaluate(MultiRKAnonymity(3, "pid"), df, ["pid"])
    assert r.violating.tolist() == [True, False]
    assert r.details["min_distinct_persons"] == 2 and r.details["violating_records"] == 4
    assert not _evaluate(MultiRKAnonymity(2, "pid"), df, ["pid"]).violating.any()
    fs = frequency_set(df, ["z"], sensitive=["pid"])
    assert MultiRKAnonymity(5, "pid").unreachable(fs) is None  # 5 persons in all
    assert "only 5 distinct person" in MultiRKAnonymity(6, "pid").unreachable(fs)


def test_multir_histogram_stores_one_entry_per_class_and_person():
    rng = np.random.default_rng(3)
    n = 20_000
    df = pd.DataFrame({"z": rng.integers(0, 50, n), "pid": rng.integers(0, 5_000, n)})
    fs = frequency_set(df, ["z"], sensitive=["pid"])
    h = fs.histogram("pid")
    pairs = df.drop_duplicates().shape[0]
    assert h.nnz == pairs <= n  # sparse: the distinct (class, person) pairs, not 50 x 5000
    got = MultiRKAnonymity(1, "pid").distinct_persons(fs)
    expected = df.groupby(df["z"].astype(str))["pid"].nunique()
    assert got.tolist() == expected[fs.labels()["z"]].tolist()


# -- (X,Y)-privacy ---------------------------------------------------------------------------
def test_xy_privacy_hand_computed():
    df = pd.DataFrame(
        {
            "z": ["a"] * 5 + ["b"] * 4,
            "y": ["u", "u", "u", "v", "w"] + ["u", "u", "u", "v"],
        }
    )
    # a: 3 distinct y, top count 3 of 5 -> conf 0.6; b: 2 distinct, conf 3/4 = 0.75
    r = _evaluate(XYPrivacy("y", k=3, h=0.6), df, ["y"])
    assert r.violating.tolist() == [False, True]  # conf 0.6 == h passes (boundary)
    assert r.details["min_distinct_y"] == 2 and r.details["max_confidence"] == 0.75
    assert _evaluate(XYPrivacy("y", k=2), df, ["y"]).violating.tolist() == [False, False]
    assert _evaluate(XYPrivacy("y", h=0.59), df, ["y"]).violating.tolist() == [True, True]
    assert XYPrivacy("y", k=2).monotonic and not XYPrivacy("y", h=0.5).monotonic
    assert XYPrivacy("y", k=2, h=1 / 3).minimal_class_size() == 3  # ceil(1/h), not 4
    assert XYPrivacy("y", h=0.6).minimal_class_size() == 2
    assert XYPrivacy(["y"], k=2) == XYPrivacy("y", k=2)  # a list of one column


def test_xy_privacy_over_two_attributes_counts_combinations():
    df = pd.DataFrame(
        {
            "z": ["a"] * 4 + ["b"] * 4,
            "diagnosis": ["flu", "flu", "flu", "cold"] + ["flu", "flu", "cold", "cold"],
            "doctor": ["d1", "d2", "d1", "d1"] + ["d1", "d1", "d2", "d2"],
        }
    )
    # a: (flu,d1) x2, (flu,d2), (cold,d1): 3 combinations, top 2/4; diagnosis alone: 2 values,
    #    top 3/4. b: (flu,d1) x2, (cold,d2) x2: 2 combinations, top 2/4.
    model = XYPrivacy(["diagnosis", "doctor"], k=3, h=0.5)
    fs = frequency_set(df, ["z"], sensitive=list(model.sensitive_attributes))
    r = model.evaluate(fs)
    assert r.violating.tolist() == [False, True]  # b: 2 < 3 combinations
    assert r.class_values.tolist() == [0.5, 0.5]
    alone = _evaluate(XYPrivacy("diagnosis", k=3, h=0.5), df, ["diagnosis"])
    assert alone.violating.tolist() == [True, True] and alone.class_values[0] == 0.75
    # labels of the joint histogram are unambiguous JSON lists of the values
    assert set(fs.sensitive_values[model.sensitive_attributes[0]]) == {
        '["cold", "d1"]',
        '["cold", "d2"]',
        '["flu", "d1"]',
        '["flu", "d2"]',
    }
    schema = Schema.from_roles(quasi_identifying=["z"], sensitive=["diagnosis"])
    assert not check(df, schema, [model]).satisfied
    with pytest.raises(Exception, match="'doctor' is a quasi-identifier"):
        check(df, Schema.from_roles(quasi_identifying=["z", "doctor"]), [model])


def test_joint_attribute_separates_texts_that_would_concatenate_alike():
    from sdckit.core.frequency import JointAttribute, sensitive_column

    df = pd.DataFrame({"a": ["x|", "x"], "b": ["y", "|y"]})
    labels = sensitive_column(df, JointAttribute(["a", "b"]))
    assert labels.nunique() == 2
    with pytest.raises(DataError, match="'c'"):
        sensitive_column(df, JointAttribute(["a", "c"]))


# -- personalized privacy --------------------------------------------------------------------
def test_personalized_privacy_hand_computed():
    df = pd.DataFrame(
        {
            "z": ["a"] * 4 + ["b"] * 4,
            "disease": ["flu", "cold", "gastritis", "ulcer"] + ["flu", "flu", "cold", "ulcer"],
            "guard": ["respiratory", "", "*", "flu"] + ["flu", "digestive", "", ""],
        }
    )
    # class a (4 records): guard respiratory covers {flu, cold}: 2/4 = 0.5; guard flu: 1/4;
    #   '' (no guarding node) and '*' (the root) are never breached.
    # class b: guard flu: {flu, flu}: 2/4 = 0.5; guard digestive: {ulcer}: 1/4.
    r = _evaluate(PersonalizedPrivacy("disease", "guard", DISEASES, 0.5), df, ["disease", "guard"])
    assert r.violating.tolist() == [False, False]  # 0.5 == p_breach passes
    assert r.class_values.tolist() == [0.5, 0.5]
    assert r.details["guarded_records"] == 4
    r = _evaluate(PersonalizedPrivacy("disease", "guard", DISEASES, 0.4), df, ["disease", "guard"])
    assert r.violating.tolist() == [True, True]
    r = _evaluate(
        PersonalizedPrivacy("disease", "guard", DISEASES, 0.25),
        df.iloc[[0, 2, 3]],
        ["disease", "guard"],
    )
    # class a without its cold record: (flu, respiratory), (gastritis, *), (ulcer, flu): the
    # respiratory and flu guards both see the one flu record of 3: 1/3 > 0.25
    assert r.violating.tolist() == [True] and r.class_values[0] == pytest.approx(1 / 3)


def test_personalized_privacy_is_not_monotonic():
    df = pd.DataFrame(
        {
            "z": ["p", "q", "q"],
            "g": ["*"] * 3,
            "disease": ["cold", "flu", "flu"],
            "guard": ["flu", "", ""],
        }
    )
    model = PersonalizedPrivacy("disease", "guard", DISEASES, 0.25)
    assert not _evaluate(model, df, ["disease", "guard"]).violating.any()
    # merged: the flu guard sees 2 flu records of 3
    r = _evaluate(model, df, ["disease", "guard"], qis=("g",))
    assert r.violating.all() and r.class_values[0] == pytest.approx(2 / 3)


def test_personalized_privacy_bad_labels():
    df = pd.DataFrame({"z": ["a", "a"], "disease": ["flu", "cold"], "guard": ["fever", ""]})
    with pytest.raises(HierarchyError, match=r"'guard'.*'fever'"):
        _evaluate(PersonalizedPrivacy("disease", "guard", DISEASES, 0.5), df, ["disease", "guard"])
    df = pd.DataFrame({"z": ["a"], "disease": ["measles"], "guard": [""]})
    with pytest.raises(HierarchyError, match="measles"):
        _evaluate(PersonalizedPrivacy("disease", "guard", DISEASES, 0.5), df, ["disease", "guard"])
    # "x" is a group at level 1 over {flu} and another group at level 2 over {cold}
    odd = Hierarchy([["flu", "x", "r"], ["cold", "c", "x"]], "odd")
    df = pd.DataFrame({"z": ["a"], "disease": ["flu"], "guard": ["x"]})
    with pytest.raises(HierarchyError, match="ambiguous"):
        _evaluate(PersonalizedPrivacy("disease", "guard", odd, 0.5), df, ["disease", "guard"])


# -- parameters ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("build", "fragment"),
    [
        (lambda: KEAnonymity("s", 0, 1), "'k' must be >= 1"),
        (lambda: KEAnonymity("s", 2, -1), "'e' must be >= 0"),
        (lambda: EpsilonMAnonymity("s", -1, 2), "'epsilon' must be >= 0"),
        (lambda: EpsilonMAnonymity("s", 1.5, 2, relative=True), "at most 1"),
        (lambda: EpsilonMAnonymity("s", 1, 0), "'m' must be >= 1"),
        (lambda: MultiRKAnonymity(0, "pid"), "'k' must be >= 1"),
        (lambda: XYPrivacy("y"), "at least one bound"),
        (lambda: XYPrivacy("y", h=1.5), "'h' must be <= 1"),
        (lambda: XYPrivacy(["a", "a"], k=2), "names a column twice"),
        (lambda: XYPrivacy([], k=2), "'y'"),
        (lambda: PersonalizedPrivacy("d", "g", DISEASES, 1.2), "'p_breach' must be <= 1"),
        (lambda: PersonalizedPrivacy("d", "d", DISEASES, 0.2), "another column"),
    ],
)
def test_invalid_parameters_are_named(build, fragment):
    with pytest.raises(ParameterError, match=fragment):
        build()


def test_models_are_job_names_and_round_trip():
    for model in (
        KEAnonymity("s", 3, 10000),
        EpsilonMAnonymity("s", 1000, 2, relative=False),
        MultiRKAnonymity(5, "pid"),
        XYPrivacy("y", k=3, h=0.6),
    ):
        assert model.spec_name in MODEL_NAMES
        entry = model.to_entry()
        assert type(model).from_dict(entry[model.spec_name]) == model
    assert PersonalizedPrivacy.spec_name in MODEL_NAMES


def test_check_reports_each_model():
    df = pd.DataFrame(
        {
            "z": ["a", "a", "b", "b"],
            "salary": [1, 9, 4, 5],
            "pid": [1, 2, 3, 3],
        }
    )
    schema = Schema.from_roles(quasi_identifying=["z"], sensitive=["salary"])
    res = check(df, schema, [KEAnonymity("salary", 2, 5), MultiRKAnonymity(2, "pid")])
    # (2,5): a {1, 9} range 8 ok, b {4, 5} range 1 fails; persons: a 2, b 1 -> b fails
    assert not res.satisfied
    assert [r.violating.tolist() for r in res.results] == [[False, True], [False, True]]
    json.dumps(res.to_dict())


# -- job files end to end --------------------------------------------------------------------
def _people(n: int = 80, seed: int = 5) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    leaves = np.array(DISEASES.leaves, dtype=object)
    nodes = np.array(["", "", "*", "flu", "respiratory", "digestive", "ulcer"], dtype=object)
    return pd.DataFrame(
        {
            "age": rng.integers(20, 60, n),
            "sex": rng.choice(["M", "F"], n),
            "salary": rng.integers(1, 50, n) * 1000,
            "person_id": rng.integers(0, n // 2, n),
            "disease": leaves[rng.integers(0, len(leaves), n)],
            "guard": nodes[rng.integers(0, len(nodes), n)],
        }
    )


JOB_MODELS = {
    "ke": {"ke_anonymity": {"attribute": "salary", "k": 3, "e": 10000}},
    "em": {"epsilon_m_anonymity": {"attribute": "salary", "epsilon": 1000, "m": 2}},
    "pp": {
        "personalized_privacy": {
            "attribute": "disease",
            "guarding_node": "guard",
            "hierarchy": "disease_hierarchy.csv",
            "p_breach": 0.6,
        }
    },
    "mr": {"multir_k_anonymity": {"k": 3, "person": "person_id"}},
    "xy": {"xy_privacy": {"y": ["disease"], "k": 2, "h": 0.6}},
    "xy2": {"xy_privacy": {"y": ["disease", "person_id"], "k": 4, "h": 0.4}},
}


def _subtree(label: str) -> set[str]:
    """Leaves of DISEASES under ``label`` (pandas over the table)."""
    table = pd.DataFrame(DISEASES.table)
    return set(table.loc[(table == label).any(axis=1), 0])


def independent_check(kind: str, params: dict, released: pd.DataFrame, qis: list[str]) -> None:
    """Re-verify a model on the released rows with pandas (no sdckit model code)."""
    for _, g in released.groupby(qis, sort=False):
        n = len(g)
        if kind == "ke":
            s = pd.to_numeric(g[params["attribute"]]).astype(float)
            assert s.nunique() >= params["k"] and s.max() - s.min() >= params["e"]
        elif kind == "em":
            s = pd.to_numeric(g[params["attribute"]]).astype(float).to_numpy()
            eps = params["epsilon"]
            radius = eps * np.abs(s) if params.get("relative") else np.full(len(s), eps)
            inside = (s[None, :] >= s[:, None] - radius[:, None]) & (
                s[None, :] <= s[:, None] + radius[:, None]
            )
            assert (params["m"] * inside.sum(axis=1) <= n).all()
        elif kind == "mr":
            assert g[params["person"]].nunique() >= params["k"]
        elif kind == "xy":
            y = [params["y"]] if isinstance(params["y"], str) else list(params["y"])
            combos = g[y].astype(str).value_counts()  # one row per distinct Y combination
            if params.get("k") is not None:
                assert len(combos) >= params["k"]
            if params.get("h") is not None:
                assert combos.max() <= params["h"] * n + 1e-9
        else:
            values = g[params["attribute"]].astype(str)
            for label in g[params["guarding_node"]].astype(str):
                if label == "" or _subtree(label) == set(DISEASES.leaves):
                    continue
                assert values.isin(_subtree(label)).sum() <= params["p_breach"] * n + 1e-9


@pytest.mark.parametrize("kind", sorted(JOB_MODELS))
def test_job_file_runs_end_to_end(tmp_path: Path, kind: str) -> None:
    df = _people()
    df.to_csv(tmp_path / "people.csv", sep=";", index=False)
    pd.DataFrame(DISEASES.table).to_csv(
        tmp_path / "disease_hierarchy.csv", sep=";", header=False, index=False
    )
    pd.DataFrame([["M", "*"], ["F", "*"]]).to_csv(
        tmp_path / "sex.csv", sep=";", header=False, index=False
    )
    doc = {
        "input": {"path": "people.csv", "delimiter": ";"},
        "attributes": {
            "age": {
                "role": "quasi_identifying",
                "type": "integer",
                "hierarchy": {"interval": {"widths": [10, 20, 40], "bottom": 20}},
            },
            "sex": {"role": "quasi_identifying", "hierarchy": "sex.csv"},
            "salary": {"role": "sensitive", "type": "integer"},
            "disease": {"role": "sensitive"},
        },
        "models": [JOB_MODELS[kind]],
        "suppression_limit": 0.1,
        "output": {"path": "out.csv", "report": "r.html", "json": "r.json", "delimiter": ";"},
    }
    job = tmp_path / "job.yaml"
    job.write_text(yaml.safe_dump(doc))
    res = runner.invoke(app, ["anonymize", "--config", str(job)])
    assert res.exit_code == 0, res.output
    summary = json.loads((tmp_path / "r.json").read_text())
    assert summary["verified"] is True
    out = pd.read_csv(tmp_path / "out.csv", sep=";", dtype=str, keep_default_na=False)
    assert len(out) == len(df)
    kept = out[~(out[["age", "sex"]] == "*").all(axis=1)]
    assert len(out) - len(kept) == summary["suppressed_records"]
    assert len(kept) > 0
    ((name, params),) = JOB_MODELS[kind].items()
    independent_check(kind[:2], params, kept, ["age", "sex"])


def test_job_file_with_a_bad_model_key_exits_2(tmp_path: Path) -> None:
    _people().to_csv(tmp_path / "people.csv", sep=";", index=False)
    doc = {
        "input": {"path": "people.csv", "delimiter": ";"},
        "attributes": {
            "age": {
                "role": "quasi_identifying",
                "type": "integer",
                "hierarchy": {"interval": {"widths": [10]}},
            },
        },
        "models": [
            {"epsilon_m_anonymity": {"attribute": "salary", "epsilon": 2, "m": 2, "relative": True}}
        ],
        "output": {"path": "out.csv"},
    }
    job = tmp_path / "job.yaml"
    job.write_text(yaml.safe_dump(doc))
    res = runner.invoke(app, ["anonymize", "--config", str(job)])
    assert res.exit_code == 2
    assert "models[0].epsilon_m_anonymity" in res.output and "at most 1" in res.output
    assert not (tmp_path / "out.csv").exists()


# -- optimal search: independent re-check and equality with exhaustive search ---------------
S_TREE = Hierarchy([["s0", "a", "*"], ["s1", "a", "*"], ["s2", "b", "*"], ["s3", "b", "*"]], "s")
S_NUMBERS = {"s0": 0, "s1": 10, "s2": 15, "s3": 40}
GUARDS = ["", "*", "a", "b", "s0", "s2"]


@st.composite
def model_case(draw):
    n = draw(st.integers(4, 30))
    data, hierarchies = _random_qi_table(draw, draw(st.integers(1, 2)), n)
    s = [f"s{draw(st.integers(0, 3))}" for _ in range(n)]
    data["s"] = s
    data["num"] = [S_NUMBERS[v] + draw(st.integers(0, 3)) for v in s]
    data["pid"] = [draw(st.integers(0, max(1, n // 2))) for _ in range(n)]
    data["guard"] = [draw(st.sampled_from(GUARDS)) for _ in range(n)]
    df = pd.DataFrame(data)
    kind = draw(st.sampled_from(["ke", "em", "pp", "mr", "xy"]))
    if kind == "ke":
        params = {
            "attribute": "num",
            "k": draw(st.integers(1, 3)),
            "e": draw(st.sampled_from([0, 5, 12])),
        }
        model = KEAnonymity(**params)
    elif kind == "em":
        params = {
            "attribute": "num",
            "epsilon": draw(st.sampled_from([0, 2, 6])),
            "m": draw(st.integers(1, 3)),
            "relative": draw(st.booleans()),
        }
        if params["relative"]:
            params["epsilon"] = draw(st.sampled_from([0.0, 0.1, 0.5]))
        model = EpsilonMAnonymity(**params)
    elif kind == "pp":
        params = {
            "attribute": "s",
            "guarding_node": "guard",
            "p_breach": draw(st.sampled_from([0.3, 0.5, 0.7])),
        }
        model = PersonalizedPrivacy(hierarchy=S_TREE, **params)
    elif kind == "mr":
        params = {"k": draw(st.integers(1, 4)), "person": "pid"}
        model = MultiRKAnonymity(**params)
    else:
        k = draw(st.sampled_from([None, 2, 3]))
        h = (
            draw(st.sampled_from([None, 0.5, 0.75]))
            if k is not None
            else draw(st.sampled_from([0.5, 0.75]))
        )
        params = {
            "y": draw(st.sampled_from([["s"], ["s", "pid"], ["pid", "guard"]])),
            "k": k,
            "h": h,
        }
        model = XYPrivacy(**params)
    limit = draw(st.sampled_from([0.0, 0.1, 0.3]))
    metric = MetricSpec(draw(st.sampled_from(METRICS)), "geometric")
    schema = Schema.from_roles(
        quasi_identifying=list(hierarchies), sensitive=["s", "num"], hierarchies=hierarchies
    )
    return df, schema, kind, params, model, limit, metric


def _independent_pp_check(params, released, qis):
    """Personalized privacy against S_TREE (the tree of the hypothesis tables)."""
    table = pd.DataFrame(S_TREE.table)
    for _, g in released.groupby(qis, sort=False):
        for label in g["guard"].astype(str):
            under = set(table.loc[(table == label).any(axis=1), 0])
            if label == "" or under == set(S_TREE.leaves):
                continue
            assert g["s"].isin(under).sum() <= params["p_breach"] * len(g) + 1e-9


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(model_case())
def test_optimal_release_reverifies_independently(case):
    df, schema, kind, params, model, limit, metric = case
    try:
        out = optimal(df, schema, [model], suppression_limit=limit, metric=metric)
    except NoSolutionError:
        return
    assert out.suppressed_records <= suppression_budget(limit, len(df))
    released = out.data[~np.asarray(out.suppressed, dtype=bool)]
    qis = schema.quasi_identifiers
    if kind == "pp":
        _independent_pp_check(params, released, qis)
    elif kind.startswith("xy"):
        independent_check("xy", params, released, qis)
    else:
        independent_check(kind, params, released, qis)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(model_case())
def test_optimal_equals_exhaustive(case):
    df, schema, _, _, model, limit, metric = case
    _check_against_exhaustive(df, schema, [model], limit, metric)


# -- the partitioning heuristics accept the models -------------------------------------------
@pytest.mark.parametrize("kind", sorted(JOB_MODELS))
def test_mondrian_releases_satisfy_each_model(kind: str) -> None:
    import sdckit

    df = _people(200, seed=11)
    schema = Schema.from_roles(
        quasi_identifying=["age", "sex"],
        sensitive=["salary", "disease"],
        hierarchies={"sex": Hierarchy([["M", "*"], ["F", "*"]], "sex")},
        types={"age": "integer"},
    )
    ((name, params),) = JOB_MODELS[kind].items()
    params = dict(params)
    if kind == "pp":
        params["hierarchy"] = DISEASES
    from sdckit.jobs.config import model_classes

    model = model_classes()[name].from_dict(params)
    result = sdckit.anonymize(df, schema, [model], suppression_limit=0.1, algorithm="mondrian")
    assert result.verified
    out = result.data.astype(str)
    released = out[~(out[["age", "sex"]] == "*").all(axis=1)]
    assert len(out) - len(released) == result.suppressed_records
    assert released["age"].nunique() > 1  # Mondrian cut the data: the check is not trivial
    independent_check(kind[:2], JOB_MODELS[kind][name], released, ["age", "sex"])


def test_analyze_reports_linkability_and_range():
    from sdckit.risk.analyze import analyze, measured_models

    df = pd.DataFrame({"z": list("aabbb"), "s": [1, 5, 2, 2, 9], "t": list("xyxxy")})
    summary = analyze(df, ["z"], sensitive=["s", "t"])
    # s: class a {1, 5} range 4, b {2, 2, 9} range 7 -> min_range 4; top share 2/3 (b's 2s)
    # t: a {x, y} 1/2, b {x, x, y} 2/3 -> 2/3; not numeric -> no range
    assert summary["sensitive"]["s"]["min_range"] == 4.0
    assert summary["sensitive"]["s"]["max_confidence"] == pytest.approx(2 / 3)
    assert summary["sensitive"]["t"]["min_range"] is None
    assert {"xy_privacy", "ke_anonymity"} <= set(measured_models(summary.summary))
    text_only = analyze(df, ["z"], sensitive=["t"])
    assert "ke_anonymity" not in measured_models(text_only.summary)


# -- the Spark engine gives the local result -------------------------------------------------
def test_spark_engine_equals_local(spark, tmp_path: Path) -> None:
    import sdckit
    from sdckit.errors import ConfigError
    from sdckit.spark.anonymize import anonymize_spark

    df = _people(300, seed=2).astype({"age": str})
    ages = Hierarchy(
        [
            [
                str(a),
                f"{a // 10 * 10}-{a // 10 * 10 + 9}",
                f"{a // 20 * 20}-{a // 20 * 20 + 19}",
                "*",
            ]
            for a in range(20, 60)
        ],
        "age",
    )
    schema = Schema.from_roles(
        quasi_identifying=["age", "sex"],
        sensitive=["salary", "disease"],
        hierarchies={"age": ages, "sex": Hierarchy([["M", "*"], ["F", "*"]], "sex")},
    )
    models = [
        KEAnonymity("salary", 3, 10000),
        EpsilonMAnonymity("salary", 1000, 2),
        PersonalizedPrivacy("disease", "guard", DISEASES, 0.6),
        MultiRKAnonymity(3, "person_id"),
        XYPrivacy("disease", k=2, h=0.6),
    ]
    local = sdckit.anonymize(df, schema, models, suppression_limit=0.1)
    remote = anonymize_spark(
        spark.createDataFrame(df), schema, models, tmp_path / "out.parquet", suppression_limit=0.1
    )
    assert remote.transformation == local.transformation
    assert remote.suppressed_records == local.suppressed_records
    assert remote.models_satisfied == local.models_satisfied
    with pytest.raises(ConfigError, match="joint values of disease, person_id"):
        anonymize_spark(
            spark.createDataFrame(df),
            schema,
            [XYPrivacy(["disease", "person_id"], k=2)],
            tmp_path / "joint.parquet",
        )
