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
