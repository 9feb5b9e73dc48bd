"""The HTTP API (FastAPI): ``POST /v1/query``, ``GET /v1/budget``, ``GET /v1/usage``,
``GET /v1/datasets``.

Every error is JSON ``{"error": {"code", "message"}}``: 401 (missing or bad key), 404 (unknown
dataset), 403 (refused: ``budget_exhausted``, ``query_set_too_small``, ``audit_refused``,
``unsupported_query``), 400 (a malformed request), 413 (a body over :data:`MAX_BODY_BYTES`),
500 (a bug; the body says nothing more, the server's log has the exception type). No response
carries a record of the data.

Checks run before the body is read: its size (:class:`sdckit.server.guard.BodyLimit`, on
``Content-Length`` and on the bytes read), then the key (``POST /v1/query`` authenticates before
it reads its body); only then is the body read (at most :data:`MAX_BODY_BYTES`), parsed as JSON
and validated strictly (``epsilon`` a JSON number, never ``true`` or ``"0.1"``).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator, Sequence
from typing import Any

from sdckit.errors import short_repr
from sdckit.server.config import ServerConfig
from sdckit.server.guard import MAX_BODY_BYTES, MAX_SQL_CHARS, BodyLimit
from sdckit.server.service import QueryService, Refusal

try:
    from fastapi import FastAPI, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse
    from pydantic import BaseModel, ConfigDict, Field, ValidationError
    from starlette.concurrency import run_in_threadpool
except ImportError as _missing:  # pragma: no cover
    raise ImportError(
        "sdckit's query server needs its extra packages: pip install -e '.[server]'"
    ) from _missing

__all__ = ["MAX_BODY_BYTES", "MAX_SQL_CHARS", "QueryRequest", "create_app"]

log = logging.getLogger("sdckit.server")

_USAGE = 'send JSON {"dataset": NAME, "sql": "SELECT ...", "epsilon": 0.1}'


class QueryRequest(BaseModel):
    """The body of ``POST /v1/query`` (strict: no string or boolean is read as a number)."""

    model_config = ConfigDict(extra="forbid", strict=True)

    dataset: str | None = None
    sql: str = Field(max_length=MAX_SQL_CHARS)
    epsilon: float | None = Field(default=None, allow_inf_nan=False)


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


def _problems(errors: Sequence[Any]) -> str:
    """The first three validation errors, each naming its field (``epsilon: ... got true``)."""
    parts = []
    for e in errors[:3]:
        where = ".".join(str(p) for p in e.get("loc", ()) if p != "body") or "body"
        if where == "epsilon":
            got = short_repr(e.get("input"))
            parts.append(f"epsilon must be a JSON number > 0 such as 0.1, got {got}")
        else:
            parts.append(f"{where}: {e.get('msg')}")
    return "; ".join(parts)


def parse_query_request(raw: bytes) -> QueryRequest:
    """The validated body of ``POST /v1/query``; :class:`Refusal` 400 naming the problem."""
    try:
        return QueryRequest.model_validate_json(raw)
    except ValidationError as exc:
        raise Refusal(
            400, "bad_request", f"malformed request ({_problems(exc.errors())}); {_USAGE}"
        ) from None


def create_app(config: ServerConfig, service: QueryService | None = None) -> FastAPI:
    """The FastAPI application serving ``config`` (its database opened and loaded now, so a
    bad configuration fails before the server listens)."""
    svc = service or QueryService(config)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        svc.close()

    app = FastAPI(
        title="sdckit protected query server",
        version="1",
        lifespan=lifespan,
        docs_url=None,
        redoc_url=None,
        openapi_url=None,
    )
    app.state.service = svc

    @app.exception_handler(Refusal)
    async def _refusal(request: Request, exc: Refusal) -> JSONResponse:
        return _error(exc.status, exc.code, exc.message)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = _problems(exc.errors())
        return _error(400, "bad_request", f"malformed request ({problems}); {_USAGE}")

    @app.exception_handler(Exception)
    async def _bug(request: Request, exc: Exception) -> JSONResponse:
        log.error("internal error: %s", type(exc).__name__)
        return _error(500, "internal_error", "internal error; the server's log has its type")

    def analyst(request: Request) -> str:
        return svc.authenticate(request.headers.get("authorization"))

    @app.post("/v1/query")
    async def query(request: Request) -> dict[str, Any]:
        """Answer one aggregate query under the dataset's protection mode: the key is checked
        before the body is read (its size is :class:`BodyLimit`'s)."""
        who = analyst(request)
        body = parse_query_request(await request.body())
        return await run_in_threadpool(svc.query, who, body.dataset, body.sql, body.epsilon)

    @app.get("/v1/budget")
    def budget(request: Request) -> dict[str, Any]:
        """The caller's privacy budget (spent, remaining) on each dp dataset."""
        return svc.budget(analyst(request))

    @app.get("/v1/usage")
    def usage(request: Request) -> dict[str, Any]:
        """The caller's answered and refused queries, noise variance and interval widths."""
        return svc.usage(analyst(request))

    @app.get("/v1/datasets")
    def datasets(request: Request) -> dict[str, Any]:
        """Public metadata of the datasets: columns, bounds, public keys, mode."""
        analyst(request)
        return svc.describe()

    app.add_middleware(
        BodyLimit,
        max_bytes=MAX_BODY_BYTES,
        hint=f" (a query's SQL may have at most {MAX_SQL_CHARS:,} characters)",
    )
    return app
