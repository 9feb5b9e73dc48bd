"""Helpers of the server tests: configs, a server subprocess, a throwaway PostgreSQL cluster."""

from __future__ import annotations

import contextlib
import glob
import os
import select
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


def rss_bytes(pid: int) -> int:
    """The resident memory of process ``pid`` (Linux ``/proc``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    raise RuntimeError("no VmRSS")


def raw_post(
    port: int, headers: dict[str, str], chunked: bool, send_bytes: int, timeout: float = 10
) -> tuple[int | None, bytes, int, float]:
    """POST /v1/query on a raw socket: the headers, then up to ``send_bytes`` of body (1 MiB
    pieces, chunk-encoded when ``chunked``) from a thread, while this thread waits for the
    response. Returns (status or None, the bytes received, body bytes sent, seconds to the
    status line)."""
    import threading

    sock = socket.create_connection(("127.0.0.1", port))
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    if chunked:
        head += "Transfer-Encoding: chunked\r\n"
    sock.sendall(f"POST /v1/query HTTP/1.1\r\nHost: 127.0.0.1\r\n{head}\r\n".encode())
    sent = [0]
    stop = threading.Event()
    piece = b"x" * (1 << 20)
    framed = f"{len(piece):x}\r\n".encode() + piece + b"\r\n" if chunked else piece

    def pump() -> None:
        sock.settimeout(1)
        while not stop.is_set() and sent[0] < send_bytes:
            try:
                sock.sendall(framed)
            except OSError:  # a timeout (the server stopped reading) or a closed connection
                return
            sent[0] += len(piece)

    sender = threading.Thread(target=pump, daemon=True)
    start = time.monotonic()
    sender.start()
    received = b""
    status, elapsed = None, timeout
    deadline = start + timeout
    try:
        while time.monotonic() < deadline and b"\r\n\r\n" not in received:
            ready, _, _ = select.select([sock], [], [], 0.1)
            if ready:
                data = sock.recv(65536)
                if not data:
                    break
                received += data
        if received.startswith(b"HTTP/1.1 "):
            status, elapsed = int(received[9:12]), time.monotonic() - start
            with contextlib.suppress(OSError):
                while b"}" not in received.split(b"\r\n\r\n", 1)[1] and time.monotonic() < deadline:
                    data = sock.recv(65536)
                    if not data:
                        break
                    received += data
    except OSError:
        pass
    finally:
        stop.set()
        sender.join(5)
        sock.close()
    return status, received, sent[0], elapsed
