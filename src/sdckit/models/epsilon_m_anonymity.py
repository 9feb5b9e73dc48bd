"""(epsilon,m)-anonymity: proximity privacy for numeric sensitive values (Li, Tao & Xiao 2008).

J. Li, Y. Tao, X. Xiao, "Preservation of proximity privacy in publishing numerical sensitive
data", ACM SIGMOD 2008. For a record ``t`` of a group ``G`` with sensitive value ``x``,
its epsilon-neighbourhood is ``[x - eps, x + eps]`` (absolute) or ``[x (1 - eps), x (1 + eps)]``
(relative); an adversary who learns ``t``'s group infers that ``t``'s value lies in the
neighbourhood with probability
``P(t) = |{t' in G : t'.S in neighbourhood(t)}| / |G|``. ``G`` is (epsilon,m)-anonymous when
``P(t) <= 1/m`` for every ``t`` in ``G``, i.e. ``m * c(x) <= |G|`` for every value ``x`` of
``G``, with ``c(x)`` the records of ``G`` in ``x``'s neighbourhood (``x``'s own included).

The neighbourhood bounds are ``x - eps`` and ``x + eps`` (absolute) or ``x - eps |x|`` and
``x + eps |x|`` (relative: the paper's ``[x(1-eps), x(1+eps)]``, written for negative values
too), computed in floating point; a value equal to a bound is inside.
"""

from __future__ import annotations

from typing import Annotated, ClassVar

import numpy as np
from pydantic import Field, PrivateAttr, model_validator

from sdckit.core.frequency import FrequencySet
from sdckit.core.spec import Boolean, ColumnName, Integer, Number
from sdckit.models._histograms import row_ids
from sdckit.models._numeric import NumericHistogram
from sdckit.models.base import ModelResult, PrivacyModel

__all__ = ["EpsilonMAnonymity"]


class EpsilonMAnonymity(PrivacyModel):
    """(epsilon,m)-anonymity of the numeric ``attribute``.

    Not monotonic, with suppression or with generalization (Li et al. 2008 design a
    dedicated partitioning algorithm for this reason): two classes that satisfy it can merge
    into one that does not. With ``eps = 1, m = 2``: ``{0, 2}`` (each value alone in its
    neighbourhood: ``2 * 1 <= 2``) and ``{1, 100}`` merge into ``{0, 1, 2, 100}``, where the
    neighbourhood ``[0, 2]`` of 1 holds 3 records and ``2 * 3 > 4``. So no lattice pruning
    relies on it. ``minimal_class_size`` is ``m``: ``c(x) >= 1`` (the record itself), so a
    class needs ``|G| >= m``; classes only shrink towards finer transformations, which makes
    this a valid bound for the search.

    Parameters
    ----------
    attribute : str
        The numeric sensitive attribute.
    epsilon : float
        The neighbourhood radius (>= 0): absolute, or a fraction of the value (at most 1)
        when ``relative``.
    m : int
        At most ``1/m`` of a class may lie in any record's neighbourhood (>= 1).
    relative : bool
        Relative neighbourhoods ``[x(1 - eps), x(1 + eps)]`` (default ``False``: absolute).

    Examples
    --------
    >>> EpsilonMAnonymity("salary", 1000, 2).to_entry()
    {'epsilon_m_anonymity': {'attribute': 'salary', 'epsilon': 1000.0, 'm': 2, 'relative': False}}
    """

    spec_name: ClassVar[str] = "epsilon_m_anonymity"
    spec_label: ClassVar[str] = "(epsilon,m)-anonymity"
    monotonic: ClassVar[bool] = False
    monotonic_with_generalization: ClassVar[bool] = False

    attribute: ColumnName
    epsilon: Annotated[Number, Field(ge=0)]
    m: Annotated[Integer, Field(ge=1)]
    relative: Boolean = False

    _numeric: NumericHistogram | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _relative_epsilon(self) -> EpsilonMAnonymity:
        if self.relative and self.epsilon > 1:
            raise ValueError(
                f"a relative 'epsilon' is a fraction of each value and must be at most 1, got "
                f"{self.epsilon:g}; write e.g. 0.1 for 10%, or set relative: false"
            )
        return self

    @property
    def name(self) -> str:
        kind = "relative" if self.relative else "absolute"
        return f"({self.epsilon:g},{self.m})-anonymity ({kind}, {self.attribute})"

    @property
    def sensitive_attributes(self) -> tuple[str, ...]:
        return (self.attribute,)

    def minimal_class_size(self) -> int:
        return self.m

    def _view(self) -> NumericHistogram:
        if self._numeric is None:
            self._numeric = NumericHistogram(self.attribute, self.name)
        return self._numeric

    def _bounds(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The neighbourhood ``[lo, hi]`` of each value ``x``."""
        radius = self.epsilon * np.abs(x) if self.relative else np.full(len(x), self.epsilon)
        return x - radius, x + radius

    def neighbourhood_counts(self, fs: FrequencySet) -> tuple[np.ndarray, np.ndarray]:
        """Per class the largest ``c(x)`` over its values, and the class size.

        With the histogram's columns in ascending value order, the records of class ``r`` in
        ``[lo, hi]`` are a contiguous run of row ``r``'s entries: both ends are found by one
        binary search over the combined key ``r * columns + column`` (ascending over the whole
        CSR), and ``c(x)`` is a difference of prefix sums of the counts.
        """
        view = self._view()
        h = view.histogram(fs)
        n = h.shape[0]
        sizes = np.asarray(fs.counts, dtype=np.int64)
        worst = np.zeros(n, dtype=np.int64)
        if h.nnz == 0:
            return worst, sizes
        values = view.sorted_values
        rows = row_ids(h.indptr)
        lo, hi = self._bounds(values[h.indices])
        first = np.searchsorted(values, lo, side="left")  # first column with value >= lo
        stop = np.searchsorted(values, hi, side="right")  # first column with value > hi
        width = np.int64(h.shape[1])
        key = rows * width + h.indices.astype(np.int64)
        start_at = np.searchsorted(key, rows * width + first, side="left")
        stop_at = np.searchsorted(key, rows * width + stop, side="left")
        cum = np.concatenate(([0], np.cumsum(h.data.astype(np.int64))))
        c = cum[stop_at] - cum[start_at]
        nonempty = np.diff(h.indptr) > 0
        worst[nonempty] = np.maximum.reduceat(c, h.indptr[:-1][nonempty])
        return worst, sizes

    def prepare(self, base: FrequencySet) -> None:
        """Parse the attribute's values as numbers (a DataError names the first that is not)."""
        self._view().histogram(base)

    def _spread_values(self, values: np.ndarray) -> int:
        """The most values of ``values`` (ascending, distinct) no two of which are in one
        neighbourhood chain ``y > hi(x)``, counted greedily up to ``m``."""
        count, i = 0, 0
        while i < len(values) and count < self.m:
            count += 1
            _, hi = self._bounds(values[i : i + 1])
            i = int(np.searchsorted(values, hi[0], side="right"))
        return count

    def unreachable(self, base: FrequencySet) -> str | None:
        """Fewer than ``m`` values of the whole data lie beyond each other's neighbourhoods.

        A satisfying class ``G`` with smallest value ``x_1`` has at most ``|G|/m`` records in
        ``[x_1, hi(x_1)]``; its smallest value ``x_2 > hi(x_1)`` again at most ``|G|/m`` in
        ``[x_2, hi(x_2)]``, and so on: these runs cover ``G``, so there are at least ``m`` of
        them, i.e. ``m`` values each above the previous one's ``hi``. ``hi`` is
        non-decreasing (``x + eps``, or ``x + eps |x|`` with ``eps <= 1``), so the greedy
        chain over all distinct values of the data is the longest such chain of any subset;
        if it is shorter than ``m``, no class of any release satisfies the model.
        """
        if base.n_classes == 0:
            return None
        view = self._view()
        view.histogram(base)
        values = np.unique(view.sorted_values)
        found = self._spread_values(values)
        if found >= self.m:
            return None
        return (
            f"the values of {self.attribute!r} in the whole data fall into only {found} "
            f"neighbourhood(s) of radius {self.epsilon:g}"
            f"{' (relative)' if self.relative else ''}, so no class can keep every "
            f"neighbourhood below 1/{self.m} of its records; lower m or epsilon"
        )

    def evaluate(self, fs: FrequencySet) -> ModelResult:
        """Flag the classes with a value ``x`` where ``m * c(x) > |G|``.

        The result's ``class_values`` are the largest ``c(x) / |G|`` (the proximity breach
        probability of the class).
        """
        worst, sizes = self.neighbourhood_counts(fs)
        violating = self.m * worst > sizes
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(sizes > 0, worst / np.maximum(sizes, 1), 0.0)
        details = {
            "attribute": self.attribute,
            "epsilon": self.epsilon,
            "m": self.m,
            "relative": self.relative,
            "max_neighbourhood_share": float(share.max()) if share.size else 0.0,
            "violating_classes": int(np.count_nonzero(violating)),
            "violating_records": int(fs.counts[violating].sum()),
        }
        return self._result(violating, details, class_values=share)
