"""The ``sdckit`` command line.

Each command lives in its own module under :mod:`sdckit.commands` and is registered here by
discovery. Exit codes: 0 success; 2 bad input or usage (the message says what and how to fix
it); 1 internal error (a bug: please report it).
"""

from __future__ import annotations

import importlib
import pkgutil
import signal

import typer

import sdckit.commands

app = typer.Typer(
    name="sdckit",
    help="Statistical disclosure control: analyze risk, anonymize, mask and evaluate data.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _register_commands() -> None:
    """Import every public module of :mod:`sdckit.commands` and let it add its commands."""
    for info in sorted(pkgutil.iter_modules(sdckit.commands.__path__), key=lambda m: m.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"sdckit.commands.{info.name}").register(app)


_register_commands()


def _terminated(signum: int, frame: object) -> None:
    """SIGTERM ends the run as SIGINT does: the outputs being written are discarded (their
    temporary files removed) and nothing half-written is left; exit status 128 + 15."""
    raise SystemExit(128 + signum)


def main() -> None:
    """Console-script entry point (usage errors exit 2, input errors 2, bugs 1)."""
    signal.signal(signal.SIGTERM, _terminated)
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
