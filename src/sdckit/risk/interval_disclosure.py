"""Interval disclosure of a protected file: rank-based (Domingo-Ferrer, Mateo-Sanz & Torra 2001)
and standard-deviation-based as in sdcMicro's ``dRisk`` (SDID, Templ 2008/2017; its rule of
sdcMicro 5.5.2 onwards by default, the earlier one as an option: :func:`sdcmicro_drisk`).

Rank-based intervals (Domingo-Ferrer & Torra 2001, "A quantitative comparison of disclosure
control methods for microdata", and Domingo-Ferrer, Mateo-Sanz & Torra 2001, "Comparing SDC
methods for microdata on the basis of information loss and disclosure risk", ETK-NTTS):
each attribute is ranked independently; around every protected value an interval is built
whose ranks (in the original's sorted values) differ by less than ``p`` percent of the number
of records, centred on the rank of the protected value. The share of original values falling
into the interval around their masked value measures interval disclosure; the score averages
it over ``p = 1, ..., 10``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from sdckit.errors import SdcInputError, preview
from sdckit.risk.linkage import align_pair, numeric_block, resolve_columns

Unit = Literal["record", "value"]


@dataclass(frozen=True)
class IntervalDisclosureResult:
    """Rank-based interval disclosure.

    ``interval_disclosure`` is the mean of ``by_percent`` over the requested percents.
    ``unit='record'``: share of records whose original values all lie in their intervals;
    ``unit='value'``: share of (record, attribute) values lying in their interval.
    ``by_column`` gives, per attribute, the share of values inside, averaged over the percents.
    """

    interval_disclosure: float
    by_percent: dict[float, float]
    by_column: dict[str, float]
    unit: str
    n_records: int
    columns: list[str]

    def to_dict(self) -> dict:
        """JSON-ready summary (percent keys become strings)."""
        return {
            "interval_disclosure": float(self.interval_disclosure),
            "by_percent": {f"{p:g}": float(v) for p, v in self.by_percent.items()},
            "by_column": {c: float(v) for c, v in self.by_column.items()},
            "unit": self.unit,
            "n_records": int(self.n_records),
            "columns": list(self.columns),
        }


def rank_interval_bounds(
    sorted_original: np.ndarray, protected: np.ndarray, percent: float
) -> tuple[np.ndarray, np.ndarray]:
    """Value bounds ``[lo, hi]`` of the rank interval of ``percent`` % around each protected value.

    The (0-based, possibly fractional) rank of a protected value ``v`` in the sorted original
    values ``s`` is ``r = (#{s < v} + #{s <= v} - 1) / 2``: the rank of ``v`` itself when it
    occurs once, the middle of its run when tied, and halfway between neighbours when ``v`` is
    not an original value. The interval holds the ranks ``i`` with ``|i - r| <= h``,
    ``h = percent * n / 200`` (a width of ``percent`` % of the ``n`` ranks), clipped to
    ``0..n-1``; its value bounds are ``s[ceil(r - h)]`` and ``s[floor(r + h)]``, widened to
    contain ``v`` itself (the interval is centred on ``v``; with no rank inside, ``[v, v]``).
    """
    n = sorted_original.size
    left = np.searchsorted(sorted_original, protected, side="left")
    right = np.searchsorted(sorted_original, protected, side="right")
    r = (left + right - 1) / 2.0
    h = percent * n / 200.0
    first = np.ceil(r - h - 1e-12)
    last = np.floor(r + h + 1e-12)
    lo = sorted_original[np.clip(first, 0, n - 1).astype(np.int64)]
    hi = sorted_original[np.clip(last, 0, n - 1).astype(np.int64)]
    empty = (first > last) | (last < 0) | (first > n - 1)
    lo = np.where(empty, protected, np.minimum(lo, protected))
    hi = np.where(empty, protected, np.maximum(hi, protected))
    return lo, hi


def _percents(percents: Iterable[float]) -> list[float]:
    vals = [float(p) for p in percents]
    if not vals:
        raise SdcInputError("percents is empty: give interval widths in percent, e.g. 1..10")
    bad = [p for p in vals if not (np.isfinite(p) and 0 < p <= 100)]
    if bad:
        raise SdcInputError(f"percents {preview(bad)} must lie in (0, 100]")
    return vals


def interval_disclosure(
    original: pd.DataFrame,
    protected: pd.DataFrame,
    columns: str | Sequence[str] | None = None,
    percents: Iterable[float] = range(1, 11),
    unit: Unit = "record",
) -> IntervalDisclosureResult:
    """Rank-based interval disclosure averaged over ``percents`` (Domingo-Ferrer & Torra 2001).

    For each attribute and percent ``p`` an interval spanning ``p`` % of the ranks is centred
    on the rank of each protected value within the original's sorted values (see
    :func:`rank_interval_bounds`); an original value is disclosed when it lies inside
    (bounds inclusive). With ``unit='record'`` a record counts as disclosed when every one of
    its attribute values is; ``unit='value'`` counts values (the papers' "proportion of
    original values falling into the intervals", averaged over attributes). The result is
    the mean over ``percents`` (default 1..10 as in the 2001 score).
    """
    if unit not in ("record", "value"):
        raise SdcInputError(f"unit={unit!r} is unknown; use 'record' or 'value'")
    cols = resolve_columns(original, columns)
    protected = align_pair(original, protected)
    x = numeric_block(original, cols, "the original file")
    y = numeric_block(protected, cols, "protected file")
    pcts = _percents(percents)
    n, d = x.shape
    if n == 0:
        raise SdcInputError("the files have no records")
    sorted_cols = np.sort(x, axis=0)
    by_percent: dict[float, float] = {}
    col_sums = np.zeros(d)
    for p in pcts:
        inside = np.empty((n, d), dtype=bool)
        for j in range(d):
            lo, hi = rank_interval_bounds(sorted_cols[:, j], y[:, j], p)
            inside[:, j] = (x[:, j] >= lo) & (x[:, j] <= hi)
        col_share = inside.mean(axis=0)
        col_sums += col_share
        share = inside.all(axis=1).mean() if unit == "record" else col_share.mean()
        by_percent[p] = float(share)
    return IntervalDisclosureResult(
        interval_disclosure=float(np.mean(list(by_percent.values()))),
        by_percent=by_percent,
        by_column={c: float(v) for c, v in zip(cols, col_sums / len(pcts), strict=True)},
        unit=unit,
        n_records=n,
        columns=cols,
    )


#: The rules of :func:`sdcmicro_drisk`: how many attributes of a record may fall outside
#: their interval for the record to count as at risk.
DRISK_RULES: dict[str, int] = {"all_inside": 0, "at_most_one_outside": 1}

DRiskRule = Literal["all_inside", "at_most_one_outside"]


def sdcmicro_drisk(
    original: pd.DataFrame,
    protected: pd.DataFrame,
    columns: str | Sequence[str] | None = None,
    k: float = 0.05,
    rule: DRiskRule = "all_inside",
) -> float:
    """Standard-deviation-based interval disclosure, as sdcMicro's ``dRisk`` (method SDID).

    sdcMicro (``R/dRisk.R``, ``dRiskWORK``; Templ 2017, *Statistical Disclosure Control for
    Microdata*, Springer): ``sd_j`` is the standard deviation (``n - 1`` denominator, missing
    values ignored) of the *protected* column ``j``; around every protected value ``x'_ij``
    the interval ``[x'_ij - k sd_j, x'_ij + k sd_j]`` is built; an original value is outside
    when ``x_ij < lower`` or ``x_ij > upper`` (a missing comparison does not count, as
    ``rowSums(..., na.rm = TRUE)``). The risk is the share of records at risk, by ``rule``:

    * ``"all_inside"`` (default): every attribute of the record inside its interval --
      sdcMicro's rule since 5.5.2 (``rowSums(...) == 0``; its NEWS: "bugfix in dRisk()"),
      unchanged through 5.8.1;
    * ``"at_most_one_outside"``: at most one attribute outside -- the rule of sdcMicro before
      5.5.2 (``rowSums(...) %in% 0:1``), kept to reproduce results of those versions.

    Unlike sdcMicro (which truncates the longer file with a warning), files of different
    length raise :class:`DataError`.
    """
    if not (isinstance(k, int | float | np.floating | np.integer) and np.isfinite(k) and k >= 0):
        raise SdcInputError(f"k={k!r} must be a finite number >= 0 (fraction of the sd)")
    if rule not in DRISK_RULES:
        raise SdcInputError(f"rule={rule!r} is unknown; use one of {', '.join(DRISK_RULES)}")
    cols = resolve_columns(original, columns)
    protected = align_pair(original, protected)
    x = numeric_block(original, cols, "the original file", allow_nan=True)
    y = numeric_block(protected, cols, "protected file", allow_nan=True)
    if x.shape[0] == 0:
        raise SdcInputError("the files have no records")
    with np.errstate(invalid="ignore", divide="ignore"):
        sds = np.nanstd(y, axis=0, ddof=1) if y.shape[0] > 1 else np.full(y.shape[1], np.nan)
    lower = y - k * sds
    upper = y + k * sds
    with np.errstate(invalid="ignore"):
        outside = (x < lower) | (x > upper)  # NaN compares False: not counted, as na.rm=TRUE
    return float((outside.sum(axis=1) <= DRISK_RULES[rule]).mean())
