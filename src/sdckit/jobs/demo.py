"""``sdckit demo``: the complete job on the bundled Adult data."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console


def run_demo(output: Path, quiet: bool = False, console: Console | None = None) -> dict:
    """Analyze the re-identification risk of the bundled Adult data; write JSON + HTML reports."""
    from sdckit.commands.analyze import analyze_command
    from sdckit.datasets import ADULT_COLUMNS, load_adult

    demo = load_adult()
    qi = [c for c in ADULT_COLUMNS if c != "occupation"]
    output = Path(output)
    summary = analyze_command(
        demo.path,
        qi,
        ["occupation"],
        ";",
        None,
        None,
        None,
        0.2,
        output / "report.json",
        output / "report.html",
        None,
        "utf-8",
        quiet,
    )
    if not quiet and console is not None:
        console.print(f"Demo report written to {output.resolve()}/ (report.html, report.json)")
    return summary
