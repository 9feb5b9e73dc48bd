"""Personalized privacy: each person's own guarding node (Xiao & Tao 2006).

X. Xiao, Y. Tao, "Personalized privacy preservation", SIGMOD 2006, 229-240. The sensitive
attribute has a taxonomy (a hierarchy whose leaves are its values). Every person ``o`` names a
*guarding node* ``GN(o)`` of it: ``o`` does not want an adversary to learn that ``o``'s value
lies in the subtree of ``GN(o)``. The *breach probability* ``P_breach(o)`` is the probability
that the adversary infers this from the release; the release protects ``o`` when
``P_breach(o) <= p_breach``.

sdckit generalizes the quasi-identifiers only, so every released sensitive value is a leaf. In
the paper's primary case (the adversary knows ``o``'s quasi-identifier values and that ``o`` is
in the data, hence in ``o``'s class ``G``), each record of ``G`` is ``o``'s with probability
``1/|G|`` and

    ``P_breach(o) = |{t in G : t.S in subtree(GN(o))}| / |G|``

(the paper's formula with ungeneralized sensitive values, where a record's value covers the
guarding node's subtree entirely or not at all). A person without a guarding node (an empty
cell: the paper's "no preference") or with the root (whose subtree is the whole domain, which
the adversary knows anyway) is never breached. Persons of one class with the same guarding
node share their breach probability, so a class is checked per distinct guarding node in it:
with ``H`` the (classes x values) histogram of the attribute, ``C`` the (values x guarding
nodes) 0/1 matrix "value under node" and ``N`` the (classes x guarding nodes) histogram of the
guarding-node column, the class violates when for some node ``g`` with ``N[G, g] > 0``,
``(H C)[G, g] > p_breach |G|``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, ClassVar

import numpy as np
import pandas as pd
from pydantic import Field, PrivateAttr, model_validator

from sdckit.core.frequency import FrequencySet
from sdckit.core.hierarchy import Hierarchy
from sdckit.core.spec import ColumnName, Number
from sdckit.errors import ConfigError, HierarchyError
from sdckit.models._histograms import histogram, row_ids
from sdckit.models.base import ModelResult, PrivacyModel

if TYPE_CHECKING:  # scipy is imported where it is used
    from scipy import sparse

__all__ = ["PersonalizedPrivacy"]

# "P <= p_breach" is decided as "count <= p_breach * size * (1 + _SLACK)" so that a probability
# equal to the bound in exact arithmetic (1/4 against 0.25) does not fail by rounding.
_SLACK = 1e-12


def _range_join(items: np.ndarray, wanted: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All pairs ``(i, j)`` with ``items[i] == wanted[j]`` (``wanted[j] < 0`` matches none).

    Sorts ``items`` once; each ``wanted[j]`` is a run found by binary search, and the runs are
    expanded without a Python loop.
    """
    order = np.argsort(items, kind="stable")
    sorted_items = items[order]
    lo = np.searchsorted(sorted_items, wanted, side="left")
    hi = np.searchsorted(sorted_items, wanted, side="right")
    counts = np.where(wanted >= 0, hi - lo, 0)
    total = int(counts.sum())
    cols = np.repeat(np.arange(len(wanted), dtype=np.int64), counts)
    offsets = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    rows = order[np.repeat(lo, counts) + offsets]
    return rows.astype(np.int64), cols


class PersonalizedPrivacy(PrivacyModel):
    """Personalized privacy of ``attribute`` with each person's guarding node in the column
    ``guarding_node`` and the taxonomy ``hierarchy`` (the sensitive attribute's hierarchy).

    A guarding-node cell holds a label of the hierarchy (a leaf or a group at any level);
    empty cells mean no guarding node. A label used at several levels must name nested nodes
    (e.g. a group and its only child with the same label), else it is ambiguous (an error).

    Monotonicity: neither with suppression nor with generalization. Two satisfying classes
    can merge into one that breaches: ``{(guard: flu, value: cold)}`` plus
    ``{(no guard, flu), (no guard, flu)}`` give the guarded person a breach probability of
    ``2/3``, above any ``p_breach < 2/3``. So no lattice pruning relies on it, and
    ``minimal_class_size`` is 1 (a class of one person whose value is outside their subtree
    is not breached).

    Parameters
    ----------
    attribute : str
        The sensitive attribute (its values are the hierarchy's leaves).
    guarding_node : str
        The column holding each person's guarding node (a hierarchy label, or empty).
    hierarchy : Hierarchy
        The taxonomy of the sensitive attribute (ARX's hierarchy format).
    p_breach : float
        The largest breach probability allowed, in [0, 1].

    Examples
    --------
    >>> from sdckit.core.hierarchy import Hierarchy
    >>> tree = Hierarchy([["flu", "respiratory", "*"], ["cold", "respiratory", "*"]], "d")
    >>> PersonalizedPrivacy("disease", "guard", tree, 0.25).describe()["p_breach"]
    0.25
    """

    spec_name: ClassVar[str] = "personalized_privacy"
    spec_label: ClassVar[str] = "personalized privacy"
    monotonic: ClassVar[bool] = False
    monotonic_with_generalization: ClassVar[bool] = False

    attribute: ColumnName
    guarding_node: ColumnName
    hierarchy: Hierarchy
    p_breach: Annotated[Number, Field(ge=0, le=1)]

    _cover: tuple[np.ndarray, np.ndarray, sparse.csr_matrix] | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _distinct_columns(self) -> PersonalizedPrivacy:
        if self.attribute == self.guarding_node:
            raise ValueError(
                f"'guarding_node' must be another column than the sensitive attribute "
                f"{self.attribute!r}: the column where each person names their guarding node"
            )
        return self

    @property
    def name(self) -> str:
        return (
            f"personalized privacy (p_breach={self.p_breach:g}, {self.attribute}, "
            f"guarding nodes: {self.guarding_node})"
        )

    @property
    def sensitive_attributes(self) -> tuple[str, ...]:
        return (self.attribute, self.guarding_node)

    # -- the (values x guarding nodes) cover matrix --------------------------------------
    def _leaf_cover(self, guards: np.ndarray) -> sparse.csr_matrix:
        """(hierarchy leaves x guard labels) 0/1: leaf under the node the label names.

        Root nodes (covering every leaf) and empty labels get an empty column (never
        breached); a label that is no node of the hierarchy is an error naming it.
        """
        from scipy import sparse

        hier = self.hierarchy
        n_leaves, n_guards = len(hier.leaves), len(guards)
        rows, cols = [np.zeros(0, dtype=np.int64)], [np.zeros(0, dtype=np.int64)]
        largest = np.zeros(n_guards, dtype=np.int64)  # leaves of the largest matching node
        found = np.zeros(n_guards, dtype=bool)
        for level in range(hier.height):
            node = pd.Index(hier.labels[level]).get_indexer(guards).astype(np.int64)
            node[guards == ""] = -1
            r, c = _range_join(hier.levels[level].astype(np.int64), node)
            rows.append(r)
            cols.append(c)
            found |= node >= 0
            largest = np.maximum(largest, np.bincount(c, minlength=n_guards))
        unknown = ~found & (guards != "")
        if unknown.any():
            shown = ", ".join(repr(str(g)) for g in guards[unknown][:5])
            raise HierarchyError(
                f"{self.name}: column {self.guarding_node!r} names guarding node(s) {shown} "
                f"that are not labels of the hierarchy {hier.name!r}; use a label of the "
                "hierarchy (a value or a group at any level), or leave the cell empty for no "
                "guarding node"
            )
        r, c = np.concatenate(rows), np.concatenate(cols)
        cover = sparse.csr_matrix(
            (np.ones(len(r), dtype=np.int64), (r, c)), shape=(n_leaves, n_guards)
        )
        cover.sum_duplicates()
        cover.data[:] = 1
        size = np.diff(cover.tocsc().indptr)
        ambiguous = size > largest
        if ambiguous.any():
            shown = ", ".join(repr(str(g)) for g in guards[ambiguous][:5])
            raise HierarchyError(
                f"{self.name}: label(s) {shown} name different groups at different levels of "
                f"the hierarchy {hier.name!r}, so the guarding node is ambiguous; give the "
                "groups distinct labels"
            )
        root = size == n_leaves
        if root.any():
            keep = np.flatnonzero(~root)
            select = sparse.csr_matrix(
                (np.ones(len(keep)), (keep, keep)), shape=(n_guards, n_guards)
            )
            cover = (cover @ select).tocsr()
        return cover

    def _value_cover(self, fs: FrequencySet) -> sparse.csr_matrix:
        """(sensitive values x guarding-node codes) 0/1 of ``fs``'s codings (cached)."""
        values = fs.sensitive_values.get(self.attribute)
        guards = fs.sensitive_values.get(self.guarding_node)
        if values is None or guards is None:
            raise ConfigError(
                f"{self.name}: the frequency set carries no labels for {self.attribute!r} "
                f"and {self.guarding_node!r}; build it with both as sensitive attributes"
            )
        cached = self._cover
        if cached is not None:
            same_values = values is cached[0] or np.array_equal(values, cached[0])
            same_guards = guards is cached[1] or np.array_equal(guards, cached[1])
            if same_values and same_guards:
                return cached[2]
        try:
            leaf = self.hierarchy.leaf_index(values, column=self.attribute)
        except HierarchyError as exc:
            raise HierarchyError(f"{self.name}: {exc}") from None
        guard_labels = np.asarray(guards, dtype=object).astype(str)
        cover = self._leaf_cover(guard_labels)[leaf].tocsr()
        self._cover = (values, guards, cover)
        return cover

    # -- evaluation ----------------------------------------------------------------------
    def covered_counts(self, fs: FrequencySet) -> tuple[sparse.csr_matrix, np.ndarray]:
        """(classes x guarding nodes): the records of each class under a node, kept where a
        person of the class guards that node (canonical CSR); and per class the records
        whose guarding node covers some value (not empty, not the root)."""
        cover = self._value_cover(fs)
        values = histogram(fs, self.attribute, self.name)
        guards = histogram(fs, self.guarding_node, self.name)
        present = guards.copy()
        present.data = np.ones_like(present.data)
        covered = (values @ cover).tocsr().multiply(present).tocsr()
        covered.eliminate_zeros()
        covered.sort_indices()
        real = np.asarray(cover.sum(axis=0)).ravel() > 0
        guarded = np.asarray(guards[:, np.flatnonzero(real)].sum(axis=1)).ravel()
        return covered, guarded.astype(np.int64)

    def breach_probabilities(self, fs: FrequencySet) -> np.ndarray:
        """Per class the largest breach probability of a person in it (0 when none guards)."""
        covered, _ = self.covered_counts(fs)
        return self._largest(covered, fs)

    @staticmethod
    def _largest(covered: sparse.csr_matrix, fs: FrequencySet) -> np.ndarray:
        out = np.zeros(fs.n_classes)
        if covered.nnz == 0:
            return out
        nonempty = np.diff(covered.indptr) > 0
        top = np.maximum.reduceat(covered.data, covered.indptr[:-1][nonempty])
        out[nonempty] = top / fs.counts[nonempty]
        return out

    def prepare(self, base: FrequencySet) -> None:
        """Match the values and the guarding nodes with the hierarchy (errors name them)."""
        self._value_cover(base)

    def evaluate(self, fs: FrequencySet) -> ModelResult:
        """Flag the classes where a person's breach probability exceeds ``p_breach``.

        The result's ``class_values`` are the classes' largest breach probabilities.
        """
        covered, guarded = self.covered_counts(fs)
        sizes = np.asarray(fs.counts, dtype=np.float64)
        rows = row_ids(covered.indptr)
        over = covered.data > self.p_breach * sizes[rows] * (1 + _SLACK)
        violating = np.zeros(fs.n_classes, dtype=bool)
        violating[rows[over]] = True
        probability = self._largest(covered, fs)
        details = {
            "attribute": self.attribute,
            "guarding_node": self.guarding_node,
            "p_breach": self.p_breach,
            "max_breach_probability": float(probability.max()) if probability.size else 0.0,
            "guarded_records": int(guarded.sum()),
            "violating_classes": int(np.count_nonzero(violating)),
            "violating_records": int(fs.counts[violating].sum()),
        }
        return self._result(violating, details, class_values=probability)

    def describe(self) -> dict:
        """The job-file entry, with the hierarchy given by its name."""
        out = super().describe()
        out["hierarchy"] = self.hierarchy.name
        return out
