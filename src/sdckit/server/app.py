"""The HTTP API (FastAPI): ``POST /v1/query``, ``GET /v1/budget``, ``GET /v1/usage``,
``GET /v1/datasets``.

Every error is JSON ``{"error": {"code", "message"}}``: 401 (missing or bad key), 404 (unknown
dataset), 403 (refused: ``budget_exhausted``, ``query_set_too_small``, ``audit_refused``,
``unsupported_query``), 400 (a malformed request), 500 (a bug; the body says nothing more, the
server's log has the exception type). No response carries a record of the data.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from sdckit.server.config import ServerConfig
from sdckit.server.service import QueryService, Refusal

try:
    from fastapi import FastAPI, Request
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse
    from pydantic import BaseModel, ConfigDict, Field
except ImportError as _missing:  # pragma: no cover
    raise ImportError(
        "sdckit's query server needs its extra packages: pip install -e '.[server]'"
    ) from _missing

__all__ = ["create_app", "QueryRequest"]

log = logging.getLogger("sdckit.server")


class QueryRequest(BaseModel):
    """The body of ``POST /v1/query``."""

    model_config = ConfigDict(extra="forbid")

    dataset: str | None = None
    sql: str = Field(max_length=20_000)
    epsilon: float | None = None


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse({"error": {"code": code, "message": message}}, status_code=status)


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
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}"
            for e in exc.errors()[:3]
        )
        return _error(
            400,
            "bad_request",
            f'malformed request ({problems}); send JSON {{"dataset": NAME, "sql": "SELECT ...", '
            '"epsilon": 0.1}',
        )

    @app.exception_handler(Exception)
    async def _bug(request: Request, exc: Exception) -> JSONResponse:
        log.error("internal error: %s", type(exc).__name__)
        return _error(500, "internal_error", "internal error; the server's log has its type")

    def analyst(request: Request) -> str:
        return svc.authenticate(request.headers.get("authorization"))

    @app.post("/v1/query")
    def query(body: QueryRequest, request: Request) -> dict[str, Any]:
        """Answer one aggregate query under the dataset's protection mode."""
        return svc.query(analyst(request), body.dataset, body.sql, body.epsilon)

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

    return app
