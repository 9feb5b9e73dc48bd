"""What every command shares: the consoles, the error-to-exit-code guard, list parsing.

Exit codes (DEVELOPERS.md): 0 success; 2 bad input or usage (the message says what and how
to fix it); 1 internal error (a bug: please report it).
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import typer
from rich.console import Console

from sdckit.errors import SdcInputError

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
        err.print(f"[bold red]error:[/] {exc}", highlight=False, markup=True)
        raise typer.Exit(2) from None
    except (typer.Exit, typer.Abort, KeyboardInterrupt):
        raise
    except Exception as exc:  # noqa: BLE001 - last line of defence
        err.print(f"[bold red]internal error:[/] {type(exc).__name__}: {exc}", highlight=False)
        err.print("This is a bug in sdckit; please report it with the traceback below.")
        err.print(traceback.format_exc(), markup=False, highlight=False)
        raise typer.Exit(1) from None


def check_output_paths(
    outputs: Mapping[str, str | Path | None], inputs: Mapping[str, str | Path | None]
) -> None:
    """Refuse output paths that would destroy input or leave half the outputs written.

    ``outputs`` and ``inputs`` map a flag (``"--json"``, ``"--original"``) to its path (``None``
    = not given). Raises :class:`~sdckit.errors.ConfigError` naming the flag and the path when
    an output is an input file, two outputs are the same file, an output is an existing
    directory, a parent of an output is a file, or its folder cannot be written (probed by
    creating and removing a temporary file). Commands call this before any work, so a
    bad output path costs nothing and writes nothing.
    """
    from sdckit.errors import ConfigError

    given_in = {flag: Path(p).resolve() for flag, p in inputs.items() if p is not None}
    seen: dict[Path, str] = {}
    for flag, raw in outputs.items():
        if raw is None:
            continue
        path = Path(raw)
        resolved = path.resolve()
        for in_flag, in_path in given_in.items():
            if resolved == in_path:
                raise ConfigError(
                    f"{flag} {str(raw)!r} is the {in_flag} file; the input is never "
                    "overwritten: choose another output path"
                )
        if resolved in seen:
            raise ConfigError(
                f"{seen[resolved]} and {flag} are the same file {str(raw)!r}; give each output "
                "its own path"
            )
        seen[resolved] = flag
        if path.is_dir():
            raise ConfigError(
                f"{flag} {str(raw)!r} is a directory; give a file path inside it, e.g. "
                f"{str(path / ('out.' + flag.lstrip('-')))!r}"
            )
        for parent in resolved.parents:
            if parent.exists():
                if not parent.is_dir():
                    raise ConfigError(
                        f"{flag} {str(raw)!r}: {str(parent)!r} is a file, not a folder; "
                        "choose another output path"
                    )
                _probe_writable(flag, raw, parent)
                break


def _probe_writable(flag: str, raw: str | Path, folder: Path) -> None:
    """ConfigError unless a file can be created in ``folder`` (a probe, removed at once)."""
    import tempfile

    from sdckit.errors import ConfigError

    try:
        fd, tmp = tempfile.mkstemp(prefix=".sdckit-probe.", dir=folder)
    except OSError as exc:
        raise ConfigError(
            f"{flag} {str(raw)!r}: cannot write in {str(folder)!r} "
            f"({exc.strerror or exc}); choose a folder you can write to"
        ) from None
    os.close(fd)
    os.unlink(tmp)
