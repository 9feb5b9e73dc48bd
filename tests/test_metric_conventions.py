"""Metric conventions shared with ARX: AECS with suppressed records, non-uniform entropy's
three treatments of suppression, and the Loss metric's generalization/suppression factor.

The hand-computed table: one quasi-identifier ``a`` with leaves x1, x2 (under X) and y1 (under
Y), records [x1, x2, y1, y1, y1, y1] (n = 6, D = 3). At level 0 with x1 and x2 suppressed
(k = 2): 4 records kept in 1 class, S = 2 suppressed.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from sdckit.algorithms.optimal import prepare_base
from sdckit.core.hierarchy import Hierarchy
from sdckit.core.schema import Schema
from sdckit.errors import ConfigError
from sdckit.jobs.config import job_from_dict
from sdckit.models import KAnonymity
from sdckit.report.anonymization_report import anonymization_report
from sdckit.utility.generalization import LatticeMetrics, MetricSpec, aecs, parse_metric
from test_optimal import _check_against_exhaustive, lattice_case

DATA = pd.DataFrame({"a": ["x1", "x2", "y1", "y1", "y1", "y1"]})
HIER = Hierarchy([["x1", "X", "*"], ["x2", "X", "*"], ["y1", "Y", "*"]], name="a")


def _values(metric) -> dict[str, float]:
    schema = Schema.from_roles(quasi_identifying=["a"], hierarchies={"a": HIER})
    base, _ = prepare_base(DATA, schema, [KAnonymity(2)])
    lm = LatticeMetrics(base, metric)
    suppressed = base.counts < 2  # x1 and x2
    assert int(base.counts[suppressed].sum()) == 2
    return lm.values(base, suppressed)


def test_aecs_conventions_by_hand() -> None:
    assert _values({"name": "aecs"})["aecs"] == pytest.approx(4.0)  # 4 records / 1 class
    assert _values({"name": "aecs", "suppressed": "as_class"})["aecs"] == pytest.approx(3.0)
    assert aecs(np.array([3, 2]), 0, "as_class") == pytest.approx(2.5)  # no suppression: same
    assert aecs(np.array([3, 2]), 1, "as_class") == pytest.approx(2.0)  # 6 / (2 + 1)


def test_entropy_conventions_by_hand() -> None:
    root = _values({"name": "entropy"})["entropy"]
    assert root == pytest.approx(2 * math.log2(6))  # each suppressed record: -log2(1/6)
    assert _values({"name": "entropy", "suppressed": "not_charged"})["entropy"] == 0.0
    # ARX's non-monotonic variant: -(1 log2(1/2) + 1 log2(1/2)) over the suppressed group
    assert _values({"name": "entropy", "suppressed": "group"})["entropy"] == pytest.approx(2.0)


@pytest.mark.parametrize(
    ("gs", "expected"),
    [(0.5, 1 / 3), (0.25, 1 / 6), (0.75, 1 / 3), (0.0, 0.0), (1.0, 1 / 3)],
)
def test_loss_gs_factor_by_hand(gs: float, expected: float) -> None:
    # kept: 4 records x share 1/3; suppressed: 2 records; min gF n/D, max n (ARX)
    assert _values({"name": "loss", "gs_factor": gs})["loss"] == pytest.approx(expected)


def test_factors_follow_arx() -> None:
    assert (MetricSpec(gs_factor=0.5).g_factor, MetricSpec(gs_factor=0.5).s_factor) == (1, 1)
    assert (MetricSpec(gs_factor=0.2).g_factor, MetricSpec(gs_factor=0.2).s_factor) == (1, 0.4)
    spec = MetricSpec(gs_factor=0.8)
    assert spec.g_factor == pytest.approx(0.4) and spec.s_factor == 1


@pytest.mark.parametrize(
    ("metric", "fragment"),
    [
        (
            {"name": "loss", "gs_factor": 1.5},
            "gs_factor must be <= 1, got 1.5 (ARX's generalization/suppression",
        ),
        ({"name": "aecs", "gs_factor": 0.3}, "applies to the loss metric"),
        ({"name": "aecs", "suppressed": "root"}, "must be one of released, as_class"),
        ({"name": "height", "suppressed": "root"}, "has none"),
        ({"name": "loss", "gs": 0.3}, "unknown parameter 'gs'"),
    ],
)
def test_bad_metric_options_are_config_errors(metric, fragment) -> None:
    with pytest.raises(ConfigError) as info:
        parse_metric(metric)
    assert fragment in str(info.value)


def test_job_files_carry_the_options_and_the_json_states_them() -> None:
    import sdckit

    job = job_from_dict({"metric": {"name": "loss", "gs_factor": 0.3}})
    assert parse_metric(job.metric).gs_factor == 0.3
    schema = Schema.from_roles(quasi_identifying=["a"], hierarchies={"a": HIER})
    result = sdckit.anonymize(
        DATA, schema, [KAnonymity(2)], suppression_limit=0.5,
        metric={"name": "entropy", "suppressed": "group"},
    )  # fmt: skip
    conventions = result.to_dict()["metric_conventions"]
    assert conventions["non_uniform_entropy_suppressed"] == "group"
    assert conventions["aecs_suppressed"] == "released"


def test_default_gs_factor_keeps_the_adult_calibration() -> None:
    from sdckit.algorithms.optimal import optimal
    from sdckit.datasets import load_adult

    df, h = load_adult()
    schema = Schema.from_roles(quasi_identifying=list(df.columns), hierarchies=h)
    out = optimal(df, schema, [KAnonymity(5)], metric={"name": "loss", "gs_factor": 0.5})
    assert out.details["metric_value"] == pytest.approx(0.5731509655759612, rel=1e-12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lattice_case(), st.sampled_from([0.0, 0.2, 0.5, 0.7, 1.0]), st.integers(0, 2))
def test_optimal_equals_exhaustive_under_the_conventions(case, gs, which) -> None:
    df, schema, models, limit, _ = case
    metric = [
        MetricSpec("loss", gs_factor=gs),
        MetricSpec("aecs", suppressed="as_class"),
        MetricSpec("entropy", suppressed=["root", "not_charged", "group"][int(gs * 10) % 3]),
    ][which]
    _check_against_exhaustive(df, schema, models, limit, metric)


def test_evaluate_states_both_drisk_conventions() -> None:
    import sdckit

    # 3 records, 2 attributes; sd of the protected columns: a -> 1, b -> 1
    x = pd.DataFrame({"a": [1.0, 2.0, 3.0], "b": [1.0, 2.0, 3.0]})
    xm = pd.DataFrame({"a": [1.0, 2.4, 3.0], "b": [1.0, 2.0, 3.4]})  # rows 2, 3: one outside
    xm.iloc[0] = [1.3, 1.3]  # row 1: both outside the +-0.05 sd interval
    doc = sdckit.evaluate(x, xm)
    # sdcMicro >= 5.5.2: no row has every attribute inside
    assert _find(doc, "sdcmicro_drisk") == pytest.approx(0.0)
    # sdcMicro < 5.5.2: rows 2 and 3 have at most 1 attribute outside
    assert _find(doc, "sdcmicro_drisk_at_most_one_outside") == pytest.approx(2 / 3)
    assert _find(doc, "sdcmicro_drisk_all_inside") is None
    rule = _find(doc, "sdcmicro_drisk_rule")
    assert "== 0" in rule and "%in% 0:1" in rule


def _find(doc, key):
    """The value of ``key`` anywhere in a nested JSON document."""
    if isinstance(doc, dict):
        if key in doc:
            return doc[key]
        for v in doc.values():
            got = _find(v, key)
            if got is not None:
                return got
    return None


@pytest.mark.parametrize("metric", ["loss", "height", "precision", "discernibility"])
def test_ties_are_reported_with_the_rule(tmp_path, metric) -> None:
    import sdckit

    data = pd.DataFrame({"a": ["a1", "a2", "a1", "a2"], "b": ["b1", "b2", "b2", "b1"]})
    hierarchies = {
        "a": Hierarchy([["a1", "A"], ["a2", "A"]], name="a"),
        "b": Hierarchy([["b1", "B"], ["b2", "B"]], name="b"),
    }
    schema = Schema.from_roles(quasi_identifying=["a", "b"], hierarchies=hierarchies)
    result = sdckit.anonymize(data, schema, [KAnonymity(2)], metric=metric)
    ties = result.to_dict()["optimum_ties"]
    assert ties["count"] == 2
    assert ties["transformations"] == [{"a": 0, "b": 1}, {"a": 1, "b": 0}]
    assert result.transformation == {"a": 0, "b": 1}  # lowest level sum, then lexicographic
    assert "lexicographic" in ties["rule"]
    html = anonymization_report(result).write_html(tmp_path / "r.html").read_text()
    assert "2 transformations share the optimal value" in html
