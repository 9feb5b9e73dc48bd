"""Tests: ``sdckit evaluate`` from a user's side: bad input (exit 2, one clear line, nothing
written), output paths, the flags of every measure, and small hand-computed values."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from sdckit.cli import app

runner = CliRunner()

COLS = ["v1", "v2", "v3", "v4"]
# Seed 004 (Nin, Herranz & Torra 2008): ranks 1..10, rank swapping with a window of 2 ranks.
ORIGINAL = pd.DataFrame(
    [(8, 9, 1, 3), (6, 7, 10, 2), (10, 3, 4, 1), (7, 1, 2, 6), (9, 4, 6, 4),
     (2, 2, 8, 8), (1, 10, 3, 9), (4, 8, 7, 10), (5, 5, 5, 5), (3, 6, 9, 7)],
    columns=COLS,
)  # fmt: skip
PROTECTED = pd.DataFrame(
    [(10, 10, 3, 5), (5, 5, 8, 1), (8, 4, 2, 2), (9, 2, 4, 4), (7, 3, 5, 6),
     (4, 1, 10, 10), (3, 9, 1, 7), (2, 6, 9, 8), (6, 7, 6, 3), (1, 8, 7, 9)],
    columns=COLS,
)  # fmt: skip


def _squeeze(text: str) -> str:
    """Text without whitespace (Rich wraps long lines, even inside paths)."""
    return "".join(text.split())


def _pair(tmp_path: Path, original=ORIGINAL, protected=PROTECTED) -> tuple[str, str]:
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    original.to_csv(a, index=False)
    protected.to_csv(b, index=False)
    return str(a), str(b)


def _run(*args: str):
    return runner.invoke(app, ["evaluate", *args])


def _assert_bad(res, *fragments: str, written: tuple[Path, ...] = ()) -> None:
    assert res.exit_code == 2, res.output
    text = _squeeze(res.output)
    for frag in fragments:
        assert _squeeze(frag) in text, (frag, res.output)
    assert "internalerror" not in text
    for path in written:
        assert not path.exists(), path


# --------------------------------------------------------------------------------------------
# files that cannot be read
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("which", ["--original", "--protected"])
def test_missing_file_names_it(tmp_path, which) -> None:
    a, b = _pair(tmp_path)
    missing = str(tmp_path / "nope.csv")
    args = {"--original": a, "--protected": b, which: missing}
    out_json, out_html = tmp_path / "ev.json", tmp_path / "ev.html"
    res = _run(*[x for kv in args.items() for x in kv], "--json", str(out_json), "--html",
               str(out_html))  # fmt: skip
    _assert_bad(res, "nope.csv", "does not exist", written=(out_json, out_html))


@pytest.mark.parametrize("content", ["", "v1,v2,v3,v4\n"])
def test_empty_file_exit_2(tmp_path, content) -> None:
    a, _ = _pair(tmp_path)
    empty = tmp_path / "empty.csv"
    empty.write_text(content)
    out_json, out_html = tmp_path / "ev.json", tmp_path / "ev.html"
    res = _run("--original", a, "--protected", str(empty), "--json", str(out_json), "--html",
               str(out_html))  # fmt: skip
    _assert_bad(res, written=(out_json, out_html))
    assert "empty" in res.output or "rows" in res.output


# --------------------------------------------------------------------------------------------
# output paths: never overwrite an input, never two outputs on one file, nothing half-written
# --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("flag", ["--json", "--html"])
def test_output_on_an_input_file_is_refused(tmp_path, flag) -> None:
    a, b = _pair(tmp_path)
    before = Path(a).read_text()
    res = _run("--original", a, "--protected", b, flag, a)
    _assert_bad(res, flag, "--original", "never overwritten")
    assert Path(a).read_text() == before


def test_json_and_html_on_one_path_is_refused(tmp_path) -> None:
    a, b = _pair(tmp_path)
    out = tmp_path / "ev.out"
    res = _run("--original", a, "--protected", b, "--json", str(out), "--html", str(out))
    _assert_bad(res, "--json", "--html", "same file", written=(out,))


def test_output_that_is_a_directory_writes_nothing(tmp_path) -> None:
    a, b = _pair(tmp_path)
    folder = tmp_path / "reports"
    folder.mkdir()
    out_json = tmp_path / "ev.json"
    res = _run("--original", a, "--protected", b, "--json", str(out_json), "--html", str(folder))
    _assert_bad(res, "--html", "is a directory", written=(out_json,))


def test_output_folder_that_is_a_file_writes_nothing(tmp_path) -> None:
    a, b = _pair(tmp_path)
    out_html = tmp_path / "ev.html"
    res = _run("--original", a, "--protected", b, "--html", str(out_html), "--json",
               str(Path(a) / "ev.json"))  # fmt: skip
    _assert_bad(res, "--json", "is a file", written=(out_html,))
