"""What sdckit's two web apps (the query server, :mod:`sdckit.server`, and the workbench,
:mod:`sdckit.ui`) share: the ASGI types, the count of a request body against its limit, and the
shortest shared secret (an analyst key, a workbench token).

Both apps are the top layer and neither imports the other, so the one copy of these rules
lives here, in the lowest layer both import. The module imports only the standard library:
the server's client (:mod:`sdckit.client`) and a command's ``--help`` load nothing more.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

__all__ = ["MIN_SECRET_CHARS", "BodyMeter", "whole_number"]

#: The shortest analyst key (server) or access token (workbench) accepted, in characters,
#: surrounding whitespace not counted: 16 random hex digits carry 64 bits, the entropy below
#: which NIST SP 800-63B (look-up secret verifiers) requires rate limiting, which neither app
#: does. Length cannot show that a secret is random; the apps' hints ask for 32 random hex
#: digits (128 bits).
MIN_SECRET_CHARS = 16

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def whole_number(text: str) -> int | None:
    """The value of a ``Content-Length`` header (RFC 9110 sec. 8.6: one or more ASCII digits,
    surrounding whitespace ignored); None when it is anything else."""
    text = text.strip()
    return int(text) if text.isascii() and text.isdigit() else None


class BodyMeter:
    """The application's ``receive`` (ASGI 3.0, "HTTP" connection scope), counting the bytes
    of the request body as they are read.

    The read that passes ``limit`` raises ``too_large(None)`` instead of returning the data,
    and so does every read after it, so at most ``limit`` bytes plus one chunk of the server's
    read buffer are ever held. With ``declared`` (the request's ``Content-Length``) over the
    limit, the first read raises ``too_large(declared)`` before a byte is read. ``done`` says
    whether the body was read to its end, the client left or the request has none (``body``
    false): a response sent before then should close the connection.
    """

    def __init__(
        self,
        receive: Receive,
        limit: int,
        too_large: Callable[[int | None], Exception],
        declared: int | None = None,
        body: bool = True,
    ) -> None:
        self._receive = receive
        self.limit = limit
        self.too_large = too_large
        self.declared = declared
        self.read = 0
        self.over = declared is not None and declared > limit
        self.done = not body

    async def __call__(self) -> Message:
        """The next message of the request, or the exception for a body over the limit."""
        if self.over:
            raise self.too_large(self.declared if self.read == 0 else None)
        message = await self._receive()
        if message["type"] == "http.request":
            self.read += len(message.get("body", b""))
            if not message.get("more_body", False):
                self.done = True
            if self.read > self.limit:
                self.over = True
                raise self.too_large(None)
        elif message["type"] == "http.disconnect":
            self.done = True
        return message
