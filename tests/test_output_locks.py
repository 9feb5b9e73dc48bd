"""A run never waits on its own output-folder lock, and waits on another run's only so long.

Rules (tested as a user runs the commands, in subprocesses):

* a folder named by two spellings (``out`` from the working folder, ``/job/out`` from the job
  file) is locked once: every command that writes outputs finishes;
* a wait on another run's lock ends after ``SDCKIT_LOCK_TIMEOUT`` seconds with exit 2 and a
  message naming that run (pid, command, since when); nothing is written;
* SIGTERM ends a waiting run at once, leaving no temporary file.
"""

from __future__ import annotations

import fcntl
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

from sdckit.core.folder_lock import HOLDER_FILE, folder_locks, lock_timeout
from sdckit.errors import SdcInputError

EXE = [sys.executable, "-m", "sdckit.cli"]

#: Per command: the job file (outputs in ``out/``, relative to the job's folder) and the
#: extra arguments that name one more output in ``out/`` relative to the working folder.
JOBS = {
    "anonymize": (
        "input: in.csv\n"
        "attributes:\n  zip: {role: quasi_identifying, hierarchy: {masking: {}}}\n"
        "models: [{k_anonymity: {k: 2}}]\n"
        "output: {path: out/anon.csv, report: out/anon.html}\n",
        ["--json", "out/s.json"],
    ),
    "mask": (
        "input: in.csv\nseed: 1\nmethods: [{noise: {columns: [income], alpha: 0.5}}]\n"
        "output: {path: out/masked.csv}\n",
        ["--json", "out/s.json"],
    ),
    "table": (
        "input: in.csv\ndimensions: {zip: {}}\nresponse: income\n"
        "rules: [{frequency: {threshold: 3}}]\nmethod: simple\n"
        "output: {cells: out/cells.csv}\n",
        ["--json", "out/s.json"],
    ),
    "synthesize": (
        "input: in.csv\nseed: 1\nmethod: cart\noutput: {path: out/syn.csv}\n",
        ["--json", "out/s.json"],
    ),
    "compare": (
        "input: in.csv\ncolumns: [income]\nseed: 1\ngrid: [{noise: {alpha: [0.5]}}]\n"
        "output: {report: out/cmp.html}\n",
        ["--json", "out/s.json"],
    ),
}


def _job_folder(tmp_path: Path, command: str) -> Path:
    folder = tmp_path / "job_folder"
    (folder / "out").mkdir(parents=True)
    rows = [(20 + i % 40, ["1011", "1012", "1021"][i % 3], 100 + (i * 37) % 41) for i in range(60)]
    pd.DataFrame(rows, columns=["age", "zip", "income"]).to_csv(folder / "in.csv", index=False)
    (folder / "job.yaml").write_text(JOBS[command][0])
    return folder


def _temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.rglob(".*.tmp"))


def _env(**extra: str) -> dict[str, str]:
    return {**os.environ, **extra}


@pytest.mark.parametrize("command", sorted(JOBS))
def test_relative_outputs_from_inside_the_job_folder_finish(tmp_path: Path, command: str) -> None:
    folder = _job_folder(tmp_path, command)
    args = [*EXE, command, "--config", "job.yaml", *JOBS[command][1], "--quiet"]
    res = subprocess.run(args, cwd=folder, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    written = sorted(p.name for p in (folder / "out").iterdir())
    assert "s.json" in written and len(written) >= 2
    assert HOLDER_FILE not in written and _temporaries(folder) == []


def test_analyze_with_two_spellings_of_one_folder_finishes(tmp_path: Path) -> None:
    folder = _job_folder(tmp_path, "anonymize")
    args = [*EXE, "analyze", "in.csv", "--qi", "age,zip", "--json", "out/a.json"]
    args += ["--html", str(folder / "out" / ".." / "out" / "a.html"), "--quiet"]
    res = subprocess.run(args, cwd=folder, capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    assert sorted(p.name for p in (folder / "out").iterdir()) == ["a.html", "a.json"]


def test_a_folder_named_through_a_symlink_is_locked_once(tmp_path: Path) -> None:
    (tmp_path / "out").mkdir()
    (tmp_path / "link").symlink_to(tmp_path / "out")
    spellings = [tmp_path / "out", tmp_path / "link", tmp_path / "out" / ".." / "out"]
    with folder_locks(spellings, timeout=0):
        assert (tmp_path / "out" / HOLDER_FILE).is_file()
    assert list((tmp_path / "out").iterdir()) == []


_HOLDER = textwrap.dedent(
    """
    import sys, time
    from sdckit.core.folder_lock import folder_locks
    with folder_locks([sys.argv[1]]):
        print("held", flush=True)
        time.sleep(60)
    """
)

_FOREIGN_HOLDER = textwrap.dedent(
    """
    import fcntl, os, sys, time
    fd = os.open(sys.argv[1], os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX)
    print("held", flush=True)
    time.sleep(60)
    """
)


def _hold(folder: Path, script: str) -> subprocess.Popen[str]:
    """Start a process (``holder.py``) that holds ``folder``'s lock for a minute."""
    program = folder.parent / "holder.py"
    program.write_text(script)
    holder = subprocess.Popen(
        [sys.executable, str(program), str(folder)], stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    return holder


@pytest.mark.parametrize("command", ["anonymize", "table"])
def test_a_wait_on_another_run_ends_with_a_message_naming_it(tmp_path: Path, command: str) -> None:
    folder = _job_folder(tmp_path, command)
    holder = _hold(folder / "out", _HOLDER)
    try:
        start = time.monotonic()
        res = subprocess.run(
            [*EXE, command, "--config", "job.yaml", *JOBS[command][1], "--quiet"],
            cwd=folder, capture_output=True, text=True, timeout=60,
            env=_env(SDCKIT_LOCK_TIMEOUT="1"),
        )  # fmt: skip
        elapsed = time.monotonic() - start
    finally:
        holder.kill()
        holder.wait()
    message = " ".join(res.stderr.split())
    assert res.returncode == 2, res.stderr
    assert f"pid {holder.pid}, holding it since " in message and "holder.py" in message
    assert "locked by another run" in message and "SDCKIT_LOCK_TIMEOUT" in message
    assert "Traceback" not in res.stderr and elapsed < 30
    assert sorted(p.name for p in (folder / "out").iterdir()) == [HOLDER_FILE]  # the holder's


def test_a_lock_held_by_another_program_is_waited_for_within_the_bound(tmp_path: Path) -> None:
    folder = _job_folder(tmp_path, "anonymize")
    holder = _hold(folder / "out", _FOREIGN_HOLDER)
    try:
        res = subprocess.run(
            [*EXE, "anonymize", "--config", "job.yaml", "--quiet"],
            cwd=folder, capture_output=True, text=True, timeout=60,
            env=_env(SDCKIT_LOCK_TIMEOUT="0.5"),
        )  # fmt: skip
    finally:
        holder.kill()
        holder.wait()
    assert res.returncode == 2, res.stderr
    message = " ".join(res.stderr.split())
    assert "is locked by another run (it left no description); waited 0.5 s" in message
    assert list((folder / "out").iterdir()) == []


@pytest.mark.parametrize("command", ["anonymize", "table"])
def test_sigterm_ends_a_waiting_run_and_leaves_no_temporary(tmp_path: Path, command: str) -> None:
    folder = _job_folder(tmp_path, command)
    holder = _hold(folder / "out", _FOREIGN_HOLDER)
    try:
        run = subprocess.Popen(
            [*EXE, command, "--config", "job.yaml", *JOBS[command][1], "--quiet"],
            cwd=folder, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            env=_env(SDCKIT_LOCK_TIMEOUT="60"),
        )  # fmt: skip
        deadline = time.monotonic() + 45
        while not _temporaries(folder) and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _temporaries(folder), "the run never staged its outputs"
        time.sleep(0.2)  # staged: it is now waiting for the lock
        run.send_signal(signal.SIGTERM)
        rc = run.wait(timeout=5)
    finally:
        if run.poll() is None:
            run.kill()
        holder.kill()
        holder.wait()
    assert rc == 128 + signal.SIGTERM
    assert list((folder / "out").iterdir()) == [] and _temporaries(folder) == []


def test_the_bound_is_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SDCKIT_LOCK_TIMEOUT", raising=False)
    assert lock_timeout() == 120.0
    monkeypatch.setenv("SDCKIT_LOCK_TIMEOUT", "2.5")
    assert lock_timeout() == 2.5
    for bad in ("soon", "-1", "inf", "nan"):
        monkeypatch.setenv("SDCKIT_LOCK_TIMEOUT", bad)
        with pytest.raises(SdcInputError, match=f"SDCKIT_LOCK_TIMEOUT={bad!r}"):
            lock_timeout()


def test_a_folder_lock_taken_in_process_excludes_another_descriptor(tmp_path: Path) -> None:
    """flock through two descriptors of one folder conflicts even in one process: the reason
    a folder must be locked once, whatever its spelling."""
    with folder_locks([tmp_path], timeout=0):
        fd = os.open(tmp_path, os.O_RDONLY)
        try:
            with pytest.raises(BlockingIOError):
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        finally:
            os.close(fd)


def test_the_holder_file_leaves_out_secret_option_values(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The holder file lies in an output folder and outlives a killed run: the workbench's
    ``--token`` (or any key given as an option) is not written there."""
    import json

    secret = "s3cret-token-0123456789"
    monkeypatch.setattr(
        sys, "argv", ["sdckit", "ui", "--token", secret, "--port", "8050", f"--key={secret}"]
    )
    with folder_locks([tmp_path]):
        text = (tmp_path / HOLDER_FILE).read_text()
    assert secret not in text
    assert json.loads(text)["command"] == "sdckit ui --token *** --port 8050 --key=***"
    assert not (tmp_path / HOLDER_FILE).exists()
