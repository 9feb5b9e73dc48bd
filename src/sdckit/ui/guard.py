"""Who may talk to the workbench, and how much it reads: one ASGI middleware in front of the
web app that checks, in this order, before any page runs:

1. **Host.** The ``Host`` header must name this server: an IP address that is loopback (any
   IP address when the app listens beyond this machine), ``localhost``, the ``--host`` given
   or a name allowed with ``--allow-host``. A web page that rebinds its own DNS name to
   127.0.0.1 (DNS rebinding) sends its own name as ``Host`` and is refused (403) -- the
   check of Jupyter's notebook server (``allow_remote_access``, ``local_hostnames``).
2. **Origin.** A request that changes state (any method but GET, HEAD, OPTIONS) must come
   from a page of the app: its ``Origin`` -- or its ``Referer`` when the browser sent no
   ``Origin`` -- must be ``http(s)://`` + the request's ``Host``; ``Origin: null`` is
   foreign. A request with neither header is not from a web page's form or script (browsers
   send ``Origin`` on every cross-origin POST) and is left to the token. The check of
   Jupyter's ``check_origin`` and OWASP's "Verifying Origin With Standard Headers" (CSRF
   Prevention Cheat Sheet).
3. **Token.** Every request carries the session token: ``?token=`` once (a GET is then
   answered by a redirect to the same address without it, setting an ``HttpOnly``,
   ``SameSite=Strict`` cookie), then the cookie. ``SameSite=Strict`` keeps the browser from
   sending the cookie with any request another site starts.
4. **Body size.** A body larger than the limit of its address is refused before it is read
   when ``Content-Length`` says so, else when the bytes read pass the limit
   (:class:`BodyTooLarge`, raised where the page reads its form, so that the page's error
   display shows it).
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from html import escape
from urllib.parse import parse_qsl, urlencode, urlsplit

from starlette.datastructures import Headers
from starlette.responses import HTMLResponse, RedirectResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from sdckit.core.web import MIN_SECRET_CHARS, BodyMeter, whole_number
from sdckit.errors import ConfigError, DataError

__all__ = ["TOKEN_COOKIE", "Access", "BodyTooLarge", "Guard", "host_name", "is_loopback"]

#: Cookie that carries the access token.
TOKEN_COOKIE = "sdckit_ui_token"
#: Methods that do not change state (RFC 9110 section 9.2.1, "safe methods").
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


def is_loopback(host: str) -> bool:
    """Whether ``host`` (a name or an IP address, IPv6 with or without brackets) only accepts
    connections from this machine."""
    name = host.strip("[]").lower()
    if name in ("localhost", "localhost."):
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def host_name(header: str) -> str:
    """The host of a ``Host`` header (``name:port``, ``[v6]:port``), lowercase, without the
    port, the brackets of an IPv6 address and a trailing dot; ``""`` when malformed."""
    header = header.strip().lower()
    if header.startswith("["):
        end = header.find("]")
        return header[1:end] if end > 0 else ""
    name = header.rsplit(":", 1)[0] if header.count(":") == 1 else header
    return name.rstrip(".")


class BodyTooLarge(DataError):
    """A request body over the limit of its address (HTTP 413)."""

    http_status = 413


@dataclass(frozen=True)
class Access:
    """What the guard admits: the session ``token``, the host ``names`` the server answers
    to besides IP addresses, and whether IP addresses beyond loopback are accepted
    (``remote``: the app listens beyond this machine)."""

    token: str
    names: frozenset[str]
    remote: bool

    @classmethod
    def for_listen(cls, token: str, host: str, allow_hosts: Iterable[str] = ()) -> Access:
        """The access of an app listening on ``host``: ``localhost``, ``host`` when it is a
        name, and ``allow_hosts``; a token of at least 16 characters."""
        if len(token.strip()) < MIN_SECRET_CHARS:
            raise ConfigError(
                f"the access token must be at least {MIN_SECRET_CHARS} characters (got "
                f"{len(token.strip())}); leave out --token for a random one"
            )
        names = {"localhost"} | {host_name(h) for h in allow_hosts}
        try:
            ipaddress.ip_address(host.strip("[]"))
        except ValueError:
            names.add(host_name(host))
        return cls(token, frozenset(n for n in names if n), remote=not is_loopback(host))

    def host_allowed(self, header: str) -> bool:
        """Whether a request's ``Host`` header names this server (see the module's rule 1)."""
        name = host_name(header)
        try:
            address = ipaddress.ip_address(name)
        except ValueError:
            return name in self.names
        return address.is_loopback or self.remote

    def token_ok(self, given: str | None) -> bool:
        """Whether ``given`` is the token (compared in constant time)."""
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())


def same_origin(headers: Headers) -> bool:
    """Whether a request comes from a page of the server it is sent to: its ``Origin`` (else
    its ``Referer``) is ``http(s)://`` + its ``Host``; True when it has neither."""
    source = headers.get("origin") or headers.get("referer")
    if source is None:
        return True
    parts = urlsplit(source.strip())
    host = headers.get("host", "").strip().lower()
    return parts.scheme in ("http", "https") and bool(host) and parts.netloc.lower() == host


class Guard:
    """The middleware of the module's four rules. ``limit(path)`` is the largest body (bytes)
    a request to ``path`` may send and the option of ``sdckit ui`` that sets it."""

    def __init__(
        self, app: ASGIApp, access: Access, limit: Callable[[str], tuple[int, str]]
    ) -> None:
        self.app = app
        self.access = access
        self.limit = limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Check a request; pass it to the app, or answer it with the refusal."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        host = headers.get("host", "")
        if not self.access.host_allowed(host):
            await _refuse(
                403,
                f"This server does not answer to the host name {escape(repr(host))}. Open "
                "the address printed by <code>sdckit ui</code>; to reach it by another name, "
                "start it with <code>--allow-host NAME</code>.",
            )(scope, receive, send)
            return
        if scope["method"] not in SAFE_METHODS and not same_origin(headers):
            await _refuse(
                403,
                "This request comes from another web site (its Origin or Referer is not "
                "this server), so it was refused. Use the workbench's own pages.",
            )(scope, receive, send)
            return
        query = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        given = next((v for k, v in query if k == "token"), None)
        if self.access.token_ok(given):
            if scope["method"] in ("GET", "HEAD"):
                rest = urlencode([(k, v) for k, v in query if k != "token"])
                clean = scope.get("root_path", "") + scope["path"] + (f"?{rest}" if rest else "")
                response = RedirectResponse(clean, status_code=303)
                response.set_cookie(
                    TOKEN_COOKIE, self.access.token, httponly=True, samesite="strict"
                )
                await response(scope, receive, send)
                return
        elif not self.access.token_ok(_cookie(headers, TOKEN_COOKIE)):
            await _refuse(
                401,
                "Open the address printed by <code>sdckit ui</code> (it carries the access token).",
            )(scope, receive, send)
            return
        limit, option = self.limit(scope["path"])
        await self.app(scope, _limited(receive, headers, limit, option), send)


def _limited(receive: Receive, headers: Headers, limit: int, option: str) -> Receive:
    """``receive`` that raises :class:`BodyTooLarge` at the first read when the declared
    ``Content-Length`` is over ``limit``, else once the bytes read pass it
    (:class:`sdckit.core.web.BodyMeter`)."""
    declared = whole_number(headers.get("content-length", ""))
    return BodyMeter(
        receive, limit, lambda size: BodyTooLarge(_too_large(size, limit, option)), declared
    )


def _too_large(size: int | None, limit: int, option: str) -> str:
    what = f"{size / 1e6:,.4g} MB, over" if size is not None else "over"
    return (
        f"the upload is {what} the workbench's limit of {limit / 1e6:,.4g} MB for it (set "
        f"with sdckit ui {option}); open a larger data file by its path on the server, or "
        "run the job with the command line"
    )


def _cookie(headers: Headers, name: str) -> str | None:
    from http.cookies import SimpleCookie

    jar: SimpleCookie = SimpleCookie()
    try:
        jar.load(headers.get("cookie", ""))
    except Exception:  # noqa: BLE001 - a malformed Cookie header carries no token
        return None
    morsel = jar.get(name)
    return morsel.value if morsel is not None else None


def _refuse(status: int, message: str) -> HTMLResponse:
    return HTMLResponse(
        f"<!doctype html><title>sdckit ui</title><h1>sdckit ui</h1><p>{message}</p>",
        status_code=status,
    )
