"""``sdckit table --config JOB.yaml``: protect a frequency or magnitude table."""

from __future__ import annotations

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
    out,
    run_guarded,
)
from sdckit.core.uri import Target, output_target


def print_summary(summary: dict[str, Any]) -> None:
    """The job's outcome as a table."""
    from rich.table import Table  # (20 ms of import: only when printing)

    t = Table(title="Table protection", show_header=True)
    t.add_column("measure")
    t.add_column("value", justify="right")
    t.add_row("method", str(summary["method"]))
    t.add_row("cells", f"{summary['cells']:,}")
    t.add_row("primary cells", f"{summary['primary']:,}")
    t.add_row("secondary cells", f"{summary['secondary']:,}")
    t.add_row("suppressed value", f"{summary['suppressed_value']:,.2f}")
    if "deviation" in summary:
        t.add_row("sum of absolute deviations", f"{summary['deviation']['sum_abs']:,.2f}")
    if summary["method"] == "audit":
        t.add_row("exposed cells", f"{summary['exposed_count']:,}")
        t.add_row("safe (audit)", "yes" if summary["safe"] else "NO")
    else:
        t.add_row("safe (independent check)", "yes" if summary["safe"] else "NO")
    if summary.get("time_limit") is not None:
        t.add_row("time limit (s)", f"{summary['time_limit']:g}")
        t.add_row("proven optimal", "yes" if summary.get("optimal") else "no")
        if summary.get("start"):
            t.add_row("start (incumbent)", str(summary["start"]))
        if summary.get("lower_bound") is not None:
            t.add_row("lower bound (secondary cost)", f"{summary['lower_bound']:,.2f}")
            t.add_row("gap", f"{100 * summary.get('gap', 0.0):.2f}%")
    t.add_row("seconds", f"{summary['elapsed_seconds']:.3f}")
    out.print(t)
    if summary.get("tables"):
        per = Table(title=f"Linked tables ({summary['common_cells']:,} common cells)")
        for col in ("table", "cells", "primary", "secondary", "suppressed value", "safe"):
            per.add_column(col, justify="left" if col == "table" else "right")
        for label, s in summary["tables"].items():
            per.add_row(
                str(label),
                f"{s['cells']:,}",
                f"{s['primary']:,}",
                f"{s['secondary']:,}",
                f"{s['suppressed_value']:,.2f}",
                "yes" if s["safe"] else "NO",
            )
        out.print(per)
    if summary["method"] == "audit" and summary.get("exposed"):
        shown = "; ".join(
            ", ".join(f"{k}={v}" for k, v in cell.items()) for cell in summary["exposed"][:5]
        )
        more = summary["exposed_count"] - min(5, len(summary["exposed"]))
        out.print(f"exposed: {shown}" + (f" (and {more} more)" if more > 0 else ""))


def table_command(
    config: Path,
    json_out: Target | None,
    quiet: bool,
    engine: str | None = None,
    spark_master: str | None = None,
    spark_conf: list[str] | None = None,
) -> dict[str, Any]:
    """Implementation of ``sdckit table`` (load, run, write, print)."""
    from sdckit.jobs.config import load_job
    from sdckit.jobs.table import run_table_job

    json_out = output_target(json_out, "--json")
    job = load_job(config).with_engine(engine, spark_master, spark_conf)
    job.require_outputs(json_out)
    outcome = run_table_job(job, json_out=json_out)
    if not quiet:
        print_summary(outcome.summary)
        for label, path in outcome.written.items():
            out.print(f"{label}: {path}")
    return outcome.summary


def table_cli(
    config: ConfigOption,
    json_out: JsonOption = None,
    quiet: QuietOption = False,
    engine: EngineOption = None,
    spark_master: SparkMasterOption = None,
    spark_conf: SparkConfOption = None,
) -> None:
    """Protect a frequency or magnitude table (cell suppression, rounding, CTA, cell key)."""
    run_guarded(table_command, config, json_out, quiet, engine, spark_master, spark_conf)


def register(app: typer.Typer) -> None:
    """Add ``sdckit table`` to ``app``."""
    app.command("table")(table_cli)
