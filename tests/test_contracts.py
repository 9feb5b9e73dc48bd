"""The contract every masking method, algorithm and privacy model keeps.

One table of calls, one set of checks: the input is never modified, the same seed gives the same
output, the record a method publishes is JSON-ready, and a bad parameter raises an sdckit input
error (never a bare Python exception). A method added to ``sdckit.masking.__all__`` without an
entry here fails ``test_every_masking_method_is_covered``; the method objects of a job file
(:mod:`sdckit.masking.pipeline`, every class of ``METHODS``) keep the same contract
(``test_masking_spec_contract``).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import sdckit
from sdckit import masking
from sdckit.core.hierarchy import Hierarchy
from sdckit.core.schema import Schema
from sdckit.errors import ParameterError, SdcInputError
from sdckit.masking.pipeline import METHODS
from sdckit.models import KAnonymity, LDiversity, TCloseness

_RNG = np.random.default_rng(7)
DATA = pd.DataFrame(
    {
        "x": _RNG.normal(50, 10, 60).round(3),
        "y": _RNG.normal(5, 2, 60).round(3),
        "z": _RNG.integers(0, 100, 60),
        "c": _RNG.choice(list("abcd"), 60),
        "g": _RNG.choice(list("pq"), 60),
        "hh": np.repeat(np.arange(20), 3),
        "region": np.repeat(_RNG.choice(list("RS"), 20), 3),
    }
)

#: method -> (keyword arguments of a valid call, keyword arguments with one bad parameter);
#: ``seed`` is added to methods that take one.
MASKING_CALLS: dict[str, tuple[dict, dict]] = {
    "noise": ({"columns": ["x", "y"], "alpha": 0.5}, {"columns": ["x"], "alpha": -1}),
    "multiplicative_noise": ({"columns": ["x"], "sd": 0.1}, {"columns": ["x"], "sd": -0.1}),
    "rounding": ({"columns": ["x"], "base": 5}, {"columns": ["x"], "base": 0}),
    "resampling": ({"columns": ["x", "y"], "t": 5}, {"columns": ["x"], "t": 0}),
    "mdav": ({"columns": ["x", "y"], "k": 3}, {"columns": ["x"], "k": 0}),
    "vmdav": ({"columns": ["x", "y"], "k": 3}, {"columns": ["x"], "k": 0}),
    "optimal_univariate": ({"column": "x", "k": 3}, {"column": "x", "k": 0}),
    "individual_ranking": ({"columns": ["x", "y"], "k": 3}, {"columns": ["x"], "k": 0}),
    "categorical_microaggregation": ({"columns": ["c"], "k": 3}, {"columns": ["c"], "k": 0}),
    "kanonymity_microaggregation": (
        {"quasi_identifiers": ["x", "y"], "k": 3},
        {"quasi_identifiers": ["x"], "k": 0},
    ),
    "fuzzy_microaggregation": ({"columns": ["x", "y"], "k": 5}, {"columns": ["x"], "m": 1.0}),
    "rank_swapping": (
        {"columns": ["x", "y"], "p_percent": 10},
        {"columns": ["x"], "p_percent": -5},
    ),
    "rank_swap_p_buckets": ({"columns": ["x"], "p": 10}, {"columns": ["x"], "p": -5}),
    "rank_swap_p_distribution": ({"columns": ["x"], "p": 10}, {"columns": ["x"], "p": -5}),
    "data_swapping": (
        {"swap_columns": ["x"], "match_columns": ["g"], "rate": 0.3},
        {"swap_columns": ["x"], "rate": 2.0},
    ),
    "record_swapping": (
        {
            "household": "hh",
            "similar": ["g"],
            "hierarchy": ["region"],
            "quasi_identifiers": ["c"],
            "swap_rate": 0.2,
        },
        {
            "household": "hh",
            "similar": ["g"],
            "hierarchy": ["region"],
            "quasi_identifiers": ["c"],
            "swap_rate": 1.5,
        },
    ),
    "pram": ({"columns": ["c"], "p_diagonal": 0.7}, {"columns": ["c"], "p_diagonal": 1.5}),
    "randomized_response": (
        {"column": "g", "p": 0.7, "insecure_reproducible_noise": True},
        {"column": "g", "p": 2.0},
    ),
    "local_suppression": (
        {"quasi_identifiers": ["c", "g"], "k": 3},
        {"quasi_identifiers": ["c"], "k": 0},
    ),
    "sampling": ({"fraction": 0.5}, {"fraction": 1.5}),
    "global_recoding": ({"column": "x", "bins": 4}, {"column": "x", "bins": 0}),
    "group_categories": (
        {"column": "c", "mapping": {"a": "ab", "b": "ab", "c": "c", "d": "d"}},
        {"column": "no_such_column", "mapping": {"a": "b"}},
    ),
    "top_bottom_coding": ({"column": "x", "top": 60}, {"column": "x", "top_quantile": 2.0}),
}
#: methods whose "bad call" above is a wrong column, not a parameter out of its domain
NOT_A_PARAMETER_DOMAIN = {"group_categories"}
#: exports that are not masking methods of a DataFrame (estimators and measures)
NOT_METHODS = {
    "MaskResult",
    "information_loss",
    "invariant_matrix",
    "pram_estimate",
    "rr_estimate",
}
#: exports that are the method objects of a job file and their pipeline (contract below)
SPEC_EXPORTS = {METHODS.load(name).__name__ for name in METHODS.names()} | {
    "MaskingMethod",
    "Pipeline",
}


def _takes_seed(name: str) -> bool:
    import inspect

    return "seed" in inspect.signature(getattr(masking, name)).parameters


def _call(name: str, kwargs: dict, seed: int | None = 3):
    kwargs = dict(kwargs)
    if seed is not None and _takes_seed(name):
        kwargs["seed"] = seed
    return getattr(masking, name)(DATA, **kwargs)


def test_every_masking_method_is_covered():
    assert set(masking.__all__) - NOT_METHODS - SPEC_EXPORTS == set(MASKING_CALLS)


@pytest.mark.parametrize("name", sorted(MASKING_CALLS))
def test_masking_contract(name: str):
    good, bad = MASKING_CALLS[name]
    before = DATA.copy(deep=True)
    first = _call(name, good)
    pd.testing.assert_frame_equal(DATA, before)  # the input is never modified
    second = _call(name, good)
    pd.testing.assert_frame_equal(first.data, second.data)  # same seed, same output
    json.dumps(first.record())  # the published record is JSON-ready
    with pytest.raises(SdcInputError) as err:
        _call(name, bad)
    assert isinstance(err.value, ParameterError) or name in NOT_A_PARAMETER_DOMAIN, err.value


# --- the method objects of a job file ----------------------------------------------------------
#: job-file name -> (parameters of a valid step, the same with one bad parameter)
SPEC_CALLS: dict[str, tuple[dict, dict]] = {
    "noise": ({"columns": ["x", "y"], "alpha": 0.5}, {"columns": ["x"], "alpha": -1}),
    "multiplicative_noise": ({"columns": ["x"], "sd": 0.1}, {"columns": ["x"], "sd": -0.1}),
    "microaggregation": ({"columns": ["x", "y"], "k": 3}, {"columns": ["x"], "k": 0}),
    "rank_swapping": (
        {"columns": ["x", "y"], "p_percent": 10},
        {"columns": ["x"], "p_percent": -5},
    ),
    "data_swapping": (
        {"columns": ["c"], "match_columns": ["g"], "rate": 0.3},
        {"columns": ["c"], "rate": 2.0},
    ),
    "record_swapping": (
        {
            "household": "hh",
            "similar": ["g"],
            "hierarchy": ["region"],
            "quasi_identifiers": ["c"],
            "swap_rate": 0.2,
        },
        {
            "household": "hh",
            "similar": ["g"],
            "hierarchy": ["region"],
            "quasi_identifiers": ["c"],
            "swap_rate": 1.5,
        },
    ),
    "pram": ({"columns": ["c"], "p_diagonal": 0.7}, {"columns": ["c"], "p_diagonal": 1.5}),
    "randomized_response": (
        {"column": "g", "p": 0.7, "insecure_reproducible_noise": True},
        {"column": "g", "p": 2.0},
    ),
    "rounding": ({"columns": ["x"], "base": 5}, {"columns": ["x"], "base": 0}),
    "resampling": ({"columns": ["x", "y"], "t": 5}, {"columns": ["x"], "t": 0}),
    "sampling": ({"fraction": 0.5}, {"fraction": 1.5}),
    "global_recoding": ({"columns": ["x"], "bins": 4}, {"columns": ["x"], "bins": 0}),
    "top_bottom_coding": ({"columns": ["x"], "top": 60}, {"columns": ["x"], "top_quantile": 2.0}),
    "local_suppression": ({"columns": ["c", "g"], "k": 3}, {"columns": ["c"], "k": 0}),
}


def test_every_masking_spec_is_covered():
    assert set(SPEC_CALLS) == set(METHODS.names())


@pytest.mark.parametrize("name", sorted(SPEC_CALLS))
def test_masking_spec_contract(name: str):
    cls = METHODS.load(name)
    good, bad = SPEC_CALLS[name]
    method = cls(**good)
    assert cls.from_dict(good, f"methods[0].{name}") == method  # Python and job file agree
    assert cls.from_dict(method.to_dict()) == method  # its job-file form reads back
    json.dumps(method.to_entry())
    before = DATA.copy(deep=True)
    first = method.apply(DATA, 3)
    pd.testing.assert_frame_equal(DATA, before)  # the input is never modified
    second = method.apply(DATA, 3)
    pd.testing.assert_frame_equal(first[-1].data, second[-1].data)  # same seed, same output
    again = method.apply(DATA, np.random.default_rng(3))
    pd.testing.assert_frame_equal(
        again[-1].data, method.apply(DATA, np.random.default_rng(3))[-1].data
    )  # a generator in the same state, the same output
    for result in first + again:
        json.dumps(result.record())  # the published records are JSON-ready
    with pytest.raises(ParameterError):
        cls(**bad)
    with pytest.raises(ParameterError, match=rf"^methods\[0\]\.{name}"):
        cls.from_dict(bad, f"methods[0].{name}")


# --- algorithms and privacy models ------------------------------------------------------------
def _flat(name: str, values) -> Hierarchy:
    return Hierarchy([[str(v), "*"] for v in sorted(set(map(str, values)))], name=name)


SCHEMA = Schema.from_roles(
    quasi_identifying=["c", "g", "z"],
    sensitive=["region"],
    hierarchies={
        "c": _flat("c", DATA["c"]),
        "g": _flat("g", DATA["g"]),
        "z": Hierarchy(
            [[str(v), "low" if v < 50 else "high", "*"] for v in sorted(set(DATA["z"].tolist()))],
            name="z",
        ),
    },
    types={"z": "integer"},
)
MODELS = {
    "k_anonymity": KAnonymity(3),
    "l_diversity": LDiversity("region", 2),
    "t_closeness": TCloseness("region", 0.4),
}


@pytest.mark.parametrize("algorithm", ["optimal", "datafly", "mondrian", "tds"])
@pytest.mark.parametrize("model", sorted(MODELS))
def test_algorithm_and_model_contract(algorithm: str, model: str):
    data = DATA[["c", "g", "z", "region"]]
    before = data.copy(deep=True)
    args = (data, SCHEMA, [MODELS[model]])
    first = sdckit.anonymize(*args, suppression_limit=0.1, algorithm=algorithm, seed=1)
    pd.testing.assert_frame_equal(data, before)
    second = sdckit.anonymize(*args, suppression_limit=0.1, algorithm=algorithm, seed=1)
    pd.testing.assert_frame_equal(first.data, second.data)
    json.dumps(first.to_dict())
    assert first.verified and first.models_satisfied == [MODELS[model].name]
    with pytest.raises(ParameterError):
        sdckit.anonymize(*args, suppression_limit=1.5, algorithm=algorithm)
    with pytest.raises(SdcInputError):
        sdckit.anonymize(*args, algorithm=algorithm, no_such_option=1)


@pytest.mark.parametrize(
    "make",
    [
        lambda: KAnonymity(0),
        lambda: LDiversity("region", 0),
        lambda: LDiversity("region", 2, variant="fancy"),
        lambda: TCloseness("region", -0.1),
    ],
)
def test_bad_model_parameters_raise_the_parameter_error(make):
    with pytest.raises(ParameterError):
        make()
