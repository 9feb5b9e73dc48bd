"""``sdckit ui``: the data steward's workbench in the browser (the ``ui`` extra)."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Annotated

import typer

from sdckit.commands._common import err, run_guarded
from sdckit.errors import SdcInputError
from sdckit.ui import MAX_HIERARCHY, MAX_UPLOAD

#: The extra packages the web app needs.
INSTALL_HINT = "pip install -e '.[ui]'"


def ui_command(
    port: int,
    data: Path,
    host: str,
    allow_remote: bool,
    allow_hosts: list[str],
    token: str | None,
    workers: int,
    max_upload_mb: float,
    max_hierarchy_mb: float,
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
    from sdckit.ui.guard import is_loopback

    if not 0 < port < 65536:
        raise SdcInputError(f"--port must be between 1 and 65535, got {port}")
    if workers < 1:
        raise SdcInputError(f"--workers must be at least 1, got {workers}")
    if not is_loopback(host) and not allow_remote:
        raise SdcInputError(
            f"--host {host} would let other machines reach the app; add --allow-remote "
            "to mean it (the access token, printed below, is required in any case)"
        )
    token = token or secrets.token_urlsafe(24)
    from sdckit.ui.app import create_app

    app = create_app(
        data,
        token=token,
        host=host,
        allow_hosts=allow_hosts,
        max_workers=workers,
        max_upload=round(max_upload_mb * 10**6),
        max_hierarchy=round(max_hierarchy_mb * 10**6),
    )
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
    if ":" in shown:
        shown = f"[{shown.strip('[]')}]"
    url = f"http://{shown}:{port}/?token={token}"
    err.print(
        f"sdckit ui: open {url}  (projects in {data.resolve()}; Ctrl-C stops)", highlight=False
    )
    uvicorn.run(app, host=host.strip("[]"), port=port, log_level="warning")


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
        typer.Option("--allow-remote", help="Allow a --host other machines can reach."),
    ] = False,
    allow_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-host",
            metavar="NAME",
            help="A host name the app answers to besides localhost, loopback addresses (any "
            "IP address with --allow-remote) and --host, e.g. the machine's name; repeat "
            "for more.",
        ),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            "--token", help="Access token, 16 characters or more (default: a random one)."
        ),
    ] = None,
    workers: Annotated[
        int, typer.Option("--workers", help="Jobs that may run at the same time.")
    ] = 2,
    max_upload_mb: Annotated[
        float,
        typer.Option(
            "--max-upload-mb", help="Largest data file upload, in MB (larger: open by path)."
        ),
    ] = MAX_UPLOAD / 1e6,
    max_hierarchy_mb: Annotated[
        float,
        typer.Option("--max-hierarchy-mb", help="Largest hierarchy file upload, in MB."),
    ] = MAX_HIERARCHY / 1e6,
) -> None:
    """Open the web app: load, classify, analyze, protect, compare and export in a browser."""
    run_guarded(
        ui_command,
        port,
        data,
        host,
        allow_remote,
        allow_host or [],
        token,
        workers,
        max_upload_mb,
        max_hierarchy_mb,
    )


def register(app: typer.Typer) -> None:
    """Add ``sdckit ui`` to ``app``."""
    app.command("ui")(ui_cli)
