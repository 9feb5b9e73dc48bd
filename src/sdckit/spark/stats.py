"""Column statistics from Spark aggregates: :class:`SparkStats`, the Spark engine's
:class:`~sdckit.masking.stats.ColumnStats`.

A masking plan reads the data only through these methods, and only aggregates reach the
driver: counts, sums, moments (means, standard deviations, covariances and tail means from
exact sums, :meth:`SparkStats.exact_sums`: the local engine's bits), the smallest and largest
value, exact quantiles (the order statistics of a global sort interpolated as
``numpy.quantile`` does: :func:`~sdckit.spark.frame.exact_quantiles`, Hyndman & Fan 1996
definition 7), the first row breaking a rule, and value counts of a column the method
treats as categorical (one row per category). Text columns are read as numbers where a
method needs numbers (the values ``pandas.to_numeric`` parses).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sdckit.errors import DataError
from sdckit.masking import moments
from sdckit.spark.frame import ROW, _col, _kind, _parses, _stripped, exact_quantiles

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, DataFrame

__all__ = ["SparkStats", "count_and_finite"]


def _nonfinite(x: Column) -> Column:
    """Whether a double is infinite or NaN (``x - x`` is NaN exactly then; null stays null)."""
    from pyspark.sql import functions as F

    return F.isnan(x - x)


def count_and_finite(sdf: DataFrame) -> tuple[int, set[str]]:
    """The number of records and the double columns holding no infinite (or NaN) value, in
    the one aggregate pass that counts the records: a masking step then checks such a column
    without scanning it (:meth:`SparkStats.check_numeric`), and a column that is not finite is
    refused with the local engine's message before any statistic is computed from it."""
    from pyspark.sql import functions as F

    doubles = [f.name for f in sdf.schema.fields if f.name != ROW and _kind(f.dataType) == "double"]
    facts = sdf.agg(
        F.count(F.lit(1)).alias("n"),
        *[
            F.sum(_nonfinite(_col(c).cast("double")).cast("long")).alias(f"i{j}")
            for j, c in enumerate(doubles)
        ],
    ).first()
    assert facts is not None
    return int(facts["n"]), {c for j, c in enumerate(doubles) if not int(facts[f"i{j}"] or 0)}


class SparkStats:
    """:class:`~sdckit.masking.stats.ColumnStats` of a Spark DataFrame holding :data:`ROW`.

    ``n`` is its number of records; ``categories`` the columns recoded to intervals with their
    categories in order (the local engine's ordered categorical keeps empty intervals);
    ``finite`` the double columns known to hold no infinite value (updated by
    :meth:`check_numeric`).
    """

    def __init__(
        self,
        sdf: DataFrame,
        n: int,
        categories: dict[str, list[str]] | None = None,
        finite: set[str] | None = None,
    ) -> None:
        self.sdf = sdf
        self._n = int(n)
        self.categories = {} if categories is None else categories
        self.finite = set() if finite is None else finite
        self._kinds = {f.name: _kind(f.dataType) for f in sdf.schema.fields}
        self._moments: dict[str, tuple[int, float, float]] = {}

    @property
    def n(self) -> int:
        """The number of records."""
        return self._n

    def kinds(self) -> dict[str, str]:
        """Every column's kind (``long``, ``double``, ``boolean``, ``string``)."""
        return dict(self._kinds)

    def kind(self, column: str) -> str:
        """The column's kind."""
        return self._kinds[column]

    def check_columns(self, columns: Sequence[str] | str | None) -> list[str]:
        """The local engine's check_columns (DataError naming missing columns)."""
        from sdckit.masking.base import check_column_names

        return check_column_names([c for c in self.sdf.columns if c != ROW], columns)

    def numeric(self, column: str) -> Column:
        """A column as doubles (a text column's numbers parsed; missing as null)."""
        from pyspark.sql import functions as F

        if self._kinds[column] == "string":
            t = _stripped(_col(column))
            return F.when(_parses(t), t.cast("double"))
        return _col(column).cast("double")

    def first(self, condition: Column, column: str) -> tuple[int, Any]:
        """(0-based row, value of ``column``) of the first record where ``condition`` holds
        (``(-1, None)`` when none does)."""
        from pyspark.sql import functions as F

        row = self.sdf.where(condition).agg(F.min(ROW)).first()[0]  # type: ignore[index]
        if row is None:
            return -1, None
        value = self.sdf.where(F.col(ROW) == row).select(_col(column)).first()[0]  # type: ignore[index]
        return int(row), value

    def check_numeric(self, columns: Sequence[str], method: str) -> None:
        """:func:`sdckit.masking.base.numeric_matrix`'s checks on Spark: a text column must
        hold numbers only, and no value may be infinite (DataErrors naming column, row and
        value). A column known to be finite is not scanned (no method makes a finite column
        infinite): integer columns, the double columns found finite by the pass that counts
        the records (:func:`count_and_finite`), and those scanned by an earlier step."""
        from pyspark.sql import functions as F

        kinds = self._kinds
        scan = [
            c
            for c in columns
            if kinds[c] == "string" or (kinds[c] == "double" and c not in self.finite)
        ]
        if not scan:
            return
        aggs = []
        for j, c in enumerate(scan):
            t = _stripped(_col(c))
            text_bad = _col(c).isNotNull() & (t != "") & ~_parses(t)
            bad = text_bad if kinds[c] == "string" else F.lit(False)
            aggs += [
                F.sum(bad.cast("long")).alias(f"b{j}"),
                F.sum(_nonfinite(self.numeric(c)).cast("long")).alias(f"i{j}"),
            ]
        facts = self.sdf.agg(*aggs).first()
        assert facts is not None
        for j, c in enumerate(scan):
            if int(facts[f"b{j}"] or 0):
                t = _stripped(_col(c))
                row, value = self.first(_col(c).isNotNull() & (t != "") & ~_parses(t), c)
                raise DataError(
                    f"{method} needs numeric columns, but column {c!r} has the non-numeric "
                    f"value {value!r} (row {row + 1}); choose numeric columns or recode this "
                    "one first"
                )
        for j, c in enumerate(scan):
            count = int(facts[f"i{j}"] or 0)
            if count:
                row, value = self.first(_nonfinite(self.numeric(c)), c)
                raise DataError(
                    f"{method} needs finite numbers, but column {c!r} has '{value}' (row "
                    f"{row + 1}; {count} infinite value(s) in all); remove or recode the value "
                    "(e.g. top-code it) and mask again"
                )
        self.finite.update(c for c in scan if kinds[c] == "double")

    def missing(self, columns: Sequence[str], numbers: bool = False) -> dict[str, int]:
        """Per column the number of missing values (``numbers``: of records without a
        number, :meth:`numeric` null) in one aggregate pass."""
        from pyspark.sql import functions as F

        value = self.numeric if numbers else _col
        facts = self.sdf.agg(
            *[F.sum(value(c).isNull().cast("long")).alias(f"m{j}") for j, c in enumerate(columns)]
        ).first()
        assert facts is not None
        return {c: int(facts[f"m{j}"] or 0) for j, c in enumerate(columns)}

    def first_missing(self, column: str, numbers: bool = False) -> tuple[int, Any]:
        """Row and value of the first missing value (number); a null as the local engine
        holds a missing value of the column's kind (``<NA>`` in an integer or boolean column,
        NaN elsewhere)."""
        x = self.numeric(column) if numbers else _col(column)
        row, value = self.first(x.isNull(), column)
        if row >= 0 and value is None:
            kind = self._kinds[column]
            value = {"long": pd.NA, "boolean": pd.NA, "double": np.float64(np.nan)}.get(
                kind, np.nan
            )
        return row, value

    def _summary(self, column: str) -> tuple[int, float, float]:
        from pyspark.sql import functions as F

        if column not in self._moments:
            x = self.numeric(column)
            facts = self.sdf.agg(F.count(x), F.min(x), F.max(x)).first()
            assert facts is not None
            n = int(facts[0])
            lo, hi = (float(facts[1]), float(facts[2])) if n else (np.nan, np.nan)
            self._moments[column] = (n, lo, hi)
        return self._moments[column]

    def count(self, column: str) -> int:
        """The number of non-missing numbers (``count``)."""
        return self._summary(column)[0]

    def min_max(self, column: str) -> tuple[float, float]:
        """The smallest and largest number (``min``, ``max``)."""
        _, lo, hi = self._summary(column)
        return lo, hi

    def exact_sums(
        self,
        columns: Sequence[str],
        terms: Callable[[np.ndarray], list[int | float]],
        where: Column | None = None,
    ) -> list[int | float]:
        """The sums over the records (those where ``where`` holds) of ``terms``, a function
        of :mod:`sdckit.masking.moments` giving per column exact integer sums of a batch's
        matrix of the ``columns`` (:meth:`numeric`; NaN for missing): applied to every Arrow
        batch in ``mapInPandas``, the integers of the partitions added on the driver, so
        the result does not depend on the partitioning and is the local engine's."""
        from sdckit.spark.frame import _quiet

        sdf = self.sdf if where is None else self.sdf.where(where)
        names = [f"x{j}" for j in range(len(columns))]
        x = sdf.select(*[self.numeric(c).alias(n) for c, n in zip(columns, names, strict=True)])

        def worker(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
            total: list[int | float] | None = None
            for pdf in batches:
                part = terms(pdf[names].to_numpy(dtype=np.float64, na_value=np.nan))
                total = part if total is None else [a + b for a, b in zip(total, part, strict=True)]
            if total is not None:  # exact integers as text; an infinite or NaN sum as float:
                yield pd.DataFrame({"t": [";".join(_text(v) for v in total)]})

        with _quiet():
            rows = x.mapInPandas(worker, "t string").collect()
        sums: list[int | float] | None = None
        for row in rows:
            part = [_number(v) for v in str(row[0]).split(";")]
            sums = part if sums is None else [a + b for a, b in zip(sums, part, strict=True)]
        return sums if sums is not None else terms(np.empty((0, len(columns))))

    def std(self, columns: Sequence[str]) -> np.ndarray:
        """The sample standard deviation (``ddof=1``) per column from exact sums
        (:mod:`sdckit.masking.moments`: the local engine's bits; 0 where a column has fewer
        than two numbers): two passes, the sums and counts, then the squared deviations."""
        p = len(columns)
        first = self.exact_sums(columns, _sums_and_counts)
        counts = [int(c) for c in first[p:]]
        mean = moments.means_from(first[:p], counts)
        squares = self.exact_sums(columns, lambda x: moments.square_sums(x, mean))
        return np.nan_to_num(moments.stds_from(squares, counts))

    def mean(self, columns: Sequence[str]) -> np.ndarray:
        """The mean per column from its exact sum (NaN for a column without numbers)."""
        p = len(columns)
        first = self.exact_sums(columns, _sums_and_counts)
        return moments.means_from(first[:p], [int(c) for c in first[p:]])

    def covariance(self, columns: Sequence[str]) -> tuple[int, np.ndarray]:
        """The sample covariance matrix (``ddof=1``) over the records with numbers in all
        columns, from exact sums (:mod:`sdckit.masking.moments`)."""
        from pyspark.sql import functions as F

        complete = F.lit(True)
        for c in columns:
            complete = complete & self.numeric(c).isNotNull()
        p = len(columns)
        first = self.exact_sums(columns, _sums_and_counts, complete)
        m = int(first[p]) if p else 0
        if m < 2:
            return m, np.empty((0, 0))
        mean = moments.means_from(first[:p], [m] * p)
        products = self.exact_sums(columns, lambda x: moments.product_sums(x, mean), complete)
        return m, moments.covariance_from(products, m, p)

    def quantiles(self, column: str, q: Sequence[float] | np.ndarray) -> np.ndarray:
        """Exact quantiles (:func:`~sdckit.spark.frame.exact_quantiles`)."""
        return exact_quantiles(self.sdf, self.numeric(column), [float(v) for v in q])[1]

    def tail(self, column: str, threshold: float, side: str) -> tuple[int, float | None]:
        """Count (``sum``) and mean (``avg``) of the numbers beyond the threshold."""
        from pyspark.sql import functions as F

        x = self.numeric(column)
        hit = (x > threshold) if side == "top" else (x < threshold)
        total, count = self.exact_sums([column], _sums_and_counts, F.coalesce(hit, F.lit(False)))
        if not count:
            return 0, None
        return int(count), float(moments.means_from([total], [int(count)])[0])

    def first_outside(
        self, column: str, low: float, high: float, low_open: bool = False
    ) -> tuple[int, Any]:
        """Row and value of the first number outside the interval."""
        x = self.numeric(column)
        below = (x <= float(low)) if low_open else (x < float(low))
        return self.first(x.isNotNull() & (below | (x > float(high))), column)

    def _counts(self, column: str, canonical: bool) -> list[tuple[Any, int]]:
        """(value, count) of a column's non-missing values in order of first appearance:
        by canonical text (``canonical``) or by the value (numbers parsed back)."""
        from pyspark.sql import functions as F

        from sdckit.spark.io import text_column

        value = text_column(self.sdf, column) if canonical else _col(column).cast("string")
        rows = (
            self.sdf.where(_col(column).isNotNull())
            .groupBy(value.alias("v"))
            .agg(F.count(F.lit(1)).alias("n"), F.min(ROW).alias("r"))
            .collect()
        )
        parse: dict[str, Callable[[str], Any]] = {
            "long": int,
            "double": float,
            "boolean": lambda v: v == "true",
            "string": str,
        }
        kind = "string" if canonical else self._kinds[column]
        rows = sorted(rows, key=lambda r: int(r["r"]))
        return [(parse[kind](r["v"]), int(r["n"])) for r in rows]

    def has_categories(self, column: str) -> bool:
        """Whether the column was recoded to intervals (its categories are known)."""
        return column in self.categories

    def value_counts(self, column: str) -> tuple[pd.Series, np.ndarray]:
        """The distinct values in their local dtype (a column recoded to intervals: its
        ordered categories, empty intervals included) and their counts (one group-by)."""
        found = dict(self._counts(column, canonical=False))
        if column in self.categories:
            names = self.categories[column]
            cat = pd.Categorical(names, categories=names, ordered=True)
            return pd.Series(cat), np.array([found.get(v, 0) for v in names], dtype=np.int64)
        dtypes = {"long": np.int64, "double": np.float64, "boolean": bool, "string": object}
        values = pd.Series(list(found), dtype=dtypes[self._kinds[column]])
        return values, np.array(list(found.values()), dtype=np.int64)

    def text_counts(self, column: str) -> dict[str, int]:
        """Counts of the canonical texts (:func:`sdckit.spark.io.text_column`)."""
        return dict(self._counts(column, canonical=True))

    def values_outside(
        self, column: str, allowed: Collection[str], limit: int
    ) -> tuple[int, list[str]]:
        """The canonical texts (:func:`sdckit.spark.io.text_column`) not in ``allowed``: a
        filter and a group-by on the executors; the driver gets the first ``limit`` (by
        their first record) and, only when there are that many, their number."""
        from pyspark.sql import functions as F

        from sdckit.spark.io import text_column

        text = text_column(self.sdf, column)
        found = (
            self.sdf.where(_col(column).isNotNull() & ~text.isin(sorted(allowed)))
            .groupBy(text.alias("v"))
            .agg(F.min(ROW).alias("r"))
        )
        first = found.orderBy("r").limit(max(int(limit), 0)).collect() if limit > 0 else []
        count = len(first) if len(first) < limit else found.count()
        return count, [str(r["v"]) for r in first]

    @property
    def row_column(self) -> str | None:
        """Records carry their number in :data:`~sdckit.spark.frame.ROW`."""
        return ROW

    def key_table(self, columns: Sequence[str], k: int) -> tuple[pd.DataFrame, np.ndarray]:
        """The reduced key table: ``k`` copies of every combination shared by at least ``k``
        records (record number ``-1``), then the records of the rarer combinations in record
        order -- one group-by and the rare records collected."""
        from pyspark.sql import functions as F

        cols = list(columns)
        classes = self.sdf.groupBy(*[_col(c) for c in cols]).count()
        safe = classes.where(F.col("count") >= k).collect()
        rare = classes.where(F.col("count") < k).select(
            *[_col(c).alias(f"__sdc_k{j}") for j, c in enumerate(cols)]
        )
        risky = pd.DataFrame(
            self.sdf.join(
                rare,
                on=[_col(c).eqNullSafe(F.col(f"__sdc_k{j}")) for j, c in enumerate(cols)],
            )
            .select(ROW, *[_col(c) for c in cols])
            .orderBy(ROW)
            .toPandas()
        )
        dtypes = {"long": "Int64", "double": np.float64, "boolean": "boolean", "string": object}
        copies = [list(r[: len(cols)]) for r in safe for _ in range(k)]
        table = pd.DataFrame(
            {
                c: pd.Series(
                    [row[j] for row in copies] + risky[c].tolist(), dtype=dtypes[self._kinds[c]]
                )
                for j, c in enumerate(cols)
            }
        )
        rows = np.concatenate(
            [np.full(len(copies), -1, dtype=np.int64), risky[ROW].to_numpy(dtype=np.int64)]
        )
        return table, rows

    def class_counts(self, columns: Sequence[str]) -> tuple[pd.DataFrame, np.ndarray]:
        """The combinations of the columns and their counts (one group-by)."""
        groups = pd.DataFrame(self.sdf.groupBy(*[_col(c) for c in columns]).count().toPandas())
        return groups[list(columns)], groups["count"].to_numpy(dtype=np.int64)


def _sums_and_counts(x: np.ndarray) -> list[int | float]:
    """Per column of a batch the exact sum of its numbers, then per column their count."""
    return [*moments.column_sums(x), *(~np.isnan(x)).sum(axis=0).tolist()]


def _text(value: int | float) -> str:
    """An exact sum as text: an integer as its digits, a float (infinite, NaN) as ``f<repr>``."""
    return str(value) if isinstance(value, int) else f"f{value!r}"


def _number(text: str) -> int | float:
    """:func:`_text` read back."""
    return float(text[1:]) if text.startswith("f") else int(text)
