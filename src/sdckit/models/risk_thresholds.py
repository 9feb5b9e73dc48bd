"""Global re-identification risk thresholds (ARX's risk-based privacy models).

All three are properties of the whole release, evaluated on the non-suppressed records, i.e. on
the frequency set given (after ``select``):

* average re-identification risk (prosecutor model): the mean over records of ``1/f_j``,
  which equals ``#classes / #records`` (El Emam, *Guide to the De-Identification of Personal
  Health Information*, 2013; ARX ``AverageReidentificationRisk``: ``1 / average class size
  <= threshold``);
* sample uniqueness: the share of records in classes of size 1 (ARX ``SampleUniqueness``:
  ``getFractionOfRecordsInClassesOfSize(1) <= threshold``);
* population uniqueness: the estimated share of the population that is unique in the
  population (ARX ``PopulationUniqueness``; see :class:`PopulationUniquenessThreshold`).

ARX enforces them by suppressing the smallest classes until the threshold holds, within the
suppression limit; so do sdckit's anonymizers, through
:meth:`~sdckit.models.base.PrivacyModel.holds_after_removing_smallest`. Smallest-first is the
cheapest order for both: suppressing a class of size ``c`` lowers ``#classes - t #records``
by ``1 - t c`` at a cost of ``c`` records, a gain per record that falls as ``c`` grows; and only
singletons lower the share of sample uniques. On its own, :meth:`evaluate` reports a failing
global model as ``satisfied=False`` with no class flagged. ARX flags the first two monotonic
with generalization and suppression; population uniqueness is neither (Zayatz's estimator:
monotonic with generalization).
"""

from __future__ import annotations

import math
from typing import Annotated, ClassVar, Literal

import numpy as np
from pydantic import Field, PrivateAttr, model_validator

from sdckit.core.frequency import FrequencySet
from sdckit.core.monotone import first_holding
from sdckit.core.spec import Integer, Number
from sdckit.models.base import ModelResult, PrivacyModel
from sdckit.models.population_estimators import population_unique_share

__all__ = ["AverageRiskThreshold", "PopulationUniquenessThreshold", "SampleUniquenessThreshold"]


#: ARX ``RiskBasedCriterion``: "Threshold out of range. Must be in [0, 1[".
Threshold = Annotated[Number, Field(ge=0, lt=1)]


class AverageRiskThreshold(PrivacyModel):
    """Average prosecutor re-identification risk ``#classes / #records <= threshold``.

    Monotonic with generalization and suppression (ARX ``AverageReidentificationRisk``).

    Parameters
    ----------
    threshold : float
        The highest average risk allowed (the number of classes per released record).
    """

    spec_name: ClassVar[str] = "average_risk"
    spec_label: ClassVar[str] = "average re-identification risk"
    monotonic: ClassVar[bool] = True
    monotonic_with_generalization: ClassVar[bool] = True
    is_global: ClassVar[bool] = True

    threshold: Threshold

    @property
    def name(self) -> str:
        return f"average risk <= {self.threshold:g}"

    @staticmethod
    def average_risk(fs: FrequencySet) -> float:
        """``#classes / #records`` (0 for an empty release)."""
        n = fs.n_records
        return fs.n_classes / n if n else 0.0

    def holds_after_removing_smallest(self, sizes: np.ndarray) -> np.ndarray:
        """``#classes <= t #records`` after suppressing the ``j`` smallest classes, all ``j``
        (an empty release has no risk)."""
        sizes = np.asarray(sizes, dtype=np.int64)
        j = np.arange(len(sizes) + 1)
        records = sizes.sum() - np.concatenate([[0], np.cumsum(sizes)])
        classes = len(sizes) - j
        with np.errstate(divide="ignore", invalid="ignore"):
            risk = np.where(records > 0, classes / np.maximum(records, 1), 0.0)
        return risk <= self.threshold  # the comparison evaluate() makes

    def evaluate(self, fs: FrequencySet) -> ModelResult:
        risk = self.average_risk(fs)
        ok = risk <= self.threshold
        details = {
            "threshold": self.threshold,
            "average_risk": risk,
            "n_classes": fs.n_classes,
            "n_records": fs.n_records,
        }
        return self._result(np.zeros(fs.n_classes, dtype=bool), details, satisfied=ok)


class SampleUniquenessThreshold(PrivacyModel):
    """Share of records in classes of size 1 ``<= threshold``.

    Monotonic with generalization and suppression (ARX ``SampleUniqueness``).

    Parameters
    ----------
    threshold : float
        The highest share of released records that are unique in the sample.
    """

    spec_name: ClassVar[str] = "sample_uniqueness"
    spec_label: ClassVar[str] = "sample uniqueness"
    monotonic: ClassVar[bool] = True
    monotonic_with_generalization: ClassVar[bool] = True
    is_global: ClassVar[bool] = True

    threshold: Threshold

    @property
    def name(self) -> str:
        return f"sample uniqueness <= {self.threshold:g}"

    @staticmethod
    def sample_uniqueness(fs: FrequencySet) -> float:
        """Share of the records that are alone in their class (0 for an empty release)."""
        n = fs.n_records
        return int(np.count_nonzero(fs.counts == 1)) / n if n else 0.0

    def holds_after_removing_smallest(self, sizes: np.ndarray) -> np.ndarray:
        """Share of sample uniques ``<= t`` after suppressing the ``j`` smallest classes."""
        sizes = np.asarray(sizes, dtype=np.int64)
        records = sizes.sum() - np.concatenate([[0], np.cumsum(sizes)])
        uniques = int(np.count_nonzero(sizes == 1)) - np.concatenate([[0], np.cumsum(sizes == 1)])
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(records > 0, uniques / np.maximum(records, 1), 0.0)
        return share <= self.threshold  # the comparison evaluate() makes

    def evaluate(self, fs: FrequencySet) -> ModelResult:
        share = self.sample_uniqueness(fs)
        ok = share <= self.threshold
        details = {
            "threshold": self.threshold,
            "sample_uniqueness": share,
            "unique_records": int(np.count_nonzero(fs.counts == 1)),
            "n_records": fs.n_records,
        }
        return self._result(np.zeros(fs.n_classes, dtype=bool), details, satisfied=ok)


class PopulationUniquenessThreshold(PrivacyModel):
    """Estimated share of population uniques ``<= threshold`` (ARX ``PopulationUniqueness``).

    The released records are a sample of a population of ``N`` records: ``population_size``,
    or ``round(n / sampling_fraction)`` for the ``n`` records of the data (ARX
    ``ARXPopulationModel``, fixed once from the whole data set). On a release of ``n'``
    records the sampling fraction is ``n' / N``, and the share of population uniques (the
    estimated number of population uniques divided by ``N``) is estimated from the released
    class sizes by ``estimator``: ``pitman``, ``zayatz``, ``snb`` or ``dankar`` (ARX's
    default: the decision rule of Dankar et al. 2012), with
    :mod:`sdckit.models.population_estimators`.
    As ARX's criterion evaluates Dankar's rule, an invalid Pitman estimate at ``f <= 0.1``
    does not fall back to Zayatz's.

    It holds (ARX ``PopulationUniqueness.isFulfilled``) when nothing is released, when the
    estimate is a number in ``(0, threshold]``, or when it is 0 because there are no sample
    uniques; an estimate that cannot be computed (NaN) or is 0 with sample uniques fails.

    Not monotonic with suppression; monotonic with generalization only with Zayatz's
    estimator (ARX's flags). ARX enforces it by a binary search over the number of smallest
    classes suppressed; see :meth:`holds_after_removing_smallest`.

    Parameters
    ----------
    threshold : float
        The highest estimated share of population uniques.
    estimator : str
        ``pitman``, ``zayatz``, ``snb`` or ``dankar`` (Dankar et al.'s decision rule).
    sampling_fraction : float, optional
        The data's share of the population (``N = round(n / sampling_fraction)``).
    population_size : int, optional
        Instead of ``sampling_fraction``: the population's size ``N``.
    """

    spec_name: ClassVar[str] = "population_uniqueness"
    spec_label: ClassVar[str] = "population uniqueness"
    monotonic: ClassVar[bool] = False
    is_global: ClassVar[bool] = True

    threshold: Threshold
    estimator: Literal["pitman", "zayatz", "snb", "dankar"] = "dankar"
    sampling_fraction: Annotated[Number, Field(gt=0, le=1)] | None = None
    population_size: Annotated[Integer, Field(ge=1)] | None = None

    _population: int | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _one_population(self) -> PopulationUniquenessThreshold:
        if (self.sampling_fraction is None) == (self.population_size is None):
            raise ValueError(
                "give the population as either 'sampling_fraction' (sample size / population "
                "size, in (0, 1]) or 'population_size' (records in the population), not both"
            )
        return self

    @property
    def monotonic_with_generalization(self) -> bool:  # type: ignore[override]
        """Only with Zayatz's estimator (ARX ``PopulationUniqueness``)."""
        return self.estimator == "zayatz"

    @property
    def name(self) -> str:
        return f"population uniqueness <= {self.threshold:g} ({self.estimator})"

    def size_conflict(self, n_records: int) -> str | None:
        """A population smaller than the data cannot contain it."""
        if self.population_size is not None and self.population_size < n_records:
            return (
                f"parameter 'population_size' ({self.population_size}) is smaller than the "
                f"number of records ({n_records}); the population contains the data, so "
                f"choose population_size >= {n_records}"
            )
        return None

    def prepare(self, base: FrequencySet) -> None:
        """Fix the population size from the records of the whole data set."""
        self._population = self.population_records(base.n_records)

    def population_records(self, n_records: int) -> int:
        """``N``: ``population_size``, or ``n_records / sampling_fraction`` rounded half up
        (ARX ``ARXPopulationModel(sampleSize, samplingFraction)``: ``Math.round``)."""
        if self.population_size is not None:
            return int(self.population_size)
        assert self.sampling_fraction is not None  # the validator sees to it
        return max(int(math.floor(n_records / self.sampling_fraction + 0.5)), n_records, 1)

    def estimate(self, sizes: np.ndarray, classes: np.ndarray | None = None) -> tuple[float, str]:
        """``(share, model)`` on released classes of ``sizes`` (``classes`` of each size, by
        default one each): the estimator's share of population uniques at sampling fraction
        ``n' / N``; ``(0.0, "none")`` for an empty release. ``N`` is the one :meth:`prepare`
        fixed (without it, from these records)."""
        sizes = np.asarray(sizes, dtype=np.int64)
        weights = np.ones(len(sizes), dtype=np.int64) if classes is None else classes
        released = int(np.dot(sizes, weights))
        if released == 0:
            return 0.0, "none"
        population = self._population or self.population_records(released)
        return population_unique_share(
            sizes,
            min(released / population, 1.0),
            self.estimator,
            classes=weights,
            dankar_fallback=False,
        )

    def _holds(self, share: float, sample_uniques: int) -> bool:
        """ARX ``PopulationUniqueness.isFulfilled`` on an estimate (empty releases aside)."""
        if share > 0.0:
            return share <= self.threshold
        return share == 0.0 and sample_uniques == 0  # NaN or 0 with sample uniques: fails

    def holds_after_removing_smallest(self, sizes: np.ndarray) -> np.ndarray:
        """Whether the model holds once the ``j`` smallest classes are suppressed, located by
        bisection over ``j`` as ARX's enforcement does (``RiskBasedCriterion.enforce``:
        ``suppressWhileNotFulfilledBinary``).

        Once the ``c1`` sample uniques are gone the estimate is 0 without sample uniques, so
        the model holds for every ``j >= c1``; for ``j < c1`` the released histogram is the
        ``c1 - j`` singletons and the larger classes as they are. The estimates need a
        Newton solve each (Pitman, SNB), too many for every ``j`` at every lattice node, so
        ``j = 0`` is evaluated and, when it fails, ``j*`` is bisected between a failing
        ``j`` and a holding one (``log2 c1`` estimates): the array is ``j >= j*``, where
        ``j*`` is a ``j`` the model holds at and ``j* - 1`` one it fails at. It equals the
        verdict at every ``j`` whenever that verdict changes once along ``j`` (the estimates
        fall as singletons are suppressed), which is what ARX's binary search assumes.
        """
        sizes = np.asarray(sizes, dtype=np.int64)
        holds = np.ones(len(sizes) + 1, dtype=bool)
        c1 = int(np.count_nonzero(sizes == 1))
        if c1 == 0:
            return holds
        distinct, counts = np.unique(sizes, return_counts=True)

        def holds_at(j: int) -> bool:
            left = counts.copy()
            left[0] -= j  # distinct[0] == 1: the singletons
            return self._holds(self.estimate(distinct, left)[0], c1 - j)

        if holds_at(0):
            return holds
        holds[: first_holding(holds_at, 0, c1)] = False
        return holds

    def evaluate(self, fs: FrequencySet) -> ModelResult:
        n = fs.n_records
        c1 = int(np.count_nonzero(fs.counts == 1))
        share, used = self.estimate(fs.counts) if n else (0.0, "none")
        ok = n == 0 or self._holds(share, c1)
        population = self._population or (self.population_records(n) if n else None)
        details = {
            "threshold": self.threshold,
            "estimator": self.estimator,
            "population_uniqueness": share,
            "estimated_by": used,
            "population_size": population,
            "sampling_fraction": n / population if population else None,
            "sample_uniques": c1,
            "n_records": n,
        }
        return self._result(np.zeros(fs.n_classes, dtype=bool), details, satisfied=ok)
