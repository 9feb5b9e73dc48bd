"""Frequency sets at many generalization levels, each rolled up from a cached finer one.

A lattice search decides thousands of transformations (level vectors) of the same data. Each
transformation's frequency set is a roll-up (:meth:`FrequencySet.rollup`) of an already
computed finer one: the cached set below it (componentwise lower or equal levels) with the
fewest classes, so that the roll-up touches as few classes as possible. This is ARX's
snapshot / roll-up scheme (Kohlmayer, Prasser, Eckert, Kemper & Kuhn 2012, "Flash: efficient,
stable and optimal k-anonymity", Section 5; Prasser & Kohlmayer 2015, "Putting statistical
disclosure control into practice: the ARX data anonymization tool"). When that source is still
large, the roll-up first goes to the transformation halfway and keeps it as a snapshot, so
that the next transformations in the region start from a small set.

:class:`RollupCache` is the one such cache: the optimal search keeps the sample's frequency
sets in it, and the population models (k-map, δ-presence) their population's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from sdckit.core.frequency import FrequencySet

__all__ = ["SNAPSHOT_CLASSES", "RollupCache"]

SNAPSHOT_CLASSES = 2000  # sources larger than this get an intermediate snapshot
_CACHE_BUDGET = 20_000_000  # classes kept in cached frequency sets (all nodes together)
#: ... and at most this many times the base frequency set's classes, so that the cache (some
#: 60 bytes a class) stays proportional to the data: 2,000,000 nearly unique records would
#: otherwise cache 20,000,000 classes (over 1 GB) on top of the data itself.
_CACHE_PER_BASE_CLASS = 3


class RollupCache:
    """Frequency sets by generalization levels, new ones rolled up from cached finer ones.

    ``base_classes`` (the classes of the ungeneralized set) sizes the budget of cached
    classes. ``keep_maps`` keeps each set's maps to the base classes and rows (the entropy
    metric reads them); without it they are dropped from cached sets to save memory. Nothing
    is cached at first: :meth:`store` the base set (``force=True``) before :meth:`get`.
    """

    def __init__(self, base_classes: int, n_qis: int, keep_maps: bool = False) -> None:
        self.keep_maps = keep_maps
        self._sets: dict[tuple[int, ...], FrequencySet] = {}
        self._levels = np.zeros((64, n_qis), dtype=np.int32)
        self._classes = np.zeros(64, dtype=np.int64)
        self._order: list[tuple[int, ...]] = []
        self._total = 0
        self.budget = min(_CACHE_BUDGET, max(1_000_000, _CACHE_PER_BASE_CLASS * base_classes))

    def __contains__(self, levels: Sequence[int] | np.ndarray) -> bool:
        return tuple(int(x) for x in levels) in self._sets

    def store(
        self, levels: Sequence[int] | np.ndarray, fs: FrequencySet, force: bool = False
    ) -> None:
        """Keep ``fs`` (the set at ``levels``) as a roll-up source, unless the budget of
        cached classes is spent (``force``: keep it anyway, e.g. the base set)."""
        key = tuple(int(x) for x in levels)
        if key in self._sets or (self._total + fs.n_classes > self.budget and not force):
            return
        if not self.keep_maps:
            fs = replace(fs, base_row_class=None, base_map=None, parent_map=None)
        k = len(self._order)
        if k == len(self._classes):
            self._levels = np.concatenate([self._levels, self._levels])
            self._classes = np.concatenate([self._classes, self._classes])
        self._levels[k] = key
        self._classes[k] = fs.n_classes
        self._order.append(key)
        self._sets[key] = fs
        self._total += fs.n_classes

    def has_source(self, levels: Sequence[int] | np.ndarray) -> bool:
        """Whether a cached set lies at or below ``levels`` (so :meth:`get` can roll up)."""
        k = len(self._order)
        node = np.asarray(levels)
        return bool(k) and bool((self._levels[:k] <= node).all(axis=1).any())

    def get(self, levels: Sequence[int] | np.ndarray) -> FrequencySet:
        """The frequency set at ``levels``: cached, else rolled up from the cached set below
        with the fewest classes (through a snapshot halfway when that one is large)."""
        key = tuple(int(x) for x in levels)
        cached = self._sets.get(key)
        if cached is not None:
            return cached
        node = np.asarray(key, dtype=np.int32)
        k = len(self._order)
        cand = np.flatnonzero((self._levels[:k] <= node).all(axis=1))
        if not len(cand):
            raise ValueError(f"no cached frequency set lies below the levels {list(key)}")
        src = self._order[int(cand[np.argmin(self._classes[cand])])]
        source = self._sets[src]
        if source.n_classes > SNAPSHOT_CLASSES:
            mid = tuple(int(x) for x in (np.asarray(src) + node) // 2)
            if mid != src and mid != key and mid not in self._sets:
                source = source.rollup(mid)
                self.store(mid, source)
        return source.rollup(key)
