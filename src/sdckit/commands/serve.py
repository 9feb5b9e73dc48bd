"""``sdckit serve --config server.yaml``: run the protected query server."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from sdckit.commands._common import err, run_guarded
from sdckit.errors import SdcInputError

#: The extra packages the server needs.
INSTALL_HINT = "pip install -e '.[server]'"


def example_config() -> Path:
    """The bundled example configuration (Adult data, dp / restriction / camouflage)."""
    from importlib import resources

    return Path(str(resources.files("sdckit.datasets") / "data" / "server_example.yaml"))


def serve_command(config: Path | None, example: bool, host: str | None, port: int | None) -> None:
    """Implementation of ``sdckit serve``: validate, open the database, listen."""
    try:
        import fastapi  # noqa: F401
        import sqlglot  # noqa: F401
        import uvicorn
    except ImportError as exc:
        raise SdcInputError(
            f"sdckit serve needs the server extra ({exc.name} is missing): {INSTALL_HINT}"
        ) from None
    if (config is None) == (not example):
        raise SdcInputError("give --config server.yaml, or --example for the bundled example")
    from sdckit.server.app import create_app
    from sdckit.server.config import load_server_config

    settings = load_server_config(config if config is not None else example_config())
    if settings.database_kind == "duckdb":
        try:
            import duckdb  # noqa: F401
        except ImportError:
            raise SdcInputError(
                f"the DuckDB backend needs the server extra: {INSTALL_HINT}"
            ) from None
    app = create_app(settings)
    listen_host = host or settings.host
    listen_port = settings.port if port is None else port
    err.print(f"sdckit serve: listening on http://{listen_host}:{listen_port}", highlight=False)
    uvicorn.run(app, host=listen_host, port=listen_port, log_level="warning")


def serve_cli(
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="The server file (YAML).")
    ] = None,
    example: Annotated[
        bool, typer.Option("--example", help="Serve the bundled Adult example (in memory).")
    ] = False,
    host: Annotated[str | None, typer.Option("--host", help="Overrides listen.host.")] = None,
    port: Annotated[int | None, typer.Option("--port", help="Overrides listen.port.")] = None,
) -> None:
    """Run the protected query server (dp, restriction or camouflage per dataset)."""
    run_guarded(serve_command, config, example, host, port)


def register(app: typer.Typer) -> None:
    """Add ``sdckit serve`` to ``app``."""
    app.command("serve")(serve_cli)
