"""Generalization hierarchies (value generalization trees) in ARX's CSV format.

A hierarchy is a table with one row per original value (a *leaf*) and one column per
generalization level; level 0 is the original value and the last level is usually ``*``
(full suppression). This is the format ARX reads and writes ("hierarchy CSV": ``;``-separated,
no header), see Prasser & Kohlmayer, "Putting statistical disclosure control into practice:
the ARX data anonymization tool" (2015) and ARX's ``Hierarchy``/``GeneralizationHierarchy``
classes. Full-domain generalization (Samarati 2001; Sweeney 2002; LeFevre et al. 2005,
"Incognito") recodes every value of a column to the label of one common level.

Internally every level is dictionary-encoded: ``levels[h][leaf] -> code`` with codes dense
``0 .. n_h-1`` in order of first appearance down the table (the order ARX's dictionary
assigns). A label is identified by its level *and* its text, so the same text may appear at
several levels (e.g. ``[20, 30)`` at levels 1 and 2, or ``*`` in masking hierarchies).

The table must be a tree (ARX calls the check "monotonicity", ``checkMonotonicity``): each
label at level ``h`` has exactly one parent at level ``h+1``; otherwise recoding to a level
would not be a function of the recoding to a lower level and lattice search would be wrong.
"""

from __future__ import annotations

import csv
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from sdckit.core.encoding import as_text
from sdckit.errors import HierarchyError, preview

__all__ = ["Hierarchy", "IntervalShares", "read_hierarchy"]


def _first_occurrences(codes: np.ndarray) -> np.ndarray:
    """Row index of the first occurrence of every code, for codes in first-appearance order.

    With dense codes assigned in order of first appearance, code ``c`` first appears exactly
    where the running maximum rises to ``c``; the result is indexed by code.
    """
    running = np.maximum.accumulate(codes.astype(np.int64))
    rises = np.diff(running, prepend=-1) > 0
    return np.flatnonzero(rises)


#: Up to this many values, :meth:`Hierarchy.leaf_index_text` looks them up in a dict.
_DICT_LOOKUP_MAX = 4096


def _column_text(column: np.ndarray) -> np.ndarray:
    """A table column as an object array of ``str`` (numbers via :func:`as_text`)."""
    col = np.asarray(column, dtype=object)
    if pd.api.types.infer_dtype(col, skipna=False) == "string":
        return col
    text = as_text(pd.Series(col, dtype=object).infer_objects())
    return np.array([v if isinstance(v, str) else str(v) for v in text], dtype=object)


def _describe(name: str, source: str | os.PathLike | None) -> str:
    """How messages refer to a hierarchy: its name and, if any, its file."""
    text = f"hierarchy '{name}'" if name else "hierarchy"
    return f"{text} (file {source})" if source else text


def _raise_ragged(where: str, lengths: np.ndarray, row_numbers: np.ndarray) -> None:
    """Raise for rows whose number of levels differs from the first row's."""
    bad = np.flatnonzero(lengths != lengths[0])
    i = int(bad[0])
    raise HierarchyError(
        f"{where} has rows with different numbers of levels: row {int(row_numbers[i])} has "
        f"{int(lengths[i])} levels but row {int(row_numbers[0])} has {int(lengths[0])} "
        f"({len(bad)} row(s) differ). Every row must list the value and all its "
        "generalizations, one column per level; fix the row (a missing or extra delimiter?)."
    )


@dataclass(frozen=True)
class IntervalShares:
    """The domain shares of an interval hierarchy, as ARX's ``DomainShareInterval``
    (``org.deidentifier.arx.metric.v2``) defines them for a hierarchy from its
    interval-based builder.

    ``domain_size`` is the width of the builder's range ``[lower, upper)`` (ARX: upper minus
    lower range bound); ``shares[h][code]`` the share of the label ``code`` at level ``h``
    (aligned with :attr:`Hierarchy.labels`): ``1 / domain_size`` for an original value (and
    a missing one, ARX's null interval), ``(max - min) / domain_size`` for an interval
    ``[min, max)``, 1 for the root ``*``. The entropy-based information loss of Wan et al.
    (:func:`sdckit.models.profitability.information_loss`) takes them instead of the shares of
    leaves a materialized hierarchy gives (ARX ``DomainShareMaterialized``).
    """

    domain_size: float
    shares: tuple[np.ndarray, ...]


class Hierarchy:
    """A validated generalization hierarchy (one row per leaf, one column per level).

    Parameters
    ----------
    table:
        Rows = leaf values, columns = levels (level 0 = original value). A 2-D array, a
        :class:`pandas.DataFrame` or a sequence of equally long rows. Cells are converted
        to text (numbers via :func:`sdckit.core.encoding.as_text`, missing -> ``""``).
    name:
        Name used in messages (usually the attribute or the file stem).
    source:
        File the table was read from, named in error messages.
    row_numbers:
        1-based line number of every row in ``source`` (used in messages only; defaults to
        ``1..n``).

    Raises
    ------
    HierarchyError
        Empty table, rows of different lengths, duplicate leaf values, or not a tree.
    """

    def __init__(
        self,
        table,
        name: str = "",
        *,
        source: str | os.PathLike | None = None,
        row_numbers: Sequence[int] | np.ndarray | None = None,
    ) -> None:
        self.name = str(name)
        self.source = None if source is None else str(source)
        arr = self._to_array(table)
        n, height = arr.shape
        self._row_numbers = (
            np.arange(1, n + 1) if row_numbers is None else np.asarray(row_numbers, dtype=np.int64)
        )
        cols = [_column_text(arr[:, h]) for h in range(height)]
        table_arr = np.empty((n, height), dtype=object)
        for h, col in enumerate(cols):
            table_arr[:, h] = col
        levels: list[np.ndarray] = []
        labels: list[np.ndarray] = []
        for col in cols:
            codes, uniques = pd.factorize(col, sort=False, use_na_sentinel=False)
            levels.append(codes.astype(np.int32, copy=False))
            labels.append(np.asarray(uniques, dtype=object))
        self._check_unique_leaves(table_arr, levels[0], labels[0])
        self._check_tree(levels, labels)
        for a in (table_arr, *levels, *labels):
            a.flags.writeable = False
        self._code_maps: dict[tuple[int, int], np.ndarray] = {}
        self.table: np.ndarray = table_arr
        self.height: int = height
        self.leaves: np.ndarray = table_arr[:, 0]
        self.levels: list[np.ndarray] = levels
        self.labels: list[np.ndarray] = labels
        #: ARX's interval domain shares, set by the interval builder where its range is
        #: known (:func:`sdckit.core.hierarchy_builders.interval_hierarchy`); else None
        self.interval_shares: IntervalShares | None = None

    # ------------------------------------------------------------------ validation
    @property
    def _where(self) -> str:
        """How messages refer to this hierarchy (name and file)."""
        return _describe(self.name, self.source)

    def _row(self, index: int) -> int:
        return int(self._row_numbers[index])

    def _to_array(self, table) -> np.ndarray:
        if isinstance(table, Hierarchy):
            table = table.table
        if isinstance(table, pd.DataFrame):
            arr = table.to_numpy(dtype=object)
        elif isinstance(table, np.ndarray):
            arr = table.astype(object, copy=False)
            if arr.ndim == 1:
                arr = arr.reshape(-1, 1) if arr.size else arr.reshape(0, 0)
        else:
            rows = list(table)
            if any(isinstance(r, (str, bytes)) or not isinstance(r, Sequence) for r in rows[:1]):
                raise HierarchyError(
                    f"{self._where}: each row must be a list of labels (level 0 first), got "
                    f"{type(rows[0]).__name__} {rows[0]!r}; pass a list of rows or a 2-D array."
                )
            lengths = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
            if lengths.size and (lengths != lengths[0]).any():
                _raise_ragged(self._where, lengths, np.arange(1, len(rows) + 1))
            arr = np.empty((len(rows), int(lengths[0]) if lengths.size else 0), dtype=object)
            if arr.size:
                arr[:] = rows
        if arr.ndim != 2:
            raise HierarchyError(
                f"{self._where}: the table must be 2-D (rows = leaves, columns "
                f"= levels), got {arr.ndim} dimensions."
            )
        if arr.shape[0] == 0 or arr.shape[1] == 0:
            raise HierarchyError(
                f"{self._where} is empty: it needs one row per original value and at least one "
                "column (level 0). Fill the hierarchy file or build one with "
                "sdckit.core.hierarchy_builders."
            )
        return arr

    def _check_unique_leaves(
        self, table: np.ndarray, level0: np.ndarray, labels0: np.ndarray
    ) -> None:
        if len(labels0) == len(level0):
            return
        first = _first_occurrences(level0)
        dup_rows = np.flatnonzero(first[level0] != np.arange(len(level0)))
        i = int(dup_rows[0])
        j = int(first[level0[i]])
        n_dup = len(np.unique(level0[dup_rows]))
        raise HierarchyError(
            f"{self._where} has duplicate leaf values: {table[i, 0]!r} is in row {self._row(j)} "
            f"and row {self._row(i)} ({n_dup} value(s) duplicated). Each original value must "
            "appear in exactly one row; delete or merge the duplicate rows."
        )

    def _check_tree(self, levels: list[np.ndarray], labels: list[np.ndarray]) -> None:
        """Every label at level h must have one parent at level h+1 (ARX checkMonotonicity)."""
        for h in range(len(levels) - 1):
            child, parent = levels[h], levels[h + 1]
            first = _first_occurrences(child)
            first_parent = parent[first]
            bad = first_parent[child] != parent
            if bad.any():
                i = int(np.argmax(bad))
                c = int(child[i])
                j = int(first[c])
                raise HierarchyError(
                    f"{self._where} is not a tree: value {labels[h][c]!r} at level {h} has two "
                    f"parents at level {h + 1}: {labels[h + 1][parent[j]]!r} (row {self._row(j)})"
                    f" and {labels[h + 1][parent[i]]!r} (row {self._row(i)}). A label may "
                    f"generalize to only one label of the next level; fix the level-{h + 1} "
                    "column of one of these rows or give the two groups different labels."
                )

    # ------------------------------------------------------------------ queries
    def __repr__(self) -> str:
        sizes = ", ".join(str(len(lab)) for lab in self.labels)
        return f"Hierarchy({self.name!r}, height={self.height}, codes per level=[{sizes}])"

    def __len__(self) -> int:
        return len(self.leaves)

    def equals(self, other: Hierarchy) -> bool:
        """True when ``other`` has the identical table (same rows, order and labels)."""
        return (
            isinstance(other, Hierarchy)
            and self.table.shape == other.table.shape
            and bool((self.table == other.table).all())
        )

    @cached_property
    def _leaf_lookup(self) -> pd.Index:
        return pd.Index(self.leaves, dtype=object)

    def _check_level(self, level, what: str = "level") -> int:
        if (
            not isinstance(level, (int, np.integer))
            or isinstance(level, bool)
            or not 0 <= int(level) < self.height
        ):
            raise HierarchyError(
                f"{self._where}: {what} must be an integer from 0 to {self.height - 1} "
                f"(the hierarchy has {self.height} levels), got {level!r}."
            )
        return int(level)

    def leaf_index(self, values, column: str | None = None) -> np.ndarray:
        """Leaf (row) index of every value, as ``int32``.

        Values are matched on their canonical text (:func:`sdckit.core.encoding.as_text`:
        ``39.0 -> "39"``, missing -> ``""``). Raises :class:`HierarchyError` listing the
        distinct values that the hierarchy lacks.
        """
        return self.leaf_index_text(as_text(values), column)

    @cached_property
    def _leaf_positions(self) -> dict[str, int]:
        return {leaf: i for i, leaf in enumerate(self.leaves.tolist())}

    def leaf_index_text(self, text: np.ndarray, column: str | None = None) -> np.ndarray:
        """:meth:`leaf_index` of values already in canonical text form (an object array of
        ``str``, as :func:`~sdckit.core.encoding.as_text` returns; missing = ``""``).

        A few values (e.g. the distinct values of a column) are looked up in a dict of the
        leaves, many with a hash index; both match exact ``str`` equality (leaves are
        unique)."""
        if len(text) <= _DICT_LOOKUP_MAX:
            pos = self._leaf_positions
            idx = np.fromiter((pos.get(v, -1) for v in text), dtype=np.intp, count=len(text))
        else:
            idx = self._leaf_lookup.get_indexer(text)
        if (idx < 0).any():
            missing = pd.unique(text[idx < 0])
            col = f"column '{column}'" if column else "the data"
            hint = ""
            if (missing == "").any():
                top = str(self.labels[-1][0]) if self.height > 1 else "*"
                cells = ["", *(["NA"] * max(self.height - 2, 0)), top][: max(self.height, 1)]
                hint = (
                    " The empty text '' is a missing value, and missing values are data: give "
                    f"them a row whose first cell is empty, e.g. the line {';'.join(cells)!r} "
                    "(one cell per level, the labels yours to choose)."
                )
            raise HierarchyError(
                f"{len(missing)} distinct value(s) of {col} are not in {self._where}: "
                f"{preview(missing)}.{hint} Add a row for each value to the hierarchy file, or "
                "build a hierarchy from the data with sdckit.core.hierarchy_builders."
            )
        return idx.astype(np.int32, copy=False)

    def map_codes(self, from_level: int, to_level: int) -> np.ndarray:
        """``int32`` array mapping each code at ``from_level`` to its code at ``to_level``.

        Well defined because the hierarchy is a tree: ``map_codes(a, b)[levels[a]] ==
        levels[b]`` for all ``a <= b``.
        """
        a = self._check_level(from_level, "from_level")
        b = self._check_level(to_level, "to_level")
        if b < a:
            raise HierarchyError(
                f"{self._where}: cannot map codes from level {a} down to level {b}; "
                "generalization only goes up (to_level >= from_level)."
            )
        cached = self._code_maps.get((a, b))
        if cached is None:
            out = np.empty(len(self.labels[a]), dtype=np.int32)
            first = _first_occurrences(self.levels[a])
            out[:] = self.levels[b][first]
            out.flags.writeable = False  # shared by every caller (lattice searches call often)
            self._code_maps[(a, b)] = cached = out
        return cached

    def leaves_under(self, level: int) -> np.ndarray:
        """Number of leaves under each code at ``level`` (``int64``, indexed by code).

        This is the group size used by ARX's generalization-intensity ("Loss") metric
        (Iyengar 2002, Prasser et al. 2016).
        """
        h = self._check_level(level)
        return np.bincount(self.levels[h], minlength=len(self.labels[h])).astype(np.int64)

    def generalize(self, values, level: int) -> np.ndarray:
        """The labels at ``level`` of the given values (object array of ``str``)."""
        h = self._check_level(level)
        return self.labels[h][self.levels[h][self.leaf_index(values)]]

    def restrict(self, values) -> Hierarchy:
        """The sub-hierarchy of the leaves present in ``values`` (table order kept).

        Codes are re-assigned densely, so levels only contain labels that still have leaves.
        """
        idx = self.leaf_index(values)
        if idx.size == 0:
            raise HierarchyError(
                f"{self._where}: cannot restrict to no values; pass the "
                "column's values (at least one)."
            )
        present = np.zeros(len(self.leaves), dtype=bool)
        present[idx] = True
        out = Hierarchy(
            self.table[present],
            name=self.name,
            source=self.source,
            row_numbers=self._row_numbers[present],
        )
        if self.interval_shares is not None:  # the same labels keep their shares
            shares = tuple(
                old[pd.Index(self.labels[h]).get_indexer(out.labels[h])]
                for h, old in enumerate(self.interval_shares.shares)
            )
            out.interval_shares = IntervalShares(self.interval_shares.domain_size, shares)
        return out

    def to_csv(
        self, path: str | os.PathLike, delimiter: str = ";", encoding: str = "utf-8"
    ) -> None:
        """Write the table in ARX's hierarchy CSV format (no header), atomically.

        The file is written to a temporary file in the same directory and moved into place
        with :func:`os.replace`, so readers never see a half-written file. Cells containing
        the delimiter, quotes or line breaks are quoted (standard CSV, as ARX does).
        """
        if not isinstance(delimiter, str) or len(delimiter) != 1 or delimiter in '"\r\n':
            raise HierarchyError(
                f"to_csv: delimiter must be one character (not a quote or "
                f"line break), got {delimiter!r}; ARX uses ';'."
            )
        target = Path(path)
        folder = target.parent if str(target.parent) else Path(".")
        if not folder.is_dir():
            raise HierarchyError(
                f"cannot write {self._where} to {target}: folder {folder} "
                "does not exist; create it first."
            )
        mode = (target.stat().st_mode & 0o777) if target.exists() else 0o644
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding=encoding, newline="") as fh:
                writer = csv.writer(fh, delimiter=delimiter, lineterminator="\n")
                writer.writerows(self.table.tolist())
            os.chmod(tmp, mode)
            os.replace(tmp, target)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise


def read_hierarchy(
    path: str | os.PathLike, delimiter: str = ";", name: str | None = None, encoding: str = "utf-8"
) -> Hierarchy:
    """Read a hierarchy in ARX's CSV format (one row per value, level 0 first, no header).

    Every cell is kept exactly as written (standard CSV quoting aside): no NA conversion, no
    whitespace stripping, no number parsing. Blank lines are skipped; a UTF-8 byte-order mark
    is ignored. ``name`` defaults to the file stem.
    """
    p = Path(path)
    label = p.stem if name is None else name
    if not isinstance(delimiter, str) or len(delimiter) != 1:
        raise HierarchyError(
            f"read_hierarchy: delimiter must be one character, got "
            f"{delimiter!r}; ARX hierarchy files use ';'."
        )
    enc = "utf-8-sig" if encoding.lower().replace("_", "-") in ("utf-8", "utf8") else encoding
    reader = None
    try:
        with open(p, encoding=enc, newline="") as fh:
            reader = csv.reader(fh, delimiter=delimiter, strict=True)
            rows = list(reader)
    except FileNotFoundError:
        raise HierarchyError(
            f"hierarchy file {p} for '{label}' not found; check the path."
        ) from None
    except IsADirectoryError:
        raise HierarchyError(f"hierarchy path {p} is a folder, not a CSV file.") from None
    except UnicodeDecodeError as exc:
        raise HierarchyError(
            f"hierarchy file {p} is not valid {encoding} text ({exc.reason} at "
            f"byte {exc.start}); pass the file's encoding, e.g. "
            "encoding='latin-1'."
        ) from None
    except csv.Error as exc:
        line = reader.line_num if reader is not None else "?"
        raise HierarchyError(
            f"hierarchy file {p} is not valid CSV near line {line}: {exc}; "
            "check the quotes in that line."
        ) from None
    lengths = np.fromiter(map(len, rows), dtype=np.int64, count=len(rows))
    keep = np.flatnonzero(lengths > 0)
    row_numbers = keep + 1
    if keep.size == 0:
        raise HierarchyError(
            f"hierarchy file {p} is empty: it needs one row per original value, the levels "
            f"separated by {delimiter!r}. Fill it or build a hierarchy with "
            "sdckit.core.hierarchy_builders."
        )
    lengths = lengths[keep]
    if keep.size != len(rows):
        rows = [rows[i] for i in keep.tolist()]
    if (lengths != lengths[0]).any():
        _raise_ragged(_describe(label, p), lengths, row_numbers)
    table = np.empty((len(rows), int(lengths[0])), dtype=object)
    table[:] = rows
    return Hierarchy(table, name=label, source=p, row_numbers=row_numbers)
