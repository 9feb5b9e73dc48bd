"""Global re-identification risk thresholds (ARX's risk-based privacy models).

Both are properties of the whole release, evaluated on the non-suppressed records, i.e. on
the frequency set given (after ``select``):

* average re-identification risk (prosecutor model): the mean over records of ``1/f_j``,
  which equals ``#classes / #records`` (El Emam, *Guide to the De-Identification of Personal
  Health Information*, 2013; ARX ``AverageReidentificationRisk``: ``1 / average class size
  <= threshold``);
* sample uniqueness: the share of records in classes of size 1 (ARX ``SampleUniqueness``:
  ``getFractionOfRecordsInClassesOfSize(1) <= threshold``).

ARX enforces them by suppressing the smallest classes until the threshold holds, within the
suppression limit; so do sdckit's anonymizers, through
:meth:`~sdckit.models.base.PrivacyModel.holds_after_removing_smallest`. Smallest-first is the
cheapest order for both: suppressing a class of size ``c`` lowers ``#classes - t #records``
by ``1 - t c`` at a cost of ``c`` records, a gain per record that falls as ``c`` grows; and only
singletons lower the share of sample uniques. On its own, :meth:`evaluate` reports a failing
global model as ``satisfied=False`` with no class flagged. ARX flags both monotonic with
generalization and suppression.
"""

from __future__ import annotations

from typing import Annotated, ClassVar

import numpy as np
from pydantic import Field

from sdckit.core.frequency import FrequencySet
from sdckit.core.spec import Number
from sdckit.models.base import ModelResult, PrivacyModel

__all__ = ["AverageRiskThreshold", "SampleUniquenessThreshold"]


#: ARX ``RiskBasedCriterion``: "Threshold out of range. Must be in [0, 1[".
Threshold = Annotated[Number, Field(ge=0, lt=1)]


class AverageRiskThreshold(PrivacyModel):
    """Average prosecutor re-identification risk ``#classes / #records <= threshold``.

    Monotonic with generalization and suppression (ARX ``AverageReidentificationRisk``).
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
