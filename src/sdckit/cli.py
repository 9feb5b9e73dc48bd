"""The ``sdckit`` command line.

Each command lives in its own module under :mod:`sdckit.commands` and is registered here by
discovery. Exit codes: 0 success; 2 bad input or usage (the message says what and how to fix
it); 1 internal error (a bug: please report it).
"""

from __future__ import annotations

import gc
import importlib
import os
import pkgutil
import signal
import sys
import warnings

import typer
import typer.core

import sdckit.commands

#: The one output policy of every command, shown at the end of each command's --help.
OUTPUT_POLICY = (
    "Outputs: an existing file at an output path is replaced, never a file the command reads "
    "(its input, job file, hierarchies, ...: refused). All outputs of one run are written "
    "together, or none when the run fails or is interrupted; a device or FIFO (/dev/stdout) "
    "is written into, a symlink is followed."
)

HELP = (
    "Statistical disclosure control: analyze risk, anonymize, mask, evaluate and compare "
    "microdata; protect tables; synthesize data."
)


def command_names() -> list[str]:
    """The public modules of :mod:`sdckit.commands`, one per command (``analyze``, ...)."""
    return sorted(
        info.name
        for info in pkgutil.iter_modules(sdckit.commands.__path__)
        if not info.name.startswith("_")
    )


#: Typer's shell-completion options of the root (``add_completion``).
_COMPLETION_OPTIONS = ("install_completion", "show_completion")


class _Group(typer.core.TyperGroup):
    """The root group, whose unset ``--help`` flag reads ``False`` rather than ``None``.

    Typer coerces every parameter value that is not already a ``bool`` through a pydantic
    adapter; the root's help flag, unset in ``sdckit NAME ...``, was ``None``, so every
    command paid pydantic's import (~0.1 s) before it started, ``NAME --help`` included.
    Typer's completion options (``--install-completion``, ``--show-completion``) likewise.
    """

    def get_help_option(self, ctx):  # type: ignore[no-untyped-def]
        option = super().get_help_option(ctx)
        if option is not None and option.default is None:
            option.default = False
        return option

    def get_params(self, ctx):  # type: ignore[no-untyped-def]
        # the same for typer's --install-completion / --show-completion, unset in every run
        params = super().get_params(ctx)
        for param in params:
            if param.name in _COMPLETION_OPTIONS and param.default is None:
                param.default = False
        return params


def _print_version(value: bool) -> None:
    """``sdckit --version``: the version, then exit 0 (before any command runs)."""
    if value:
        from sdckit._version import __version__

        typer.echo(f"sdckit {__version__}")
        raise typer.Exit()


def build_app(command: str | None = None) -> typer.Typer:
    """The Typer application with every command, or with ``command`` alone.

    Each command module adds its commands (``register(app)``). ``sdckit NAME ...`` needs only
    the module of NAME, so :func:`main` builds the app with that one and a command starts
    without importing the others; ``sdckit --help`` lists them all.
    """
    application = typer.Typer(
        name="sdckit",
        cls=_Group,
        help=HELP,
        no_args_is_help=True,
        add_completion=True,  # --install-completion / --show-completion (bash, zsh, fish)
        pretty_exceptions_enable=False,
        rich_markup_mode=None,  # click's plain help: rich's markdown renderer costs 0.1 s
    )

    @application.callback()
    def _root(  # a group even with one command registered: `sdckit NAME` stays
        version: bool = typer.Option(
            False,
            "--version",
            is_eager=True,
            callback=_print_version,
            help="Print sdckit's version and exit.",
        ),
    ) -> None:
        """Statistical disclosure control: microdata and tables."""

    for name in [command] if command else command_names():
        importlib.import_module(f"sdckit.commands.{name}").register(application)
    for registered in application.registered_commands:
        registered.epilog = OUTPUT_POLICY
    return application


def __getattr__(name: str):
    """``sdckit.cli.app``: the application with every command, built on first use."""
    if name == "app":
        application = build_app()
        globals()["app"] = application
        return application
    raise AttributeError(f"module 'sdckit.cli' has no attribute {name!r}")


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
    # pydantic looks for plugins by reading the entry points of every installed distribution
    # the first time it builds a validator (10-40 ms, more the bigger the environment); the
    # job files' validators need none. A user who wants pydantic plugins in sdckit sets
    # PYDANTIC_DISABLE_PLUGINS to "" (pydantic's own switch, which this only defaults).
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    argv = sys.argv[1:]
    if "--quiet" in argv or "-q" in argv:
        warnings.simplefilter("ignore")
    application = globals().get("app")
    if application is None:
        module = argv[0].replace("-", "_") if argv else None  # import-argus: import_argus
        application = build_app(module if module in command_names() else None)
    try:
        application()
    finally:
        # The command is over and its outputs are committed; what is left is the interpreter's
        # teardown, whose garbage collections walk every object pandas, pyarrow and pydantic
        # made (0.15-0.2 s on Adult). Frozen objects are skipped by those collections (modules,
        # streams and atexit handlers are still finalized as usual).
        gc.freeze()


if __name__ == "__main__":  # pragma: no cover
    main()
