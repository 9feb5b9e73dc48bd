"""The frequency-set engine: equivalence classes of quasi-identifier combinations.

This is the single place whose cost grows with the number of rows (docs/architecture.md,
"work on equivalence classes, not rows"). Everything else -- privacy models, risk measures,
generalization metrics, lattice search -- reads a :class:`FrequencySet`:

* ``keys``: one row per equivalence class, the QI codes (at the generalization ``levels``);
* ``counts``: the class sizes ``f_j``;
* ``sensitive``: per sensitive attribute, a sparse (classes x values) histogram;
* ``weights``: per class, the sum of the sampling weights (when given).

Grouping uses integer keys only: the per-column codes are combined in mixed radix; when the
radix product would overflow 62 bits, the partial key is first compacted to dense ranks
(``np.unique``), so the grouping stays exact (no hash collisions). Coarser generalizations are
computed by :meth:`FrequencySet.rollup` from a finer frequency set, never from the rows
(ARX's "roll-up"; Kohlmayer et al. 2012, *Flash: efficient, stable and optimal k-anonymity*).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from sdckit.core.encoding import EncodedColumn, _arrow_dictionary, as_text, encode
from sdckit.errors import DataError

if TYPE_CHECKING:  # pragma: no cover
    from scipy import sparse  # imported where used: a k-anonymity run never needs scipy

    from sdckit.core.hierarchy import Hierarchy

_KEY_LIMIT = 1 << 62
# A bincount table over all possible keys costs O(radix); sorting costs O(n log n). Use the
# table while the key space is at most a few times the item count (plus a small floor).
_DENSE_FLOOR = 1 << 12
_DENSE_FACTOR = 8


def _dense_ranks(key: np.ndarray, ordered: bool = True) -> tuple[np.ndarray, int]:
    """Rank of each key among the distinct keys (ascending), and the number of distinct keys.

    A hash-based factorization followed by a sort of the distinct keys only (pandas'
    ``factorize(sort=True)``): O(n + g log g) instead of sorting all n keys. With
    ``ordered=False`` the ids follow first occurrence instead (no sort at all).
    """
    if len(key) == 0:
        return np.zeros(0, dtype=np.int64), 0
    ranks, uniques = pd.factorize(key, sort=ordered)
    return ranks.astype(np.int64, copy=False), len(uniques)


def group_keys(
    codes: Sequence[np.ndarray],
    cardinalities: Sequence[int] | None = None,
    ordered: bool = True,
) -> tuple[np.ndarray, int, np.ndarray]:
    """Group items by the combination of their integer codes.

    ``codes[c][i]`` is item ``i``'s code in column ``c`` (``0 <= code < cardinalities[c]``;
    without ``cardinalities``, each column's largest code + 1).
    Returns ``(group, n_groups, representative)``: the dense group index of every item
    (groups ordered by their combined key, i.e. lexicographically by the codes, so the result
    does not depend on item order), the number of groups, and one item index per group.

    The key is built in mixed radix; when it would overflow 62 bits, the partial key is first
    replaced by the ranks of its distinct values (order kept, exact: no hash collisions).
    The final keys become group indices through a presence table when the key space is
    small (O(radix)), else through a hash factorization plus a sort of the distinct keys.
    ``ordered=False`` skips that sort (group ids then follow first occurrence on that path):
    for callers that only need the grouping, such as class sizes of projections.
    """
    n = len(codes[0]) if codes else 0
    if cardinalities is None:
        cardinalities = [int(np.max(c, initial=0)) + 1 for c in codes]
    if not codes:
        return np.zeros(0, dtype=np.int64), (1 if n else 0), np.zeros(1, dtype=np.int64)
    key = np.zeros(n, dtype=np.int64)
    radix = 1
    for col, card in zip(codes, cardinalities, strict=True):
        card = max(int(card), 1)
        if radix * card >= _KEY_LIMIT:
            key, radix = _dense_ranks(key)
            radix = max(radix, 1)
        key = key * card + col.astype(np.int64, copy=False)
        radix *= card
    if radix <= _DENSE_FLOOR + _DENSE_FACTOR * n:
        present = np.bincount(key, minlength=radix) > 0
        remap = np.cumsum(present) - 1
        group = remap[key]
        n_groups = int(present.sum())
    else:
        group, n_groups = _dense_ranks(key, ordered)
    group = group.astype(np.int64, copy=False)
    representative = np.empty(n_groups, dtype=np.int64)
    representative[group] = np.arange(n, dtype=np.int64)
    return group, n_groups, representative


def regroup_histogram(h: sparse.csr_matrix, group: np.ndarray, n_groups: int) -> sparse.csr_matrix:
    """Sum the rows of a CSR count matrix by ``group`` (row ``r`` goes to ``group[r]``).

    The result is canonical (sorted indices, no explicit zeros). The (group, column) pairs are
    combined into one integer key and summed with a bincount table (or a sort when the table
    would be large), avoiding a sparse matrix product on every roll-up.
    """
    from scipy import sparse

    n_cols = h.shape[1]
    rows = np.repeat(group.astype(np.int64, copy=False), np.diff(h.indptr))
    key = rows * n_cols + h.indices
    size = n_groups * n_cols
    if size <= _DENSE_FACTOR * len(key) + 1024:
        dense = np.bincount(key, weights=h.data, minlength=size)
        present = np.zeros(size, dtype=bool)  # nonzero() on booleans is much faster
        present[key] = True
        cells = np.flatnonzero(present)
        data = dense[cells]
    else:
        cells, inverse = np.unique(key, return_inverse=True)
        data = np.bincount(inverse, weights=h.data, minlength=len(cells))
    new_rows = cells // n_cols
    index_type = np.int32 if len(cells) < 2**31 - 1 else np.int64
    indptr = np.zeros(n_groups + 1, dtype=index_type)
    np.cumsum(np.bincount(new_rows, minlength=n_groups), out=indptr[1:])
    return sparse.csr_matrix(
        (data.astype(np.int64), (cells - new_rows * n_cols).astype(index_type), indptr),
        shape=(n_groups, n_cols),
    )


@dataclass(frozen=True)
class QuasiIdentifier:
    """A quasi-identifier encoded once at leaf level, with its hierarchy (if any).

    ``codes`` are leaf codes: the leaf index in ``hierarchy`` when there is one, else
    dictionary codes into ``values``. ``cardinality(h)`` is the number of distinct codes at
    level ``h``; ``step(a, b)`` maps codes at level ``a`` to level ``b``.
    """

    name: str
    codes: np.ndarray
    values: np.ndarray
    hierarchy: Hierarchy | None = None

    @property
    def height(self) -> int:
        """Number of generalization levels (1 without a hierarchy)."""
        return self.hierarchy.height if self.hierarchy is not None else 1

    def cardinality(self, level: int = 0) -> int:
        """Number of distinct codes at ``level``."""
        if self.hierarchy is None:
            return len(self.values)
        return len(self.hierarchy.labels[level])

    def step(self, from_level: int, to_level: int) -> np.ndarray:
        """Code map from ``from_level`` to ``to_level`` (identity when equal)."""
        if from_level == to_level:
            return np.arange(self.cardinality(from_level), dtype=np.int32)
        if self.hierarchy is None:
            raise DataError(
                f"quasi-identifier {self.name!r} has no hierarchy and cannot be generalized; "
                "give it a hierarchy file or an interval/order/masking/date builder"
            )
        return self.hierarchy.map_codes(from_level, to_level)

    def codes_at(self, level: int) -> np.ndarray:
        """Per-row codes at ``level``."""
        if level == 0:
            return self.codes
        return self.step(0, level)[self.codes]

    def labels(self, level: int = 0) -> np.ndarray:
        """Label of each code at ``level``."""
        if self.hierarchy is None:
            return self.values
        return self.hierarchy.labels[level]


def encode_quasi_identifier(
    values: pd.Series, name: str, hierarchy: Hierarchy | None = None
) -> QuasiIdentifier:
    """Encode a QI column once: leaf indices into its hierarchy, else dictionary codes.

    With a hierarchy the column is factorized on its native dtype first and only the distinct
    values are matched against the hierarchy's leaves (text matching is per distinct value,
    not per row).
    """
    if hierarchy is not None:
        s = values if isinstance(values, pd.Series) else pd.Series(values)
        arrow = _arrow_dictionary(s)
        if arrow is not None:  # Arrow-backed text: its dictionary (texts, missing = "")
            raw_codes, texts = arrow
            leaf = hierarchy.leaf_index_text(texts, column=name).astype(np.int32, copy=False)
            codes = leaf[raw_codes]
            return QuasiIdentifier(
                name, codes, np.asarray(hierarchy.leaves, dtype=object), hierarchy
            )
        raw, uniques = pd.factorize(s, use_na_sentinel=False)
        distinct = pd.Series(uniques, dtype=s.dtype if len(uniques) else None)
        leaf = hierarchy.leaf_index(distinct, column=name).astype(np.int32, copy=False)
        codes = leaf[raw] if len(raw) else np.zeros(0, dtype=np.int32)
        return QuasiIdentifier(name, codes, np.asarray(hierarchy.leaves, dtype=object), hierarchy)
    enc = encode(values, name)
    return QuasiIdentifier(name, enc.codes, enc.values, None)


class JointAttribute(str):
    """Several columns read as one sensitive attribute: each record's combination of values.

    A model whose quantity depends on the joint values of several columns (e.g. (X,Y)-privacy
    with ``Y`` = diagnosis and doctor) names a ``JointAttribute`` among its
    ``sensitive_attributes``; the frequency set then carries one (classes x combinations)
    histogram for it, under the name ``"(a, b)"``. :func:`sensitive_column` gives its values.
    """

    columns: tuple[str, ...]

    def __new__(cls, columns: Sequence[str]) -> JointAttribute:
        cols = tuple(str(c) for c in columns)
        if len(cols) < 2 or len(set(cols)) != len(cols):
            raise DataError(
                f"a joint attribute needs two or more distinct columns, got {list(cols)}"
            )
        obj = super().__new__(cls, "(" + ", ".join(cols) + ")")
        obj.columns = cols
        return obj

    def __reduce__(self) -> tuple[type[JointAttribute], tuple[tuple[str, ...]]]:
        """Pickle by the columns (a str subclass would otherwise be rebuilt from its text)."""
        return (JointAttribute, (self.columns,))


def attribute_columns(attribute: str) -> tuple[str, ...]:
    """The data columns a sensitive attribute reads: its own, or a joint attribute's."""
    if isinstance(attribute, JointAttribute):
        return attribute.columns
    return (attribute,)


def sensitive_column(data: pd.DataFrame, attribute: str) -> pd.Series:
    """The values of sensitive ``attribute`` in ``data``: the column, or for a
    :class:`JointAttribute` one label per record naming its combination of values.

    The combinations are grouped on the columns' codes (exact, as quasi-identifiers are), and
    each distinct combination is labelled by the JSON list of its values' texts
    (``'["flu", "dr1"]'``), so two different combinations never share a label.
    """
    if not isinstance(attribute, JointAttribute):
        return data[attribute]
    import json

    missing = [c for c in attribute.columns if c not in data.columns]
    if missing:
        raise DataError(
            f"column(s) {', '.join(map(repr, missing))} of the joint attribute {attribute} not "
            f"found; available columns: {', '.join(map(str, data.columns))}"
        )
    texts = [as_text(data[c]) for c in attribute.columns]
    factorized = [pd.factorize(t, use_na_sentinel=False) for t in texts]
    group, _, rep = group_keys(
        [codes.astype(np.int64) for codes, _ in factorized], [len(u) for _, u in factorized]
    )
    labels = np.array(
        [json.dumps([str(t[r]) for t in texts], ensure_ascii=False) for r in rep], dtype=object
    )
    return pd.Series(labels[group], index=data.index, name=str(attribute), dtype=object)


def encode_ordered(
    values: pd.Series, name: str, order: Sequence[str] | None = None
) -> EncodedColumn:
    """Encode a (sensitive) column so that codes follow the attribute's order.

    With ``order`` the codes follow it (values not in it are an error); otherwise numbers are
    ordered numerically when every non-missing value parses as a number, else texts sort.
    This order is what ordered-distance t-closeness uses.
    """
    text = as_text(values)
    if order is not None:
        pos = {v: i for i, v in enumerate(order)}
        missing = sorted({v for v in pd.unique(text) if v not in pos})
        if missing:
            raise DataError(
                f"column {name!r} has values not in its declared order: {missing[:5]}; "
                "add them to the order list"
            )
        uniq = np.asarray(list(order), dtype=object)
        codes = np.fromiter((pos[v] for v in text), dtype=np.int32, count=len(text))
        return EncodedColumn(name, codes, uniq)
    enc = encode(text, name)
    nums = pd.to_numeric(pd.Series(enc.values), errors="coerce").to_numpy(dtype=float)
    present = enc.values != ""
    if len(enc.values) and np.isfinite(nums[present]).all() and present.any():
        rank = np.argsort(np.where(present, nums, -np.inf), kind="stable")
        inverse = np.empty_like(rank)
        inverse[rank] = np.arange(len(rank))
        return EncodedColumn(name, inverse[enc.codes].astype(np.int32), enc.values[rank])
    return enc


@dataclass
class FrequencySet:
    """Equivalence classes of the QI combination at given generalization levels.

    Built by :func:`frequency_set` from rows, or from another frequency set by
    :meth:`rollup` / :meth:`project` / :meth:`select`.
    """

    quasi_identifiers: tuple[QuasiIdentifier, ...]
    levels: tuple[int, ...]
    keys: np.ndarray  # (n_classes, n_qi) int32 codes at ``levels``
    counts: np.ndarray  # (n_classes,) int64 class sizes
    sensitive: dict[str, sparse.csr_matrix] = field(default_factory=dict)
    sensitive_values: dict[str, np.ndarray] = field(default_factory=dict)
    weights: np.ndarray | None = None
    base_row_class: np.ndarray | None = None  # per row: class index in the base frequency set
    base_map: np.ndarray | None = None  # per base class: class index here (None = identity)
    parent_map: np.ndarray | None = None  # per class of the set this was derived from: index here

    # -- sizes ---------------------------------------------------------------------------
    @property
    def names(self) -> tuple[str, ...]:
        """QI column names."""
        return tuple(q.name for q in self.quasi_identifiers)

    @property
    def n_classes(self) -> int:
        """Number of equivalence classes."""
        return len(self.counts)

    @property
    def n_records(self) -> int:
        """Number of records (sum of class sizes)."""
        return int(self.counts.sum())

    def row_class(self) -> np.ndarray:
        """Class index of every row of the data this frequency set was built from."""
        if self.base_row_class is None:
            raise DataError("this frequency set was not built from rows")
        if self.base_map is None:
            return self.base_row_class
        return self.base_map[self.base_row_class]

    def histogram(self, attribute: str) -> sparse.csr_matrix:
        """The (classes x values) count matrix of a sensitive attribute."""
        try:
            return self.sensitive[attribute]
        except KeyError:
            raise DataError(
                f"{attribute!r} is not a sensitive attribute of this analysis; "
                f"sensitive attributes: {', '.join(self.sensitive) or 'none'}"
            ) from None

    def labels(self) -> pd.DataFrame:
        """The classes as labels (one column per QI) with a ``count`` column."""
        data = {
            q.name: q.labels(lv)[self.keys[:, i]]
            for i, (q, lv) in enumerate(zip(self.quasi_identifiers, self.levels, strict=True))
        }
        data["count"] = self.counts
        return pd.DataFrame(data)

    # -- derivations ---------------------------------------------------------------------
    def _regroup(self, new_codes: list[np.ndarray], cards: list[int], qis, levels) -> FrequencySet:
        if new_codes:
            group, n_groups, rep = group_keys(new_codes, cards)
        else:  # no QI left: every class goes into one
            group = np.zeros(self.n_classes, dtype=np.int64)
            n_groups = 1 if self.n_classes else 0
        keys = (
            np.stack([c[rep] for c in new_codes], axis=1).astype(np.int32)
            if new_codes
            else np.zeros((n_groups, 0), dtype=np.int32)
        )
        counts = np.bincount(group, weights=self.counts, minlength=n_groups).astype(np.int64)
        weights = (
            np.bincount(group, weights=self.weights, minlength=n_groups)
            if self.weights is not None
            else None
        )
        sens = {name: regroup_histogram(h, group, n_groups) for name, h in self.sensitive.items()}
        if self.base_map is None:
            base_map = group
        else:  # base classes dropped by select() (-1) stay dropped
            base_map = np.full(len(self.base_map), -1, dtype=group.dtype)
            live = self.base_map >= 0
            base_map[live] = group[self.base_map[live]]
        return FrequencySet(
            quasi_identifiers=tuple(qis),
            levels=tuple(levels),
            keys=keys,
            counts=counts,
            sensitive=sens,
            sensitive_values=dict(self.sensitive_values),
            weights=weights,
            base_row_class=self.base_row_class,
            base_map=base_map,
            parent_map=group,
        )

    def rollup(self, levels: Sequence[int]) -> FrequencySet:
        """The frequency set at coarser ``levels`` (each >= the current level), without rows."""
        levels = tuple(int(x) for x in levels)
        if len(levels) != len(self.levels):
            raise DataError(f"expected {len(self.levels)} levels, got {len(levels)}")
        new_codes, cards = [], []
        for i, (q, old, new) in enumerate(
            zip(self.quasi_identifiers, self.levels, levels, strict=True)
        ):
            if new < old:
                raise DataError(
                    f"cannot roll up {q.name!r} from level {old} down to level {new}; "
                    "build the frequency set from the rows instead"
                )
            if new >= q.height:
                raise DataError(
                    f"level {new} does not exist for {q.name!r} (its hierarchy has levels "
                    f"0..{q.height - 1})"
                )
            col = self.keys[:, i]
            new_codes.append(col if new == old else q.step(old, new)[col])
            cards.append(q.cardinality(new))
        return self._regroup(new_codes, cards, self.quasi_identifiers, levels)

    def project(self, names: Sequence[str]) -> FrequencySet:
        """The frequency set of a subset of the QIs (the others are dropped)."""
        index = {n: i for i, n in enumerate(self.names)}
        unknown = [n for n in names if n not in index]
        if unknown:
            raise DataError(f"unknown quasi-identifier(s) {unknown}; known: {list(self.names)}")
        idx = [index[n] for n in names]
        return self._regroup(
            [self.keys[:, i] for i in idx],
            [self.quasi_identifiers[i].cardinality(self.levels[i]) for i in idx],
            [self.quasi_identifiers[i] for i in idx],
            [self.levels[i] for i in idx],
        )

    def select(self, mask: np.ndarray) -> FrequencySet:
        """Only the classes where ``mask`` is true (e.g. dropping suppressed classes).

        Rows of dropped classes map to class ``-1`` in :meth:`row_class`.
        """
        mask = np.asarray(mask, dtype=bool)
        new_index = np.cumsum(mask) - 1
        new_index[~mask] = -1
        base_map = new_index if self.base_map is None else new_index[self.base_map]
        return FrequencySet(
            quasi_identifiers=self.quasi_identifiers,
            levels=self.levels,
            keys=self.keys[mask],
            counts=self.counts[mask],
            sensitive={n: h[mask] for n, h in self.sensitive.items()},
            sensitive_values=dict(self.sensitive_values),
            weights=None if self.weights is None else self.weights[mask],
            base_row_class=self.base_row_class,
            base_map=base_map,
            parent_map=new_index,
        )


def build_frequency_set(
    quasi_identifiers: Sequence[QuasiIdentifier],
    levels: Sequence[int] | None = None,
    sensitive: Mapping[str, EncodedColumn] | None = None,
    weights: np.ndarray | None = None,
    multiplicities: np.ndarray | None = None,
) -> FrequencySet:
    """Group encoded rows into a frequency set (the engine's one row-scanning step).

    With ``multiplicities`` each item stands for that many records (a partial count made
    elsewhere, e.g. the rows of a Spark group-by over the QI and sensitive codes): class
    sizes and histograms sum them, ``weights`` are then the items' summed weights, and the
    result maps no rows (``base_row_class`` is ``None``) while each QI's ``codes`` become its
    per-class codes; the items' codes are then taken as codes at ``levels`` (items counted
    at coarser levels, e.g. a roll-up kept on Spark). Classes come out in the same canonical
    order either way.
    """
    qis = tuple(quasi_identifiers)
    levels = tuple(levels) if levels is not None else (0,) * len(qis)
    if multiplicities is not None:
        cols = [q.codes for q in qis]
    else:
        cols = [q.codes_at(lv) for q, lv in zip(qis, levels, strict=True)]
    cards = [q.cardinality(lv) for q, lv in zip(qis, levels, strict=True)]
    n = len(cols[0]) if cols else (len(weights) if weights is not None else 0)
    if multiplicities is not None:
        n = len(multiplicities)
    if cols:
        group, n_groups, rep = group_keys(cols, cards)
        keys = np.stack([c[rep] for c in cols], axis=1).astype(np.int32)
    else:
        group = np.zeros(n, dtype=np.int64)
        n_groups = 1 if n else 0
        keys = np.zeros((n_groups, 0), dtype=np.int32)
    mult = None if multiplicities is None else np.asarray(multiplicities, dtype=np.int64)
    if mult is None:
        counts = np.bincount(group, minlength=n_groups).astype(np.int64)
    else:
        counts = np.bincount(group, weights=mult, minlength=n_groups).astype(np.int64)
    sens, sens_values = {}, {}
    for name, enc in (sensitive or {}).items():
        from scipy import sparse

        sens[name] = sparse.csr_matrix(
            (
                np.ones(n, dtype=np.int64) if mult is None else mult,
                (group, enc.codes.astype(np.int64)),
            ),
            shape=(n_groups, enc.cardinality),
        )
        sens[name].sum_duplicates()
        sens_values[name] = enc.values
    w = None
    if weights is not None:
        w = np.bincount(group, weights=np.asarray(weights, dtype=float), minlength=n_groups)
    if mult is not None:
        qis = tuple(
            QuasiIdentifier(q.name, keys[:, i].copy(), q.values, q.hierarchy)
            for i, q in enumerate(qis)
        )
        return FrequencySet(qis, levels, keys, counts, sens, sens_values, w, None, None)
    return FrequencySet(qis, levels, keys, counts, sens, sens_values, w, group, None)


def frequency_set(
    data: pd.DataFrame,
    quasi_identifiers: Sequence[str],
    sensitive: Sequence[str] = (),
    hierarchies: Mapping[str, Hierarchy] | None = None,
    levels: Sequence[int] | None = None,
    weights: str | np.ndarray | None = None,
    orders: Mapping[str, Sequence[str]] | None = None,
) -> FrequencySet:
    """Frequency set of ``data`` on ``quasi_identifiers`` (DataFrame convenience entry point).

    ``hierarchies`` maps QI names to :class:`~sdckit.core.hierarchy.Hierarchy` (needed for
    ``levels`` above 0); ``weights`` is a column name or an array of sampling weights;
    ``orders`` gives the category order of ordinal sensitive attributes.
    """
    hierarchies = dict(hierarchies or {})
    wanted = [*quasi_identifiers, *(c for a in sensitive for c in attribute_columns(a))]
    missing = [c for c in wanted if c not in data.columns]
    if isinstance(weights, str) and weights not in data.columns:
        missing.append(weights)
    if missing:
        raise DataError(
            f"column(s) {', '.join(map(repr, missing))} not found; available columns: "
            f"{', '.join(map(str, data.columns))}"
        )
    qis = [encode_quasi_identifier(data[c], c, hierarchies.get(c)) for c in quasi_identifiers]
    sens = {
        c: encode_ordered(sensitive_column(data, c), c, (orders or {}).get(c)) for c in sensitive
    }
    w = None
    if weights is not None:
        w = numeric_weights(
            data[weights] if isinstance(weights, str) else weights,
            weights if isinstance(weights, str) else "weights",
        )
    return build_frequency_set(qis, levels, sens, w)


def require_values(fs: FrequencySet, role: str = "quasi-identifier") -> None:
    """Raise :class:`DataError` when a QI of ``fs`` holds no value at all.

    A column whose every cell is missing (empty text, None or NaN, which all encode to the
    missing text ``""``; see :func:`~sdckit.core.encoding.as_text`) puts all records in one
    class and says nothing; it is almost always a wrong column name, a wrong delimiter or an
    empty export. Checked on the codes (per row, or per class of a frequency set counted
    elsewhere), so it costs one integer comparison per row at most.
    """
    if fs.n_classes == 0:
        return
    for q in fs.quasi_identifiers:
        if len(q.codes) == 0:
            continue
        first = q.codes[0]
        if q.values[first] == "" and bool((q.codes == first).all()):
            raise DataError(
                f"{role} {q.name!r} has no values: all {fs.n_records:,} cells are empty; "
                "remove it from the list, or check the column name, the delimiter and the export"
            )


def numeric_weights(values, name: str) -> np.ndarray:
    """Sampling weights as floats; DataError naming the column and first bad row otherwise."""
    s = pd.Series(values)
    w = pd.to_numeric(s, errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    bad = ~(np.isfinite(w) & (w > 0))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise DataError(
            f"weight column {name!r} must hold positive numbers, but row {row + 1} has "
            f"{s.iloc[row]!r}; fix or drop that row, or choose another weight column"
        )
    return w


def wildcard_frequencies(
    keys: np.ndarray,
    counts: np.ndarray,
    missing: np.ndarray,
    weights: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray | None]:
    """Sample frequencies ``f_k`` (and weighted ``F_k``) when a missing value matches any value.

    sdcMicro's ``freqCalc`` / mu-Argus semantics (Templ 2008, "Statistical disclosure control
    for microdata using the R-package sdcMicro", TDP 1(2); sdcMicro ``freqCalc``: "a missing
    value stands for any of the possible categories"): records ``i`` and ``j`` match when they
    agree on every key that both observe; ``f_k(i)`` counts the records matching ``i`` (itself
    included), ``F_k(i)`` sums their weights. A locally suppressed record therefore joins every
    class it could belong to.

    ``keys`` (rows x keys) are the codes of distinct key combinations (e.g. a frequency set's
    ``keys``), ``counts`` the records of each, ``missing`` flags the missing cells of ``keys``
    and ``weights`` the summed sampling weights of each row (or ``None``). Computed per pair of
    missing-value patterns (A, B): the rows of A are matched with those of B on the keys
    observed in both, one vectorized group count per pair; no pairs of records are formed.
    Returns ``(f_k, F_k)`` per row (``F_k`` is ``None`` without weights).
    """
    keys = np.asarray(keys, dtype=np.int64)
    counts = np.asarray(counts, dtype=np.float64)
    missing = np.asarray(missing, dtype=bool)
    rows, m = keys.shape
    fk = np.zeros(rows, dtype=np.float64)
    big_f = None if weights is None else np.zeros(rows, dtype=np.float64)
    w = None if weights is None else np.asarray(weights, dtype=np.float64)
    if rows == 0:
        return fk.astype(np.int64), big_f
    _, pattern = np.unique(missing, axis=0, return_inverse=True)
    pattern = pattern.ravel()
    n_patterns = int(pattern.max()) + 1
    members = [np.flatnonzero(pattern == p) for p in range(n_patterns)]
    observed = [~missing[rows_p[0]] for rows_p in members]
    cards = keys.max(axis=0) + 1 if rows else np.zeros(m, dtype=np.int64)
    for a, rows_a in enumerate(members):
        for b, rows_b in enumerate(members):
            cols = np.flatnonzero(observed[a] & observed[b])
            if not len(cols):  # nothing observed in common: every record of B matches
                fk[rows_a] += counts[rows_b].sum()
                if big_f is not None and w is not None:
                    big_f[rows_a] += w[rows_b].sum()
                continue
            both = np.concatenate((rows_a, rows_b))
            group, n_groups, _ = group_keys(
                [keys[both, j] for j in cols], [int(cards[j]) for j in cols], ordered=False
            )
            in_b = group[len(rows_a) :]
            fk[rows_a] += np.bincount(in_b, weights=counts[rows_b], minlength=n_groups)[
                group[: len(rows_a)]
            ]
            if big_f is not None and w is not None:
                big_f[rows_a] += np.bincount(in_b, weights=w[rows_b], minlength=n_groups)[
                    group[: len(rows_a)]
                ]
    return np.rint(fk).astype(np.int64), big_f
