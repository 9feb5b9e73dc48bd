"""``sdckit mask``: apply the masking methods of a job file, report, write."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sdckit.commands._common import (
    EngineOption,
    QuietOption,
    SparkConfOption,
    SparkMasterOption,
    out,
    print_original_records,
    run_guarded,
)
from sdckit.core.uri import Target, output_target


def mask_command(
    config: Path,
    json_out: Target | None,
    quiet: bool,
    engine: str | None = None,
    spark_master: str | None = None,
    spark_conf: list[str] | None = None,
) -> dict:
    """Implementation of ``sdckit mask``: run the job, print the steps and the outputs."""
    from sdckit.jobs.config import load_job
    from sdckit.jobs.mask import run_mask_job

    json_out = output_target(json_out, "--json")
    job = load_job(config).with_engine(engine, spark_master, spark_conf)
    job.require_outputs(json_out)
    result = run_mask_job(job, json_path=json_out)
    if not quiet:
        from rich.table import Table  # (20 ms of import: only when printing)

        t = Table(title=f"Masked {result.summary['input']}", show_header=True)
        t.add_column("step", justify="right")
        t.add_column("method")
        t.add_column("columns")
        for r in result.records:
            p = r["parameters"]
            cols = p.get("columns", p.get("column", p.get("quasi_identifiers")))
            t.add_row(
                str(r["step"] + 1),
                r["method"],
                ", ".join(cols) if isinstance(cols, list) else str(cols or ""),
            )
        out.print(t)
        ev = result.summary["numeric_evaluation"]
        for key, label in (("il1s", "IL1s"), ("il_sse_sst", "IL (100 SSE/SST)"), ("dbrl", "DBRL")):
            if ev.get(key) is not None:
                out.print(f"{label}: {ev[key]:.4f}")
        out.print(
            f"records: {result.summary['records_in']:,} in, {result.summary['records_out']:,} out"
        )
        print_original_records(result.summary.get("original_records"))
        for kind, path in result.written.items():
            out.print(f"{kind}: {path}")
    return result.summary


def mask_cli(
    config: Annotated[
        Path, typer.Option("--config", "-c", help="Job file (YAML or TOML) with a methods: list.")
    ],
    json_out: Annotated[
        str | None,
        typer.Option("--json", help="Write the JSON summary here (overrides output.json)."),
    ] = None,
    quiet: QuietOption = False,
    engine: EngineOption = None,
    spark_master: SparkMasterOption = None,
    spark_conf: SparkConfOption = None,
) -> None:
    """Mask microdata: noise, microaggregation, swapping, PRAM, recoding, suppression, ..."""
    run_guarded(mask_command, config, json_out, quiet, engine, spark_master, spark_conf)


def register(app: typer.Typer) -> None:
    """Add ``sdckit mask`` to ``app``."""
    app.command("mask")(mask_cli)
