"""SUDA: minimal sample uniques, SUDA scores and DIS-SUDA scores, as sdcMicro's ``suda2``.

Definitions
    A *minimal sample unique* (MSU) of record ``r`` is a set ``S`` of key variables such that
    ``r``'s combination of values on ``S`` occurs once in the sample and on no proper subset of
    ``S`` (Elliot, Manning & Ford 2002, *A computational algorithm for handling the special
    uniques problem*, IJUFKS 10(5); Manning, Haglin & Keane 2008, *A recursive search algorithm
    for statistical disclosure assessment*, DMKD 16:165-196, the SUDA2 algorithm). Uniqueness
    is upward closed (a superset of a unique set is unique), so ``S`` is minimal exactly when no
    ``S \\ {j}`` is unique for ``r``.

SUDA score (sdcMicro ``suda2(..., original_scores = TRUE)``, src/Suda2.h)
    With ``M`` key variables, an MSU of size ``k`` contributes ``(M - k)!`` (the product
    ``prod_{i=k}^{M-1} (M - i)`` of Elliot et al.'s SUDA paper); a record's score is the sum over
    its MSUs. sdcMicro never restricts the MSU size; ``max_size < M`` here restricts the search
    (scores then count only the MSUs up to that size, with the same weights).

DIS-SUDA score (sdcMicro src/Suda2.h, after Elliot, Skinner & Dale's DIS measure)
    With ``U`` the number of sample-unique records (on all key variables), ``P`` the number of
    records whose full key occurs exactly twice, and the sampling fraction ``f``
    (``DisFraction``): ``DIS = U f / (U f + P (1 - f))``; with ``Q = 1 + (8 - M) / 20`` and
    ``A = sum_r score_r^(-Q)`` over records with a positive score, a record's DIS-SUDA score
    is ``1 / (1 + (U / DIS - U) / (score^Q * A))`` (0 when its score is 0). sdcMicro evaluates
    ``DIS``, ``Q`` and ``U / DIS - U`` in single precision; so does this module, to agree with it
    to double precision.

Missing values
    sdcMicro's ``missing`` code never forms part of an MSU but is otherwise an ordinary value
    (records that are missing do not match a present value). ``missing_codes`` gives, per key
    variable, the code that stands for a missing value (or ``None``).

Deviation: for fewer than 3 key variables sdcMicro pads the data with constant dummy columns
(and warns that the result "might be wrong"), which changes ``M`` in the weights and in ``Q``;
here ``M`` is always the real number of key variables.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from sdckit.core.frequency import group_keys
from sdckit.errors import ConfigError, DataError
from sdckit.risk.subsets import walk_subsets

_MAX_SUBSETS = 200_000  # key-variable subsets examined at most
_MAX_LEVEL_BYTES = 2_000_000_000  # memory for two adjacent levels of subsets at most


@dataclass(frozen=True)
class SudaResult:
    """SUDA scores per record and MSU counts (see the module docstring for definitions)."""

    score: np.ndarray  # float64 SUDA score per record
    dis_score: np.ndarray  # float64 DIS-SUDA score per record
    msu_count_by_size: np.ndarray  # int64, [k-1] = number of MSUs of size k (all records)
    msu_counts: np.ndarray  # int64 (records x max_size): each record's MSUs by size
    n_keys: int  # M, the number of key variables
    max_size: int  # largest MSU size searched
    n_sample_uniques: int  # U: records unique on all key variables
    n_pair_records: int  # P: records whose full key occurs exactly twice
    # records per row when the rows are distinct keys (``suda2(..., counts=...)``), else None
    records: np.ndarray | None = None

    def to_dict(self) -> dict[str, float | int]:
        """Summary over records: ``records_with_score`` (score > 0), ``score_sum``, ``dis_sum``."""
        w = np.ones(len(self.score)) if self.records is None else self.records.astype(float)
        return {
            "records_with_score": int(w[self.score > 0].sum()),
            "score_sum": float(self.score @ w),
            "dis_sum": float(self.dis_score @ w),
        }


def suda_weights(n_keys: int) -> np.ndarray:
    """Weight of an MSU of size ``k = 1..n_keys``: ``(n_keys - k)!`` (sdcMicro original scores)."""
    return np.array([float(math.factorial(n_keys - k)) for k in range(1, n_keys + 1)])


def _check_codes(key_codes: np.ndarray) -> np.ndarray:
    codes = np.asarray(key_codes)
    if codes.ndim != 2:
        raise DataError(
            f"key codes must be a 2-D array (records x key variables), got shape {codes.shape}; "
            "pass one column of integer codes per key variable"
        )
    if codes.shape[1] == 0:
        raise DataError("no key variables given; SUDA needs at least one key variable")
    if codes.shape[0] == 0:
        raise DataError("the data has no records; SUDA cannot be computed on an empty table")
    if not np.issubdtype(codes.dtype, np.integer):
        raise DataError(
            f"key codes must be integers (dictionary codes), got dtype {codes.dtype}; "
            "encode the key variables first (sdckit.core.encoding.encode)"
        )
    if codes.min() < 0:
        col = int(np.flatnonzero((codes < 0).any(axis=0))[0])
        raise DataError(
            f"key variable number {col + 1} has a negative code; codes must be 0, 1, 2, ..."
        )
    return codes.astype(np.int64, copy=False)


def _check_parameters(max_size: int | None, dis_fraction: float, m: int) -> int:
    if max_size is None:
        size = m
    elif isinstance(max_size, bool) or not isinstance(max_size, int | np.integer):
        raise ConfigError(f"max_size must be an integer between 1 and {m}, got {max_size!r}")
    else:
        size = int(max_size)
    if not 1 <= size <= m:
        raise ConfigError(
            f"max_size must be between 1 and the number of key variables ({m}), got {size}"
        )
    if not (isinstance(dis_fraction, int | float) and 0.0 < float(dis_fraction) < 1.0):
        raise ConfigError(
            f"dis_fraction (the sampling fraction) must be a number strictly between 0 and 1, "
            f"got {dis_fraction!r}"
        )
    return size


def _missing_cells(codes: np.ndarray, missing_codes: Sequence[int | None] | None) -> np.ndarray:
    if missing_codes is None:
        return np.zeros(codes.shape, dtype=bool)
    if len(missing_codes) != codes.shape[1]:
        raise ConfigError(
            f"missing_codes has {len(missing_codes)} entries but there are {codes.shape[1]} key "
            "variables; give one code (or None) per key variable"
        )
    cells = np.zeros(codes.shape, dtype=bool)
    for j, code in enumerate(missing_codes):
        if code is not None:
            cells[:, j] = codes[:, j] == int(code)
    return cells


def fits(m: int, n_rows: int, max_size: int) -> bool:
    """True when SUDA over ``m`` key variables and ``n_rows`` distinct records up to MSU size
    ``max_size`` stays within the bounds (subsets examined, memory of two adjacent levels)."""
    level = [math.comb(m, k) for k in range(max_size + 1)]
    total = sum(level[1:])
    peak = max(level[k - 1] + level[k] for k in range(1, max_size + 1)) * n_rows * 9
    return total <= _MAX_SUBSETS and peak <= _MAX_LEVEL_BYTES


def largest_feasible_size(m: int, n_rows: int) -> int:
    """The largest MSU size that :func:`fits` (0 when not even size 1 does)."""
    size = 0
    while size < m and fits(m, n_rows, size + 1):
        size += 1
    return size


def _check_size(m: int, n_rows: int, max_size: int) -> None:
    if not fits(m, n_rows, max_size):
        best = largest_feasible_size(m, n_rows)
        raise ConfigError(
            f"SUDA over {m} key variables up to MSU size {max_size} on {n_rows:,} distinct "
            "records examines too many variable subsets or needs too much memory"
            + (
                f"; the largest MSU size that fits is {best} (max_size={best}, on the "
                f"command line --suda-max-size {best})"
                if best
                else "; use fewer key variables"
            )
        )


def _msu_counts(
    codes: np.ndarray, mult: np.ndarray, missing: np.ndarray, max_size: int
) -> np.ndarray:
    """MSU counts by size for distinct rows ``codes`` (each occurring ``mult`` times).

    Level-wise over the key-variable subsets (:func:`sdckit.risk.subsets.walk_subsets`: a
    subset is grouped on the rows not yet unique on one of its parents only). ``T`` is an MSU
    of a row unique on it when the row is unique on none of the ``T \\ {j}`` and none of
    ``T``'s variables is missing there; rows unique on a parent are never MSUs of ``T`` and
    are not even grouped.
    """
    n_rows, m = codes.shape
    cards = codes.max(axis=0) + 1
    by_size = [np.zeros(n_rows, dtype=np.int64) for _ in range(max_size)]
    any_missing = bool(missing.any())
    masks: dict[tuple[int, ...], np.ndarray] = {}  # per subset of the previous level
    for k, level in enumerate(walk_subsets(codes, cards, mult, max_size), start=1):
        for subset, groups in level.items():
            rows = groups.grouped[groups.unique]  # unique on the subset, not on its parent
            for i in range(k if k > 1 else 0):
                if len(rows):
                    rows = rows[masks[subset[:i] + subset[i + 1 :]][rows]]
            if any_missing and len(rows):
                rows = rows[~missing[np.ix_(rows, list(subset))].any(axis=1)]
            by_size[k - 1][rows] += 1
        if not any(g.single_open for g in level.values()):
            break  # every unique row is unique on all size-k subsets: no larger MSUs
        masks = {s: g.open_mask(n_rows) for s, g in level.items()} if k < max_size else {}
    counts_by_size = np.column_stack(by_size)
    return counts_by_size


def _dis_scores(
    score: np.ndarray, n_uniques: int, n_pairs: int, n_keys: int, dis_fraction: float
) -> np.ndarray:
    """DIS-SUDA scores (module docstring), single precision where sdcMicro uses it."""
    dis = np.zeros_like(score)
    scored = score > 0
    if not scored.any():
        return dis
    f32 = np.float32
    frac = f32(dis_fraction)
    q = float(f32(1.0) + (f32(8.0) - f32(n_keys)) / f32(20.0))
    unique_mass = f32(n_uniques) * frac
    dis_global = unique_mass / (unique_mass + f32(n_pairs) * (f32(1.0) - frac))
    excess = float(f32(n_uniques) / dis_global - f32(n_uniques))
    powered = score[scored] ** q
    adjust = float(np.sum(1.0 / powered))
    dis[scored] = 1.0 / (1.0 + excess / (powered * adjust))
    return dis


def suda2(
    key_codes: np.ndarray,
    max_size: int | None = None,
    dis_fraction: float = 0.01,
    *,
    missing_codes: Sequence[int | None] | None = None,
    counts: np.ndarray | None = None,
) -> SudaResult:
    """SUDA and DIS-SUDA scores of every record, as sdcMicro's ``suda2`` (original scores).

    ``key_codes``: int array (records x key variables) of dictionary codes (any coding of text
    or numbers; only equality of codes matters). ``max_size``: largest MSU size searched
    (default: all key variables, as sdcMicro). ``dis_fraction``: the sampling fraction of the
    DIS measure (sdcMicro ``DisFraction``). ``missing_codes``: per key variable, the code of a
    missing value, which cannot be part of an MSU (or ``None``). All ``<= 2^M`` key-variable
    subsets are grouped with integer keys on the distinct rows; no loop over records.

    ``counts`` (frequency-set form): the rows of ``key_codes`` are distinct keys and
    ``counts[i]`` records share row ``i`` (e.g. ``fs.keys`` and ``fs.counts``); the result then
    has one entry per row and its summary weighs rows by their counts. Same scores, without
    regrouping the records.
    """
    codes = _check_codes(key_codes)
    n, m = codes.shape
    size = _check_parameters(max_size, dis_fraction, m)
    missing = _missing_cells(codes, missing_codes)
    if counts is None:
        row, n_rows, representative = group_keys(
            [codes[:, j] for j in range(m)], codes.max(axis=0) + 1
        )
        mult = np.bincount(row, minlength=n_rows)
    else:
        mult = np.asarray(counts, dtype=np.int64)
        if mult.shape != (n,) or (mult < 1).any():
            raise DataError(
                f"counts must hold one positive record count per row of the key codes ({n}), "
                f"got shape {mult.shape}"
            )
        row = representative = np.arange(n, dtype=np.int64)
        n_rows = n
    _check_size(m, n_rows, size)
    distinct = np.empty((n_rows, m), dtype=np.int64)
    for j in range(m):  # dense per-column codes keep the mixed-radix keys small
        distinct[:, j] = np.unique(codes[representative, j], return_inverse=True)[1]
    per_row = _msu_counts(distinct, mult, missing[representative], size)
    weights = suda_weights(m)[:size]
    score = (per_row.astype(float) @ weights)[row]
    n_uniques = int(np.count_nonzero(mult == 1))
    n_pairs = 2 * int(np.count_nonzero(mult == 2))
    dis = _dis_scores(score, n_uniques, n_pairs, m, dis_fraction)
    return SudaResult(
        score=score,
        dis_score=dis,
        msu_count_by_size=per_row.sum(axis=0),
        msu_counts=per_row[row],
        n_keys=m,
        max_size=size,
        n_sample_uniques=n_uniques,
        n_pair_records=n_pairs,
        records=None if counts is None else mult,
    )
