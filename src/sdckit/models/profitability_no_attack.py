"""No-attack profitability: the variant of Wan et al.'s (2015) game in which no attack pays.

Z. Wan, Y. Vorobeychik, W. Xia, E. W. Clayton, M. Kantarcioglu, R. Ganta, R. Heatherly,
B. A. Malin, "A game theoretic framework for analyzing re-identification risk", PLoS ONE
10(3): e0120592, 2015 (the "no-attack" release of the publisher/adversary game; the game and
its four amounts: :mod:`sdckit.models.profitability`). ARX implements it as the privacy models
``ProfitabilityProsecutorNoAttack`` and ``ProfitabilityJournalistNoAttack``, which read the
same ``ARXCostBenefitConfiguration`` as its profitability models.

The publisher releases a class only where the adversary expects to *lose* by attacking any of
its records: ``G p - C < 0`` with ``p`` the success probability of a re-identification
(``1 / |c|`` for a prosecutor, ``1 / P`` with ``P`` the population records of the class for a
journalist). ARX reduces this to a class-size threshold (``initialize``: ``p < C / G``, so
``size > G / C``): with the threshold ``t = G / C`` (a floating-point quotient, as ARX
computes it) the smallest admissible size is

* ``k = 1`` when ``G = 0`` (an attack never gains anything);
* unbounded when ``t`` is infinite (``C = 0 < G``: every attack pays; no class is released);
* ``k = t + 1`` when ``t`` is a whole number, else ``k = ceil(t)`` -- in both cases
  ``k = floor(t) + 1``, the smallest whole size strictly above ``t``.

A payoff of exactly 0 (``|c| = G / C``) is refused: ARX asks that the adversary's payoff be
negative, so a class of ``G / C`` records is not released (the profitability model instead
treats a payoff of 0 as no attack). The prosecutor variant is then k-anonymity with this ``k``
(``entry.count >= k``), the journalist variant k-map against the population table with it
(``entry.pcount >= k``, ARX's research subset). ``publisher_benefit`` and ``publisher_loss``
do not enter the verdict (the publisher gets its full benefit minus the information loss on
each released record, since no record is attacked); they are kept because the models share
the cost/benefit configuration with the ``publisher_payout`` metric, as in ARX.

Both models are monotonic with generalization and suppression (ARX ``super(true, true)``):
merging classes only raises ``|c|`` and ``P``.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np
import pandas as pd
from pydantic import PrivateAttr

from sdckit.core.frequency import FrequencySet
from sdckit.models.base import ModelResult, PrivacyModel
from sdckit.models.presence import PopulationIndex
from sdckit.models.profitability import Amount, JournalistPopulation

__all__ = [
    "ProfitabilityJournalistNoAttack",
    "ProfitabilityProsecutorNoAttack",
    "no_attack_k",
]

#: the class-size bound an algorithm prunes with when no class size deters the adversary
_UNBOUNDED = 2**62


def no_attack_k(adversary_gain: float, adversary_cost: float) -> int | None:
    """The smallest class size at which attacking a record does not pay, ``G / |c| < C``
    (ARX ``ProfitabilityProsecutorNoAttack.initialize``; module docstring): 1 when ``G = 0``,
    ``floor(G / C) + 1`` otherwise, None when ``G / C`` is infinite (``C = 0 < G``: no class
    size deters an attack).

    >>> no_attack_k(300, 4), no_attack_k(8, 4), no_attack_k(0, 0), no_attack_k(1, 0)
    (76, 3, 1, None)
    """
    if adversary_gain == 0:
        return 1
    threshold = adversary_gain / adversary_cost if adversary_cost else math.inf
    if math.isinf(threshold):
        return None
    return math.floor(threshold) + 1


class ProfitabilityProsecutorNoAttack(PrivacyModel):
    """No-attack profitability against a prosecutor (Wan et al. 2015; ARX
    ``ProfitabilityProsecutorNoAttack``).

    A released class must have at least ``k = floor(G / C) + 1`` records (:func:`no_attack_k`),
    so that the adversary's expected payoff ``G / |c| - C`` from attacking any of its records
    is negative. Monotonic with generalization and suppression (as k-anonymity).

    Parameters
    ----------
    publisher_benefit : float
        ``B``, the publisher's benefit per published record (>= 0; ARX's default 1200).
    publisher_loss : float
        ``L``, the publisher's loss per successfully attacked record (>= 0; 300).
    adversary_gain : float
        ``G``, the adversary's gain per successful re-identification (>= 0; 300).
    adversary_cost : float
        ``C``, the adversary's cost per attack (>= 0; 4).

    Examples
    --------
    >>> ProfitabilityProsecutorNoAttack().k
    76
    """

    spec_name: ClassVar[str] = "profitability_prosecutor_no_attack"
    spec_label: ClassVar[str] = "no-attack profitability (prosecutor)"
    monotonic: ClassVar[bool] = True
    monotonic_with_generalization: ClassVar[bool] = True
    reports_checks: ClassVar[bool] = True
    attacker: ClassVar[str] = "prosecutor"

    publisher_benefit: Amount = 1200.0
    publisher_loss: Amount = 300.0
    adversary_gain: Amount = 300.0
    adversary_cost: Amount = 4.0

    @property
    def k(self) -> int | None:
        """The smallest admissible class size (None: no class is admissible)."""
        return no_attack_k(self.adversary_gain, self.adversary_cost)

    @property
    def name(self) -> str:
        bound = "no class deters it" if self.k is None else f"k = {self.k}"
        return (
            f"no-attack profitability ({self.attacker}; gain {self.adversary_gain:g}, cost "
            f"{self.adversary_cost:g}: {bound})"
        )

    def _bound(self) -> int:
        """``k`` as a number to compare sizes with (a huge one when unbounded)."""
        k = self.k
        return _UNBOUNDED if k is None else min(k, _UNBOUNDED)

    def minimal_class_size(self) -> int:
        """``k``: a smaller class always violates the model (ARX ``getMinimalClassSize``)."""
        return self._bound()

    def unreachable(self, base: FrequencySet) -> str | None:
        """No class size deters the adversary (``C = 0 < G``), or ``k`` exceeds the records."""
        return self._unreachable(base.n_records, "records")

    def _unreachable(self, available: int, what: str) -> str | None:
        if self.k is None:
            return (
                f"adversary_cost is {self.adversary_cost:g} and adversary_gain "
                f"{self.adversary_gain:g}, so attacking pays whatever the class size and no "
                "class can be released; give the adversary's cost per attack (> 0)"
            )
        if self.k > available:
            return (
                f"the adversary gains from attacking any class of fewer than k = {self.k} "
                f"records (adversary_gain / adversary_cost = "
                f"{self.adversary_gain / self.adversary_cost:g}), but there are only "
                f"{available} {what}; raise adversary_cost or lower adversary_gain"
            )
        return None

    def class_sizes(self, fs: FrequencySet) -> np.ndarray:
        """Per class, the size the adversary's success probability is ``1 /`` of: ``|c|``."""
        return fs.counts

    def evaluate(self, fs: FrequencySet) -> ModelResult:
        """Flag the classes with fewer than ``k`` records (population records for the
        journalist), where attacking a record would not cost the adversary more than it
        gains."""
        sizes = np.asarray(self.class_sizes(fs))
        violating = sizes < self._bound()
        kept = ~violating
        payoff = self.adversary_gain / np.maximum(sizes, 1).astype(float) - self.adversary_cost
        size_key = (
            "min_population_class_size" if self.attacker == "journalist" else "min_class_size"
        )
        details: dict[str, Any] = {
            "attacker_model": self.attacker,
            "k": self.k,
            "publisher_benefit": self.publisher_benefit,
            "publisher_loss": self.publisher_loss,
            "adversary_gain": self.adversary_gain,
            "adversary_cost": self.adversary_cost,
            size_key: int(sizes.min()) if sizes.size else 0,
            "max_adversary_payoff": float(payoff[kept].max()) if kept.any() else None,
            "violating_classes": int(np.count_nonzero(violating)),
            "violating_records": int(fs.counts[violating].sum()),
        }
        return self._result(violating, details, class_values=payoff)


class ProfitabilityJournalistNoAttack(JournalistPopulation, ProfitabilityProsecutorNoAttack):
    """No-attack profitability against a journalist (Wan et al. 2015; ARX
    ``ProfitabilityJournalistNoAttack``).

    As :class:`ProfitabilityProsecutorNoAttack` with the population class size: a released
    class must match at least ``k = floor(G / C) + 1`` records of the ``population`` table
    (k-map with the derived ``k``), so ``G / P - C < 0``; the sample class itself may be
    smaller. Monotonic with generalization and suppression (as k-map).

    Parameters
    ----------
    population : pandas.DataFrame
        The population table (the quasi-identifier columns; it contains the data's records).
        A job file names its CSV/Parquet file.
    publisher_benefit, publisher_loss, adversary_gain, adversary_cost : float
        As for :class:`ProfitabilityProsecutorNoAttack`.
    """

    spec_name: ClassVar[str] = "profitability_journalist_no_attack"
    spec_label: ClassVar[str] = "no-attack profitability (journalist)"
    attacker: ClassVar[str] = "journalist"

    population: pd.DataFrame

    _index: PopulationIndex | None = PrivateAttr(default=None)

    def minimal_class_size(self) -> int:
        """1: the population class, not the sample class, must be large (ARX: 0)."""
        return 1

    def minimal_population_class_size(self) -> tuple[FrequencySet, int] | None:
        """The population's leaf classes and ``k`` (after :meth:`prepare`)."""
        return None if self._index is None else self._index.threshold(self._bound())

    def unreachable(self, base: FrequencySet) -> str | None:
        """No class size deters the adversary, or ``k`` exceeds the population."""
        return self._unreachable(len(self.population), "population records")

    def prepare(self, base: FrequencySet) -> None:
        """Encode and aggregate the population with the data's QI codes."""
        self.prepare_population(base)

    def class_sizes(self, fs: FrequencySet) -> np.ndarray:
        """Per class, its population records ``P``."""
        pcount, _ = self.population_index().join(fs)
        return pcount
