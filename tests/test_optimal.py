"""Optimal lattice search: ARX calibration, and equality with exhaustive search (hypothesis)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdckit.algorithms.optimal import (
    LatticeSearch,
    optimal,
    prepare_base,
    suppression_budget,
)
from sdckit.core.hierarchy import Hierarchy
from sdckit.core.schema import Schema
from sdckit.datasets import load_adult
from sdckit.errors import HierarchyError, NoSolutionError
from sdckit.models import AverageRiskThreshold, KAnonymity, LDiversity, TCloseness
from sdckit.utility.generalization import METRICS, LatticeMetrics, MetricSpec, output_metrics

ADULT_OPTIMUM = {
    "sex": 0,
    "age": 4,
    "race": 1,
    "marital-status": 1,
    "education": 3,
    "native-country": 2,
    "workclass": 2,
    "occupation": 1,
    "salary-class": 0,
}


@pytest.fixture(scope="module")
def adult():
    df, h = load_adult()
    return df, Schema.from_roles(quasi_identifying=list(df.columns), hierarchies=h)


def test_adult_calibration_matches_arx(adult):
    """ARX 3.9: Adult, 9 QIs, k=5, 0% suppression, loss -> this node, loss 0.5731509655759612."""
    df, schema = adult
    out = optimal(df, schema, [KAnonymity(5)], suppression_limit=0.0)
    assert out.transformation == ADULT_OPTIMUM
    assert out.suppressed_records == 0
    assert out.details["metric_value"] == pytest.approx(0.5731509655759612, abs=1e-12)
    # the share arrays give the same loss (the metric of any algorithm's output)
    metrics = output_metrics(df, out, schema)
    assert metrics["loss"] == pytest.approx(0.5731509655759612, abs=1e-12)
    assert metrics["height"] == 14
    for key, value in out.details["metrics"].items():  # frequency-set metrics == row metrics
        assert value == pytest.approx(metrics[key], rel=1e-12), key
    assert out.nodes_checked == len(out.details["solution_space"]) < out.details["lattice_size"]
    # released labels are the hierarchy labels at the chosen levels
    h = schema.hierarchy("education")
    assert set(out.data["education"].astype(str)) <= set(h.labels[3])


def test_adult_with_suppression_metrics_agree(adult):
    df, schema = adult
    out = optimal(df, schema, [KAnonymity(5)], suppression_limit=0.05)
    assert 0 < out.suppressed_records <= int(0.05 * len(df))
    metrics = output_metrics(df, out, schema)
    for key, value in out.details["metrics"].items():
        assert value == pytest.approx(metrics[key], rel=1e-12), key


def test_adult_t_closeness_prunes_below_failing_nodes():
    """Adult, 8 QIs, 0.2-closeness (equal) on occupation, 5%: an ARX benchmark case.

    The optimum and its suppressed records are those of the search without the finer-violation
    bound (which evaluated 4,301 of the 4,320 nodes); with it, a few hundred nodes decide it.
    """
    df, h = load_adult()
    qis = [c for c in df.columns if c != "occupation"]
    schema = Schema.from_roles(quasi_identifying=qis, sensitive=["occupation"], hierarchies=h)
    out = optimal(df, schema, [TCloseness("occupation", 0.2)], suppression_limit=0.05)
    assert list(out.transformation.values()) == [1, 4, 1, 1, 3, 1, 2, 1]
    assert out.details["metric_value"] == pytest.approx(0.8150031862279494, abs=1e-12)
    assert out.suppressed_records == 235
    assert out.nodes_checked < 500
    assert out.details["pruned_nodes"] > 3000


def _random_hierarchy(draw, name: str) -> Hierarchy:
    """A random tree: leaves v0..v{n-1}, each level groups the codes of the level below."""
    n_leaves = draw(st.integers(2, 6))
    height = draw(st.integers(2, 4))
    codes = np.arange(n_leaves)
    columns = [np.array([f"{name}{i}" for i in codes], dtype=object)]
    for level in range(1, height):
        if level == height - 1:
            columns.append(np.full(n_leaves, "*", dtype=object))
            break
        n_prev = int(codes.max()) + 1
        n_groups = draw(st.integers(1, max(1, n_prev)))
        parent = np.array(
            draw(st.lists(st.integers(0, n_groups - 1), min_size=n_prev, max_size=n_prev))
        )
        codes = parent[codes]
        columns.append(np.array([f"{name}L{level}g{c}" for c in codes], dtype=object))
    return Hierarchy(np.stack(columns, axis=1), name=name)


# a hierarchy over the sensitive values for the hierarchical ground distance
S_TREE = Hierarchy([["s0", "a", "*"], ["s1", "a", "*"], ["s2", "b", "*"], ["s3", "b", "*"]], "s")


@st.composite
def lattice_case(draw):
    m = draw(st.integers(1, 3))
    hierarchies = {f"q{i}": _random_hierarchy(draw, f"q{i}") for i in range(m)}
    n = draw(st.integers(4, 40))
    data = {
        q: [str(h.leaves[draw(st.integers(0, len(h.leaves) - 1))]) for _ in range(n)]
        for q, h in hierarchies.items()
    }
    data["s"] = [f"s{draw(st.integers(0, 3))}" for _ in range(n)]
    df = pd.DataFrame(data)
    kinds = draw(
        st.lists(st.sampled_from(["k", "l", "el", "t", "avg"]), min_size=1, max_size=3, unique=True)
    )
    models = []
    for kind in kinds:
        if kind == "k":
            models.append(KAnonymity(draw(st.integers(1, 5))))
        elif kind == "l":
            models.append(LDiversity("s", draw(st.integers(1, 3))))
        elif kind == "el":
            models.append(LDiversity("s", draw(st.sampled_from([1.5, 2.0])), variant="entropy"))
        elif kind == "t":
            t = draw(st.sampled_from([0.1, 0.2, 0.4, 0.7]))
            distance = draw(st.sampled_from(["equal", "ordered", "hierarchical"]))
            tree = S_TREE if distance == "hierarchical" else None
            models.append(TCloseness("s", t, distance, tree))
        else:
            models.append(AverageRiskThreshold(draw(st.sampled_from([0.3, 0.6]))))
    limit = draw(st.sampled_from([0.0, 0.1, 0.3, 1.0]))
    metric = MetricSpec(
        draw(st.sampled_from(METRICS)), draw(st.sampled_from(["geometric", "arithmetic", "max"]))
    )
    schema = Schema.from_roles(
        quasi_identifying=list(hierarchies), sensitive=["s"], hierarchies=hierarchies
    )
    return df, schema, models, limit, metric


def _exhaustive(df, schema, models, limit, metric):
    """Reference: every node from the base set, the same rules, no pruning, no bounds."""
    base, _ = prepare_base(df, schema, models)
    budget = suppression_budget(limit, len(df))
    lm = LatticeMetrics(base, metric)
    heights = [q.height for q in base.quasi_identifiers]
    best = None
    for levels in np.ndindex(*heights):
        fs = base.rollup(levels)
        violating = np.zeros(fs.n_classes, dtype=bool)
        for md in models:
            if not md.is_global:
                violating |= md.evaluate(fs).violating
        if fs.counts[violating].sum() > budget:
            continue
        violating = _enforce_by_loop(fs, violating, [md for md in models if md.is_global], budget)
        if violating is None:
            continue
        cost = lm.cost(fs, violating)
        key = (sum(levels), levels)
        if best is None:
            best = (cost, key)
            continue
        tol = 1e-12 * max(1.0, abs(cost), abs(best[0]))
        if cost < best[0] - tol or (abs(cost - best[0]) <= tol and key < best[1]):
            best = (cost, key)
    return best


def _enforce_by_loop(fs, violating, global_models, budget):
    """Reference for ARX's enforcement of global models: suppress the smallest released class
    (first in class order among equals), one at a time, until every global model holds on
    the rest; None when the budget runs out first."""
    violating = violating.copy()
    while True:
        kept = fs.select(~violating)
        if all(md.evaluate(kept).satisfied for md in global_models):
            return violating
        candidates = [c for c in range(fs.n_classes) if not violating[c]]
        if not candidates:
            return None
        smallest = min(candidates, key=lambda c: (fs.counts[c], c))
        violating[smallest] = True
        if fs.counts[violating].sum() > budget:
            return None


def _check_against_exhaustive(df, schema, models, limit, metric):
    """The optimal search finds the exhaustive optimum (or raises when there is none)."""
    expected = _exhaustive(df, schema, models, limit, metric)
    if expected is None:
        with pytest.raises(NoSolutionError):
            optimal(df, schema, models, suppression_limit=limit, metric=metric)
        return None
    out = optimal(df, schema, models, suppression_limit=limit, metric=metric)
    levels = tuple(out.transformation[q] for q in schema.quasi_identifiers)
    assert levels == expected[1][1]
    assert out.details["metric_value"] == pytest.approx(expected[0], rel=1e-9, abs=1e-12)
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lattice_case())
def test_optimal_equals_exhaustive(case):
    df, schema, models, limit, metric = case
    out = _check_against_exhaustive(df, schema, models, limit, metric)
    if out is None:
        return
    assert out.suppressed_records <= suppression_budget(limit, len(df))
    # the fast metrics on frequency sets agree with the metrics computed from the output rows
    row_metrics = output_metrics(df, out, schema, metric)
    name = {"entropy": "non_uniform_entropy"}.get(metric.name, metric.name)
    if name in row_metrics:
        value = row_metrics[name]
        if name == "precision":
            value = 1.0 - value
        assert value == pytest.approx(out.details["metric_value"], rel=1e-9, abs=1e-9)


def _random_qi_table(draw, n_qis: int, n_rows: int) -> tuple[dict, dict[str, Hierarchy]]:
    """Random quasi-identifier columns ``q0..`` over random hierarchies: (columns, hierarchies)."""
    hierarchies = {f"q{i}": _random_hierarchy(draw, f"q{i}") for i in range(n_qis)}
    data = {
        q: [str(h.leaves[draw(st.integers(0, len(h.leaves) - 1))]) for _ in range(n_rows)]
        for q, h in hierarchies.items()
    }
    return data, hierarchies


def _dependent_sensitive(draw, first_qi: list[str]) -> list[str]:
    """A sensitive column ``s0..s3`` that follows the first QI's leaf (plus noise), so that
    classes violate at some generalization nodes and not at others."""
    noise = draw(st.lists(st.integers(0, 3), min_size=len(first_qi), max_size=len(first_qi)))
    first = [int(v[2:]) for v in first_qi]
    return [f"s{(a + b) % 4 if b < 2 else b}" for a, b in zip(first, noise, strict=True)]


@st.composite
def tcloseness_case(draw):
    """t-closeness under suppression, where the search prunes with the finer-violation bound.

    The sensitive value depends on the first QI's leaf (plus noise), so that many classes
    violate and the bound exceeds the budget at some nodes but not at others.
    """
    data, hierarchies = _random_qi_table(draw, draw(st.integers(2, 3)), draw(st.integers(10, 60)))
    data["s"] = _dependent_sensitive(draw, data["q0"])
    distance = draw(st.sampled_from(["equal", "ordered", "hierarchical"]))
    models = [
        TCloseness(
            "s",
            draw(st.sampled_from([0.05, 0.1, 0.15, 0.25])),
            distance,
            S_TREE if distance == "hierarchical" else None,
        )
    ]
    if draw(st.booleans()):
        models.insert(0, KAnonymity(draw(st.integers(1, 3))))
    limit = draw(st.sampled_from([0.05, 0.1, 0.2, 0.3, 0.5]))
    metric = MetricSpec(draw(st.sampled_from(["loss", "discernibility", "height"])))
    schema = Schema.from_roles(
        quasi_identifying=list(hierarchies), sensitive=["s"], hierarchies=hierarchies
    )
    return pd.DataFrame(data), schema, models, limit, metric


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tcloseness_case())
def test_optimal_equals_exhaustive_t_closeness_with_suppression(case):
    """Pruning below failing nodes by the t-closeness bound never loses the optimum."""
    _check_against_exhaustive(*case)


def test_tie_break_prefers_lower_level_sum_then_lexicographic():
    """Two QIs with identical columns: (1, 0) and (0, 1) tie; the documented rule picks (0, 1)."""
    h = Hierarchy([["a", "*"], ["b", "*"]], name="x")
    df = pd.DataFrame({"x": ["a", "b", "a", "b"], "y": ["a", "b", "a", "b"]})
    df["y"] = ["a", "a", "b", "b"]
    schema = Schema.from_roles(quasi_identifying=["x", "y"], hierarchies={"x": h, "y": h})
    out = optimal(df, schema, [KAnonymity(2)], metric="height")
    assert out.transformation == {"x": 0, "y": 1}


def test_suppression_and_labels():
    """k=2 on a table with one outlier: suppressing it (limit 25%) beats generalizing."""
    h = Hierarchy(
        [["a", "ab", "*"], ["b", "ab", "*"], ["c", "cd", "*"], ["d", "cd", "*"]], name="x"
    )
    df = pd.DataFrame({"x": ["a", "a", "b", "b", "c", "c", "d"]})
    schema = Schema.from_roles(quasi_identifying=["x"], hierarchies={"x": h})
    out = optimal(df, schema, [KAnonymity(2)], suppression_limit=0.25)
    assert out.transformation == {"x": 0}
    assert out.suppressed.tolist() == [False] * 6 + [True]
    assert out.data["x"].astype(str).tolist() == ["a", "a", "b", "b", "c", "c", "*"]
    # loss: shares 1/4 for six records and 1 for the suppressed one:
    # (6/4 + 1 - 7/4) / (7 - 7/4) = 0.75 / 5.25
    assert out.details["metric_value"] == pytest.approx(0.75 / 5.25, abs=1e-15)
    np.testing.assert_allclose(out.share["x"], [0.25] * 6 + [1.0])
    without = optimal(df, schema, [KAnonymity(2)], suppression_limit=0.0)
    assert without.transformation == {"x": 1}
    assert without.data["x"].astype(str).tolist() == ["ab"] * 4 + ["cd"] * 3


def test_no_solution_names_closest_node():
    h = Hierarchy([["a", "a"], ["b", "b"]], name="x")  # no real generalization
    df = pd.DataFrame({"x": ["a", "a", "b"]})
    schema = Schema.from_roles(quasi_identifying=["x"], hierarchies={"x": h})
    with pytest.raises(NoSolutionError, match=r"suppress 1 of 3 records"):
        optimal(df, schema, [KAnonymity(2)], suppression_limit=0.0)


def test_missing_hierarchy_names_builder():
    df = pd.DataFrame({"age": [1, 2]})
    schema = Schema.from_roles(quasi_identifying=["age"])
    with pytest.raises(HierarchyError, match="interval_hierarchy"):
        optimal(df, schema, [KAnonymity(1)])


def test_progress_is_reported(adult):
    df, schema = adult
    calls = []
    optimal(df.head(500), schema, [KAnonymity(3)], progress=lambda d, t: calls.append((d, t)))
    assert calls and calls[-1][0] == calls[-1][1] == math.prod(
        schema.hierarchy(q).height for q in schema.quasi_identifiers
    )


def test_search_checks_fewer_nodes_than_lattice(adult):
    df, schema = adult
    base, _ = prepare_base(df, schema, [KAnonymity(5)])
    search = LatticeSearch(base, [KAnonymity(5)], 0)
    best = search.run()
    assert best is not None and len(search.checked) < search.size / 5


def test_global_model_with_suppression_is_not_pruned():
    """Average risk after suppression is not monotone: no predictive tagging then.

    x: 100 records 'A' and six single records b1..b6 (pairs under B1..B3, then '*'); k=2,
    average risk <= 0.02, limit 6 records. Level 0 suppresses b1..b6 and leaves one class of
    100 (risk 0.01): loss 36/636. Level 1 has 4 classes for 106 records (risk 0.038); as ARX
    does, the budget then suppresses the smallest classes (B1, B2: 4 records) until the risk
    is 2/102 <= 0.02: loss 26/636, the optimum. Without the budget used for the global model,
    level 1 would fail although level 0 below it satisfies.
    """
    rows = [["A", "A", "*"]] + [[f"b{i}", f"B{(i + 1) // 2}", "*"] for i in range(1, 7)]
    h = Hierarchy(rows, name="x")
    df = pd.DataFrame({"x": ["A"] * 100 + [f"b{i}" for i in range(1, 7)]})
    schema = Schema.from_roles(quasi_identifying=["x"], hierarchies={"x": h})
    models = [KAnonymity(2), AverageRiskThreshold(0.02)]
    base, _ = prepare_base(df, schema, models)
    assert not LatticeSearch(base, models, 6).prunable  # level 1 failing must not prune level 0
    assert LatticeSearch(base, models, 0).prunable  # without suppression it is monotone
    out = optimal(df, schema, models, suppression_limit=0.06)
    assert out.transformation == {"x": 1}
    assert out.suppressed_records == 4
    assert out.details["metric_value"] == pytest.approx(26 / 636)
    out = optimal(df, schema, models, suppression_limit=0.03)  # 3 records: level 1 cannot
    assert out.transformation == {"x": 2} and out.suppressed_records == 0
