"""``sdckit demo``: the complete anonymization job on the bundled Adult data.

The job is the package's ``adult_demo_job.yaml`` (k-anonymity k=5, distinct 2-diversity of
occupation, 5% suppression limit, ARX's loss metric, optimal full-domain generalization); its
outputs -- the released CSV, ``report.html`` and ``report.json`` -- go to ``output``.
``sdckit demo --compare`` runs the package's ``adult_compare_grid.yaml`` instead: seven
protections of Adult on one R-U map (``compare.html``, ``compare.json``).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any


def demo_job_path() -> Path:
    """Path of the bundled demo job file."""
    from sdckit.datasets import data_dir

    return data_dir() / "adult_demo_job.yaml"


def compare_grid_path() -> Path:
    """Path of the bundled comparison grid (``sdckit demo --compare``)."""
    from sdckit.datasets import data_dir

    return data_dir() / "adult_compare_grid.yaml"


def run_compare_demo(output: Path) -> dict[str, Any]:
    """Run the bundled comparison grid, writing ``compare.html`` and ``compare.json``."""
    from sdckit.jobs.compare import run_compare_job
    from sdckit.jobs.config import load_job

    output = Path(output).resolve()
    return run_compare_job(
        load_job(compare_grid_path()),
        json_out=output / "compare.json",
        html_out=output / "compare.html",
    )


def run_demo(output: Path, progress: Callable[[int, int], None] | None = None) -> dict[str, Any]:
    """Run the demo job, writing the anonymized data and its reports into ``output``;
    returns the job's summary (``progress(done, total)`` follows the lattice search)."""
    from sdckit.jobs.anonymize import run_anonymize_job
    from sdckit.jobs.config import load_job

    output = Path(output).resolve()
    job = load_job(demo_job_path()).with_output(
        path=output / "adult_anonymized.csv",
        report=output / "report.html",
        json=output / "report.json",
        delimiter=";",
    )
    return run_anonymize_job(job, progress=progress).summary
