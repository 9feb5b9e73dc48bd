"""The one report writer: the page template is compiled once and kept in Jinja2's cache."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pandas as pd
import pytest

from sdckit.report import writer
from sdckit.report.writer import Report, Section


def _report() -> Report:
    report = Report("Title <&>", subtitle="sub")
    report.add(
        Section(
            "Numbers",
            text="a <b>text</b>",
            facts={"records": 30162, "share": 0.25},
            table=pd.DataFrame({"a": [1, 2], "b": ["x", "<y>"]}),
        )
    )
    return report


@pytest.fixture()
def cache_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Jinja2's per-user cache folder inside ``tmp_path``; a fresh template per test."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    writer._template.cache_clear()
    yield tmp_path
    writer._template.cache_clear()


def _cached(folder: Path) -> list[Path]:
    return [p for p in folder.glob("_jinja2-cache-*/*") if p.is_file()]


def test_a_cached_template_renders_the_page_a_compiled_one_does(cache_folder: Path) -> None:
    first = _report().render_html()  # compiled, and stored: the page and its sections
    assert len(_cached(cache_folder)) == 2
    writer._template.cache_clear()  # as a new process: loaded from the cache
    second = _report().render_html()
    assert second == first
    assert "Title &lt;&amp;&gt;" in first and "&lt;y&gt;" in first  # still autoescaped


def test_a_damaged_cache_file_is_compiled_again(cache_folder: Path) -> None:
    first = _report().render_html()
    stored = _cached(cache_folder)  # the page and the sections it includes
    assert len(stored) == 2
    for file in stored:
        file.write_bytes(file.read_bytes()[:20])  # truncated
    writer._template.cache_clear()
    assert _report().render_html() == first
    assert all(len(file.read_bytes()) > 100 for file in stored)  # written again, whole
    for file in stored:
        file.write_bytes(b"not a cache file at all")
    writer._template.cache_clear()
    assert _report().render_html() == first


def test_an_unusable_cache_folder_means_no_cache(cache_folder: Path) -> None:
    # a file where Jinja2's folder would be: Jinja2 refuses it as unsafe, and the page is
    # compiled in memory instead
    (cache_folder / f"_jinja2-cache-{os.getuid()}").write_text("not a folder")
    assert _report().render_html().count("Numbers") == 1
    assert _cached(cache_folder) == []
