"""Tests: the masking methods as typed, frozen spec objects (sdckit.masking.pipeline).

One object per job-file entry: the same from Python and from a job file, written back by
``to_entry``/``to_entries`` (load -> dump -> load is the identity), refusing a bad parameter
with a ParameterError that names its key path, frozen, and applying exactly as the pipeline
of a mask job does.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pydantic
import pytest
import yaml

from sdckit import masking
from sdckit.errors import ConfigError, ParameterError
from sdckit.masking import (
    DataSwapping,
    GlobalRecoding,
    LocalSuppression,
    MaskingMethod,
    Microaggregation,
    MultiplicativeNoise,
    Noise,
    Pipeline,
    Pram,
    RandomizedResponse,
    RankSwapping,
    RecordSwapping,
    Resampling,
    Rounding,
    Sampling,
    TopBottomCoding,
)
from sdckit.masking.pipeline import METHODS, method_names, step_seeds


@pytest.fixture
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(3)
    n = 50
    return pd.DataFrame(
        {
            "a": rng.normal(50, 10, n),
            "b": rng.normal(0, 1, n),
            "i": rng.integers(0, 100, n),
            "c": rng.choice(["x", "y", "z"], n),
        }
    )


#: (the object built in Python, the same step as a job file writes it)
BUILT = [
    (
        Noise(["a", "b"], 0.2, "kim"),
        {"noise": {"columns": ["a", "b"], "alpha": 0.2, "method": "kim"}},
    ),
    (Noise("a"), {"additive_noise": {"columns": "a"}}),
    (MultiplicativeNoise(["a"], sd=0.05), {"multiplicative_noise": {"columns": ["a"], "sd": 0.05}}),
    (Microaggregation(["a", "b"], 4), {"microaggregation": {"columns": ["a", "b"], "k": 4}}),
    (
        Microaggregation(groups=[["a", "b"], ["i"]], centroid="median"),
        {"microaggregation": {"groups": [["a", "b"], ["i"]], "centroid": "median"}},
    ),
    (
        Microaggregation(["a"], method="fuzzy", m=2, tol=1e-4),
        {"microaggregation": {"columns": ["a"], "method": "fuzzy", "m": 2.0, "tol": 0.0001}},
    ),
    (
        RankSwapping(["a"], 10, "p_buckets"),
        {"rank_swapping": {"columns": ["a"], "p_percent": 10, "variant": "p_buckets"}},
    ),
    (
        DataSwapping(["c"], ["i"], 0.5),
        {"data_swapping": {"columns": ["c"], "match_columns": ["i"], "rate": 0.5}},
    ),
    (
        RecordSwapping("h", [["s"]], ["r", "d"], ["age"], swap_rate=0.1, carry_along=["x"]),
        {
            "record_swapping": {
                "household": "h",
                "similar": [["s"]],
                "hierarchy": ["r", "d"],
                "quasi_identifiers": ["age"],
                "swap_rate": 0.1,
                "carry_along": "x",
            }
        },
    ),
    (
        Pram(["c"], matrix={"c": {"x": {"x": 1.0}}}, invariant=True),
        {"pram": {"columns": ["c"], "matrix": {"c": {"x": {"x": 1.0}}}, "invariant": True}},
    ),
    (RandomizedResponse("c", 0.9), {"randomized_response": {"column": "c", "p": 0.9}}),
    (Rounding(["i"], 5), {"rounding": {"columns": ["i"], "base": 5}}),
    (Resampling(["a"], t=3), {"resampling": {"columns": ["a"], "t": 3}}),
    (Sampling(n=10, strata=["c"]), {"sampling": {"n": 10, "strata": ["c"]}}),
    (Sampling(0.5), {"sampling": {"fraction": 0.5}}),
    (
        GlobalRecoding(["a"], "breaks", breaks=[0, 50, 100]),
        {"global_recoding": {"columns": ["a"], "method": "breaks", "breaks": [0, 50, 100]}},
    ),
    (
        GlobalRecoding(["c"], mapping={"x": "xy", "y": "xy"}),
        {"global_recoding": {"columns": ["c"], "mapping": {"x": "xy", "y": "xy"}}},
    ),
    (
        TopBottomCoding(["a"], top_quantile=0.9, replace="mean"),
        {"top_bottom_coding": {"columns": ["a"], "top_quantile": 0.9, "replace": "mean"}},
    ),
    (
        LocalSuppression(["c", "i"], 2, importance=[2, 1]),
        {"local_suppression": {"columns": ["c", "i"], "k": 2, "importance": [2, 1]}},
    ),
    (
        Noise(["a"], allow_unchanged=True),
        {"noise": {"columns": ["a"], "allow_unchanged": True}},
    ),
]


def test_every_method_class_has_a_case() -> None:
    assert {type(obj) for obj, _ in BUILT} == {METHODS.load(name) for name in METHODS.names()}


@pytest.mark.parametrize(("obj", "entry"), BUILT, ids=lambda v: getattr(v, "spec_name", ""))
def test_python_and_job_file_give_the_same_object(obj: MaskingMethod, entry: dict) -> None:
    ((name, params),) = entry.items()
    assert METHODS.load(name).from_dict(params) == obj
    assert Pipeline.from_entries([entry]).steps == [obj]
    assert Pipeline.from_entries([(name, params)]).steps == [obj]  # (name, params) pairs too


@pytest.mark.parametrize(("obj", "entry"), BUILT, ids=lambda v: getattr(v, "spec_name", ""))
def test_to_entry_round_trips(obj: MaskingMethod, entry: dict) -> None:
    dumped = obj.to_entry()
    assert list(dumped) == [obj.spec_name]  # the canonical name, also for an alias
    assert Pipeline.from_entries([dumped]).steps == [obj]
    assert Pipeline.from_entries([dumped]).steps[0].to_entry() == dumped


def test_a_job_files_methods_list_loads_dumps_and_loads_back() -> None:
    text = """
methods:
  - microaggregation: {columns: [a, b], k: 4, method: vmdav, gamma: 0.5}
  - rank_swapping: {columns: [i], p_percent: 10}
  - top_bottom_coding: {columns: [a], top_quantile: 0.95, replace: mean}
  - pram: {columns: [c], p_diagonal: 0.7, allow_unchanged: true}
  - sampling: {fraction: 0.5}
"""
    loaded = Pipeline.from_entries(yaml.safe_load(text)["methods"])
    dumped = yaml.safe_dump({"methods": loaded.to_entries()})
    again = Pipeline.from_entries(yaml.safe_load(dumped)["methods"])
    assert again == loaded
    assert again.to_entries() == loaded.to_entries()
    assert Pipeline.from_dict(loaded.to_dict()) == loaded
    # a variant writes only its own parameters (fuzzy ones are no parameters of vmdav)
    assert set(loaded.steps[0].to_dict()) == {
        "columns",
        "k",
        "method",
        "groups",
        "centroid",
        "standardize",
        "gamma",
    }
    assert "allow_unchanged" not in loaded.steps[1].to_dict()
    assert loaded.steps[3].to_dict()["allow_unchanged"] is True


@pytest.mark.parametrize(
    ("entries", "fragment"),
    [
        ([{"noise": {"columns": ["a"], "alpha": -1}}], r"^methods\[0\]\.noise\.alpha must be > 0"),
        ([{"noise": {"alpha": 0.1}}], r"^methods\[0\]\.noise\.columns is required"),
        ([{"noise": {"columns": ["a"], "method": "pink"}}], r"^methods\[0\]\.noise\.method "),
        (
            [{"rounding": {"columns": ["a"], "base": 1}}, {"pram": {"columns": "c", "alpha": 2}}],
            r"^methods\[1\]\.pram\.alpha must be <= 1, got 2",
        ),
        ([{"rounding": {"columns": ["a"], "base": True}}], r"^methods\[0\]\.rounding\.base "),
        ([{"resampling": {"columns": ["a"], "t": 2.5}}], r"^methods\[0\]\.resampling\.t "),
        ([{"resampling": {"columns": [], "t": 2}}], r"^methods\[0\]\.resampling\.columns "),
        (
            [{"microaggregation": {"columns": ["a"], "method": "fuzzy", "gamma": 0.5}}],
            r"^methods\[0\]\.microaggregation\.gamma is not a parameter of method 'fuzzy'",
        ),
        (
            [{"microaggregation": {"columns": ["a"], "k": 0}}],
            r"^methods\[0\]\.microaggregation\.k must be >= 1",
        ),
        (
            [{"randomized_response": {"column": "c", "p": 0.5}}],
            r"^methods\[0\]\.randomized_response\.p must be > 0\.5",
        ),
        (
            [{"top_bottom_coding": {"columns": ["a"], "replace": "median"}}],
            r"^methods\[0\]\.top_bottom_coding\.replace must be one of threshold",
        ),
        (
            [{"noise": {"columns": ["a"], "allow_unchanged": "yes"}}],
            r"^methods\[0\]\.noise\.allow_unchanged must be true or false",
        ),
        ([{"sampling": {"fraction": 0.5, "n": 3}}], r"^methods\[0\]\.sampling: give exactly one"),
        ([{"rank_swapping": {"columns": ["a"], "p_percnt": 5}}], r"did you mean 'p_percent'"),
    ],
)
def test_bad_parameters_name_the_key_path(entries: list, fragment: str) -> None:
    with pytest.raises(ParameterError, match=fragment):
        Pipeline.from_entries(entries)


def test_bad_parameters_from_python_name_the_parameter() -> None:
    with pytest.raises(ParameterError, match=r"^noise: .*'alpha' must be > 0, got -1"):
        Noise(["a"], alpha=-1)
    with pytest.raises(ParameterError, match="at most 3 positional"):
        Noise(["a"], 0.1, "kim", True)  # allow_unchanged is keyword-only
    with pytest.raises(ParameterError, match="given twice"):
        Noise(["a"], columns=["b"])


def test_unknown_method_names_the_closest_one() -> None:
    with pytest.raises(ConfigError, match=r"^methods\[1\]: unknown .*did you mean 'noise'"):
        Pipeline.from_entries([{"rounding": {"columns": ["a"], "base": 2}}, {"noice": {}}])
    with pytest.raises(ConfigError, match=r"methods\[0\] must be a mapping with exactly one key"):
        Pipeline.from_entries([{"noise": {"columns": ["a"]}, "pram": {"columns": ["c"]}}])
    with pytest.raises(ConfigError, match="must be a list"):
        Pipeline.from_entries({"noise": {"columns": ["a"]}})


def test_objects_are_frozen() -> None:
    step = Noise(["a"], 0.2)
    with pytest.raises(pydantic.ValidationError):
        step.alpha = 0.5  # type: ignore[misc]
    changed = step.with_params(alpha=0.5)
    assert changed.alpha == 0.5 and step.alpha == 0.2
    with pytest.raises(ParameterError):
        step.with_params(alpha=0)
    assert Microaggregation(["a"]).with_params(method="vmdav", gamma=0.5).gamma == 0.5
    assert TopBottomCoding(["a"], top=3).with_params(replace="mean").replace == "mean"


def test_a_pipeline_step_draws_per_block_with_its_derived_seed(frame: pd.DataFrame) -> None:
    """A random step of a pipeline is its plan released block by block, block ``b`` drawing
    from ``block_rng(step seed, b)`` (the Spark engine's rule); the step's own ``apply``
    draws from one generator."""
    from sdckit.masking.blocks import block_rng
    from sdckit.masking.stats import PandasStats

    noise = Noise(columns=["a"])
    seed = step_seeds(11, 2)[1]  # step 1 of a pipeline run with seed 11
    plan = noise.plan(PandasStats(frame), seed)
    masked, records = Pipeline([Rounding(["i"], 5), noise]).apply(frame, seed=11)
    one_block = plan.release(frame, block_rng(seed, 0))
    pd.testing.assert_series_equal(masked["a"], one_block.data["a"])
    assert records[-1] == {**one_block.record(), "step": 1}
    blocks, _ = Pipeline([Rounding(["i"], 5), noise]).apply(frame, seed=11, block_rows=20)
    parts = [plan.release(frame.iloc[lo:lo + 20], block_rng(seed, b)) for b, lo in
             enumerate(range(0, len(frame), 20))]  # fmt: skip
    want = pd.concat([p.data["a"] for p in parts])
    pd.testing.assert_series_equal(blocks["a"], want)
    assert not blocks["a"].equals(masked["a"])
    # the step's own apply: one generator; an integer seed and a generator seeded with it
    # draw the same numbers
    direct = noise.apply(frame, seed)
    gen = noise.apply(frame, np.random.default_rng(seed))
    pd.testing.assert_frame_equal(gen[-1].data, direct[-1].data)
    pd.testing.assert_frame_equal(
        direct[-1].data, plan.release(frame, np.random.default_rng(seed)).data
    )


def test_pipeline_refuses_unchanged_perturbation_unless_allowed() -> None:
    const = pd.DataFrame({"x": np.full(10, 3.0)})
    with pytest.raises(Exception, match=r"^methods\[0\]\.noise changed none"):
        Pipeline([Noise(["x"])]).apply(const, seed=1)
    out, _ = Pipeline([Noise(["x"], allow_unchanged=True)]).apply(const, seed=1)
    pd.testing.assert_frame_equal(out, const)
    # a deterministic, non-perturbative method may leave data that already fits unchanged
    out, _ = Pipeline([Rounding(["x"], 1)]).apply(const, seed=1)
    assert out["x"].tolist() == const["x"].tolist()


def test_registry_and_exports() -> None:
    assert METHODS.load("noise") is METHODS.load("additive_noise") is Noise
    assert method_names() == sorted(METHODS.all_names())
    assert {name for name in METHODS.all_names() if METHODS.traits(name).must_change} == {
        "noise",
        "additive_noise",
        "multiplicative_noise",
        "rank_swapping",
        "data_swapping",
        "record_swapping",
        "pram",
        "randomized_response",
        "resampling",
    }
    assert masking.Noise is Noise and masking.Pipeline is Pipeline
    assert "alpha" in Noise.scalar_parameters() and "columns" not in Noise.scalar_parameters()
    assert "replace" in TopBottomCoding.scalar_parameters()
    assert Microaggregation.parameter_names()[:3] == ("columns", "k", "method")
    with pytest.raises(TypeError):
        MaskingMethod()  # abstract: a step must say how it masks


def test_importing_sdckit_does_not_load_pydantic() -> None:
    code = "import sys, sdckit; sys.exit('pydantic' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0
