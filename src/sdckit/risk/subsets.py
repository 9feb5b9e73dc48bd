"""Groupings of every key-variable subset, bottom up, on the records not yet unique.

SUDA2 (minimal sample uniques) and distinction/separation both need, for many subsets ``S``
of the key variables, how the records group on ``S``. A record unique on a subset ``P`` is
unique on every superset ``T`` of ``P``, and it is alone in its group of ``T``: another record
sharing its values on ``T`` would share them on ``P`` too. So ``T`` is grouped from one
subset ``P = T \\ {j}`` on the records that are *not* unique on ``P`` only (the parent with
the fewest of them is chosen); every other record is a group of one in ``T``. This is the
pruning of Manning, Haglin & Keane's SUDA2 (2008, *A recursive search algorithm for
statistical disclosure assessment*, DMKD 16:165-196: a record unique on a subset is not
searched further); on near-unique data the records left shrink quickly with the subset size.

Records may stand for several (``weights``: e.g. the class sizes of a frequency set); a group
is unique when its weights sum to 1. From :data:`KERNEL_ROWS` records on, each grouping is
one numba kernel (:mod:`sdckit.risk._subsets_kernel`); below, numpy (the same groups).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from sdckit.core.frequency import _DENSE_FACTOR, _DENSE_FLOOR, _dense_ranks, group_keys

__all__ = ["KERNEL_ROWS", "SubsetGroups", "walk_subsets"]

#: Records from which the walk groups with the numba kernel (fewer: numpy, no numba start-up).
KERNEL_ROWS = 100_000


@dataclass(frozen=True)
class SubsetGroups:
    """The grouping of one subset ``T`` (a sorted tuple of key-variable indices).

    ``grouped``: the (sorted) records grouped on ``T`` -- those not unique on the parent it
    was grouped from; every other record is alone in its group of ``T``. ``unique``: per
    ``grouped`` record, whether its group of ``T`` weighs 1. ``n_groups`` and ``pairs``: the
    number of groups of the ``grouped`` records and the sum of ``s (s - 1)`` over their
    weights ``s``. ``open_rows``: the records not unique on ``T`` (sorted) and ``ids`` their
    dense group ids (``n_ids`` groups), from which the supersets of ``T`` are grouped;
    ``single_open``: whether one of them stands for a single record (weight 1)."""

    subset: tuple[int, ...]
    grouped: np.ndarray
    unique: np.ndarray
    n_groups: int
    pairs: float
    open_rows: np.ndarray
    ids: np.ndarray
    n_ids: int
    single_open: bool

    def open_mask(self, n: int) -> np.ndarray:
        """Per record ``0 .. n-1``: whether it is *not* unique on this subset."""
        mask = np.zeros(n, dtype=bool)
        mask[self.open_rows] = True
        return mask


def _group_numpy(
    parent: SubsetGroups, subset: tuple[int, ...], column: np.ndarray, card: int, w: np.ndarray
) -> SubsetGroups:
    rows = parent.open_rows
    group, n_groups, _ = group_keys([parent.ids, column[rows]], [parent.n_ids, card], ordered=False)
    sizes = np.bincount(group, weights=w[rows], minlength=n_groups).astype(np.int64)
    unique = sizes[group] == 1
    keep = sizes != 1  # groups of more than one record stay open
    remap = np.cumsum(keep) - 1
    stays = ~unique
    open_rows = rows[stays]
    return SubsetGroups(
        subset=subset,
        grouped=rows,
        unique=unique,
        n_groups=n_groups,
        pairs=float(np.sum(sizes * (sizes - 1.0))),
        open_rows=open_rows,
        ids=remap[group[stays]],
        n_ids=int(np.count_nonzero(keep)),
        single_open=bool((w[open_rows] == 1).any()),
    )


def _group_kernel(
    parent: SubsetGroups, subset: tuple[int, ...], column: np.ndarray, card: int, w: np.ndarray
) -> SubsetGroups:
    from sdckit.risk._subsets_kernel import combine, split

    rows = parent.open_rows
    keys = combine(parent.ids, column, rows, card)
    radix = parent.n_ids * card
    if radix > _DENSE_FLOOR + _DENSE_FACTOR * len(rows):  # a table would be too large: hash
        keys, radix = _dense_ranks(keys, ordered=False)
    unique, open_rows, ids, n_ids, n_groups, pairs, single = split(keys, rows, w, max(radix, 1))
    return SubsetGroups(subset, rows, unique, int(n_groups), float(pairs), open_rows, ids,
                        int(n_ids), bool(single))  # fmt: skip


def walk_subsets(
    codes: np.ndarray,
    cards: np.ndarray | list[int],
    weights: np.ndarray,
    max_size: int,
) -> Iterator[dict[tuple[int, ...], SubsetGroups]]:
    """Yield, for ``k = 1 .. max_size``, the groupings of every size-``k`` subset of the
    columns of ``codes`` (records x key variables, ``0 <= codes[:, j] < cards[j]``), keyed
    by subset in :func:`itertools.combinations` order. ``weights``: the records each row
    stands for (positive integers). The consumer may stop early; only the previous level is
    kept."""
    n, m = codes.shape
    total = int(np.sum(weights))
    kernel = n >= KERNEL_ROWS and total < 2**31  # the kernel counts in 32 bits
    index = np.int32 if kernel else np.int64
    columns = [np.ascontiguousarray(codes[:, j], dtype=np.int64) for j in range(m)]
    w = np.ascontiguousarray(weights, dtype=index)
    group = _group_kernel if kernel else _group_numpy
    everyone = np.arange(n, dtype=index)
    root = SubsetGroups((), everyone, np.zeros(n, dtype=bool), 1 if n else 0, 0.0, everyone,
                        np.zeros(n, dtype=index), 1 if n else 0, bool((w == 1).any()))  # fmt: skip
    previous: dict[tuple[int, ...], SubsetGroups] = {(): root}
    for k in range(1, max_size + 1):
        current: dict[tuple[int, ...], SubsetGroups] = {}
        for subset in combinations(range(m), k):
            # grouped from the parent with the fewest records left open
            parents = [previous[subset[:i] + subset[i + 1 :]] for i in range(k)]
            drop = min(range(k), key=lambda i: len(parents[i].open_rows))
            parent = parents[drop]
            last = subset[drop]
            current[subset] = group(parent, subset, columns[last], int(cards[last]), w)
        yield current
        previous = current
