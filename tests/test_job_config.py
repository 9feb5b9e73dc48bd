"""The job-file loader: YAML/TOML -> validated Job; errors name the file and the key."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from sdckit.errors import ConfigError
from sdckit.jobs.config import job_from_dict, load_job
from sdckit.models import KAnonymity, LDiversity, TCloseness


@pytest.fixture()
def folder(tmp_path: Path) -> Path:
    pd.DataFrame(
        {
            "age": [21, 25, 34, 38, 47, 52],
            "zip": ["47677", "47602", "47678", "47905", "47909", "47906"],
            "disease": ["flu", "cancer", "flu", "hiv", "flu", "cancer"],
            "name": list("abcdef"),
        }
    ).to_csv(tmp_path / "data.csv", sep=";", index=False)
    (tmp_path / "h").mkdir()
    (tmp_path / "h" / "age.csv").write_text(
        "\n".join(f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};*" for a in (21, 25, 34, 38, 47, 52))
        + "\n"
    )
    return tmp_path


JOB = """
input: {path: data.csv, delimiter: ";"}
attributes:
  age: {role: quasi_identifying, type: integer, hierarchy: h/age.csv}
  zip: {role: quasi_identifying, hierarchy: {masking: {}}}
  disease: {role: sensitive}
  name: identifying
models:
  - k_anonymity: {k: 2}
  - l_diversity: {attribute: disease, l: 2}
  - t_closeness: {attribute: disease, t: 0.5, distance: equal}
suppression_limit: 0.1
metric: loss
algorithm: optimal
methods:
  - microaggregation: {columns: [age], k: 3}
output: {path: out/released.csv, report: out/report.html}
seed: 7
"""


def test_yaml_job_is_read_and_typed(folder: Path) -> None:
    (folder / "job.yaml").write_text(JOB)
    job = load_job(folder / "job.yaml")
    data = job.read_input()
    assert list(data.columns) == ["age", "zip", "disease", "name"]
    assert job.schema.quasi_identifiers == ["age", "zip"]
    assert job.schema.sensitive == ["disease"]
    assert job.schema.identifying == ["name"]
    # the file hierarchy and the masking builder: 47677 -> 4767* -> ... -> *****
    assert job.schema.hierarchy("age").height == 3
    z = job.schema.hierarchy("zip")
    assert list(z.generalize(["47677"], 2)) == ["476**"]
    models = job.models
    assert [type(m) for m in models] == [KAnonymity, LDiversity, TCloseness]
    assert models[0].k == 2
    assert job.suppression_limit == 0.1
    assert job.metric.name == "loss" and job.to_dict()["metric"] == {"name": "loss"}
    assert job.methods == [("microaggregation", {"columns": ["age"], "k": 3})]
    assert job.output.path == folder.resolve() / "out" / "released.csv"
    assert job.output.json is None
    assert job.seed == 7


def test_toml_job(folder: Path) -> None:
    (folder / "job.toml").write_text(
        '[input]\npath = "data.csv"\ndelimiter = ";"\n'
        '[attributes.age]\nrole = "quasi_identifying"\nhierarchy = "h/age.csv"\n'
        "[[models]]\n[models.k_anonymity]\nk = 3\n"
    )
    job = load_job(folder / "job.toml")
    assert job.schema.quasi_identifiers == ["age"]
    assert job.models[0].k == 3


def test_interval_builder_spec(folder: Path) -> None:
    job = job_from_dict(
        {
            "input": {"path": "data.csv"},
            "attributes": {
                "age": {
                    "role": "quasi_identifying",
                    "type": "integer",
                    "hierarchy": {"interval": {"widths": [10, 20]}},
                }
            },
        },
        base_dir=folder,
    )
    h = job.schema.hierarchy("age")
    assert list(h.generalize(["34"], 1)) == ["[30, 40)"]


@pytest.mark.parametrize(
    ("doc", "fragment"),
    [
        ({"suppresion_limit": 0.1}, "did you mean 'suppression_limit'"),
        ({"suppression_limit": 1.5}, "suppression_limit must be a share of the records"),
        ({"models": [{"k_anonimity": {"k": 2}}]}, "models[0]: unknown name 'k_anonimity'"),
        ({"models": {"k_anonymity": {"k": 2}}}, "models must be a list"),
        (
            {"attributes": {"age": {"role": "qi"}}},
            "attributes.age.role must be one of identifying, quasi_identifying",
        ),
        (
            {"attributes": {"age": {"rol": "sensitive"}}},
            "attributes.age: unknown key 'rol'; allowed: role,",
        ),
        ({"attributes": {"age": {"hierarchy": {"intervals": {}}}}}, "did you mean 'interval'"),
        (
            {"attributes": {"name": {"role": "identifying", "pseudonymize": True}}},
            "needs a key",
        ),
        ({"seed": -1}, "seed must be >= 0, got -1"),
        (
            {"output": {"report": "r.html", "jsn": "x"}},
            "output: unknown key 'jsn'; allowed: path, cells, excel, mark, report, json",
        ),
    ],
)
def test_bad_documents_name_the_key(doc: dict, fragment: str) -> None:
    with pytest.raises(ConfigError) as err:
        job_from_dict(doc, source="'job.yaml'")
    assert fragment in str(err.value)
    assert "'job.yaml'" in str(err.value)


def test_bad_model_parameters_name_the_entry(folder: Path) -> None:
    job = job_from_dict(
        {"input": "data.csv", "models": [{"k_anonymity": {"k": 2, "kk": 3}}]}, base_dir=folder
    )
    with pytest.raises(ConfigError, match=r"models\[0\]\.k_anonymity: unknown parameter 'kk'"):
        _ = job.models
    job = job_from_dict({"input": "data.csv", "models": [{"l_diversity": {"l": 2}}]}, folder)
    with pytest.raises(ConfigError, match=r"models\[0\]\.l_diversity\.attribute is required"):
        _ = job.models
    job = job_from_dict({"input": "data.csv", "models": [{"k_anonymity": {"k": 0}}]}, folder)
    with pytest.raises(ConfigError, match=r"models\[0\]\.k_anonymity\.k must be >= 1"):
        _ = job.models


def test_missing_files_and_columns(folder: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        load_job(folder / "nope.yaml")
    job = job_from_dict(
        {"input": "data.csv", "attributes": {"agee": {"role": "quasi_identifying"}}}, folder
    )
    with pytest.raises(ConfigError, match="column 'agee' is not in the input.*did you mean 'age'"):
        _ = job.schema
    job = job_from_dict(
        {"input": "data.csv", "attributes": {"age": {"hierarchy": "missing.csv"}}}, folder
    )
    with pytest.raises(ConfigError, match="hierarchy file .*missing.csv.* does not exist"):
        _ = job.schema
    (folder / "bad.yaml").write_text("input: [unclosed\n")
    with pytest.raises(ConfigError, match="not valid"):
        load_job(folder / "bad.yaml")


@pytest.mark.parametrize(
    "text",
    [
        "",
        "# only a comment\n",
        "models: [{k_anonymity: {k: 5}}]\nsuppression_limit: 0.05\nseed: 7\n",
        "base: &b {k: 3, flag: yes, none: ~, when: 2024-01-31}\nuse: {<<: *b, k: 4}\n",
        "list: [1, 1.5, -.inf, .nan, 0x1f, '007', \"tab\\there\", !!str 12]\n",
        "text: |\n  two\n  lines\nfolded: >\n  one\n  line\n",
        "- a\n- {b: [c, d]}\n- null\n",
    ],
)
def test_the_yaml_reader_reads_what_safe_load_reads(text: str) -> None:
    # load_yaml_checked parses once (libyaml's C parser where PyYAML has it) and sizes the
    # tree before building it; what it builds is yaml.safe_load's value (pure-Python parser)
    import math

    import yaml

    from sdckit.jobs.config import load_yaml_checked

    got = load_yaml_checked(text, Path("job.yaml"))
    want = yaml.load(text, Loader=yaml.SafeLoader)
    if isinstance(want, dict) and "list" in want:  # NaN != NaN: compare it apart
        assert math.isnan(got["list"][3]) and math.isnan(want["list"][3])
        got["list"][3] = want["list"][3] = None
    assert got == want


@pytest.mark.parametrize("text", ["a: [1, 2\n", "a: b: c\n", "key: 'open\n", "--- 1\n--- 2\n"])
def test_the_yaml_reader_refuses_what_safe_load_refuses(text: str) -> None:
    import yaml

    from sdckit.jobs.config import load_yaml_checked

    with pytest.raises(yaml.YAMLError):
        yaml.load(text, Loader=yaml.SafeLoader)
    with pytest.raises(yaml.YAMLError):
        load_yaml_checked(text, Path("job.yaml"))


@pytest.mark.parametrize(
    ("command", "body", "message"),
    [
        (
            "synthesize",
            "input: data.csv\nseed: 1\nmethod: marginal_dp\nepsilon: 1e-9\noutput: {path: s.csv}\n",
            "epsilon must be a number, got '1e-9' (text, not a number: YAML 1.1 reads a number "
            "without a dot, or with an unsigned exponent, as text; write 1.0e-9)",
        ),
        (
            "anonymize",
            "input: {path: data.csv, delimiter: ';'}\n"
            "attributes: {zip: {role: quasi_identifying, hierarchy: {masking: {}}}}\n"
            "models: [{k_anonymity: {k: 1e1}}]\noutput: {path: a.csv}\n",
            "models[0].k_anonymity.k must be an integer, got '1e1' (text, not a number: YAML "
            "1.1 reads a number without a dot, or with an unsigned exponent, as text; write 10)",
        ),
        (
            "mask",
            "input: {path: data.csv, delimiter: ';'}\nseed: 1\n"
            "methods: [{noise: {columns: [age], alpha: 5E-1}}]\noutput: {path: m.csv}\n",
            "methods[0].noise.alpha must be a number, got '5E-1' (text, not a number: YAML 1.1 "
            "reads a number without a dot, or with an unsigned exponent, as text; write 5.0e-1)",
        ),
        (
            "mask",
            "input: {path: data.csv, delimiter: ';'}\nseed: 1\n"
            "methods: [{noise: {columns: [age], alpha: '0.5'}}]\noutput: {path: m.csv}\n",
            "methods[0].noise.alpha must be a number, got '0.5' (text, not a number: write 0.5 "
            "without quotes)",
        ),
    ],
)
def test_a_number_yaml_reads_as_text_gets_the_form_to_write(
    folder: Path, command: str, body: str, message: str
) -> None:
    from typer.testing import CliRunner

    from sdckit.cli import app

    (folder / "job.yaml").write_text(body)
    res = CliRunner().invoke(app, [command, "--config", str(folder / "job.yaml")])
    assert res.exit_code == 2, res.output
    assert message in " ".join(res.output.split())


def test_the_number_hint_gives_yaml_1_1_forms() -> None:
    import yaml

    from sdckit.core.spec import number_text_hint

    def written(text: str, integer: bool = False) -> str:
        return number_text_hint(text, integer=integer).rsplit("write ", 1)[-1].rstrip(")")

    for text, form in [("1e-9", "1.0e-9"), ("-2.5e3", "-2.5e+3"), (".5e2", "0.5e+2")]:
        assert written(text) == form
        assert yaml.safe_load(form) == float(text) and isinstance(yaml.safe_load(text), str)
    assert written("1e3", integer=True) == "1000"
    assert written("3.") == "3. without quotes"  # YAML reads 3. as 3.0
    assert written("1000", integer=True) == "1000 without quotes"
    assert number_text_hint("1.5", integer=True) == ""  # not an integer: no form to suggest
    assert number_text_hint("abc", integer=False) == ""
    assert number_text_hint("inf", integer=False) == ""
    assert number_text_hint(0.5, integer=False) == ""


def test_errors_of_a_bad_job_key_carry_the_key_and_parameter() -> None:
    from sdckit.errors import ParameterError

    job = job_from_dict({"models": [{"k_anonymity": {"k": 0}}]}, source="'job.yaml'")
    with pytest.raises(ParameterError) as caught:
        _ = job.models
    assert caught.value.key == "models[0].k_anonymity.k"
    assert caught.value.parameter == "k"
    assert str(caught.value) == "'job.yaml': models[0].k_anonymity.k must be >= 1, got 0"
    with pytest.raises(ParameterError) as caught:
        job_from_dict({"seed": "x"}, source="'job.yaml'")
    assert (caught.value.key, caught.value.parameter) == ("seed", "seed")
    with pytest.raises(ParameterError) as caught:  # a Python call names no key
        KAnonymity(0)
    assert (caught.value.key, caught.value.parameter) == (None, "k")
