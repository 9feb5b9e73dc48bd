"""The root of the command line: ``sdckit --version`` and shell completion."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sdckit._version import __version__

CLI = [sys.executable, "-c", "import sdckit.cli as c; c.main()"]
#: The installed console script: completion keys on the program's name (``_SDCKIT_COMPLETE``).
SCRIPT = Path(sys.executable).with_name("sdckit")


def run(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *args], capture_output=True, text=True, env={**os.environ, **(env or {})}
    )


def test_version_prints_the_version_and_exits_zero():
    res = run("--version")
    assert res.returncode == 0, res.stderr
    assert res.stdout == f"sdckit {__version__}\n"
    assert res.stderr == ""


def test_version_is_listed_in_the_help_with_the_completion_options():
    res = run("--help")
    assert res.returncode == 0
    for option in ("--version", "--install-completion", "--show-completion"):
        assert option in res.stdout


@pytest.mark.skipif(not SCRIPT.exists(), reason="sdckit is not installed as a console script")
def test_bash_completion_completes_commands_and_their_options(tmp_path):
    def complete(words: str, cword: int) -> list[str]:
        env = {**os.environ, "_SDCKIT_COMPLETE": "complete_bash", "COMP_WORDS": words,
               "COMP_CWORD": str(cword)}  # fmt: skip
        res = subprocess.run([str(SCRIPT)], capture_output=True, text=True, env=env)
        assert res.returncode == 0, res.stderr
        return res.stdout.split()

    # what the installed script asks the program itself on <TAB>
    assert complete("sdckit an", 1) == ["analyze", "anonymize"]
    assert complete("sdckit analyze --js", 2) == ["--json"]
    script = subprocess.run([str(SCRIPT), "--show-completion", "bash"], capture_output=True,
                            text=True)  # fmt: skip
    assert script.returncode == 0
    assert "complete -o default -F _sdckit_completion sdckit" in script.stdout
    # --install-completion writes the script and sources it from the shell's start-up file
    home = {"HOME": str(tmp_path), "SHELL": shutil.which("bash") or "/bin/bash"}
    res = subprocess.run([str(SCRIPT), "--install-completion", "bash"], capture_output=True,
                         text=True, env={**os.environ, **home})  # fmt: skip
    assert res.returncode == 0, res.stderr
    installed = tmp_path / ".bash_completions" / "sdckit.sh"
    assert "_sdckit_completion" in installed.read_text()
    assert str(installed) in (tmp_path / ".bashrc").read_text()
