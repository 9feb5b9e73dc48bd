"""Profitability: the game-theoretic privacy models of Wan et al. (2015), as ARX defines them.

Z. Wan, Y. Vorobeychik, W. Xia, E. W. Clayton, M. Kantarcioglu, R. Ganta, R. Heatherly,
B. A. Malin, "A game theoretic framework for analyzing re-identification risk", PLoS ONE
10(3): e0120592, 2015. The publisher and an adversary play a Stackelberg game: the publisher
releases (generalized) records, earning a benefit per record that shrinks with the
information the generalization removes; the adversary then attacks a record when attacking
pays, and each successful attack costs the publisher a fine.

ARX (``ProfitabilityProsecutor``, ``ProfitabilityJournalist``, ``RiskModelCostBenefit``,
``ARXCostBenefitConfiguration``, ``MetricSDNMEntropyBasedInformationLoss``) evaluates the game
per equivalence class, with four amounts (ARX's defaults in brackets):

* ``publisher_benefit`` ``B`` (1200): what publishing one record earns the publisher;
* ``publisher_loss`` ``L`` (300): what one successful re-identification costs the publisher;
* ``adversary_gain`` ``G`` (300): what one successful re-identification earns the adversary;
* ``adversary_cost`` ``C`` (4): what one attack (trying to re-identify a record) costs.

For a class ``c`` released at generalization levels ``h``:

* information loss (Wan et al.'s entropy-based loss; ARX
  ``MetricSDNMEntropyBasedInformationLoss.getEntropyBasedInformationLoss``):
  ``IL(c) = log10(prod_i share_i(c)) / log10(prod_i D_i) + 1``, where ``D_i`` is the number
  of leaves of attribute ``i``'s hierarchy and ``share_i(c)`` the share of them under the
  class's value at level ``h_i`` (ARX ``DomainShareMaterialized``: hierarchy rows with that
  label / hierarchy rows). Equivalently ``IL = log(leaf combinations the record covers) /
  log(leaf combinations of the domain)``: 0 at the leaves, 1 at the root of every attribute.
  For a hierarchy of the interval builder whose range is known, ARX's interval shares
  (``DomainShareInterval``): ``D_i`` the width of the range, the share of an interval its
  width over ``D_i``, of an original value ``1 / D_i``.
* success probability of an attack on one of its records: ``p = 1 / |c|`` (prosecutor: the
  adversary knows the person is in the data) or ``p = 1 / |population class of c|``
  (journalist: the released data is a sample of a population table; ARX
  ``ProfitabilityJournalist`` with a research subset, falling back to ``1 / |c|`` when the
  population class is empty);
* the adversary's expected payoff ``G p - C``; the adversary attacks when it is ``> 0``;
* the publisher's expected payout per record (ARX
  ``RiskModelCostBenefit.getExpectedPublisherPayout``):
  ``payout(c) = B (1 - IL(c)) - (L p if G p - C > 0 else 0)``.

The model holds for a class when ``payout(c) > 0`` (ARX ``isAnonymous``: "we keep the set of
records if the payoff is > 0"); the other classes are suppressed (within the suppression
limit). A suppressed record earns nothing and risks nothing. The models need no particular
utility metric in ARX (they compute the loss themselves); ARX pairs them with its publisher
payout metric (``MetricSDNMPublisherPayout``), which maximizes the summed payout of the
released records -- the model's details report that sum for the release.

Neither model is monotonic (ARX ``super(false, false)``): generalizing lowers the adversary's
success probability only a little but can lower the publisher's benefit a lot, and the root
of every attribute (``IL = 1``) is never profitable.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Annotated, Any, ClassVar

import numpy as np
import pandas as pd
from pydantic import Field, PrivateAttr

from sdckit.core.frequency import FrequencySet
from sdckit.core.spec import Number
from sdckit.errors import ConfigError
from sdckit.models.base import ModelResult, PrivacyModel
from sdckit.models.presence import PopulationIndex

__all__ = [
    "ProfitabilityJournalist",
    "ProfitabilityProsecutor",
    "information_loss",
    "JournalistPopulation",
    "population_success",
    "publisher_payout",
]

Amount = Annotated[Number, Field(ge=0)]


def information_loss(fs: FrequencySet) -> np.ndarray:
    """Per class of ``fs``, Wan et al.'s entropy-based information loss of one of its records
    (ARX ``MetricSDNMEntropyBasedInformationLoss``; see the module docstring).

    ``IL = log10(prod_i share_i) / log10(prod_i D_i) + 1`` with ``share_i`` the leaves under
    the class's value of attribute ``i`` at its level over the ``D_i`` leaves of its hierarchy
    (a quasi-identifier without hierarchy: its ``D_i`` distinct values, share ``1 / D_i``),
    or, for a hierarchy of the interval builder with a known range, ARX's interval shares
    (``DomainShareInterval``, :class:`~sdckit.core.hierarchy.IntervalShares`): ``D_i`` the
    width of the range and ``share_i`` the interval's width over it (``1 / D_i`` for a value).
    Computed in ARX's order of floating-point operations (the product of the shares, then one
    logarithm) and clipped to ``[0, 1]`` as ARX does; 0 when every domain has one value (no
    information to lose).
    """
    product = np.ones(fs.n_classes)
    max_product = 1.0
    for i, (q, level) in enumerate(zip(fs.quasi_identifiers, fs.levels, strict=True)):
        intervals = None if q.hierarchy is None else q.hierarchy.interval_shares
        if intervals is not None:  # ARX DomainShareInterval: widths over the range's
            size, share = intervals.domain_size, intervals.shares[level]
        else:
            size = float(q.cardinality(0))
            if q.hierarchy is not None:
                under = q.hierarchy.leaves_under(level).astype(float)
            else:
                under = np.ones(q.cardinality(level))
            share = under / size
        product *= share[fs.keys[:, i]]
        max_product *= size
    max_il = math.log10(max_product) if max_product > 0 else 0.0
    if max_il <= 0.0:
        return np.zeros(fs.n_classes)
    with np.errstate(divide="ignore"):
        loss = np.log10(product) / max_il + 1.0
    return np.clip(loss, 0.0, 1.0)


def publisher_payout(
    loss: np.ndarray,
    success: np.ndarray,
    publisher_benefit: float,
    publisher_loss: float,
    adversary_gain: float,
    adversary_cost: float,
) -> tuple[np.ndarray, np.ndarray]:
    """``(payout, attacked)`` per class: the publisher's expected payout per record
    ``B (1 - IL) - (L p if G p - C > 0 else 0)`` and whether the adversary attacks
    (``G p - C > 0``), for information losses ``loss`` and success probabilities ``success``
    (Wan et al. 2015; ARX ``RiskModelCostBenefit``: ``getExpectedAdversaryPayout``,
    ``getExpectedPublisherPayout``)."""
    loss = np.asarray(loss, dtype=float)
    success = np.asarray(success, dtype=float)
    attacked = adversary_gain * success - adversary_cost > 0
    payout = publisher_benefit * (1.0 - loss) - np.where(attacked, publisher_loss * success, 0.0)
    return payout, attacked


def population_success(index: PopulationIndex, fs: FrequencySet) -> np.ndarray:
    """Per class of ``fs``, a journalist's success probability ``1 / P``, ``P`` the records
    of the population (``index``) in the class; ``1 / |c|`` where the population has none
    (ARX ``ProfitabilityJournalist``'s fallback)."""
    pcount, _ = index.join(fs)
    size = np.where(pcount > 0, pcount, np.maximum(fs.counts, 1))
    return 1.0 / size.astype(float)


class ProfitabilityProsecutor(PrivacyModel):
    """Profitability against a prosecutor (Wan et al. 2015; ARX ``ProfitabilityProsecutor``).

    Each released class must have a positive expected publisher payout per record,
    ``B (1 - IL) - (L / |c| if G / |c| - C > 0 else 0) > 0`` (module docstring). The classes
    are judged at the generalization levels of the frequency set, so the model needs a
    full-domain generalization (algorithm ``optimal`` or ``datafly``) or :func:`sdckit.models.check`
    with ``levels``.

    Not monotonic with suppression nor with generalization (ARX). The variant that releases
    only classes no attack pays on: :mod:`sdckit.models.profitability_no_attack`.

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
    """

    spec_name: ClassVar[str] = "profitability_prosecutor"
    spec_label: ClassVar[str] = "profitability (prosecutor)"
    monotonic: ClassVar[bool] = False
    monotonic_with_generalization: ClassVar[bool] = False
    attacker: ClassVar[str] = "prosecutor"

    publisher_benefit: Amount = 1200.0
    publisher_loss: Amount = 300.0
    adversary_gain: Amount = 300.0
    adversary_cost: Amount = 4.0

    _n_records: int | None = PrivateAttr(default=None)

    @property
    def name(self) -> str:
        return (
            f"profitability ({self.attacker}; benefit {self.publisher_benefit:g}, loss "
            f"{self.publisher_loss:g}, gain {self.adversary_gain:g}, cost "
            f"{self.adversary_cost:g})"
        )

    def unreachable(self, base: FrequencySet) -> str | None:
        """With ``publisher_benefit = 0`` no record earns anything, so no class is profitable."""
        del base
        if self.publisher_benefit <= 0:
            return (
                "publisher_benefit is 0, so no released record earns the publisher anything "
                "and no class has a positive payout; give the benefit per record (> 0)"
            )
        return None

    def prepare(self, base: FrequencySet) -> None:
        """Remember the number of records (the release's theoretical maximum payout is
        ``n B``, ARX's "theoretical maximum")."""
        self._n_records = base.n_records

    def success_probability(self, fs: FrequencySet) -> np.ndarray:
        """Per class, the adversary's success probability ``1 / |c|``."""
        return 1.0 / np.maximum(fs.counts, 1).astype(float)

    def payouts(self, fs: FrequencySet) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(payout, attacked, loss)`` per class of ``fs``: the publisher's expected payout
        per record, whether the adversary attacks it, and its information loss."""
        loss = information_loss(fs)
        payout, attacked = publisher_payout(
            loss,
            self.success_probability(fs),
            self.publisher_benefit,
            self.publisher_loss,
            self.adversary_gain,
            self.adversary_cost,
        )
        return payout, attacked, loss

    def evaluate(self, fs: FrequencySet) -> ModelResult:
        """Flag the classes whose expected publisher payout per record is not positive."""
        payout, attacked, loss = self.payouts(fs)
        violating = ~(payout > 0)
        kept = ~violating
        counts = fs.counts.astype(float)
        n_all = self._n_records if self._n_records is not None else fs.n_records
        success = self.success_probability(fs)
        details: dict[str, Any] = {
            "attacker_model": self.attacker,
            "publisher_benefit": self.publisher_benefit,
            "publisher_loss": self.publisher_loss,
            "adversary_gain": self.adversary_gain,
            "adversary_cost": self.adversary_cost,
            "publisher_payout": float((counts * payout)[kept].sum()),
            "maximal_payout": float(n_all * self.publisher_benefit),
            "expected_publisher_loss": float(
                (counts * np.where(attacked, self.publisher_loss * success, 0.0))[kept].sum()
            ),
            "attacked_classes": int(np.count_nonzero(attacked & kept)),
            "attacked_records": int(fs.counts[attacked & kept].sum()),
            "min_class_payout": float(payout[kept].min()) if kept.any() else None,
            "mean_information_loss": float((counts * loss)[kept].sum() / counts[kept].sum())
            if kept.any()
            else None,
            "violating_classes": int(np.count_nonzero(violating)),
            "violating_records": int(fs.counts[violating].sum()),
        }
        return self._result(violating, details, class_values=payout)


class JournalistPopulation:
    """The population table of a journalist variant (mixed into the pydantic models, which
    declare ``population`` and ``_index``): indexed with the data's QI codes by
    :meth:`prepare_population`, checked to contain the data, and described by its size."""

    if TYPE_CHECKING:  # declared by the models (annotations here would become fields)
        population: pd.DataFrame
        name: str
        _index: PopulationIndex | None

    def prepare_population(self, base: FrequencySet) -> None:
        """Encode and aggregate the population with the data's QI codes."""
        self._index = PopulationIndex(self.population, base, self.name)
        self._index.check_contains(base)

    def population_index(self) -> PopulationIndex:
        """The index :meth:`prepare_population` built (a ConfigError before it ran)."""
        if self._index is None:
            raise ConfigError(
                f"{self.name}: call prepare(base) with the frequency set of all records "
                "before evaluate() (sdckit.models.check does this)"
            )
        return self._index

    def success_probability(self, fs: FrequencySet) -> np.ndarray:
        """Per class, ``1 / population records in the class`` (``1 / |c|`` when none)."""
        return population_success(self.population_index(), fs)

    def describe(self) -> dict:
        """The parameters, with the population's size instead of the table."""
        out = {k: v for k, v in super().describe().items() if k != "population"}  # type: ignore[misc]
        out["population_records"] = len(self.population)
        return out


class ProfitabilityJournalist(JournalistPopulation, ProfitabilityProsecutor):
    """Profitability against a journalist (Wan et al. 2015; ARX ``ProfitabilityJournalist``).

    As :class:`ProfitabilityProsecutor`, with the success probability ``1 / P`` where ``P``
    is the number of records of the ``population`` table in the class (the released data is
    a sample of it; ARX's research subset): a journalist does not know whether the person is
    in the sample. ``1 / |c|`` where the population has no record of the class (ARX's
    fallback; it cannot happen when the population contains the data, which is checked).

    Parameters
    ----------
    population : pandas.DataFrame
        The population table (the quasi-identifier columns; it contains the data's records).
        A job file names its CSV/Parquet file.
    publisher_benefit, publisher_loss, adversary_gain, adversary_cost : float
        As for :class:`ProfitabilityProsecutor`.
    """

    spec_name: ClassVar[str] = "profitability_journalist"
    spec_label: ClassVar[str] = "profitability (journalist)"
    attacker: ClassVar[str] = "journalist"

    population: pd.DataFrame

    _index: PopulationIndex | None = PrivateAttr(default=None)

    def prepare(self, base: FrequencySet) -> None:
        """Encode and aggregate the population with the data's QI codes."""
        super().prepare(base)
        self.prepare_population(base)
