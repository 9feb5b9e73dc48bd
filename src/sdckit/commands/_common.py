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

from sdckit.errors import SdcInputError

__all__ = [
    "ConfigOption",
    "EngineOption",
    "JsonOption",
    "QuietOption",
    "SparkConfOption",
    "SparkMasterOption",
    "LazyConsole",
    "err",
    "escape",
    "out",
    "run_guarded",
    "split_list",
]

#: The options every job command takes (``--config``, ``--json``, ``--quiet``).
ConfigOption = Annotated[Path, typer.Option("--config", "-c", help="Job file (YAML or TOML).")]
JsonOption = Annotated[str | None, typer.Option("--json", help="Write the JSON summary here.")]
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
SparkConfOption = Annotated[
    list[str] | None,
    typer.Option(
        "--spark-conf",
        metavar="KEY=VALUE",
        help="A Spark setting for --engine spark, as spark-submit --conf takes it (repeatable; "
        "wins over the job file's spark: conf:), e.g. --spark-conf spark.executor.memory=4g; "
        "spark.pyspark.python names the executors' Python (one with sdckit installed).",
    ),
]


class LazyConsole:
    """A rich ``Console`` made on first use: rich's console module and what it imports cost
    20-25 ms, which a quiet run that succeeds never needs. Attributes are the console's
    (``print``, ``file``, ...); :attr:`console` is the console itself (e.g. for a progress
    bar)."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._console: Any = None

    @property
    def console(self) -> Any:
        """The ``rich.console.Console`` (made now if it was not)."""
        if self._console is None:
            from rich.console import Console

            self._console = Console(**self._options)
        return self._console

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):  # (not yet set: copying or unpickling an instance)
            raise AttributeError(name)
        return getattr(self.console, name)


def escape(text: str) -> str:
    """``text`` with rich's markup escaped (``[`` read as a character, not a style)."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)


err = LazyConsole(stderr=True, soft_wrap=True)  # messages never broken mid-word
out = LazyConsole()


def print_original_records(figures: dict[str, Any] | None) -> None:
    """Print the share of released records equal to an original record (a synthesize or
    mask summary's ``original_records``) and its warning, if any."""
    if not figures or figures.get("share") is None:
        return
    out.print(
        f"equal to an original record: {figures['share']:.1%} of the released records "
        f"({figures['equal_to_original']:,} of {figures['records']:,})"
    )
    if figures.get("warning"):
        out.print(f"warning: {escape(figures['warning'])}")


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
