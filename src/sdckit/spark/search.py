"""The optimal lattice search with the classes kept on Spark.

:class:`DistributedLatticeSearch` is the local engine's
:class:`~sdckit.algorithms.optimal.LatticeSearch` -- the same node order, bounds, pruning,
tie rule and optimum -- except where a node's classes come from: the base class table stays
on Spark (:class:`~sdckit.spark.classes.ClassTable`) and a node is decided by shards
(:meth:`~sdckit.spark.classes.ClassTable.shards`): each executor rolls its classes up to
the node's levels, runs every model on them with the local code and sums what the driver
needs -- the records each model has suppressed so far (cumulative, in the models' order,
so the early stop at the budget is the local one), each model's bound on the violations of
finer nodes, and the metric's partial sums
(:meth:`~sdckit.utility.generalization.LatticeMetrics.partials`). The search's bounds and
projection pruning read the leaf marginals and pair tables, aggregated on Spark.

Roll-ups from finer nodes, as the local search rolls up from the cached node below with the
fewest classes: when a node's source table is large, the search first rolls it up to the
node halfway (:meth:`~sdckit.spark.classes.ClassTable.rollup`, cached on Spark), and a
roll-up small enough for the driver (:func:`~sdckit.spark.classes.driver_classes`) is
collected and every node above it is decided on the driver as the local engine does.

Only models that judge each class by itself (``class_local``, not ``is_global``) are
decided this way; the others need every class at once and are refused with the fix.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from sdckit.algorithms.optimal import _PAIR_CELLS, LatticeSearch, NodeResult

if TYPE_CHECKING:  # pragma: no cover
    from sdckit.core.frequency import FrequencySet
    from sdckit.spark.classes import ClassTable

#: Most roll-ups kept cached on Spark at once.
MAX_SNAPSHOTS = 8


@dataclass
class DistributedLatticeSearch(LatticeSearch):
    """:class:`~sdckit.algorithms.optimal.LatticeSearch` over a class table kept on Spark
    (module docstring). ``base`` is the table's :meth:`~ClassTable.skeleton` and ``tables``
    the table itself; ``driver_limit`` the most classes collected to the driver."""

    table: ClassTable | None = None
    driver_limit: int = 0
    _spark_tables: dict[int, ClassTable] = field(default_factory=dict, repr=False)
    _shared: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        assert self.table is not None
        qis = self.table.quasi_identifiers
        self.table.prefetch(
            [
                (i, j)
                for i in range(len(qis))
                for j in range(i + 1, len(qis))
                if qis[i].cardinality(0) * qis[j].cardinality(0) <= _PAIR_CELLS
            ]
        )
        self.tables = self.table
        self.classes_here = False
        super().__post_init__()
        self._spark_tables = {0: self.table}
        # the entropy charge of suppressed records (convention "root") reads the base
        # classes of each class: such a search rolls every node up from the base table
        self.rollups = not (
            self.metric.name == "entropy" and self.metric.convention("entropy") == "root"
        )

    # -- where a node's classes come from ------------------------------------------------
    def _store(self, index: int, fs: FrequencySet | None) -> None:
        if fs is None or fs.n_classes == 0 and index == 0:
            return  # a node decided on Spark, or the skeleton: nothing on the driver
        super()._store(index, fs)

    def _local_source(self, node: np.ndarray) -> bool:
        return self.rollup_cache.has_source(node)

    def _spark_source(self, index: int) -> ClassTable:
        node = self.nodes[index]
        below = [
            (t.n_classes, i) for i, t in self._spark_tables.items() if (self.nodes[i] <= node).all()
        ]
        _, src = min(below)
        source = self._spark_tables[src]
        if self.rollups and src != index and len(self._spark_tables) <= MAX_SNAPSHOTS:
            mid = (self.nodes[src] + node) // 2
            mid_index = int((mid * self.strides).sum())
            if mid_index not in self._spark_tables and mid_index != src:
                snapshot = source.rollup(mid.tolist())
                if snapshot.n_classes <= self.driver_limit:
                    fs = snapshot.collect()
                    snapshot.unpersist()
                    super()._store(mid_index, fs)
                    return source  # the node is decided on the driver from the collected one
                self._spark_tables[mid_index] = snapshot
                return snapshot
        return source

    # -- one node ------------------------------------------------------------------------
    def evaluate(self, index: int) -> tuple[NodeResult, Any, Any]:
        """Decide the node: on the driver when a collected roll-up lies below it, else on
        Spark (module docstring); the verdict is the local engine's."""
        node = self.nodes[index]
        if not self._local_source(node):
            source = self._spark_source(index)
            if not self._local_source(node):
                return self._evaluate_on_spark(index, source), None, None
        return super().evaluate(index)

    def _evaluate_on_spark(self, index: int, source: ClassTable) -> NodeResult:
        levels = tuple(int(x) for x in self.nodes[index])
        if self._shared is None:  # the models and metric tables, broadcast once
            spark = source.frame.sparkSession
            self._shared = spark.sparkContext.broadcast((list(self.local_models), self.metrics))
        cum, fin, partials = node_figures(
            source, levels, self.local_models, self.metrics, (self.metric.name,), self._shared
        )
        ok, n_supp, floor = True, int(cum[-1]) if len(cum) else 0, 0.0
        for j, total in enumerate(cum):
            if total > self.budget:
                ok, n_supp = False, int(total)
                if not self.prunable and self.bound_prunable:
                    floor = float(max(fin[: j + 1]))
                break
        cost = None
        if ok:
            cost = float(
                self.metrics.values_from(partials, levels, (self.metric.name,))[self.metric.name]
            )
        return NodeResult(index, levels, ok, cost, n_supp, float(self.lower[index]), floor)

    def source_for(self, levels: tuple[int, ...]) -> tuple[ClassTable | None, Any]:
        """Where the classes at ``levels`` are: ``(None, frequency set)`` when a collected
        roll-up lies below them (the set at ``levels`` on the driver), else ``(class table
        on Spark, None)``."""
        index = int((np.asarray(levels) * self.strides).sum())
        if self._local_source(self.nodes[index]):
            return None, self.frequency_set(index)
        return self._spark_source(index), None

    def close(self) -> None:
        """Release the roll-ups cached on Spark (not the base table) and the broadcast."""
        if self._shared is not None:
            self._shared.unpersist()
            self._shared = None
        for i, t in list(self._spark_tables.items()):
            if i != 0:
                t.unpersist()
        self._spark_tables = {0: self._spark_tables[0]} if 0 in self._spark_tables else {}


def node_figures(
    source: ClassTable,
    levels: tuple[int, ...],
    models: list[Any],
    metrics: Any,
    which: tuple[str, ...],
    shared: Any = None,
) -> tuple[np.ndarray, np.ndarray, dict[str, Any]]:
    """The figures of the node at ``levels``, summed over the shards of ``source``: per
    model (in order) the records suppressed once it and the ones before it have flagged
    their violating classes, each model's bound on the violations of finer nodes, and the
    metric partial sums of ``which`` with every flagged class suppressed. ``shared``: the
    pair ``(models, metrics)`` broadcast once for a whole search (else shipped per task)."""

    def work(frag: FrequencySet, fs: FrequencySet) -> dict[str, Any]:
        pair: tuple[Any, Any] = shared.value if shared is not None else here
        models, metrics = pair
        violating = np.zeros(fs.n_classes, dtype=bool)
        cum, fin = [], []
        for md in models:
            r = md.evaluate(fs)
            violating |= np.asarray(r.violating, dtype=bool)
            cum.append(int(fs.counts[violating].sum()))
            fin.append(float(md.finer_violations(fs, r)))
        base_keys = frag.keys if frag.levels == (0,) * len(frag.levels) else None
        base_counts = frag.counts if base_keys is not None else None
        p = metrics.partials(fs, violating, which, base_keys, base_counts)
        return {"cum": cum, "fin": fin, "p": p}

    here = (None, None) if shared is not None else (models, metrics)  # shipped per task
    entropy_root = "entropy" in which and metrics.spec.convention("entropy") == "root"
    parts = source.shards(levels, work, base=entropy_root and source.levels == (0,) * len(levels))
    cum = np.sum([p["cum"] for p in parts], axis=0) if parts else np.zeros(len(models))
    fin = np.sum([p["fin"] for p in parts], axis=0) if parts else np.zeros(len(models))
    partials = metrics.add_partials([p["p"] for p in parts])
    return np.asarray(cum), np.asarray(fin), partials
