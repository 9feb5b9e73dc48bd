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
JSON = {"Content-Type": "application/json"}
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


def test_dp_reports_the_discrete_laplace_variance(client):
    from fractions import Fraction

    from sdckit.dp.mechanisms import discrete_laplace_variance

    # COUNT with epsilon 0.1: discrete Laplace of scale 1 / 0.1 = 10 (a dyadic rational: the
    # sampler's scale exactly); its variance 2 e**-0.1 / (1 - e**-0.1)**2 = 199.83..., not the
    # continuous 2 b**2 = 200
    body = ask(client, "SELECT COUNT(*) FROM people WHERE age > 50").json()
    (noise,) = body["noise"]
    assert noise["scale"] == 10.0
    assert noise["variance"] == discrete_laplace_variance(Fraction(10))
    assert noise["variance"] == pytest.approx(200 - 1 / 6, rel=1e-5)
    assert noise["variance"] < 200


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


def _call(app, headers, chunks, *, last=True):
    """Run the ASGI app on one POST /v1/query whose body is ``chunks`` (pulled one by one);
    returns (status, response headers, body, how many chunks the app pulled)."""
    import asyncio

    pulled = 0
    sent: list[dict] = []

    async def receive():
        nonlocal pulled
        if pulled < len(chunks):
            pulled += 1
            return {
                "type": "http.request",
                "body": chunks[pulled - 1],
                "more_body": pulled < len(chunks) or not last,
            }
        return {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/v1/query",
        "raw_path": b"/v1/query",
        "root_path": "",
        "query_string": b"",
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }
    asyncio.run(app(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    return start["status"], dict(start["headers"]), json.loads(body), pulled


def test_body_size_and_key_are_checked_before_the_body_is_read(client):
    """A chunked body is read only after the key is checked, and no further than the limit;
    a Content-Length over the limit is refused before any of it is read."""
    chunk = b"x" * 65536
    endless = [chunk] * 800  # 50 MiB (a server that reads before it checks holds it all)
    chunked = {"transfer-encoding": "chunked", "content-type": "application/json"}
    wrong = {**chunked, "authorization": "Bearer no"}
    status, headers, body, pulled = _call(client.app, wrong, endless)
    assert (status, body["error"]["code"], pulled) == (401, "unauthorized", 0)
    assert headers[b"connection"] == b"close"  # the server does not read the rest either
    status, headers, body, pulled = _call(client.app, {**chunked, **ALICE}, endless)
    assert status == 413 and body["error"]["code"] == "body_too_large"
    assert pulled == 256_384 // 65536 + 1  # the read that passed 256,384 bytes was the last
    assert headers[b"connection"] == b"close"
    declared = {"content-length": "300000000", "authorization": "Bearer no"}
    status, _, body, pulled = _call(client.app, declared, endless)
    assert (status, pulled) == (413, 0) and "Content-Length 300,000,000" in body["error"]["message"]
    # through HTTP: a body just over the limit, declared or chunked; one at the limit is read
    big = json.dumps({"dataset": "people", "sql": "SELECT COUNT(*) FROM people", "pad": "x"})
    over = big.replace('"x"', '"' + "x" * 256_384 + '"').encode()
    r = client.post("/v1/query", content=over, headers=ALICE)
    assert r.status_code == 413 and "256,384 bytes" in r.json()["error"]["message"]
    r = client.post("/v1/query", content=iter([over[:200_000], over[200_000:]]), headers=ALICE)
    assert r.status_code == 413
    r = client.post("/v1/query", content=over[:256_384], headers=ALICE)
    assert r.status_code == 400 and r.json()["error"]["code"] == "bad_request"  # read, parsed


def test_epsilon_must_be_a_json_number(client):
    """``true`` was read as 1.0 and ``"0.1"`` as 0.1: only a finite JSON number > 0 is an
    epsilon (null: the dataset's default)."""
    for text in ("true", "false", '"0.1"', '"1"', "[0.1]", '{"v": 1}', "NaN", "Infinity", "1e999"):
        body = '{"dataset": "people", "sql": "SELECT COUNT(*) FROM people", "epsilon": '
        body += text + "}"
        r = client.post("/v1/query", content=body, headers={**ALICE, **JSON})
        assert r.status_code == 400 and r.json()["error"]["code"] == "bad_request", text
        assert "epsilon must be a JSON number > 0" in r.json()["error"]["message"], text
    for number in (0, -0.1):
        r = ask(client, "SELECT COUNT(*) FROM people", epsilon=number)
        assert r.status_code == 400 and "epsilon must be a JSON number > 0" in r.text
    assert client.get("/v1/budget", headers=ALICE).json()["datasets"]["people"]["spent"] == 0
    assert ask(client, "SELECT COUNT(*) FROM people", epsilon=None).json()["epsilon_spent"] == 0.1
    r = ask(client, "SELECT COUNT(*) FROM people WHERE age > 1", epsilon=1)  # a number: read
    assert r.status_code == 403 and r.json()["error"]["code"] == "budget_exhausted"  # 0.9 left


def test_epsilon_below_what_the_query_can_take_names_the_smallest(client):
    """epsilon 1e-300 was refused as an unsupported query blaming the SQL's literals; the
    smallest epsilon follows from the ledger's unit (1e-12) and the Laplace sampler's largest
    scale, 2**51 - 2**19 grid steps, with the query's sensitivity in grid steps and its split."""
    from fractions import Fraction

    largest = Fraction(2**51 - 2**19)
    salary = 10000 * 128  # SUM(salary): bounds [0, 10000] on the grid of step 2**-7
    cases = [
        ("SELECT COUNT(*) FROM people", "1e-12", "9.99e-13"),  # the ledger's unit
        ("SELECT SUM(salary) FROM people", "5.69e-10", "5.68e-10"),
        ("SELECT AVG(salary) FROM people", "1.14e-09", "1.13e-09"),  # halved: sum, count
        ("SELECT COUNT(*), SUM(salary), AVG(salary) FROM people", "3.42e-09", "3.41e-09"),
    ]
    assert Fraction(568, 10**12) < salary / largest <= Fraction(569, 10**12)
    assert Fraction(341, 10**11) < 6 * salary / largest <= Fraction(342, 10**11)
    for sql, smallest, below in cases:
        r = ask(client, sql, epsilon=1e-300)
        assert r.status_code == 400 and r.json()["error"]["code"] == "bad_request", r.text
        message = r.json()["error"]["message"]
        assert message.startswith("epsilon 1e-300 is too small") and f"is {smallest} " in message
        r = ask(client, sql, epsilon=float(below))
        assert r.status_code == 400 and f"is {smallest} " in r.json()["error"]["message"]
        r = ask(client, sql, epsilon=float(smallest))
        assert r.status_code == 200, r.text
    # the exponential mechanism has no floor of its own: the ledger's unit is the smallest
    r = ask(client, "SELECT MEDIAN(salary) FROM people", epsilon=1e-300)
    assert r.status_code == 400 and "is 1e-12 " in r.json()["error"]["message"]
    assert ask(client, "SELECT MEDIAN(salary) FROM people", epsilon=1e-12).status_code == 200
    usage = client.get("/v1/usage", headers=ALICE).json()["datasets"]["people"]
    assert usage["refused"] == {} and usage["answered"] == 5


def test_analyst_keys_need_16_characters(tmp_path):
    from sdckit.errors import ConfigError
    from sdckit.server.config import config_from_dict, key_digest

    document = {
        "datasets": {"d": {"table": "t", "mode": "dp", "budget": {"epsilon": 1}}},
        "analysts": {"alice": {"key_env": "ALICE_KEY"}},
    }
    for key in ("k", " ", "\t  \n", "x" * 15, "  " + "x" * 15 + "  "):
        with pytest.raises(ConfigError) as caught:
            config_from_dict(document, environ={"ALICE_KEY": key})
        message = str(caught.value)
        assert "analysts.alice" in message and "'ALICE_KEY'" in message
        if key.strip():
            assert f"too short ({len(key.strip())} of the 16 characters" in message
        else:  # whitespace only: no key at all
            assert "not set (or empty)" in message
        assert "x" * 15 not in message  # the key itself is never shown
    # 16 characters are enough; surrounding whitespace is not part of the key, as in the header
    config = config_from_dict(document, environ={"ALICE_KEY": " " + "y" * 16 + "\n"})
    assert config.analysts["alice"] == key_digest("y" * 16)


def test_client_refuses_sql_over_the_server_limit_before_sending():
    """The server closes a connection whose body it will not read, so a client sending a huge
    body may see a broken pipe instead of the 413: the client checks the length first."""
    from sdckit.client import Client
    from sdckit.errors import SdcInputError

    client = Client("http://127.0.0.1:9", "k" * 32)  # nothing listens there
    with pytest.raises(SdcInputError, match="20,001 characters; the server answers at most 20,000"):
        client.query("x" * 20_001)


def test_config_errors_carry_the_key_path(tmp_path):
    from sdckit.errors import ConfigError
    from sdckit.server.config import config_from_dict

    document = {
        "datasets": {"d": {"table": "t", "mode": "dp", "budget": {"epsilon": 1}, "modee": 1}},
        "analysts": {"alice": {"key_env": "ALICE_KEY"}},
    }
    with pytest.raises(ConfigError) as caught:
        config_from_dict(document, environ={"ALICE_KEY": "y" * 16})
    assert caught.value.key == "datasets.d.modee"
    assert caught.value.parameter == "modee"
    assert "datasets.d.modee: unknown key" in str(caught.value)
