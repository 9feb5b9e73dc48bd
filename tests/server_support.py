"""Helpers of the server tests: configs, a server subprocess, a throwaway PostgreSQL cluster."""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import yaml

KEYS = {"ALICE_KEY": "alice-secret-key-0123456789", "BOB_KEY": "bob-secret-key-9876543210"}

#: Distinctive data: no value here may ever appear in a response.
PEOPLE_CSV = (
    "name;age;dept;salary\n"
    "Zyxwvut;31;A;1000\nQwertzu;41;A;2000\nPlokijm;51;B;3000\nMnbvcxy;61;B;4500\n"
    "Asdfghj;36;A;1200\nLkjhgfd;46;B;2600\nPoiuytr;29;A;1800\nUjmnhyt;33;B;2100\n"
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def write_config(folder: Path, database: dict, datasets: dict | None = None) -> Path:
    (folder / "people.csv").write_text(PEOPLE_CSV)
    config = {
        "database": database,
        "datasets": datasets
        or {
            "people": {
                "load": {"path": "people.csv", "delimiter": ";"},
                "mode": "dp",
                "budget": {"epsilon": 1.0, "query_epsilon": 0.1},
                "bounds": {"age": [0, 100], "salary": [0, 10000]},
                "public_keys": ["dept"],
            }
        },
        "analysts": {"alice": {"key_env": "ALICE_KEY"}, "bob": {"key_env": "BOB_KEY"}},
        "listen": {"host": "127.0.0.1", "port": 0},
    }
    path = folder / "server.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


@contextlib.contextmanager
def server_process(config: Path, port: int) -> Iterator[subprocess.Popen]:
    """``sdckit serve`` in a subprocess, ready when it answers; killed at the end."""
    env = {**os.environ, **KEYS}
    proc = subprocess.Popen(
        [sys.executable, "-m", "sdckit.cli", "serve", "--config", str(config), "--port", str(port)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_ready(port, proc)
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if proc.stderr:
            proc.stderr.close()


def wait_ready(port: int, proc: subprocess.Popen, timeout: float = 30) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(
                f"server exited: {proc.stderr.read().decode() if proc.stderr else ''}"
            )
        try:
            httpx.get(f"http://127.0.0.1:{port}/v1/datasets", timeout=1)
            return
        except httpx.HTTPError:
            time.sleep(0.1)
    raise RuntimeError("server did not start")


def find_initdb() -> str | None:
    found = shutil.which("initdb")
    if found:
        return found
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    return candidates[-1] if candidates else None


@contextlib.contextmanager
def postgres_cluster() -> Iterator[str]:
    """A throwaway PostgreSQL cluster (initdb + pg_ctl, as user postgres when run as root);
    yields a connection string over its unix socket; stopped and removed at the end."""
    initdb = find_initdb()
    assert initdb is not None
    bindir = Path(os.path.realpath(initdb)).parent
    folder = Path(tempfile.mkdtemp(prefix="sdckit-pg-"))
    as_user: list[str] = []
    user = os.environ.get("USER", "postgres")
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
        as_user, user = ["runuser", "-u", "postgres", "--"], "postgres"
    data, sock = folder / "data", folder
    port = free_port()
    subprocess.run(
        [*as_user, str(bindir / "initdb"), "-D", str(data), "-A", "trust", "-U", user],
        check=True,
        capture_output=True,
    )
    options = f"-k {sock} -p {port} -c listen_addresses='' -c fsync=off"
    subprocess.run(
        [
            *as_user,
            str(bindir / "pg_ctl"),
            "-D",
            str(data),
            "-o",
            options,
            "-w",
            "start",
            "-l",
            str(folder / "log.txt"),
        ],
        check=True,
        capture_output=True,
    )
    try:
        yield f"postgresql://{user}@/postgres?host={sock}&port={port}"
    finally:
        subprocess.run(
            [*as_user, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"],
            capture_output=True,
        )
        shutil.rmtree(folder, ignore_errors=True)
