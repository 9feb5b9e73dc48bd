"""Exclusive locks on output folders, taken while a run renames its outputs into place.

Rules: a folder is identified by its device and inode, never by how its path is spelled
(``out``, ``./out`` and ``/job/out`` are one folder, locked once: ``flock`` locks taken through
two descriptors of one folder exclude each other even within one process); folders are locked
in (device, inode) order, so two runs never deadlock; a wait on another run's lock is bounded
(:func:`lock_timeout`) and ends with a message naming that run; the wait is never made with
signals deferred, so SIGINT/SIGTERM end a waiting run at once. While a run holds a folder's
lock, the file :data:`HOLDER_FILE` in that folder describes it (pid, command, when it took the
lock); it is removed when the lock is released.

``flock(2)`` is advisory: it orders sdckit runs (CLI, API, workbench) among themselves.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from sdckit.errors import SdcInputError

#: Environment variable: seconds a run waits for another run's lock on an output folder.
LOCK_TIMEOUT_ENV = "SDCKIT_LOCK_TIMEOUT"
#: Default of :data:`LOCK_TIMEOUT_ENV`. A run holds its locks only while it renames its
#: outputs (and removes the release it replaces), so a wait this long means the other run
#: is stuck (stopped, or hung on a slow file system).
DEFAULT_LOCK_TIMEOUT_S = 120.0
#: Name of the file that describes the run holding a folder's lock.
HOLDER_FILE = ".sdckit-lock"
_POLL_MAX_S = 0.1


def lock_timeout() -> float:
    """Seconds to wait for another run's folder lock: ``$SDCKIT_LOCK_TIMEOUT`` or 120."""
    raw = os.environ.get(LOCK_TIMEOUT_ENV)
    if raw is None or not raw.strip():
        return DEFAULT_LOCK_TIMEOUT_S
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not value >= 0 or value == float("inf"):
        raise SdcInputError(
            f"{LOCK_TIMEOUT_ENV}={raw!r} is not a number of seconds: set it to a number "
            f">= 0 (e.g. {LOCK_TIMEOUT_ENV}=300) or unset it for the default "
            f"({DEFAULT_LOCK_TIMEOUT_S:g} s)"
        )
    return value


#: Words in an option's name that mark its value as a secret, left out of :data:`HOLDER_FILE`
#: (``sdckit ui --token``: the file lies in an output folder, and may outlive a killed run).
_SECRET_OPTIONS = ("token", "key", "secret", "password")


def _redacted(args: list[str]) -> list[str]:
    """``args`` with the value of every secret option (``--token X``, ``--token=X``) as ``***``."""

    def secret(option: str) -> bool:
        return option.startswith("-") and any(w in option.lower() for w in _SECRET_OPTIONS)

    out: list[str] = []
    for arg in args:
        if out and secret(out[-1]) and "=" not in out[-1] and not arg.startswith("-"):
            out.append("***")
        elif "=" in arg and secret(arg.split("=", 1)[0]):
            out.append(arg.split("=", 1)[0] + "=***")
        else:
            out.append(arg)
    return out


def _holder_description() -> str:
    """This run's description, written to :data:`HOLDER_FILE` while it holds a lock (secret
    options' values left out)."""
    words = [Path(sys.argv[0]).name, *_redacted(sys.argv[1:])] if sys.argv else ["python"]
    command = " ".join(" ".join(words).split())
    return json.dumps(
        {
            "pid": os.getpid(),
            "command": command[:500],
            "since": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
    )


def _pid_alive(pid: int) -> bool:
    """True when process ``pid`` exists (another user's process counts)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def describe_holder(folder: Path) -> str:
    """Who holds ``folder``'s lock, as read from its :data:`HOLDER_FILE` (best effort)."""
    try:
        info = json.loads((folder / HOLDER_FILE).read_text(encoding="utf-8"))
        pid = int(info["pid"])
        command, since = str(info["command"]), str(info["since"])
    except (OSError, ValueError, KeyError, TypeError):
        return "it left no description"
    if not _pid_alive(pid):
        return "it left no description"
    return f"pid {pid}, holding it since {since}: {command}"


def _acquire(fd: int, folder: Path, deadline: float, timeout: float) -> None:
    """Take the exclusive lock on ``fd`` (the folder ``folder``), polling until ``deadline``.

    Non-blocking attempts with sleeps in between: a signal handler (SIGTERM raising
    ``SystemExit``) runs during the sleep, so a waiting run ends at once when asked to.
    """
    delay = 0.005
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            pass
        now = time.monotonic()
        if now >= deadline:
            holder = describe_holder(folder)
            raise SdcInputError(
                f"output folder {folder} is locked by another run ({holder}); "
                f"waited {timeout:g} s and wrote nothing. Let that run finish or stop it, then "
                f"run again; set {LOCK_TIMEOUT_ENV}=SECONDS to wait longer"
            )
        time.sleep(min(delay, deadline - now))
        delay = min(delay * 2, _POLL_MAX_S)


@contextmanager
def folder_locks(folders: Iterable[Path], timeout: float | None = None) -> Iterator[None]:
    """Hold exclusive ``flock`` locks on ``folders`` for the block.

    Each folder is resolved and identified by (device, inode), so a folder named twice
    (``out`` and ``/job/out``) is locked once; locks are taken in (device, inode) order. A
    folder another run holds is waited for at most ``timeout`` seconds (default
    :func:`lock_timeout`), then :class:`~sdckit.errors.SdcInputError` names that run. A folder
    that cannot be opened is skipped (its renames fail with their own error).
    """
    limit = lock_timeout() if timeout is None else timeout
    opened: dict[tuple[int, int], tuple[int, Path]] = {}
    held: list[tuple[int, Path]] = []
    try:
        for folder in folders:
            real = Path(os.path.realpath(folder))
            try:
                fd = os.open(real, os.O_RDONLY | os.O_DIRECTORY)
            except OSError:
                continue
            st = os.fstat(fd)
            key = (st.st_dev, st.st_ino)
            if key in opened:
                os.close(fd)
                continue
            opened[key] = (fd, real)
        deadline = time.monotonic() + limit
        for key in sorted(opened):
            fd, real = opened[key]
            _acquire(fd, real, deadline, limit)
            held.append((fd, real))
        description = _holder_description()
        for _, real in held:
            try:
                (real / HOLDER_FILE).write_text(description, encoding="utf-8")
            except OSError:
                pass
        yield
    finally:
        for fd, real in reversed(held):
            try:
                (real / HOLDER_FILE).unlink(missing_ok=True)
            except OSError:
                pass
            fcntl.flock(fd, fcntl.LOCK_UN)
        for fd, _ in opened.values():
            os.close(fd)
