"""Hostile job files cost nothing: bounded documents, bounded error messages."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from sdckit.errors import short_repr
from sdckit.jobs.config import MAX_JOB_FILE_BYTES, load_job

HEAD = "input: {path: in.csv}\nmodels: [{k_anonymity: {k: 2}}]\noutput: {path: o.csv}\n"


def _bomb(depth: int) -> str:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, depth + 1):
        lines.append(f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("command", ["anonymize", "mask", "compare"])
def test_alias_bomb_is_refused_at_once(tmp_path: Path, command: str) -> None:
    job = tmp_path / "bomb.yaml"
    job.write_text(HEAD + _bomb(9))
    t0 = time.perf_counter()
    res = subprocess.run(
        [sys.executable, "-m", "sdckit.cli", command, "--config", str(job)],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert res.returncode == 2
    assert "expands to more than" in res.stderr and len(res.stderr) < 600
    assert time.perf_counter() - t0 < 30


@pytest.mark.parametrize("key", ["seed", "suppression_limit", "options", "columns", "algorithm"])
def test_depth5_bomb_in_a_value_gives_a_short_message(tmp_path: Path, key: str) -> None:
    job = tmp_path / "bomb5.yaml"
    base = "v0: &v0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"
    nested = [base] + [f"v{i}: &v{i} [" + ", ".join([f"*v{i - 1}"] * 9) + "]" for i in range(1, 6)]
    text = HEAD + f"{key}:\n" + "\n".join("  - " + ln.split(": ", 1)[1] for ln in nested) + "\n"
    job.write_text(text)
    from sdckit.errors import ConfigError

    with pytest.raises(ConfigError) as info:
        load_job(job)
    assert len(str(info.value)) < 1000


def test_a_self_referring_alias_is_refused(tmp_path: Path) -> None:
    from sdckit.errors import ConfigError

    job = tmp_path / "loop.yaml"
    job.write_text(HEAD + "options: &o {a: *o}\n")
    with pytest.raises(ConfigError, match="refers to itself"):
        load_job(job)


def test_oversized_job_file_is_refused(tmp_path: Path) -> None:
    from sdckit.errors import ConfigError

    job = tmp_path / "big.yaml"
    job.write_text(HEAD + "#" * (MAX_JOB_FILE_BYTES + 1) + "\n")
    with pytest.raises(ConfigError, match="at most"):
        load_job(job)


def test_short_repr_is_bounded_for_any_value() -> None:
    shared = ["lol"] * 9
    for _ in range(8):
        shared = [shared] * 9  # 9**9 leaves by reference
    assert len(short_repr(shared)) <= 120
    assert len(short_repr("x" * 10**6)) <= 120
    assert short_repr([1, 2]) == "[1, 2]"
    assert short_repr(list(range(100))) == "[0, 1, 2, 3, 4, 5, 6, 7, ...]"


# ---------------------------------------------------------------------------------------------
# expensive measures check their cost first and can be chosen
# ---------------------------------------------------------------------------------------------
def _wide(n: int = 300, m: int = 24):
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    return pd.DataFrame(
        rng.integers(0, 3, size=(n, m)).astype(str), columns=[f"q{i}" for i in range(m)]
    )


def test_a_single_column_name_is_one_column() -> None:
    import pandas as pd

    import sdckit

    df = pd.DataFrame({"age": ["1", "2", "2"], "sex": ["a", "b", "b"]})
    assert sdckit.analyze(df, "age")["quasi_identifiers"] == ["age"]
    assert "sex" in sdckit.analyze(df, "age", sensitive="sex")["sensitive"]


def test_measures_choose_what_runs() -> None:
    import sdckit
    from sdckit.errors import DataError

    df = _wide(50, 4)
    only_suda = sdckit.analyze(df, list(df.columns), measures=["suda"]).summary
    assert "suda" in only_suda and "distinction" not in only_suda
    none = sdckit.analyze(df, list(df.columns), measures=[]).summary
    assert "suda" not in none and "distinction" not in none and "skipped" not in none
    with pytest.raises(DataError, match="unknown measure"):
        sdckit.analyze(df, list(df.columns), measures=["sudo"])


def test_unaffordable_measures_are_skipped_with_the_way_to_force_them(monkeypatch) -> None:
    import sdckit
    from sdckit.errors import ConfigError
    from sdckit.risk import analyze as analyze_module

    df = _wide()
    summary = sdckit.analyze(df, list(df.columns)).summary  # 24 QIs: 2^24 subsets
    assert "suda" not in summary
    assert "--suda-max-size" in summary["skipped"]["suda"]
    monkeypatch.setattr(analyze_module, "MAX_DISTINCTION_WORK", 10)
    small = _wide(30, 3)
    summary = sdckit.analyze(small, list(small.columns)).summary
    assert (
        "distinction" not in summary
        and "--measures distinction" in summary["skipped"]["distinction"]
    )
    forced = sdckit.analyze(small, list(small.columns), measures=["distinction"]).summary
    assert "distinction" in forced
    with pytest.raises(ConfigError, match="max_size"):
        sdckit.analyze(df, list(df.columns), measures=["suda"])
    limited = sdckit.analyze(df, list(df.columns), measures=["suda"], suda_max_size=2).summary
    assert limited["suda"]["records_with_score"] >= 0


def test_cli_measures_and_skips_are_reported(tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner

    from sdckit.cli import app

    df = _wide()
    df.to_csv(tmp_path / "wide.csv", index=False)
    qi = ",".join(df.columns)
    res = CliRunner().invoke(
        app, ["analyze", str(tmp_path / "wide.csv"), "--qi", qi, "--json", str(tmp_path / "r.json"),
              "--html", str(tmp_path / "r.html")],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "skipped suda" in res.output
    doc = json.loads((tmp_path / "r.json").read_text())
    assert "suda" in doc["skipped"] and "Measures not computed" in (tmp_path / "r.html").read_text()
    res = CliRunner().invoke(
        app, ["analyze", str(tmp_path / "wide.csv"), "--qi", qi, "--measures", "suda",
              "--suda-max-size", "2", "--json", str(tmp_path / "s.json")],
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    doc = json.loads((tmp_path / "s.json").read_text())
    assert "suda" in doc and "distinction" not in doc and "skipped" not in doc


@pytest.mark.parametrize("algorithm", ["optimal", "datafly", "mondrian", "tds", "anatomy"])
@pytest.mark.parametrize("variant", ["distinct", "entropy", "recursive"])
def test_l_above_the_distinct_values_is_unreachable_not_a_budget_problem(
    algorithm: str, variant: str
) -> None:
    import pandas as pd

    import sdckit
    from sdckit.core.hierarchy import Hierarchy
    from sdckit.core.schema import Schema
    from sdckit.errors import NoSolutionError
    from sdckit.models import LDiversity

    df = pd.DataFrame({"a": ["1", "2", "1", "2", "3", "3"], "s": list("xyxyyx")})
    schema = Schema.from_roles(
        quasi_identifying=["a"],
        sensitive=["s"],
        hierarchies={"a": Hierarchy([["1", "*"], ["2", "*"], ["3", "*"]], name="a")},
    )
    model = LDiversity("s", 3, variant, c=2 if variant == "recursive" else None)
    with pytest.raises(NoSolutionError) as err:
        sdckit.anonymize(df, schema, [model], suppression_limit=0.5, algorithm=algorithm)
    message = str(err.value)
    assert "only 2 distinct value(s)" in message and "lower l to at most 2" in message
    assert "suppression_limit" not in message


def test_unreachable_l_from_the_command_line(tmp_path: Path) -> None:
    (tmp_path / "d.csv").write_text("a,s\n1,x\n2,y\n1,x\n2,y\n")
    (tmp_path / "job.yaml").write_text(
        "input: {path: d.csv}\n"
        "attributes:\n"
        "  a: {role: quasi_identifying, hierarchy: {masking: {}}}\n"
        "  s: {role: sensitive}\n"
        "models: [{l_diversity: {attribute: s, l: 3}}]\n"
        "suppression_limit: 0.5\n"
        "output: {path: out.csv}\n"
    )
    r = subprocess.run(
        [sys.executable, "-m", "sdckit.cli", "anonymize", "--config", str(tmp_path / "job.yaml")],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 2, r.stderr
    assert "lower l to at most 2" in r.stderr + r.stdout
    assert not (tmp_path / "out.csv").exists()
