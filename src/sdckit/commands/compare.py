"""``sdckit compare``: run a grid of masking configurations, draw the R-U map, rank them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sdckit.commands._common import QuietOption, out, run_guarded
from sdckit.core.uri import Target, output_target

#: Columns shown after rank, label, score, IL and DR, per R-U scale: header -> row key.
_EXTRA = {
    "score": {"DBRL": "dbrl", "PRL": "prl", "ID": "interval_disclosure"},
    "reidentification": {
        "highest risk": "highest_risk",
        "certain (share)": "certain_share",
        "suppressed": "suppressed_records",
        "ARX loss": "loss",
    },
    "synthetic": {"S_pMSE": "s_pmse", "TCAP": "tcap", "records": "records"},
}


def _cell(v) -> str:
    return "n/a" if v is None else f"{v:.4g}"


def print_ranking(result: dict) -> None:
    """Print the ranking of a comparison as a table (columns depend on its R-U scale)."""
    from rich.table import Table  # (20 ms of import: only when printing)

    scale = result.get("scale", "score")
    t = Table(
        title=f"Configurations ranked by R-U score = (IL + DR) / 2 ({scale} scale)",
        show_header=True,
    )
    rows = result["ranking"]
    # columns no configuration has (e.g. suppressed records in a masking-only grid) are left out
    extra = {h: k for h, k in _EXTRA[scale].items() if any(r[k] is not None for r in rows)}
    for col in ("rank", "configuration", "R-U score", "IL (%)", "DR (%)", *extra):
        t.add_column(col, justify="left" if col == "configuration" else "right")
    for r in result["ranking"]:
        t.add_row(
            "–" if r["rank"] is None else str(r["rank"]),
            r["label"],
            _cell(r["ru_score"]),
            _cell(r["information_loss"]),
            _cell(r["disclosure_risk"]),
            *(_cell(r[key]) for key in extra.values()),
        )
    out.print(t)


def compare_command(
    config: Path, json_out: Target | None, html_out: Target | None, quiet: bool
) -> dict:
    """Implementation of ``sdckit compare``: load the grid job, run it, print the ranking."""
    json_out = output_target(json_out, "--json")
    html_out = output_target(html_out, "--html")
    from sdckit.jobs.compare import run_compare_job
    from sdckit.jobs.config import load_job

    job = load_job(config)
    job.require_outputs(json_out, html_out)
    result = run_compare_job(job, json_out=json_out, html_out=html_out)
    if not quiet:
        print_ranking(result)
        for p in result["written"]:
            out.print(f"written: {p}")
    return result


def compare_cli(
    config: Annotated[
        Path,
        typer.Option(
            "--config", "-c", help="Grid file (YAML or TOML); format: docs, Evaluate and compare."
        ),
    ],
    json_out: Annotated[
        str | None, typer.Option("--json", help="Write the ranked table as JSON here.")
    ] = None,
    html_out: Annotated[
        str | None, typer.Option("--html", help="Write the HTML report (R-U map) here.")
    ] = None,
    quiet: QuietOption = False,
) -> None:
    """Protect one data set with a grid of masking methods and anonymizations x parameters,
    evaluate each, draw the R-U map and rank by R-U score."""
    run_guarded(compare_command, config, json_out, html_out, quiet)


def register(app: typer.Typer) -> None:
    """Add ``sdckit compare`` to ``app``."""
    app.command("compare")(compare_cli)
