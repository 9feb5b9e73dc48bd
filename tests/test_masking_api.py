"""Tests: the public ``sdckit.masking.<method>(data, columns, ..., seed=...)`` interface."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import sdckit.masking as masking
from sdckit.masking.randomization import pram as pram_function
from sdckit.masking.suppression import local_suppression as ls_function


def test_every_export_is_callable_and_returns_mask_results():
    for name in masking.__all__:
        assert callable(getattr(masking, name)), name
    with pytest.raises(AttributeError):
        masking.no_such_method  # noqa: B018


def test_pram_and_local_suppression_are_the_functions_even_after_module_imports():
    import sdckit.masking.randomization  # noqa: F401 - importing a module must not shadow them
    import sdckit.masking.suppression  # noqa: F401

    assert masking.pram is pram_function and masking.local_suppression is ls_function
    df = pd.DataFrame({"c": list("aabbc") * 4, "k": list("xyxyx") * 4})
    a = masking.pram(df, ["c"], p_diagonal=0.6, seed=4)
    b = pram_function(df, ["c"], p_diagonal=0.6, seed=4)
    pd.testing.assert_frame_equal(a.data, b.data)
    assert a.record() == b.record()
    s = masking.local_suppression(df, ["c", "k"], k=3)
    assert s.record() == ls_function(df, ["c", "k"], k=3).record()


def test_lazy_exports_are_the_module_functions():
    from sdckit.masking.microaggregation import mdav
    from sdckit.masking.swapping import rank_swapping

    assert masking.mdav is mdav and masking.rank_swapping is rank_swapping
    x = pd.DataFrame({"v": np.arange(10.0)})
    assert masking.rank_swapping(x, ["v"], p_percent=20, seed=1).method == "rank_swap"

