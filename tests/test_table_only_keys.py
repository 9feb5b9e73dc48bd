"""Keys only a table job reads (``cells:``, ``output.cells/excel/mark/tab``) are refused by
every other kind of job, naming the key, the job's kind and what to use instead, before
anything is read or written (another job would accept them and silently write less)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from sdckit.cli import app
from sdckit.jobs.config import TABLE_ONLY_KEYS

runner = CliRunner()

#: Each kind of job, as a job file without its ``output:`` (and the command line to run it).
JOBS = {
    "anonymize": (
        "attributes: {age: {role: quasi_identifying, hierarchy: {masking: {}}}}\n"
        "models: [{k_anonymity: {k: 2}}]\n",
        ["anonymize", "--config"],
    ),
    "mask": (
        "methods: [{noise: {columns: [income], alpha: 0.1}}]\nseed: 1\n",
        ["mask", "--config"],
    ),
    "synthesize": ("method: cart\nseed: 1\n", ["synthesize", "--config"]),
    "analyze": ("qi: [age]\n", ["analyze", "--config"]),
    "compare": ("grid: [{noise: {columns: [income], alpha: 0.1}}]\n", ["compare", "--config"]),
}
#: Each refused key as the job file writes it (and the phrase its message carries).
KEYS = {
    "cells": ("cells: {path: data.csv}\n", "input: {path: data.csv}"),
    "output.cells": ("", "output.path"),
    "output.excel": ("", "output.path"),
    "output.mark": ("", "Remove output.mark"),
    "output.tab": ("", "output.path"),
}


@pytest.fixture()
def data(tmp_path: Path) -> Path:
    pd.DataFrame({"age": ["31", "32", "33", "34"], "income": [1.0, 2.0, 3.0, 4.0]}).to_csv(
        tmp_path / "data.csv", index=False
    )
    return tmp_path


def test_every_key_is_named():
    assert set(KEYS) == set(TABLE_ONLY_KEYS)


@pytest.mark.parametrize("key", list(KEYS))
@pytest.mark.parametrize("kind", list(JOBS))
def test_table_only_key_refused(data, kind, key):
    body, command = JOBS[kind]
    top, instead = KEYS[key]
    output = {"path": "out.csv", "json": "out.json"}
    if key.startswith("output."):
        name = key.split(".", 1)[1]
        output[name] = "x" if name == "mark" else f"t.{'xlsx' if name == 'excel' else name}"
    if kind in ("analyze", "compare"):
        output.pop("path")
    text = "input: data.csv\n" + top + body + f"output: {output}\n".replace("'", "")
    (data / "job.yaml").write_text(text)
    result = runner.invoke(app, [*command, str(data / "job.yaml")])
    assert result.exit_code == 2, result.output
    message = " ".join(result.output.split())
    assert f"{key}: {'an' if kind[0] == 'a' else 'a'} {kind} job" in message
    assert "only a table job (`sdckit table`)" in message and instead in message
    assert sorted(p.name for p in data.iterdir()) == ["data.csv", "job.yaml"]  # nothing written
