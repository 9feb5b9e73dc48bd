"""The request-body meter and the Content-Length parse the query server and the workbench
share (:mod:`sdckit.core.web`), on their own."""

from __future__ import annotations

import asyncio
from collections.abc import MutableMapping
from typing import Any

import pytest

from sdckit.core.web import BodyMeter, whole_number


class Over(Exception):
    """The test's too-large error, carrying the size the meter passed."""

    def __init__(self, size: int | None) -> None:
        super().__init__(size)
        self.size = size


def _receive(chunks: list[bytes]) -> Any:
    messages: list[MutableMapping[str, Any]] = [
        {"type": "http.request", "body": c, "more_body": i < len(chunks) - 1}
        for i, c in enumerate(chunks)
    ]
    calls = []

    async def receive() -> MutableMapping[str, Any]:
        calls.append(1)
        return messages.pop(0) if messages else {"type": "http.disconnect"}

    return receive, calls


def _read_all(meter: BodyMeter) -> bytes:
    async def run() -> bytes:
        body = b""
        while True:
            message = await meter()
            body += message.get("body", b"")
            if message["type"] != "http.request" or not message.get("more_body", False):
                return body

    return asyncio.run(run())


@pytest.mark.parametrize(
    ("text", "value"), [("12", 12), (" 7 ", 7), ("0", 0), ("", None), ("-1", None), ("²", None)]
)
def test_whole_number_reads_ascii_digits_only(text: str, value: int | None) -> None:
    assert whole_number(text) == value


def test_a_body_within_the_limit_is_read_to_its_end() -> None:
    receive, _ = _receive([b"abc", b"de"])
    meter = BodyMeter(receive, 5, Over)
    assert not meter.done
    assert _read_all(meter) == b"abcde" and meter.done and meter.read == 5


def test_the_read_that_passes_the_limit_raises_and_every_later_read_too() -> None:
    receive, calls = _receive([b"abc", b"def", b"g"])
    meter = BodyMeter(receive, 5, Over)
    with pytest.raises(Over) as first:
        _read_all(meter)
    assert first.value.size is None and meter.over and len(calls) == 2
    with pytest.raises(Over):
        asyncio.run(meter())
    assert len(calls) == 2  # nothing more is read from the client


def test_a_declared_length_over_the_limit_raises_before_a_byte_is_read() -> None:
    receive, calls = _receive([b"x" * 10])
    meter = BodyMeter(receive, 5, Over, declared=10)
    with pytest.raises(Over) as error:
        asyncio.run(meter())
    assert error.value.size == 10 and calls == []


def test_a_request_without_a_body_is_done_from_the_start() -> None:
    receive, _ = _receive([])
    assert BodyMeter(receive, 5, Over, body=False).done
