"""``sdckit serve`` as a real process: DuckDB file and PostgreSQL, 100 concurrent clients on
the last of a budget, kill -9 and restart, ``sdckit query``, oversized and unauthenticated
bodies answered before they are read, short keys and a DuckDB file in use refused at start."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
pytest.importorskip("duckdb")
httpx = pytest.importorskip("httpx")

from server_support import (  # noqa: E402
    KEYS,
    find_initdb,
    free_port,
    postgres_cluster,
    raw_post,
    rss_bytes,
    server_process,
    write_config,
)

ALICE = {"Authorization": f"Bearer {KEYS['ALICE_KEY']}"}


def hammer(port: int, n: int, epsilon: float) -> list[httpx.Response]:
    """``n`` threads, each its own client, each a distinct query costing ``epsilon``."""
    results: list[httpx.Response] = [None] * n  # type: ignore[list-item]
    barrier = threading.Barrier(n)

    def one(i: int) -> None:
        with httpx.Client(timeout=60) as c:
            barrier.wait()
            results[i] = c.post(
                f"http://127.0.0.1:{port}/v1/query",
                json={
                    "dataset": "people",
                    "sql": f"SELECT COUNT(*) FROM people WHERE age > {i}",
                    "epsilon": epsilon,
                },
                headers=ALICE,
            )

    threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def check_spending(
    port: int, responses: list[httpx.Response], epsilon: float, budget: float, already: float
) -> int:
    codes = [r.status_code for r in responses]
    assert 500 not in codes and set(codes) <= {200, 403}
    answered = codes.count(200)
    spent = httpx.get(f"http://127.0.0.1:{port}/v1/budget", headers=ALICE).json()
    spent = spent["datasets"]["people"]["spent"]
    assert spent <= budget + 1e-12
    assert spent == pytest.approx(already + answered * epsilon)
    return answered


def test_duckdb_load_kill_restart_and_cli(tmp_path):
    config = write_config(tmp_path, {"duckdb": "ledger.duckdb"})
    port = free_port()
    with server_process(config, port) as proc:
        url = f"http://127.0.0.1:{port}"
        first = httpx.post(
            f"{url}/v1/query",
            headers=ALICE,
            json={"dataset": "people", "sql": "SELECT COUNT(*) FROM people", "epsilon": 0.9},
        )
        assert first.status_code == 200
        # 100 clients race for the last 0.1 with 0.01 each: at most 10 answered
        responses = hammer(port, 100, 0.01)
        answered = check_spending(port, responses, 0.01, 1.0, already=0.9)
        assert 1 <= answered <= 10
        assert (
            sum(r.json().get("error", {}).get("code") == "budget_exhausted" for r in responses)
            == 100 - answered
        )
        # sdckit query: rows on success (a cached answer), exit 2 with the message on refusal
        env = {**os.environ, "SDCKIT_KEY": KEYS["ALICE_KEY"]}
        ok = subprocess.run(
            [
                sys.executable,
                "-m",
                "sdckit.cli",
                "query",
                "--url",
                url,
                "--epsilon",
                "0.9",
                "SELECT COUNT(*) FROM people",
            ],
            env=env,
            capture_output=True,
            text=True,
        )
        assert ok.returncode == 0, ok.stderr
        assert "COUNT(*)" in ok.stdout and "cached" in ok.stdout
        refused = subprocess.run(
            [
                sys.executable,
                "-m",
                "sdckit.cli",
                "query",
                "--url",
                url,
                "--dataset",
                "people",
                "SELECT COUNT(*) FROM people WHERE age > 77",
            ],
            env=env,
            capture_output=True,
            text=True,
        )
        assert refused.returncode == 2 and "budget_exhausted" in refused.stderr
        assert "Traceback" not in refused.stderr
        proc.kill()  # kill -9: no shutdown, no checkpoint
        proc.wait()
    with server_process(config, port):
        budget = httpx.get(f"http://127.0.0.1:{port}/v1/budget", headers=ALICE).json()
        spent = budget["datasets"]["people"]["spent"]
        assert spent == pytest.approx(0.9 + 0.01 * answered)
        again = httpx.post(
            f"http://127.0.0.1:{port}/v1/query",
            headers=ALICE,
            json={"dataset": "people", "sql": "SELECT SUM(age) FROM people", "epsilon": 0.5},
        )
        assert again.status_code == 403 and again.json()["error"]["code"] == "budget_exhausted"
        cached = httpx.post(
            f"http://127.0.0.1:{port}/v1/query",
            headers=ALICE,
            json={"dataset": "people", "sql": "SELECT COUNT(*) FROM people", "epsilon": 0.9},
        )
        assert cached.json()["rows"] == first.json()["rows"]  # the ledger kept the answer
        usage = httpx.get(f"http://127.0.0.1:{port}/v1/usage", headers=ALICE).json()
        assert usage["datasets"]["people"]["answered"] == 1 + answered


def test_serve_without_extra_or_config_says_how(tmp_path):
    r = subprocess.run(
        [sys.executable, "-m", "sdckit.cli", "serve"], capture_output=True, text=True
    )
    assert r.returncode == 2 and "--config" in r.stderr
    bad = tmp_path / "s.yaml"
    bad.write_text(
        "database: {duckdb: x.db}\ndatasets: {d: {mode: dp}}\nanalysts: {a: {key_env: A}}\n"
    )
    r = subprocess.run(
        [sys.executable, "-m", "sdckit.cli", "serve", "--config", str(bad)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2 and "datasets.d.budget" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads RSS from /proc")
def test_bodies_are_refused_before_they_are_read(tmp_path):
    """A huge body with a wrong key, chunked or with a huge Content-Length, is answered at once
    and never held: the server's memory stays where it was."""
    config = write_config(tmp_path, {"duckdb": ":memory:"})
    port = free_port()
    json_type = {"Content-Type": "application/json"}
    wrong = {"Authorization": "Bearer not-the-key-of-anybody", **json_type}
    attacks = [
        ({**wrong, "Content-Length": "300000000"}, False, 413),
        (wrong, True, 401),
        ({**ALICE, **json_type}, True, 413),
    ]
    with server_process(config, port) as proc:
        before = rss_bytes(proc.pid)
        for headers, chunked, status in attacks:
            got, received, sent, seconds = raw_post(port, headers, chunked, 32 << 20, timeout=5)
            assert got == status, (headers, chunked, received[-300:])
            assert seconds < 2 and b"connection: close" in received.lower()
        grown = rss_bytes(proc.pid) - before
        assert grown < 16 << 20, f"the server grew by {grown / 2**20:.0f} MiB"
        ok = httpx.post(
            f"http://127.0.0.1:{port}/v1/query",
            headers=ALICE,
            json={"dataset": "people", "sql": "SELECT COUNT(*) FROM people"},
        )
        assert ok.status_code == 200, ok.text


def test_short_key_and_duckdb_file_in_use_are_refused_at_start(tmp_path, monkeypatch):
    """``sdckit serve`` exits 2 with the reason: a 1-character key (the configuration's checks
    of keys: test_server_api), and a DuckDB file another process (here: this one) serves."""
    from sdckit.server.config import load_server_config
    from sdckit.server.service import QueryService

    config = write_config(tmp_path, {"duckdb": "ledger.duckdb"})
    serve = [sys.executable, "-m", "sdckit.cli", "serve", "--config", str(config), "--port", "0"]
    short = {**os.environ, **KEYS, "BOB_KEY": "k"}
    r = subprocess.run(serve, env=short, capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
    message = " ".join(r.stderr.split())
    assert "analysts.bob" in message and "'BOB_KEY' is too short (1 of the 16" in message
    for name, key in KEYS.items():
        monkeypatch.setenv(name, key)
    service = QueryService(load_server_config(config))
    try:
        r = subprocess.run(
            serve, env={**os.environ, **KEYS}, capture_output=True, text=True, timeout=60
        )
    finally:
        service.close()
    assert r.returncode == 2, r.stderr
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr
    message = " ".join(r.stderr.split())
    assert "ledger.duckdb" in message and "is in use" in message
    assert f"another process (PID {os.getpid()}) holds its lock" in message


@pytest.mark.skipif(find_initdb() is None, reason="no PostgreSQL initdb binary found")
def test_postgresql_backend(tmp_path):
    with postgres_cluster() as dsn:
        config = write_config(tmp_path, {"postgresql": dsn})
        port = free_port()
        with server_process(config, port):
            url = f"http://127.0.0.1:{port}/v1/query"
            r = httpx.post(
                url,
                headers=ALICE,
                json={
                    "dataset": "people",
                    "sql": "SELECT dept, COUNT(*), SUM(salary), AVG(age), MEDIAN(age) FROM people "
                    "WHERE age BETWEEN 20 AND 60 GROUP BY dept",
                    "epsilon": 0.5,
                },
            )
            assert r.status_code == 200, r.text
            assert [row["dept"] for row in r.json()["rows"]] == ["A", "B"]
            responses = hammer(port, 100, 0.01)
            answered = check_spending(port, responses, 0.01, 1.0, already=0.5)
            assert answered == 50
        with server_process(config, port):  # restart: the ledger is in PostgreSQL
            budget = httpx.get(f"http://127.0.0.1:{port}/v1/budget", headers=ALICE).json()
            assert budget["datasets"]["people"]["remaining"] == pytest.approx(0.0)
