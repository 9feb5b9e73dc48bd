"""``sdckit anonymize --config JOB.yaml``: generalization/suppression as a job file says."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer

from sdckit.commands._common import (
    ConfigOption,
    EngineOption,
    JsonOption,
    QuietOption,
    SparkConfOption,
    SparkMasterOption,
    err,
    out,
    run_guarded,
)
from sdckit.core.uri import Target, output_target


@contextmanager
def progress_bar(enabled: bool, label: str) -> Iterator[Callable[[int, int], None] | None]:
    """A rich progress bar on a terminal (``callback(done, total)``); None in scripts."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    from sdckit.core.progress import progress_bar as bar

    with bar(label, err.console) as update:
        yield update


def _attack_names(attacks: list[str]) -> str:
    from sdckit.models.attacks import ATTACK_LABELS

    return ", ".join(ATTACK_LABELS[a] for a in attacks) or "none"


def print_summary(summary: dict[str, Any]) -> None:
    """The job's outcome as a table (transformation, suppression, metrics, risk)."""
    from rich.table import Table  # (20 ms of import: only when printing)

    t = Table(title="Anonymization", show_header=True)
    t.add_column("measure")
    t.add_column("value", justify="right")
    transformation = summary.get("transformation")
    if transformation:
        t.add_row("transformation", ", ".join(f"{k}={v}" for k, v in transformation.items()))
    t.add_row("suppressed records", f"{summary['suppressed_records']:,}")
    t.add_row("models satisfied", "; ".join(summary["models_satisfied"]))
    t.add_row("verified", "yes" if summary["verified"] else "NO")
    coverage = summary.get("attack_coverage")
    if coverage:
        t.add_row("attacks not covered by the models", _attack_names(coverage["uncovered"]))
    for k, v in summary["metrics"].items():
        if v is not None:
            t.add_row(f"metric: {k}", f"{v:.6g}" if isinstance(v, float) else f"{v:,}")
    for label, key in (("before", "risk_before"), ("after", "risk_after")):
        r = summary.get(key) or {}
        if "prosecutor" in r:
            p = r["prosecutor"]
            t.add_row(
                f"prosecutor risk {label} (max / avg)", f"{p['max']:.4f} / {p['average']:.4f}"
            )
    t.add_row("nodes checked", f"{summary['nodes_checked']:,}")
    t.add_row("seconds", f"{summary['elapsed_seconds']:.3f}")
    out.print(t)


def anonymize_command(
    config: Path,
    json_out: Target | None,
    quiet: bool,
    engine: str | None = None,
    spark_master: str | None = None,
    spark_conf: list[str] | None = None,
) -> dict[str, Any]:
    """Implementation of ``sdckit anonymize`` (load, run, write, print)."""
    from sdckit.jobs.anonymize import run_anonymize_job
    from sdckit.jobs.config import load_job

    json_out = output_target(json_out, "--json")
    job = load_job(config).with_engine(engine, spark_master, spark_conf)
    job.require_outputs(json_out)
    with progress_bar(not quiet, "searching") as progress:
        outcome = run_anonymize_job(job, json_out=json_out, progress=progress)
    if not quiet:
        print_summary(outcome.summary)
        for label, path in outcome.written.items():
            out.print(f"{label}: {path}")
    return outcome.summary


def anonymize_cli(
    config: ConfigOption,
    json_out: JsonOption = None,
    quiet: QuietOption = False,
    engine: EngineOption = None,
    spark_master: SparkMasterOption = None,
    spark_conf: SparkConfOption = None,
) -> None:
    """Anonymize a data set by generalization and suppression, as a job file says."""
    run_guarded(anonymize_command, config, json_out, quiet, engine, spark_master, spark_conf)


def register(app: typer.Typer) -> None:
    """Add ``sdckit anonymize`` to ``app``."""
    app.command("anonymize")(anonymize_cli)
