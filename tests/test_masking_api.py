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


def test_no_module_shadows_an_exported_function():
    import importlib
    import pkgutil
    import types

    modules = {info.name for info in pkgutil.iter_modules(masking.__path__)}
    for name in sorted(modules):
        importlib.import_module(f"sdckit.masking.{name}")
    assert not modules & set(masking.__all__)
    for name in masking.__all__:
        assert not isinstance(getattr(masking, name), types.ModuleType), name


#: former name -> (name now, the module that also still answers the former name, a valid call)
FORMER_NAMES = {
    "additive_noise": ("noise", None, {"columns": ["x"], "alpha": 0.5, "seed": 1}),
    "round_to_base": ("rounding", "other", {"columns": ["x"], "base": 5}),
    "resample": ("resampling", "other", {"columns": ["x"], "t": 3, "seed": 1}),
    "rank_swap": ("rank_swapping", "swapping", {"columns": ["x"], "p_percent": 20, "seed": 1}),
    "data_swap": (
        "data_swapping",
        "swapping",
        {"swap_columns": ["x"], "match_columns": ["g"], "rate": 0.5, "seed": 1},
    ),
    "record_swap": (
        "record_swapping",
        "swapping",
        {
            "household": "hh",
            "similar": ["g"],
            "hierarchy": ["region"],
            "quasi_identifiers": ["c"],
            "swap_rate": 0.3,
            "seed": 1,
        },
    ),
    "sample": ("sampling", "recoding", {"fraction": 0.5, "seed": 1}),
    "global_recode": ("global_recoding", "recoding", {"column": "x", "bins": 3}),
    "top_bottom_code": ("top_bottom_coding", "recoding", {"column": "x", "top": 40.0}),
}


@pytest.mark.parametrize("old", sorted(FORMER_NAMES))
def test_former_function_names_still_work_with_a_deprecation_warning(old: str) -> None:
    import importlib

    assert set(FORMER_NAMES) == set(masking.RENAMED)
    new, module, kwargs = FORMER_NAMES[old]
    assert masking.RENAMED[old] == new
    rng = np.random.default_rng(0)
    hh = np.repeat(np.arange(20), 3)
    data = pd.DataFrame(
        {
            "x": rng.normal(30, 10, 60),
            "g": np.array(list("ab"))[hh % 2],
            "c": rng.choice(list("pqr"), 60),
            "hh": hh,
            "region": np.array(list("RST"))[hh % 3],
        }
    )
    expected = getattr(masking, new)(data, **kwargs)
    owners = [masking] + ([importlib.import_module(f"sdckit.masking.{module}")] if module else [])
    for owner in owners:
        with pytest.warns(DeprecationWarning, match=rf"{old} is deprecated: .*\.{new} "):
            function = getattr(owner, old)
        assert function is getattr(masking, new)
        got = function(data, **kwargs)
        pd.testing.assert_frame_equal(got.data, expected.data)
        assert got.record() == expected.record()
    with pytest.raises(AttributeError):
        getattr(importlib.import_module("sdckit.masking.microaggregation"), old)


def test_the_former_methods_module_forwards_with_a_deprecation_warning() -> None:
    import sdckit.masking.methods as methods
    from sdckit.masking import pipeline, spec

    with pytest.warns(DeprecationWarning, match="import Pipeline from sdckit.masking.pipeline"):
        from sdckit.masking.methods import Pipeline
    assert Pipeline is masking.Pipeline
    for name in dir(methods):
        with pytest.warns(DeprecationWarning, match=rf"import {name} from sdckit\.masking"):
            value = getattr(methods, name)
        home = pipeline if hasattr(pipeline, name) and name in pipeline.__all__ else None
        if home is None:
            home = spec if name in spec.__all__ else masking
        assert value is getattr(home, name), name
    with pytest.raises(AttributeError):
        methods.no_such_name  # noqa: B018
