"""The HTTP contract of ``sdckit serve`` (in process, DuckDB in memory): dp answers, the cache,
the budget, refusals, restriction's audit, camouflage intervals, and no data in any response."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("duckdb")
pytest.importorskip("httpx")

from fastapi.testclient import TestClient  # noqa: E402

from sdckit.server.app import create_app  # noqa: E402
from sdckit.server.config import load_server_config  # noqa: E402
from server_support import KEYS, PEOPLE_CSV, write_config  # noqa: E402

ALICE = {"Authorization": f"Bearer {KEYS['ALICE_KEY']}"}
BOB = {"Authorization": f"Bearer {KEYS['BOB_KEY']}"}
SALARIES = [1000, 2000, 3000, 4500, 1200, 2600, 1800, 2100]
AGES = [31, 41, 51, 61, 36, 46, 29, 33]


@pytest.fixture
def client(tmp_path, monkeypatch):
    for k, v in KEYS.items():
        monkeypatch.setenv(k, v)
    load = {"path": "people.csv", "delimiter": ";"}
    datasets = {
        "people": {
            "load": load,
            "mode": "dp",
            "budget": {"epsilon": 1.0, "query_epsilon": 0.1},
            "bounds": {"salary": [0, 10000]},
            "public_keys": {"dept": ["A", "B", "C"]},
        },
        "res": {
            "load": load,
            "table": "res",
            "mode": "restriction",
            "min_query_set": 2,
            "public_keys": ["dept"],
            "public": ["age"],
            "identifiers": ["name"],
        },
        "cam": {
            "load": load,
            "table": "cam",
            "mode": "camouflage",
            "camouflage": {"range_percent": 10, "columns": ["salary", "age"]},
            "public_keys": ["dept"],
            "identifiers": ["name"],
        },
    }
    config = write_config(tmp_path, {"duckdb": ":memory:"}, datasets)
    with TestClient(create_app(load_server_config(config))) as c:
        yield c


def ask(client, sql, dataset="people", headers=ALICE, **extra):
    return client.post("/v1/query", json={"dataset": dataset, "sql": sql, **extra}, headers=headers)


def test_dp_answer_contract_cache_and_budget(client):
    r = ask(client, "SELECT dept, COUNT(*), SUM(salary), AVG(salary) FROM people GROUP BY dept")
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["mode"] == "dp" and body["epsilon_spent"] == 0.1
    assert body["budget_remaining"] == pytest.approx(0.9) and body["cached"] is False
    assert [row["dept"] for row in body["rows"]] == ["A", "B", "C"]  # empty group C answered
    assert all(n["variance"] > 0 for n in body["noise"] if "variance" in n)
    again = ask(client, "select dept, count(*), sum(salary), avg(salary) from people group by dept")
    assert again.json()["rows"] == body["rows"] and again.json()["cached"] is True
    assert again.json()["epsilon_spent"] == 0.0
    budget = client.get("/v1/budget", headers=ALICE).json()["datasets"]["people"]
    assert budget["spent"] == pytest.approx(0.1) and budget["remaining"] == pytest.approx(0.9)
    # bob's budget is his own
    assert client.get("/v1/budget", headers=BOB).json()["datasets"]["people"]["spent"] == 0
    for i in range(9):  # spend the rest exactly: 10 x 0.1 == 1.0
        assert ask(client, f"SELECT COUNT(*) FROM people WHERE age > {i}").status_code == 200
    r = ask(client, "SELECT COUNT(*) FROM people WHERE age > 99")
    assert r.status_code == 403 and r.json()["error"]["code"] == "budget_exhausted"
    assert ask(client, "SELECT COUNT(*) FROM people WHERE age > 3").status_code == 200  # cached
    usage = client.get("/v1/usage", headers=ALICE).json()["datasets"]["people"]
    assert usage["answered"] == 10 and usage["refused"] == {"budget_exhausted": 1}
    assert usage["noise_variance_total"] > 0


def test_errors(client):
    assert ask(client, "SELECT COUNT(*) FROM people", headers={}).status_code == 401
    bad = {"Authorization": "Bearer nope"}
    assert ask(client, "SELECT COUNT(*) FROM people", headers=bad).status_code == 401
    r = ask(client, "SELECT COUNT(*) FROM people", dataset="nothing")
    assert r.status_code == 404 and r.json()["error"]["code"] == "unknown_dataset"
    r = ask(client, "SELECT * FROM people")
    assert r.status_code == 403 and r.json()["error"]["code"] == "unsupported_query"
    r = ask(client, "SELECT SUM(salary) FROM people", dataset="res")
    assert r.status_code == 403 and "table is 'res'" in r.json()["error"]["message"]
    r = ask(client, "SELECT SUM(salary) FROM res WHERE dept = 'B'", dataset="res")
    assert r.status_code == 200
    r = ask(client, "SELECT MEDIAN(age) FROM res", dataset="res")
    assert r.json()["error"]["code"] == "unsupported_query"
    r = client.post("/v1/query", json={"sql": 3}, headers=ALICE)
    assert r.status_code == 400 and r.json()["error"]["code"] == "bad_request"


def test_dp_sum_without_bounds_names_the_key(client, tmp_path):
    r = ask(client, "SELECT SUM(age) FROM people WHERE dept = 'A'")
    assert r.status_code == 403 and r.json()["error"]["code"] == "unsupported_query"
    assert "datasets.people.bounds.age" in r.json()["error"]["message"]
    meta = client.get("/v1/datasets", headers=ALICE).json()["datasets"]["people"]
    assert meta["public_keys"] == {"dept": ["A", "B", "C"]} and meta["mode"] == "dp"
    assert "_sdc_id" not in meta["columns"]


def test_restriction_differencing_attack_is_refused(client):
    first = ask(client, "SELECT SUM(salary) FROM res WHERE dept = 'A'", dataset="res")
    assert first.status_code == 200 and first.json()["rows"][0]["SUM(salary)"] == 6000
    # the record aged 31 is the only one of dept A: the difference would be its salary
    attack = ask(
        client, "SELECT SUM(salary) FROM res WHERE dept = 'A' AND age <> 31", dataset="res"
    )
    assert attack.status_code == 403 and attack.json()["error"]["code"] == "audit_refused"
    small = ask(client, "SELECT COUNT(*) FROM res WHERE age = 31", dataset="res")
    assert small.status_code == 403 and small.json()["error"]["code"] == "query_set_too_small"
    usage = client.get("/v1/usage", headers=ALICE).json()["datasets"]["res"]
    assert usage["refused"] == {"audit_refused": 1, "query_set_too_small": 1}
    # the auditor is shared: bob cannot finish alice's attack either
    again = ask(
        client,
        "SELECT SUM(salary) FROM res WHERE dept = 'A' AND age <> 31",
        dataset="res",
        headers=BOB,
    )
    assert again.status_code == 403 and again.json()["error"]["code"] == "audit_refused"


def _ends(client, column):
    """The stored interval ends of ``column`` of the camouflage table, by record id."""
    frame = client.app.state.service.backend.frame(
        f"SELECT _sdc_id, _sdc_lo_{column} AS lo, _sdc_hi_{column} AS hi FROM cam ORDER BY _sdc_id"
    )
    return frame["lo"].to_numpy(), frame["hi"].to_numpy()


def test_camouflage_intervals_equal_the_sums_of_the_stored_ends(client):
    import numpy as np

    lo, hi = _ends(client, "salary")
    x = np.array(SALARIES, dtype=float)
    # every value inside its own interval; widths between r*max(|x|, mean|x|) and twice that;
    # the value not at the centre (a symmetric interval would give x away as the midpoint)
    assert (lo <= x).all() and (x <= hi).all()
    base = 0.1 * np.maximum(np.abs(x), np.abs(x).mean())
    assert ((hi - lo) >= base - 1e-9).all() and ((hi - lo) <= 2 * base + 1e-9).all()
    assert not np.allclose((lo + hi) / 2, x)
    age_lo, age_hi = _ends(client, "age")
    r = ask(
        client, "SELECT dept, COUNT(*), SUM(salary), AVG(age) FROM cam GROUP BY dept", dataset="cam"
    )
    assert r.status_code == 200, r.text
    rows = {row["dept"]: row for row in r.json()["rows"]}
    in_a = np.array([d == "A" for d in "AABBABAB"])
    s = rows["A"]["SUM(salary)"]
    assert s["lower"] == pytest.approx(lo[in_a].sum()) and s["upper"] == pytest.approx(
        hi[in_a].sum()
    )
    assert s["lower"] <= x[in_a].sum() <= s["upper"]
    assert s["width"] == pytest.approx(hi[in_a].sum() - lo[in_a].sum())
    m = rows["A"]["AVG(age)"]
    assert m["lower"] == pytest.approx(age_lo[in_a].mean())
    assert m["upper"] == pytest.approx(age_hi[in_a].mean())
    assert rows["A"]["COUNT(*)"] == {"lower": 4, "upper": 4, "width": 0.0}
    # the same question, the same interval: the ends are drawn once and stored
    again = ask(
        client, "SELECT dept, COUNT(*), SUM(salary), AVG(age) FROM cam GROUP BY dept", dataset="cam"
    )
    assert again.json()["rows"] == r.json()["rows"]
    # count on a camouflaged column: [every point satisfies, some point satisfies]
    r = ask(client, "SELECT COUNT(*) FROM cam WHERE salary > 2000", dataset="cam")
    c = r.json()["rows"][0]["COUNT(*)"]
    assert (c["lower"], c["upper"]) == (int((lo > 2000).sum()), int((hi > 2000).sum()))
    assert c["lower"] <= sum(v > 2000 for v in SALARIES) <= c["upper"]
    r = ask(client, "SELECT COUNT(*) FROM cam WHERE salary BETWEEN 1900 AND 2500", dataset="cam")
    c = r.json()["rows"][0]["COUNT(*)"]
    assert c["lower"] == int(((lo >= 1900) & (hi <= 2500)).sum())
    assert c["upper"] == int(((hi >= 1900) & (lo <= 2500)).sum())
    r = ask(client, "SELECT SUM(salary) FROM cam WHERE salary > 2000", dataset="cam")
    assert r.status_code == 403 and r.json()["error"]["code"] == "unsupported_query"
    # the interval-end columns are not part of the queryable table
    r = ask(client, "SELECT SUM(_sdc_lo_salary) FROM cam", dataset="cam")
    assert r.status_code == 403
    meta = client.get("/v1/datasets", headers=ALICE).json()
    assert "_sdc_lo_salary" not in json.dumps(meta)
    usage = client.get("/v1/usage", headers=ALICE).json()["datasets"]["cam"]
    assert usage["interval_width_max"] > 0


def test_no_response_contains_a_data_value(client):
    names = [line.split(";")[0] for line in PEOPLE_CSV.splitlines()[1:]]
    bodies = []
    for dataset, table in (("people", "people"), ("res", "res"), ("cam", "cam")):
        for sql in (
            f"SELECT name, COUNT(*) FROM {table} GROUP BY name",
            f"SELECT COUNT(*) FROM {table} WHERE name > 5",
            f"SELECT COUNT(*) FROM {table} WHERE age > 'Zyxwvut'",
            f"SELECT COUNT(*) FROM {table} WHERE name = 'nobody'",
            f"SELECT SUM(name) FROM {table}",
            f"SELECT COUNT(*) FROM {table} WHERE CAST(name AS INT) > 1",
            f"SELECT COUNT(*) FROM {table} WHERE dept = 'A'",
        ):
            bodies.append(ask(client, sql, dataset=dataset).text)
    for path in ("/v1/datasets", "/v1/budget", "/v1/usage"):
        bodies.append(client.get(path, headers=ALICE).text)
    text = json.dumps(bodies)
    leaked = [n for n in names if n in text]
    assert not leaked
