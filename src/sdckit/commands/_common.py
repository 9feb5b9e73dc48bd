"""What every command shares: the consoles, the error-to-exit-code guard, list parsing.

Exit codes (DEVELOPERS.md): 0 success; 2 bad input or usage (the message says what and how
to fix it); 1 internal error (a bug: please report it).
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from sdckit.errors import SdcInputError

__all__ = [
    "ConfigOption",
    "EngineOption",
    "JsonOption",
    "QuietOption",
    "SparkMasterOption",
    "err",
    "out",
    "run_guarded",
    "split_list",
]

#: The options every job command takes (``--config``, ``--json``, ``--quiet``).
ConfigOption = Annotated[Path, typer.Option("--config", "-c", help="Job file (YAML or TOML).")]
JsonOption = Annotated[Path | None, typer.Option("--json", help="Write the JSON summary here.")]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing on success.")]
#: Where a job runs (overrides the job file's ``engine:`` and ``spark: {master}``).
EngineOption = Annotated[
    str | None,
    typer.Option(
        "--engine",
        help="Where the job runs: local (default) or spark (needs the spark extra and Java 17; "
        "overrides the job file's engine:).",
    ),
]
SparkMasterOption = Annotated[
    str | None,
    typer.Option(
        "--spark-master",
        help="Spark master for --engine spark (default local[2]; e.g. spark://host:7077).",
    ),
]

err = Console(stderr=True, soft_wrap=True)  # messages never broken mid-word
out = Console()


def split_list(value: str | None) -> list[str]:
    """``"a, b,c"`` -> ``["a", "b", "c"]`` (empty or None -> ``[]``)."""
    return [v.strip() for v in value.split(",") if v.strip()] if value else []


def run_guarded(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Call ``fn`` mapping sdckit errors to exit codes (2 input, 1 internal)."""
    try:
        return fn(*args, **kwargs)
    except SdcInputError as exc:
        err.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False, markup=True)
        raise typer.Exit(2) from None
    except (typer.Exit, typer.Abort, KeyboardInterrupt):
        raise
    except Exception as exc:  # noqa: BLE001 - last line of defence
        err.print(
            f"[bold red]internal error:[/] {type(exc).__name__}: {escape(str(exc))}",
            highlight=False,
        )
        err.print("This is a bug in sdckit; please report it with the traceback below.")
        err.print(traceback.format_exc(), markup=False, highlight=False)
        raise typer.Exit(1) from None
