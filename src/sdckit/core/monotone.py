"""Searches over a monotone integer predicate.

One bisection for the places that look for the boundary of a property that holds from some
integer on (ARX's binary search for the number of classes a risk-based model suppresses, the
partition-selection threshold of a Gaussian mechanism).
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["first_holding"]


def first_holding(holds: Callable[[int], bool], failing: int, holding: int) -> int:
    """The smallest integer in ``(failing, holding]`` at which ``holds`` is true, for a
    predicate that is monotone (false up to some point, true from it on) with
    ``holds(failing)`` false and ``holds(holding)`` true; neither end is evaluated.

    Bisection (e.g. Knuth, TAOCP vol. 3, 6.2.1): ``ceil(log2(holding - failing))`` calls.

    Examples
    --------
    >>> first_holding(lambda n: n * n >= 50, 0, 50)
    8
    """
    if holding <= failing:
        raise ValueError(f"holding ({holding}) must be greater than failing ({failing})")
    while holding - failing > 1:
        mid = (failing + holding) // 2
        if holds(mid):
            holding = mid
        else:
            failing = mid
    return holding
