"""``sdckit demo``: the complete job on the bundled demo data."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sdckit.commands._common import out, run_guarded


def demo_cli(
    output: Annotated[Path, typer.Option("--output", "-o", help="Output folder.")] = Path(
        "sdckit-demo"
    ),
    quiet: Annotated[bool, typer.Option("--quiet", "-q")] = False,
    compare: Annotated[
        bool,
        typer.Option(
            "--compare",
            help="Instead: compare seven protections of Adult (generalization, Mondrian, PRAM, "
            "local suppression) on one R-U map.",
        ),
    ] = False,
) -> None:
    """Run the complete demo job on the bundled Adult data and write its report."""
    from sdckit.jobs.demo import run_compare_demo, run_demo

    run_guarded(run_compare_demo if compare else run_demo, output, quiet=quiet, console=out)


def register(app: typer.Typer) -> None:
    """Add ``sdckit demo`` to ``app``."""
    app.command("demo")(demo_cli)
