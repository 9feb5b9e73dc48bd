"""Outputs at URIs of Hadoop file systems on the Spark engine: written through the session's
``FileSystem``, staged beside the target (``<target>.sdckit-tmp-<run_id>``) and renamed into
place with the job's other outputs; a failed run leaves nothing at the targets; a scheme
Hadoop has no file system for is refused before the input is read; the local engine refuses
such URIs before any work.

The remote file system is Hadoop's ``viewfs``, a real non-``file`` scheme whose mount table
links ``viewfs://<table>/out`` to a local temporary folder (no network needed)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from sdckit.cli import app

RUNNER = CliRunner()
_ATTRIBUTES = {
    "age": {"role": "quasi_identifying", "type": "integer",
            "hierarchy": {"interval": {"widths": [10, 20], "bottom": 0}}},
    "sex": {"role": "quasi_identifying", "hierarchy": {"masking": {}}},
    "diag": {"role": "sensitive"},
}  # fmt: skip


def _data(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(3)
    pd.DataFrame(
        {"age": rng.integers(18, 90, 60), "sex": rng.choice(["f", "m"], 60),
         "diag": rng.choice(["a", "b", "c"], 60)}
    ).to_csv(folder / "in.csv", index=False)  # fmt: skip
    return folder / "in.csv"


def _job(folder: Path, output: dict, engine: str = "spark", **keys) -> Path:
    """A small anonymization job in ``folder`` (its input ``in.csv`` beside it)."""
    _data(folder)
    doc = {"input": "in.csv", "engine": engine, "attributes": _ATTRIBUTES,
           "models": [{"k_anonymity": {"k": 3}}], "output": output, **keys}  # fmt: skip
    (folder / "job.yaml").write_text(yaml.safe_dump(doc))
    return folder / "job.yaml"


class _Folder:
    """A remote file system for :func:`sdckit.core.io.register_remote_files` kept in a local
    folder (``mem://x/NAME`` is ``folder/NAME``), recording what it was asked."""

    def __init__(self, folder: Path) -> None:
        self.folder, self.calls = folder, []

    def _at(self, uri: str) -> Path:
        return self.folder / uri.removeprefix("mem://x/")

    def check(self, uri: str, where: str) -> None:
        self.calls.append(("check", uri))

    def upload(self, local: Path, uri: str) -> None:
        self.calls.append(("upload", uri))
        self._at(uri).write_bytes(local.read_bytes())

    def commit(self, staged) -> None:
        self.calls.append(("commit", list(staged)))
        for tmp, dest in staged:
            self._at(tmp).replace(self._at(dest))

    def discard(self, uris) -> None:
        self.calls.append(("discard", list(uris)))
        for uri in uris:
            self._at(uri).unlink(missing_ok=True)


def test_an_output_set_stages_remote_files_beside_their_targets(tmp_path: Path) -> None:
    from sdckit.core.io import output_set, register_remote_files, write_text
    from sdckit.errors import ConfigError

    fs = _Folder(tmp_path)
    with register_remote_files(fs):
        with output_set() as outputs:
            write_text("mem://x/a.json", "{}")
            write_text(tmp_path / "local.txt", "here")
            tmp = f"mem://x/a.json.sdckit-tmp-{outputs.run_id}"
            assert (tmp_path / f"a.json.sdckit-tmp-{outputs.run_id}").is_file()
        assert fs.calls == [("upload", tmp), ("commit", [(tmp, "mem://x/a.json")])]
        with pytest.raises(RuntimeError), output_set():
            write_text("mem://x/a.json", "new")
            raise RuntimeError("the job failed")
        assert fs.calls[-1][0] == "discard" and (tmp_path / "a.json").read_text() == "{}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "local.txt"]
    with pytest.raises(ConfigError, match="only the Spark engine writes"):
        write_text("mem://x/b.json", "{}")


@pytest.fixture
def viewfs(spark, tmp_path: Path) -> tuple[str, Path]:
    """``(viewfs://<table>/out, the local folder it links to)``: a mount table of its own
    per test (Hadoop caches a file system per scheme and authority)."""
    folder = tmp_path / "remote"
    folder.mkdir()
    table = f"sdctest{uuid.uuid4().hex[:8]}"
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    conf.set(f"fs.viewfs.mounttable.{table}.link./out", folder.as_uri())
    return f"viewfs://{table}/out", folder


def _staged(folder: Path) -> list[str]:
    return [str(p) for p in folder.rglob("*") if ".sdckit-tmp-" in p.name]


def _outputs(uri: str) -> dict:
    return {"path": f"{uri}/release.parquet", "json": f"{uri}/report.json",
            "report": f"{uri}/report.html"}  # fmt: skip


def test_anonymize_writes_at_viewfs_uris_exactly(viewfs, tmp_path: Path) -> None:
    uri, remote = viewfs
    job = _job(tmp_path / "jobdir", _outputs(uri))
    for _ in range(2):  # the second run replaces the first run's outputs
        res = RUNNER.invoke(app, ["anonymize", "--config", str(job), "-q"])
        assert res.exit_code == 0, res.output
        names = sorted(p.name for p in remote.iterdir() if not p.name.endswith(".crc"))
        assert names == ["release.parquet", "report.html", "report.json"]
        assert _staged(remote) == []
    assert len(pd.read_parquet(remote / "release.parquet")) == 60
    summary = json.loads((remote / "report.json").read_text())
    assert summary["outputs"]["data"] == f"{uri}/release.parquet"
    assert summary["run_id"] in (remote / "report.html").read_text()
    assert sorted(p.name for p in job.parent.iterdir()) == ["in.csv", "job.yaml"]


def test_mask_and_table_write_at_viewfs_uris(viewfs, tmp_path: Path) -> None:
    uri, remote = viewfs
    job = _job(
        tmp_path / "mask",
        {"path": f"{uri}/masked.csv", "json": f"{uri}/mask.json"},
        methods=[{"top_bottom_coding": {"columns": ["age"], "top": 80, "bottom": 20}}],
        seed=1,
    )
    doc = yaml.safe_load(job.read_text())
    doc.pop("models")
    job.write_text(yaml.safe_dump(doc))
    res = RUNNER.invoke(app, ["mask", "--config", str(job), "-q"])
    assert res.exit_code == 0, res.output
    masked = pd.concat(pd.read_csv(p) for p in (remote / "masked.csv").glob("part-*.csv"))
    assert len(masked) == 60 and masked["age"].between(20, 80).all()
    assert json.loads((remote / "mask.json").read_text())["engine"] == "spark"

    _data(tmp_path / "table")
    table = {"input": "in.csv", "engine": "spark",
             "dimensions": {"sex": {}, "diag": {}}, "rules": [{"frequency": {"threshold": 3}}],
             "output": {"cells": f"{uri}/cells.csv"}}  # fmt: skip
    (tmp_path / "table" / "table.yaml").write_text(yaml.safe_dump(table))
    res = RUNNER.invoke(app, ["table", "--config", str(tmp_path / "table" / "table.yaml"),
                              "-q", "--json", f"{uri}/table.json"])  # fmt: skip
    assert res.exit_code == 0, res.output
    assert len(pd.read_csv(remote / "cells.csv")) > 0
    assert json.loads((remote / "table.json").read_text())["engine"] == "spark"
    assert _staged(remote) == []


def test_a_failed_verification_leaves_nothing_at_the_targets(
    viewfs, tmp_path: Path, monkeypatch
) -> None:
    import sdckit.spark.anonymize as spark_anonymize
    from sdckit.errors import VerificationError

    def failing(*args, **kwargs):
        raise VerificationError("the recount of the written release failed")

    monkeypatch.setattr(spark_anonymize, "verify_release", failing)
    uri, remote = viewfs
    (remote / "report.json").write_text('{"old": true}')  # a previous run's output stays
    job = _job(tmp_path / "jobdir", _outputs(uri))
    res = RUNNER.invoke(app, ["anonymize", "--config", str(job), "-q"])
    assert res.exit_code != 0
    assert "recount of the written release failed" in " ".join(res.output.split())
    assert sorted(p.name for p in remote.iterdir()) == ["report.json"]
    assert json.loads((remote / "report.json").read_text()) == {"old": True}


def test_a_run_failing_after_staging_deletes_what_it_staged(
    viewfs, tmp_path: Path, monkeypatch
) -> None:
    import sdckit.report.writer as writer

    uri, remote = viewfs
    seen: list[str] = []

    def broken(*args, **kwargs):
        names = (Path(p).name.split(".sdckit-tmp-")[0] for p in _staged(remote))
        seen.extend(sorted(n for n in names if not n.startswith(".")))  # (.crc: checksums)
        raise RuntimeError("the JSON failed")

    monkeypatch.setattr(writer, "json_ready", broken)
    job = _job(tmp_path / "jobdir", _outputs(uri))
    res = RUNNER.invoke(app, ["anonymize", "--config", str(job), "-q"])
    assert res.exit_code != 0 and "the JSON failed" in res.output
    assert seen == ["release.parquet", "report.html"]  # staged beside the targets
    assert list(remote.iterdir()) == []  # and deleted


def test_a_scheme_without_a_file_system_is_refused_before_the_input_is_read(
    spark, tmp_path: Path, monkeypatch
) -> None:
    import sdckit.spark.io as spark_io

    def no_read(*args, **kwargs):
        raise AssertionError("the input was read")

    monkeypatch.setattr(spark_io, "read_spark", no_read)
    job = _job(tmp_path, {"path": "nosuch://x/y.csv"})
    res = RUNNER.invoke(app, ["anonymize", "--config", str(job), "-q"])
    assert res.exit_code == 2, res.output
    text = " ".join(res.output.split())
    assert "output.path 'nosuch://x/y.csv'" in text
    assert 'No FileSystem for scheme "nosuch"' in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "job.yaml"]


def test_a_remote_folder_of_other_files_is_not_replaced(viewfs, tmp_path: Path) -> None:
    uri, remote = viewfs
    (remote / "release.parquet").mkdir()
    (remote / "release.parquet" / "notes.txt").write_text("mine")
    job = _job(tmp_path / "jobdir", _outputs(uri))
    res = RUNNER.invoke(app, ["anonymize", "--config", str(job), "-q"])
    assert res.exit_code == 2, res.output
    text = " ".join(res.output.split())
    assert f"output.path '{uri}/release.parquet' is a folder with other files" in text
    assert sorted(p.name for p in remote.rglob("*")) == ["notes.txt", "release.parquet"]


def test_an_output_at_the_input_uri_is_refused_before_spark_starts(tmp_path: Path, no_spark):
    job = _job(tmp_path, {"path": "viewfs://t/out/in.csv"})
    doc = yaml.safe_load(job.read_text())
    doc["input"] = "viewfs://t/out/in.csv"
    job.write_text(yaml.safe_dump(doc))
    res = RUNNER.invoke(app, ["anonymize", "--config", str(job), "-q"])
    assert res.exit_code == 2, res.output
    text = " ".join(res.output.split())
    assert "input.path and " in text and "output.path both name 'viewfs://t/out/in.csv'" in text


@pytest.mark.parametrize("key", ["path", "json", "report"])
def test_the_local_engine_refuses_a_viewfs_uri_before_any_work(tmp_path: Path, key: str) -> None:
    output = {"path": "r.csv", key: "viewfs://sdctest/out/x"}
    job = _job(tmp_path, output, engine="local")
    res = RUNNER.invoke(app, ["anonymize", "--config", str(job), "-q"])
    assert res.exit_code == 2, res.output
    text = " ".join(res.output.split())
    assert f"output.{key} 'viewfs://sdctest/out/x' is a viewfs:// URI" in text
    assert "use `engine: spark`" in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "job.yaml"]


# -- --json / --html on the command line ---------------------------------------------------
def test_file_uris_on_the_command_line_are_the_local_paths(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "elsewhere"
    job = _job(tmp_path / "jobdir", {"path": "r.csv"}, engine="local")
    res = RUNNER.invoke(
        app, ["anonymize", "--config", str(job), "-q", "--json", (out / "a.json").as_uri()]
    )
    assert res.exit_code == 0, res.output
    assert json.loads((out / "a.json").read_text())["outputs"]["data"].endswith("r.csv")
    data = str(tmp_path / "jobdir" / "in.csv")
    res = RUNNER.invoke(
        app,
        ["analyze", data, "--qi", "age,sex", "-q", "--json", (out / "r.json").as_uri(),
         "--html", (out / "r.html").as_uri()],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    res = RUNNER.invoke(
        app,
        ["evaluate", "--original", data, "--protected", data, "-q",
         "--json", (out / "e.json").as_uri(), "--html", (out / "e.html").as_uri()],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    names = ["a.json", "e.html", "e.json", "r.html", "r.json"]
    assert sorted(p.name for p in out.iterdir()) == names
    assert not (tmp_path / "file:").exists()


def test_a_viewfs_uri_on_the_command_line_needs_the_spark_engine(tmp_path: Path) -> None:
    job = _job(tmp_path, {"path": "r.csv"}, engine="local")
    res = RUNNER.invoke(
        app, ["anonymize", "--config", str(job), "-q", "--json", "viewfs://sdctest/out/a.json"]
    )
    assert res.exit_code == 2, res.output
    text = " ".join(res.output.split())
    assert "--json 'viewfs://sdctest/out/a.json' is a viewfs:// URI" in text
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv", "job.yaml"]


def test_a_viewfs_uri_on_the_command_line_is_written_on_spark(viewfs, tmp_path: Path) -> None:
    uri, remote = viewfs
    job = _job(tmp_path / "jobdir", {"path": str(tmp_path / "release.csv")}, engine="local")
    res = RUNNER.invoke(
        app,
        ["anonymize", "--config", str(job), "-q", "--engine", "spark",
         "--json", f"{uri}/a.json"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert json.loads((remote / "a.json").read_text())["engine"] == "spark"
    res = RUNNER.invoke(
        app,
        ["analyze", str(job.parent / "in.csv"), "--qi", "age,sex", "-q", "--engine", "spark",
         "--json", f"{uri}/r.json", "--html", f"{uri}/r.html"],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert json.loads((remote / "r.json").read_text())["engine"] == "spark"
    assert (remote / "r.html").is_file() and _staged(remote) == []


def test_an_analysis_of_a_uri_input_checks_its_output_uris_before_the_analysis(
    viewfs, tmp_path: Path, monkeypatch
) -> None:
    import sdckit.spark.analyze as spark_analyze

    def no_analysis(*args, **kwargs):
        raise AssertionError("the risk was analyzed")

    monkeypatch.setattr(spark_analyze, "analyze_spark", no_analysis)
    uri, remote = viewfs
    _data(remote)  # the input at a URI: only Spark reads its columns (the roles start it)
    job = _job(tmp_path, {}, input=f"{uri}/in.csv")
    res = RUNNER.invoke(app, ["analyze", "--config", str(job), "-q", "--json", "nosuch://x/r.json"])
    assert res.exit_code == 2, res.output
    assert 'No FileSystem for scheme "nosuch"' in " ".join(res.output.split())
