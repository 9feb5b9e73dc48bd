"""Distinction and separation of quasi-identifiers and their combinations.

Definitions as in ARX's "attribute risk" view (Motwani & Xu 2007, *Efficient algorithms for
masking and finding quasi-identifiers*): for a set of attributes ``S`` over ``n`` records with
equivalence classes of sizes ``f_j``,

* distinction(S) = (number of distinct value combinations of S) / n;
* separation(S) = share of record pairs that differ on S
  = 1 - sum_j f_j (f_j - 1) / (n (n - 1)).

Both are computed from one frequency set, on its classes. All combinations up to a size are
grouped bottom up (:func:`sdckit.risk.subsets.walk_subsets`): a combination is grouped from a
subset on the classes not already unique there, each other class being a group of one, so
``distinction = (classes left out + groups) / n`` and ``separation`` sums over the groups
only. When the two largest levels of combinations would hold too many classes, each
combination is instead projected from the smallest already-computed superset.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations

import numpy as np

from sdckit.core.frequency import FrequencySet, group_keys
from sdckit.risk.subsets import walk_subsets

#: Memory the bottom-up walk may hold (two adjacent levels of open classes, 8 bytes each).
MAX_WALK_BYTES = 1_500_000_000


def distinction(counts: np.ndarray) -> float:
    """Distinct combinations / records, from the class sizes of a projection."""
    n = float(np.sum(counts))
    return float(np.count_nonzero(counts) / n) if n else 0.0


def separation(counts: np.ndarray) -> float:
    """Share of record pairs that differ, from the class sizes of a projection."""
    c = np.asarray(counts, dtype=np.float64)
    n = c.sum()
    if n < 2:
        return 1.0 if n == 1 else 0.0
    return float(1.0 - (c * (c - 1)).sum() / (n * (n - 1)))


def attribute_combinations(names: Sequence[str], max_size: int | None = None) -> list[tuple]:
    """Every combination of ``names`` up to ``max_size`` attributes, in a stable order.

    Default (``None``): all combinations when there are at most 10 names, else up to 3.
    """
    if max_size is None:
        max_size = len(names) if len(names) <= 10 else 3
    out: list[tuple] = []
    for size in range(1, min(max_size, len(names)) + 1):
        out.extend(combinations(names, size))
    return out


def distinction_separation(
    fs: FrequencySet, max_size: int | None = None
) -> tuple[dict[str, float], dict[str, float]]:
    """Distinction and separation for each QI combination, keyed ``"A"`` or ``"A,B"``, in
    :func:`attribute_combinations` order (see the module docstring for the two ways)."""
    names = list(fs.names)
    combos = attribute_combinations(names, max_size)
    top = max((len(c) for c in combos), default=0)
    sizes = [math.comb(len(names), k) for k in range(top + 1)]
    peak = max((sizes[k - 1] + sizes[k] for k in range(1, top)), default=0)
    if peak * fs.n_classes * 8 > MAX_WALK_BYTES:
        return _top_down(fs, max_size)
    n = float(fs.n_records)
    cards = [q.cardinality(lv) for q, lv in zip(fs.quasi_identifiers, fs.levels, strict=True)]
    dist: dict[str, float] = {}
    sep: dict[str, float] = {}
    for level in walk_subsets(fs.keys, cards, fs.counts, top):
        for subset, groups in level.items():
            key = ",".join(names[i] for i in subset)
            n_groups = fs.n_classes - len(groups.grouped) + groups.n_groups
            dist[key] = float(n_groups / n) if n else 0.0
            if n < 2:
                sep[key] = 1.0 if n == 1 else 0.0
            else:
                sep[key] = float(1.0 - groups.pairs / (n * (n - 1)))
    return dist, sep


def _top_down(
    fs: FrequencySet, max_size: int | None = None
) -> tuple[dict[str, float], dict[str, float]]:
    """:func:`distinction_separation` projecting each combination from a superset.

    Combinations are visited from the largest down; each is grouped from the cached superset
    with the fewest classes (one more attribute), on class keys, never on rows. Only class
    sizes are needed, so the grouping skips ordering the groups.
    """
    names = list(fs.names)
    cards = [q.cardinality(lv) for q, lv in zip(fs.quasi_identifiers, fs.levels, strict=True)]
    combos = attribute_combinations(names, max_size)
    full = tuple(range(len(names)))
    # columns (indices into ``names``) -> (class keys restricted to them, class sizes)
    cache: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray]] = {full: (fs.keys, fs.counts)}
    dist: dict[str, float] = {}
    sep: dict[str, float] = {}
    index = {n: i for i, n in enumerate(names)}
    # memory stays proportional to the data: only the level just above is kept as parents,
    # and only while the cached keys hold at most twice the frequency set's own
    budget = max(2 * fs.keys.size, 5_000_000)
    cached = 0
    level = len(names) + 1
    for combo in sorted(combos, key=len, reverse=True):
        cols = tuple(index[n] for n in combo)
        if len(cols) < level:
            level = len(cols)
            for stale in [c for c in cache if len(c) > level + 1 and c != full]:
                cached -= cache.pop(stale)[0].size
        if cols not in cache:
            parents = [
                tuple(sorted((*cols, j)))
                for j in range(len(names))
                if j not in cols and tuple(sorted((*cols, j))) in cache
            ]
            parent = min(parents, key=lambda p: len(cache[p][1])) if parents else full
            keys, counts = cache[parent]
            pos = [parent.index(c) for c in cols]
            group, n_groups, rep = group_keys(
                [keys[:, p] for p in pos], [cards[c] for c in cols], ordered=False
            )
            sizes = np.bincount(group, weights=counts, minlength=n_groups).astype(np.int64)
            if cached + n_groups * len(pos) <= budget:
                cache[cols] = (keys[rep][:, pos], sizes)
                cached += n_groups * len(pos)
        else:
            sizes = cache[cols][1]
        dist[",".join(combo)] = distinction(sizes)
        sep[",".join(combo)] = separation(sizes)
    order = {",".join(c): i for i, c in enumerate(combos)}
    return (
        dict(sorted(dist.items(), key=lambda kv: order[kv[0]])),
        dict(sorted(sep.items(), key=lambda kv: order[kv[0]])),
    )
