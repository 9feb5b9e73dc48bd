"""What every DP mechanism returns, and the order every mechanism follows.

Each mechanism call (1) validates its arguments, (2) resolves its random source, (3) charges
the accountant -- raising :class:`~sdckit.dp.accountant.BudgetExhausted` before any noise is
drawn -- and only then (4) samples. :func:`start` does steps 2 and 3.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sdckit.dp.accountant import Accountant, PrivacyCost
from sdckit.dp.randomness import Randomness, as_randomness
from sdckit.errors import ParameterError, short_repr


@dataclass(frozen=True)
class Release:
    """A differentially private answer and how it was produced.

    ``value``: the noisy answer (safe to publish). ``mechanism``: its name. ``cost``: the
    privacy it cost (what was charged to the accountant). ``randomness``: ``"csprng"`` (the
    OS generator) or ``"seeded"`` (reproducible; as private as the seed is secret).
    ``parameters``: the noise actually used (scale or sigma, sensitivity, granularity...), all
    data-independent.
    """

    value: Any
    mechanism: str
    cost: PrivacyCost
    randomness: str
    parameters: dict[str, Any] = field(default_factory=dict)


def start(
    mechanism: str, cost: PrivacyCost, accountant: Accountant | None, seed: Any
) -> Randomness:
    """Resolve the random source and charge ``accountant`` (if any) for ``cost``.

    Call it after validating every argument and before drawing any noise: a refused charge
    raises :class:`~sdckit.dp.accountant.BudgetExhausted` with nothing drawn.
    """
    rnd = as_randomness(seed)
    if accountant is not None:
        if not isinstance(accountant, Accountant):
            raise ParameterError(
                f"{mechanism}: accountant must be an sdckit.dp.Accountant or None, got "
                f"{short_repr(accountant)}"
            )
        accountant.charge(cost, mechanism)
    return rnd
