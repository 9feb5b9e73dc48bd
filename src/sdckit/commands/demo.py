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
    run_guarded(_compare if compare else _demo, output.resolve(), quiet)


def _demo(output: Path, quiet: bool) -> dict:
    from sdckit.commands.anonymize import print_summary, progress_bar
    from sdckit.jobs.demo import run_demo

    with progress_bar(not quiet, "searching the lattice") as progress:
        summary = run_demo(output, progress=progress)
    if not quiet:
        print_summary(summary)
        out.print(
            f"Demo written to {output}/: adult_anonymized.csv (the verified release), "
            "report.html (open it in a browser), report.json"
        )
    return summary


def _compare(output: Path, quiet: bool) -> dict:
    from sdckit.commands.compare import print_ranking
    from sdckit.jobs.demo import run_compare_demo

    result = run_compare_demo(output)
    if not quiet:
        print_ranking(result)
        out.print(
            f"Comparison written to {output}/: compare.html (the R-U map; open it in a "
            "browser), compare.json"
        )
    return result


def register(app: typer.Typer) -> None:
    """Add ``sdckit demo`` to ``app``."""
    app.command("demo")(demo_cli)
