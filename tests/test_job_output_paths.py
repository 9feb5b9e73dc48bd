"""Job commands refuse output paths that would overwrite an input, before any work."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from typer.testing import CliRunner

from sdckit.cli import app

runner = CliRunner()


def _data(tmp_path: Path) -> Path:
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {
            "age": rng.integers(20, 60, 40),
            "zip": rng.choice(["1011", "1012", "1021"], 40),
            "income": rng.normal(100, 10, 40).round(2),
        }
    )
    path = tmp_path / "in.csv"
    df.to_csv(path, index=False)
    return path


def _run(tmp_path: Path, body: str, *flags: str):
    src = _data(tmp_path)
    before = src.read_bytes()
    (tmp_path / "job.yaml").write_text(body)
    res = runner.invoke(app, [*flags[:1], "--config", str(tmp_path / "job.yaml"), *flags[1:]])
    assert src.read_bytes() == before  # the input is never modified
    return res


def test_anonymize_output_on_the_input_is_refused(tmp_path: Path) -> None:
    res = _run(
        tmp_path,
        "input: in.csv\n"
        "attributes:\n"
        "  zip: {role: quasi_identifying, hierarchy: {masking: {}}}\n"
        "models: [{k_anonymity: {k: 2}}]\n"
        "output: {path: in.csv}\n",
        "anonymize",
    )
    assert res.exit_code == 2, res.output
    assert "output.path" in res.output and "input.path" in res.output


def test_mask_json_flag_on_the_input_is_refused(tmp_path: Path) -> None:
    res = _run(
        tmp_path,
        "input: in.csv\nmethods: [{noise: {columns: [income], alpha: 0.1}}]\nseed: 1\n"
        "output: {path: out.csv}\n",
        "mask",
        "--json",
        str(tmp_path / "in.csv"),
    )
    assert res.exit_code == 2, res.output
    assert "--json" in res.output
    assert not (tmp_path / "out.csv").exists()


def test_compare_report_on_a_protected_file_is_refused(tmp_path: Path) -> None:
    _data(tmp_path).rename(tmp_path / "given.csv")
    res = _run(
        tmp_path,
        "input: in.csv\ncolumns: [income, age]\nseed: 1\n"
        "grid:\n  - noise: {alpha: 0.1}\n  - protected: {path: given.csv}\n"
        "output: {report: given.csv, json: c.json}\n",
        "compare",
    )
    assert res.exit_code == 2, res.output
    assert "grid[1].protected.path" in " ".join(res.output.split())
    assert not (tmp_path / "c.json").exists()
    res = runner.invoke(
        app,
        ["compare", "--config", str(tmp_path / "job.yaml"), "--html", str(tmp_path / "c.json"),
         "--json", str(tmp_path / "c.json")],
    )  # fmt: skip
    assert res.exit_code == 2 and "same file" in " ".join(res.output.split())
