"""Microaggregation-based hybrid data: each group's records replaced by synthetic records with
the group's exact mean and covariance.

Domingo-Ferrer, J. & González-Nicolás, Ú. (2010). "Hybrid microdata using microaggregation".
*Information Sciences* 180(15), 2834-2844. The records are partitioned by MDAV into groups of
``k`` to ``2k - 1`` records (:func:`sdckit.masking.microaggregation.mdav_partition`, on the
z-scored numeric attributes); within each group the original records ``X`` (``k x p``) are
replaced by synthetic records ``Y`` with the same mean vector and the same covariance matrix.
The group size is the knob between original and synthetic data: ``k = 1`` releases the
original records, ``k = n`` a fully synthetic data set preserving only the overall means and
covariances (as Burridge's information-preserving statistical obfuscation, IPSO, 2003).

Exact moment matching (any group size, also ``k <= p`` where the group covariance is
singular): with the centred group ``X_c = U S V^T`` (thin SVD, rank ``r``), draw a random
``k x r`` matrix whose columns are orthonormal and orthogonal to the all-ones vector (QR of a
Gaussian matrix projected off the ones vector) ``Q``; then ``Y = 1 mean^T + Q S V^T`` has
``Y_c^T Y_c = V S^2 V^T = X_c^T X_c`` and the mean of ``X``: the group's covariance and mean
are preserved exactly while the records are new (the direction ``Q`` is random, uniformly
distributed given ``r``). Summed over groups, the whole file's means and covariance matrix are
preserved exactly too (the between-group part depends only on the group means).

Categorical attributes (option ``categorical: permute``, default) are kept per group as a
random permutation of the group's values (the group's category counts are preserved); with
``categorical: keep`` they stay on their records. Integer attributes are rounded back, which
perturbs the matched moments by at most the rounding.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from sdckit.core.params import column_names, integer_at_least
from sdckit.errors import DataError, ParameterError
from sdckit.synthesis.base import Synthesizer, column_kinds

__all__ = ["Hybrid", "moment_matched"]


def moment_matched(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Random records with the exact mean and covariance of the rows of ``x`` (module
    docstring); ``x`` is one group (``k x p``) or a stack of equal-size groups (``g x k x p``),
    done in one batched SVD and QR."""
    single = x.ndim == 2
    xs = x[None] if single else x
    g, k, p = xs.shape
    if k == 1:
        return x.copy()
    mean = xs.mean(axis=1, keepdims=True)
    _, s, vt = np.linalg.svd(xs - mean, full_matrices=False)
    m = min(k - 1, p)  # the centred group has rank <= k - 1
    z = rng.standard_normal((g, k, m))
    z -= z.mean(axis=1, keepdims=True)  # orthogonal to the ones vector
    q, _ = np.linalg.qr(z)
    y = mean + (q * s[:, None, :m]) @ vt[:, :m, :]
    return y[0] if single else y


class Hybrid(Synthesizer):
    """Microaggregation-based hybrid data (module docstring).

    The output has one record per original record, in the original order (``sample`` makes
    exactly ``n_original`` records).

    Parameters
    ----------
    k : int
        The group size (>= 1; default 3).
    columns : list of str, optional
        The numeric attributes synthesized (default: every numeric column).
    categorical : str
        ``permute`` (default: the categorical values are permuted within each group) or
        ``keep``.
    """

    name = "hybrid"

    def __init__(
        self, k: int = 3, *, columns: Sequence[str] | None = None, categorical: str = "permute"
    ) -> None:
        super().__init__()
        integer_at_least(k, 1, "hybrid", "k")
        if categorical not in ("permute", "keep"):
            raise ParameterError(
                f"hybrid: categorical must be 'permute' or 'keep', got {categorical!r}"
            )
        self.k = int(k)
        self.columns_given = (
            column_names(columns, "hybrid", "columns") if columns is not None else None
        )
        self.categorical = categorical
        self._data: pd.DataFrame | None = None
        self._numeric: list[str] = []
        self._labels: np.ndarray | None = None

    def _fit(self, data: pd.DataFrame, rng: np.random.Generator) -> None:
        from sdckit.masking.microaggregation import mdav_partition

        kinds = column_kinds(data)
        if self.columns_given is not None:
            for c in self.columns_given:
                if c not in data.columns:
                    raise DataError(f"hybrid: column {c!r} is not in the data")
                if kinds[c] != "numeric":
                    raise DataError(
                        f"hybrid: column {c!r} is not numeric; hybrid data matches means and "
                        "covariances of numeric attributes (categorical ones are permuted "
                        "within groups)"
                    )
            numeric = list(self.columns_given)
        else:
            numeric = [c for c in data.columns if kinds[c] == "numeric"]
        if not numeric:
            raise DataError(
                "hybrid: the data has no numeric column to synthesize; hybrid data replaces "
                "numeric attributes (a job's attribute declared without `type: integer` or "
                "`type: decimal` stays text)"
            )
        if self.k > len(data):
            raise ParameterError(f"hybrid: k = {self.k} exceeds the {len(data):,} records")
        x = data[numeric].to_numpy(dtype=np.float64, na_value=np.nan)
        if np.isnan(x).any():
            col = numeric[int(np.flatnonzero(np.isnan(x).any(axis=0))[0])]
            raise DataError(
                f"hybrid: numeric column {col!r} has missing values; impute them or leave the "
                "column out (columns: [...])"
            )
        sd = x.std(axis=0)
        z = (x - x.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
        self._labels = mdav_partition(z, self.k) if self.k > 1 else np.arange(len(x))
        self._data = data.reset_index(drop=True)
        self._numeric = numeric
        sizes = np.bincount(self._labels)
        self.details = {
            "k": self.k,
            "columns": numeric,
            "groups": int(len(sizes)),
            "group_size_min": int(sizes.min()),
            "group_size_max": int(sizes.max()),
            "categorical": self.categorical,
        }

    def _sample(self, n: int, rng: np.random.Generator) -> pd.DataFrame:
        assert self._data is not None and self._labels is not None
        if n != len(self._data):
            raise ParameterError(
                f"hybrid: hybrid data has one record per original record ({len(self._data):,}), "
                f"not {n:,}"
            )
        data = self._data
        x = data[self._numeric].to_numpy(dtype=np.float64)
        order = np.argsort(self._labels, kind="stable")
        bounds = np.flatnonzero(np.diff(self._labels[order])) + 1
        out = data.copy()
        y = np.empty_like(x)
        others = [c for c in data.columns if c not in self._numeric]
        permuted = np.arange(len(data))
        groups = np.split(order, bounds)
        by_size: dict[int, list[np.ndarray]] = {}
        for rows in groups:
            by_size.setdefault(len(rows), []).append(rows)
        for size in sorted(by_size):  # equal-size groups in one batched SVD
            rows = np.stack(by_size[size])
            y[rows] = moment_matched(x[rows], rng)
            if self.categorical == "permute":
                shuffle = np.argsort(rng.random(rows.shape), axis=1)
                permuted[rows] = np.take_along_axis(rows, shuffle, axis=1)
        out[self._numeric] = y
        if others and self.categorical == "permute":
            out[others] = data[others].to_numpy(dtype=object)[permuted]
        return out
