"""Paths given as URIs (``file:///data/out``, ``hdfs://nn/releases/r1``): which scheme a
value names, and the local path a ``file://`` URI stands for.

A value is a URI when it starts with ``scheme://`` (RFC 3986, section 3.1: a letter, then
letters, digits, ``+``, ``-`` or ``.``); anything else is a file system path. A ``file``
URI names a path on this machine (RFC 8089): its authority is empty or ``localhost``.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

from sdckit.errors import ConfigError

__all__ = ["file_uri_path", "uri_scheme"]

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
