"""A progress bar for long runs: rich's, on a terminal or in a Jupyter notebook.

rich renders the same :class:`rich.progress.Progress` as a live line on a terminal and as a
live output cell in Jupyter (it detects the kernel), so one bar serves the command line
(``sdckit anonymize`` on a terminal) and the Python API (``sdckit.anonymize(...,
progress=True)`` in a notebook).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["progress_bar"]


@contextmanager
def progress_bar(label: str, console: Any = None) -> Iterator[Callable[[int, int], None]]:
    """A bar labelled ``label`` (on ``console``, rich's default one by default: the terminal
    or the notebook), removed when the run ends; yields ``update(done, total)``."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    with Progress(
        TextColumn(label),
        BarColumn(),
        MofNCompleteColumn(),  # "?" while the total is not known yet
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task(label, total=None)

        def update(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield update
