"""Blocks of records: how a mask job's random steps draw, the same on every engine.

A step of a method that both engines run (``"spark"`` in its class's ``engines``, no Spark
step of its own) is planned from the whole data (:class:`~sdckit.masking.stats.Plan`) and
released by :func:`release_plan`. A random plan (:attr:`~sdckit.masking.stats.Plan.random`)
is released block by block: the records are numbered ``0, 1, ...`` in input order and cut
into blocks of :data:`BLOCK_ROWS` consecutive records; block ``b`` of the step with seed
``s`` (:func:`~sdckit.masking.pipeline.step_seeds`) draws from :func:`block_rng` ``(s, b)``,
``numpy.random.Generator(PCG64(SeedSequence(s, spawn_key=(b,))))`` -- the ``b``-th child of
the step's seed sequence -- with the records of the block in row order. The local engine
(:meth:`~sdckit.masking.pipeline.Pipeline.apply`) cuts its table into these blocks
(:func:`block_bounds`); the Spark engine (:mod:`sdckit.spark.mask`) numbers the records in
input order and puts every block on one partition. So for the same seed and input the local
and the Spark release are the same, bit for bit, on any partitioning; the block size is part
of what a seed means.

The Python functions of the methods (``sdckit.masking.noise(data, ..., seed=)``,
``Noise(...).apply(data, rng)``) draw from one generator over all records, as a single call
is expected to; only a pipeline (a mask job's ``methods:`` list) releases by blocks.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from sdckit.core.encoding import as_text, is_numeric
from sdckit.errors import ParameterError

if TYPE_CHECKING:
    from sdckit.masking.stats import Plan

__all__ = ["BLOCK_ROWS", "block_bounds", "block_rng", "changed", "release_plan"]

#: Records per block of randomness (see the module docstring); part of what a seed means.
BLOCK_ROWS = 65_536


def check_block_rows(block_rows: int) -> int:
    """``block_rows`` as an int (ParameterError unless a positive integer)."""
    if (
        isinstance(block_rows, bool)
        or not isinstance(block_rows, (int, np.integer))
        or block_rows < 1
    ):
        raise ParameterError(f"block_rows must be a positive integer, got {block_rows!r}")
    return int(block_rows)


def block_rng(step_seed: int | None, block: int) -> np.random.Generator:
    """The generator of block ``block`` of a step: ``SeedSequence(step_seed, spawn_key=
    (block,))``, the ``block``-th child of the step's seed sequence (fresh entropy when
    ``step_seed`` is None)."""
    return np.random.default_rng(np.random.SeedSequence(step_seed, spawn_key=(int(block),)))


def block_bounds(n: int, block_rows: int = BLOCK_ROWS) -> Iterator[tuple[int, int, int]]:
    """``(b, lo, hi)`` for every block of ``n`` records numbered ``0 .. n - 1``: block ``b``
    holds the records ``lo <= row < hi`` (``lo = b * block_rows``); none for ``n = 0``."""
    size = check_block_rows(block_rows)
    for b, lo in enumerate(range(0, int(n), size)):
        yield b, lo, min(lo + size, int(n))


def changed(before: pd.Series, after: pd.Series) -> np.ndarray:
    """Per record: did the value change (missing equals missing; numbers compared as
    numbers, other values by canonical text)?"""
    a_na, b_na = before.isna().to_numpy(), after.isna().to_numpy()
    if is_numeric(before) and is_numeric(after):
        x = before.to_numpy(dtype=np.float64, na_value=np.nan)
        y = after.to_numpy(dtype=np.float64, na_value=np.nan)
        same = (x == y) | (a_na & b_na)
    else:
        same = (as_text(before) == as_text(after)) & (a_na == b_na)
    return ~np.asarray(same, dtype=bool)


def release_plan(
    plan: Plan, data: pd.DataFrame, step_seed: int | None, block_rows: int = BLOCK_ROWS
) -> tuple[pd.DataFrame, list[int]]:
    """``plan`` released on ``data`` (a whole table in input order) as the Spark engine
    releases it: a random plan block by block (records ``[b * block_rows, (b + 1) *
    block_rows)`` with :func:`block_rng` ``(step_seed, b)``), a deterministic one at once.
    Returns the released table (``data``'s index and column order) and, per column of
    ``plan.columns``, how many values changed (:func:`changed`)."""
    size = check_block_rows(block_rows)
    if not plan.random:
        out = plan.release(data, None).data
    elif len(data) <= size:
        out = plan.release(data, block_rng(step_seed, 0)).data
    else:
        parts = [
            plan.release(data.iloc[lo:hi], block_rng(step_seed, b)).data
            for b, lo, hi in block_bounds(len(data), size)
        ]
        out = pd.concat(parts)
    counts = [int(changed(data[c], out[c]).sum()) for c in plan.columns]
    return out, counts
