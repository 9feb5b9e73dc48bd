"""``sdckit ui``: the data steward's workbench in the browser (the ``ui`` extra)."""

from __future__ import annotations

import ipaddress
import secrets
from pathlib import Path
from typing import Annotated

import typer

from sdckit.commands._common import err, run_guarded
from sdckit.errors import SdcInputError

#: The extra packages the web app needs.
INSTALL_HINT = "pip install -e '.[ui]'"


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts connections from this machine."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def ui_command(
    port: int, data: Path, host: str, allow_remote: bool, token: str | None, workers: int
) -> None:
    """Implementation of ``sdckit ui``: check the extra, guard remote access, listen."""
    try:
        import fastapi  # noqa: F401
        import python_multipart  # noqa: F401  (form uploads)
        import uvicorn
    except ImportError as exc:
        raise SdcInputError(
            f"sdckit ui needs the ui extra ({exc.name} is missing): {INSTALL_HINT}"
        ) from None
    if not 0 < port < 65536:
        raise SdcInputError(f"--port must be between 1 and 65535, got {port}")
    if workers < 1:
        raise SdcInputError(f"--workers must be at least 1, got {workers}")
    if not is_loopback(host):
        if not allow_remote:
            raise SdcInputError(
                f"--host {host} would let other machines reach the app; add --allow-remote "
                "to mean it (a token is then required, printed below)"
            )
        token = token or secrets.token_urlsafe(24)
    from sdckit.ui.app import create_app

    app = create_app(data, token=token, max_workers=workers)
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    url = f"http://{shown}:{port}/" + (f"?token={token}" if token else "")
    err.print(
        f"sdckit ui: open {url}  (projects in {data.resolve()}; Ctrl-C stops)", highlight=False
    )
    uvicorn.run(app, host=host, port=port, log_level="warning")


def ui_cli(
    port: Annotated[int, typer.Option("--port", help="Port to listen on.")] = 8050,
    data: Annotated[
        Path, typer.Option("--data", help="Folder of the projects (created if missing).")
    ] = Path("sdckit-ui"),
    host: Annotated[
        str, typer.Option("--host", help="Interface to listen on (default: this machine only).")
    ] = "127.0.0.1",
    allow_remote: Annotated[
        bool,
        typer.Option(
            "--allow-remote",
            help="Allow a --host other machines can reach (a token is then required).",
        ),
    ] = False,
    token: Annotated[
        str | None,
        typer.Option("--token", help="Access token (default: a random one when --allow-remote)."),
    ] = None,
    workers: Annotated[
        int, typer.Option("--workers", help="Jobs that may run at the same time.")
    ] = 2,
) -> None:
    """Open the web app: load, classify, analyze, protect, compare and export in a browser."""
    run_guarded(ui_command, port, data, host, allow_remote, token, workers)


def register(app: typer.Typer) -> None:
    """Add ``sdckit ui`` to ``app``."""
    app.command("ui")(ui_cli)
