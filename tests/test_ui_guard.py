"""The workbench against a hostile web page and hostile uploads: DNS rebinding (a foreign
``Host``), cross-site forms (a foreign ``Origin`` / ``Referer``), no token, uploads over the
size and column limits, duplicate column names, and a slow upload while other requests wait."""

from __future__ import annotations

import html
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("python_multipart")

from fastapi.testclient import TestClient  # noqa: E402

from sdckit.core.io import read_table  # noqa: E402
from sdckit.errors import DataError  # noqa: E402
from sdckit.ui.app import create_app  # noqa: E402
from sdckit.ui.guard import Access, host_name  # noqa: E402
from sdckit.ui.projects import MAX_COLUMNS, ProjectStore  # noqa: E402

TOKEN = "guard-test-token-0123456789"
ORIGIN = "http://127.0.0.1:8050"


def _client(data_dir: Path, base_url: str = ORIGIN, **options) -> TestClient:
    """A client that has entered with the token (holds the cookie), as a browser would."""
    client = TestClient(create_app(data_dir, token=TOKEN, **options), base_url=base_url)
    assert client.get(f"/?token={TOKEN}", follow_redirects=False).status_code == 303
    return client


def _secret(tmp_path: Path) -> Path:
    path = tmp_path / "secret.csv"
    path.write_text("user,password\nroot,hunter2\n")
    return path


def _projects(tmp_path: Path) -> list[Path]:
    root = tmp_path / "ui" / "projects"
    return [p for p in root.iterdir()] if root.is_dir() else []


@pytest.mark.parametrize("host", ["attacker.example:8050", "attacker.example", "127.0.0.1.nip.io"])
def test_dns_rebinding_a_foreign_host_is_refused(tmp_path, host):
    # the attacker's page at http://attacker.example:8050 rebinds its name to 127.0.0.1, so
    # its requests reach the app with the attacker's name as Host. The Host check alone
    # refuses them: this client even holds the token's cookie
    client = _client(tmp_path / "ui")
    headers = {"Host": host}
    page = client.get("/", headers=headers)
    assert page.status_code == 403 and "does not answer to the host name" in page.text
    opened = client.post(
        "/projects/path",
        data={"path": str(_secret(tmp_path))},
        headers=headers | {"Origin": f"http://{host}"},
        follow_redirects=False,
    )
    assert opened.status_code == 403
    assert _projects(tmp_path) == []  # the file was not opened as a project
    # the same request under this server's own names is served
    for own in ("127.0.0.1:8050", "localhost:8050", "[::1]:8050"):
        assert client.get("/", headers={"Host": own}).status_code == 200


def test_allowed_hosts_and_remote_addresses():
    local = Access.for_listen(TOKEN, "127.0.0.1")
    assert local.host_allowed("127.0.0.1:8050") and local.host_allowed("LOCALHOST:1")
    assert local.host_allowed("[::1]:8050") and local.host_allowed("127.1.2.3")
    assert not local.host_allowed("192.168.1.5:8050")  # a LAN address: not when local only
    assert not local.host_allowed("evil.example") and not local.host_allowed("")
    remote = Access.for_listen(TOKEN, "0.0.0.0", ["stats-box.lan"])
    assert remote.host_allowed("192.168.1.5:8050") and remote.host_allowed("[fe80::1]:8050")
    assert remote.host_allowed("stats-box.lan:8050") and remote.host_allowed("STATS-BOX.LAN.")
    assert not remote.host_allowed("evil.example:8050")  # a name: only the allowed ones
    named = Access.for_listen(TOKEN, "stats-box.lan")
    assert named.host_allowed("stats-box.lan") and named.remote
    assert host_name("[::1]:80") == "::1" and host_name("a.b:1") == "a.b"


@pytest.mark.parametrize(
    "headers",
    [
        {"Origin": "http://attacker.example"},
        {"Origin": "null"},  # a sandboxed frame or a data: page
        {"Origin": "http://127.0.0.1:9999"},  # another local server's page
        {"Referer": "http://attacker.example/page.html"},  # no Origin: the Referer decides
    ],
)
def test_cross_site_forms_are_refused(tmp_path, headers):
    client = _client(tmp_path / "ui")
    created = client.post(
        "/projects/path",
        data={"path": str(_secret(tmp_path))},
        headers=headers,
        follow_redirects=False,
    )
    assert created.status_code == 403 and "another web site" in created.text
    demo = client.post("/projects/demo", headers=headers, follow_redirects=False)
    assert demo.status_code == 403
    assert _projects(tmp_path) == []
    # the workbench's own page posts with its own origin
    own = client.post(
        "/projects/path",
        data={"path": str(_secret(tmp_path))},
        headers={"Origin": ORIGIN, "Referer": ORIGIN + "/"},
        follow_redirects=False,
    )
    assert own.status_code == 303 and len(_projects(tmp_path)) == 1


def test_the_token_is_required_by_default_also_on_loopback(tmp_path, monkeypatch):
    import uvicorn
    from typer.testing import CliRunner

    from sdckit.cli import build_app

    served = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: served.update(app=app, **kw))
    result = CliRunner().invoke(build_app("ui"), ["ui", "--data", str(tmp_path / "ui")])
    assert result.exit_code == 0, result.output
    assert served["host"] == "127.0.0.1"
    printed = result.output.split("?token=")[1].split()[0]
    assert len(printed) >= 16
    client = TestClient(served["app"], base_url="http://127.0.0.1:8050")
    refused = client.post("/projects/path", data={"path": str(_secret(tmp_path))})
    assert refused.status_code == 401 and _projects(tmp_path) == []
    assert client.get("/").status_code == 401
    assert client.get(f"/?token={printed}").status_code == 200  # redirected, with the cookie
    assert client.get("/").status_code == 200

    short = CliRunner().invoke(build_app("ui"), ["ui", "--token", "abc"])
    assert short.exit_code == 2 and "at least 16 characters" in short.output


def _message(response) -> str:
    return " ".join(html.unescape(response.text).split())


def test_duplicate_column_names_are_refused_with_the_command_lines_message(tmp_path):
    csv = tmp_path / "twice.csv"
    csv.write_text("age,sex,age\n30,f,31\n40,m,41\n")
    with pytest.raises(DataError) as cli:
        read_table(csv)
    client = _client(tmp_path / "ui")
    uploaded = client.post("/projects/upload", files={"file": ("twice.csv", csv.read_bytes())})
    assert uploaded.status_code == 400
    # the command line's words, the file named as the user knows it
    expected = str(cli.value).replace(repr(str(csv)), "'twice.csv'")
    assert expected == (
        "'twice.csv' has the column name(s) 'age' more than once; give every column its own name"
    )
    assert expected in _message(uploaded)
    opened = client.post("/projects/path", data={"path": str(csv)})
    assert opened.status_code == 400 and "'age' more than once" in _message(opened)
    assert _projects(tmp_path) == []


def test_a_file_of_20000_columns_is_refused_at_once(tmp_path):
    columns = 20_000
    body = ",".join(f"c{i}" for i in range(columns)) + "\n" + "1," * (columns - 1) + "1\n"
    client = _client(tmp_path / "ui")
    t0 = time.perf_counter()
    r = client.post("/projects/upload", files={"file": ("wide.csv", body.encode())})
    elapsed = time.perf_counter() - t0
    assert r.status_code == 400
    assert f"'wide.csv' has 20,000 columns; the workbench takes at most {MAX_COLUMNS:,}" in (
        _message(r)
    )
    assert elapsed < 5  # the header is counted before any column is read (it took 12-60 s)
    assert _projects(tmp_path) == []


def test_uploads_over_the_size_limits_are_refused_before_they_are_read(tmp_path):
    client = _client(tmp_path / "ui", max_upload=50_000, max_hierarchy=1_000)
    big = b"a,b\n" + b"1,2\n" * 20_000  # 80 KB
    r = client.post("/projects/upload", files={"file": ("big.csv", big)})
    assert r.status_code == 413
    assert "over the workbench's limit of 0.05 MB for it (set with sdckit ui --max-upload-mb)" in (
        _message(r)
    )

    # a hierarchy has its own, smaller limit
    data = tmp_path / "ages.csv"
    data.write_text("age\n" + "".join(f"{20 + i % 50}\n" for i in range(100)))
    opened = client.post("/projects/path", data={"path": str(data)}, follow_redirects=False)
    pid = opened.headers["location"].split("/")[2]
    hierarchy = "".join(f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};*\n" for a in range(20, 120))
    assert len(hierarchy) > 1_000
    r = client.post(
        f"/p/{pid}/hierarchy/age",
        files={"file": ("age.csv", hierarchy.encode())},
        headers={"HX-Request": "true"},
    )
    assert r.status_code == 413 and "--max-hierarchy-mb" in _message(r)
    assert r.headers["HX-Retarget"] == "#messages"  # shown in the page's message area
    project = ProjectStore(tmp_path / "ui").get(pid)
    assert project.attributes["age"].get("hierarchy") is None


def test_a_chunked_body_is_stopped_at_the_limit_as_it_arrives():
    # no Content-Length: the guard counts the bytes the app reads and stops at the limit
    import asyncio

    from sdckit.ui.guard import BodyTooLarge, Guard

    pulled = []

    async def receive():
        pulled.append(1)
        return {"type": "http.request", "body": b"x" * 4096, "more_body": len(pulled) < 1000}

    async def app(scope, receive, send):  # reads the whole body, as a form parser does
        while (await receive()).get("more_body"):
            pass

    guard = Guard(app, Access.for_listen(TOKEN, "127.0.0.1"), lambda path: (50_000, "--max"))
    scope = {
        "type": "http",
        "method": "POST",
        "path": "/projects/upload",
        "query_string": b"",
        "headers": [
            (b"host", b"127.0.0.1:8050"),
            (b"cookie", f"sdckit_ui_token={TOKEN}".encode()),
            (b"transfer-encoding", b"chunked"),
        ],
    }
    with pytest.raises(BodyTooLarge, match="over the workbench's limit of 0.05 MB"):
        asyncio.run(guard(scope, receive, lambda message: None))
    assert len(pulled) == 13  # 13 x 4 KB > 50 KB: not one chunk more of the 4 MB


@pytest.mark.parametrize("what", ["data", "hierarchy"])
def test_other_requests_are_answered_while_an_upload_is_processed(tmp_path, monkeypatch, what):
    import sdckit.ui.app as app_module

    data = tmp_path / "ages.csv"
    data.write_text("age\n" + "".join(f"{20 + i % 50}\n" for i in range(100)))
    client = _client(tmp_path / "ui")
    opened = client.post("/projects/path", data={"path": str(data)}, follow_redirects=False)
    pid = opened.headers["location"].split("/")[2]
    hierarchy = "".join(f"{a};{a // 10 * 10}-{a // 10 * 10 + 9};*\n" for a in range(20, 70))

    slow = 2.0  # reading and checking a large file, made slow on purpose
    if what == "data":
        create = ProjectStore.create
        monkeypatch.setattr(
            ProjectStore, "create", lambda *a, **k: (time.sleep(slow), create(*a, **k))[1]
        )
    else:
        check = app_module._validate_hierarchy
        monkeypatch.setattr(
            app_module, "_validate_hierarchy", lambda *a: (time.sleep(slow), check(*a))[1]
        )
    outcome = {}

    def upload():
        if what == "data":
            outcome["r"] = client.post(
                "/projects/upload",
                files={"file": ("ages.csv", data.read_bytes())},
                follow_redirects=False,
            )
        else:
            outcome["r"] = client.post(
                f"/p/{pid}/hierarchy/age", files={"file": ("age.csv", hierarchy.encode())}
            )
        outcome["done"] = time.perf_counter()

    with client:  # one event loop for every request, as under uvicorn
        worker = threading.Thread(target=upload)
        started = time.perf_counter()
        worker.start()
        time.sleep(0.5)  # the upload is being processed
        t0 = time.perf_counter()
        other = client.get("/static/app.js")
        answered = time.perf_counter()
        worker.join()
    assert other.status_code == 200
    assert answered - t0 < 1.0  # not the 1.5 s left of the upload
    assert answered < outcome["done"]
    assert outcome["done"] - started >= slow
    assert outcome["r"].status_code in (200, 303), outcome["r"].text
