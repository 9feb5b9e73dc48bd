"""Runs of the web app: a job file executed in a worker process, never in the server.

A run is a folder holding ``job.yaml`` -- the job file the user can download and run with
the command line (``sdckit anonymize --config job.yaml`` writes the same release, byte for
byte) -- plus ``status.json`` (``queued | running | done | failed | cancelled``, the message of
a failure, the JSON summary of a success) and ``progress.json`` (``done``/``total`` of the
search, from the job runner's ``progress`` callback). The server starts each run in its own
process (``spawn``: nothing of the server's state is shared) and at most ``max_workers`` at a
time; the others wait in the queue. Cancelling terminates the process: SIGTERM ends the job
as it ends a command line run, discarding the outputs it was writing (they are staged and
renamed together, :func:`sdckit.core.io.output_set`).

The worker calls the same job runners as the command line (:mod:`sdckit.jobs`) and maps
errors the same way: bad input gives the command's message (``failed``, ``input_error``),
anything else an internal error with its traceback.
"""

from __future__ import annotations

import json
import multiprocessing
import secrets
import signal
import threading
import time
import traceback
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from sdckit.core.io import write_text

__all__ = ["KINDS", "OUTPUT_NAMES", "RunManager", "read_json", "read_status", "write_job"]

#: The jobs a run can be (the command that runs its job file).
KINDS = ("anonymize", "mask", "synthesize", "table", "compare")
#: The output file names a run's job file gives (relative to the job file).
OUTPUT_NAMES = {
    "anonymize": {"path": "release.csv", "report": "report.html", "json": "report.json"},
    "mask": {"path": "release.csv", "report": "report.html", "json": "report.json"},
    "synthesize": {"path": "release.csv", "report": "report.html", "json": "report.json"},
    "table": {"cells": "cells.csv", "report": "report.html", "json": "report.json"},
    "compare": {"report": "report.html", "json": "report.json"},
}
#: Seconds between two writes of ``progress.json``.
PROGRESS_INTERVAL = 0.25


def write_job(folder: Path, doc: dict[str, Any], kind: str) -> Path:
    """Write ``doc`` as the run's ``job.yaml`` with the run's output names (relative paths,
    so the file runs anywhere: ``sdckit KIND --config job.yaml`` writes next to it)."""
    doc = dict(doc)
    output = dict(doc.get("output") or {})
    for key, name in OUTPUT_NAMES[kind].items():
        output[key] = name
    if kind in ("anonymize", "mask", "synthesize") and doc.get("input", {}).get("delimiter"):
        output.setdefault("delimiter", doc["input"]["delimiter"])
    doc["output"] = output
    header = (
        f"# sdckit {kind} job written by `sdckit ui`; run it again with\n"
        f"#   sdckit {kind} --config job.yaml\n"
        "# (outputs are written next to this file).\n"
    )
    text = header + yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
    return write_text(folder / "job.yaml", text)


def read_status(folder: Path) -> dict[str, Any]:
    """The run's status document (``state`` and what goes with it) plus its progress."""
    status = read_json(folder / "status.json") or {"state": "unknown"}
    progress = read_json(folder / "progress.json")
    if progress:
        status["progress"] = progress
    return status


def read_json(path: Path) -> dict[str, Any] | None:
    """A JSON document of a run or project folder (None when absent or unreadable)."""
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _write_status(folder: Path, **status: Any) -> None:
    from sdckit.core.spec import json_ready

    write_text(folder / "status.json", json.dumps(json_ready(status), indent=1))


@dataclass
class _Active:
    process: Any  # multiprocessing.process.BaseProcess
    folder: Path
    started: float


class RunManager:
    """Starts runs in worker processes, at most ``max_workers`` at a time, and cancels them."""

    def __init__(self, max_workers: int = 2) -> None:
        self.max_workers = max(1, int(max_workers))
        self._context = multiprocessing.get_context("spawn")
        self._active: dict[str, _Active] = {}
        self._queue: deque[tuple[str, Path, str]] = deque()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._pump_thread = threading.Thread(target=self._pump_loop, daemon=True)
        self._pump_thread.start()

    @staticmethod
    def new_id() -> str:
        """A fresh run id (sortable by time)."""
        return time.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(2)

    def submit(self, folder: Path, kind: str) -> None:
        """Queue the run whose ``job.yaml`` is in ``folder``."""
        _write_status(folder, state="queued", kind=kind, queued_at=time.time())
        with self._lock:
            self._queue.append((folder.name, folder, kind))
        self.pump()

    def cancel(self, folder: Path) -> bool:
        """Stop the run in ``folder`` (queued or running); False if it had already ended."""
        run_id = folder.name
        with self._lock:
            for i, (rid, _, _) in enumerate(self._queue):
                if rid == run_id:
                    del self._queue[i]
                    _write_status(folder, state="cancelled", message="cancelled before it started")
                    return True
            active = self._active.pop(run_id, None)
        if active is None:
            return False
        active.process.terminate()
        active.process.join(10)
        if active.process.is_alive():  # pragma: no cover - SIGTERM is handled by the worker
            active.process.kill()
            active.process.join(5)
        _write_status(
            folder,
            state="cancelled",
            message="cancelled by the user; nothing was written",
            elapsed_seconds=time.time() - active.started,
        )
        return True

    def pump(self) -> None:
        """Reap finished workers and start queued runs while slots are free."""
        with self._lock:
            for run_id, active in list(self._active.items()):
                if not active.process.is_alive():
                    active.process.join()
                    del self._active[run_id]
                    status = read_json(active.folder / "status.json") or {}
                    if status.get("state") == "running":  # died without a word (killed, OOM)
                        _write_status(
                            active.folder,
                            state="failed",
                            message=f"the worker process ended unexpectedly (exit code "
                            f"{active.process.exitcode}); run it again",
                        )
            while self._queue and len(self._active) < self.max_workers:
                run_id, folder, kind = self._queue.popleft()
                process = self._context.Process(
                    target=execute_run, args=(str(folder), kind), daemon=True
                )
                process.start()
                self._active[run_id] = _Active(process, folder, time.time())

    def running(self) -> int:
        """Number of runs executing now."""
        with self._lock:
            return len(self._active)

    def shutdown(self) -> None:
        """Terminate every worker (the server is stopping)."""
        self._stop.set()
        with self._lock:
            active = list(self._active.values())
            self._active.clear()
            self._queue.clear()
        for a in active:
            a.process.terminate()
            a.process.join(5)

    def _pump_loop(self) -> None:
        while not self._stop.wait(0.3):
            try:
                self.pump()
            except Exception:  # noqa: BLE001 - the loop must survive; pump is retried
                traceback.print_exc()


# -- the worker ---------------------------------------------------------------------------------
def _terminated(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


def execute_run(folder_name: str, kind: str) -> None:
    """Run the job of a run folder (in a worker process) and record how it ended."""
    previous = signal.signal(signal.SIGTERM, _terminated)
    try:
        _execute(Path(folder_name), kind)
    finally:
        signal.signal(signal.SIGTERM, previous)


def _execute(folder: Path, kind: str) -> None:
    started = time.time()
    _write_status(folder, state="running", kind=kind, started_at=started)
    last = [0.0]

    def progress(done: int, total: int) -> None:
        now = time.monotonic()
        if now - last[0] >= PROGRESS_INTERVAL or done >= total:
            last[0] = now
            write_text(folder / "progress.json", json.dumps({"done": done, "total": total}))

    from sdckit.core.spec import json_ready
    from sdckit.errors import SdcInputError

    try:
        summary, extras = _run_job(folder / "job.yaml", kind, progress)
    except SdcInputError as exc:
        _write_status(
            folder,
            state="failed",
            input_error=True,
            message=str(exc),
            kind=kind,
            elapsed_seconds=time.time() - started,
        )
        return
    except SystemExit:
        return  # cancelled: the server records it
    except Exception as exc:  # noqa: BLE001 - reported to the user as an internal error
        _write_status(
            folder,
            state="failed",
            input_error=False,
            message=f"internal error: {type(exc).__name__}: {exc}",
            traceback=traceback.format_exc(),
            kind=kind,
            elapsed_seconds=time.time() - started,
        )
        return
    for name, value in extras.items():
        write_text(folder / f"{name}.json", json.dumps(json_ready(value)))
    _write_status(
        folder, state="done", kind=kind, summary=summary, elapsed_seconds=time.time() - started
    )


def _run_job(path: Path, kind: str, progress: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run a job file as ``sdckit KIND --config`` does; the summary and extra documents the
    app shows (the solution space of an optimal search)."""
    from sdckit.jobs.config import load_job

    job = load_job(path)
    if kind == "anonymize":
        from sdckit.jobs.anonymize import run_anonymize_job

        outcome = run_anonymize_job(job, progress=progress)
        extras: dict[str, Any] = {}
        space = outcome.result.details.get("solution_space")
        if space:
            extras["solution_space"] = {
                "quasi_identifiers": list((outcome.result.transformation or {}).keys()),
                "chosen": list((outcome.result.transformation or {}).values()),
                "metric": outcome.result.details.get("metric"),
                "nodes": space,
            }
        return outcome.summary, extras
    if kind == "mask":
        from sdckit.jobs.mask import run_mask_job

        return dict(run_mask_job(job).summary), {}
    if kind == "synthesize":
        from sdckit.jobs.synthesize import run_synthesize_job

        return dict(run_synthesize_job(job).summary), {}
    if kind == "table":
        from sdckit.jobs.table import run_table_job

        return dict(run_table_job(job).summary), {}
    from sdckit.jobs.compare import run_compare_job

    return dict(run_compare_job(job)), {}
