"""What a masking plan may read of the data: :class:`ColumnStats`, and :class:`PandasStats`.

A masking method that runs on both engines is split in two (:class:`Plan`): the *plan* fixes
everything the method reads from the whole data -- standard deviations, covariances, means,
quantiles, category counts -- and checks the parameters against the data, once; the *release*
applies the plan to the records (the random draws happen there). The plan reads the data only
through :class:`ColumnStats`, so the same plan comes from a pandas DataFrame
(:class:`PandasStats`, the local engine) or from Spark aggregates
(:class:`sdckit.spark.stats.SparkStats`) where only aggregates reach the driver.

Numbers do not depend on the order of the records: sample moments with ``ddof=1`` (means,
standard deviations, covariances, tail means) are the correctly rounded values of exact sums
(:mod:`sdckit.masking.moments`), so both engines get the same bits; quantiles are NumPy's
default definition (linear interpolation between order statistics, Hyndman & Fan 1996,
definition 7).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, Protocol

import numpy as np
import pandas as pd

from sdckit.core.encoding import as_text, is_numeric
from sdckit.masking import moments
from sdckit.masking.base import MaskResult, check_columns, numeric_matrix

__all__ = ["ColumnStats", "PandasStats", "Plan", "kind_of"]


class ColumnStats(Protocol):
    """The statistics of a table that a masking plan may read (every method reads only what
    it needs). Numeric statistics read the non-missing numbers of a column (text columns
    parsed as numbers); a column must have passed :meth:`check_numeric` first."""

    @property
    def n(self) -> int:
        """The number of records."""
        ...

    def check_columns(self, columns: Sequence[str] | str | None) -> list[str]:
        """``columns`` as a list, every one present (DataError naming the missing ones)."""
        ...

    def kind(self, column: str) -> str:
        """How the column is held: ``long``, ``double``, ``boolean`` or ``string``."""
        ...

    def check_numeric(self, columns: Sequence[str], method: str) -> None:
        """DataError (naming ``method``, the column, row and value) for a non-numeric text
        value or an infinite number in ``columns``."""
        ...

    def count(self, column: str) -> int:
        """The number of non-missing numbers of the column."""
        ...

    def min_max(self, column: str) -> tuple[float, float]:
        """The smallest and largest number of a column that has numbers."""
        ...

    def std(self, columns: Sequence[str]) -> np.ndarray:
        """Per column the sample standard deviation (``ddof=1``) of its numbers; 0 where a
        column has fewer than two."""
        ...

    def mean(self, columns: Sequence[str]) -> np.ndarray:
        """Per column the mean of its numbers (NaN for none)."""
        ...

    def covariance(self, columns: Sequence[str]) -> tuple[int, np.ndarray]:
        """The number of records with numbers in all ``columns`` and, when at least two, the
        sample covariance matrix (``ddof=1``) over them (an empty array otherwise)."""
        ...

    def quantiles(self, column: str, q: Sequence[float] | np.ndarray) -> np.ndarray:
        """The quantiles ``q`` of the column's numbers, as ``numpy.quantile`` gives them."""
        ...

    def tail(self, column: str, threshold: float, side: str) -> tuple[int, float | None]:
        """How many numbers lie above (``side="top"``) or below (``"bottom"``) the
        threshold, and their mean (None for none)."""
        ...

    def first_outside(
        self, column: str, low: float, high: float, low_open: bool = False
    ) -> tuple[int, Any]:
        """The 0-based row and value of the first number outside ``[low, high]`` (outside
        ``(low, high]`` with ``low_open``); ``(-1, None)`` when none is."""
        ...

    def has_categories(self, column: str) -> bool:
        """Whether the column holds a fixed list of categories (a column recoded to
        intervals; a categorical column locally): :meth:`value_counts` lists them all, in
        their order, bounded by the recoding."""
        ...

    def value_counts(self, column: str) -> tuple[pd.Series, np.ndarray]:
        """The distinct non-missing values of a categorical column in its local dtype (in
        order of first appearance; a categorical column: all its categories, in order) and
        how often each occurs."""
        ...

    def text_counts(self, column: str) -> dict[str, int]:
        """The canonical texts (:func:`~sdckit.core.encoding.as_text`) of a column's
        non-missing values and their counts, in order of first appearance."""
        ...

    def values_outside(
        self, column: str, allowed: Collection[str], limit: int
    ) -> tuple[int, list[str]]:
        """How many distinct canonical texts of a column's non-missing values are not in
        ``allowed``, and the first ``limit`` of them in order of first appearance (bounded:
        what reaches the driver is at most ``limit`` values)."""
        ...

    @property
    def row_column(self) -> str | None:
        """The column holding every record's number in a block of records (None: records
        are numbered by position)."""
        ...

    def missing(self, columns: Sequence[str], numbers: bool = False) -> dict[str, int]:
        """Per column the number of missing values (``numbers``: of records without a number,
        a blank text included; the columns passed :meth:`check_numeric`)."""
        ...

    def first_missing(self, column: str, numbers: bool = False) -> tuple[int, Any]:
        """The 0-based row and the value (as the local engine holds it) of the column's first
        missing value (``numbers``: first record without a number); ``(-1, None)`` when
        none is."""
        ...

    def key_table(self, columns: Sequence[str], k: int) -> tuple[pd.DataFrame, np.ndarray]:
        """The key columns of the records a local suppression to ``k``-anonymity can touch
        and their record numbers: every record, or (a reduced table) the records of key
        combinations rarer than ``k`` in record order after ``k`` copies of every other
        combination (record number ``-1``; such records are never changed)."""
        ...

    def class_counts(self, columns: Sequence[str]) -> tuple[pd.DataFrame, np.ndarray]:
        """The distinct combinations of the columns (missing values included) and how many
        records have each."""
        ...


class Plan(Protocol):
    """What a masking method fixed from the whole data (frozen), ready to be released on the
    records, all at once or block by block (the Spark engine)."""

    @property
    def columns(self) -> list[str]:
        """The masked columns."""
        ...

    @property
    def random(self) -> bool:
        """Whether the release draws random numbers (each block gets its own generator)."""
        ...

    def release(self, data: pd.DataFrame, rng: np.random.Generator | None) -> MaskResult:
        """Mask ``data`` (the whole table, or one block of it) by the plan."""
        ...

    def out_kinds(self, kinds: dict[str, str]) -> dict[str, str]:
        """The kinds (:meth:`ColumnStats.kind`) of the masked columns after the release,
        given the kinds before."""
        ...

    def records(self, released: ColumnStats, changed: Sequence[int]) -> list[dict[str, Any]]:
        """The published records of the whole release from the statistics of the released
        table and, per masked column, how many values changed."""
        ...


def kind_of(s: pd.Series) -> str:
    """``long``, ``double``, ``boolean`` or ``string``: how a column is held."""
    if isinstance(s.dtype, pd.CategoricalDtype):
        return "string"
    if pd.api.types.is_bool_dtype(s.dtype):
        return "boolean"
    if pd.api.types.is_integer_dtype(s.dtype):
        return "long"
    if pd.api.types.is_float_dtype(s.dtype):
        return "double"
    return "string"


class PandasStats:
    """:class:`ColumnStats` of a pandas DataFrame (the local engine): the same numbers, bit for
    bit, as the local masking methods compute from the whole column matrix."""

    def __init__(self, data: pd.DataFrame) -> None:
        self.data = data

    @property
    def n(self) -> int:
        """The number of records."""
        return len(self.data)

    def check_columns(self, columns: Sequence[str] | str | None) -> list[str]:
        """:func:`~sdckit.masking.base.check_columns` on the data."""
        return check_columns(self.data, columns)

    def kind(self, column: str) -> str:
        """How the column is held (:func:`kind_of`)."""
        return kind_of(self.data[column])

    def _matrix(self, columns: Sequence[str], method: str = "masking") -> np.ndarray:
        return numeric_matrix(self.data, list(columns), method)

    def check_numeric(self, columns: Sequence[str], method: str) -> None:
        """:func:`~sdckit.masking.base.numeric_matrix`'s checks."""
        self._matrix(columns, method)

    def _values(self, column: str) -> np.ndarray:
        x = self._matrix([column])[:, 0]
        return x[~np.isnan(x)]

    def count(self, column: str) -> int:
        """The number of non-missing numbers of the column."""
        return len(self._values(column))

    def min_max(self, column: str) -> tuple[float, float]:
        """The smallest and largest number."""
        vals = self._values(column)
        return float(vals.min()), float(vals.max())

    def std(self, columns: Sequence[str]) -> np.ndarray:
        """The sample standard deviation (``ddof=1``) of every column's numbers, from exact
        sums (:mod:`sdckit.masking.moments`; 0 where undefined)."""
        x = self._matrix(columns)
        counts = (~np.isnan(x)).sum(axis=0).tolist()
        mean = moments.means_from(moments.column_sums(x), counts)
        return np.nan_to_num(moments.stds_from(moments.square_sums(x, mean), counts))

    def mean(self, columns: Sequence[str]) -> np.ndarray:
        """The mean of every column's numbers, from exact sums (:mod:`sdckit.masking.moments`;
        NaN for none)."""
        x = self._matrix(columns)
        return moments.means_from(moments.column_sums(x), (~np.isnan(x)).sum(axis=0).tolist())

    def covariance(self, columns: Sequence[str]) -> tuple[int, np.ndarray]:
        """The sample covariance matrix (``ddof=1``) of the complete rows of the column
        matrix, from exact sums (:mod:`sdckit.masking.moments`)."""
        x = self._matrix(columns)
        x = x[~np.isnan(x).any(axis=1)]
        m = len(x)
        if m < 2:
            return m, np.empty((0, 0))
        mean = moments.means_from(moments.column_sums(x), [m] * x.shape[1])
        return m, moments.covariance_from(moments.product_sums(x, mean), m, x.shape[1])

    def quantiles(self, column: str, q: Sequence[float] | np.ndarray) -> np.ndarray:
        """``numpy.quantile`` of the column's numbers."""
        return np.atleast_1d(np.quantile(self._values(column), np.asarray(q, dtype=float)))

    def tail(self, column: str, threshold: float, side: str) -> tuple[int, float | None]:
        """Count and mean (from the exact sum, :mod:`sdckit.masking.moments`) of the numbers
        beyond the threshold."""
        x = self._matrix([column])[:, 0]
        ok = ~np.isnan(x)
        hit = ok & ((x > threshold) if side == "top" else (x < threshold))
        count = int(hit.sum())
        if not count:
            return 0, None
        return count, float(moments.means_from(moments.column_sums(x[hit, None]), [count])[0])

    def first_outside(
        self, column: str, low: float, high: float, low_open: bool = False
    ) -> tuple[int, Any]:
        """Row and value (as held) of the first number outside the interval."""
        x = self._matrix([column])[:, 0]
        below = (x <= low) if low_open else (x < low)
        outside = ~np.isnan(x) & (below | (x > high))
        if not outside.any():
            return -1, None
        row = int(np.flatnonzero(outside)[0])
        return row, self.data[column].iloc[row]

    def has_categories(self, column: str) -> bool:
        """Whether the column is categorical."""
        return isinstance(self.data[column].dtype, pd.CategoricalDtype)

    def value_counts(self, column: str) -> tuple[pd.Series, np.ndarray]:
        """The distinct values (all categories of a categorical column) and their counts."""
        s = self.data[column]
        if isinstance(s.dtype, pd.CategoricalDtype):
            counts = np.bincount(s.cat.codes[s.cat.codes >= 0], minlength=len(s.cat.categories))
            cats = pd.Categorical(
                s.cat.categories, categories=s.cat.categories, ordered=s.cat.ordered
            )
            return pd.Series(cats), counts.astype(np.int64)
        present = s.dropna()
        codes, uniques = pd.factorize(present, sort=False)
        values = pd.Series(uniques, dtype=s.dtype) if is_numeric(s) else pd.Series(uniques)
        return values, np.bincount(codes, minlength=len(uniques)).astype(np.int64)

    def text_counts(self, column: str) -> dict[str, int]:
        """Counts of the canonical texts, in order of first appearance."""
        s = self.data[column]
        texts = pd.Series(as_text(s), index=s.index)[s.notna().to_numpy()]
        return {str(k): int(v) for k, v in texts.value_counts(sort=False).items()}

    def values_outside(
        self, column: str, allowed: Collection[str], limit: int
    ) -> tuple[int, list[str]]:
        """The distinct canonical texts not in ``allowed`` (their number, the first
        ``limit``), in order of first appearance."""
        outside = [t for t in self.text_counts(column) if t not in allowed]
        return len(outside), outside[: max(int(limit), 0)]

    @property
    def row_column(self) -> str | None:
        """Records are numbered by position."""
        return None

    def missing(self, columns: Sequence[str], numbers: bool = False) -> dict[str, int]:
        """Per column the number of missing values (``numbers``: NaN in the column matrix of
        :func:`~sdckit.masking.base.numeric_matrix`)."""
        if numbers:
            return {c: int(np.isnan(self._matrix([c])[:, 0]).sum()) for c in columns}
        return {c: int(self.data[c].isna().sum()) for c in columns}

    def first_missing(self, column: str, numbers: bool = False) -> tuple[int, Any]:
        """Row and value (as held) of the first missing value (number)."""
        lacking = np.isnan(self._matrix([column])[:, 0]) if numbers else self.data[column].isna()
        rows = np.flatnonzero(np.asarray(lacking))
        if not len(rows):
            return -1, None
        return int(rows[0]), self.data[column].iloc[int(rows[0])]

    def key_table(self, columns: Sequence[str], k: int) -> tuple[pd.DataFrame, np.ndarray]:
        """Every record (the local algorithm runs on the whole table)."""
        return self.data[list(columns)], np.arange(len(self.data), dtype=np.int64)

    def class_counts(self, columns: Sequence[str]) -> tuple[pd.DataFrame, np.ndarray]:
        """The combinations of the columns (missing included) and their counts."""
        sizes = self.data.groupby(list(columns), dropna=False, sort=False).size()
        return sizes.index.to_frame(index=False), sizes.to_numpy(dtype=np.int64)
