"""t-closeness with the Earth Mover's Distance (Li, Li & Venkatasubramanian 2007).

N. Li, T. Li, S. Venkatasubramanian, "t-closeness: privacy beyond k-anonymity and
l-diversity", ICDE 2007, 106-115. A class is t-close when the EMD between the distribution of
the sensitive attribute in the class (``p``) and in the whole table (``q``) is at most ``t``.
The whole-table distribution is taken once, in :meth:`TCloseness.prepare`, over ALL records
(before suppression), as ARX does (``DataManager.getDistribution``). Ground distances:

* ``equal``: every two values are at distance 1: ``D = 1/2 sum_i |p_i - q_i|`` (ARX
  ``EqualDistanceTCloseness``, which sums over the class's values only:
  ``D = 1/2 (1 + sum_{i in class} (|p_i - q_i| - q_i))``).
* ``ordered``: values at ranks ``i, j`` of the attribute's order are ``|i - j| / (m - 1)``
  apart, ``m`` = number of distinct values in the whole data:
  ``D = 1/(m-1) sum_i |sum_{j<=i} (p_j - q_j)|`` (ARX ``OrderedDistanceTCloseness``). The order
  is the frequency set's value order (numeric where all values are numbers, else a declared
  order or text order).
* ``hierarchical``: two leaves are ``height(lowest common ancestor) / H`` apart in the value
  hierarchy of height ``H`` (number of levels - 1). With ``extra`` of a leaf ``p_i - q_i``
  and of an inner node the sum over its children, each inner node ``N`` costs
  ``height(N)/H * min(pos_extra(N), neg_extra(N))`` and ``D`` is the sum of the costs (Li et
  al., Section 4.3; ARX ``HierarchicalDistanceTCloseness``).

All distances are computed for every class at once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, ClassVar, Literal

if TYPE_CHECKING:  # scipy is imported where it is used: a k-anonymity run never needs it
    from scipy import sparse

import numpy as np
from pydantic import Field, PrivateAttr, model_validator

from sdckit.core.frequency import FrequencySet
from sdckit.core.hierarchy import Hierarchy
from sdckit.core.spec import ColumnName, Number
from sdckit.errors import ConfigError, HierarchyError
from sdckit.models._histograms import histogram, row_ids, row_sums
from sdckit.models.base import ModelResult, PrivacyModel

__all__ = ["TCloseness"]

# "D <= t" is decided with this absolute slack so that a distance equal to t in exact
# arithmetic (e.g. Li et al.'s 1/6) does not fail by a rounding error.
_TOLERANCE = 1e-12
# The bound on finer violations subtracts this (>> _TOLERANCE + rounding of D) from D - t so
# that rounding can only make the bound smaller (safe), never larger.
_BOUND_SLACK = 1e-9
_CHUNK_CELLS = 1 << 21  # dense block size (classes x nodes) for the hierarchical distance


class TCloseness(PrivacyModel):
    """t-closeness of one sensitive ``attribute`` with EMD ``distance``.

    ``hierarchy`` (a :class:`~sdckit.core.hierarchy.Hierarchy` over the sensitive values) is
    required for ``distance="hierarchical"``.

    Monotonicity (ARX ``TCloseness``): monotonic with generalization (Li et al. 2007 show the
    EMD of a merged class is at most the larger of the parts'), not with suppression (merging
    a t-close class with a suppressed one can give a class that is not t-close).

    Parameters
    ----------
    attribute : str
        The sensitive attribute.
    t : float
        The largest distance allowed, in [0, 1].
    distance : {"equal", "ordered", "hierarchical"}
        The ground distance of the EMD (default ``equal``).
    hierarchy : Hierarchy, optional
        The hierarchy over the sensitive values; only (and necessarily) for
        ``distance="hierarchical"``.

    Examples
    --------
    >>> TCloseness("salary", 0.2, "ordered").describe()
    {'model': 't_closeness', 'attribute': 'salary', 't': 0.2, 'distance': 'ordered'}
    """

    spec_name: ClassVar[str] = "t_closeness"
    spec_label: ClassVar[str] = "t-closeness"
    monotonic: ClassVar[bool] = False
    monotonic_with_generalization: ClassVar[bool] = True
    bounds_finer_violations: ClassVar[bool] = True

    attribute: ColumnName
    t: Annotated[Number, Field(ge=0, le=1)]
    distance: Literal["equal", "ordered", "hierarchical"] = "equal"
    hierarchy: Hierarchy | None = None

    # set by prepare(): the overall distribution and the sensitive values' labels
    _overall: np.ndarray | None = PrivateAttr(default=None)
    _values: np.ndarray | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _distance_parameters(self) -> TCloseness:
        if self.distance == "hierarchical":
            if self.hierarchy is None:
                raise ValueError(
                    "distance 'hierarchical' needs parameter 'hierarchy' (a Hierarchy over the "
                    "sensitive values, e.g. read_hierarchy('disease.csv'))"
                )
            if self.hierarchy.height < 2:
                raise ValueError(
                    "the hierarchy for the hierarchical distance needs at least two levels "
                    "(the values and one generalization)"
                )
        elif self.hierarchy is not None:
            raise ValueError(
                "parameter 'hierarchy' applies only to distance 'hierarchical'; remove it"
            )
        return self

    @property
    def name(self) -> str:
        return f"{self.t:g}-closeness ({self.distance} distance, {self.attribute})"

    @property
    def sensitive_attributes(self) -> tuple[str, ...]:
        return (self.attribute,)

    # -- preparation ---------------------------------------------------------------------
    def prepare(self, base: FrequencySet) -> None:
        """Store the distribution of the attribute over all records of ``base``."""
        from scipy import sparse

        h = histogram(base, self.attribute, self.name)
        counts = np.asarray(h.sum(axis=0)).ravel().astype(np.float64)
        total = counts.sum()
        if total <= 0:
            raise ConfigError(f"{self.name}: the data has no records; nothing to compare")
        self._overall = counts / total
        self._overall_counts = np.rint(counts).astype(np.int64)  # exact sums for the bound
        self._total = int(self._overall_counts.sum())
        self._values = np.asarray(base.sensitive_values.get(self.attribute, []), dtype=object)
        present = np.flatnonzero(counts > 0)
        self._m = len(present)
        if self.distance == "ordered":
            # rank (0..m-1) of every column among the values present in the data
            self._rank = np.full(len(counts), -1, dtype=np.int64)
            self._rank[present] = np.arange(len(present))
            cum = np.cumsum(self._overall[present])
            cum[-1] = 1.0
            self._cum_q = cum  # Q(i), i = 0..m-1
            self._prefix_cum_q = np.concatenate([[0.0], np.cumsum(cum)])  # sum_{j<i} Q(j)
        elif self.distance == "hierarchical":
            self._prepare_tree()
        # the distance of a class holding one value only (a point mass), per value: D is
        # convex in p, so no class over a set of values is farther than its farthest value
        point = sparse.csr_matrix(
            (np.ones(len(present)), (np.arange(len(present)), present)),
            shape=(len(present), len(counts)),
        )
        self._point_distance = np.zeros(len(counts))
        if len(present):
            self._point_distance[present] = self._distances(point)
        self._max_distance = float(self._point_distance.max()) if len(present) else 0.0

    def _prepare_tree(self) -> None:
        """Per level, map each node to its parent (compact node ids, present values only)."""
        hier = self.hierarchy
        assert hier is not None and self._values is not None
        try:
            leaf = hier.leaf_index(self._values, column=self.attribute)
        except HierarchyError as exc:
            raise HierarchyError(f"{self.name}: {exc}") from None
        height = hier.height - 1
        steps = []
        child = np.arange(len(self._values), dtype=np.int64)  # level 0: one node per value
        n_child = len(self._values)
        for level in range(1, height + 1):
            codes = hier.levels[level][leaf]
            uniq, node = np.unique(codes, return_inverse=True)
            parent = np.empty(n_child, dtype=np.int64)
            parent[child] = node
            steps.append((parent, len(uniq), level / height))
            child, n_child = node.astype(np.int64), len(uniq)
        self._tree_steps = steps

    @property
    def _q(self) -> np.ndarray:
        """The overall distribution (set by :meth:`prepare`)."""
        if self._overall is None:
            raise ConfigError(f"{self.name}: call prepare(base) before evaluate()")
        return self._overall

    def _check_prepared(self, fs: FrequencySet) -> sparse.csr_matrix:
        """The histogram of ``fs``, after checking that :meth:`prepare` saw the same coding."""
        if self._overall is None:
            raise ConfigError(
                f"{self.name}: call prepare(base) with the frequency set of all records before "
                "evaluate() (sdckit.models.check and the anonymizers do this)"
            )
        h = histogram(fs, self.attribute, self.name)
        values = fs.sensitive_values.get(self.attribute)
        if h.shape[1] != len(self._overall) or (
            values is not None
            and self._values is not None
            and values is not self._values
            and not np.array_equal(np.asarray(values, dtype=object), self._values)
        ):
            raise ConfigError(
                f"{self.name}: the frequency set codes {self.attribute!r} differently from the "
                "one given to prepare(); derive it from that frequency set (rollup/select)"
            )
        return h

    # -- distances -----------------------------------------------------------------------
    def distances(self, fs: FrequencySet) -> np.ndarray:
        """EMD between each class's distribution and the overall one (one value per class)."""
        h = self._check_prepared(fs)
        if fs.n_classes == 0:
            return np.zeros(0)
        return self._distances(h)

    def _distances(self, h: sparse.csr_matrix) -> np.ndarray:
        if self.distance == "equal":
            return self._equal(h)
        if self.distance == "ordered":
            return self._ordered(h)
        return self._hierarchical(h)

    def _class_probabilities(self, h: sparse.csr_matrix) -> tuple[np.ndarray, np.ndarray]:
        """Row of every stored entry and its share ``p`` of the class."""
        rows = row_ids(h.indptr)
        totals = row_sums(h.data.astype(np.int64), h.indptr)
        return rows, h.data / totals[rows]

    def _equal(self, h: sparse.csr_matrix) -> np.ndarray:
        """ARX's sparse form: ``1/2 (1 + sum_{i in class} (|p_i - q_i| - q_i))``."""
        _, p = self._class_probabilities(h)
        q = self._q[h.indices]
        d = 0.5 * (1.0 + row_sums(np.abs(p - q) - q, h.indptr))
        return np.clip(d, 0.0, 1.0)

    def _ordered(self, h: sparse.csr_matrix) -> np.ndarray:
        """``1/(m-1) sum_i |P(i) - Q(i)|`` with cumulative distributions ``P``, ``Q``.

        ``P`` is a step function that changes only at the class's values, so the sum is taken
        segment by segment: on ``[a, b)`` with ``P = c`` and ``Q`` non-decreasing,
        ``sum |c - Q(i)|`` splits at the first ``i`` with ``Q(i) >= c`` (binary search) and
        each half is a difference of prefix sums of ``Q``. Exact, and ``O(nnz log m)``.
        """
        m = self._m
        if m <= 1:
            return np.zeros(h.shape[0])
        rows = row_ids(h.indptr)
        counts = h.data.astype(np.int64)
        totals = row_sums(counts, h.indptr)
        starts = h.indptr[:-1]
        cum_counts = np.cumsum(counts)
        before_row = np.where(starts > 0, cum_counts[np.maximum(starts - 1, 0)], 0)
        level = (cum_counts - before_row[rows]) / totals[rows]  # P at and after this value
        a = self._rank[h.indices]  # CSR indices are sorted, so ranks ascend within a row
        nxt = np.empty_like(a)
        nxt[:-1] = a[1:]
        last = np.zeros(len(a), dtype=bool)
        ends = h.indptr[1:] - 1
        last[ends[ends >= starts]] = True
        b = np.where(last, m, nxt)
        cq, sq = self._cum_q, self._prefix_cum_q
        s = np.clip(np.searchsorted(cq, level, side="left"), a, b)
        below = level * (s - a) - (sq[s] - sq[a])
        above = (sq[b] - sq[s]) - level * (b - s)
        seg = row_sums(below + above, h.indptr)
        first = np.zeros(h.shape[0], dtype=np.float64)  # segment [0, x_1) where P = 0
        nonempty = np.diff(h.indptr) > 0
        first[nonempty] = sq[a[starts[nonempty]]]
        return np.maximum(first + seg, 0.0) / (m - 1)

    def _hierarchical(self, h: sparse.csr_matrix) -> np.ndarray:
        """Li et al.'s tree formula, level by level, on dense blocks of classes."""
        n = h.shape[0]
        totals = np.asarray(h.sum(axis=1)).ravel().astype(np.float64)
        indicators = []  # child -> parent as a dense 0/1 matrix (nodes are few)
        for parent, n_nodes, _ in self._tree_steps:
            ind = np.zeros((len(parent), n_nodes))
            ind[np.arange(len(parent)), parent] = 1.0
            indicators.append(ind)
        out = np.zeros(n)
        step = max(1, _CHUNK_CELLS // max(1, h.shape[1]))
        for lo in range(0, n, step):
            hi = min(n, lo + step)
            extra = h[lo:hi].toarray() / totals[lo:hi, None] - self._q[None, :]
            cost = np.zeros(hi - lo)
            for ind, (_, _, weight) in zip(indicators, self._tree_steps, strict=True):
                pos = np.maximum(extra, 0.0) @ ind
                neg = np.maximum(-extra, 0.0) @ ind
                cost += weight * np.minimum(pos, neg).sum(axis=1)
                extra = pos - neg
            out[lo:hi] = cost
        return out

    # -- evaluation ----------------------------------------------------------------------
    def finer_violations(self, fs: FrequencySet, result: ModelResult | None = None) -> float:
        """Lower bound on the violating records at every finer transformation.

        The EMD to a fixed ``q`` is convex in the class distribution ``p``: it is the optimum
        of a transportation linear program whose right-hand side is ``p`` (Rubner, Tomasi &
        Guibas 2000, "The Earth Mover's Distance as a metric for image retrieval"; the
        equal, ordered and hierarchical closed forms of Li et al. 2007, Section 4.3, are that
        optimum). A class ``C`` of size ``|C|`` is the union of its parts ``C_j`` at any finer
        transformation, and ``p_C = sum_j w_j p_j`` with ``w_j = |C_j| / |C|``, so
        ``D(C) <= sum_j w_j D(C_j) <= V D_max(C) + (1 - V) t`` where ``V`` is the weight of
        the violating parts, ``D <= t`` for the others, and ``D_max(C)`` bounds the distance
        of every part: a part holds only values of ``C``, so by convexity its distance is at
        most that of the farthest single value of ``C`` (a point mass; at most 1). Hence the
        violating parts hold at least ``|C| (D(C) - t) / (D_max(C) - t)`` records, and summing
        over the classes bounds the violating records of every finer transformation (the same
        argument gives Li et al.'s monotonicity with generalization: no violating part, no
        violation). ``result`` is :meth:`evaluate` of ``fs`` (its distances are reused; they
        are computed when it is not given). Rounding can only lower the bound (a slack of
        1e-9 on both sides).
        """
        h = self._check_prepared(fs)
        d = result.class_values if result is not None else None
        if d is None or len(d) != fs.n_classes:
            d = self._distances(h) if fs.n_classes else np.zeros(0)
        counts = fs.counts
        over = d > self.t + _BOUND_SLACK
        if not over.any():
            return 0.0
        nonempty = np.diff(h.indptr) > 0
        farthest = np.zeros(h.shape[0])
        farthest[nonempty] = np.maximum.reduceat(
            self._point_distance[h.indices], h.indptr[:-1][nonempty]
        )
        excess = d[over] - (self.t + _BOUND_SLACK)
        room = np.maximum(farthest[over] + _BOUND_SLACK - self.t, excess)  # room >= excess > 0
        share = excess / room
        if self.distance == "equal":
            share = np.maximum(share, 1.0 - self._t_close_share(h)[over])
        return float(np.dot(counts[over].astype(np.float64), share))

    def _t_close_share(self, h: sparse.csr_matrix) -> np.ndarray:
        """Per class, the largest share of it that can be t-close (equal distance).

        With the equal distance, ``D(a, q) = sum_i max(0, q_i - a_i)``. The t-close parts of
        a class (at any finer transformation) together hold a share ``w`` of its records whose
        distribution ``a`` satisfies ``w a <= p`` (they are a sub-multiset of the class) and,
        by convexity, ``D(a) <= t``; so ``f(w) = sum_i max(0, q_i - p_i / w) <= D(a) <= t``.
        ``f(w)`` is the largest, over value sets ``S``, of ``sum_{i in S} (q_i - p_i / w)``,
        so ``w <= P_S / (Q_S - t)`` for every ``S`` with ``Q_S > t`` (sums of ``p`` and ``q``
        over ``S``). The tightest ``S`` are the values absent from the class plus the values
        with the smallest ``p_i / q_i`` (prefixes in that order); the minimum over them (and
        1) is the largest possible share, and ``1 - w`` of the class must violate. This is
        exact for the equal distance and at least the convexity bound of
        :meth:`finer_violations` (derived here from the closed form of Li et al. 2007).
        """
        n = h.shape[0]
        indptr = h.indptr
        rows = row_ids(indptr)
        # the sums over S are taken on integer counts (exact), not on the shares
        c = h.data.astype(np.int64)
        o = self._overall_counts[h.indices]
        size = row_sums(c, indptr)
        t = self.t + _BOUND_SLACK
        order = np.lexsort((c / (size[rows] * o.astype(np.float64)), rows))  # p_i / q_i
        starts = indptr[:-1]
        nonempty = np.diff(indptr) > 0
        cum_c, cum_o = np.cumsum(c[order]), np.cumsum(o[order])
        first = np.maximum(starts - 1, 0)
        before_c = np.where(starts > 0, cum_c[first], 0)
        before_o = np.where(starts > 0, cum_o[first], 0)
        absent = self._total - row_sums(o, indptr)  # records (overall) of values not in C
        big_q = (absent[rows] + cum_o - before_o[rows]) / self._total
        big_p = (cum_c - before_c[rows]) / size[rows]
        with np.errstate(divide="ignore", invalid="ignore"):
            cand = np.where(big_q > t, big_p / (big_q - t), np.inf)
        share = np.ones(n)
        if len(cand):
            share[nonempty] = np.minimum(1.0, np.minimum.reduceat(cand, starts[nonempty]))
        share[absent / self._total > t] = 0.0  # S = the absent values alone: P_S = 0
        return share

    def evaluate(self, fs: FrequencySet) -> ModelResult:
        """Flag the classes whose EMD to the overall distribution exceeds ``t``.

        The result's ``class_values`` are the distances.
        """
        h = self._check_prepared(fs)
        d = self._distances(h) if fs.n_classes else np.zeros(0)
        violating = d > self.t + _TOLERANCE
        details = {
            "attribute": self.attribute,
            "distance": self.distance,
            "t": self.t,
            "max_distance": float(d.max()) if d.size else 0.0,
            "violating_classes": int(np.count_nonzero(violating)),
            "violating_records": int(fs.counts[violating].sum()),
        }
        return self._result(violating, details, class_values=d)

    def describe(self) -> dict:
        """The job-file entry, with the hierarchy given by its name."""
        out = super().describe()
        if self.hierarchy is not None:
            out["hierarchy"] = self.hierarchy.name
        return out
