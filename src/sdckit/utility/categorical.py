"""Information loss of categorical masking (recoding, PRAM, suppression, swapping).

All functions compare an original and a protected data set with the same records in the same
order. Values are compared in sdckit's canonical text form (:func:`sdckit.core.encoding.as_text`:
``39.0`` and ``"39"`` are the same value, a missing value is the empty text), so a missing value
is a category of its own: a value replaced by missing counts as changed.

Sources
-------
* Domingo-Ferrer, J. & Torra, V. (2001). "A quantitative comparison of disclosure control methods
  for microdata". In *Confidentiality, Disclosure and Data Access*, 111-133. North-Holland.
  -- contingency-table-based information loss (CTBIL).
* Kooiman, P., Willenborg, L. & Gouweleeuw, J. (1998). "PRAM: a method for disclosure
  limitation of microdata". Statistics Netherlands, research paper 9705. -- entropy-based
  information loss (EBIL).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from sdckit.core.encoding import as_text
from sdckit.core.frequency import group_keys
from sdckit.errors import DataError
from sdckit.utility.numeric import check_aligned

__all__ = [
    "changed_values_share",
    "contingency_table_loss",
    "entropy_loss",
    "relative_entropy_loss",
]


def _joint_codes(
    original: pd.DataFrame, protected: pd.DataFrame, columns: Sequence[str]
) -> np.ndarray:
    """Integer codes (2n, len(columns)) of the stacked texts: original rows then protected rows.

    Codes are shared between the two files, so the same value has the same code in both.
    """
    n = len(original)
    out = np.empty((2 * n, len(columns)), dtype=np.int64)
    for j, c in enumerate(columns):
        text = np.concatenate([as_text(original[c]), as_text(protected[c])])
        codes, _ = pd.factorize(text, sort=True)
        out[:, j] = codes
    return out


def changed_values_share(
    original: pd.DataFrame, protected: pd.DataFrame, columns: Sequence[str] | str
) -> float:
    """Share of the ``n * p`` cells whose protected value differs from the original value.

    Values are compared in canonical text form; missing vs. a value counts as changed, missing
    vs. missing as unchanged. A plain descriptive measure of the perturbation (e.g. the share
    of values PRAM or local suppression actually changed).
    """
    cols = check_aligned(original, protected, columns, "changed values share")
    codes = _joint_codes(original, protected, cols)
    n = len(original)
    return float(np.mean(codes[:n] != codes[n:]))


def contingency_table_loss(
    original: pd.DataFrame,
    protected: pd.DataFrame,
    columns: Sequence[str] | str,
    max_order: int = 2,
) -> dict[str, float | int]:
    """Contingency-table-based information loss (CTBIL) of Domingo-Ferrer & Torra (2001).

    ``ctbil = sum over every set S of 1..max_order columns, sum over the cells of S's
    contingency table, |count_original - count_protected|``: the total absolute difference
    between the frequency tables of all attribute combinations up to ``max_order`` (the
    paper's definition, an unnormalized count). A cell observed in only one file counts with 0
    in the other (so a recoded category contributes its full count twice: once where it
    disappeared, once where the new category appeared).

    Normalization (sdckit's, documented): each table's absolute differences sum to at most
    ``2 n``, so ``ctbil_share = ctbil / (2 n T)`` with ``T`` tables lies in [0, 1] -- the mean,
    over the tables, of the share of records that would have to move between cells (the total
    variation distance between the two tables' distributions). Returned:
    ``{"ctbil", "ctbil_share", "tables"}``.
    """
    measure = "contingency-table information loss"
    if isinstance(max_order, bool) or not isinstance(max_order, int | np.integer) or max_order < 1:
        raise DataError(f"{measure}: max_order must be a positive integer, got {max_order!r}")
    cols = check_aligned(original, protected, columns, measure)
    codes = _joint_codes(original, protected, cols)
    n = len(original)
    total = 0
    tables = 0
    for order in range(1, min(max_order, len(cols)) + 1):
        for combo in combinations(range(len(cols)), order):
            sub = [codes[:, j] for j in combo]  # the cells of this table: the frequency engine
            key, k, _ = group_keys(sub, ordered=False)
            diff = np.bincount(key[:n], minlength=k) - np.bincount(key[n:], minlength=k)
            total += int(np.abs(diff).sum())
            tables += 1
    return {
        "ctbil": float(total),
        "ctbil_share": float(total / (2 * n * tables)),
        "tables": tables,
    }


def entropy_loss(
    original: pd.DataFrame,
    protected: pd.DataFrame,
    column: str,
    base: float = math.e,
) -> dict[str, float]:
    """Entropy-based information loss (EBIL) of Kooiman, Willenborg & Gouweleeuw (1998).

    The information lost on a record is the uncertainty left about its original value once its
    released value is known, ``H(xi | xi' = released value)``; summed over the records,
    ``EBIL = sum_i H(xi | xi' = xi'_i) = sum_l n'_l H(xi | xi' = l) = n H(xi | xi')``.
    Kooiman et al. derive ``P(xi = k | xi' = l)`` from the PRAM transition matrix and the
    original distribution; here, with both files at hand, it is the empirical conditional
    distribution ``n_kl / n'_l`` of original value ``k`` among the records released as ``l``
    (for PRAM this estimates the same quantity). ``base`` is the logarithm's base (default
    ``e``: nats; 2 gives bits). Returns ``{"ebil": sum over records, "ebil_per_record":
    EBIL / n}``. A deterministic one-to-one recoding loses nothing (0); releasing a single
    value for everyone loses ``n H(xi)``.
    """
    measure = "entropy-based information loss"
    if isinstance(column, Sequence) and not isinstance(column, str):
        raise DataError(f"{measure} is defined for one column at a time; got {column!r}")
    if not (isinstance(base, int | float) and base > 0 and base != 1):
        raise DataError(f"{measure}: base must be a positive number other than 1, got {base!r}")
    cols = check_aligned(original, protected, [column], measure)
    codes = _joint_codes(original, protected, cols)[:, 0]
    n = len(original)
    k = int(codes.max()) + 1
    # n_kl for the observed (original k, released l) pairs only: no k x k table
    pairs, n_kl = np.unique(codes[:n] * k + codes[n:], return_counts=True)
    released = pairs % k
    n_l = np.bincount(released, weights=n_kl, minlength=k)  # n'_l
    # sum_l n'_l H(xi | xi' = l) = sum_{k,l} n_kl * (-log(n_kl / n'_l))
    ebil = float(np.sum(n_kl * -np.log(n_kl / n_l[released])) / math.log(base))
    ebil = max(ebil, 0.0)  # -0.0 when nothing is lost
    return {"ebil": ebil, "ebil_per_record": ebil / n}


def relative_entropy_loss(
    original: pd.DataFrame, protected: pd.DataFrame, columns: Sequence[str] | str
) -> dict[str, Any]:
    """EBIL relative to the information there was: ``sum_c n H(xi_c | xi'_c) / sum_c n H(xi_c)``.

    The entropy-based information loss of Kooiman, Willenborg & Gouweleeuw (1998)
    (:func:`entropy_loss`) summed over ``columns`` and divided by its value when every value is
    suppressed (``n H(xi_c)``, the entropy of the original column), so that 0 means nothing is
    lost and 1 that nothing is left. For generalization, ``n H(xi | xi')`` is the non-uniform
    entropy of de Waal & Willenborg (1999) that ARX reports; the ratio is ARX's relative
    non-uniform entropy when the bottom node loses nothing. The same measure applies to PRAM,
    recoding and local suppression, so protections of different kinds share one scale.
    Constant columns (``H = 0``) carry no information and add nothing to either sum. Returns
    ``{"relative_ebil": share in [0, 1], "by_column": {column: share or None}}``.
    """
    cols = check_aligned(original, protected, columns, "relative entropy-based information loss")
    lost = total = 0.0
    by_column: dict[str, float | None] = {}
    n = len(original)
    for c in cols:
        everything_suppressed = pd.DataFrame({c: np.full(n, "", dtype=object)})
        h = entropy_loss(original, everything_suppressed, c)["ebil"]
        ebil = entropy_loss(original, protected, c)["ebil"]
        lost += ebil
        total += h
        by_column[c] = ebil / h if h > 0 else None
    return {"relative_ebil": lost / total if total > 0 else 0.0, "by_column": by_column}
