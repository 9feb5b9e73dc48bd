"""Distances between the low-order marginal distributions of two files (e.g. original and
synthetic): the total variation distance of every 1-way and 2-way marginal.

``TVD(p, q) = 1/2 * sum_x |p(x) - q(x)|`` over the cells ``x`` of the marginal table, with
``p``/``q`` the relative frequencies in each file (0 = the same marginal, 1 = disjoint
supports). It is the marginal-fidelity measure of NIST's differentially private synthetic
data challenges and of the MST/AIM papers (McKenna, Miklau & Sheldon 2021, "Winning the NIST
contest", *Journal of Privacy and Confidentiality* 11(3); McKenna, Mullins, Sheldon & Miklau
2022, "AIM", *PVLDB* 15(11): the average L1 error of the workload's marginals is twice the
mean TVD). Numeric columns are cut into ``numeric_bins`` bins at the original's quantiles (the
same edges for both files, values outside them in the end bins); a missing value is a
category of its own. The cells of a marginal are counted on the frequency-set engine
(:func:`sdckit.core.frequency.group_keys`), never row by row.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from sdckit.core.encoding import is_numeric, text_codes
from sdckit.core.frequency import group_keys
from sdckit.errors import ParameterError
from sdckit.utility.numeric import check_aligned

__all__ = ["MarginalDistances", "marginal_distances"]


@dataclass
class MarginalDistances:
    """The TVD of every 1-way and 2-way marginal (``one_way``: column -> TVD; ``two_way``:
    ``"a x b"`` -> TVD) and their means and maxima."""

    one_way: dict[str, float]
    two_way: dict[str, float] = field(default_factory=dict)

    @property
    def tvd_1way_mean(self) -> float:
        """Mean TVD of the 1-way marginals."""
        return float(np.mean(list(self.one_way.values()))) if self.one_way else 0.0

    @property
    def tvd_2way_mean(self) -> float:
        """Mean TVD of the 2-way marginals (0 with fewer than two columns)."""
        return float(np.mean(list(self.two_way.values()))) if self.two_way else 0.0

    def to_dict(self) -> dict[str, object]:
        """JSON-ready figures: means, maxima and every marginal's TVD."""
        return {
            "tvd_1way_mean": self.tvd_1way_mean,
            "tvd_1way_max": max(self.one_way.values(), default=0.0),
            "tvd_2way_mean": self.tvd_2way_mean,
            "tvd_2way_max": max(self.two_way.values(), default=0.0),
            "one_way": dict(self.one_way),
            "two_way": dict(self.two_way),
        }


def _codes(original: pd.Series, other: pd.Series, numeric_bins: int) -> tuple[np.ndarray, int]:
    """Shared integer codes of the stacked column (original rows first)."""
    if is_numeric(original) and is_numeric(other):
        a = original.to_numpy(dtype=np.float64, na_value=np.nan)
        b = other.to_numpy(dtype=np.float64, na_value=np.nan)
        finite = a[~np.isnan(a)]
        edges = (
            np.unique(np.quantile(finite, np.linspace(0, 1, numeric_bins + 1))[1:-1])
            if len(finite)
            else np.zeros(0)
        )
        both = np.concatenate([a, b])
        codes = np.searchsorted(edges, both, side="right").astype(np.int64)
        codes[np.isnan(both)] = len(edges) + 1  # missing: a bin of its own
        return codes, len(edges) + 2
    (a, b), k = text_codes(original, other, sort=True)
    return np.concatenate([a, b]), k


def _tvd(codes: list[np.ndarray], cards: list[int], n_original: int) -> float:
    """``0.5 * sum |p - q|`` over the cells, computed on whole counts: with ``n`` and ``m``
    records it is ``sum |c_p m - c_q n| / (2 n m)``, one rounding in all, so it never leaves
    [0, 1] (summing the shares could give 1.0000000000000002 for disjoint files)."""
    group, n_groups, _ = group_keys(codes, cards, ordered=False)
    n, m = n_original, len(group) - n_original
    c_p = np.bincount(group[:n_original], minlength=n_groups).astype(np.int64)
    c_q = np.bincount(group[n_original:], minlength=n_groups).astype(np.int64)
    return float(np.abs(c_p * m - c_q * n).sum()) / (2.0 * n * m)


def marginal_distances(
    original: pd.DataFrame,
    other: pd.DataFrame,
    columns: Sequence[str] | str | None = None,
    *,
    numeric_bins: int = 10,
    two_way: bool = True,
) -> MarginalDistances:
    """TVD of every 1-way and (with ``two_way``) 2-way marginal of ``columns`` (default: every
    column of ``original``) between ``original`` and ``other`` (module docstring). The files
    need not have the same number of rows. ``numeric_bins`` >= 1 quantile bins per numeric
    column. Raises :class:`~sdckit.errors.DataError` for a missing column or an empty file."""
    if isinstance(numeric_bins, bool) or not isinstance(numeric_bins, int) or numeric_bins < 1:
        raise ParameterError(
            f"marginal distances: numeric_bins must be an integer >= 1, got {numeric_bins!r}"
        )
    cols = check_aligned(original, other, columns, "marginal distances", aligned=False)
    coded = {c: _codes(original[c], other[c], numeric_bins) for c in cols}
    n = len(original)
    one = {c: _tvd([coded[c][0]], [coded[c][1]], n) for c in cols}
    two: dict[str, float] = {}
    if two_way:
        for a, b in itertools.combinations(cols, 2):
            two[f"{a} x {b}"] = _tvd([coded[a][0], coded[b][0]], [coded[a][1], coded[b][1]], n)
    return MarginalDistances(one, two)
