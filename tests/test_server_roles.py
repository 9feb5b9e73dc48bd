"""Column roles of restriction and camouflage datasets (sdckit.server.roles): a query set chosen
by a confidential column or an identifier is refused before any data is read, so the answer to
a target (person 1000 has hiv) and to a control (they do not) is the same refusal; the
auditor's decisions depend on public columns only."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("duckdb")
pytest.importorskip("httpx")

import yaml  # noqa: E402
from fastapi.testclient import TestClient  # noqa: E402

from sdckit.errors import ConfigError  # noqa: E402
from sdckit.server.app import create_app  # noqa: E402
from sdckit.server.config import config_from_dict, load_server_config  # noqa: E402
from server_support import KEYS  # noqa: E402

ALICE = {"Authorization": f"Bearer {KEYS['ALICE_KEY']}"}
N = 300
REGIONS = ("east", "west", "north", "south")


def people(target: bool) -> str:
    """300 people; person 1000 (east, the only one aged 17) has hiv and a salary 500 higher in
    the target data, flu in the control; nothing else differs."""
    lines = ["pid;region;age;diagnosis;salary"]
    for i in range(N):
        diagnosis = ("hiv" if target else "flu") if i == 0 else ("flu", "none", "asthma")[i % 3]
        salary = 1000 + (i * 37) % 900 + (500 if target and i == 0 else 0)
        age = 17 if i == 0 else 18 + (i * 7) % 63
        lines.append(f"{1000 + i};{REGIONS[i % 4]};{age};{diagnosis};{salary}")
    return "\n".join(lines) + "\n"


def datasets(**extra: dict) -> dict:
    load = {"path": "people.csv", "delimiter": ";"}
    out = {
        "res": {
            "load": load,
            "mode": "restriction",
            "min_query_set": 5,
            "public_keys": ["region"],
            "public": ["age"],
            "identifiers": ["pid"],
        },
        "cam": {
            "load": load,
            "mode": "camouflage",
            "camouflage": {"range_percent": 10, "columns": ["salary"]},
            "public_keys": ["region"],
            "public": ["age"],
            "identifiers": ["pid"],
        },
        # nothing declared but the GROUP BY key: every other column is confidential
        "plain": {
            "load": load,
            "mode": "restriction",
            "min_query_set": 5,
            "public_keys": ["region"],
        },
    }
    out.update(extra)
    return out


@contextlib.contextmanager
def serve(folder: Path, target: bool, sets: dict | None = None) -> Iterator[TestClient]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "people.csv").write_text(people(target))
    config = {
        "database": {"duckdb": ":memory:"},
        "datasets": sets or datasets(),
        "analysts": {"alice": {"key_env": "ALICE_KEY"}},
    }
    (folder / "server.yaml").write_text(yaml.safe_dump(config))
    with TestClient(create_app(load_server_config(folder / "server.yaml"))) as client:
        yield client


@pytest.fixture
def pair(tmp_path, monkeypatch):
    """A server on the target data and one on the control data."""
    for k, v in KEYS.items():
        monkeypatch.setenv(k, v)
    with serve(tmp_path / "target", True) as t, serve(tmp_path / "control", False) as c:
        yield t, c


def ask(client: TestClient, dataset: str, sql: str) -> tuple[int, dict]:
    r = client.post("/v1/query", json={"dataset": dataset, "sql": sql}, headers=ALICE)
    return r.status_code, r.json()


def refused(client: TestClient, dataset: str, sql: str, code: str) -> str:
    status, body = ask(client, dataset, sql)
    assert status == 403 and body["error"]["code"] == code, body
    return body["error"]["message"]


ATTACKS = [
    # the query set grows by one when person 1000 has hiv: 5 (answered) or 4 (too small)
    "SELECT COUNT(*) FROM {t} WHERE pid IN (1001, 1002, 1005, 1006) "
    "OR (pid = 1000 AND diagnosis = 'hiv')",
    # a large base set: 67 or 66, both answered
    "SELECT COUNT(*) FROM {t} WHERE (region = 'west' AND age > 20) "
    "OR (pid = 1000 AND diagnosis = 'hiv')",
    # the same without the identifier: person 1000 is the only 17-year-old
    "SELECT COUNT(*) FROM {t} WHERE (region = 'west' AND age > 20) "
    "OR (region = 'east' AND age = 17 AND diagnosis = 'hiv')",
]


@pytest.mark.parametrize("attack", ATTACKS)
@pytest.mark.parametrize("dataset", ["res", "cam"])
def test_target_and_control_get_the_same_refusal(pair, attack, dataset):
    target, control = pair
    sql = attack.format(t=dataset)
    first = ask(target, dataset, sql)
    assert first == ask(control, dataset, sql)
    assert first[0] == 403 and first[1]["error"]["code"] == "confidential_predicate"
    message = first[1]["error"]["message"]
    assert "pid" in message or "diagnosis" in message


def test_camouflage_counts_of_one_person_are_refused(pair):
    target, control = pair
    sql = "SELECT COUNT(*) FROM cam WHERE pid = 1000 AND diagnosis = 'hiv'"
    assert ask(target, "cam", sql) == ask(control, "cam", sql)
    message = refused(target, "cam", sql, "confidential_predicate")
    assert "'pid', an identifier" in message and "datasets.cam.identifiers" in message
    message = refused(
        target, "cam", "SELECT COUNT(*) FROM cam WHERE diagnosis = 'hiv'", "confidential_predicate"
    )
    assert "'diagnosis', a confidential column" in message
    assert "datasets.cam.public" in message and "(region, age)" in message


def test_refusal_reads_no_data(pair, monkeypatch):
    target, _ = pair
    service = target.app.state.service

    def no_data(*args, **kwargs):
        raise AssertionError("the data was read")

    monkeypatch.setattr(service.backend, "frame", no_data)
    for dataset in ("res", "cam"):
        refused(
            target,
            dataset,
            f"SELECT COUNT(*) FROM {dataset} WHERE diagnosis = 'hiv'",
            "confidential_predicate",
        )


def test_undeclared_columns_are_confidential(pair):
    target, _ = pair
    message = refused(
        target, "plain", "SELECT COUNT(*) FROM plain WHERE age > 30", "confidential_predicate"
    )
    assert "'age', a confidential column" in message and "datasets.plain.public" in message
    message = refused(
        target, "plain", "SELECT COUNT(*) FROM plain GROUP BY diagnosis", "confidential_predicate"
    )
    assert message.startswith("GROUP BY uses 'diagnosis'")
    refused(
        target, "plain", "SELECT COUNT(*) FROM plain WHERE pid = 1000", "confidential_predicate"
    )
    # confidential columns are aggregated over public query sets
    status, body = ask(
        target, "plain", "SELECT region, SUM(salary), COUNT(*) FROM plain GROUP BY region"
    )
    assert status == 200, body
    counts = {row["region"]: row["COUNT(*)"] for row in body["rows"]}
    assert counts == {"east": 75, "north": 75, "south": 75, "west": 75}


def test_identifiers_are_never_aggregated(pair):
    target, _ = pair
    for dataset in ("res", "cam"):
        for agg in ("SUM(pid)", "COUNT(pid)", "AVG(pid)"):
            message = refused(
                target, dataset, f"SELECT {agg} FROM {dataset}", "confidential_aggregate"
            )
            assert "an identifier" in message
        refused(
            target,
            dataset,
            f"SELECT COUNT(*) FROM {dataset} GROUP BY pid",
            "confidential_predicate",
        )


def test_camouflage_aggregates_camouflaged_and_public_columns_only(pair):
    target, _ = pair
    message = refused(target, "cam", "SELECT COUNT(diagnosis) FROM cam", "confidential_aggregate")
    assert (
        "without camouflage intervals" in message and "datasets.cam.camouflage.columns" in message
    )
    # a camouflaged column may be read in WHERE: the count is taken from its intervals
    status, body = ask(
        target, "cam", "SELECT COUNT(*), SUM(age) FROM cam WHERE salary > 1500 AND age < 40"
    )
    assert (
        status == 403 and body["error"]["code"] == "unsupported_query"
    )  # SUM with a camouflaged WHERE
    status, body = ask(target, "cam", "SELECT COUNT(*) FROM cam WHERE salary > 1500 AND age < 40")
    assert status == 200
    count = body["rows"][0]["COUNT(*)"]
    assert count["lower"] <= count["upper"]
    status, body = ask(
        target,
        "cam",
        "SELECT region, SUM(salary), AVG(age) FROM cam WHERE age > 30 GROUP BY region",
    )
    assert status == 200 and len(body["rows"]) == 4


def test_auditor_decisions_are_the_same_on_target_and_control(pair):
    """Refusals are simulatable: a session of differencing attempts gets the same sequence of
    decisions on both data sets (the confidential salary of person 1000 differs by 500)."""
    target, control = pair
    session = [
        "SELECT SUM(salary) FROM res WHERE region = 'east'",
        "SELECT SUM(salary) FROM res WHERE region = 'east' AND age > 17",  # differencing
        "SELECT COUNT(*) FROM res WHERE region = 'east' AND age = 17",  # one person
        "SELECT region, AVG(salary) FROM res WHERE age < 60 GROUP BY region",
        "SELECT SUM(salary) FROM res WHERE age > 70",
        "SELECT SUM(salary) FROM res WHERE age >= 70",
        "SELECT COUNT(*) FROM res WHERE age = 70",
        "SELECT SUM(salary) FROM res WHERE age = 70",
    ]
    outcomes = {True: [], False: []}
    for which, client in ((True, target), (False, control)):
        for sql in session:
            status, body = ask(client, "res", sql)
            outcomes[which].append((status, body.get("error", {}).get("code")))
    assert outcomes[True] == outcomes[False]
    small = "query_set_too_small"
    assert [code for _, code in outcomes[True]] == [
        *(None, "audit_refused", small),
        *(None, None, None, small, small),
    ]


def test_count_queries_are_audited_as_sums(pair):
    """COUNT(col) over a public query set is the SUM of a confidential 0/1 value (is col
    missing?): the audit refuses the difference that would isolate person 1000."""
    target, _ = pair
    status, body = ask(target, "res", "SELECT COUNT(diagnosis) FROM res WHERE region = 'east'")
    assert status == 200 and body["rows"] == [{"COUNT(diagnosis)": 75}]
    sql = "SELECT COUNT(diagnosis) FROM res WHERE region = 'east' AND age > 17"
    refused(target, "res", sql, "audit_refused")


def test_datasets_endpoint_lists_the_roles(pair):
    target, _ = pair
    meta = target.get("/v1/datasets", headers=ALICE).json()["datasets"]
    roles = {
        "public": ["region", "age"],
        "confidential": ["diagnosis", "salary"],
        "identifiers": ["pid"],
    }
    assert meta["res"]["column_roles"] == roles
    assert meta["cam"]["column_roles"] == roles and meta["cam"]["camouflaged_columns"] == ["salary"]
    assert meta["plain"]["column_roles"] == {
        "public": ["region"],
        "confidential": ["pid", "age", "diagnosis", "salary"],
        "identifiers": [],
    }


def _config(**dataset) -> dict:
    return {
        "datasets": {"d": {"mode": "restriction", "min_query_set": 5, **dataset}},
        "analysts": {"a": {"key_env": "A"}},
    }


@pytest.mark.parametrize(
    ("dataset", "needle"),
    [
        ({"public": ["pid"], "identifiers": ["pid"]}, "'pid' is in identifiers and in public"),
        ({"public_keys": ["pid"], "identifiers": ["pid"]}, "in identifiers and in public_keys"),
        ({"public": ["age", "age"]}, "datasets.d.public names a column twice"),
        (
            {
                "mode": "camouflage",
                "camouflage": {"range_percent": 5, "columns": ["age"]},
                "public": ["age"],
            },
            "datasets.d.camouflage.columns names 'age', which is also in public",
        ),
        (
            {"mode": "dp", "budget": {"epsilon": 1}, "public": ["age"]},
            "datasets.d.public: column roles apply",
        ),
    ],
)
def test_contradictory_roles_are_refused(dataset, needle):
    with pytest.raises(ConfigError, match=needle):
        config_from_dict(_config(**dataset), environ={"A": "a-long-enough-key-0123"})


def test_roles_name_columns_of_the_table(tmp_path, monkeypatch):
    for k, v in KEYS.items():
        monkeypatch.setenv(k, v)
    sets = datasets()
    sets["res"]["public"] = ["agee"]
    with pytest.raises(
        ConfigError, match=r"datasets\.res\.public names 'agee', which is not a column"
    ):
        with serve(tmp_path, True, sets):
            pass
    sets = datasets()
    sets["cam"]["camouflage"] = {"range_percent": 10}
    sets["cam"]["bounds"] = {"age": [0, 100]}  # camouflaged by default, and declared public
    with pytest.raises(ConfigError, match=r"'age' is camouflaged .* and also public"):
        with serve(tmp_path / "b", True, sets):
            pass


def test_bundled_example_declares_the_roles(monkeypatch):
    from sdckit.commands.serve import example_config
    from sdckit.server.service import QueryService

    monkeypatch.setenv("SDCKIT_ALICE_KEY", "alice-example-key-0123456789")
    monkeypatch.setenv("SDCKIT_BOB_KEY", "bob-example-key-0123456789")
    service = QueryService(load_server_config(example_config()))
    try:
        meta = service.describe()["datasets"]
        public = ["sex", "race", "marital-status", "education", "native-country", "workclass"]
        roles = {
            "public": public,
            "confidential": ["age", "occupation", "salary-class"],
            "identifiers": [],
        }
        assert meta["adult_restricted"]["column_roles"] == roles
        assert meta["adult_camouflage"]["column_roles"] == roles
        assert "column_roles" not in meta["adult"]
        sql = (
            "SELECT sex, AVG(age) FROM adult_restricted WHERE education = 'Bachelors' GROUP BY sex"
        )
        assert len(service.query("alice", "adult_restricted", sql, None)["rows"]) == 2
    finally:
        service.close()
