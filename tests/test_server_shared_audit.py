"""Two ``sdckit serve`` processes on one PostgreSQL database share one restriction audit: the
halves of a differencing or tracker attack asked of different servers, one after the other or
at the same moment, are never both answered. In process (DuckDB): the audit trail survives a
restart, an earlier version's auditor snapshot is taken over, and concurrent requests of one
server serialise."""

from __future__ import annotations

import json
import threading

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
pytest.importorskip("duckdb")
httpx = pytest.importorskip("httpx")

from sdckit.errors import ConfigError  # noqa: E402
from sdckit.server.config import load_server_config  # noqa: E402
from sdckit.server.restriction import QuerySetAuditor  # noqa: E402
from sdckit.server.service import QueryService, Refusal  # noqa: E402
from server_support import (  # noqa: E402
    KEYS,
    find_initdb,
    free_port,
    postgres_cluster,
    server_process,
    write_config,
)

needs_postgres = pytest.mark.skipif(
    find_initdb() is None, reason="no PostgreSQL initdb binary found"
)

ALICE = {"Authorization": f"Bearer {KEYS['ALICE_KEY']}"}
BOB = {"Authorization": f"Bearer {KEYS['BOB_KEY']}"}

#: ``staff``: 20 departments of 5 people; every age is distinct, so ``age <> a`` removes one
#: person selected by public columns only.
STAFF_CSV = "age;dept;salary\n" + "".join(
    f"{20 + i};D{i // 5:02d};{1000 + 37 * i}\n" for i in range(100)
)


def restriction(path: str, table: str) -> dict:
    return {
        "load": {"path": path, "delimiter": ";"},
        "table": table,
        "mode": "restriction",
        "min_query_set": 2,
        "public_keys": ["dept"],
        "public": ["age"],
    }


@pytest.fixture(scope="module")
def two_servers(tmp_path_factory):
    """Two server processes on one fresh PostgreSQL database; yields their query URLs (the
    tests use different tables, so their audits do not interact)."""
    tmp_path = tmp_path_factory.mktemp("shared-audit")
    (tmp_path / "staff.csv").write_text(STAFF_CSV)
    with postgres_cluster() as dsn:
        config = write_config(
            tmp_path,
            {"postgresql": dsn},
            {
                "people": restriction("people.csv", "people"),
                "staff": restriction("staff.csv", "staff"),
            },
        )
        first, second = free_port(), free_port()
        with server_process(config, first), server_process(config, second):
            yield (
                f"http://127.0.0.1:{first}/v1/query",
                f"http://127.0.0.1:{second}/v1/query",
            )


def ask(url: str, sql: str, dataset: str = "people", headers: dict = ALICE) -> httpx.Response:
    return httpx.post(url, json={"dataset": dataset, "sql": sql}, headers=headers, timeout=60)


@needs_postgres
def test_differencing_and_tracker_across_two_servers_refused(two_servers):
    one, two = two_servers
    # differencing: dept A minus the one person of dept A aged 31
    first = ask(one, "SELECT SUM(salary) FROM people WHERE dept = 'A'")
    assert first.status_code == 200, first.text
    assert first.json()["rows"] == [{"SUM(salary)": 6000}]
    attack = ask(two, "SELECT SUM(salary) FROM people WHERE dept = 'A' AND age <> 31", headers=BOB)
    assert attack.status_code == 403, attack.text
    assert attack.json()["error"]["code"] == "audit_refused"
    # tracker-style padding: dept A plus the person aged 61, then dept A on the other server
    # (dept A was answered above: the padded query alone gives the salary away)
    padded = ask(two, "SELECT SUM(salary) FROM people WHERE dept = 'A' OR age = 61")
    assert padded.status_code == 403 and padded.json()["error"]["code"] == "audit_refused"
    # a fresh tracker on dept B: (B or aged 29) on one server, B on the other
    tracker = ask(two, "SELECT SUM(salary) FROM people WHERE dept = 'B' OR age = 29")
    assert tracker.status_code == 200, tracker.text
    assert tracker.json()["rows"] == [{"SUM(salary)": 14000}]
    rest = ask(one, "SELECT SUM(salary) FROM people WHERE dept = 'B'")
    assert rest.status_code == 403 and rest.json()["error"]["code"] == "audit_refused"
    # a harmless query still answered by both, and the refusals are in both servers' logs
    assert ask(one, "SELECT COUNT(*) FROM people WHERE age > 40").status_code == 200
    usage = httpx.get(one.replace("query", "usage"), headers=ALICE).json()
    assert usage["datasets"]["people"]["refused"] == {"audit_refused": 2}
    assert usage["datasets"]["people"]["answered"] == 3


@needs_postgres
def test_simultaneous_halves_of_an_attack_never_both_answered(two_servers):
    one, two = two_servers
    rounds = 20
    outcomes = []
    for d in range(rounds):
        dept, removed = f"D{d:02d}", 20 + 5 * d + d % 5
        halves = [
            (one, f"SELECT SUM(salary) FROM staff WHERE dept = '{dept}'"),
            (two, f"SELECT SUM(salary) FROM staff WHERE dept = '{dept}' AND age <> {removed}"),
        ]
        if d % 2:
            halves.reverse()  # each server gets each half in turn
        results: list[httpx.Response | None] = [None, None]
        barrier = threading.Barrier(2)

        def hit(i: int, url: str, sql: str, results=results, barrier=barrier) -> None:
            barrier.wait()
            results[i] = ask(url, sql, "staff")

        threads = [
            threading.Thread(target=hit, args=(i, url, sql)) for i, (url, sql) in enumerate(halves)
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        codes = sorted(r.status_code for r in results if r is not None)
        outcomes.append(codes)
        refused = [r for r in results if r is not None and r.status_code == 403]
        assert all(r.json()["error"]["code"] == "audit_refused" for r in refused)
    # departments are disjoint: exactly one half of every attack is answered
    assert outcomes == [[200, 403]] * rounds


# -- in process, DuckDB file -------------------------------------------------------------------
SUM_A = "SELECT SUM(salary) FROM people WHERE dept = 'A'"
SUM_A_BUT_31 = "SELECT SUM(salary) FROM people WHERE dept = 'A' AND age <> 31"


def service(folder, monkeypatch, datasets: dict | None = None) -> QueryService:
    for k, v in KEYS.items():
        monkeypatch.setenv(k, v)
    config = write_config(
        folder,
        {"duckdb": "audit.duckdb"},
        datasets or {"people": restriction("people.csv", "people")},
    )
    return QueryService(load_server_config(config))


def refusal(svc: QueryService, sql: str, dataset: str = "people") -> str:
    with pytest.raises(Refusal) as caught:
        svc.query("alice", dataset, sql, None)
    return caught.value.code


def test_audit_trail_survives_a_restart(tmp_path, monkeypatch):
    svc = service(tmp_path, monkeypatch)
    assert svc.query("alice", "people", SUM_A, None)["rows"] == [{"SUM(salary)": 6000}]
    svc.close()
    svc = service(tmp_path, monkeypatch)
    try:
        assert refusal(svc, SUM_A_BUT_31) == "audit_refused"
        rows = svc.backend.execute("SELECT n_records, version FROM _sdc_audit")
        assert rows == [(8, 1)]
        stored = svc.backend.execute("SELECT query_sets FROM _sdc_audit_sets")
        assert len(stored) == 1 and len(json.loads(stored[0][0])) == 1
        svc.backend.execute("UPDATE _sdc_audit_sets SET query_sets = '[\"AAAA\"]'")
    finally:
        svc.close()
    with pytest.raises(ConfigError, match="audit trail of dataset 'people'.*malformed"):
        service(tmp_path, monkeypatch)


def test_an_earlier_versions_auditor_snapshot_is_taken_over(tmp_path, monkeypatch):
    import duckdb

    old = QuerySetAuditor(8, 2)
    assert old.check_and_record([np.array([0, 1, 4, 6])]).allowed  # dept A, as answered before
    trail = QuerySetAuditor.recorded_batches(old.state())
    assert [[s.tolist() for s in batch] for batch in trail] == [[[0, 1, 4, 6]]]
    with duckdb.connect(str(tmp_path / "audit.duckdb")) as con:
        con.execute("CREATE TABLE _sdc_auditor (dataset TEXT PRIMARY KEY, state TEXT NOT NULL)")
        con.execute("INSERT INTO _sdc_auditor VALUES ('people', ?)", [json.dumps(old.state())])
    svc = service(tmp_path, monkeypatch)
    try:
        assert refusal(svc, SUM_A_BUT_31) == "audit_refused"
        assert svc.backend.execute("SELECT version FROM _sdc_audit") == [(1,)]
    finally:
        svc.close()


def test_a_table_with_another_record_count_is_refused_at_start(tmp_path, monkeypatch):
    svc = service(tmp_path, monkeypatch)
    svc.query("alice", "people", SUM_A, None)
    svc.backend.execute("DROP TABLE people")
    svc.close()
    (tmp_path / "nine.csv").write_text("age;dept;salary\n" + "30;A;1\n" * 9)
    with pytest.raises(ConfigError, match="'people'.*recorded on 8 records but the table has 9"):
        service(tmp_path, monkeypatch, {"people": restriction("nine.csv", "people")})


def test_concurrent_requests_of_one_server_serialise(tmp_path, monkeypatch):
    (tmp_path / "staff.csv").write_text(STAFF_CSV)
    svc = service(tmp_path, monkeypatch, {"staff": restriction("staff.csv", "staff")})
    try:
        for d in range(10):
            dept, removed = f"D{d:02d}", 20 + 5 * d + d % 5
            sqls = [f"SELECT SUM(salary) FROM staff WHERE dept = '{dept}'"] * 3 + [
                f"SELECT SUM(salary) FROM staff WHERE dept = '{dept}' AND age <> {removed}"
            ] * 3
            outcomes: list[str] = [""] * len(sqls)
            barrier = threading.Barrier(len(sqls))

            def one(i: int, sql: str, outcomes=outcomes, barrier=barrier) -> None:
                barrier.wait()
                try:
                    svc.query("alice", "staff", sql, None)
                    outcomes[i] = "answered"
                except Refusal as exc:
                    outcomes[i] = exc.code

            threads = [threading.Thread(target=one, args=(i, q)) for i, q in enumerate(sqls)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            # the three copies of the half answered first are answered (a repeat reveals
            # nothing new), the other half's three are refused
            assert sorted(outcomes) == ["answered"] * 3 + ["audit_refused"] * 3
            first = outcomes[:3]
            assert first == [first[0]] * 3
        # one stored batch per round: the repeats change no decision and are not stored
        assert svc.datasets["staff"].auditor.version == 10
    finally:
        svc.close()
