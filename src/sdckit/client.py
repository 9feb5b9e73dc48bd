"""A Python client of the protected query server (``sdckit serve``), standard library only.

>>> client = Client("http://127.0.0.1:8765", key="...")            # doctest: +SKIP
>>> client.query("SELECT sex, COUNT(*) FROM adult GROUP BY sex", epsilon=0.1)  # doctest: +SKIP
{'rows': [...], 'mode': 'dp', 'epsilon_spent': 0.1, 'budget_remaining': 0.9, ...}

A refusal raises :class:`QueryRefused` (an :class:`~sdckit.errors.SdcInputError`) carrying
the HTTP status, the server's error code and its message (the HTTP contract is in
docs/getting-started/serve.md, "HTTP API").
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from sdckit.errors import SdcInputError
from sdckit.server.guard import MAX_SQL_CHARS

__all__ = ["Client", "QueryRefused"]


class QueryRefused(SdcInputError):
    """The server refused a request: ``status`` (401, 403, 404, 400...), ``code``, message."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}" if code else message)
        self.status, self.code, self.message = status, code, message


class Client:
    """Talks to one server as one analyst (``key``: the analyst's key)."""

    def __init__(self, url: str, key: str, timeout: float = 60.0) -> None:
        if not url.startswith(("http://", "https://")):
            raise SdcInputError(f"the server URL must start with http:// or https://: {url!r}")
        self.url, self.key, self.timeout = url.rstrip("/"), key, timeout

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
        data = None if body is None else json.dumps(body).encode("utf-8")
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Authorization", f"Bearer {self.key}")
        if data is not None:
            request.add_header("Content-Type", "application/json")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                return json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as exc:
            try:
                error = json.loads(exc.read().decode("utf-8")).get("error", {})
            except (ValueError, AttributeError):
                error = {}
            raise QueryRefused(
                exc.code, str(error.get("code", "")), str(error.get("message", exc.reason))
            ) from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise SdcInputError(
                f"cannot reach the server at {self.url}: {reason}; is `sdckit serve` running?"
            ) from None

    def query(
        self, sql: str, dataset: str | None = None, epsilon: float | None = None
    ) -> dict[str, Any]:
        """``POST /v1/query``: the answer's JSON (``rows``, ``mode``, ``epsilon_spent``,
        ``budget_remaining``...)."""
        if len(sql) > MAX_SQL_CHARS:
            raise SdcInputError(
                f"the SQL has {len(sql):,} characters; the server answers at most "
                f"{MAX_SQL_CHARS:,} (shorten the query)"
            )
        body: dict[str, Any] = {"sql": sql}
        if dataset is not None:
            body["dataset"] = dataset
        if epsilon is not None:
            body["epsilon"] = epsilon
        return self._call("POST", "/v1/query", body)

    def budget(self) -> dict[str, Any]:
        """``GET /v1/budget``: spent and remaining epsilon per dp dataset."""
        return self._call("GET", "/v1/budget")

    def usage(self) -> dict[str, Any]:
        """``GET /v1/usage``: answered and refused queries, noise variance, interval widths."""
        return self._call("GET", "/v1/usage")

    def datasets(self) -> dict[str, Any]:
        """``GET /v1/datasets``: the public metadata of the datasets."""
        return self._call("GET", "/v1/datasets")
