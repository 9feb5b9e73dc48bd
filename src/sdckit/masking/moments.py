"""Means, standard deviations and covariances that do not depend on the order of summation.

A plan's statistics scale the noise of a release (:mod:`sdckit.masking.noise_addition`), so
for the same seed to give the same bits on the local and the Spark engine they must be the
same bits too, whatever the order of the records or their partitioning. Floating-point
summation depends on the order; exact summation does not. Every finite double is an integer
multiple of ``2**-1074`` (IEEE 754 binary64), so :func:`exact_sum` returns the integer ``S``
with ``sum(x) = S * 2**-1074`` exactly; the sums of parts (partitions) add up to the sum of
the whole. :func:`rounded` gives the double nearest to ``S * 2**-1074 / d`` (Python's
integer true division is correctly rounded), so every statistic here is the correctly
rounded value of an exact expression:

* ``mean = round(sum(x) / n)``;
* ``var = round(sum(d_i^2) / (n - 1))`` with ``d_i = x_i - mean`` and ``d_i^2`` computed in
  double arithmetic -- the two-pass algorithm (Chan, Golub & LeVeque 1983, "Algorithms for
  computing the sample variance", The American Statistician 37(3), 242-247) with an exact
  second sum; ``sd = sqrt(var)`` (IEEE 754 square root, correctly rounded);
* ``cov_ab = round(sum(d_a d_b) / (m - 1))`` over the ``m`` complete rows, ``d`` the
  deviations from the means of those rows.

The per-record terms (:func:`column_sums`, :func:`square_sums`, :func:`product_sums`) are
computed by these functions on both engines (Spark: in every partition, the integers summed on
the driver), so the numbers are the same bit for bit. They agree with NumPy's ``nanmean``,
``nanstd(ddof=1)`` and ``cov`` up to the rounding of NumPy's pairwise sums.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "column_sums",
    "covariance_from",
    "exact_sum",
    "means_from",
    "product_sums",
    "rounded",
    "square_sums",
    "stds_from",
]

#: ``2**-1074``: every finite double is an integer multiple of it.
_SCALE = 1074
_HALF = 26  # mantissas (53 bits) are summed in two halves, exact in int64 for 2**36 values


def exact_sum(values: np.ndarray) -> int:
    """The exact sum of finite doubles as the integer ``S``: ``sum(values) = S * 2**-1074``.

    Each value is ``M * 2**E`` (``numpy.frexp``, ``M`` a 53-bit integer); the values are
    grouped by exponent, the mantissas of a group summed exactly in ``int64`` (as two halves
    of at most 27 bits), and the groups combined as Python integers.
    """
    x = np.asarray(values, dtype=np.float64).ravel()
    if not len(x):
        return 0
    frac, exp = np.frexp(x)
    mant = np.ldexp(frac, 53).astype(np.int64)  # exact: |mant| < 2**53
    shift = exp.astype(np.int64) - 53 + _SCALE  # x = mant * 2**(shift - 1074)
    low = shift < 0  # subnormal values: mant has that many trailing zero bits
    if low.any():
        mant[low] >>= -shift[low]
        shift[low] = 0
    order = np.argsort(shift, kind="stable")
    shift, mant = shift[order], mant[order]
    starts = np.flatnonzero(np.r_[True, shift[1:] != shift[:-1]])
    high_sums = np.add.reduceat(mant >> _HALF, starts)
    low_sums = np.add.reduceat(mant & ((1 << _HALF) - 1), starts)
    total = 0
    for s, hi, lo in zip(
        shift[starts].tolist(), high_sums.tolist(), low_sums.tolist(), strict=True
    ):
        total += ((hi << _HALF) + lo) << s
    return total


def rounded(total: int, divisor: int) -> float:
    """The double nearest to ``total * 2**-1074 / divisor`` (``divisor >= 1``)."""
    return total / (int(divisor) << _SCALE)


def _finite_sum(values: np.ndarray) -> int | float:
    """:func:`exact_sum`, or the (infinite or NaN) float sum when a value is not finite."""
    if np.isfinite(values).all():
        return exact_sum(values)
    return float(np.sum(values))


def column_sums(x: np.ndarray) -> list[int | float]:
    """Per column of the matrix ``x`` the exact sum (:func:`exact_sum`) of its numbers (NaN
    is missing)."""
    return [_finite_sum(col[~np.isnan(col)]) for col in np.asarray(x, dtype=np.float64).T]


def square_sums(x: np.ndarray, mean: np.ndarray) -> list[int | float]:
    """Per column of ``x`` the exact sum of ``(x_i - mean)^2`` over its numbers."""
    out: list[int | float] = []
    for col, m in zip(np.asarray(x, dtype=np.float64).T, mean, strict=True):
        d = col[~np.isnan(col)] - m
        out.append(_finite_sum(d * d))
    return out


def product_sums(x: np.ndarray, mean: np.ndarray) -> list[int | float]:
    """For every pair ``a <= b`` of columns (row by row of the upper triangle) the exact sum
    of ``(x_a - mean_a)(x_b - mean_b)`` over the rows of ``x`` (complete rows)."""
    d = np.asarray(x, dtype=np.float64) - np.asarray(mean, dtype=np.float64)
    p = d.shape[1]
    return [_finite_sum(d[:, a] * d[:, b]) for a in range(p) for b in range(a, p)]


def _ratio(total: int | float, divisor: int) -> float:
    return rounded(total, divisor) if isinstance(total, int) else float(total) / divisor


def means_from(sums: list[int | float], counts: list[int]) -> np.ndarray:
    """The means from exact sums and counts (NaN for a column without numbers)."""
    return np.array(
        [_ratio(s, n) if n else np.nan for s, n in zip(sums, counts, strict=True)],
        dtype=np.float64,
    )


def stds_from(squares: list[int | float], counts: list[int]) -> np.ndarray:
    """The sample standard deviations (``ddof=1``) from the exact sums of squared deviations
    and counts (0 where a column has fewer than two numbers)."""
    return np.array(
        [
            float(np.sqrt(_ratio(s, n - 1))) if n > 1 else 0.0
            for s, n in zip(squares, counts, strict=True)
        ],
        dtype=np.float64,
    )


def covariance_from(products: list[int | float], m: int, p: int) -> np.ndarray:
    """The ``p x p`` sample covariance matrix (``ddof=1``) of ``m >= 2`` complete rows from
    :func:`product_sums`."""
    cov = np.empty((p, p))
    k = 0
    for a in range(p):
        for b in range(a, p):
            cov[a, b] = cov[b, a] = _ratio(products[k], m - 1)
            k += 1
    return cov
