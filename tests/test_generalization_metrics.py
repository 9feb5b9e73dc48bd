"""Generalization metrics: hand-computed values on two small tables, both entry points."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from sdckit.algorithms.optimal import prepare_base
from sdckit.core.hierarchy import Hierarchy
from sdckit.core.release import AlgorithmOutput
from sdckit.core.schema import Schema
from sdckit.errors import ConfigError
from sdckit.models import KAnonymity
from sdckit.utility.generalization import (
    LatticeMetrics,
    MetricSpec,
    aggregate_losses,
    output_metrics,
    parse_metric,
)

HX = Hierarchy([["a", "ab", "*"], ["b", "ab", "*"], ["c", "cd", "*"], ["d", "cd", "*"]], name="x")
HY = Hierarchy([["1", "*"], ["2", "*"]], name="y")
SCHEMA = Schema.from_roles(quasi_identifying=["x", "y"], hierarchies={"x": HX, "y": HY})


def _release(df, levels, suppressed):
    """An AlgorithmOutput built by hand (labels at ``levels``, '*' where suppressed)."""
    out = df.copy()
    share = {}
    for q, h, lv in (("x", HX, levels[0]), ("y", HY, levels[1])):
        labels = h.generalize(df[q], lv)
        under = h.leaves_under(lv)[h.levels[lv][h.leaf_index(df[q])]] / len(h.leaves)
        out[q] = np.where(suppressed, "*", labels)
        share[q] = np.where(suppressed, 1.0, under)
    return AlgorithmOutput(
        out, share, np.asarray(suppressed), transformation={"x": levels[0], "y": levels[1]}
    )


def _lattice_values(df, levels, suppressed_classes_of):
    base, _ = prepare_base(df, SCHEMA, [KAnonymity(1)])
    fs = base.rollup(levels)
    supp = suppressed_classes_of(fs)
    return LatticeMetrics(base, "loss").values(fs, supp)


def test_no_suppression_hand_computed():
    """(a,1),(b,1),(c,2),(d,2) at levels (1, 0): classes (ab,1)x2, (cd,2)x2.

    loss_x = (4*2/4 - 1)/(4 - 1) = 1/3, loss_y = 0 -> geometric sqrt(4/3) - 1;
    precision = 1 - 4*(1/2)/(4*2) = 0.75; DM = 8; AECS = 2; entropy = 4 * -log2(1/2) = 4;
    height = 1; iloss = 4 * (2 - 1)/4 = 1.
    """
    df = pd.DataFrame({"x": ["a", "b", "c", "d"], "y": ["1", "1", "2", "2"]})
    m = output_metrics(df, _release(df, (1, 0), [False] * 4), SCHEMA)
    assert m["loss"] == pytest.approx(math.sqrt(4 / 3) - 1, abs=1e-15)
    assert m["precision"] == pytest.approx(0.75)
    assert m["discernibility"] == 8
    assert m["aecs"] == 2
    assert m["non_uniform_entropy"] == pytest.approx(4.0)
    assert m["height"] == 1
    assert m["iloss"] == pytest.approx(1.0)
    lat = _lattice_values(df, (1, 0), lambda fs: np.zeros(fs.n_classes, dtype=bool))
    assert lat["loss"] == pytest.approx(m["loss"], abs=1e-15)
    assert lat["precision"] == pytest.approx(1 - m["precision"])
    assert lat["discernibility"] == 8 and lat["aecs"] == 2 and lat["height"] == 1
    assert lat["entropy"] == pytest.approx(4.0)
    assert lat["iloss"] == pytest.approx(1.0)


def test_with_suppression_hand_computed():
    """(a,1),(a,1),(b,1),(c,2) at (0, 0) with (b,1) and (c,2) suppressed.

    loss_x = (2/4 + 2 - 1)/3 = 0.5, loss_y = (2/2 + 2 - 2)/2 = 0.5 -> 0.5;
    precision = 1 - (2*1 + 2*1)/(4*2) = 0.5; DM = 2^2 + 2*4 = 12; AECS = 2;
    entropy = -log2(1/4)*2 (x of b, c) - log2(3/4) (y of b) - log2(1/4) (y of c);
    iloss = 2*(3/4) + 2*(1/2) = 2.5.
    """
    df = pd.DataFrame({"x": ["a", "a", "b", "c"], "y": ["1", "1", "1", "2"]})
    supp = np.array([False, False, True, True])
    m = output_metrics(df, _release(df, (0, 0), supp), SCHEMA)
    entropy = 2 + 2 - math.log2(3 / 4) + 2
    assert m["loss"] == pytest.approx(0.5, abs=1e-15)
    assert m["precision"] == pytest.approx(0.5)
    assert m["discernibility"] == 12
    assert m["aecs"] == 2
    assert m["non_uniform_entropy"] == pytest.approx(entropy)
    assert m["height"] == 0
    assert m["iloss"] == pytest.approx(2.5)
    lat = _lattice_values(df, (0, 0), lambda fs: fs.counts < 2)
    assert lat["loss"] == pytest.approx(0.5, abs=1e-15)
    assert lat["precision"] == pytest.approx(0.5)
    assert lat["discernibility"] == 12 and lat["aecs"] == 2
    assert lat["entropy"] == pytest.approx(entropy)
    assert lat["iloss"] == pytest.approx(2.5)


def test_aggregates_and_weights():
    losses = np.array([1 / 3, 0.0])
    w = np.ones(2)
    assert aggregate_losses(losses, w, "geometric") == pytest.approx(math.sqrt(4 / 3) - 1)
    assert aggregate_losses(losses, w, "arithmetic") == pytest.approx(1 / 6)
    assert aggregate_losses(losses, w, "sum") == pytest.approx(1 / 3)
    assert aggregate_losses(losses, w, "max") == pytest.approx(1 / 3)
    w2 = np.array([3.0, 1.0])
    assert aggregate_losses(losses, w2, "geometric") == pytest.approx((4 / 3) ** 0.75 - 1)
    assert aggregate_losses(losses, w2, "arithmetic") == pytest.approx(0.25)


def test_lower_bounds_are_exact_without_suppression_and_monotone():
    df = pd.DataFrame({"x": ["a", "a", "b", "c", "d"], "y": ["1", "2", "1", "2", "2"]})
    base, _ = prepare_base(df, SCHEMA, [KAnonymity(1)])
    nodes = np.array([[i, j] for i in range(3) for j in range(2)])
    for name in ("loss", "precision", "entropy", "height", "iloss"):
        lm = LatticeMetrics(base, name)
        lb = lm.lower_bounds(nodes)
        for node, bound in zip(nodes, lb, strict=True):
            fs = base.rollup(node.tolist())
            assert lm.cost(fs, np.zeros(fs.n_classes, bool)) == pytest.approx(bound, abs=1e-12)
            supp = fs.counts < 2
            assert lm.cost(fs, supp) >= bound - 1e-12
        grid = lb.reshape(3, 2)
        assert (np.diff(grid, axis=0) >= -1e-12).all() and (np.diff(grid, axis=1) >= -1e-12).all()


def test_parse_metric_errors():
    assert parse_metric({"name": "non_uniform_entropy"}).name == "entropy"
    with pytest.raises(ConfigError, match="metric.name"):
        parse_metric("speed")
    with pytest.raises(ConfigError, match="aggregate"):
        parse_metric({"name": "loss", "aggregate": "median"})
    with pytest.raises(ConfigError, match="unknown parameter .wieghts.*did you mean .weights."):
        parse_metric({"name": "loss", "wieghts": {}})
    with pytest.raises(ConfigError, match="not quasi-identifiers"):
        MetricSpec("loss", weights={"z": 1.0}).weight_vector(["x"])


def test_local_recoding_output_without_transformation():
    """Without a transformation (Mondrian/TDS outputs): precision from shares, height None.

    Same release as the no-suppression case: x shares 1/2 (minimum 1/4) -> penalty
    (1/2 - 1/4)/(3/4) = 1/3 per record, y at its minimum -> 0; precision = 1 - (4/3)/8 = 5/6.
    Entropy with F(g) from the values released as g: still 4 bits.
    """
    df = pd.DataFrame({"x": ["a", "b", "c", "d"], "y": ["1", "1", "2", "2"]})
    out = _release(df, (1, 0), [False] * 4)
    out.transformation = None
    m = output_metrics(df, out, SCHEMA)
    assert m["precision"] == pytest.approx(5 / 6)
    assert m["height"] is None
    assert m["non_uniform_entropy"] == pytest.approx(4.0)
    assert m["loss"] == pytest.approx(math.sqrt(4 / 3) - 1, abs=1e-15)
    assert m["discernibility"] == 8 and m["aecs"] == 2
