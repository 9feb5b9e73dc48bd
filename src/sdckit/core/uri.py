"""Paths given as URIs (``file:///data/out``, ``hdfs://nn/releases/r1``): which scheme a
value names, and the local path a ``file://`` URI stands for.

A value is a URI when it starts with ``scheme://`` (RFC 3986, section 3.1: a letter, then
letters, digits, ``+``, ``-`` or ``.``); anything else is a file system path. A ``file``
URI names a path on this machine (RFC 8089): its authority is empty or ``localhost``.

An output is a *target*: a local :class:`~pathlib.Path`, or the text of a URI of another
scheme (``hdfs://nn/out/r.parquet``), which only an engine with a remote file system writes
(:func:`sdckit.core.io.register_remote_files`); a ``Path`` cannot hold a URI (it folds
``//`` into ``/``).
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

from sdckit.errors import ConfigError

__all__ = ["Target", "file_uri_path", "is_remote", "output_target", "uri_scheme"]

#: An output: a local path, or a URI of another scheme than ``file`` (see the module text).
Target = Path | str

#: ``scheme://`` at the start of a value (RFC 3986, section 3.1).
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.\-]*)://")


def uri_scheme(value: object) -> str | None:
    """The scheme of ``value`` in lower case when it is a text of the form ``scheme://...``,
    else None (a file system path, or no text)."""
    if not isinstance(value, str):
        return None
    match = _SCHEME.match(value)
    return match.group(1).lower() if match else None


def file_uri_path(value: str, where: str) -> Path:
    """The local path a ``file://`` URI names (RFC 8089: ``file:///abs/path`` or
    ``file://localhost/abs/path``, percent-escapes decoded); ConfigError naming ``where``
    (the key) for another host, an empty path, a query or a fragment."""
    parts = urlsplit(value)
    if parts.netloc not in ("", "localhost") or not parts.path or parts.query or parts.fragment:
        raise ConfigError(
            f"{where} {value!r} is not a local file URI; write it as file:///absolute/path "
            "(three slashes: no host)"
        )
    return Path(unquote(parts.path))


def is_remote(value: object) -> bool:
    """True for a text naming a URI of another scheme than ``file`` (``hdfs://``, ``s3a://``):
    an output only a remote file system writes."""
    return uri_scheme(value) not in (None, "file")


def output_target(value: str | Path | None, where: str) -> Target | None:
    """An output as given on the command line or in code: a ``file://`` URI is the local path
    it names (:func:`file_uri_path`, ``where`` naming the flag in its error), a URI of another
    scheme stays its text (:func:`is_remote`), anything else is a path; None stays None."""
    if value is None or isinstance(value, Path):
        return value
    scheme = uri_scheme(value)
    if scheme == "file":
        return file_uri_path(value, where)
    return value if scheme is not None else Path(value)
