"""What the server checks before it reads a request body: its size.

:class:`BodyLimit` is ASGI middleware (ASGI 3.0 spec, "HTTP" connection scope) around the whole
application:

* a request whose ``Content-Length`` exceeds the limit is answered ``413`` at once, before the
  application runs and before a byte of the body is read;
* a body without a length (``Transfer-Encoding: chunked``) is counted as the application reads
  it; the read that passes the limit is the last one (the application gets :class:`BodyTooLarge`
  instead of the data, and the client gets ``413``), so at most ``limit`` bytes plus one chunk
  of the server's read buffer are ever held;
* a response sent before the body was read to its end (a ``401`` for a wrong key, a ``413``)
  carries ``Connection: close``: the server closes the connection instead of reading and
  discarding the rest of a large body (RFC 9110, sec. 15.5.14, "413 Content Too Large": the
  server may close the connection to prevent the client from continuing the request).

The body is counted by :class:`sdckit.core.web.BodyMeter`, the rule the workbench's guard
(:mod:`sdckit.ui.guard`) applies too. Credentials are the application's job
(:mod:`sdckit.server.app` authenticates before it reads). This module imports nothing beyond
the standard library and :mod:`sdckit.core.web`: the client (:mod:`sdckit.client`) reads its
limits.
"""

from __future__ import annotations

import json
from typing import Any

from sdckit.core.web import ASGIApp, BodyMeter, Message, Receive, Scope, Send, whole_number

__all__ = ["MAX_BODY_BYTES", "MAX_SQL_CHARS", "BodyLimit", "BodyTooLarge"]

#: The longest SQL text of a query (characters).
MAX_SQL_CHARS = 20_000
#: The largest request body (bytes): the longest SQL with every character JSON-escaped as a
#: surrogate pair (``\ud83d\ude00``, 12 bytes), plus 16 KiB for the rest of the object.
MAX_BODY_BYTES = 12 * MAX_SQL_CHARS + 16_384


class BodyTooLarge(Exception):
    """Raised into the application by ``receive`` when the body passes the limit."""


def _error(status: int, code: str, message: str) -> tuple[dict[str, Any], bytes]:
    body = json.dumps({"error": {"code": code, "message": message}}).encode("utf-8")
    start = {
        "type": "http.response.start",
        "status": status,
        "headers": [
            (b"content-type", b"application/json"),
            (b"content-length", str(len(body)).encode("ascii")),
            (b"connection", b"close"),
        ],
    }
    return start, body


class BodyLimit:
    """Refuse request bodies larger than ``max_bytes`` (module docstring); ``hint`` ends the
    413 message (what the body may hold)."""

    def __init__(self, app: ASGIApp, max_bytes: int, hint: str = "") -> None:
        self.app, self.max_bytes, self.hint = app, max_bytes, hint

    def _too_large(self, what: str) -> tuple[dict[str, Any], bytes]:
        return _error(
            413,
            "body_too_large",
            f"the request body {what} the limit of {self.max_bytes:,} bytes{self.hint}",
        )

    async def _answer(self, send: Send, response: tuple[dict[str, Any], bytes]) -> None:
        start, body = response
        await send(start)
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one ASGI connection (only ``http`` requests are checked)."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        declared = None
        if b"content-length" in headers:
            declared = whole_number(headers[b"content-length"].decode("latin-1"))
            if declared is None:
                await self._answer(
                    send, _error(400, "bad_request", "Content-Length must be a whole number")
                )
                return
            if declared > self.max_bytes:
                await self._answer(send, self._too_large(f"(Content-Length {declared:,}) exceeds"))
                return
        has_body = bool(declared) or b"transfer-encoding" in headers
        meter = BodyMeter(receive, self.max_bytes, lambda _: BodyTooLarge(), body=has_body)
        started = False

        async def guarded_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                if not meter.done:
                    message = {
                        **message,
                        "headers": [*message.get("headers", []), (b"connection", b"close")],
                    }
            await send(message)

        try:
            await self.app(scope, meter, guarded_send)
        except BodyTooLarge:
            if started:
                raise
            await self._answer(send, self._too_large("exceeds"))
