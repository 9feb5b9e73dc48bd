"""The contract every masking method, algorithm, privacy model, table method and hierarchy
builder keeps.

One table of calls per family, one set of checks: the input is never modified, the same seed
gives the same output, the record a method publishes is JSON-ready, and a bad parameter raises
an sdckit input error (never a bare Python exception). The tests loop over the registries
(:data:`sdckit.algorithms.registry.ALGORITHMS`, :data:`sdckit.models.MODELS`,
:data:`sdckit.tables.registry.TABLE_METHODS`,
:data:`sdckit.core.hierarchy_registry.HIERARCHY_BUILDERS` and the masking methods of a job file,
:data:`sdckit.masking.pipeline.METHODS`),
so a method added to one without an entry in its table here fails a ``test_every_..._is_covered``
test naming what to add. A method added to ``sdckit.masking.__all__`` without an entry here
fails ``test_every_masking_method_is_covered``; the method objects of a job file keep the same
contract (``test_masking_spec_contract``). Every algorithm meets every model: a combination its
traits refuse is refused with a ConfigError, the others keep the contract (or, where listed in
:data:`REFUSED_ON_THIS_DATA`, are refused with an sdckit input error). The local engine equals
the Spark engine for every method whose traits say it runs on Spark
(``tests/test_contracts_spark.py``).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import sdckit
from sdckit import masking
from sdckit.algorithms.options import parse_options
from sdckit.algorithms.registry import ALGORITHMS
from sdckit.core.hierarchy import Hierarchy
from sdckit.core.hierarchy_registry import HIERARCHY_BUILDERS
from sdckit.core.schema import Schema
from sdckit.errors import ConfigError, ParameterError, SdcInputError
from sdckit.masking.pipeline import METHODS
from sdckit.models import MODELS, KAnonymity, LDiversity, TCloseness, check, model_traits
from sdckit.tables.registry import TABLE_METHODS
from table_support import PTABLE

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


#: the masking method classes of a job file by their job-file name (aliases folded)
MASKING_SPECS = {name: METHODS.load(name) for name in METHODS.names()}
#: exports that are the method objects of a job file and their pipeline (contract below)
SPEC_EXPORTS = {cls.__name__ for cls in MASKING_SPECS.values()} | {"MaskingMethod", "Pipeline"}


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
    assert set(SPEC_CALLS) == set(MASKING_SPECS), _missing(
        "masking method", MASKING_SPECS, SPEC_CALLS
    )


@pytest.mark.parametrize("name", sorted(SPEC_CALLS))
def test_masking_spec_contract(name: str):
    cls = MASKING_SPECS[name]
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
def _missing(family: str, registry, calls: dict) -> str:
    """The message of a ``test_every_..._is_covered`` test: what to add where."""
    absent = sorted(set(registry) - set(calls))
    stale = sorted(set(calls) - set(registry))
    return (
        f"every registered {family} needs contract data in tests/test_contracts.py: add "
        f"{absent} (a valid call and one with a bad parameter)"
        + (f"; remove {stale}, no longer registered" if stale else "")
    )


def _flat(name: str, values) -> Hierarchy:
    return Hierarchy([[str(v), "*"] for v in sorted(set(map(str, values)))], name=name)


SCHEMA = Schema.from_roles(
    quasi_identifying=["c", "g", "z"],
    sensitive=["region", "y", "guard"],
    hierarchies={
        "c": _flat("c", DATA["c"]),
        "g": _flat("g", DATA["g"]),
        "z": Hierarchy(
            [[str(v), "low" if v < 50 else "high", "*"] for v in sorted(set(DATA["z"].tolist()))],
            name="z",
        ),
    },
    types={"z": "integer", "y": "decimal"},
)
#: the data of the algorithms and models: three QIs, a categorical (region), a numeric (y) and
#: a guarding-node (guard) sensitive attribute, households (hh)
ANON_DATA = DATA[["c", "g", "z", "region", "y", "hh"]].assign(guard=DATA["region"])
REGION = Hierarchy([["R", "RS", "*"], ["S", "RS", "*"]], name="region")
POPULATION = pd.concat([ANON_DATA, ANON_DATA.iloc[:30]], ignore_index=True)[["c", "g", "z"]]
TEMPLATE = {"quasi_identifiers": ["c"], "value": "R", "h": 0.9}

#: registered model -> (job-file parameters of a valid model, the same with one bad parameter)
MODEL_CALLS: dict[str, tuple[dict, dict]] = {
    "k_anonymity": ({"k": 2}, {"k": 0}),
    "l_diversity": ({"attribute": "region", "l": 2}, {"attribute": "region", "l": 0}),
    "t_closeness": ({"attribute": "region", "t": 0.4}, {"attribute": "region", "t": -0.1}),
    "delta_presence": (
        {"delta_min": 0.0, "delta_max": 0.9, "population": POPULATION},
        {"delta_min": 0.5, "delta_max": 0.1, "population": POPULATION},
    ),
    "k_map": ({"k": 2, "population": POPULATION}, {"k": 0, "population": POPULATION}),
    "lkc": (
        {"L": 2, "K": 2, "C": 0.9, "sensitive_values": {"region": ["R"]}},
        {"L": 0, "K": 2, "C": 0.9},
    ),
    "average_risk": ({"threshold": 0.5}, {"threshold": 1.5}),
    "sample_uniqueness": ({"threshold": 0.2}, {"threshold": -0.1}),
    "population_uniqueness": (
        {"threshold": 0.5, "sampling_fraction": 0.5},
        {"threshold": 0.5, "sampling_fraction": 1.5},
    ),
    "differential_privacy": ({"epsilon": 2.0, "delta": 0.01}, {"epsilon": 0.0, "delta": 0.01}),
    "ke_anonymity": ({"attribute": "y", "k": 2, "e": 0.5}, {"attribute": "y", "k": 0, "e": 0.5}),
    "epsilon_m_anonymity": (
        {"attribute": "y", "epsilon": 0.5, "m": 2},
        {"attribute": "y", "epsilon": -1, "m": 2},
    ),
    "personalized_privacy": (
        {"attribute": "region", "guarding_node": "guard", "hierarchy": REGION, "p_breach": 0.7},
        {"attribute": "region", "guarding_node": "guard", "hierarchy": REGION, "p_breach": 1.5},
    ),
    "multir_k_anonymity": ({"k": 2, "person": "hh"}, {"k": 0, "person": "hh"}),
    "xy_privacy": ({"y": ["region"], "k": 2}, {"y": ["region"], "k": 0}),
    "alpha_k_anonymity": (
        {"attribute": "region", "alpha": 0.8, "k": 2},
        {"attribute": "region", "alpha": 1.5, "k": 2},
    ),
    "confidence_bounding": (
        {"attribute": "region", "templates": [TEMPLATE]},
        {"attribute": "region", "templates": [{**TEMPLATE, "h": 1.5}]},
    ),
    "beta_likeness": ({"attribute": "region", "beta": 2.0}, {"attribute": "region", "beta": -1}),
    "delta_disclosure": (
        {"attribute": "region", "delta": 2.0},
        {"attribute": "region", "delta": -1},
    ),
    "profitability_prosecutor": (
        {"publisher_benefit": 1000, "adversary_gain": 300, "adversary_cost": 100},
        {"publisher_benefit": -1},
    ),
    "profitability_journalist": (
        {"population": POPULATION, "adversary_cost": 100},
        {"population": POPULATION, "adversary_gain": float("inf")},
    ),
    "profitability_prosecutor_no_attack": (
        {"adversary_gain": 300, "adversary_cost": 200},
        {"adversary_cost": -4},
    ),
    "profitability_journalist_no_attack": (
        {"population": POPULATION, "adversary_gain": 300, "adversary_cost": 200},
        {"population": POPULATION, "publisher_loss": "much"},
    ),
}
#: registered algorithm -> (options of a valid run, options with one bad option)
ALGORITHM_CALLS: dict[str, tuple[dict, dict]] = {
    "optimal": ({}, {"no_such_option": 1}),
    "mondrian": ({"relaxed": True}, {"relaxed": "yes"}),
    "datafly": ({}, {"no_such_option": 1}),
    "tds": ({"class_attribute": "region"}, {"class_attribute": 3}),
    "anatomy": ({"l": 2}, {"l": 1}),
    "safepub": ({"insecure_reproducible_noise": True, "search_steps": 20}, {"search_steps": 0}),
}
#: (algorithm, model) pairs the traits allow but this small data set cannot give: refused
#: with an sdckit input error (Anatomy's 2-diverse QI-groups meet l-diversity only; TDS
#: cannot reach presence within 10% suppression)
REFUSED_ON_THIS_DATA = {
    ("anatomy", "ke_anonymity"),
    ("anatomy", "epsilon_m_anonymity"),
    ("tds", "delta_presence"),
    ("tds", "k_map"),
    ("tds", "profitability_journalist_no_attack"),
}


def _model(name: str):
    return MODELS.load(name).from_dict(MODEL_CALLS[name][0], f"models[0].{name}")


def refused_by_traits(algorithm: str, model: str) -> bool:
    """Whether the traits say ``algorithm`` cannot give ``model``: a differential privacy
    model needs a differential privacy algorithm, an algorithm may take only some models
    (``models``) or only the models checkable per partition (``per_partition``), or refuse a
    model whatever the data (``refused_models``); a model judged by its classes' hierarchy
    levels (``full_domain``) needs a full-domain generalization (``needs_hierarchy``)."""
    a, m = ALGORITHMS.traits(algorithm), MODELS.traits(model)
    return (
        m.differential_privacy != a.differential_privacy
        or (a.models is not None and model not in a.models)
        or (a.per_partition and not m.per_partition)
        or model in dict(a.refused_models)
        or (m.full_domain and not a.needs_hierarchy)
    )


def test_every_algorithm_and_model_is_covered():
    assert set(ALGORITHM_CALLS) == set(ALGORITHMS), _missing(
        "algorithm", ALGORITHMS, ALGORITHM_CALLS
    )
    assert set(MODEL_CALLS) == set(MODELS), _missing("privacy model", MODELS, MODEL_CALLS)
    for name in ALGORITHMS:  # every algorithm declares its options (algorithms.options)
        assert parse_options(name, ALGORITHM_CALLS[name][0]).spec_name == name
    assert {a for a, _ in REFUSED_ON_THIS_DATA} <= set(ALGORITHMS)
    assert {m for _, m in REFUSED_ON_THIS_DATA} <= set(MODELS)


@pytest.mark.parametrize("algorithm", list(ALGORITHMS))
@pytest.mark.parametrize("model", list(MODELS))
def test_algorithm_and_model_contract(algorithm: str, model: str):
    data = ANON_DATA
    before = data.copy(deep=True)
    good, bad = ALGORITHM_CALLS[algorithm]
    args = (data, SCHEMA, [_model(model)])
    kwargs = {"suppression_limit": 0.1, "algorithm": algorithm, **good}
    if refused_by_traits(algorithm, model):
        with pytest.raises(ConfigError):
            sdckit.anonymize(*args, seed=1, **kwargs)
        pd.testing.assert_frame_equal(data, before)
        return
    if (algorithm, model) in REFUSED_ON_THIS_DATA:
        with pytest.raises(SdcInputError):
            sdckit.anonymize(*args, seed=1, **kwargs)
        pd.testing.assert_frame_equal(data, before)
        return
    first = sdckit.anonymize(*args, seed=1, **kwargs)
    pd.testing.assert_frame_equal(data, before)  # the input is never modified
    second = sdckit.anonymize(*args, seed=1, **kwargs)
    pd.testing.assert_frame_equal(first.data, second.data)  # same seed, same output
    assert first.to_dict()["metrics"] == second.to_dict()["metrics"]
    json.dumps(first.to_dict())  # the published record is JSON-ready
    # (Anatomy adds the l-diversity of its QI-groups after the job's models)
    assert first.verified and first.models_satisfied[0] == args[2][0].name
    with pytest.raises(ParameterError):
        sdckit.anonymize(*args, **{**kwargs, "suppression_limit": 1.5})
    with pytest.raises(SdcInputError):
        sdckit.anonymize(*args, **{**kwargs, "no_such_option": 1})
    with pytest.raises(SdcInputError):
        sdckit.anonymize(*args, **{**kwargs, **bad})
    if not ALGORITHMS.traits(algorithm).metric:  # a metric cannot steer it: refused
        with pytest.raises(ConfigError):
            sdckit.anonymize(*args, **{**kwargs, "metric": "loss"})


def test_an_unknown_algorithm_is_refused_with_the_names():
    with pytest.raises(ConfigError, match="^algorithm must be one of optimal, mondrian, "):
        sdckit.anonymize(ANON_DATA, SCHEMA, [KAnonymity(2)], algorithm="mondrain")


@pytest.mark.parametrize("name", list(MODELS))
def test_model_contract(name: str):
    cls = MODELS.load(name)
    assert cls.spec_name == name  # each class declares its registered name
    good, bad = MODEL_CALLS[name]
    model = _model(name)
    json.dumps(model.describe())  # what a report publishes of it is JSON-ready
    traits = MODELS.traits(name)
    assert bool(model.sensitive_attributes) == traits.sensitive
    assert ("hierarchy" in cls.model_fields) == (traits.hierarchy_when is not None)
    assert model_traits(model) == traits
    before = ANON_DATA.copy(deep=True)
    first = check(ANON_DATA, SCHEMA, [model])
    pd.testing.assert_frame_equal(ANON_DATA, before)  # the input is never modified
    assert first.to_dict() == check(ANON_DATA, SCHEMA, [model]).to_dict()  # deterministic
    json.dumps(first.to_dict())
    with pytest.raises(ParameterError, match=rf"^models\[0\]\.{name}"):
        cls.from_dict(bad, f"models[0].{name}")


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


# --- table methods -----------------------------------------------------------------------------
#: registered table method -> (options of a valid call, the same with one bad option);
#: ``ptable`` is the path of :data:`PTABLE` and ``cell_keys`` the tables' cell keys, given
#: where named
TABLE_CALLS: dict[str, tuple[dict, dict]] = {
    "optimal": ({"time_limit": 30}, {"time_limit": -1}),
    "simple": ({}, {"time_limit": 0}),
    "hypercube": ({}, {"time_limit": -1}),
    "modular": ({}, {"time_limit": -1}),
    "rounding": ({"base": 3}, {"base": 0}),
    "cta": ({}, {"time_limit": -1}),
    "cell_key": ({"ptable": "ptable", "cell_keys": "cell_keys"}, {"cell_keys": "cell_keys"}),
}
TABLE_DIMENSIONS = ["c", "g", "region"]


@pytest.fixture(scope="module")
def ptable_path(tmp_path_factory) -> str:
    path = tmp_path_factory.mktemp("ptable") / "ptable.txt"
    path.write_text(PTABLE, encoding="utf-8")
    return str(path)


def _table_options(name: str, which: int, tables: list, ptable_path: str) -> dict:
    """The options of :data:`TABLE_CALLS` with the p-table's path and the cell keys."""
    from sdckit.tables.cell_key import cell_keys

    keys = [cell_keys(DATA, t, seed=5) for t in tables]
    given = {"ptable": ptable_path, "cell_keys": keys[0] if len(keys) == 1 else keys}
    return {
        k: given.get(v, v) if isinstance(v, str) else v for k, v in TABLE_CALLS[name][which].items()
    }


def _table_arrays(table) -> list[np.ndarray]:
    return [table.value.copy(), table.freq.copy(), table.cost.copy(), table.top.copy()]


def test_every_table_method_is_covered():
    assert set(TABLE_CALLS) == set(TABLE_METHODS), _missing(
        "table method", TABLE_METHODS, TABLE_CALLS
    )


@pytest.mark.parametrize("name", list(TABLE_METHODS))
def test_table_method_contract(name: str, ptable_path: str):
    from sdckit.tables.linked import LinkedTables, protect_linked
    from sdckit.tables.protect import protect
    from sdckit.tables.rules import FrequencyRule
    from sdckit.tables.table import Table

    traits = TABLE_METHODS.traits(name)
    table = Table.from_microdata(DATA, TABLE_DIMENSIONS)
    rules = [FrequencyRule(3)] if traits.needs_rules else []
    options = _table_options(name, 0, [table], ptable_path)
    before = _table_arrays(table)
    first = protect(table, rules, name, options=options)
    for a, b in zip(before, _table_arrays(table), strict=True):
        np.testing.assert_array_equal(a, b)  # the input is never modified
    second = protect(table, rules, name, options=options)
    pd.testing.assert_frame_equal(first.cells(), second.cells())  # deterministic
    drop = lambda d: {k: v for k, v in d.items() if not k.endswith("_seconds")}  # noqa: E731
    assert drop(first.summary()) == drop(second.summary())
    json.dumps(first.summary())  # the published record is JSON-ready
    assert first.safe and first.method == name
    assert ("deviation" in first.summary()) == (traits.kind != "suppression")
    if not traits.needs_rules:
        assert first.primary.count == 0
    with pytest.raises(SdcInputError):
        protect(table, rules, name, options=_table_options(name, 1, [table], ptable_path))
    # linked tables: the method protects tables sharing cells consistently, or is refused
    tables = [table, Table.from_microdata(DATA, ["c", "g"])]
    linked_options = _table_options(name, 0, tables, ptable_path)
    if traits.linked:
        linked = protect_linked(LinkedTables(tables), rules, name, options=linked_options)
        json.dumps(linked.summary())
    else:
        with pytest.raises(ConfigError):
            protect_linked(LinkedTables(tables), rules, name, options=linked_options)


def test_an_unknown_table_method_is_refused_with_the_names():
    from sdckit.tables.protect import protect
    from sdckit.tables.table import Table

    table = Table.from_microdata(DATA, ["c"])
    with pytest.raises(ConfigError, match="^unknown table method 'optimum'; use one of optimal, "):
        protect(table, [], "optimum")


# --- hierarchy builders ------------------------------------------------------------------------
#: registered builder -> (parameters of a valid spec, the same with one bad parameter, the
#: column the hierarchy is built for)
BUILDER_CALLS: dict[str, tuple[dict, dict, list]] = {
    "interval": ({"widths": [10, 50]}, {"widths": [0]}, DATA["z"].tolist()),
    "order": ({"group_sizes": [2]}, {"group_sizes": [0]}, DATA["c"].tolist()),
    "masking": ({"mask_char": "#"}, {"mask_char": 5}, ["10115", "10117", "20095", "20097"]),
    "date": (
        {"levels": ["month", "year"]},
        {"levels": ["fortnight"]},
        ["2020-01-05", "2020-02-11", "2021-07-30"],
    ),
}


def _levels(hierarchy: Hierarchy) -> list[list]:
    return [list(level) for level in hierarchy.labels]


def test_every_hierarchy_builder_is_covered():
    assert set(BUILDER_CALLS) == set(HIERARCHY_BUILDERS), _missing(
        "hierarchy builder", HIERARCHY_BUILDERS, BUILDER_CALLS
    )


@pytest.mark.parametrize("name", list(HIERARCHY_BUILDERS))
def test_hierarchy_builder_contract(name: str):
    import importlib

    cls = HIERARCHY_BUILDERS.load(name)
    assert cls.spec_name == name
    good, bad, values = BUILDER_CALLS[name]
    spec = cls.from_dict(good, f"a.hierarchy.{name}")
    assert cls.from_dict(spec.to_dict()) == spec  # its job-file form reads back
    json.dumps(spec.to_entry())
    column = pd.Series(values)
    before = column.copy()
    first = spec.build(column, name="col")
    pd.testing.assert_series_equal(column, before)  # the input is never modified
    second = spec.build(column, name="col")
    assert _levels(first) == _levels(second)  # deterministic
    # the spec runs the builder function its traits name, with the same parameters
    module, _, attribute = HIERARCHY_BUILDERS.traits(name).function.partition(":")
    function = getattr(importlib.import_module(module), attribute)
    direct = function(column, **spec.to_dict(), name="col")
    assert _levels(direct) == _levels(first)
    # a bad parameter: refused when the spec is read, checked (before the data is read) or
    # built, always with an sdckit input error (a HierarchyError after reading)
    with pytest.raises(SdcInputError):
        made = cls.from_dict(bad, f"a.hierarchy.{name}")
        made.check()
        made.build(column, name="col")


# --- masking as plan + release (what the Spark engine runs) -----------------------------------
@pytest.mark.parametrize("name", sorted(SPEC_CALLS))
def test_masking_spec_plans_or_says_why_not(name: str):
    """A method the Spark engine runs has a plan (or a Spark step of its own) and a
    deterministic plan released on the whole table is the local method; any other method says
    why the Spark engine refuses it."""
    from sdckit.masking.stats import PandasStats

    cls = MASKING_SPECS[name]
    method = cls(**SPEC_CALLS[name][0])
    if "spark" not in cls.engines:
        assert cls.spark_refusal, f"{name}: give the reason the Spark engine refuses it"
        return
    plan = method.plan(PandasStats(DATA), 3)
    if cls.spark_hook is not None:  # released by its own Spark step
        assert list(plan.columns) == [c for c in method.masked_columns()]
        return
    assert list(plan.columns) == [c for c in method.masked_columns()]
    if not plan.random:
        released = plan.release(DATA, None)
        pd.testing.assert_frame_equal(released.data, method.apply(DATA, 3)[-1].data)
