"""Masking on Spark (``engine: spark``): a mask job's methods applied to a Spark DataFrame.

The engine computes and applies; the masking code is the local engine's. Every step runs in
two phases:

1. **Global statistics first.** What a method reads from the whole column -- the standard
   deviations, covariance matrix and means of additive noise, the category counts of PRAM
   (and so its invariant matrix), the two categories of randomized response, the breaks of
   equal-width / equal-frequency recoding, the quantile thresholds and tail means of top and
   bottom coding -- is computed on Spark over ALL records with exact aggregates. Quantiles are
   NumPy's default (``linear``, Hyndman & Fan 1996 definition 7, as the local methods use
   ``numpy.quantile``): the two order statistics around ``(n - 1) q`` are found by a global
   sort (:func:`exact_quantiles`) and interpolated exactly as NumPy interpolates
   (:func:`linear_quantiles`), so the local and Spark thresholds are the same numbers. Sums
   (means, standard deviations, covariances, the tail mean of ``replace: mean``) are Spark
   aggregates: equal to the local values up to the order of floating-point summation.
2. **Application per record.** The fixed parameters are applied record by record: by
   built-in column expressions where the method is a comparison (top/bottom coding, interval
   recoding, grouping of categories, suppression), and otherwise by the local column function
   itself in ``mapInPandas`` (noise, multiplicative noise, PRAM, randomized response,
   rounding: NumPy arithmetic, so deterministic methods give bit-identical values).

Randomness and reproducibility: records are numbered in input order (:func:`with_row_index`,
the row number of the local reader for one file) and cut into blocks of :data:`BLOCK_ROWS`
consecutive records. Block ``b`` of step ``i`` draws from
``numpy.random.Generator(SeedSequence(s_i, spawn_key=(b,)))`` (``s_i`` the step seed of
:func:`~sdckit.masking.pipeline.step_seeds`), with the records of the block in row order; the
whole block is on one partition (the data are repartitioned by block before a random step).
So the same seed gives the same output on any cluster, number of executors or partitioning.
A random draw made once per step (PRAM's random diagonal) uses ``default_rng(s_i)`` on the
driver.

Local suppression (:func:`sdckit.masking.suppression.local_suppression`) decides per record,
sequentially; its decisions depend only on the records of key combinations rarer than ``k``
(in row order) and on at most ``k`` copies of each other combination (those records are never
changed: a suppression only raises frequencies). The driver collects exactly that reduced
table, runs the local algorithm on it and joins the suppressions back, so the result equals
the local engine's record for record; k-anonymity (a missing value matching any value) is then
verified on Spark's group-by of the keys.

Microaggregation runs within strata (``strata`` columns, or ``block_by``/``block_size``: blocks
along a sort key), each stratum on one executor (``groupBy(...).applyInPandas``) with the
local method on the stratum's records in row order -- what the local engine does with the same
parameters. Without strata the step is refused (a whole file does not fit one executor).

Refused (ConfigError naming the step and the supported methods): rank swapping, data swapping
and record swapping (they pair records across the whole file), resampling (bootstrap samples
of whole columns) and sampling (an exact sample size allocated over the whole file).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sdckit.errors import ConfigError, DataError, ParameterError, SdcInputError, preview
from sdckit.spark.frame import (
    _PREFIX,
    _RANK,
    ROW,
    _col,
    _kind,
    _local_frame,
    _pandas,
    _parses,
    _quiet,
    _schema_with,
    _spark_frame,
    _stripped,
    exact_quantiles,
    ranked,
    with_row_index,
    worker_errors,
)

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import Column, DataFrame

    from sdckit.masking.pipeline import Pipeline
    from sdckit.masking.spec import MaskingMethod

#: Records per block of randomness (see the module docstring); part of what a seed means.
BLOCK_ROWS = 65_536
_FLAG = "__sdc_changed_"
_INFO = "__sdc_info"
_BLOCK = "__sdc_block"


def spark_methods() -> tuple[str, ...]:
    """The masking methods the Spark engine applies (job-file names, aliases included): those
    whose class lists ``"spark"`` in its ``engines``."""
    from sdckit.masking.pipeline import METHODS

    return tuple(
        alias
        for name in METHODS.where(lambda traits: "spark" in traits.engines)
        for alias in (name, *METHODS.entry(name).aliases)
    )


_REFUSED = {
    "rank_swapping": "swaps values between records up to a rank distance over the whole file",
    "data_swapping": "pairs records across the whole file",
    "record_swapping": "swaps households between areas of the whole file",
    "resampling": "averages bootstrap samples of whole columns",
    "sampling": "allocates an exact sample size over the whole file",
}


# --------------------------------------------------------------------------------------------
# refusals, worker errors
# --------------------------------------------------------------------------------------------


def check_spark_pipeline(pipeline: Pipeline, where: str = "methods") -> None:
    """ConfigError, before any data is read, for a step the Spark engine does not run: a
    method that is global by nature (swapping, resampling, sampling) or microaggregation
    without strata. The message names the step and lists what the engine supports."""
    from sdckit.masking.microaggregation import Microaggregation

    supported = ", ".join(spark_methods())
    for i, step in enumerate(pipeline.steps):
        key = f"{where}[{i}].{step.spec_name}"
        if step.spec_name in _REFUSED:
            raise ConfigError(
                f"{key}: engine 'spark' does not run {step.spec_name} (it "
                f"{_REFUSED[step.spec_name]}); the Spark engine runs {supported} -- use "
                "engine: local for this method"
            )
        if isinstance(step, Microaggregation) and not step.stratified:
            raise ConfigError(
                f"{key}: on engine 'spark' microaggregation runs within strata, each stratum "
                "on one executor: give `strata: [column, ...]` (e.g. a region) or "
                "`block_by: [column]` with `block_size: N` (blocks of N records along a sort "
                "key); every stratum needs at least k records"
            )


# --------------------------------------------------------------------------------------------
# row numbers, ranks, order statistics, quantiles
# --------------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------------
# reading: types (as jobs.mask._typed) and identifiers (as core.pseudonymize)
# --------------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------------
# pandas <-> Spark types inside workers
# --------------------------------------------------------------------------------------------


def _changed(before: pd.Series, after: pd.Series) -> np.ndarray:
    """Per record: did the value change (missing equals missing; numbers compared as
    numbers, other values by canonical text)?"""
    from sdckit.core.encoding import as_text, is_numeric

    a_na, b_na = before.isna().to_numpy(), after.isna().to_numpy()
    if is_numeric(before) and is_numeric(after):
        x = before.to_numpy(dtype=np.float64, na_value=np.nan)
        y = after.to_numpy(dtype=np.float64, na_value=np.nan)
        same = (x == y) | (a_na & b_na)
    else:
        same = (as_text(before) == as_text(after)) & (a_na == b_na)
    return ~np.asarray(same, dtype=bool)


# --------------------------------------------------------------------------------------------
# the pipeline
# --------------------------------------------------------------------------------------------


@dataclass
class SparkMaskResult:
    """What :func:`apply_pipeline_spark` produced: ``data`` the masked table (with
    :data:`ROW`), ``records`` the published method records (as the local
    :meth:`~sdckit.masking.pipeline.Pipeline.apply` returns them), ``strata`` one entry per
    microaggregation step (its strata facts), ``n`` the number of records."""

    data: DataFrame
    records: list[dict[str, Any]]
    strata: list[dict[str, Any]] = field(default_factory=list)
    n: int = 0
    _cached: list[DataFrame] = field(default_factory=list, repr=False)

    def release(self) -> None:
        """Free the cached intermediate tables (``data`` stays usable: it is recomputed)."""
        for frame in self._cached:
            frame.unpersist()
        self._cached.clear()


@dataclass
class _Run:
    sdf: DataFrame
    n: int
    block_rows: int
    blocked: bool = False
    cached: list[DataFrame] = field(default_factory=list)
    strata: list[dict[str, Any]] = field(default_factory=list)
    settled: bool = True  # the current table is computed (cached) or is the input
    #: columns recoded to intervals: their categories in order (the local engine's ordered
    #: categorical dtype keeps empty intervals as categories too)
    categories: dict[str, list[str]] = field(default_factory=dict)
    #: double columns known to hold no infinite value
    finite: set[str] = field(default_factory=set)

    def kinds(self) -> dict[str, str]:
        return {f.name: _kind(f.dataType) for f in self.sdf.schema.fields}

    def keep(self, sdf: DataFrame) -> DataFrame:
        """Cache ``sdf`` (the next step and the summary read it)."""
        from pyspark import StorageLevel

        sdf = sdf.persist(StorageLevel.MEMORY_AND_DISK)
        self.cached.append(sdf)
        self.settled = False
        return sdf


def _require_columns(run: _Run, columns: Sequence[str]) -> list[str]:
    """The local engine's check_columns on Spark (DataError naming missing columns)."""
    cols = [columns] if isinstance(columns, str) else list(columns)
    names = [c for c in run.sdf.columns if c != ROW]
    missing = [c for c in cols if c not in names]
    if missing:
        raise DataError(
            f"column(s) {', '.join(map(repr, missing))} not found; available columns: "
            f"{', '.join(names)}"
        )
    return cols


def _first(run: _Run, condition: Column, column: str) -> tuple[int, Any]:
    """(0-based row, value of ``column``) of the first record where ``condition`` holds
    (``(-1, None)`` when none does)."""
    from pyspark.sql import functions as F

    row = run.sdf.where(condition).agg(F.min(ROW)).first()[0]  # type: ignore[index]
    if row is None:
        return -1, None
    value = run.sdf.where(F.col(ROW) == row).select(_col(column)).first()[0]  # type: ignore[index]
    return int(row), value


def _require_numeric(
    run: _Run, columns: Sequence[str], method: str, numeric: bool = True, counts: bool = False
) -> dict[str, dict[str, int]]:
    """:func:`sdckit.masking.base.numeric_matrix`'s checks on Spark (with ``numeric``): a text
    column must hold numbers only, and no value may be infinite (DataErrors naming column,
    row and value). A column known to be finite is not scanned (no method makes a finite
    column infinite): integer columns, the double columns found finite by the pass that
    counts the records (:func:`_count_and_finite`), and those scanned by an earlier step.
    With ``counts``, returns per column its numbers (``n``) and missing values
    (``missing``) from the same aggregate pass."""
    from pyspark.sql import functions as F

    kinds = run.kinds()
    unchecked = [
        c for c in columns if kinds[c] == "string" or (kinds[c] == "double" and c not in run.finite)
    ]
    scan = list(columns) if counts else (unchecked if numeric else [])
    if not scan:
        return {}
    aggs = []
    for j, c in enumerate(scan):
        t = _stripped(_col(c))
        text_bad = _col(c).isNotNull() & (t != "") & ~_parses(t)
        bad = text_bad if kinds[c] == "string" and numeric else F.lit(False)
        number = _numeric(run, c)
        aggs += [
            F.sum(bad.cast("long")).alias(f"b{j}"),
            F.sum(_nonfinite(number).cast("long")).alias(f"i{j}"),
            F.count(number).alias(f"n{j}"),
            F.sum(_col(c).isNull().cast("long")).alias(f"m{j}"),
        ]
    facts = run.sdf.agg(*aggs).first()
    assert facts is not None
    for j, c in enumerate(scan):
        if numeric and int(facts[f"b{j}"] or 0):
            t = _stripped(_col(c))
            row, value = _first(run, _col(c).isNotNull() & (t != "") & ~_parses(t), c)
            raise DataError(
                f"{method} needs numeric columns, but column {c!r} has the non-numeric value "
                f"{value!r} (row {row + 1}); choose numeric columns or recode this one first"
            )
    for j, c in enumerate(scan):
        count = int(facts[f"i{j}"] or 0)
        if numeric and count:
            x = _numeric(run, c)
            row, value = _first(run, _nonfinite(x), c)
            raise DataError(
                f"{method} needs finite numbers, but column {c!r} has '{value}' (row "
                f"{row + 1}; {count} infinite value(s) in all); remove or recode the value "
                "(e.g. top-code it) and mask again"
            )
    if numeric:
        run.finite.update(c for c in scan if kinds[c] == "double")
    return {
        c: {"n": int(facts[f"n{j}"]), "missing": int(facts[f"m{j}"] or 0)}
        for j, c in enumerate(scan)
    }


def _blocked(run: _Run) -> DataFrame:
    """The current table with every block of :attr:`_Run.block_rows` records on one
    partition, in row order (a shuffle; done once before the random steps that follow)."""
    from pyspark.sql import functions as F

    if run.blocked:
        return run.sdf
    n_blocks = max(1, -(-run.n // run.block_rows))
    spark = run.sdf.sparkSession
    parts = max(1, min(n_blocks, max(spark.sparkContext.defaultParallelism, 2)))
    block = F.expr(f"`{ROW}` div {int(run.block_rows)}")
    return run.sdf.repartition(parts, block).sortWithinPartitions(ROW)


def _map_step(
    run: _Run,
    fn: Callable[[pd.DataFrame, np.random.Generator | None], pd.DataFrame],
    columns: Sequence[str],
    out_kinds: dict[str, str],
    step_seed: int | None,
    random: bool,
) -> list[int]:
    """Apply ``fn`` (a local column function with fixed global parameters) with
    ``mapInPandas``: to every block of records with its own generator when ``random``, else
    to every Arrow batch. Replaces the current table (cached) and returns, per column of
    ``columns``, how many values changed."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    source = _blocked(run) if random else run.sdf
    kinds_in = {f.name: _kind(f.dataType) for f in source.schema.fields}
    flags = [f"{_FLAG}{j}" for j in range(len(columns))]
    schema = _schema_with(source, out_kinds, [T.StructField(f, T.BooleanType()) for f in flags])
    block_rows = int(run.block_rows)
    cols = list(columns)

    def process(pdf: pd.DataFrame, rng: np.random.Generator | None) -> pd.DataFrame:
        out = pdf.reset_index(drop=True)
        local = _local_frame(out, kinds_in)
        result = fn(local, rng)
        converted = _spark_frame(result, out_kinds)
        for c in out_kinds:  # the other columns go back as they came
            out[c] = converted[c]
        for f, c in zip(flags, cols, strict=True):
            out[f] = _changed(local[c], result[c])
        return out

    def worker(batches: Iterator[pd.DataFrame]) -> Iterator[pd.DataFrame]:
        if not random:
            for pdf in batches:
                if len(pdf):
                    yield process(pdf, None)
            return
        pending: list[pd.DataFrame] = []
        current = -1
        for pdf in batches:
            if not len(pdf):
                continue
            block = pdf[ROW].to_numpy(dtype=np.int64) // block_rows
            cuts = np.flatnonzero(np.diff(block)) + 1
            for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, len(pdf)], strict=True):
                b = int(block[lo])
                if pending and b != current:
                    yield process(pd.concat(pending), _block_rng(step_seed, current))
                    pending = []
                current = b
                pending.append(pdf.iloc[lo:hi])
        if pending:
            yield process(pd.concat(pending), _block_rng(step_seed, current))

    with _quiet():
        mapped = source.mapInPandas(worker, schema)
    mapped = run.keep(mapped)
    with worker_errors():
        sums = mapped.agg(*[F.sum(F.col(f).cast("long")).alias(f) for f in flags]).first()
    run.settled = True
    run.sdf = mapped.drop(*flags)
    run.blocked = random or run.blocked
    return [int(sums[f] or 0) for f in flags] if sums is not None else [0] * len(flags)


def _block_rng(step_seed: int | None, block: int) -> np.random.Generator:
    """The generator of block ``block`` of a step: ``SeedSequence(step_seed, spawn_key=
    (block,))``, the ``block``-th child of the step's seed sequence."""
    return np.random.default_rng(np.random.SeedSequence(step_seed, spawn_key=(int(block),)))


def _empty(run: _Run, columns: Sequence[str]) -> pd.DataFrame:
    """No records, the columns in their local dtypes (to read a method's record)."""
    dtypes = {"long": np.int64, "double": np.float64, "boolean": bool, "string": object}
    kinds = run.kinds()
    return pd.DataFrame({c: pd.Series([], dtype=dtypes[kinds[c]]) for c in columns})


def _unchanged(
    step: MaskingMethod, key: str, n: int, cols: Sequence[str], changed: list[int]
) -> None:
    """The local pipeline's rule: a perturbative step that changed nothing is refused."""
    from sdckit.masking.pipeline import unchanged_error

    if step.must_change and not step.allow_unchanged and n and not any(changed):
        raise unchanged_error(key, n, cols)


# -- the methods -------------------------------------------------------------------------------


def _noise(run: _Run, step: Any, seed: int | None, key: str) -> list[dict[str, Any]]:
    """Additive noise: sd (``stddev_samp``), or covariance over the complete records
    (``covar_samp``) and means (``avg``) of the whole data, then the local function."""
    from pyspark.sql import functions as F

    from sdckit.masking import noise_addition

    cols = _require_columns(run, step.columns)
    _require_numeric(run, cols, "additive_noise")
    x = {c: _numeric(run, c) for c in cols}
    p = len(cols)
    kw: dict[str, Any] = {}
    if step.method == "uncorrelated":
        facts = run.sdf.agg(
            *[F.stddev_samp(x[c]).alias(f"s{j}") for j, c in enumerate(cols)],
            *[F.count(x[c]).alias(f"n{j}") for j, c in enumerate(cols)],
        ).first()
        assert facts is not None
        kw["column_sd"] = [
            float(facts[f"s{j}"]) if int(facts[f"n{j}"]) > 1 and facts[f"s{j}"] is not None else 0.0
            for j in range(p)
        ]
    else:
        complete = run.sdf.where(_all_present([x[c] for c in cols]))
        pairs = [(a, b) for a in range(p) for b in range(a, p)]
        facts = complete.agg(
            F.count(F.lit(1)).alias("n"),
            *[F.covar_samp(x[cols[a]], x[cols[b]]).alias(f"c{a}_{b}") for a, b in pairs],
        ).first()
        assert facts is not None
        if int(facts["n"]) < 2:
            raise DataError(
                f"additive_noise: fewer than 2 rows have values in all of {', '.join(cols)}; "
                "the covariance matrix cannot be estimated -- mask fewer columns or impute first"
            )
        cov = np.empty((p, p))
        for a, b in pairs:
            cov[a, b] = cov[b, a] = float(facts[f"c{a}_{b}"])
        kw["covariance"] = cov
        if step.method == "kim":
            means = run.sdf.agg(*[F.avg(x[c]).alias(f"m{j}") for j, c in enumerate(cols)]).first()
            assert means is not None
            kw["column_mean"] = [
                np.nan if means[f"m{j}"] is None else float(means[f"m{j}"]) for j in range(p)
            ]

    def fn(pdf: pd.DataFrame, rng: np.random.Generator | None) -> pd.DataFrame:
        return noise_addition.noise(pdf, cols, step.alpha, step.method, seed=rng, **kw).data

    changed = _map_step(run, fn, cols, dict.fromkeys(cols, "double"), seed, random=True)
    _unchanged(step, key, run.n, cols, changed)
    rec = noise_addition.noise(_empty(run, cols), cols, step.alpha, step.method, seed=0, **kw)
    return [rec.record()]


def _numeric(run: _Run, column: str) -> Column:
    """A column as doubles (a text column's numbers parsed; missing as null)."""
    from pyspark.sql import functions as F

    if run.kinds()[column] == "string":
        t = _stripped(_col(column))
        return F.when(_parses(t), t.cast("double"))
    return _col(column).cast("double")


def _all_present(columns: Sequence[Column]) -> Column:
    from pyspark.sql import functions as F

    cond = F.lit(True)
    for c in columns:
        cond = cond & c.isNotNull()
    return cond


def _multiplicative(run: _Run, step: Any, seed: int | None, key: str) -> list[dict[str, Any]]:
    """Multiplicative noise: no global statistic; the local function on every block."""
    from sdckit.masking import other

    cols = _require_columns(run, step.columns)
    _require_numeric(run, cols, "multiplicative_noise")

    def fn(pdf: pd.DataFrame, rng: np.random.Generator | None) -> pd.DataFrame:
        return other.multiplicative_noise(pdf, cols, step.sd, seed=rng).data

    changed = _map_step(run, fn, cols, dict.fromkeys(cols, "double"), seed, random=True)
    _unchanged(step, key, run.n, cols, changed)
    return [other.multiplicative_noise(_empty(run, cols), cols, step.sd, seed=0).record()]


def _counts_by_column(
    sdf: DataFrame, columns: Sequence[str], canonical: bool
) -> dict[str, dict[Any, int]]:
    """Per column, the counts of its non-missing values, all columns in one group-by: keyed by
    canonical text (``canonical``, :func:`sdckit.spark.io.text_column`) or by the value itself
    (numbers as numbers: Spark's text of a double reads back as the same double)."""
    from pyspark.sql import functions as F

    from sdckit.spark.io import text_column

    kinds = {f.name: _kind(f.dataType) for f in sdf.schema.fields}
    cells = []
    for j, c in enumerate(columns):
        value = text_column(sdf, c) if canonical else _col(c).cast("string")
        cells.append(F.struct(F.lit(j).alias("j"), F.when(_col(c).isNotNull(), value).alias("v")))
    rows = (
        sdf.select(F.explode(F.array(*cells)).alias("s"))
        .where(F.col("s.v").isNotNull())
        .groupBy("s.j", "s.v")
        .count()
        .collect()
    )
    parse: dict[str, Callable[[str], Any]] = {
        "long": int,
        "double": float,
        "boolean": lambda v: v == "true",
        "string": str,
    }
    out: dict[str, dict[Any, int]] = {c: {} for c in columns}
    for j, v, n in rows:
        c = columns[j]
        out[c][str(v) if canonical else parse[kinds[c]](v)] = int(n)
    return out


def _category_values(run: _Run, column: str, found: dict[Any, int]) -> tuple[pd.Series, np.ndarray]:
    """The distinct values of a column (in its local dtype; a column recoded to intervals as
    the local engine's ordered categorical, empty intervals included) and their counts."""
    if column in run.categories:
        names = run.categories[column]
        cat = pd.Categorical(names, categories=names, ordered=True)
        return pd.Series(cat), np.array([found.get(v, 0) for v in names], dtype=np.int64)
    dtypes = {"long": np.int64, "double": np.float64, "boolean": bool, "string": object}
    values = pd.Series(list(found), dtype=dtypes[run.kinds()[column]])
    return values, np.array(list(found.values()), dtype=np.int64)


def _text_counts(sdf: DataFrame, column: str) -> dict[str, int]:
    """Counts of the canonical texts of a column's non-missing values."""
    return _counts_by_column(sdf, [column], canonical=True)[column]


def _pram(run: _Run, step: Any, seed: int | None, key: str) -> list[dict[str, Any]]:
    """PRAM: every column's matrix from its category counts over all records (one group-by;
    the random diagonal drawn on the driver), then the local function on every block."""
    from sdckit.masking import randomization as rz

    cols = _require_columns(run, step.columns)
    given = rz.column_matrices(step.matrix, cols)
    rng = np.random.default_rng(seed)
    plans = {}
    found = _counts_by_column(run.sdf, cols, canonical=False)
    for c in cols:  # in column order, as the local method draws its diagonals
        values, counts = _category_values(run, c, found[c])
        plans[c] = rz.pram_plan(
            c,
            values,
            counts,
            p_diagonal=step.p_diagonal,
            matrix=given.get(c),
            invariant=step.invariant,
            alpha=step.alpha,
            random_diagonal=step.random_diagonal,
            seed=rng,
        )
    kinds = run.kinds()

    def fn(pdf: pd.DataFrame, block_rng: np.random.Generator | None) -> pd.DataFrame:
        return rz.pram(
            pdf,
            cols,
            step.p_diagonal,
            step.matrix,
            step.invariant,
            step.alpha,
            step.random_diagonal,
            seed=block_rng,
            plans=plans,
        ).data

    changed = _map_step(run, fn, cols, {c: kinds[c] for c in cols}, seed, random=True)
    _unchanged(step, key, run.n, cols, changed)
    rec = rz.pram(
        _empty(run, cols),
        cols,
        step.p_diagonal,
        step.matrix,
        step.invariant,
        step.alpha,
        step.random_diagonal,
        seed=0,
        plans=plans,
    ).record()
    released = _counts_by_column(run.sdf, cols, canonical=False)
    for j, c in enumerate(cols):
        plan = plans[c]
        rec["details"][c] = plan.record(
            np.array([released[c].get(v, 0) for v in plan.values]), changed[j]
        )
    return [rec]


def _randomized_response(run: _Run, step: Any, seed: int | None, key: str) -> list[dict[str, Any]]:
    """Randomized response: the two categories from the whole column, then the local
    function on every block; released counts and Warner's estimate from aggregates."""
    from pyspark.sql import functions as F

    from sdckit.core.encoding import as_text
    from sdckit.masking import randomization as rz
    from sdckit.spark.io import text_column

    (col,) = _require_columns(run, [step.column])
    cats: list[Any]
    if step.categories is None:
        present = sorted(_counts_by_column(run.sdf, [col], canonical=False)[col])
        if len(present) != 2:
            raise DataError(
                f"randomized_response: column {col!r} must have exactly two categories, found "
                f"{len(present)} ({preview(present)}); pass categories=(negative, positive)"
                if len(present) < 2
                else f"randomized_response: column {col!r} is not binary: it has "
                f"{len(present)} categories ({preview(present)}); recode it to two categories "
                "or use pram"
            )
        cats = present
    else:
        cats = list(step.categories)
        if len(cats) != 2:
            raise DataError("randomized_response: categories must be (negative, positive)")
        texts = [str(t) for t in as_text(pd.Series(cats, dtype=object))]
        outside = (
            run.sdf.where(_col(col).isNotNull() & ~text_column(run.sdf, col).isin(texts))
            .select(_col(col))
            .distinct()
            .limit(6)
            .collect()
        )
        if outside:
            raise DataError(
                f"randomized_response: column {col!r} has value(s) "
                f"{preview([r[0] for r in outside])} outside categories {cats!r}"
            )
    kinds = run.kinds()

    def fn(pdf: pd.DataFrame, block_rng: np.random.Generator | None) -> pd.DataFrame:
        # per block: OS CSPRNG flips unless the insecure switch lets the block's seed drive them
        return rz.randomized_response(
            pdf, col, step.p, cats, seed=block_rng, insecure_reproducible_noise=insecure
        ).data

    insecure = bool(step.insecure_reproducible_noise)
    changed = _map_step(run, fn, [col], {col: kinds[col]}, seed, random=True)
    _unchanged(step, key, run.n, [col], changed)
    rec = rz.randomized_response(
        _empty(run, [col]), col, step.p, cats, seed=0, insecure_reproducible_noise=insecure
    ).record()
    positive = rec["details"]["positive"]
    facts = run.sdf.agg(
        F.count(_col(col)).alias("n"),
        F.sum((text_column(run.sdf, col) == positive).cast("long")).alias("m"),
    ).first()
    assert facts is not None
    n, m = int(facts["n"]), int(facts["m"] or 0)
    rec["details"].update(
        {
            "n": n,
            "released_positive": m,
            "estimated_positive_proportion": rz.rr_estimate(m, n, step.p) if n else None,
            "n_changed": changed[0],
        }
    )
    return [rec]


def _rounding(run: _Run, step: Any, seed: int | None, key: str) -> list[dict[str, Any]]:
    """Rounding: deterministic, the local function on every batch (NumPy arithmetic, so the
    values equal the local engine's)."""
    from sdckit.masking import other

    cols = _require_columns(run, step.columns)
    base = float(step.base)
    _require_numeric(run, cols, "round_to_base")
    kinds = run.kinds()
    out = {
        c: ("long" if kinds[c] == "long" and float(base).is_integer() else "double") for c in cols
    }

    def fn(pdf: pd.DataFrame, rng: np.random.Generator | None) -> pd.DataFrame:
        return other.rounding(pdf, cols, base).data

    changed = _map_step(run, fn, cols, out, seed, random=False)
    rec = other.rounding(_empty(run, cols), cols, base).record()
    rec["details"]["n_changed"] = dict(zip(cols, changed, strict=True))
    return [rec]


def _recoding(run: _Run, step: Any, seed: int | None, key: str) -> list[dict[str, Any]]:
    """Global recoding, column by column: intervals (breaks from min/max or exact quantiles
    of the whole column; ``when`` expressions) or grouped categories (a map lookup)."""
    cols = _require_columns(run, step.columns)
    records = []
    for c in cols:
        if step.mapping is not None:
            records.append(_group_column(run, c, step.mapping))
        else:
            records.append(_recode_column(run, c, step))
    return records


def _recode_column(run: _Run, c: str, step: Any) -> dict[str, Any]:
    from pyspark.sql import functions as F

    from sdckit.masking import recoding as rc

    _require_numeric(run, [c], "global_recode")
    x = _numeric(run, c)
    if step.method == "breaks":
        b = rc.given_breaks(step.breaks)
    else:
        n_bins = rc.check_bins(step.method, step.bins)
        facts = run.sdf.agg(
            F.count(x).alias("n"), F.min(x).alias("lo"), F.max(x).alias("hi")
        ).first()
        assert facts is not None
        if not int(facts["n"]):
            raise DataError(f"global_recode: column {c!r} has no values to recode")
        lo, hi = float(facts["lo"]), float(facts["hi"])
        if step.method == "log_equidistant" and lo <= 0:
            row, value = _first(run, x <= 0, c)
            raise DataError(rc.nonpositive_message(c, value, row))
        sdf = run.sdf

        def quantile(q: np.ndarray) -> np.ndarray:
            return exact_quantiles(sdf, x, [float(v) for v in q])[1]

        b = rc.interval_breaks(step.method, n_bins, lo, hi, quantile)
    row, value = _first(run, x.isNotNull() & ((x < float(b[0])) | (x > float(b[-1]))), c)
    if row >= 0:
        raise DataError(rc.outside_message(c, value, row, b))
    texts, names = rc.interval_names(b, step.labels)
    k = len(names)
    # code = (number of breaks <= x) - 1, clipped to the k intervals: the first interval
    # whose upper break exceeds x (numpy.searchsorted(b, x, "right") - 1 for sorted b)
    label = F.when(x.isNull(), F.lit(None).cast("string"))
    for i in range(k - 1):
        label = label.when(x < float(b[i + 1]), F.lit(names[i]))
    label = label.otherwise(F.lit(names[k - 1]))
    run.sdf = run.sdf.withColumn(c, label)
    run.categories[c] = list(names)
    counts = _text_counts(run.sdf, c)
    details = {
        "breaks": b.tolist(),
        "intervals": texts,
        "labels": names,
        "counts": [counts.get(name, 0) for name in names],
    }
    params = rc.recode_parameters(c, step.method, step.bins, step.breaks, step.labels)
    return {"method": "global_recode", "parameters": params, "details": details}


def _group_column(run: _Run, c: str, mapping: Any) -> dict[str, Any]:
    from pyspark.sql import functions as F

    from sdckit.masking import recoding as rc
    from sdckit.spark.io import text_column

    table = rc.category_table(mapping)
    text = text_column(run.sdf, c)
    unmapped = (
        run.sdf.where(_col(c).isNotNull() & ~text.isin(list(table)))
        .groupBy(text.alias("t"))
        .agg(F.min(ROW).alias("r"))
        .orderBy("r")
        .limit(11)
        .collect()
    )
    if unmapped:
        raise DataError(rc.unmapped_message(c, [str(r[0]) for r in unmapped]))
    new = pd.Series(list(table.values()), dtype=object).infer_objects()
    kind = (
        "long"
        if pd.api.types.is_integer_dtype(new.dtype)
        else "double"
        if pd.api.types.is_float_dtype(new.dtype)
        else "boolean"
        if pd.api.types.is_bool_dtype(new.dtype)
        else "string"
    )
    cast = {"long": "long", "double": "double", "boolean": "boolean", "string": "string"}[kind]
    pairs = []
    for old, value in table.items():
        pairs += [F.lit(old), F.lit(value if kind != "string" else str(value)).cast(cast)]
    before = text
    recoded = F.when(_col(c).isNull(), F.lit(None).cast(cast)).otherwise(F.create_map(*pairs)[text])
    changed_col = f"{_FLAG}0"
    staged = run.sdf.withColumn(changed_col, before).withColumn(c, recoded)
    staged = staged.withColumn(changed_col, F.col(changed_col) != text_column(staged, c))
    n_changed = staged.agg(F.sum(F.col(changed_col).cast("long"))).first()[0]  # type: ignore[index]
    run.sdf = staged.drop(changed_col)
    run.categories.pop(c, None)
    details = {
        "mapping": {str(k): str(v) for k, v in table.items()},
        "n_changed": int(n_changed or 0),
    }
    return {"method": "group_categories", "parameters": {"column": c}, "details": details}


def _tail_quantiles(
    sdf: DataFrame, c: str, x: Column, given: Sequence[float | None]
) -> Callable[[float], float]:
    """The quantile function :func:`~sdckit.masking.recoding.coding_thresholds` calls: both
    requested quantiles from one sort, on first use (DataError when the column is empty)."""
    wanted = [float(q) for q in given if q is not None]
    found: dict[float, float] = {}

    def quantile(q: float) -> float:
        if not found:
            n, values = exact_quantiles(sdf, x, wanted)
            if not n:
                raise DataError(f"top_bottom_code: column {c!r} has no values")
            found.update(zip(wanted, map(float, values), strict=True))
        return found[float(q)]

    return quantile


def _top_bottom(run: _Run, step: Any, seed: int | None, key: str) -> list[dict[str, Any]]:
    """Top and bottom coding, column by column: thresholds given or exact quantiles of the
    whole column, tail counts and means by aggregates, the coding by ``when``."""
    from pyspark.sql import functions as F

    from sdckit.masking import recoding as rc

    cols = _require_columns(run, step.columns)
    rc.check_coding(step.top, step.bottom, step.top_quantile, step.bottom_quantile, step.replace)
    records = []
    for c in cols:
        _require_numeric(run, [c], "top_bottom_code")
        x = _numeric(run, c)
        quantile = _tail_quantiles(run.sdf, c, x, (step.top_quantile, step.bottom_quantile))
        t, b = rc.coding_thresholds(
            step.top, step.bottom, step.top_quantile, step.bottom_quantile, quantile
        )
        sides = [(side, thr) for side, thr in (("top", t), ("bottom", b)) if thr is not None]
        hits = {side: (x > thr) if side == "top" else (x < thr) for side, thr in sides}
        facts = run.sdf.agg(
            *[F.sum(hits[s].cast("long")).alias(f"n_{s}") for s, _ in sides],
            *[F.avg(F.when(hits[s], x)).alias(f"m_{s}") for s, _ in sides],
        ).first()
        assert facts is not None
        details: dict[str, Any] = {}
        values = {}
        for side, thr in sides:
            count = int(facts[f"n_{side}"] or 0)
            value = float(facts[f"m_{side}"]) if step.replace == "mean" and count else thr
            values[side] = (value, count)
            details[side] = {"threshold": thr, "replacement": value, "n_coded": count}
        kind = run.kinds()[c]
        whole = kind == "long" and all(
            float(v).is_integer() for v, count in values.values() if count
        )
        target = "long" if whole else "double"
        coded = x
        for side, _ in sides:
            coded = F.when(hits[side], F.lit(values[side][0])).otherwise(coded)
        run.sdf = run.sdf.withColumn(c, coded.cast(target))
        params = rc.coding_parameters(
            c, step.top, step.bottom, step.top_quantile, step.bottom_quantile, step.replace
        )
        records.append({"method": "top_bottom_code", "parameters": params, "details": details})
    return records


def _local_suppression(run: _Run, step: Any, seed: int | None, key: str) -> list[dict[str, Any]]:
    """Local suppression: the local algorithm on the reduced table (every record of a key
    combination rarer than ``k``, in row order, plus ``k`` copies of every other
    combination -- see the module docstring), its suppressions joined back by row, then
    k-anonymity verified on the group-by of the keys."""
    from pyspark.sql import functions as F

    from sdckit.errors import VerificationError
    from sdckit.masking import suppression

    cols = _require_columns(run, step.columns)
    if len(set(cols)) != len(cols):
        raise ParameterError("local_suppression: a key is listed twice")
    k = int(step.k)
    if k > run.n:
        raise DataError(
            f"local_suppression: k={k} exceeds the {run.n} records; no suppression can "
            "make a record indistinguishable from more records than exist"
        )
    keys = [_col(c) for c in cols]
    classes = run.sdf.groupBy(*keys).count()
    safe = classes.where(F.col("count") >= k).collect()
    rare = classes.where(F.col("count") < k).select(
        *[_col(c).alias(f"{_PREFIX}k{j}") for j, c in enumerate(cols)]
    )
    risky = _pandas(
        run.sdf.join(
            rare,
            on=[_col(c).eqNullSafe(F.col(f"{_PREFIX}k{j}")) for j, c in enumerate(cols)],
        )
        .select(ROW, *[_col(c) for c in cols])
        .orderBy(ROW)
    )
    dtypes = {"long": "Int64", "double": np.float64, "boolean": "boolean", "string": object}
    kinds = run.kinds()
    copies = [list(r[: len(cols)]) for r in safe for _ in range(k)]
    reduced = pd.DataFrame(
        {
            c: pd.Series([row[j] for row in copies] + risky[c].tolist(), dtype=dtypes[kinds[c]])
            for j, c in enumerate(cols)
        }
    )
    result = suppression.local_suppression(
        reduced, cols, k, step.importance, step.combinations_up_to
    )
    offset = len(copies)
    before = reduced.iloc[offset:][cols].isna().to_numpy()
    after = result.data.iloc[offset:][cols].isna().to_numpy()
    suppressed = after & ~before
    hit = suppressed.any(axis=1)
    flags = [f"{_FLAG}{j}" for j in range(len(cols))]
    if hit.any():
        decided = pd.DataFrame(
            {ROW: risky[ROW].to_numpy(dtype=np.int64)[hit]}
            | {f: suppressed[hit, j] for j, f in enumerate(flags)}
        )
        spark = run.sdf.sparkSession
        small = spark.createDataFrame(decided)
        joined = run.sdf.join(F.broadcast(small), on=ROW, how="left")
        joined = joined.select(
            *[
                F.when(F.coalesce(F.col(flags[cols.index(c)]), F.lit(False)), F.lit(None))
                .otherwise(_col(c))
                .alias(c)
                if c in cols
                else _col(c)
                for c in run.sdf.columns
            ]
        )
        run.sdf = run.keep(joined)
        run.blocked = False
        run.settled = False
    # independent check on Spark: every class of the keys (or of each subset) has f_k >= k
    for sub in result.details["subsets"]:
        groups = _pandas(run.sdf.groupBy(*[_col(c) for c in sub]).count())
        fk = suppression.class_frequencies(groups[sub], groups["count"].to_numpy(), sub)
        if len(fk) and fk.min() < k:
            raise VerificationError(
                f"local_suppression: the result is not {k}-anonymous on {sub}; this is a bug"
            )
    # missing before, over all records: the rare records and the frequent classes' counts
    result.details["missing_before"] = {
        c: int(risky[c].isna().sum()) + sum(int(r[-1]) for r in safe if r[j] is None)
        for j, c in enumerate(cols)
    }
    return [result.record()]


def _stratum_of(step: Any, pdf: pd.DataFrame) -> dict[str, Any]:
    from sdckit.masking import microaggregation as ma

    if step.strata is not None:
        return ma.stratum_key(list(step.strata), [pdf[c].iloc[0] for c in step.strata])
    return {"block": int(pdf[_BLOCK].iloc[0])}


_MA_FUNCTION = {
    "mdav": "mdav",
    "vmdav": "vmdav",
    "optimal_univariate": "optimal_univariate",
    "individual_ranking": "individual_ranking",
    "fuzzy": "fuzzy_microaggregation",
    "categorical": "categorical_microaggregation",
    "kanonymity": "kanonymity_microaggregation",
}


def _microaggregation(run: _Run, step: Any, seed: int | None, key: str) -> list[dict[str, Any]]:
    """Microaggregation within strata: stratum sizes checked (>= k), every stratum
    aggregated by the local method on one executor (``applyInPandas``, records in row
    order, ``fuzzy`` seeded per stratum), the per-stratum records merged."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    from sdckit.masking import microaggregation as ma

    inner = step.unstratified()
    cols = _require_columns(run, list(step.columns or [c for g in (step.groups or []) for c in g]))
    kinds = run.kinds()
    numeric = all(kinds[c] in ("long", "double") for c in cols)
    as_numbers = step.method not in ("categorical", "kanonymity") or (
        step.method == "kanonymity" and numeric
    )
    function = _MA_FUNCTION[step.method]
    if step.method == "kanonymity":
        function = "mdav" if numeric else "categorical_microaggregation"
    facts = _require_numeric(run, cols, function, numeric=as_numbers, counts=True)
    for c in cols:
        if facts[c]["missing"]:
            row, value = _first(run, _col(c).isNull(), c)
            raise DataError(
                f"{function}: column {c!r} has a missing or infinite value in row {row + 1} "
                f"({value!r}); microaggregation needs complete numeric data: impute or drop "
                "such rows first"
                if as_numbers
                else f"{function}: column {c!r} has a missing value in row {row + 1}; impute "
                "or drop such rows first"
            )
    source = run.sdf
    if step.strata is not None:
        group_cols = _require_columns(run, step.strata)
    else:
        _require_columns(run, step.block_by)
        ranks = ranked(source, [*step.block_by, ROW])
        n_blocks = max(1, run.n // int(step.block_size))
        block = F.least(
            F.expr(f"`{_RANK}` div {int(step.block_size)}"), F.lit(n_blocks - 1).cast("long")
        )
        source = ranks.withColumn(_BLOCK, block).drop(_RANK)
        group_cols = [_BLOCK]
    sizes = source.groupBy(*[_col(c) for c in group_cols]).count().collect()
    strata = []
    for r in sizes:
        values = list(r[: len(group_cols)])
        k_of = (
            ma.stratum_key(group_cols, values)
            if step.strata is not None
            else {"block": int(values[0])}
        )
        order = tuple((v is None, v) for v in values)
        strata.append((order, k_of, int(r[-1])))
    strata.sort(key=lambda s: s[0])
    for _, k_of, size in strata:
        ma.check_stratum_size(size, step.k, k_of, "microaggregation")
    summary = ma.strata_summary(step.strata_spec(), [s[2] for s in strata], [s[1] for s in strata])

    out_kinds = {
        c: ("double" if as_numbers or kinds[c] in ("long", "double") else kinds[c]) for c in cols
    }
    kinds_in = {f.name: _kind(f.dataType) for f in source.schema.fields}
    schema = _schema_with(source, out_kinds, [T.StructField(_INFO, T.StringType())])
    base = seed

    def per_stratum(pdf: pd.DataFrame) -> pd.DataFrame:
        pdf = pdf.sort_values(ROW, kind="stable").reset_index(drop=True)
        local = _local_frame(pdf, kinds_in)
        stratum = _stratum_of(step, local)
        results = inner._apply_whole(local, ma.stratum_seed(base, stratum))
        converted = _spark_frame(results[-1].data, out_kinds)
        out = pdf.copy()
        for c in out_kinds:  # the other columns go back as they came
            out[c] = converted[c]
        info: list[str | None] = [None] * len(out)
        info[0] = json.dumps(
            {
                "stratum": stratum,
                "size": len(out),
                "records": [r.record() for r in results],
            },
            default=_json_default,
        )
        out[_INFO] = info
        return out

    with _quiet():
        applied = source.groupBy(*[_col(c) for c in group_cols]).applyInPandas(per_stratum, schema)
    applied = run.keep(applied)
    with worker_errors():
        infos = [
            json.loads(r[0])
            for r in applied.where(F.col(_INFO).isNotNull()).select(_INFO).collect()
        ]
    run.settled = True
    run.sdf = applied.drop(_INFO, *([_BLOCK] if step.strata is None else []))
    for c in cols:
        run.categories.pop(c, None)
    run.blocked = False
    by_key = {json.dumps(d["stratum"], sort_keys=True): d for d in infos}
    ordered = [by_key[json.dumps(s[1], sort_keys=True)] for s in strata]
    records = []
    for j, first in enumerate(ordered[0]["records"]):
        params = {k: v for k, v in first["parameters"].items() if k != "seed"}
        params.update(step.strata_spec())
        details = ma.merge_stratum_details([d["records"][j]["details"] for d in ordered], summary)
        records.append({"method": first["method"], "parameters": params, "details": details})
    run.strata.append(summary)
    return records


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"not JSON serializable: {type(value).__name__}")


_APPLIERS: dict[str, Callable[[_Run, Any, int | None, str], list[dict[str, Any]]]] = {
    "noise": _noise,
    "multiplicative_noise": _multiplicative,
    "pram": _pram,
    "randomized_response": _randomized_response,
    "rounding": _rounding,
    "global_recoding": _recoding,
    "top_bottom_coding": _top_bottom,
    "local_suppression": _local_suppression,
    "microaggregation": _microaggregation,
}


def _nonfinite(x: Column) -> Column:
    """Whether a double is infinite or NaN (``x - x`` is NaN exactly then; null stays null)."""
    from pyspark.sql import functions as F

    return F.isnan(x - x)


def _count_and_finite(sdf: DataFrame) -> tuple[int, set[str]]:
    """The number of records and the double columns holding no infinite (or NaN) value, in
    the one aggregate pass that counts the records: a masking step then checks such a column
    without scanning it (:func:`_require_numeric`), and a column that is not finite is
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


def apply_pipeline_spark(
    sdf: DataFrame,
    pipeline: Pipeline,
    seed: int | None = None,
    *,
    where: str = "methods",
    block_rows: int = BLOCK_ROWS,
) -> SparkMaskResult:
    """Mask a Spark DataFrame with every step of ``pipeline`` in order (the Spark engine's
    :meth:`~sdckit.masking.pipeline.Pipeline.apply`).

    ``sdf`` holds typed columns (:func:`typed_spark`) and :data:`ROW` (added by
    :func:`with_row_index` when absent). Steps are checked first
    (:func:`check_spark_pipeline`, each step's :meth:`check_records`); step ``i`` gets the
    ``i``-th seed of :func:`~sdckit.masking.pipeline.step_seeds`, and its blocks their
    generators from it (module docstring), so the same seed gives the same output on any
    partitioning. Errors keep their type and are prefixed with ``<where>[i].<name>:``; a
    perturbative step that changed nothing is refused as in the local engine. The records are
    the local engine's (counts from Spark aggregates).
    """
    from sdckit.masking.pipeline import step_seeds

    check_spark_pipeline(pipeline, where)
    if ROW not in sdf.columns:
        sdf = with_row_index(sdf)
    if isinstance(block_rows, bool) or not isinstance(block_rows, int) or block_rows < 1:
        raise ParameterError(f"block_rows must be a positive integer, got {block_rows!r}")
    n, finite = _count_and_finite(sdf)
    keys = [f"{where}[{i}].{step.spec_name}" for i, step in enumerate(pipeline.steps)]
    for step, key in zip(pipeline.steps, keys, strict=True):
        step.check_records(n, key)
    seeds = step_seeds(seed, len(pipeline.steps))
    run = _Run(sdf, n, int(block_rows), finite=finite)
    records: list[dict[str, Any]] = []
    try:
        for i, (step, key, s) in enumerate(zip(pipeline.steps, keys, seeds, strict=True)):
            previous = list(run.cached)
            try:
                with worker_errors(), np.errstate(all="ignore"):
                    recs = _APPLIERS[step.spec_name](run, step, s, key)
            except SdcInputError as exc:
                raise type(exc)(f"{key}: {exc}") from exc
            for r in recs:
                records.append({**r, "step": i})
            fresh = [f for f in run.cached if f not in previous]
            if fresh:  # the step's output is cached: compute it, then free what came before
                if not run.settled:
                    fresh[-1].count()
                    run.settled = True
                for frame in previous:
                    frame.unpersist()
                run.cached = fresh
            if step.spec_name == "microaggregation":
                run.strata[-1] = {"step": i, **run.strata[-1]}
    except BaseException:
        for frame in run.cached:
            frame.unpersist()
        raise
    return SparkMaskResult(run.sdf, records, run.strata, run.n, run.cached)
