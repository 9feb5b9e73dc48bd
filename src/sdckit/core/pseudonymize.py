"""Pseudonymization of direct identifiers with keyed HMAC-SHA256 tokens.

A plain hash of a name or ID can be reversed by hashing every candidate value, so sdckit only
offers *keyed* tokens: HMAC-SHA256 (RFC 2104) of the value under a secret key. Same key and
value give the same token (records stay linkable across releases made with the same key);
without the key the mapping cannot be recomputed.

Pseudonymized data is still personal data (GDPR recital 26): whoever holds the key, or enough
other information, can re-identify people. Reports say so.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from sdckit.core.encoding import encode
from sdckit.core.schema import Schema
from sdckit.errors import ConfigError

PERSONAL_DATA_NOTICE = (
    "Pseudonymized columns are still personal data (GDPR recital 26): anyone holding the key "
    "or enough additional information can re-identify the people behind the tokens. Keep the "
    "key secret and protect the release accordingly."
)
MIN_KEY_BYTES = 16


def load_key(key_file: str | Path | None = None, key_env: str | None = None) -> bytes:
    """Read the HMAC key from a file or an environment variable (exactly one of them).

    Keys shorter than 16 bytes are refused: a short key can be guessed.
    """
    if (key_file is None) == (key_env is None):
        raise ConfigError(
            "pseudonymize needs exactly one of 'key_file' or 'key_env' (an unkeyed hash is "
            "reversible and is not offered)"
        )
    if key_file is not None:
        path = Path(key_file)
        if not path.is_file():
            raise ConfigError(f"pseudonymize.key_file {str(path)!r} does not exist")
        key = path.read_bytes().strip()
        where = f"key file {str(path)!r}"
    else:
        value = os.environ.get(str(key_env))
        if value is None:
            raise ConfigError(
                f"pseudonymize.key_env: environment variable {key_env!r} is not set; "
                f"export it with a secret of at least {MIN_KEY_BYTES} characters"
            )
        key = value.encode("utf-8")
        where = f"environment variable {key_env!r}"
    if len(key) < MIN_KEY_BYTES:
        raise ConfigError(
            f"the key in {where} has {len(key)} bytes; use at least {MIN_KEY_BYTES} "
            "random bytes (e.g. `python -c 'import secrets; print(secrets.token_hex(32))'`)"
        )
    return key


def pseudonymize(values: pd.Series, key: bytes, length: int = 16) -> pd.Series:
    """Replace each value by the first ``length`` hex digits of HMAC-SHA256(key, value).

    Values are taken in their canonical text form (:func:`~sdckit.core.encoding.as_text`, so
    ``7`` and ``"7"`` give the same token); missing values are not tokens, they are written
    back exactly as they were read (``""``, ``None`` or ``NaN``). Work is done once per
    distinct value. ``length`` is 8..64 hex digits.
    """
    length = check_length(length)
    if not isinstance(key, (bytes, bytearray)) or len(key) < MIN_KEY_BYTES:
        raise ConfigError(
            f"pseudonymize needs a secret key of at least {MIN_KEY_BYTES} bytes (see load_key); "
            "an unkeyed or short-keyed hash can be reversed by hashing candidate values"
        )
    values = values if isinstance(values, pd.Series) else pd.Series(values)
    enc = encode(values)
    tokens = np.array(
        [
            hmac.new(bytes(key), v.encode("utf-8"), hashlib.sha256).hexdigest()[: int(length)]
            if v != ""
            else ""
            for v in enc.values
        ],
        dtype=object,
    )
    out = tokens[enc.codes]
    missing = enc.values[enc.codes] == ""
    if missing.any():
        out[missing] = values.to_numpy(dtype=object)[missing]
    return pd.Series(out, index=values.index, name=values.name, dtype=object)


def check_length(length: object) -> int:
    """A pseudonym length: an integer number of hex digits from 8 to 64 (else ConfigError)."""
    if isinstance(length, bool) or not isinstance(length, (int, np.integer)):
        raise ConfigError(f"pseudonymize.length must be an integer from 8 to 64, got {length!r}")
    if not 8 <= int(length) <= 64:
        raise ConfigError(f"pseudonymize.length must be between 8 and 64, got {length}")
    return int(length)


def pseudonym_settings(
    name: str, spec: Mapping[str, Any], base_dir: str | Path | None = None
) -> tuple[bytes, int]:
    """The key and token length an identifying attribute's ``pseudonymize`` settings give
    (``key_file`` or ``key_env``, optional ``length``, default 16), checked; a relative
    ``key_file`` is resolved against ``base_dir``. Both engines call it."""
    unknown = sorted(set(spec) - {"key_file", "key_env", "length"})
    if unknown:
        raise ConfigError(
            f"attributes.{name}.pseudonymize: unknown key(s) {unknown}; "
            "allowed: key_file, key_env, length"
        )
    length = check_length(spec.get("length", 16))
    key_file = spec.get("key_file")
    if key_file is not None and base_dir is not None and not Path(key_file).is_absolute():
        key_file = Path(base_dir) / key_file
    return load_key(key_file, spec.get("key_env")), length


def protect_identifiers(
    data: pd.DataFrame, schema: Schema, base_dir: str | Path | None = None
) -> tuple[pd.DataFrame, list[str]]:
    """Apply the output rule for direct identifiers: drop them, or pseudonymize on request.

    Every ``identifying`` attribute of ``schema`` is removed from the released table unless
    its :attr:`~sdckit.core.schema.Attribute.pseudonymize` settings (``key_file`` or
    ``key_env``, optional ``length``, default 16) ask for keyed tokens. Returns the new table
    (``data`` itself is not modified) and the notices the report must show: when a column
    was pseudonymized, :data:`PERSONAL_DATA_NOTICE` (GDPR recital 26). A relative
    ``key_file`` is resolved against ``base_dir`` (e.g. the job file's folder).
    """
    out = data.copy()
    notices: list[str] = []
    pseudonymized: list[str] = []
    for name in schema.identifying:
        if name not in out.columns:
            continue
        spec = schema.attributes[name].pseudonymize
        if not spec:
            out = out.drop(columns=[name])
            continue
        key, length = pseudonym_settings(name, spec, base_dir)
        out[name] = pseudonymize(out[name], key, length)
        pseudonymized.append(name)
    if pseudonymized:
        notices.append(f"Pseudonymized columns: {', '.join(pseudonymized)}. {PERSONAL_DATA_NOTICE}")
    return out, notices
