"""How many released records are equal to an original record.

A released record equal to an original one on every released column is that person's record
as collected: synthetic or masked data whose records are mostly originals (hybrid data
replacing small groups by their own values, partial synthesis leaving the records not at risk
as they were, PRAM keeping most categories) protect those records no more than the original
file does. The measure extends synthpop's replicated uniques (Nowok, Raab & Dibben 2016,
``replicated.uniques``, which counts synthetic records equal to a unique original record) to
all records: the share of released records whose combination of values occurs among the
original records.

Values are compared as the released file states them: two numeric columns by their numbers
(``39`` equals ``39.0``), otherwise by their canonical text (:func:`sdckit.core.encoding.
as_text`, so a generalized label ``39`` equals the original age 39); a missing value equals a
missing value. Every column is coded once over the original and released values together
(one hash factorization per column) and the code combinations grouped by the frequency-set
engine (:func:`sdckit.core.frequency.group_keys`, exact: no hash collisions), so the cost is
linear in the records.

The warning threshold (:data:`DEFAULT_THRESHOLD`, 10%): a release sold as synthetic or
masked whose every tenth record is an original record leaves a tenth of the people in it as
exposed as in the original file. Chance matches of a genuinely synthetic record are rare
except in small domains (few columns of few values), where a share above 10% then also says
that the release can hardly differ from the original; the threshold is configurable
(``original_share_warning``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from sdckit.core.encoding import is_numeric, text_codes
from sdckit.errors import ParameterError

__all__ = ["DEFAULT_THRESHOLD", "OriginalRecords", "check_threshold", "original_records"]

#: Share of released records equal to an original above which the report warns.
DEFAULT_THRESHOLD = 0.10


@dataclass(frozen=True)
class OriginalRecords:
    """Released records equal to an original record (see :func:`original_records`)."""

    records: int
    equal_to_original: int
    columns: tuple[str, ...]
    threshold: float

    @property
    def share(self) -> float | None:
        """``equal_to_original / records`` (None when nothing was released)."""
        return self.equal_to_original / self.records if self.records else None

    @property
    def warning(self) -> str | None:
        """The warning when the share is above the threshold, else None."""
        share = self.share
        if share is None or share <= self.threshold:
            return None
        return (
            f"{share:.1%} of the released records ({self.equal_to_original:,} of "
            f"{self.records:,}) are equal to an original record on every released column, "
            f"more than the threshold {self.threshold:.0%}: for those people the release "
            "discloses their record as collected. Protect more (another method or stronger "
            "parameters) or raise the threshold (original_share_warning) knowingly"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready figures."""
        return {
            "records": self.records,
            "equal_to_original": self.equal_to_original,
            "share": self.share,
            "threshold": self.threshold,
            "warning": self.warning,
            "columns": list(self.columns),
            "comparison": "exact match on every released column (numbers as numbers, other "
            "values as text, missing equals missing) against any original record",
        }


def check_threshold(value: Any, where: str = "original_share_warning") -> float:
    """The warning threshold as a share in [0, 1] (ParameterError naming ``where``)."""
    if value is None:
        return DEFAULT_THRESHOLD
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ParameterError(f"{where} must be a share in [0, 1] (e.g. 0.1), got {value!r}")
    v = float(value)
    if not 0 <= v <= 1:
        raise ParameterError(f"{where} must be a share in [0, 1] (e.g. 0.1), got {value!r}")
    return v


def _codes(original: pd.Series, released: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """One code per value over both columns (equal values, equal codes; module docstring)."""
    if not (is_numeric(original) and is_numeric(released)):
        (a, b), _ = text_codes(original, released)
        return a, b
    both = np.concatenate(
        [
            original.to_numpy(dtype=np.float64, na_value=np.nan),
            released.to_numpy(dtype=np.float64, na_value=np.nan),
        ]
    )
    codes, _ = pd.factorize(both, use_na_sentinel=False)
    return codes[: len(original)], codes[len(original) :]


def original_records(
    original: pd.DataFrame,
    released: pd.DataFrame,
    columns: Sequence[str] | None = None,
    threshold: float | None = None,
) -> OriginalRecords:
    """Count the records of ``released`` equal to some record of ``original`` on ``columns``
    (default: the released columns the original has). ``threshold`` (default
    :data:`DEFAULT_THRESHOLD`) is the share above which :attr:`OriginalRecords.warning` is
    set. Formula and comparison rules: module docstring."""
    from sdckit.core.frequency import group_keys

    limit = check_threshold(threshold)
    cols = [c for c in (released.columns if columns is None else columns) if c in original]
    n_orig, n_rel = len(original), len(released)
    if n_rel == 0 or n_orig == 0 or not cols:
        return OriginalRecords(n_rel, 0, tuple(cols), limit)
    per_column = [_codes(original[c], released[c]) for c in cols]
    codes = [np.concatenate([o, r]) for o, r in per_column]
    group, n_groups, _ = group_keys(codes, ordered=False)
    present = np.zeros(n_groups, dtype=bool)
    present[group[:n_orig]] = True
    equal = int(present[group[n_orig:]].sum())
    return OriginalRecords(n_rel, equal, tuple(cols), limit)
