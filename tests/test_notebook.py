"""Results show themselves in a Jupyter notebook (``_repr_html_``): the sections of the HTML
report the command line writes, as one fragment with scoped styles."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

import sdckit
from sdckit.core.schema import Schema
from sdckit.datasets import load_adult
from sdckit.models import KAnonymity
from sdckit.tables import FrequencyRule, Table
from sdckit.tables.protect import protect

QIS = ["sex", "age", "race"]


def _is_fragment(html: str) -> None:
    assert html.startswith('<div class="sdckit-report">') and html.rstrip().endswith("</div>")
    assert "<html" not in html and "<body" not in html
    # every style rule is scoped to the fragment, so a notebook's own styles are untouched
    style = html.split("<style>")[1].split("</style>")[0]
    selectors = [s.strip() for s in re.findall(r"([^{}]+)\{", style)]
    parts = [part.strip() for s in selectors for part in s.split(",")]
    assert parts and all(part.startswith(".sdckit-report") for part in parts)


def test_a_risk_analysis_shows_the_reports_figures() -> None:
    df, _ = load_adult()
    result = sdckit.analyze(df, QIS, ["occupation"])
    html = result._repr_html_()
    _is_fragment(html)
    assert "sdckit risk analysis" in html
    assert f"{int(result['sample_uniques']):,}" in html or str(result["sample_uniques"]) in html


def test_an_anonymization_shows_its_transformation_and_suppression() -> None:
    df, h = load_adult()
    schema = Schema.from_roles(quasi_identifying=QIS, hierarchies={q: h[q] for q in QIS})
    result = sdckit.anonymize(df, schema, [KAnonymity(5)], suppression_limit=0.05)
    html = result._repr_html_()
    _is_fragment(html)
    assert "sdckit anonymization" in html and "suppressed records" in html
    assert f"{result.suppressed_records:,}" in html


def test_a_synthesis_shows_its_release_part_first() -> None:
    df, _ = load_adult()
    result = sdckit.synthesize(df[QIS].head(1500), "cart", seed=1)
    html = result._repr_html_()
    _is_fragment(html)
    release = html.index("Release (may be published")
    assert release < html.index("For the data steward")


def test_a_protected_table_shows_its_cells_with_their_status() -> None:
    rng = np.random.default_rng(0)
    df = pd.DataFrame(
        {"r": rng.choice(list("abc"), 30), "c": rng.choice(list("xyz"), 30), "v": 1.0}
    )
    table = Table.from_microdata(df, ["r", "c"], "v")
    result = protect(table, [FrequencyRule(3)], "simple")
    html = result._repr_html_()
    _is_fragment(html)
    assert "sdckit table" in html
    assert (result.status == "primary").any()  # cells under 3 contributors
    assert 'class="primary"' in html and 'class="secondary"' in html


def test_progress_true_shows_a_bar_fed_by_the_search(monkeypatch) -> None:
    # the bar (rich's: a live line on a terminal, a live cell in Jupyter) follows the
    # search's progress(done, total) calls, and the result is the one without a bar
    import rich.progress

    seen: list[tuple[int, int]] = []
    update = rich.progress.Progress.update

    def record(self, task, **kwargs):  # type: ignore[no-untyped-def]
        if "completed" in kwargs:
            seen.append((kwargs["completed"], kwargs["total"]))
        return update(self, task, **kwargs)

    monkeypatch.setattr(rich.progress.Progress, "update", record)
    df, h = load_adult()
    schema = Schema.from_roles(quasi_identifying=QIS, hierarchies={q: h[q] for q in QIS})
    shown = sdckit.anonymize(df, schema, [KAnonymity(5)], suppression_limit=0.05, progress=True)
    plain = sdckit.anonymize(df, schema, [KAnonymity(5)], suppression_limit=0.05)
    assert shown.transformation == plain.transformation
    assert seen and all(0 <= done <= total for done, total in seen)


def test_a_mask_job_shows_its_masked_columns(tmp_path) -> None:
    from sdckit.jobs.mask import run_mask_job

    df, _ = load_adult()
    df.head(400).to_csv(tmp_path / "in.csv", index=False)
    job = {
        "input": {"path": str(tmp_path / "in.csv")},
        "methods": [{"microaggregation": {"columns": ["age"], "k": 5}}],
        "seed": 3,
    }
    result = run_mask_job(job)
    html = result._repr_html_()
    _is_fragment(html)
    assert "sdckit mask" in html and "age" in html
    assert not list(tmp_path.glob("*.html"))  # shown, nothing written
