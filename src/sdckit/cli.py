"""The ``sdckit`` command line.

Each command lives in its own module under :mod:`sdckit.commands` and is registered here by
discovery. Exit codes: 0 success; 2 bad input or usage (the message says what and how to fix
it); 1 internal error (a bug: please report it).
"""

from __future__ import annotations

import importlib
import pkgutil
import signal
import sys
import warnings

import typer

import sdckit.commands

app = typer.Typer(
    name="sdckit",
    help="Statistical disclosure control: analyze risk, anonymize, mask and evaluate data.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


#: The one output policy of every command, shown at the end of each command's --help.
OUTPUT_POLICY = (
    "Outputs: an existing file at an output path is replaced, never a file the command reads "
    "(its input, job file, hierarchies, ...: refused). All outputs of one run are written "
    "together, or none when the run fails or is interrupted; a device or FIFO (/dev/stdout) "
    "is written into, a symlink is followed."
)


def _register_commands() -> None:
    """Import every public module of :mod:`sdckit.commands` and let it add its commands."""
    for info in sorted(pkgutil.iter_modules(sdckit.commands.__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"sdckit.commands.{info.name}").register(app)
    for command in app.registered_commands:
        command.epilog = OUTPUT_POLICY


_register_commands()


def _terminated(signum: int, frame: object) -> None:
    """SIGTERM ends the run as SIGINT does: the outputs being written are discarded (their
    temporary files removed) and nothing half-written is left; exit status 128 + 15."""
    raise SystemExit(128 + signum)


def main() -> None:
    """Console-script entry point (usage errors exit 2, input errors 2, bugs 1).

    Under ``--quiet`` no warning of a library (numpy, pandas, matplotlib) reaches the
    terminal: a quiet run prints errors only.
    """
    signal.signal(signal.SIGTERM, _terminated)
    if "--quiet" in sys.argv[1:] or "-q" in sys.argv[1:]:
        warnings.simplefilter("ignore")
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
