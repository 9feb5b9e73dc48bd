"""Global models use the suppression budget as ARX does: the smallest classes are suppressed
until the model holds (average re-identification risk, sample uniqueness), and the optimal
search finds the exhaustive optimum under that rule on Adult (six of its QIs, 720 nodes: the
nine take 50 s of exhaustive search, too long for the suite)."""

from __future__ import annotations

import numpy as np
import pytest

from sdckit.algorithms.optimal import optimal, prepare_base, suppression_budget
from sdckit.core.schema import Schema
from sdckit.datasets import load_adult
from sdckit.models import AverageRiskThreshold, KAnonymity
from sdckit.models.risk_thresholds import SampleUniquenessThreshold
from sdckit.utility.generalization import LatticeMetrics, MetricSpec
from test_optimal import _exhaustive

QIS = ["sex", "age", "race", "marital-status", "education", "native-country"]


def _adult_exhaustive_average_risk(df, schema, threshold, limit):
    """Every node; per node a plain loop over the class sizes, smallest first, until
    #classes / #records <= threshold (or the budget is spent)."""
    base, _ = prepare_base(df, schema, [AverageRiskThreshold(threshold)])
    budget = suppression_budget(limit, len(df))
    lm = LatticeMetrics(base, MetricSpec("loss"))
    best = None
    for levels in np.ndindex(*[q.height for q in base.quasi_identifiers]):
        fs = base.rollup(levels)
        order = sorted(range(fs.n_classes), key=lambda c: (int(fs.counts[c]), c))
        classes, records, used, j = fs.n_classes, int(fs.counts.sum()), 0, 0
        while records and classes / records > threshold:
            size = int(fs.counts[order[j]])
            if used + size > budget:
                break
            used, classes, records, j = used + size, classes - 1, records - size, j + 1
        if records and classes / records > threshold:
            continue
        suppressed = np.zeros(fs.n_classes, dtype=bool)
        suppressed[order[:j]] = True
        cost = lm.cost(fs, suppressed)
        key = (cost, sum(levels), levels)
        if best is None or key < best:
            best = key
    return best


@pytest.mark.parametrize("limit", [0.0, 0.05])
def test_average_risk_uses_the_budget_on_adult(limit) -> None:
    df, h = load_adult()
    schema = Schema.from_roles(quasi_identifying=QIS, hierarchies={q: h[q] for q in QIS})
    expected = _adult_exhaustive_average_risk(df, schema, 0.1, limit)
    out = optimal(df, schema, [AverageRiskThreshold(0.1)], suppression_limit=limit)
    assert out.details["metric_value"] == pytest.approx(expected[0], rel=1e-9)
    assert tuple(out.transformation[q] for q in QIS) == expected[2]


def test_the_budget_buys_a_cheaper_transformation_on_adult() -> None:
    df, h = load_adult()
    schema = Schema.from_roles(quasi_identifying=QIS, hierarchies={q: h[q] for q in QIS})
    strict = optimal(df, schema, [AverageRiskThreshold(0.1)], suppression_limit=0.0)
    relaxed = optimal(df, schema, [AverageRiskThreshold(0.1)], suppression_limit=0.05)
    assert relaxed.suppressed_records > 0
    assert relaxed.details["metric_value"] < strict.details["metric_value"]


def test_sample_uniqueness_suppresses_singletons_only() -> None:
    import pandas as pd

    from sdckit.core.hierarchy import Hierarchy

    # 10 records: classes of sizes 4, 3, 1, 1, 1 at level 0; uniqueness 3/10 > 0.15
    df = pd.DataFrame({"x": list("aaaabbbcde")})
    h = Hierarchy([[v, "*"] for v in "abcde"], name="x")
    schema = Schema.from_roles(quasi_identifying=["x"], hierarchies={"x": h})
    out = optimal(df, schema, [SampleUniquenessThreshold(0.15)], suppression_limit=0.2)
    # two singletons suppressed: 1 / 8 = 0.125 <= 0.15
    assert out.transformation == {"x": 0} and out.suppressed_records == 2


def test_hypothesis_reference_agrees_on_a_mixed_case() -> None:
    df, h = load_adult()
    qis = ["sex", "race", "marital-status"]
    schema = Schema.from_roles(quasi_identifying=qis, hierarchies={q: h[q] for q in qis})
    models = [KAnonymity(3), AverageRiskThreshold(0.05)]
    expected = _exhaustive(df, schema, models, 0.01, MetricSpec("loss"))
    out = optimal(df, schema, models, suppression_limit=0.01)
    assert tuple(out.transformation[q] for q in qis) == expected[1][1]
