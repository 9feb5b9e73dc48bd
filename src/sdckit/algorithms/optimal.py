"""Optimal full-domain generalization: best-first search over the lattice of level vectors.

A *transformation* (lattice node) gives one generalization level per quasi-identifier; every
value of a column is recoded to its hierarchy label at that level (full-domain generalization,
Samarati 2001; Sweeney 2002; LeFevre et al. 2005 "Incognito"). Records in equivalence classes
that still violate a privacy model are suppressed, provided at most ``suppression_limit`` of
the records are (ARX's rule; Prasser & Kohlmayer 2015). The search returns the node with the
minimum metric among those that satisfy every model within the limit -- the true optimum, as
ARX's Flash (Kohlmayer et al. 2012, "Flash: efficient, stable and optimal k-anonymity") and
OLA (El Emam et al. 2009) do.

How (Flash-style, all on frequency sets):

1. Encode once: the ungeneralized frequency set of the data (``base``) is the only step that
   reads rows. Every node's frequency set is a roll-up (:meth:`FrequencySet.rollup`) of the
   already evaluated node below it with the fewest classes (ARX's snapshots / roll-up).
2. Lower bounds: the generalization-only part of the metric (the metric as if nothing were
   suppressed) is computed for *all* nodes at once from per-attribute tables
   (:meth:`LatticeMetrics.lower_bounds`); suppression only adds cost, and the bound is monotone
   along generalization (ARX's ``getLowerBound``).
3. Best-first: nodes are visited in increasing order of the bound; the search stops as soon as
   the next bound exceeds the best exact cost found (branch and bound). With no suppression
   the bound *is* the cost of a satisfying node, so the first satisfying node is optimal up to
   ties.
4. Predictive tagging: when every model is monotonic (with suppression when the limit is > 0:
   k-anonymity, distinct l-diversity, ARX ``isMonotonicWithSuppression``; with generalization
   when the limit is 0), a node that fails proves that every node below it fails; those are
   skipped (Flash / Incognito's pruning).
5. Pruning by a bound on finer violations: for models that are not monotonic with
   suppression, a model may bound the records that violate it at every finer node
   (:meth:`~sdckit.models.base.PrivacyModel.finer_violations`; t-closeness does, from the
   convexity of the EMD, :meth:`~sdckit.models.tcloseness.TCloseness.finer_violations`; a
   monotonic model's own violating records are such a bound). A failing node whose bound
   exceeds the budget proves every node below it failing, so it prunes like 4.

Tie-break (deterministic): among nodes whose metric differs by at most ``1e-12`` (relative),
the one with the smallest sum of levels wins, then the lexicographically smallest level vector
in schema QI order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # scipy is imported where it is used: a k-anonymity run never needs it
    pass

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np
import pandas as pd

from sdckit.algorithms.options import parse_options
from sdckit.core import params
from sdckit.core.frequency import (
    FrequencySet,
    QuasiIdentifier,
    build_frequency_set,
    encode_ordered,
    encode_quasi_identifier,
    sensitive_column,
)
from sdckit.core.release import SUPPRESSED, AlgorithmOutput
from sdckit.core.rollups import RollupCache
from sdckit.core.schema import Schema
from sdckit.errors import (
    ConfigError,
    DataError,
    MissingHierarchyError,
    NoSolutionError,
)
from sdckit.models.base import (
    PrivacyModel,
    check_reachable,
    enforce_global_models,
    settle_group_models,
)
from sdckit.utility.generalization import METRICS, LatticeMetrics, MetricSpec, parse_metric

__all__ = ["LatticeSearch", "NodeResult", "optimal", "prepare_base"]

_REL_TOL = 1e-12
_COUNT_SLACK = 1e-6  # a real-valued bound on a record count must exceed the budget by this
TOP_RATIO = 1000  # top-down picks per bound-ordered pick (speed only)
_EVALUATED, _PRUNED, _DOMINATED = 1, 2, 4
MAX_LATTICE = 2_000_000
_SCAN = 256  # nodes examined at once when the search looks for its next node


_PAIR_CELLS = 1 << 20  # joint leaf tables up to this size are used for pair pruning


def _hierarchy_hint(name: str) -> MissingHierarchyError:
    return MissingHierarchyError(
        name,
        "which full-domain generalization needs (optimal)",
        "sdckit.core.hierarchy_builders.interval_hierarchy for numbers, order_hierarchy for "
        "ordered categories, masking_hierarchy for codes such as ZIPs, date_hierarchy for "
        "dates, or sdckit.core.hierarchy.read_hierarchy for an ARX hierarchy file",
        "`hierarchy: {interval: {widths: [10, 50]}}` for numbers, `{order: {group_sizes: [2, "
        "4]}}` or `{masking: {}}` for categories and codes, or `hierarchy: FILE.csv` (ARX "
        "format)",
    )


def require_hierarchies(schema: Schema) -> list[str]:
    """The quasi-identifiers, each with a hierarchy (full-domain generalization needs one):
    ConfigError without any quasi-identifier, MissingHierarchyError (saying how to build one)
    for the first without a hierarchy."""
    qis = list(schema.quasi_identifiers)
    if not qis:
        raise ConfigError(
            "the schema has no quasi-identifying attribute; mark the columns an intruder could "
            "know as quasi_identifying"
        )
    for q in qis:
        if schema.hierarchy(q) is None:
            raise _hierarchy_hint(q)
    return qis


def suppression_budget(limit: float, n: int) -> int:
    """Most records that may be suppressed: ``floor(limit * n)`` (with a rounding guard)."""
    return int(math.floor(float(limit) * n + 1e-9))


def prepare_base(
    data: pd.DataFrame, schema: Schema, models: Sequence[PrivacyModel]
) -> tuple[FrequencySet, list[str]]:
    """Encode the QIs (hierarchy leaf codes) and sensitive columns once; prepare the models.

    Returns the ungeneralized frequency set (the one row scan) and the sensitive attributes.
    """
    qis = require_hierarchies(schema)
    sensitive: list[str] = []
    for m in models:
        for a in m.sensitive_attributes:
            if a not in sensitive:
                sensitive.append(a)
    encoded = [encode_quasi_identifier(data[q], q, schema.hierarchy(q)) for q in qis]
    sens = {
        a: encode_ordered(
            sensitive_column(data, a),
            a,
            schema.attributes[a].order if a in schema.attributes else None,
        )
        for a in sensitive
    }
    base = build_frequency_set(encoded, None, sens)
    for m in models:
        m.prepare(base)
    return base, sensitive


@dataclass
class NodeResult:
    """The verdict on one lattice node."""

    index: int
    levels: tuple[int, ...]
    satisfied: bool
    cost: float | None
    suppressed_records: int
    lower_bound: float
    finer_violations: float = 0.0  # lower bound on suppressed records at every finer node

    def satisfied_cost(self) -> float:
        """The metric value of a satisfying node (a failing node has none: ValueError)."""
        if self.cost is None:
            raise ValueError(
                f"node {list(self.levels)} does not satisfy the models and has no metric value"
            )
        return self.cost


class LeafCounts(Protocol):
    """What the search reads of the base besides its metadata: record counts per leaf code
    (:meth:`marginal`) and per pair of leaf codes (:meth:`joint`)."""

    def marginal(self, i: int) -> np.ndarray:
        """Records per leaf code of QI ``i``."""
        ...

    def joint(self, i: int, j: int) -> np.ndarray:
        """Records per pair of leaf codes of QIs ``i`` and ``j``."""
        ...


class LeafTables:
    """Record counts per leaf code of one quasi-identifier, or per pair of leaf codes of two,
    of the base frequency set: what the metrics' bounds and the projection pruning read.

    Counted here from the base classes; the Spark engine, whose classes stay on the
    cluster, passes its own (aggregations on Spark) with the same methods."""

    def __init__(self, base: FrequencySet) -> None:
        self.base = base

    def marginal(self, i: int) -> np.ndarray:
        """Records per leaf code of QI ``i`` (float64: sums of whole counts, exact)."""
        q = self.base.quasi_identifiers[i]
        return np.bincount(
            self.base.keys[:, i].astype(np.int64),
            weights=self.base.counts.astype(np.float64),
            minlength=q.cardinality(0),
        )

    def joint(self, i: int, j: int) -> np.ndarray:
        """Records per pair of leaf codes of QIs ``i`` and ``j`` (rows: ``i``'s codes)."""
        qis = self.base.quasi_identifiers
        di, dj = qis[i].cardinality(0), qis[j].cardinality(0)
        keys = self.base.keys
        return np.bincount(
            keys[:, i].astype(np.int64) * dj + keys[:, j].astype(np.int64),
            weights=self.base.counts.astype(np.float64),
            minlength=di * dj,
        ).reshape(di, dj)


#: the models that carry ARX's cost/benefit configuration (shared with ``publisher_payout``)
COST_BENEFIT_MODELS = (
    "profitability_prosecutor",
    "profitability_journalist",
    "profitability_prosecutor_no_attack",
    "profitability_journalist_no_attack",
)
#: those of them with a population table, whose ``success_probability`` is a journalist's
JOURNALIST_MODELS = ("profitability_journalist", "profitability_journalist_no_attack")


def payout_metric(spec: MetricSpec, models: Sequence[PrivacyModel]) -> MetricSpec:
    """``spec`` with the cost/benefit amounts and attacker it leaves unset taken from the
    job's profitability model (the no-attack variants' included), as ARX shares one
    ``ARXCostBenefitConfiguration`` between its profitability models and its
    publisher-payout metric; an amount set in both to
    different values is a :class:`~sdckit.errors.ConfigError`. Other metrics: unchanged."""
    if spec.name != "publisher_payout":
        return spec
    sources = [md for md in models if getattr(md, "spec_name", None) in COST_BENEFIT_MODELS]
    changes: dict[str, Any] = {}
    for md in sources:
        for key in ("publisher_benefit", "publisher_loss", "adversary_gain", "adversary_cost"):
            value = float(getattr(md, key))
            mine = getattr(spec, key) if key not in changes else changes[key]
            if mine is None:
                changes[key] = value
            elif float(mine) != value:
                raise ConfigError(
                    f"metric publisher_payout: {key} is {float(mine):g} but model {md.name} "
                    f"has {value:g}; the metric and the profitability models share one "
                    "cost/benefit configuration (as in ARX): set it once, on the model"
                )
        if spec.attacker is None and "attacker" not in changes:
            changes["attacker"] = getattr(md, "attacker", "prosecutor")
    return spec.with_params(**changes) if changes else spec


def payout_success(
    metric: MetricSpec, models: Sequence[PrivacyModel]
) -> Callable[[FrequencySet], np.ndarray] | None:
    """The adversary's success probability per class for the ``publisher_payout`` metric
    against a journalist: the job's ``profitability_journalist`` (or
    ``profitability_journalist_no_attack``) model's (``1 / P`` from its population, after
    :meth:`~sdckit.models.base.PrivacyModel.prepare`); None otherwise (the metric then takes
    ``1 / |c|``, the prosecutor's)."""
    if metric.name != "publisher_payout" or metric.attacker != "journalist":
        return None
    for md in models:
        if getattr(md, "spec_name", None) in JOURNALIST_MODELS:
            return md.success_probability  # type: ignore[attr-defined, no-any-return]
    raise ConfigError(
        "metric publisher_payout with attacker journalist takes the population class sizes "
        "of the job's profitability_journalist model or profitability_journalist_no_attack "
        "model; add one (with its population) or use attacker prosecutor"
    )


@dataclass
class LatticeSearch:
    """Best-first branch-and-bound search for the optimal full-domain generalization.

    ``base`` is the ungeneralized frequency set, ``models`` are prepared, ``budget`` is the
    largest number of records that may be suppressed.
    """

    base: FrequencySet
    models: Sequence[PrivacyModel]
    budget: int
    metric: MetricSpec = field(default_factory=MetricSpec)
    progress: Callable[[int, int], Any] | None = None
    tables: LeafCounts | None = None  # counted from ``base`` when not given
    #: whether ``base`` holds the classes (the Spark engine passes one without them)
    classes_here: bool = True

    def __post_init__(self) -> None:
        if self.tables is None:
            self.tables = LeafTables(self.base)
        marginals = None
        if not self.classes_here:
            marginals = [self.tables.marginal(i) for i in range(len(self.base.names))]
        self.metrics = LatticeMetrics(
            self.base, self.metric, marginals, success=payout_success(self.metric, self.models)
        )
        self.n_records = int(round(self.metrics.n))
        self.heights = np.array([q.height for q in self.base.quasi_identifiers], dtype=np.int64)
        size = int(np.prod(self.heights))
        if size > MAX_LATTICE:
            raise ConfigError(
                f"the generalization lattice has {size:,} nodes (levels per QI: "
                f"{self.heights.tolist()}), more than {MAX_LATTICE:,}; use fewer "
                "quasi-identifiers or hierarchies with fewer levels, or a heuristic algorithm "
                "(datafly, mondrian)"
            )
        self.size = size
        m = len(self.heights)
        # mixed radix: first QI most significant, so index order = lexicographic level order
        self.strides = np.ones(m, dtype=np.int64)
        for i in range(m - 2, -1, -1):
            self.strides[i] = self.strides[i + 1] * self.heights[i + 1]
        grids = np.indices(tuple(self.heights.tolist()), dtype=np.int32).reshape(m, -1).T
        self.nodes = np.ascontiguousarray(grids)
        self.level_sum = self.nodes.sum(axis=1)
        self.lower = self.metrics.lower_bounds(self.nodes)
        local = [md for md in self.models if not md.is_global]
        # cheap, monotonic models first: they fail early and short-circuit the rest
        self.local_models = sorted(
            local, key=lambda md: (not md.monotonic, md.sensitive_attributes != ())
        )
        self.global_models = [md for md in self.models if md.is_global]
        self.group_models = [md for md in local if not md.class_local]
        if self.budget > 0:
            # global models are judged on the records left after local suppression, which is
            # not monotone (suppressing small classes can lower the average risk), so they
            # disable predictive tagging when records may be suppressed
            self.prunable = all(md.monotonic and not md.is_global for md in self.models)
        else:
            self.prunable = all(md.monotonic_with_generalization for md in self.models)
        # a failing node whose bound on the suppressed records at every finer node exceeds
        # the budget proves that those nodes fail too, whatever the other models say
        self.bound_prunable = any(md.monotonic or md.bounds_finer_violations for md in local)
        self.keep_base_map = self.metric.name == "entropy"
        # a coarser node without suppression cannot be better only when the models and the
        # metric are monotone along generalization (the publisher payout is not)
        self.generalization_monotone = self.metric.monotonic_with_generalization and all(
            md.monotonic_with_generalization for md in self.models
        )
        self.state = np.zeros(size, dtype=np.uint8)
        self.decided = 0  # nodes evaluated, pruned or dominated (progress)
        self._prune_by_projections()
        self.rollup_cache = RollupCache(self.base.n_classes, m, keep_maps=self.keep_base_map)
        self._store(0, self.base)
        self.checked: list[NodeResult] = []

    def _prune_by_projections(self) -> None:
        """Prune, before any node is evaluated, nodes that must suppress too many records.

        A class smaller than ``k_min = max(model.minimal_class_size())`` violates every such
        model. The classes of a node are subsets of the classes of its projection onto one
        attribute or a pair of attributes (Incognito's subset property, LeFevre et al. 2005),
        so every record in a projection class smaller than ``k_min`` is suppressed at the
        node; and the number of such records only shrinks as the projection is generalized.
        A node whose largest such count (over the projections) exceeds the budget therefore
        fails, whatever the models. Projections are aggregated from leaf-level count tables,
        level by level (``np.add.reduceat`` over the codes sorted by parent: sums of whole
        counts, exact in float64).

        Models that compare each class with the population records it covers (k-map,
        δ-presence: :meth:`~sdckit.models.base.PrivacyModel.minimal_population_class_size`)
        prune the same way from the population's tables: a node's population class lies in
        the population's projection class, so every record of a projection cell whose
        population count is below the model's ``m`` is suppressed at the node.
        """
        k_min = max((md.minimal_class_size() for md in self.models), default=1)
        qis = self.base.quasi_identifiers
        cards = [q.cardinality(0) for q in qis]
        references = []  # (population leaf tables, fewest population records per class)
        for md in self.models:
            ref = md.minimal_population_class_size()
            if ref is not None and [q.cardinality(0) for q in ref[0].quasi_identifiers] == cards:
                references.append((LeafTables(ref[0]), ref[1]))
        if k_min <= 1 and not references:
            return
        # the floor per node, as an array with one axis per attribute (index order = C order)
        floor = np.zeros(tuple(int(h) for h in self.heights), dtype=np.int64)
        m = floor.ndim
        tables = self.tables
        assert tables is not None  # set in __post_init__
        # per attribute, the codes of all its levels numbered one after the other (``starts``:
        # where each level begins); a table over leaves becomes the table over those codes
        # level by level, each level summing the codes of the level below under each of its
        # codes: the codes below sorted by their parent (``order``) and where each parent's
        # run begins (``runs``; every code has a child)
        steps, starts = [], []
        for q in qis:
            widths = [q.cardinality(level) for level in range(q.height)]
            starts.append(np.concatenate(([0], np.cumsum(widths)[:-1])))
            per_level = []
            for level in range(q.height - 1):
                parent = q.step(level, level + 1)
                order = np.argsort(parent, kind="stable")
                per_level.append((order, np.flatnonzero(np.diff(parent[order], prepend=-1))))
            steps.append(per_level)

        def by_code(table: np.ndarray, i: int) -> np.ndarray:
            """``table`` (rows: the leaves of attribute i) summed to all its codes."""
            blocks = [table]
            for order, runs in steps[i]:
                blocks.append(np.add.reduceat(blocks[-1][order], runs, axis=0))
            return np.concatenate(blocks)

        def small_records(
            sizes: np.ndarray, population: list[np.ndarray], at_rows: np.ndarray, at_cols=None
        ) -> np.ndarray:
            """Records in cells with 0 < size < k_min or with fewer population records than a
            population model needs (``population``: its table beside ``sizes``, per
            reference), summed per level (block of codes)."""
            bad = sizes < k_min
            for pop, (_, fewest) in zip(population, references, strict=True):
                bad |= pop < fewest
            small = np.where((sizes > 0) & bad, sizes, 0.0)
            out = np.add.reduceat(small, at_rows, axis=0)
            if at_cols is not None:
                out = np.add.reduceat(out, at_cols, axis=1)
            return np.rint(out).astype(np.int64)  # sums of whole counts: exact in float64

        def axes(*at: int) -> tuple[int, ...]:
            """Shape that broadcasts a table over attributes ``at`` against ``floor``."""
            return tuple(floor.shape[a] if a in at else 1 for a in range(m))

        for i in range(len(qis)):
            pops = [by_code(ref.marginal(i), i) for ref, _ in references]
            small = small_records(by_code(tables.marginal(i), i), pops, starts[i])
            np.maximum(floor, small.reshape(axes(i)), out=floor)
        # pairs of attributes (Incognito's 2-subsets), while the joint leaf table is small
        for i in range(len(qis)):
            for j in range(i + 1, len(qis)):
                di, dj = qis[i].cardinality(0), qis[j].cardinality(0)
                if di * dj > _PAIR_CELLS:
                    continue

                def to_codes(joint: np.ndarray, i: int = i, j: int = j) -> np.ndarray:
                    """codes of j x codes of i (rows gathered: contiguous), transposed"""
                    return by_code(np.ascontiguousarray(by_code(joint, i).T), j).T

                sizes = to_codes(tables.joint(i, j))
                pops = [to_codes(ref.joint(i, j)) for ref, _ in references]
                small = small_records(sizes, pops, starts[i], starts[j])
                np.maximum(floor, small.reshape(axes(i, j)), out=floor)
        self._mark(np.flatnonzero(floor.ravel() > self.budget), _PRUNED)

    # -- cache of evaluated frequency sets (roll-up sources) -------------------------------
    def _store(self, index: int, fs: FrequencySet) -> None:
        self.rollup_cache.store(self.nodes[index], fs, force=index == 0)

    def frequency_set(self, index: int) -> FrequencySet:
        """The node's frequency set, rolled up from the cached node below with fewest classes
        (:class:`~sdckit.core.rollups.RollupCache`)."""
        return self.rollup_cache.get(self.nodes[index])

    # -- one node ------------------------------------------------------------------------
    def evaluate(self, index: int) -> tuple[NodeResult, FrequencySet, np.ndarray]:
        """Decide the node: suppress violating classes within the budget, check, cost."""
        fs = self.frequency_set(index)
        levels = tuple(int(x) for x in self.nodes[index])
        violating = np.zeros(fs.n_classes, dtype=bool)
        ok = True
        n_supp = 0
        floor = 0.0
        results = []
        for md in self.local_models:
            r = md.evaluate(fs)
            results.append((md, r))
            violating |= r.violating
            n_supp = int(fs.counts[violating].sum())
            if n_supp > self.budget:
                ok = False
                if not self.prunable and self.bound_prunable:  # (prunable: pruned anyway)
                    floor = max(m.finer_violations(fs, res) for m, res in results)
                break
        if ok:
            violating, ok = self.settle(fs, violating)
            n_supp = int(fs.counts[violating].sum())
        cost = self.metrics.cost(fs, violating) if ok else None
        res = NodeResult(index, levels, ok, cost, n_supp, float(self.lower[index]), floor)
        return res, fs, violating

    def settle(self, fs: FrequencySet, violating: np.ndarray) -> tuple[np.ndarray, bool]:
        """Complete the suppression decision after the class-based models flagged
        ``violating``: the group-judging models are re-evaluated on the released classes
        (:func:`~sdckit.models.base.settle_group_models`) and the global models enforced on
        the smallest classes (:func:`~sdckit.models.base.enforce_global_models`; among the
        classes of the boundary size, the ones the search's metric prices cheapest), in turn,
        until neither suppresses more. Returns the flags and whether the node is within the
        budget with every model satisfied."""
        ok = True
        while True:
            if self.group_models:
                violating, ok = settle_group_models(fs, violating, self.group_models, self.budget)
            if not ok or not self.global_models:
                return violating, ok
            before = violating
            violating, ok = enforce_global_models(
                fs,
                violating,
                self.global_models,
                self.budget,
                prices=lambda flags: self.metrics.suppression_prices(fs, flags),
                cost=lambda flags: self.metrics.cost(fs, flags),
            )
            if not ok or not self.group_models or np.array_equal(violating, before):
                return violating, ok

    def _mark_below(self, index: int) -> None:
        """Mark every node componentwise <= ``index``'s levels: they fail too (pruned)."""
        self._mark(self._box(self.nodes[index], below=True), _PRUNED)

    def _mark_above(self, index: int) -> None:
        """Mark every node componentwise >= ``index``'s levels: they cannot be better."""
        self._mark(self._box(self.nodes[index], below=False), _DOMINATED)

    def _mark(self, idx: np.ndarray, flag: int) -> None:
        fresh = idx[self.state[idx] == 0]
        self.state[fresh] = flag
        self.decided += len(fresh)

    def _box(self, node: np.ndarray, below: bool) -> np.ndarray:
        idx = np.zeros(1, dtype=np.int64)
        for i in range(len(node)):
            lo, hi = (0, int(node[i]) + 1) if below else (int(node[i]), int(self.heights[i]))
            idx = (idx[:, None] + np.arange(lo, hi) * self.strides[i]).ravel()
        return idx

    def _better(self, a: NodeResult, b: NodeResult | None) -> bool:
        if b is None:
            return True
        a_cost, b_cost = a.satisfied_cost(), b.satisfied_cost()
        tol = _REL_TOL * max(1.0, abs(a_cost), abs(b_cost))
        if a_cost < b_cost - tol:
            return True
        if a_cost > b_cost + tol:
            return False
        return (int(self.level_sum[a.index]), a.index) < (int(self.level_sum[b.index]), b.index)

    # -- the search ----------------------------------------------------------------------
    def run(self) -> NodeResult | None:
        """Run the search; returns the optimal node (``None`` when no node satisfies).

        Two streams pick the next node: increasing lower bound (branch and bound; when its
        next bound exceeds the best cost, every node that could still win has been decided and
        the search ends) and, when predictive tagging applies, decreasing level sum (a failing
        node high in the lattice proves many nodes below it failing at once, as Flash's
        top-down checks do; also used when models bound their finer violations). They
        alternate; the order only affects speed, not the result.
        """
        size = self.size
        by_bound = np.lexsort((np.arange(size), self.level_sum, self.lower))
        bound_sorted = self.lower[by_bound]
        by_height = np.lexsort((np.arange(size), self.lower, -self.level_sum))
        state = self.state
        lower = self.lower
        best: NodeResult | None = None
        best_failed: NodeResult | None = None
        p1 = p2 = 0
        use_top = self.prunable or self.bound_prunable
        turn = 0
        next_report = 0
        limit = math.inf
        while True:
            index = -1
            if use_top and turn:
                # the next node by height that is undecided and within the limit; the ones
                # passed over are not looked at again (scanned in chunks, same order)
                while p2 < size:
                    chunk = by_height[p2 : p2 + _SCAN]
                    fits = (state[chunk] == 0) & (lower[chunk] <= limit)
                    at = int(fits.argmax())
                    if fits[at]:
                        index = int(chunk[at])
                        p2 += at + 1
                        break
                    p2 += len(chunk)
                else:
                    use_top = False
            if index < 0:
                while p1 < size:  # the next undecided node by bound
                    flags = state[by_bound[p1 : p1 + _SCAN]]
                    at = int((flags == 0).argmax())
                    if flags[at] == 0:
                        p1 += at
                        break
                    p1 += len(flags)
                if p1 == size or bound_sorted[p1] > limit:
                    break
                index = int(by_bound[p1])
                p1 += 1
            turn = (turn + 1) % (TOP_RATIO + 1)
            if self.progress is not None and self.decided >= next_report:
                self.progress(self.decided, size)
                next_report = self.decided + max(1, size // 100)
            res, fs, _ = self.evaluate(index)
            if not state[index]:
                self.decided += 1
            state[index] |= _EVALUATED
            self.checked.append(res)
            self._store(index, fs)
            if res.satisfied:
                if self._better(res, best):
                    best = res
                    best_cost = best.satisfied_cost()
                    limit = best_cost + _REL_TOL * max(1.0, abs(best_cost))
                if res.suppressed_records == 0 and self.generalization_monotone:
                    self._mark_above(index)
            else:
                if best_failed is None or res.suppressed_records < best_failed.suppressed_records:
                    best_failed = res
                if self.prunable or res.finer_violations > self.budget + _COUNT_SLACK:
                    self._mark_below(index)
        if self.progress is not None:
            self.progress(size, size)
        self.closest_failure = best_failed
        return best

    def solution_space(self) -> list[dict]:
        """The checked nodes: levels, metric (None when not satisfied), satisfied, bound."""
        return [
            {
                "levels": list(r.levels),
                "metric": r.cost,
                "satisfied": r.satisfied,
                "lower_bound": r.lower_bound,
                "suppressed_records": r.suppressed_records,
            }
            for r in self.checked
        ]


def generalized_output(
    data: pd.DataFrame,
    base: FrequencySet,
    levels: Sequence[int],
    suppressed_classes: np.ndarray | None,
    fs: FrequencySet,
) -> tuple[pd.DataFrame, dict[str, np.ndarray], np.ndarray]:
    """Apply a full-domain transformation to the rows (one ``take`` per QI; ``*`` if suppressed).

    ``fs`` is the frequency set at ``levels`` derived from ``base`` (it must map rows to
    classes); ``suppressed_classes`` flags its suppressed classes. QI columns come back as
    categoricals of the hierarchy labels at the chosen level (plus ``*``).
    """
    row_class = fs.row_class()
    if suppressed_classes is not None and suppressed_classes.any():
        supp = suppressed_classes[row_class]
    else:
        supp = np.zeros(len(row_class), dtype=bool)
    out = data.copy(deep=False)
    share: dict[str, np.ndarray] = {}
    for q, level in zip(base.quasi_identifiers, levels, strict=True):
        out[q.name], share[q.name] = _column_at(q, int(level), supp, data.index)
    return out, share, supp


def _column_at(
    q: QuasiIdentifier, level: int, supp: np.ndarray, index: pd.Index
) -> tuple[pd.Series, np.ndarray]:
    h = q.hierarchy
    if h is None:
        raise _hierarchy_hint(q.name)
    labels = np.asarray(q.labels(level), dtype=object)
    where_star = np.flatnonzero(labels == SUPPRESSED)
    cats = labels if where_star.size else np.append(labels, SUPPRESSED)
    star = int(where_star[0]) if where_star.size else len(labels)
    codes = q.codes_at(level).astype(np.int32, copy=True)
    under = h.leaves_under(level).astype(float) / len(h.leaves)
    share = under[codes]
    if supp.any():
        codes[supp] = star
        share[supp] = 1.0
    col = pd.Series(pd.Categorical.from_codes(codes, categories=pd.Index(cats, dtype=object)))
    col.index = index
    return col, share


def optimal(
    data: pd.DataFrame,
    schema: Schema,
    models: Sequence[PrivacyModel],
    *,
    suppression_limit: float = 0.0,
    metric: str | Mapping[str, Any] | MetricSpec = "loss",
    seed: int | None = None,
    progress: Callable[[int, int], Any] | None = None,
    **options: Any,
) -> AlgorithmOutput:
    """The optimal full-domain generalization (with suppression) of ``data``.

    Every quasi-identifier of ``schema`` needs a hierarchy. ``metric`` is a name (``loss``,
    ``precision``, ``discernibility``, ``aecs``, ``entropy``, ``height``, ``iloss``) or
    ``{"name": ..., "aggregate": ..., "weights": {...}}``. ``seed`` is accepted for the common
    algorithm signature; the search is deterministic. ``progress(done, total)`` is called as
    nodes are visited. Raises :class:`NoSolutionError` when no node satisfies the models
    within the limit (naming the node that came closest).

    ``details`` holds ``solution_space`` (the checked nodes), ``lattice_size``, ``metric``,
    ``metric_value`` (the minimised value), ``pruned_nodes``, ``suppression_budget`` and
    ``metrics`` (every metric of the result, computed exactly on its frequency set with
    :class:`~sdckit.utility.generalization.LatticeMetrics`; equal to
    :func:`~sdckit.utility.generalization.output_metrics` of the output, which the tests
    check, but without re-reading the rows).
    """
    parse_options("optimal", options)
    del seed
    limit = params.suppression_limit(suppression_limit)
    spec = payout_metric(parse_metric(metric), models)
    if len(data) == 0:
        raise DataError("the data has no records; nothing to anonymize")
    base, _ = prepare_base(data, schema, models)
    solution = solve(base, models, limit, spec, progress)
    assert solution.frequency_set is not None and solution.violating is not None  # local
    released, share, supp = generalized_output(
        data, base, solution.levels, solution.violating, solution.frequency_set
    )
    return AlgorithmOutput(
        data=released,
        share=share,
        suppressed=supp,
        transformation=solution.transformation,
        nodes_checked=solution.nodes_checked,
        details=solution.details,
        input_classes=base,
    )


@dataclass
class OptimalSolution:
    """The optimum found by :func:`solve` on a base frequency set: its ``levels``, the
    frequency set at those levels with its ``violating`` (suppressed) classes, and the
    ``details`` the JSON and report show (metrics, solution space, ties)."""

    levels: tuple[int, ...]
    frequency_set: FrequencySet | None
    violating: np.ndarray | None
    transformation: dict[str, int]
    nodes_checked: int
    details: dict[str, Any]
    #: records in the suppressed classes, when the classes are not here (Spark engine)
    n_suppressed: int | None = None

    @property
    def suppressed_records(self) -> int:
        """Records in the suppressed classes."""
        if self.frequency_set is None or self.violating is None:
            return int(self.n_suppressed or 0)
        return int(self.frequency_set.counts[self.violating].sum())


def solve(
    base: FrequencySet,
    models: Sequence[PrivacyModel],
    limit: float,
    spec: MetricSpec,
    progress: Callable[[int, int], Any] | None = None,
) -> OptimalSolution:
    """The optimal full-domain generalization of the data summarised by ``base`` (the
    ungeneralized frequency set, models already prepared on it): the lattice search, the
    suppression decision and the metrics, all on frequency sets -- the rows are not needed,
    which is what lets the Spark engine search on the driver. Raises
    :class:`NoSolutionError` naming the closest node when nothing satisfies the models."""
    check_reachable(models, base, "optimal", limit)

    budget = suppression_budget(limit, base.n_records)
    search = LatticeSearch(base, models, budget, spec, progress)
    best = run_search(search, models, limit)
    fs = base.rollup(best.levels)
    _, _, violating = _reevaluate(search, fs)
    which = METRICS if spec.name in METRICS else (*METRICS, spec.name)
    details = solution_details(search, best, search.metrics.values(fs, violating, which))
    return OptimalSolution(
        levels=tuple(int(x) for x in best.levels),
        frequency_set=fs,
        violating=violating,
        transformation=dict(zip(search.base.names, (int(x) for x in best.levels), strict=True)),
        nodes_checked=len(search.checked),
        details=details,
    )


def run_search(search: LatticeSearch, models: Sequence[PrivacyModel], limit: float) -> NodeResult:
    """Run ``search`` and return the optimal node; :class:`NoSolutionError` naming the
    node that came closest when no node satisfies ``models`` within ``limit``."""
    best = search.run()
    if best is not None:
        return best
    base = search.base
    names = list(base.names)
    close = search.closest_failure
    if close is None:  # every node was pruned up front: report the top of the lattice
        close = search.evaluate(search.size - 1)[0]
    hint = ""
    if close is not None:
        trans = ", ".join(f"{n} {lv}" for n, lv in zip(names, close.levels, strict=True))
        hint = (
            f" The closest transformation ({trans}) would have to suppress "
            f"{close.suppressed_records:,} of {search.n_records:,} records "
            f"({close.suppressed_records / search.n_records:.2%}), the limit allows "
            f"{search.budget:,}."
        )
    raise NoSolutionError(
        f"no transformation satisfies {', '.join(m.name for m in models)} with at most "
        f"{limit:.2%} of the records suppressed ({len(search.checked):,} of "
        f"{search.size:,} transformations checked).{hint} Raise suppression_limit, relax "
        "the models or use hierarchies with more levels."
    )


def solution_details(
    search: LatticeSearch, best: NodeResult, values: Mapping[str, float]
) -> dict[str, Any]:
    """What the JSON and report show of a finished search whose optimum ``best`` has the
    metric ``values`` (:meth:`~sdckit.utility.generalization.LatticeMetrics.values`)."""
    names = list(search.base.names)
    spec = search.metric
    metrics = {
        "loss": values["loss"],
        "precision": 1.0 - values["precision"],
        "discernibility": values["discernibility"],
        "aecs": values["aecs"],
        "non_uniform_entropy": values["entropy"],
        "height": values["height"],
        "iloss": values["iloss"],
    }
    if "publisher_payout" in values:  # the search's own metric (not reported otherwise)
        metrics["publisher_payout"] = values["publisher_payout"]
    return {
        "lattice_size": search.size,
        "metric": spec.name,
        "metric_aggregate": spec.aggregate,
        "metric_value": best.cost,
        "pruned_nodes": int(np.count_nonzero(search.state == _PRUNED)),
        "dominated_nodes": int(np.count_nonzero(search.state == _DOMINATED)),
        "suppression_budget": search.budget,
        "quasi_identifiers": names,
        "solution_space": search.solution_space(),
        "metrics": metrics,
        "ties": _ties(search, best, names),
    }


#: How the search picks among transformations of equal cost (stated in the JSON and report).
TIE_RULE = (
    "the lowest sum of generalization levels, then the first level vector in lexicographic "
    "order (attributes in schema order)"
)


def _ties(search: LatticeSearch, best: NodeResult, names: list[str]) -> dict[str, Any]:
    """The satisfying transformations whose cost equals the optimum (relative tolerance
    1e-12), among the evaluated nodes, and the rule that picked one of them. Nodes above a
    satisfying node without suppression are not evaluated (they cannot cost less), so a tie
    among them is not listed; ARX may report any of the tied transformations."""
    best_cost = best.satisfied_cost()
    tol = _REL_TOL * max(1.0, abs(best_cost))
    tied = sorted(
        {tuple(int(v) for v in r.levels) for r in search.checked
         if r.satisfied and abs(r.satisfied_cost() - best_cost) <= tol},
        key=lambda lv: (sum(lv), lv),
    )  # fmt: skip
    return {
        "count": len(tied),
        "transformations": [dict(zip(names, lv, strict=True)) for lv in tied[:20]],
        "rule": TIE_RULE,
    }


def _reevaluate(search: LatticeSearch, fs: FrequencySet) -> tuple[bool, int, np.ndarray]:
    """Suppression decision on a frequency set that still maps rows (the final node)."""
    violating = np.zeros(fs.n_classes, dtype=bool)
    for md in search.local_models:
        violating |= md.evaluate(fs).violating
    violating, _ = search.settle(fs, violating)
    return True, int(fs.counts[violating].sum()), violating
