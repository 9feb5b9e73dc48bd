"""Tests: the spec layer (sdckit.core.spec) -- one typed, frozen, validated object per
privacy model, metric, algorithm's options, hierarchy builder and job document, built alike
from Python and from a job file, serialized back to the job file's form."""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from pydantic import ValidationError

from sdckit import models as m
from sdckit.algorithms.options import MondrianOptions, parse_options
from sdckit.core.hierarchy_builders import order_hierarchy
from sdckit.core.hierarchy_specs import BUILDERS, IntervalBuilder
from sdckit.core.spec import Spec
from sdckit.errors import ConfigError, ParameterError
from sdckit.jobs.config import job_from_dict, load_job, model_classes
from sdckit.jobs.spec import MODEL_NAMES, JobSpec
from sdckit.utility.generalization import MetricSpec, parse_metric

POPULATION = pd.DataFrame({"a": ["x", "y", "y"]})
DISEASE = order_hierarchy(["flu", "cold"], groups=[{"resp": ["flu", "cold"]}], name="d")

#: One instance of every privacy model, built from Python.
MODELS = [
    m.KAnonymity(5),
    m.LDiversity("s", 3),
    m.LDiversity("s", 2.5, "entropy"),
    m.LDiversity("s", 3, "recursive", c=2),
    m.TCloseness("s", 0.2, "ordered"),
    m.TCloseness("s", 0.4, "hierarchical", DISEASE),
    m.DeltaPresence(0.1, 0.6, POPULATION),
    m.KMap(3, POPULATION),
    m.KMap(3, estimator="poisson", sampling_fraction=0.1),
    m.LKCPrivacy(2, 4, 0.5, {"s": ["flu"]}),
    m.AverageRiskThreshold(0.1),
    m.SampleUniquenessThreshold(0.05),
    m.PopulationUniquenessThreshold(0.01, sampling_fraction=0.1),
    m.PopulationUniquenessThreshold(0.01, "zayatz", population_size=1000),
]


def test_the_job_file_names_are_the_models_spec_names() -> None:
    assert set(model_classes()) == set(MODEL_NAMES)
    for name, cls in model_classes().items():
        assert name in (cls.spec_name, *cls.spec_aliases)


@pytest.mark.parametrize("model", MODELS, ids=lambda md: md.name)
def test_a_model_from_python_equals_the_model_from_its_job_file_entry(model) -> None:
    params = {k: getattr(model, k) for k in type(model).model_fields}
    rebuilt = type(model).from_dict(params, "models[0]")
    assert rebuilt.describe() == model.describe()
    assert rebuilt.to_dict() == model.to_dict()
    # keyword and positional construction agree
    assert type(model)(**params).to_dict() == model.to_dict()


@pytest.mark.parametrize("model", MODELS, ids=lambda md: md.name)
def test_models_are_frozen(model) -> None:
    name = next(iter(type(model).model_fields))
    with pytest.raises(ValidationError, match="frozen"):
        setattr(model, name, getattr(model, name))


def test_plain_models_round_trip_through_the_job_file_form() -> None:
    for model in MODELS:
        entry = model.to_entry()
        ((name, params),) = entry.items()
        if any(isinstance(v, str) and v.startswith("<") for v in params.values()):
            continue  # holds data (a population, a hierarchy): the job file names a file
        text = yaml.safe_dump({"models": [entry]})
        ((name2, params2),) = yaml.safe_load(text)["models"][0].items()
        assert model_classes()[name2].from_dict(params2).to_dict() == model.to_dict()


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: m.KAnonymity(0), "k-anonymity: parameter 'k' must be >= 1, got 0"),
        (lambda: m.KAnonymity(True), "parameter 'k' must be an integer, got True"),
        (lambda: m.KAnonymity(2.5), "parameter 'k' must be an integer, got 2.5"),
        (lambda: m.KAnonymity("5"), "parameter 'k' must be an integer, got '5'"),
        (lambda: m.KAnonymity(kk=3), "unknown parameter 'kk'; allowed: k; did you mean 'k'?"),
        (lambda: m.KAnonymity(3, 4), "takes at most 1 positional parameters"),
        (lambda: m.LDiversity("s", 2, "distinc"), "did you mean 'distinct'?"),
        (lambda: m.LDiversity("s", 2.5), "parameter 'l' must be an integer for distinct"),
        (lambda: m.TCloseness("s", float("nan")), "parameter 't' must be a finite number"),
        (lambda: m.AverageRiskThreshold(1.0), "parameter 'threshold' must be < 1, got 1.0"),
        (lambda: m.KMap(3), "without a 'population' table give 'estimator'"),
        (lambda: m.DeltaPresence(0.7, 0.2, POPULATION), "must not exceed 'delta_max'"),
        (lambda: m.LKCPrivacy(1, 2, 0.5, {"s": []}), "must be a non-empty list of values"),
    ],
)
def test_bad_model_parameters_raise_the_parameter_error(build, message) -> None:
    with pytest.raises(ParameterError) as info:
        build()
    assert message in str(info.value)


def test_job_file_errors_name_the_key_path() -> None:
    with pytest.raises(ParameterError) as info:
        m.KAnonymity.from_dict({"k": 0}, "'job.yaml': models[0].k_anonymity")
    assert str(info.value) == "'job.yaml': models[0].k_anonymity.k must be >= 1, got 0"
    with pytest.raises(ParameterError) as info:
        m.KAnonymity.from_dict({"k": 2, "kk": 3}, "'job.yaml': models[0].k_anonymity")
    assert str(info.value).startswith("'job.yaml': models[0].k_anonymity: unknown parameter 'kk'")


def test_numpy_values_are_accepted_and_normalised() -> None:
    model = m.KAnonymity(np.int64(4))
    assert model.k == 4 and type(model.k) is int
    assert m.KAnonymity(4.0).k == 4
    assert m.TCloseness("s", np.float32(0.5)).t == 0.5


def test_prepared_state_is_private_and_a_replaced_model_starts_unprepared() -> None:
    from sdckit.core.frequency import frequency_set

    data = pd.DataFrame({"a": ["x", "y", "y"], "s": ["flu", "cold", "flu"]})
    base = frequency_set(data, ["a"], sensitive=["s"])
    model = m.TCloseness("s", 0.5)
    model.prepare(base)
    assert model.evaluate(base).satisfied is not None
    assert m.TCloseness("s", 0.5) == m.TCloseness("s", 0.5)
    fresh = model.with_params(t=0.3)
    assert fresh.t == 0.3 and model.t == 0.5
    with pytest.raises(ConfigError, match="prepare"):
        fresh.evaluate(base)


def test_metric_spec_is_parsed_once_with_aliases_and_key_paths() -> None:
    assert parse_metric("dm") == MetricSpec("discernibility")
    assert parse_metric(None) == MetricSpec()
    spec = MetricSpec("loss", gs_factor=0.2)
    assert parse_metric(spec) is spec
    with pytest.raises(ParameterError, match=r"metric\.aggregate must be one of geometric"):
        parse_metric({"name": "loss", "aggregate": "median"})
    with pytest.raises(ParameterError, match="applies to the loss metric"):
        MetricSpec("aecs", gs_factor=0.3)


def test_algorithm_options_are_specs() -> None:
    assert parse_options("mondrian", {"relaxed": True}) == MondrianOptions(relaxed=True)
    with pytest.raises(ParameterError, match="mondrian: unknown option 'relax'; allowed: relaxed"):
        parse_options("mondrian", {"relax": True})
    with pytest.raises(ParameterError, match="option 'relaxed' must be true or false, got 'yes'"):
        parse_options("mondrian", {"relaxed": "yes"})
    with pytest.raises(ParameterError, match="anatomy: option 'l' must be >= 2, got 1"):
        parse_options("anatomy", {"l": 1})
    with pytest.raises(ParameterError, match="unknown option 'x'; allowed: none"):
        parse_options("optimal", {"x": 1})


def test_hierarchy_builders_are_specs() -> None:
    assert set(BUILDERS) == {"interval", "order", "masking", "date"}
    h = IntervalBuilder(widths=[10, 20], bottom=0).build([3, 17, 25], name="age")
    assert h.labels[1].tolist() == ["[0, 10)", "[10, 20)", "[20, 30)"]
    assert IntervalBuilder(widths=[10]).to_entry() == {
        "interval": {"widths": [10], "breakpoints": None, "bottom": None, "top": None}
    }
    with pytest.raises(ParameterError, match=r"a\.hierarchy\.masking: unknown parameter 'char'"):
        BUILDERS["masking"].from_dict({"char": "#"}, "a.hierarchy.masking")


JOB = {
    "input": {"path": "data.csv", "delimiter": ";"},
    "attributes": {
        "age": {"role": "quasi_identifying", "type": "integer", "hierarchy": "age.csv"},
        "zip": {"role": "quasi_identifying", "hierarchy": {"masking": {}}},
        "disease": {"role": "sensitive"},
        "id": {"role": "identifying", "pseudonymize": {"key_env": "SDCKIT_KEY", "length": 16}},
    },
    "models": [
        {"k_anonymity": {"k": 5}},
        {"l_diversity": {"attribute": "disease", "l": 3}},
    ],
    "suppression_limit": 0.05,
    "metric": {"name": "loss", "aggregate": "arithmetic"},
    "algorithm": "optimal",
    "methods": [{"microaggregation": {"columns": ["a", "b"], "k": 3}}],
    "output": {"path": "out.csv", "report": "report.html", "json": "report.json"},
    "seed": 1,
}


def test_a_job_file_is_the_serialization_of_its_spec(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(JOB, sort_keys=False), encoding="utf-8")
    job = load_job(path)
    assert job.to_dict() == JOB
    dumped = tmp_path / "again.yaml"
    dumped.write_text(yaml.safe_dump(job.to_dict(), sort_keys=False), encoding="utf-8")
    assert load_job(dumped).spec == job.spec
    # the short forms read as their long forms
    short = job_from_dict({"input": "data.csv", "attributes": {"age": "quasi_identifying"}})
    assert short.to_dict() == {
        "input": {"path": "data.csv"},
        "attributes": {"age": {"role": "quasi_identifying"}},
    }


def test_a_job_spec_is_frozen_and_typed() -> None:
    spec = JobSpec.from_dict(JOB)
    assert spec.suppression_limit == 0.05 and spec.seed == 1
    assert spec.metric == MetricSpec("loss", aggregate="arithmetic")
    assert spec.models[1] == ("l_diversity", {"attribute": "disease", "l": 3})
    with pytest.raises(ValidationError, match="frozen"):
        spec.seed = 2  # type: ignore[misc]


def test_every_spec_class_declares_its_name() -> None:
    named = [
        *model_classes().values(),
        *BUILDERS.values(),
        MetricSpec,
    ]
    for cls in named:
        assert issubclass(cls, Spec) and cls.spec_name


#: Modules whose public docstrings carry examples; they run as doctests.
DOCTEST_MODULES = [
    "sdckit.core.spec",
    "sdckit.core.hierarchy_specs",
    "sdckit.models.kanonymity",
    "sdckit.models.ldiversity",
    "sdckit.models.tcloseness",
    "sdckit.models.lkc",
    "sdckit.utility.generalization",
]


@pytest.mark.parametrize("module", DOCTEST_MODULES)
def test_docstring_examples_run(module: str) -> None:
    mod = importlib.import_module(module)
    result = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
    assert result.attempted > 0


def test_models_are_loaded_on_first_use_and_all_are_listed() -> None:
    # a job naming k-anonymity imports that model's module, not the twenty others
    import subprocess
    import sys

    import sdckit.models as models_package

    assert sorted(models_package.__all__) == sorted(
        [*models_package._MODULES, "check", "CheckResult"]
    )
    assert callable(models_package.check)
    assert all(getattr(models_package, name) is not None for name in models_package.__all__)
    script = (
        "import sys\nfrom sdckit.models import KAnonymity, model_class\n"
        "assert model_class('k_anonymity') is KAnonymity\n"
        "print(sorted(m for m in sys.modules if m.startswith('sdckit.models.')))"
    )
    res = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    loaded = {"base", "check", "kanonymity"}  # (check loads no other model's module)
    assert res.stdout.strip() == str(sorted(f"sdckit.models.{m}" for m in loaded)), res.stderr


def test_a_message_naming_the_value_names_it_once() -> None:
    """A validator's message that already says what it got is not given a second "got"."""
    from sdckit.errors import ParameterError
    from sdckit.jobs.spec import JobSpec

    with pytest.raises(ParameterError) as info:
        JobSpec.from_dict({"options": "x"}, "'job.yaml': ")
    assert str(info.value) == "'job.yaml': options must be a mapping, got 'x'"
    with pytest.raises(ParameterError) as info:
        JobSpec.from_dict({"attributes": {"age": {"hierarchy": -1}}}, "'job.yaml': ")
    assert str(info.value).endswith("; got -1") and str(info.value).count("got") == 1
    with pytest.raises(ParameterError) as info:  # the value is still echoed where it is not
        JobSpec.from_dict({"columns": 3}, "'job.yaml': ")
    assert str(info.value) == "'job.yaml': columns must be a list of column names, got 3"
