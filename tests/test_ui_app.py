"""The web app's pieces without a browser: type inference, the risk each quasi-identifier adds
(hand-computed), the record table, runs executed by the worker function, the access token and
bad input through HTTP (FastAPI's test client)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("python_multipart")

from fastapi.testclient import TestClient  # noqa: E402

from sdckit.ui.analysis import qi_contributions, record_risk_table  # noqa: E402
from sdckit.ui.app import create_app  # noqa: E402
from sdckit.ui.projects import ProjectStore, infer_type  # noqa: E402
from sdckit.ui.runs import execute_run, read_status, write_job  # noqa: E402

TOKEN = "test-token-0123456789"


def _client(data_dir: Path, **options) -> TestClient:
    """A client of the app that has entered with the token (holds its cookie)."""
    client = TestClient(create_app(data_dir, token=TOKEN, **options), base_url="http://127.0.0.1")
    assert client.get(f"/?token={TOKEN}", follow_redirects=False).status_code == 303
    return client


@pytest.mark.parametrize(
    ("values", "expected"),
    [
        (["1", "22", "-3", ""], "integer"),
        (["1.5", "2", "3e2"], "decimal"),
        (["2024-01-31", "1999-12-01"], "date"),
        (["a", "1"], "nominal"),
        (["", ""], "nominal"),
    ],
)
def test_infer_type(values, expected):
    assert infer_type(pd.Series(values, dtype=object)) == expected


def test_qi_contributions_hand_computed():
    # rows (a, b): (1,x) (1,x) (2,x) (2,y): classes {1x: 2, 2x: 1, 2y: 1} -> 2 uniques.
    # Without a: b = x,x,x,y -> 1 unique, so a adds 2 - 1 = 1. Without b: a = 1,1,2,2 -> 0
    # uniques, so b adds 2. distinction(a) = 2 values / 4 records = 0.5; separation(a) =
    # 1 - (2*1 + 2*1) / (4*3) = 2/3.
    data = pd.DataFrame({"a": ["1", "1", "2", "2"], "b": ["x", "x", "x", "y"]})
    out = qi_contributions(data, ["a", "b"])
    assert (out["classes"], out["sample_uniques"], out["records_below_5"]) == (3, 2, 4)
    per = {r["attribute"]: r for r in out["per_attribute"]}
    assert per["a"]["uniques_added"] == 1 and per["b"]["uniques_added"] == 2
    assert per["a"]["distinction"] == pytest.approx(0.5)
    assert per["a"]["separation"] == pytest.approx(2 / 3)
    assert per["b"]["distinct"] == 2


def test_record_risk_table_filters_sorts_and_pages():
    data = pd.DataFrame({"x": ["a", "b", "c", "d", "e"]})
    risk = np.array([0.5, 1.0, 0.2, 1.0, 0.1])
    page = record_risk_table(data, risk, min_risk=0.5, page_size=2)
    assert page["total"] == 3 and page["pages"] == 2
    assert [r[0] for r in page["rows"]] == [2, 4]  # risk 1.0 first, ties by row
    last = record_risk_table(data, risk, min_risk=0.5, page_size=2, page=2)
    assert [r[0] for r in last["rows"]] == [1]
    found = record_risk_table(data, risk, search="C", sort="x", descending=False)
    assert found["total"] == 1 and found["rows"][0][2] == "c"


def _tiny_project(tmp_path: Path):
    csv = tmp_path / "tiny.csv"
    rows = ["age,sex,disease"] + [f"{20 + i % 4},{'MF'[i % 2]},{'abc'[i % 3]}" for i in range(24)]
    csv.write_text("\n".join(rows) + "\n")
    store = ProjectStore(tmp_path / "ui")
    project = store.create("tiny", csv)
    project.attributes["age"].update(
        role="quasi_identifying", hierarchy={"interval": {"widths": [2, 4]}}
    )
    project.attributes["sex"].update(role="quasi_identifying", hierarchy={"masking": {}})
    store.save(project)
    return store, project


def test_a_run_writes_its_job_file_and_outcome(tmp_path):
    store, project = _tiny_project(tmp_path)
    folder = project.runs_folder / "r1"
    folder.mkdir(parents=True)
    doc = project.job_base() | {"models": [{"k_anonymity": {"k": 6}}], "suppression_limit": 0}
    write_job(folder, doc, "anonymize")
    text = (folder / "job.yaml").read_text()
    assert "path: release.csv" in text and "sdckit anonymize --config job.yaml" in text
    execute_run(str(folder), "anonymize")
    status = read_status(folder)
    assert status["state"] == "done", status
    assert status["summary"]["verified"] is True
    space = json.loads((folder / "solution_space.json").read_text())
    assert space["chosen"] == list(status["summary"]["transformation"].values())
    released = pd.read_csv(folder / "release.csv", dtype=str)
    assert released.groupby(["age", "sex"]).size().min() >= 6


def test_a_failing_run_keeps_the_command_line_message(tmp_path):
    store, project = _tiny_project(tmp_path)
    folder = project.runs_folder / "r2"
    folder.mkdir(parents=True)
    write_job(folder, project.job_base() | {"models": [{"k_anonymity": {"k": 1000}}]}, "anonymize")
    execute_run(str(folder), "anonymize")
    status = read_status(folder)
    assert status["state"] == "failed" and status["input_error"] is True
    assert "larger than the number of records (24)" in status["message"]
    assert not (folder / "release.csv").exists()


def test_the_token_guards_every_page(tmp_path):
    client = TestClient(create_app(tmp_path, token=TOKEN), base_url="http://127.0.0.1")
    assert client.get("/").status_code == 401
    assert client.get("/static/app.js").status_code == 401
    first = client.get("/?token=wrong", follow_redirects=False)
    assert first.status_code == 401
    entered = client.get(f"/p/x/risk?token={TOKEN}&threshold=0.1", follow_redirects=False)
    assert entered.status_code == 303
    assert entered.headers["location"] == "/p/x/risk?threshold=0.1"  # the clean address
    cookie = entered.headers["set-cookie"].lower()
    assert f"sdckit_ui_token={TOKEN}".lower() in cookie
    assert "httponly" in cookie and "samesite=strict" in cookie
    assert client.get("/").status_code == 200


def test_bad_input_over_http_gives_clear_messages(tmp_path):
    client = _client(tmp_path)
    r = client.post("/projects/upload", files={"file": ("photo.png", b"\x89PNG....", "image/png")})
    assert r.status_code == 400 and "is not a CSV or Parquet file" in r.text
    r = client.post("/projects/upload", files={"file": ("empty.csv", b"", "text/csv")})
    assert r.status_code == 400 and "is empty" in r.text
    r = client.post("/projects/path", data={"path": str(tmp_path / "nope.csv")})
    assert r.status_code == 400 and "is not a file on the server" in r.text
    assert not any((tmp_path / "projects").iterdir())  # no half-made project left
    r = client.get("/p/unknown-123/data")
    assert r.status_code == 400 and "there is no project" in r.text
    # htmx requests get the message in the page's message area
    r = client.get("/p/unknown-123/classify/risk", headers={"HX-Request": "true"})
    assert r.status_code == 400 and r.headers["HX-Retarget"] == "#messages"


def test_classification_and_roles_over_http(tmp_path):
    csv = tmp_path / "d.csv"
    csv.write_text("a;b\n1;x\n1;x\n2;x\n2;y\n")
    client = _client(tmp_path / "ui")
    r = client.post("/projects/path", data={"path": str(csv)}, follow_redirects=False)
    assert r.status_code == 303
    pid = r.headers["location"].split("/")[2]
    for column in ("a", "b"):
        assert (
            client.post(f"/p/{pid}/role/{column}", data={"role": "quasi_identifying"}).status_code
            == 200
        )
    page = client.get(f"/p/{pid}/classify/risk").text
    assert 'id="sample-uniques">2 (50.0%)' in page
    bad = client.post(f"/p/{pid}/role/a", data={"role": "secret"})
    assert bad.status_code == 400 and "role must be one of" in bad.text
    risk = client.get(f"/p/{pid}/risk?sampling_fraction=0.01").text
    assert 'id="population-uniques">pitman' in risk
    bad_fraction = client.get(f"/p/{pid}/risk?sampling_fraction=lots")
    assert (
        bad_fraction.status_code == 400
        and "sampling fraction must be a number" in bad_fraction.text
    )
    built = client.post(
        f"/p/{pid}/hierarchy/a", data={"builder": "interval", "params": "widths: [2]"}
    )
    assert built.status_code == 200 and "interval builder" in built.text


def test_ui_refuses_other_interfaces_without_allow_remote():
    from typer.testing import CliRunner

    from sdckit.cli import build_app

    result = CliRunner().invoke(build_app("ui"), ["ui", "--host", "0.0.0.0"])
    assert result.exit_code == 2
    assert "--allow-remote" in result.output


def test_export_labels_a_seeded_job_file_for_the_data_steward_only(tmp_path):
    """A mask job's seed regenerates every random choice of the masking: the Export step says
    job.yaml is for the data steward and must not be published with the release; an anonymize
    job without a seed carries no such label."""
    store, project = _tiny_project(tmp_path)
    client = _client(tmp_path / "ui")
    runs = {
        "m1": ("mask", {"methods": [{"pram": {"columns": ["disease"]}}], "seed": 1}),
        "a1": ("anonymize", {"models": [{"k_anonymity": {"k": 2}}]}),
    }
    for rid, (kind, extra) in runs.items():
        folder = project.runs_folder / rid
        folder.mkdir(parents=True)
        write_job(folder, project.job_base() | extra, kind)
        (folder / "meta.json").write_text(json.dumps({"kind": kind, "label": rid}))
        execute_run(str(folder), kind)
        assert read_status(folder)["state"] == "done", read_status(folder)
    masked = client.get(f"/p/{project.id}/runs/m1").text
    assert 'id="job-steward-only"' in masked
    assert "For the data steward only" in masked and "do not publish it with the release" in masked
    assert 'id="job-steward-only"' not in client.get(f"/p/{project.id}/runs/a1").text


def test_a_generalized_column_is_compared_on_the_released_categories(tmp_path):
    # k = 12 on 24 records generalizes age (20..23) into intervals; the before/after figure
    # shows the original's records counted in the released intervals, not its raw ages
    store, project = _tiny_project(tmp_path)
    folder = project.runs_folder / "r1"
    folder.mkdir(parents=True)
    doc = project.job_base() | {"models": [{"k_anonymity": {"k": 12}}], "suppression_limit": 0}
    write_job(folder, doc, "anonymize")
    (folder / "meta.json").write_text(json.dumps({"kind": "anonymize", "label": "r1"}))
    execute_run(str(folder), "anonymize")
    status = read_status(folder)
    assert status["state"] == "done", status
    assert status["summary"]["transformation"]["age"] > 0
    client = _client(tmp_path / "ui")
    page = client.get(f"/p/{project.id}/runs/r1/distribution", params={"column": "age"})
    assert page.status_code == 200, page.text
    import html

    figure = json.loads(html.unescape(page.text.split('data-figure="')[1].split('"')[0]))
    before, after = figure["data"]
    released = pd.read_csv(folder / "release.csv", dtype=str)["age"]
    assert sorted(after["x"]) == sorted(released.unique())  # the released categories
    assert before["x"] == after["x"]
    assert sum(before["y"]) == pytest.approx(1.0) and sum(after["y"]) == pytest.approx(1.0)
    # nothing suppressed: the original generalized to the run's level is the release
    assert before["y"] == pytest.approx(after["y"])


def test_a_comparison_ranks_the_runs_under_the_risk_ceiling_first(tmp_path):
    import html

    store, project = _tiny_project(tmp_path)
    for rid, k in (("a2", 2), ("a12", 12)):
        folder = project.runs_folder / rid
        folder.mkdir(parents=True)
        write_job(folder, project.job_base() | {"models": [{"k_anonymity": {"k": k}}]}, "anonymize")
        (folder / "meta.json").write_text(json.dumps({"kind": "anonymize", "label": f"k={k}"}))
        execute_run(str(folder), "anonymize")
        assert read_status(folder)["state"] == "done"
    client = _client(tmp_path / "ui")
    # the form's ceilings are checked before a run starts
    page = client.post(f"/p/{project.id}/compare", data={"run": ["a2", "a12"], "max_risk": "x"})
    assert page.status_code == 400 and "maximum disclosure risk must be a number" in page.text
    assert client.get(f"/p/{project.id}/compare").status_code == 200
    assert 'name="max_risk"' in client.get(f"/p/{project.id}/compare").text
    # the comparison job the page starts, with a ceiling: ranked under it first, drawn
    folder = project.runs_folder / "c1"
    folder.mkdir(parents=True)
    grid = [{"protected": {"path": str(project.runs_folder / r / "release.csv"), "label": r}}
            for r in ("a2", "a12")]  # fmt: skip
    options = {"scale": "reidentification", "categorical": ["age", "sex"], "max_risk": 10.0}
    write_job(folder, project.job_base() | {"grid": grid, "options": options}, "compare")
    (folder / "meta.json").write_text(json.dumps({"kind": "compare", "label": "c1"}))
    execute_run(str(folder), "compare")
    status = read_status(folder)
    assert status["state"] == "done", status
    ranking = status["summary"]["ranking"]
    flags = [r["within_limits"] for r in ranking if r["ru_score"] is not None]
    assert flags == sorted(flags, reverse=True)  # every run within the ceiling comes first
    text = client.get(f"/p/{project.id}/runs/c1").text
    assert 'id="limits"' in text and "within the ceilings" in text
    figure = json.loads(html.unescape(text.split('id="chart-ru" data-figure="')[1].split('"')[0]))
    assert figure["layout"]["shapes"][0]["y0"] == 10.0
