"""Masking on Spark (``engine: spark``): a mask job's methods applied to a Spark DataFrame.

The engine computes and applies; the masking code is the local engine's. Every step of a
method that runs on Spark (``"spark"`` in its class's ``engines``) is

1. **planned on the driver**: the method's plan (:meth:`~sdckit.masking.spec.MaskingMethod.plan`)
   reads the whole data through :class:`~sdckit.spark.stats.SparkStats` -- exact aggregates
   only: standard deviations, covariances and means of additive noise, the category counts
   of PRAM (and so its invariant matrix), the two categories of randomized response, the
   breaks of equal-width / equal-frequency recoding, the thresholds and tail means of top and
   bottom coding, the suppressions of local suppression (from the reduced key table). The
   local engine makes the same plan from :class:`~sdckit.masking.stats.PandasStats`; every
   check of the parameters against the data is the plan's, with the local messages.
2. **released per block**: the plan's ``release`` (the local method's own code) runs on every
   block of records in ``mapInPandas`` (deterministic methods: on every Arrow batch), then
   the plan's ``records`` publish what was done from aggregates of the released table.

Randomness and reproducibility: the block rule of :mod:`sdckit.masking.blocks`, the local
engine's. Records are numbered in input order (:func:`~sdckit.spark.frame.with_row_index`,
the row number of the local reader for one file) and cut into blocks of
:data:`~sdckit.masking.blocks.BLOCK_ROWS` consecutive records. Block ``b`` of step ``i`` draws
from :func:`~sdckit.masking.blocks.block_rng` ``(s_i, b)`` (``s_i`` the step seed of
:func:`~sdckit.masking.pipeline.step_seeds`), with the records of the block in row order; the
whole block is on one partition (the data are repartitioned by block before a random step).
So the same seed gives the same output on any cluster, number of executors or partitioning,
and the local engine's output (:meth:`~sdckit.masking.pipeline.Pipeline.apply` cuts its table
into the same blocks). A random draw made once per step (PRAM's random diagonal) uses
``default_rng(s_i)`` on the driver.

A method whose release is not record by record names a Spark step of its own
(``spark_hook``): microaggregation runs within strata, each stratum on one executor
(:mod:`sdckit.spark.strata`).

Refused (ConfigError naming the step and the supported methods): the methods whose class
gives a ``spark_refusal`` -- rank swapping, data swapping and record swapping (they pair
records across the whole file), resampling (bootstrap samples of whole columns) and sampling
(an exact sample size allocated over the whole file) -- and microaggregation without strata.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from sdckit.errors import ConfigError, SdcInputError
from sdckit.masking import blocks
from sdckit.masking.blocks import block_rng, changed, check_block_rows
from sdckit.spark.frame import (
    ROW,
    _joined,
    _kind,
    _local_frame,
    _quiet,
    _schema_with,
    _spark_frame,
    with_row_index,
    worker_errors,
)
from sdckit.spark.stats import SparkStats, count_and_finite

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import DataFrame

    from sdckit.masking.pipeline import Pipeline
    from sdckit.masking.spec import MaskingMethod
    from sdckit.masking.stats import Plan

_FLAG = "__sdc_changed_"


def spark_methods() -> tuple[str, ...]:
    """The masking methods the Spark engine applies (job-file names, aliases included): those
    whose class lists ``"spark"`` in its ``engines``."""
    from sdckit.masking.pipeline import METHODS

    return tuple(
        alias
        for name in METHODS.where(lambda traits: "spark" in traits.engines)
        for alias in (name, *METHODS.entry(name).aliases)
    )


def check_spark_pipeline(pipeline: Pipeline, where: str = "methods") -> None:
    """ConfigError, before any data is read, for a step the Spark engine does not run: a
    method that is global by nature (its class's ``spark_refusal``: swapping, resampling,
    sampling) or microaggregation without strata. The message names the step and lists what
    the engine supports."""
    from sdckit.masking.microaggregation import Microaggregation

    supported = ", ".join(spark_methods())
    for i, step in enumerate(pipeline.steps):
        key = f"{where}[{i}].{step.spec_name}"
        if "spark" not in type(step).engines:
            reason = type(step).spark_refusal
            because = f" (it {reason})" if reason else ""
            raise ConfigError(
                f"{key}: engine 'spark' does not run {step.spec_name}{because}; the Spark "
                f"engine runs {supported} -- use engine: local for this method"
            )
        if isinstance(step, Microaggregation) and not step.stratified:
            raise ConfigError(
                f"{key}: on engine 'spark' microaggregation runs within strata, each stratum "
                "on one executor: give `strata: [column, ...]` (e.g. a region) or "
                "`block_by: [column]` with `block_size: N` (blocks of N records along a sort "
                "key); every stratum needs at least k records"
            )


# --------------------------------------------------------------------------------------------
# the run: the current table, its blocks, a release per block
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

    def stats(self) -> SparkStats:
        """The statistics of the current table (what a plan reads)."""
        return SparkStats(self.sdf, self.n, self.categories, self.finite)

    def keep(self, sdf: DataFrame) -> DataFrame:
        """Cache ``sdf`` (the next step and the summary read it)."""
        from pyspark import StorageLevel

        sdf = sdf.persist(StorageLevel.MEMORY_AND_DISK)
        self.cached.append(sdf)
        self.settled = False
        return sdf


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
            out[f] = changed(local[c], result[c])
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
                    yield process(_joined(pending), block_rng(step_seed, current))
                    pending = []
                current = b
                pending.append(pdf.iloc[lo:hi])
        if pending:
            yield process(_joined(pending), block_rng(step_seed, current))

    with _quiet():
        mapped = source.mapInPandas(worker, schema)
    mapped = run.keep(mapped)
    with worker_errors():
        sums = mapped.agg(*[F.sum(F.col(f).cast("long")).alias(f) for f in flags]).first()
    run.settled = True
    run.sdf = mapped.drop(*flags)
    run.blocked = random or run.blocked
    return [int(sums[f] or 0) for f in flags] if sums is not None else [0] * len(flags)


# -- the methods -------------------------------------------------------------------------------


def _planned(run: _Run, step: MaskingMethod, seed: int | None, key: str) -> list[dict[str, Any]]:
    """One step: its plan from the statistics of the current table, its release on every
    block (or batch), the unchanged-release rule, the records from the released table."""
    from sdckit.masking.pipeline import check_unchanged

    plan: Plan = step.plan(run.stats(), seed)
    cols = list(plan.columns)
    out_kinds = plan.out_kinds(run.kinds())

    def fn(pdf: pd.DataFrame, rng: np.random.Generator | None) -> pd.DataFrame:
        return plan.release(pdf, rng).data

    counts = _map_step(run, fn, cols, out_kinds, seed, random=plan.random)
    check_unchanged(step, key, run.n, cols, counts)
    recoded = getattr(plan, "recoded_categories", None)
    for c, names in (recoded() if recoded is not None else {}).items():
        if names is None:
            run.categories.pop(c, None)
        else:
            run.categories[c] = list(names)
    return plan.records(run.stats(), counts)


def _hook(step: MaskingMethod) -> Callable[..., list[dict[str, Any]]]:
    """The step's own Spark step (``spark_hook``: ``"module:function"``), or the generic one."""
    path = type(step).spark_hook
    if path is None:
        return _planned
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)  # type: ignore[no-any-return]


def apply_pipeline_spark(
    sdf: DataFrame,
    pipeline: Pipeline,
    seed: int | None = None,
    *,
    where: str = "methods",
    block_rows: int | None = None,
) -> SparkMaskResult:
    """Mask a Spark DataFrame with every step of ``pipeline`` in order (the Spark engine's
    :meth:`~sdckit.masking.pipeline.Pipeline.apply`).

    ``sdf`` holds typed columns (:func:`~sdckit.spark.frame.typed_spark`) and
    :data:`~sdckit.spark.frame.ROW` (added by :func:`~sdckit.spark.frame.with_row_index` when
    absent). Steps are checked first (:func:`check_spark_pipeline`, each step's
    :meth:`check_records`); step ``i`` gets the ``i``-th seed of
    :func:`~sdckit.masking.pipeline.step_seeds`, and its blocks their generators from it
    (module docstring), so the same seed gives the same output on any partitioning. Errors
    keep their type and are prefixed with ``<where>[i].<name>:``; a perturbative step that
    changed nothing is refused as in the local engine. The records are the local engine's
    (counts from Spark aggregates).
    """
    from sdckit.masking.pipeline import step_seeds

    check_spark_pipeline(pipeline, where)
    if ROW not in sdf.columns:
        sdf = with_row_index(sdf)
    block_rows = check_block_rows(blocks.BLOCK_ROWS if block_rows is None else block_rows)
    n, finite = count_and_finite(sdf)
    keys = [f"{where}[{i}].{step.spec_name}" for i, step in enumerate(pipeline.steps)]
    for step, key in zip(pipeline.steps, keys, strict=True):
        step.check_records(n, key)
    seeds = step_seeds(seed, len(pipeline.steps))
    run = _Run(sdf, n, int(block_rows), finite=finite)
    records: list[dict[str, Any]] = []
    try:
        for i, (step, key, s) in enumerate(zip(pipeline.steps, keys, seeds, strict=True)):
            previous = list(run.cached)
            strata = len(run.strata)
            try:
                with worker_errors(), np.errstate(all="ignore"):
                    recs = _hook(step)(run, step, s, key)
            except SdcInputError as exc:
                if str(exc).startswith(f"{key} "):  # names the step already (unchanged_error)
                    raise
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
            if len(run.strata) > strata:
                run.strata[-1] = {"step": i, **run.strata[-1]}
    except BaseException:
        for frame in run.cached:
            frame.unpersist()
        raise
    return SparkMaskResult(run.sdf, records, run.strata, run.n, run.cached)
