"""`sdckit anonymize` and `sdckit demo` as a user runs them: files, JSON keys, exit codes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from sdckit.cli import app
from sdckit.core.frequency import frequency_set
from sdckit.datasets import data_dir

runner = CliRunner()

JSON_KEYS = {
    "transformation",
    "suppressed_records",
    "metrics",
    "models_satisfied",
    "verified",
    "nodes_checked",
    "elapsed_seconds",
    "risk_before",
    "risk_after",
}
METRIC_KEYS = {"loss", "precision", "discernibility", "aecs", "non_uniform_entropy", "height"}


def _released_classes(path: Path, qis: list[str]) -> pd.Series:
    """Class sizes of the non-suppressed released rows, recomputed from the file."""
    out = pd.read_csv(path, sep=";", dtype=str, keep_default_na=False)
    kept = out[~(out[qis] == "*").all(axis=1)]
    return pd.Series(frequency_set(kept, qis).counts)


def test_demo_writes_a_verified_release(tmp_path: Path) -> None:
    res = runner.invoke(app, ["demo", "--output", str(tmp_path / "d"), "--quiet"])
    assert res.exit_code == 0, res.output
    d = tmp_path / "d"
    assert {p.name for p in d.iterdir()} == {"adult_anonymized.csv", "report.html", "report.json"}
    summary = json.loads((d / "report.json").read_text())
    assert JSON_KEYS <= set(summary)
    assert METRIC_KEYS <= set(summary["metrics"])
    assert summary["verified"] is True
    assert summary["suppressed_records"] <= 0.05 * 30162
    qis = [c for c in summary["transformation"]]
    assert "occupation" not in qis and len(qis) == 8
    # independent check of 5-anonymity and distinct 2-diversity on the written file
    out = pd.read_csv(d / "adult_anonymized.csv", sep=";", dtype=str, keep_default_na=False)
    assert len(out) == 30162
    kept = out[~(out[qis] == "*").all(axis=1)]
    assert len(out) - len(kept) == summary["suppressed_records"]
    fs = frequency_set(kept, qis, sensitive=["occupation"])
    assert fs.counts.min() >= 5
    distinct = (fs.histogram("occupation") > 0).sum(axis=1)
    assert distinct.min() >= 2
    assert summary["risk_after"]["prosecutor"]["max"] <= 0.2
    assert (d / "report.html").read_text().count("<svg") == 3  # class sizes, solution space


@pytest.mark.slow
def test_demo_compare_draws_the_r_u_map_of_seven_protections(tmp_path: Path) -> None:
    res = runner.invoke(app, ["demo", "--compare", "--output", str(tmp_path / "c")])
    assert res.exit_code == 0, res.output
    assert "reidentification scale" in res.output
    d = tmp_path / "c"
    assert {p.name for p in d.iterdir()} == {"compare.html", "compare.json"}
    doc = json.loads((d / "compare.json").read_text())
    ranking = doc["ranking"]
    assert len(ranking) == 7 and all(r["rank"] is not None for r in ranking)
    by = {r["label"]: r for r in ranking}
    ks = [by[f"anonymize(optimal, suppression_limit=0.05, k={k})"] for k in (2, 5, 10)]
    # stronger k: never more risk; a k-anonymous release's highest risk is at most 1/k
    assert ks[0]["disclosure_risk"] >= ks[1]["disclosure_risk"] >= ks[2]["disclosure_risk"]
    for k, row in zip((2, 5, 10), ks, strict=True):
        assert row["highest_risk"] <= 1 / k + 1e-12
        assert row["suppressed_records"] <= 0.05 * 30162
    # sdcMicro's local suppression counts a blank as matching any value; an intruder who knows
    # the suppressed value still singles records out (risk 1), which the ranking shows
    assert by["local_suppression(k=3)"]["highest_risk"] == 1.0
    assert "<img" in (d / "compare.html").read_text()


def _job(tmp_path: Path, **overrides) -> Path:
    src = data_dir()
    doc = {
        "input": {"path": str(src / "adult.csv"), "delimiter": ";"},
        "attributes": {
            c: {"role": "quasi_identifying", "hierarchy": str(src / f"adult_hierarchy_{c}.csv")}
            for c in ("sex", "age", "race", "education")
        }
        | {"occupation": {"role": "sensitive"}},
        "models": [{"k_anonymity": {"k": 5}}],
        "suppression_limit": 0.0,
        "output": {"path": "out.csv", "report": "r.html", "json": "r.json", "delimiter": ";"},
    }
    doc.update(overrides)
    import yaml

    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_anonymize_job_and_json_override(tmp_path: Path) -> None:
    job = _job(tmp_path)
    res = runner.invoke(
        app, ["anonymize", "--config", str(job), "--json", str(tmp_path / "x.json")]
    )
    assert res.exit_code == 0, res.output
    assert (tmp_path / "out.csv").is_file() and (tmp_path / "r.html").is_file()
    assert not (tmp_path / "r.json").exists()
    summary = json.loads((tmp_path / "x.json").read_text())
    assert summary["verified"] is True and summary["suppressed_records"] == 0
    sizes = _released_classes(tmp_path / "out.csv", ["sex", "age", "race", "education"])
    assert sizes.min() >= 5


@pytest.mark.parametrize(
    ("overrides", "fragment"),
    [
        ({"models": [{"l_diversity": {"attribute": "salary", "l": 2}}]}, "salary"),
        ({"suppression_limit": 1.5}, "suppression_limit"),
        ({"models": [{"k_anonymity": {"k": 10**6}}]}, "k"),
        ({"models": [{"k_anonymity": {"k": 0}}]}, "k"),
        (
            {
                "attributes": {
                    "age": {"role": "quasi_identifying", "type": "integer"},
                    "occupation": {"role": "sensitive"},
                }
            },
            "hierarchy",
        ),
    ],
)
def test_bad_jobs_exit_2_and_write_nothing(tmp_path: Path, overrides: dict, fragment: str) -> None:
    job = _job(tmp_path, **overrides)
    res = runner.invoke(app, ["anonymize", "--config", str(job)])
    assert res.exit_code == 2, res.output
    assert fragment in res.output
    assert not any((tmp_path / f).exists() for f in ("out.csv", "r.html", "r.json"))


def test_no_solution_within_the_limit_exits_2(tmp_path: Path) -> None:
    job = _job(
        tmp_path,
        models=[{"l_diversity": {"attribute": "occupation", "l": 20, "variant": "distinct"}}],
    )
    res = runner.invoke(app, ["anonymize", "--config", str(job)])
    assert res.exit_code == 2, res.output
    assert not (tmp_path / "out.csv").exists()


@pytest.mark.parametrize(("overrides", "code"), [({}, 0), ({"suppression_limit": 1.5}, 2)])
def test_the_script_exits_with_the_commands_code_and_a_frozen_heap(
    tmp_path: Path, overrides: dict, code: int
) -> None:
    # sdckit.cli.main freezes the heap once the command is over (the interpreter's teardown
    # then skips the objects pandas/pyarrow/pydantic made); the exit code is the command's.
    # pydantic does not scan the installed distributions for plugins unless the user's
    # environment asks for them.
    job = _job(tmp_path, **overrides)
    res = _run_script(job, {})
    assert res.returncode == code, res.stderr[-500:]
    assert "FROZEN True" in res.stdout
    assert "PLUGINS_SCANNED False" in res.stdout
    # what a quiet k-anonymity job never needs: rich (printing; an error message loads it),
    # the TOML parser, the modules of other privacy models
    unneeded = "rich" if code == 0 else "rich.table"
    assert f"UNNEEDED {unneeded}: []" in res.stdout
    assert (tmp_path / "out.csv").is_file() == (code == 0)


def test_a_user_who_enables_pydantic_plugins_gets_them(tmp_path: Path) -> None:
    res = _run_script(_job(tmp_path), {"PYDANTIC_DISABLE_PLUGINS": ""})
    assert res.returncode == 0, res.stderr[-500:]
    assert "PLUGINS_SCANNED True" in res.stdout


def _run_script(job: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """``sdckit anonymize --config job --quiet`` as the console script runs it, printing
    what the process holds when the command has ended."""
    script = (
        "import gc, sys\n"
        f"sys.argv = ['sdckit', 'anonymize', '--config', {str(job)!r}, '--quiet']\n"
        "from sdckit.cli import main\n"
        "try:\n    main()\nexcept SystemExit as exc:\n"
        "    print('FROZEN', gc.get_freeze_count() > 0)\n"
        "    for top in ('rich', 'rich.table'):\n"
        "        names = ('tomllib', 'sdckit.models.lkc', 'sdckit.models.presence', top)\n"
        "        print(f'UNNEEDED {top}:', [m for m in sys.modules if m.startswith(names)])\n"
        "    loader = sys.modules.get('pydantic.plugin._loader')\n"
        "    print('PLUGINS_SCANNED', getattr(loader, '_plugins', None) is not None)\n"
        "    raise\n"
    )
    environ = {k: v for k, v in os.environ.items() if k != "PYDANTIC_DISABLE_PLUGINS"} | env
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=environ
    )
