"""A method that cannot do its job fails; it never passes data through.

Rule test over every registered perturbative method (``must_change``): on an input it cannot
protect (a constant column, a single row) the step raises a DataError naming the step and
the columns, unless the step says ``allow_unchanged: true``; an infinite value is refused by
every numeric method, naming the column, row and value.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from sdckit.cli import app
from sdckit.errors import DataError
from sdckit.masking.pipeline import METHODS, Pipeline

#: The job-file names of the perturbative methods (aliases left out).
MUST_CHANGE = set(METHODS.where(lambda traits: traits.must_change))


def apply_methods(data: pd.DataFrame, methods: list, seed: int | None = None):
    """A job's methods list applied as the mask job does: parsed, then applied."""
    return Pipeline.from_entries(methods).apply(data, seed=seed)


#: One step per perturbative method, on the column ``x`` (numeric) or ``g`` (categorical).
STEPS = {
    "noise": {"columns": ["x"], "alpha": 0.5},
    "multiplicative_noise": {"columns": ["x"], "sd": 0.1},
    "rank_swapping": {"columns": ["x"], "p_percent": 20},
    "data_swapping": {"columns": ["g"], "match_columns": ["s"], "rate": 1.0},
    "record_swapping": {
        "household": "h",
        "similar": [["s"]],
        "hierarchy": ["g"],
        "quasi_identifiers": ["s"],
        "swap_rate": 1.0,
    },
    "pram": {"columns": ["g"], "p_diagonal": 0.5},
    "randomized_response": {"column": "g", "p": 0.6},
    "resampling": {"columns": ["x"], "t": 3},
}


def test_every_perturbative_method_has_a_rule_case() -> None:
    assert set(STEPS) == set(MUST_CHANGE)
    assert all(METHODS.load(name).spec_name == name for name in MUST_CHANGE)


def _constant(n: int) -> pd.DataFrame:
    return pd.DataFrame(
        {"x": np.full(n, 7.0), "g": ["a"] * n, "h": np.arange(n) // 2, "s": ["k"] * n}
    )


@pytest.mark.parametrize("name", sorted(MUST_CHANGE))
@pytest.mark.parametrize("n", [1, 40])
def test_unchanged_release_is_an_error(name: str, n: int) -> None:
    data = _constant(n)
    params = dict(STEPS[name])
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no numpy warning may leak either
            out, _ = apply_methods(data, [(name, params)], seed=1)
    except DataError as exc:
        text = str(exc)
        assert text.startswith(f"methods[0].{name}")
        return
    # a method that returned must have changed something
    changed = any(not out[c].equals(data[c]) for c in ("x", "g"))
    assert changed, f"{name} released unchanged data on {n} row(s)"


def test_allow_unchanged_makes_the_no_op_legitimate() -> None:
    data = _constant(10)
    out, _ = apply_methods(
        data, [("noise", {"columns": ["x"], "alpha": 0.5, "allow_unchanged": True})], seed=1
    )
    pd.testing.assert_frame_equal(out, data)


def test_allow_unchanged_must_be_a_boolean() -> None:
    from sdckit.errors import ConfigError

    with pytest.raises(ConfigError, match="allow_unchanged"):
        apply_methods(_constant(3), [("noise", {"columns": ["x"], "allow_unchanged": "yes"})])


NUMERIC_STEPS = [
    ("noise", {"columns": ["y"], "alpha": 0.5}),
    ("noise", {"columns": ["y", "z"], "alpha": 0.5, "method": "correlated"}),
    ("multiplicative_noise", {"columns": ["y"], "sd": 0.1}),
    ("microaggregation", {"columns": ["y", "z"], "k": 3}),
    ("microaggregation", {"columns": ["y"], "k": 3, "method": "individual_ranking"}),
    ("rank_swapping", {"columns": ["y"], "p_percent": 10}),
    ("resampling", {"columns": ["y"], "t": 3}),
    ("rounding", {"columns": ["y"], "base": 5}),
]


@pytest.mark.parametrize(("name", "params"), NUMERIC_STEPS)
def test_an_infinite_value_is_refused(name: str, params: dict) -> None:
    rng = np.random.default_rng(0)
    y = rng.normal(size=1001)
    y[500] = np.inf
    data = pd.DataFrame({"y": y, "z": rng.normal(size=1001)})
    with pytest.raises(DataError) as info:
        apply_methods(data, [(name, params)], seed=1)
    text = str(info.value)
    assert "'y'" in text and "inf" in text and "row 501" in text


def test_the_cli_writes_nothing_for_noise_on_inf(tmp_path) -> None:
    rng = np.random.default_rng(0)
    y = rng.normal(size=1001)
    y[1000] = np.inf
    pd.DataFrame({"y": y}).to_csv(tmp_path / "in.csv", index=False)
    job = tmp_path / "job.yaml"
    job.write_text(
        "input: {path: in.csv}\nseed: 1\nmethods: [{noise: {columns: [y], alpha: 0.5}}]\n"
        "output: {path: out.csv, report: out.html, json: out.json}\n"
    )
    res = CliRunner().invoke(app, ["mask", "--config", str(job)])
    assert res.exit_code == 2, res.output
    assert "row 1001" in " ".join(res.output.split())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "job.yaml"]


# ---------------------------------------------------------------------------------------------
# missing values in an integer quasi-identifier are data
# ---------------------------------------------------------------------------------------------
AGE_ROWS = "\n".join(f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};*" for a in range(20, 40))


def _blank_ages(folder) -> None:
    ages = [str(20 + i % 20) for i in range(100)]
    ages[3] = ages[50] = ""
    pd.DataFrame({"age": ages, "sex": ["MF"[i % 2] for i in range(100)]}).to_csv(
        folder / "in.csv", sep=";", index=False
    )
    (folder / "h_sex.csv").write_text("M;*\nF;*\n")


def _job(folder, hierarchy: str) -> str:
    path = folder / "job.yaml"
    path.write_text(
        'input: {path: in.csv, delimiter: ";"}\n'
        "attributes:\n"
        f"  age: {{role: quasi_identifying, type: integer, hierarchy: {hierarchy}}}\n"
        "  sex: {role: quasi_identifying, hierarchy: h_sex.csv}\n"
        "models: [{k_anonymity: {k: 2}}]\n"
        "output: {path: out.csv}\n"
    )
    return str(path)


def test_missing_integer_qi_without_a_hierarchy_row_says_the_line_to_add(tmp_path) -> None:
    _blank_ages(tmp_path)
    (tmp_path / "h_age.csv").write_text(AGE_ROWS + "\n")
    res = CliRunner().invoke(app, ["anonymize", "--config", _job(tmp_path, "h_age.csv")])
    assert res.exit_code == 2, res.output
    text = " ".join(res.output.split())
    assert "';NA;*'" in text and "missing" in text and "39.0" not in text
    assert not (tmp_path / "out.csv").exists()


def test_missing_integer_qi_with_its_hierarchy_row_is_anonymized(tmp_path) -> None:
    _blank_ages(tmp_path)
    (tmp_path / "h_age.csv").write_text(AGE_ROWS + "\n;NA;*\n")
    res = CliRunner().invoke(app, ["anonymize", "--config", _job(tmp_path, "h_age.csv")])
    assert res.exit_code == 0, res.output
    out = pd.read_csv(tmp_path / "out.csv", sep=";", dtype=str, keep_default_na=False)
    assert out.groupby(["age", "sex"]).size().min() >= 2
    # the two missing ages (one per sex) form a class once sex is generalized
    assert (out["age"] == "").sum() == 2 and set(out["sex"]) == {"*"}


def test_missing_integer_qi_read_by_pandas_as_float_matches_textual_leaves(tmp_path) -> None:
    import sdckit
    from sdckit.core.hierarchy import read_hierarchy
    from sdckit.core.schema import Schema
    from sdckit.models import KAnonymity

    _blank_ages(tmp_path)
    (tmp_path / "h_age.csv").write_text(AGE_ROWS + "\n;NA;*\n")
    data = pd.read_csv(tmp_path / "in.csv", sep=";")  # age becomes float64 with NaN
    assert data["age"].dtype == np.float64
    schema = Schema.from_roles(
        quasi_identifying=["age", "sex"],
        hierarchies={
            "age": read_hierarchy(tmp_path / "h_age.csv"),
            "sex": read_hierarchy(tmp_path / "h_sex.csv"),
        },
    )
    result = sdckit.anonymize(data, schema, [KAnonymity(2)], suppression_limit=0.05)
    assert result.transformation == {"age": 0, "sex": 0}
    assert result.suppressed_records == 2  # the two missing ages: one record per sex


# ---------------------------------------------------------------------------------------------
# no algorithm silently suppresses a whole attribute
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("algorithm", ["mondrian", "tds", "optimal", "datafly"])
def test_categorical_qi_without_hierarchy_is_refused_with_the_yaml(algorithm: str) -> None:
    import sdckit
    from sdckit.core.schema import Schema
    from sdckit.errors import HierarchyError
    from sdckit.models import KAnonymity

    data = pd.DataFrame({"age": np.arange(60) % 30 + 20, "job": ["a", "b", "c"] * 20})
    schema = Schema.from_roles(
        quasi_identifying=["age", "job"], types={"age": "integer"}, hierarchies={}
    )
    with pytest.raises(HierarchyError) as info:
        sdckit.anonymize(data, schema, [KAnonymity(3)], algorithm=algorithm)
    text = str(info.value)  # the Python API's words
    assert "'job'" in text or "'age'" in text
    assert "sdckit.core.hierarchy_builders" in text and "read_hierarchy" in text
    job_text = str(info.value.for_job_file("job.yaml: attributes.x"))  # a job file's words
    assert "hierarchy: {" in job_text and "FILE.csv" in job_text


def test_mondrian_still_cuts_numeric_qis_without_hierarchy() -> None:
    import sdckit
    from sdckit.core.schema import Schema
    from sdckit.models import KAnonymity

    data = pd.DataFrame({"age": np.arange(60) % 30 + 20, "income": np.arange(60) * 10})
    schema = Schema.from_roles(
        quasi_identifying=["age", "income"], types={"age": "integer", "income": "integer"}
    )
    result = sdckit.anonymize(data, schema, [KAnonymity(3)], algorithm="mondrian")
    assert (result.data["age"] != "*").all()


# ---------------------------------------------------------------------------------------------
# every masking function takes a Series as a one-column frame
# ---------------------------------------------------------------------------------------------
def _series_cases():
    from sdckit.masking import microaggregation as ma
    from sdckit.masking import noise_addition, other, randomization, recoding, swapping
    from sdckit.masking import suppression as ls

    num = pd.Series(np.arange(30, dtype=float) * 1.7 % 11, name="x")
    cat = pd.Series(list("abc") * 10, name="g")
    return [
        (ma.mdav, num, {"k": 3}),
        (ma.vmdav, num, {"k": 3}),
        (ma.optimal_univariate, num, {"column": "x", "k": 3}),
        (ma.individual_ranking, num, {"k": 3}),
        (ma.categorical_microaggregation, cat, {"k": 3}),
        (ma.kanonymity_microaggregation, num, {"quasi_identifiers": "x", "k": 3}),
        (ma.fuzzy_microaggregation, num, {"k": 3}),
        (noise_addition.noise, num, {"columns": None, "seed": 1}),
        (other.rounding, num, {"columns": None, "base": 5}),
        (other.resampling, num, {"columns": None, "seed": 1}),
        (other.multiplicative_noise, num, {"columns": None, "seed": 1}),
        (randomization.pram, cat, {"columns": None, "seed": 1}),
        (randomization.randomized_response, cat.where(cat != "c", "a"), {"column": "g", "seed": 1}),
        (recoding.sampling, num, {"fraction": 0.5, "seed": 1}),
        (recoding.global_recoding, num, {"column": "x", "method": "breaks", "breaks": [0, 5, 11]}),
        (
            recoding.group_categories,
            cat,
            {"column": "g", "mapping": {"a": "ab", "b": "ab", "c": "c"}},
        ),
        (recoding.top_bottom_coding, num, {"column": "x", "top": 8}),
        (swapping.rank_swapping, num, {"columns": None, "p_percent": 10, "seed": 1}),
        (ls.local_suppression, cat, {"quasi_identifiers": None, "k": 2}),
    ]


@pytest.mark.parametrize(
    ("fn", "series", "kwargs"), _series_cases(), ids=lambda v: getattr(v, "__name__", "")
)
def test_masking_functions_take_a_series(fn, series, kwargs) -> None:
    try:
        result = fn(series, **kwargs)
    except DataError as exc:  # a clear input error is acceptable, never AttributeError
        pytest.fail(f"{fn.__name__} refused a Series: {exc}")
    assert isinstance(result.data, pd.DataFrame)
    assert list(result.data.columns) == [series.name]


def test_masking_functions_refuse_other_types_clearly() -> None:
    from sdckit.masking.microaggregation import mdav

    with pytest.raises(DataError, match="DataFrame or Series"):
        mdav([1, 2, 3], k=3)
