"""(c, t)-isolation: how many original records a released numeric point singles out.

Definition (Chawla, Dwork, McSherry, Smith & Wee 2005, "Toward privacy in public databases",
TCC 2005, LNCS 3378, pp. 363-385, Section 2): let ``RDB`` be the real (original) points in
``R^d``, ``y`` one of them and ``q`` any point an adversary outputs; with
``delta_y = ||q - y||``, ``q`` *(c, t)-isolates* ``y`` when the ball ``B(q, c delta_y)`` holds
fewer than ``t`` points of ``RDB``. The ball is closed and ``y`` lies in it (``c >= 1``), so
``t = 1`` can never be met and ``t >= 2`` is required. A sanitization protects privacy when no
adversary isolates a record with much higher probability than without the release.

As a risk measure of a numeric release (masked or synthetic microdata against its original)
every released point is a candidate adversary output ``q``, and :func:`isolation_risk` reports

* ``isolated_by_own``: the share of original records ``x_i`` that their *own* released record
  ``q_i`` isolates (rows correspond: masking, perturbation; the sdcMicro-style reading, like
  distance-based record linkage);
* ``isolated_by_any``: the share of original records isolated by *at least one* released
  point (needs no row correspondence: synthetic data);
* ``isolating_released``: the share of released points that isolate some original record
  (the success rate of an adversary who outputs a random released point).

Computation, exact and vectorized: for a released point ``q`` let ``d_(1) <= ... <= d_(t)``
be its distances to its ``t`` nearest original points. ``|B(q, r)| < t`` iff ``d_(t) > r``,
so ``q`` isolates ``y`` iff ``d_(t) > c ||q - y||``. Such a ``y`` has fewer than ``t``
original points at distance ``<= ||q - y||`` (``c >= 1``), so it is among the ``t - 1``
nearest neighbours of ``q`` whatever the tie-breaking: one ``k = t`` nearest-neighbour query
per released point (a kd-tree over the original points, ``scipy.spatial.cKDTree``) decides
all three measures; no ball is enumerated and no ``n x n`` matrix is built. A point within a
relative ``TIE_RTOL`` of the ball's boundary counts as on it (inside the closed ball), as
ties count in :mod:`sdckit.risk.linkage`.

Scale: the paper works in one metric space; microdata attributes have unrelated units, so by
default both files are standardized with the original's mean and standard deviation (the
z-scores of distance-based record linkage, Domingo-Ferrer & Torra 2001); ``standardize=False``
measures in the attributes' own units.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.spatial import cKDTree

from sdckit.errors import DataError, ParameterError
from sdckit.risk.linkage import TIE_RTOL, numeric_block, original_scale, resolve_columns

__all__ = [
    "IsolationResult",
    "isolation_risk",
    "check_isolation_parameters",
    "DEFAULT_C",
    "DEFAULT_T",
]

#: Default ball factor ``c`` and threshold ``t`` of ``sdckit evaluate`` (sdckit's choice; the
#: paper treats both as parameters of the privacy statement).
DEFAULT_C = 2.0
DEFAULT_T = 5
#: Released points per nearest-neighbour query block (bounds the ``block x t`` arrays).
_BLOCK = 65_536


@dataclass
class IsolationResult:
    """The (c, t)-isolation shares of a release (module docstring)."""

    c: float
    t: int
    columns: list[str]
    standardized: bool
    n_original: int
    n_released: int
    isolated_by_own: float | None
    isolated_by_any: float
    isolating_released: float
    counts: dict[str, int | None] = field(default_factory=dict)
    #: per original record: isolated by its own released record (None without correspondence)
    own_mask: np.ndarray | None = None
    #: per original record: isolated by some released point
    any_mask: np.ndarray | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary (no per-record arrays)."""
        return {
            "c": self.c,
            "t": self.t,
            "columns": list(self.columns),
            "standardized": self.standardized,
            "n_original": self.n_original,
            "n_released": self.n_released,
            "isolated_by_own": self.isolated_by_own,
            "isolated_by_any": self.isolated_by_any,
            "isolating_released": self.isolating_released,
            "counts": dict(self.counts),
            "definition": (
                "released q (c,t)-isolates original y when the ball of radius c*||q - y|| "
                "around q holds fewer than t original points (Chawla et al. 2005)"
            ),
        }


def check_isolation_parameters(c: Any, t: Any) -> tuple[float, int]:
    """``(c, t)`` as ``(float, int)``; :class:`ParameterError` unless ``c >= 1``, ``t >= 2``."""
    if isinstance(c, bool) or not isinstance(c, int | float | np.integer | np.floating):
        raise ParameterError(f"(c,t)-isolation: parameter 'c' must be a number >= 1, got {c!r}")
    if not np.isfinite(c) or c < 1:
        raise ParameterError(
            f"(c,t)-isolation: parameter 'c' must be >= 1 (the ball around q must reach the "
            f"record itself), got {c!r}"
        )
    if isinstance(t, bool) or not isinstance(t, int | np.integer) or t < 2:
        raise ParameterError(
            f"(c,t)-isolation: parameter 't' must be an integer >= 2 (the ball always holds "
            f"the isolated record, so t = 1 never isolates), got {t!r}"
        )
    return float(c), int(t)


def _outside(dist_t: np.ndarray, radius: np.ndarray) -> np.ndarray:
    """``d_(t) > r`` with the boundary closed within ``TIE_RTOL`` (a point on it is inside)."""
    return dist_t > radius + TIE_RTOL * (1.0 + radius)


def isolation_risk(
    original: pd.DataFrame,
    released: pd.DataFrame,
    columns: str | Sequence[str] | None = None,
    *,
    c: float = DEFAULT_C,
    t: int = DEFAULT_T,
    standardize: bool = True,
    rows_correspond: bool | None = None,
) -> IsolationResult:
    """(c, t)-isolation of the original records by the released points (module docstring).

    ``columns``: the numeric attributes (default: every column of ``original``); both frames
    must hold them, without missing values. ``rows_correspond``: released row ``i`` is the
    protected version of original row ``i`` (default: when both have the same length);
    without it ``isolated_by_own`` is None. ``c >= 1``, integer ``t >= 2``.

    Raises :class:`ParameterError` for bad ``c``/``t`` and :class:`DataError` for missing or
    non-numeric columns, missing values, a constant column when standardizing, an empty
    file or ``rows_correspond=True`` with files of different lengths.
    """
    c, t = check_isolation_parameters(c, t)
    cols = resolve_columns(original, columns)
    x = numeric_block(original, cols, "original file")
    q = numeric_block(released, cols, "protected file")
    if len(x) == 0 or len(q) == 0:
        raise DataError(
            f"(c,t)-isolation needs records in both files; the original has {len(x)} and the "
            f"released file {len(q)}"
        )
    if rows_correspond is None:
        rows_correspond = len(x) == len(q)
    elif rows_correspond and len(x) != len(q):
        raise DataError(
            f"rows_correspond=True but the original file has {len(x)} rows and the released "
            f"file {len(q)}; row i must be the same respondent in both (or pass False)"
        )
    if standardize:
        mean, sd = original_scale(x, cols)
        x = (x - mean) / sd
        q = (q - mean) / sd
    n, m = len(x), len(q)
    tree = cKDTree(x)
    own = np.zeros(n, dtype=bool) if rows_correspond else None
    any_mask = np.zeros(n, dtype=bool)
    isolating = np.zeros(m, dtype=bool)
    for start in range(0, m, _BLOCK):
        block = q[start : start + _BLOCK]
        dist, idx = tree.query(block, k=t, workers=-1)
        dist = np.asarray(dist, dtype=np.float64).reshape(len(block), t)
        idx = np.asarray(idx, dtype=np.int64).reshape(len(block), t)
        dist_t = dist[:, t - 1]  # inf when the original file has fewer than t points
        near, near_idx = dist[:, : t - 1], idx[:, : t - 1]
        hit = _outside(dist_t[:, None], c * near) & (near_idx < n)
        any_mask[near_idx[hit]] = True
        isolating[start : start + len(block)] = hit.any(axis=1)
        if own is not None:
            rows = np.arange(start, start + len(block))
            delta = np.sqrt(((block - x[rows]) ** 2).sum(axis=1))
            own[rows] = _outside(dist_t, c * delta)
    own_count = None if own is None else int(own.sum())
    return IsolationResult(
        c=c,
        t=t,
        columns=cols,
        standardized=bool(standardize),
        n_original=n,
        n_released=m,
        isolated_by_own=None if own is None else own_count / n,  # type: ignore[operator]
        isolated_by_any=float(any_mask.mean()),
        isolating_released=float(isolating.mean()),
        counts={
            "isolated_by_own": own_count,
            "isolated_by_any": int(any_mask.sum()),
            "isolating_released": int(isolating.sum()),
        },
        own_mask=own,
        any_mask=any_mask,
    )
