"""core.monotone.first_holding: the boundary of a monotone integer predicate."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sdckit.core.monotone import first_holding


@given(st.integers(-1000, 1000), st.integers(1, 2000), st.data())
def test_finds_the_first_integer_that_holds(failing: int, width: int, data) -> None:
    holding = failing + width
    boundary = data.draw(st.integers(failing + 1, holding))
    calls: list[int] = []

    def holds(n: int) -> bool:
        calls.append(n)
        return n >= boundary

    assert first_holding(holds, failing, holding) == boundary
    assert all(failing < n < holding for n in calls)  # neither end is evaluated
    assert len(calls) <= max(0, (width - 1).bit_length())


def test_refuses_an_empty_interval() -> None:
    with pytest.raises(ValueError, match="must be greater"):
        first_holding(lambda n: True, 3, 3)
