"""Spanning variables of a table: a tree of codes per dimension.

A dimension holds every code a table publishes for one spanning variable: the total (the
root), the sub-totals of its hierarchy and the categories (the leaves). Node 0 is the root;
every other node has one parent, and a node's cell equals the sum of its children's cells in
every table built on it (the additivity an intruder exploits, Willenborg & de Waal 2001,
ch. 4; tau-Argus and sdcTable hold hierarchies the same way).

A dimension comes from a generalization hierarchy (ARX's CSV format, or a builder of
:mod:`sdckit.core.hierarchy_builders`): level 0 gives the categories, the last level the
total. A node with exactly one child stands for the same records as that child and is merged
with it (the coarser code is kept), as tau-Argus does for a code without a breakdown.
Without a hierarchy the dimension is flat: a total (``"Total"``) over the distinct values.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
import pandas as pd

from sdckit.core.encoding import as_text
from sdckit.core.hierarchy import Hierarchy
from sdckit.errors import DataError, HierarchyError, preview

__all__ = ["Dimension", "TOTAL"]

#: The code of a flat dimension's total.
TOTAL = "Total"


@dataclass(frozen=True)
class Dimension:
    """One spanning variable: ``codes[i]`` with ``parent[i]`` (``-1`` for the root, node 0).

    Nodes are ordered parents before children (breadth first from the root), so
    ``depth`` never decreases along the array. ``leaf_of`` maps each category (a value of
    the microdata column) to its leaf node.
    """

    name: str
    codes: np.ndarray
    parent: np.ndarray
    leaf_of: dict[str, int] = field(repr=False)

    def __post_init__(self) -> None:
        if len(self.codes) != len(self.parent) or self.parent[0] != -1:
            raise HierarchyError(f"dimension {self.name!r}: malformed tree")
        dup = pd.Index(self.codes).duplicated()
        if dup.any():
            raise HierarchyError(
                f"dimension {self.name!r}: code {self.codes[int(np.argmax(dup))]!r} stands for "
                "two different sets of categories; a table needs each code once (rename one)"
            )

    # -- construction ----------------------------------------------------------------------
    @classmethod
    def flat(cls, name: str, categories: Sequence[str], total: str = TOTAL) -> Dimension:
        """A total over ``categories`` (kept in the order given)."""
        cats = [str(c) for c in categories]
        if total in cats:
            raise DataError(
                f"dimension {name!r}: a category is called {total!r}, the code of the total; "
                "rename it or give the dimension a hierarchy naming its root"
            )
        codes = np.array([total, *cats], dtype=object)
        parent = np.array([-1] + [0] * len(cats), dtype=np.int64)
        return cls(name, codes, parent, {c: i + 1 for i, c in enumerate(cats)})

    @classmethod
    def from_hierarchy(cls, name: str, hierarchy: Hierarchy) -> Dimension:
        """The tree of a generalization hierarchy (levels ``0 .. height-1``, one root).

        Nodes with a single child are merged with it; the root is the last level's label.
        """
        height = hierarchy.height
        top = hierarchy.labels[height - 1]
        if len(top) != 1:
            raise HierarchyError(
                f"dimension {name!r}: the hierarchy's last level has {len(top)} labels "
                f"({preview(top)}); a table needs one total: add a level with a single code"
            )
        n_leaves = len(hierarchy.labels[0])
        # node key (level, code at that level); the members of a node are its leaves
        parent_of: dict[tuple[int, int], tuple[int, int]] = {}
        n_children: dict[tuple[int, int], int] = {}
        for h in range(height - 1):
            lo, hi = hierarchy.levels[h], hierarchy.levels[h + 1]
            pairs = np.unique(np.stack([lo, hi], axis=1), axis=0)
            for a, b in pairs.tolist():
                parent_of[(h, a)] = (h + 1, b)
                n_children[(h + 1, b)] = n_children.get((h + 1, b), 0) + 1

        def kept(node: tuple[int, int]) -> tuple[int, int]:
            # a node whose parent has only this child is represented by the parent
            while node in parent_of and n_children[parent_of[node]] == 1:
                node = parent_of[node]
            return node

        root = (height - 1, 0)
        nodes: list[tuple[int, int]] = [root]
        index = {root: 0}
        parents = [-1]
        # breadth first: level by level from the top
        for h in range(height - 2, -1, -1):
            for c in range(len(hierarchy.labels[h])):
                node = (h, c)
                if kept(node) != node:
                    continue
                up = kept(parent_of[node])
                index[node] = len(nodes)
                nodes.append(node)
                parents.append(index[up])
        order = np.argsort(np.array([_depth(i, parents) for i in range(len(nodes))]), kind="stable")
        remap = np.empty(len(nodes), dtype=np.int64)
        remap[order] = np.arange(len(nodes))
        codes = np.array(
            [str(hierarchy.labels[h][c]) for h, c in (nodes[i] for i in order)], dtype=object
        )
        parent = np.array(
            [-1 if parents[i] < 0 else int(remap[parents[i]]) for i in order], dtype=np.int64
        )
        leaf_of = {
            str(hierarchy.labels[0][leaf]): int(remap[index[kept((0, leaf))]])
            for leaf in range(n_leaves)
        }
        return cls(name, codes, parent, leaf_of)

    # -- structure ---------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.codes)

    @cached_property
    def depth(self) -> np.ndarray:
        """Distance of each node from the root (root 0)."""
        out = np.zeros(len(self.codes), dtype=np.int64)
        for i in range(1, len(self.codes)):
            out[i] = out[self.parent[i]] + 1
        return out

    @cached_property
    def children(self) -> list[np.ndarray]:
        """The children of every node."""
        order = np.argsort(self.parent, kind="stable")
        sorted_parents = self.parent[order]
        out = []
        for i in range(len(self.codes)):
            lo, hi = np.searchsorted(sorted_parents, [i, i + 1])
            out.append(order[lo:hi])
        return out

    @cached_property
    def is_leaf(self) -> np.ndarray:
        """Whether each node has no children."""
        counts = np.bincount(self.parent[1:], minlength=len(self.codes))
        return counts == 0

    @cached_property
    def ancestors(self) -> list[np.ndarray]:
        """Every node's chain from itself up to the root."""
        out: list[np.ndarray] = []
        for i in range(len(self.codes)):
            chain = [i]
            while self.parent[chain[-1]] >= 0:
                chain.append(int(self.parent[chain[-1]]))
            out.append(np.array(chain, dtype=np.int64))
        return out

    @cached_property
    def index_of(self) -> dict[str, int]:
        """Code -> node."""
        return {str(c): i for i, c in enumerate(self.codes)}

    def unknown_category(
        self, value: str, row: int, unknown: Sequence[str], column: str | None = None
    ) -> DataError:
        """The error for microdata values that are not categories of this dimension: the
        first one, ``value`` at 0-based ``row``, and all of them (``unknown``, distinct, in
        order of first appearance)."""
        return DataError(
            f"column {column or self.name!r}: value {value!r} (row {row + 1}) is not a "
            f"category of dimension {self.name!r} ({len(unknown)} such value(s): "
            f"{preview(unknown)}); add it to the hierarchy"
        )

    def leaves_for(self, values: Sequence, column: str | None = None) -> np.ndarray:
        """The leaf node of every microdata value; DataError naming the first unknown one."""
        text = as_text(pd.Series(values, dtype=object))
        cats = pd.Index(list(self.leaf_of))
        pos = cats.get_indexer(pd.Index(np.asarray(text, dtype=object)))
        if (pos < 0).any():
            i = int(np.flatnonzero(pos < 0)[0])
            missing = pd.unique(np.asarray(text, dtype=object)[pos < 0])
            raise self.unknown_category(text[i], i, list(missing), column)
        leaf_nodes = np.fromiter(self.leaf_of.values(), dtype=np.int64, count=len(self.leaf_of))
        return leaf_nodes[pos]


def _depth(i: int, parents: list[int]) -> int:
    d = 0
    while parents[i] >= 0:
        i = parents[i]
        d += 1
    return d
