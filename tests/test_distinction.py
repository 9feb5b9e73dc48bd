"""Distinction and separation of QI combinations: the bottom-up walk against pandas."""

from __future__ import annotations

from itertools import combinations

import pandas as pd
import pytest

import sdckit.risk.distinction as distinction_module
import sdckit.risk.subsets as subsets
from risk_support import near_unique_keys
from sdckit.core.frequency import frequency_set
from sdckit.risk.distinction import distinction_separation


def _pandas_reference(frame: pd.DataFrame) -> tuple[dict[str, float], dict[str, float]]:
    n = len(frame)
    dist, sep = {}, {}
    for k in range(1, frame.shape[1] + 1):
        for combo in combinations(frame.columns, k):
            sizes = frame.groupby(list(combo)).size().to_numpy().astype(float)
            dist[",".join(combo)] = len(sizes) / n
            sep[",".join(combo)] = 1.0 - float((sizes * (sizes - 1)).sum()) / (n * (n - 1))
    return dist, sep


@pytest.mark.parametrize("path", ["numpy", "numba", "top-down"])
def test_near_unique_equals_pandas_and_pinned(path, monkeypatch):
    if path == "numba":
        monkeypatch.setattr(subsets, "KERNEL_ROWS", 0)
    if path == "top-down":
        monkeypatch.setattr(distinction_module, "MAX_WALK_BYTES", 0)
    frame = near_unique_keys()
    dist, sep = distinction_separation(frequency_set(frame, list(frame.columns)))
    ref_dist, ref_sep = _pandas_reference(frame)
    assert list(dist) == list(ref_dist)  # every combination, smallest first
    assert dist == ref_dist  # counts over n: exact
    assert sep == pytest.approx(ref_sep, rel=0, abs=1e-15)
    # the values of the implementation this walk replaced (sdckit ce1818a)
    assert dist["age,zip"] == 0.8056666666666666
    assert sep["age,zip"] == pytest.approx(0.9998254973880182, abs=1e-15)
    assert dist["sex,month"] == 0.008
    assert sep["sex,month"] == pytest.approx(0.9583965766366567, abs=1e-15)


def test_duplicates_and_max_size():
    frame = pd.DataFrame({"a": ["x", "x", "y", "y"], "b": ["1", "1", "1", "2"], "c": ["p"] * 4})
    dist, sep = distinction_separation(frequency_set(frame, ["a", "b", "c"]), 2)
    assert list(dist) == ["a", "b", "c", "a,b", "a,c", "b,c"]
    # a,b: classes {x1: 2, y1: 1, y2: 1} -> 3/4 distinct; 2 of 12 ordered pairs agree
    assert dist["a,b"] == 0.75 and sep["a,b"] == pytest.approx(1 - 2 / 12)
    assert dist["c"] == 0.25 and sep["c"] == 0.0
