"""Tests: total variation distances of 1-way and 2-way marginals (hand-computed values and
invariants)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from sdckit.errors import DataError, ParameterError
from sdckit.utility.marginals import marginal_distances


def test_hand_computed_one_and_two_way_distances() -> None:
    original = pd.DataFrame({"a": ["x", "x", "y", "y"], "b": ["u", "v", "u", "v"]})
    other = pd.DataFrame({"a": ["x", "y", "y", "y"], "b": ["u", "u", "u", "v"]})
    d = marginal_distances(original, other)
    # a: (1/2, 1/2) vs (1/4, 3/4) -> 1/2 (1/4 + 1/4) = 1/4; b: same -> 1/4
    assert d.one_way == {"a": pytest.approx(0.25), "b": pytest.approx(0.25)}
    # joint cells xu xv yu yv: (1/4 each) vs (1/4, 0, 1/2, 1/4) -> 1/2 (0 + 1/4 + 1/4 + 0)
    assert d.two_way == {"a x b": pytest.approx(0.25)}
    assert d.to_dict()["tvd_2way_mean"] == pytest.approx(0.25)
    same = marginal_distances(original, original.iloc[::-1])
    assert same.tvd_1way_mean == 0.0 and same.tvd_2way_mean == 0.0
    disjoint = marginal_distances(original, original.assign(a="z"), ["a"])
    assert disjoint.one_way["a"] == 1.0 and disjoint.two_way == {}


def test_numeric_columns_are_binned_at_the_originals_quantiles() -> None:
    original = pd.DataFrame({"v": np.arange(1.0, 11.0)})  # 1..10
    # two bins: the median edge 5.5 -> original 5 | 5; other 8 below, 2 above
    other = pd.DataFrame({"v": [1.0, 2, 3, 4, 5, 1, 2, 3, 9, 10]})
    d = marginal_distances(original, other, numeric_bins=2)
    assert d.one_way["v"] == pytest.approx(0.5 * (abs(0.5 - 0.8) + abs(0.5 - 0.2)))
    with_nan = marginal_distances(original, other.assign(v=[np.nan] * 10), numeric_bins=2)
    assert with_nan.one_way["v"] == 1.0  # missing is a category of its own


def test_bad_arguments_are_named() -> None:
    df = pd.DataFrame({"a": [1, 2]})
    with pytest.raises(ParameterError, match="numeric_bins"):
        marginal_distances(df, df, numeric_bins=0)
    with pytest.raises(DataError, match="b"):
        marginal_distances(df, df, ["b"])


@settings(max_examples=60, deadline=None)
@given(
    a=st.lists(st.sampled_from("xyz"), min_size=1, max_size=30),
    b=st.lists(st.sampled_from("xyz"), min_size=1, max_size=30),
    seed=st.integers(0, 1000),
)
# disjoint 2-way tables: summed shares gave 1.0000000000000002
@example(a=["x"], b=["x", "x", "y", "y", "y", "y", "z", "z", "z"], seed=1)
def test_marginals_never_differ_more_than_their_joint(a: list[str], b: list[str], seed: int):
    """TVD lies in [0, 1], is symmetric in the files, and a marginal's TVD is at most the
    joint's (summing cells cannot increase the L1 distance)."""
    rng = np.random.default_rng(seed)
    x = pd.DataFrame({"a": a, "c": rng.choice(["p", "q"], len(a))})
    y = pd.DataFrame({"a": b, "c": rng.choice(["p", "q"], len(b))})
    d = marginal_distances(x, y)
    back = marginal_distances(y, x)
    assert 0.0 <= d.tvd_2way_mean <= 1.0
    assert d.one_way == pytest.approx(back.one_way) and d.two_way == pytest.approx(back.two_way)
    assert max(d.one_way.values()) <= d.two_way["a x c"] + 1e-12
