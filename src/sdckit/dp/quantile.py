"""The DP quantile of Smith (2011): the exponential mechanism over the intervals between data.

Smith (2011), "Privacy-preserving statistical estimation with optimal convergence rates"
(STOC), Algorithm 2 ("IndExp" in later papers), as diffprivlib's ``quantile`` and OpenDP's
interval-based quantile use it. The clamped, sorted data ``x_(1) <= ... <= x_(n)`` with
``x_(0) = lower`` and ``x_(n+1) = upper`` cut ``[lower, upper]`` into ``n + 1`` intervals; interval
``i`` holds the points with exactly ``i`` records at or below them and scores
``u_i = -|i - q n|``. The mechanism picks interval ``i`` with probability

    P(i) ∝ (x_(i+1) - x_(i)) * exp(epsilon * u_i / (2 Δu))

and releases a uniform point of it. That is the exponential mechanism (McSherry & Talwar 2007)
over every point of ``[lower, upper]`` with base measure the length: the weight of an interval
is its length times the common density of its points. Zero-width intervals (ties) have weight 0.

**Sensitivity (add/remove one person, the convention of all of :mod:`sdckit.dp`).** With
``q = a/b`` the integer score ``u(c) = -|b #{x <= c} - a n|`` is ``b`` times the one above.
Removing a record moves ``b #{x <= c} - a n`` by ``a - b`` (the record is at or below ``c``) or
by ``a`` (above it), so ``Δu = m max(a, b - a)`` for ``m`` records per person -- for the median
half a rank per record. diffprivlib takes ``Δu = 1`` rank under *replace*-one (a replacement
moves the rank by at most 1 and ``n`` not at all); with ``epsilon`` in the same place of
``exp(epsilon u / (2 Δu))`` both are epsilon-DP in their own neighbouring relation, and an
add/remove guarantee implies the replace-one guarantee at ``2 epsilon``.

**Exact sampling.** Every value and both ends are rounded onto a grid of step ``2**k``
(:func:`grid_for`, about ``2**32`` points across ``[lower, upper]``; a record's rounding is a
per-record transformation, so the guarantee is unaffected); the output space is the grid
points of ``[lower, upper]``, interval ``i`` holding ``w_i = g_(i+1) - g_(i)`` of them. With
``gamma_i = epsilon' (d_i - min d) / (2 Δu)`` (``d_i = |b i - a n|``, ``epsilon'`` = epsilon
rounded down to 32 significant bits, the minimum over non-empty intervals) the target is
``P(point in interval i) ∝ exp(-gamma_i)``. It is drawn by rejection, nothing in floating point:

* level ``t_i = min(floor(gamma_i), T)`` (``T = 64``); propose level ``t`` with probability
  ``∝ S_t r**t`` (``S_t`` = grid points of level ``t``, ``r = 3/8 >= exp(-1)``: exact integers),
  then a uniform grid point of that level;
* accept it with probability ``exp(-(gamma_i - t_i)) (exp(-1) / r)**t_i`` <= 1: a
  ``Bernoulli(exp(-rational))`` draw (Canonne, Kamath & Steinke 2020, Algorithm 1) times a
  ``Bernoulli((8 / (3 e))**t)`` draw, decided by comparing uniform bits with rigorous bounds
  of ``e**-1`` (its alternating series), refined until decided.

Proposal times acceptance is ``∝ exp(-gamma_i)`` per grid point, so an accepted point has
exactly the target distribution. Each proposal below level ``T`` is accepted with probability
at least ``exp(-1) (8 / (3 e))**63 > 0.1``; level ``T`` carries at most ``2**-90`` of the
proposal per grid point against at least 1 for the best interval.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from math import factorial

import numpy as np

from sdckit.dp._numbers import (
    ceil_fraction,
    dyadic_at_most,
    floor_log2,
    power_of_two_at_most,
    round_to_grid,
)
from sdckit.dp.randomness import Randomness
from sdckit.dp.samplers import _bernoulli_exp
from sdckit.errors import ParameterError

__all__ = ["QUANTILE_STEPS", "Intervals", "grid_for", "intervals", "sample_points"]

#: Default grid: at least this many steps across ``[lower, upper]``.
QUANTILE_STEPS = 1 << 32
#: Grid values stay below this in magnitude (exact in float64).
_FLOAT_EXACT = 1 << 52
#: Top level of the proposal (every interval with ``gamma >= T`` shares it).
LEVELS = 64
#: The proposal's ratio between levels, a rational ``>= exp(-1)``.
RATIO = Fraction(3, 8)
_BITS = 62
_BATCH = 32


@dataclass(frozen=True)
class Intervals:
    """The ``n + 1`` intervals of Smith's mechanism on a grid (all int64, grid units).

    ``starts[i]``: the first grid point of interval ``i`` (``g_(i)``, ``g_(0)`` = the lower
    end); ``widths[i]``: its number of grid points (0 for ties); ``distance[i]``:
    ``|b i - a n|`` minus its minimum over non-empty intervals, so the score of interval ``i``
    is ``-distance[i]`` up to a constant.
    """

    starts: np.ndarray
    widths: np.ndarray
    distance: np.ndarray


def grid_for(lower: Fraction, upper: Fraction, granularity: Fraction | None) -> Fraction:
    """The grid step: ``granularity``, or the largest power of two ``<= (upper - lower) / 2**32``
    (but at least ``max(|lower|, |upper|) / 2**52``, so grid values are exact floats)."""
    if granularity is not None:
        step = granularity
    else:
        step = power_of_two_at_most((upper - lower) / QUANTILE_STEPS)
        largest = max(abs(lower), abs(upper), step)
        step = max(step, power_of_two_at_most(largest / (_FLOAT_EXACT >> 1)))
    if abs(lower) / step >= _FLOAT_EXACT or abs(upper) / step >= _FLOAT_EXACT:
        raise ParameterError(
            f"quantile: the granularity {float(step):g} is too fine for the bounds (at most "
            "2**52 steps from 0); choose a coarser one"
        )
    return step


def grid_ends(lower: Fraction, upper: Fraction, step: Fraction) -> tuple[int, int]:
    """The first and last grid points of ``[lower, upper]`` (grid units)."""
    low, high = ceil_fraction(lower / step), (upper / step).__floor__()
    if low > high:
        raise ParameterError(
            f"quantile: no multiple of the granularity {float(step):g} lies in [lower, upper]"
        )
    return low, high


def to_grid(values: np.ndarray, low: int, high: int, step: Fraction) -> np.ndarray:
    """Clamped ``values`` rounded onto the grid and kept in ``[low, high]``, sorted (int64)."""
    lo, hi = float(low * step), float(high * step)
    grid = round_to_grid(np.clip(values, lo, hi), step, "quantile: values")
    return np.sort(np.clip(grid, low, high))


def intervals(grid: np.ndarray, low: int, high: int, a: int, b: int) -> Intervals:
    """The intervals of sorted grid data ``grid`` in ``[low, high]`` for the quantile ``a/b``.

    Interval ``i`` (``0 <= i <= n``) is ``[g_(i), g_(i+1))`` with ``g_(0) = low`` and
    ``g_(n+1) = high + 1``: its points have exactly ``i`` records at or below them.
    """
    n = grid.size
    starts = np.concatenate(([low], grid)).astype(np.int64)
    widths = np.concatenate((grid, [high + 1])).astype(np.int64) - starts
    raw = np.abs(b * np.arange(n + 1, dtype=np.int64) - a * n)
    return Intervals(starts, widths, raw - raw[widths > 0].min())


def _levels(distance: np.ndarray, coef: int, den: int) -> np.ndarray:
    """``min(floor(coef d / den), LEVELS)`` per distance, exactly (thresholds on integers)."""
    thresholds = [min(-(-t * den // coef), 1 << 62) for t in range(LEVELS + 1)]
    found = np.searchsorted(np.array(thresholds, dtype=np.int64), distance, side="right")
    return (found - 1).astype(np.int8)


def _exp_minus_one_bounds(bits: int) -> tuple[Fraction, Fraction]:
    """Rational ``lo < exp(-1) < hi`` with ``hi - lo < 2**-bits`` (the alternating series)."""
    k = 2
    while factorial(k + 1) <= 1 << bits:
        k += 1
    partial = sum((Fraction((-1) ** j, factorial(j)) for j in range(k + 1)), Fraction(0))
    nxt = partial + Fraction((-1) ** (k + 1), factorial(k + 1))
    return min(partial, nxt), max(partial, nxt)


def _factor_cutoffs(bits: int) -> tuple[list[int], list[int]]:
    """Per level ``t``: integers ``lo_t <= 2**bits (exp(-1)/r)**t <= hi_t``."""
    e_lo, e_hi = _exp_minus_one_bounds(bits + 16)
    lows, highs = [], []
    for t in range(LEVELS + 1):
        p_lo, p_hi = (e_lo / RATIO) ** t, (e_hi / RATIO) ** t
        lows.append((p_lo * (1 << bits)).__floor__())
        highs.append(ceil_fraction(p_hi * (1 << bits)))
    return lows, highs


_CUTOFFS = _factor_cutoffs(_BITS)


def _factor_bernoulli(levels: np.ndarray, rnd: Randomness) -> np.ndarray:
    """Lane-wise ``Bernoulli((exp(-1) / r)**t)``: a uniform ``U`` compared with the bounds,
    more bits of ``U`` and tighter bounds for the (rare, ``< 2**-55``) undecided lanes."""
    lows = np.array(_CUTOFFS[0], dtype=np.int64)[levels]
    highs = np.array(_CUTOFFS[1], dtype=np.int64)[levels]
    u = rnd.bits62(levels.size)
    out = u < lows
    for i in np.flatnonzero(~out & (u < highs)):
        value, bits = int(u[i]), _BITS
        while True:
            value, bits = (value << _BITS) | int(rnd.bits62(1)[0]), bits + _BITS
            e_lo, e_hi = _exp_minus_one_bounds(bits + 16)
            t = int(levels[i])
            if value + 1 <= (e_lo / RATIO) ** t * (1 << bits):
                out[i] = True
                break
            if value >= (e_hi / RATIO) ** t * (1 << bits):
                break
    return out


def sample_points(
    iv: Intervals, epsilon: Fraction, sensitivity: int, size: int, rnd: Randomness
) -> np.ndarray:
    """``size`` exact draws of Smith's mechanism: grid points, ``P ∝ exp(-gamma_i)`` each.

    ``gamma_i = epsilon' distance_i / (2 sensitivity)`` with ``epsilon'`` = ``epsilon`` rounded
    down to 32 significant bits (module docstring: the proposal and the acceptance).
    """
    eps = dyadic_at_most(epsilon)
    coef, den = eps.numerator, eps.denominator * 2 * sensitivity
    level = _levels(iv.distance, coef, den)
    order = np.argsort(level, kind="stable")
    ends = np.cumsum(iv.widths[order])  # grid points up to each interval, level by level
    first = np.searchsorted(level[order], np.arange(LEVELS + 2))
    before = np.concatenate(([0], ends))[first]  # grid points below each level
    sizes = np.diff(before)
    weights = [
        int(s) * RATIO.numerator**t * RATIO.denominator ** (LEVELS - t)
        for t, s in enumerate(sizes.tolist())
    ]
    cumulative = np.cumsum(np.array(weights, dtype=object))
    total = int(cumulative[-1])
    out = np.empty(size, dtype=np.int64)
    for lane in range(size):
        while True:
            draws = [rnd.below_int(total) for _ in range(_BATCH)]
            t = np.searchsorted(cumulative, np.array(draws, dtype=object), side="right")
            offset = before[t] + rnd.below(sizes[t], _BATCH)
            pos = np.searchsorted(ends, offset, side="right")
            i = order[pos]
            point = iv.starts[i] + offset - (ends[pos] - iv.widths[i])
            rest = np.array(
                [int(iv.distance[j]) * coef - int(tj) * den for j, tj in zip(i, t, strict=True)],
                dtype=object,
            )
            accept = _bernoulli_exp(rest, np.full(_BATCH, den, dtype=object), rnd)
            accept &= _factor_bernoulli(t.astype(np.int64), rnd)
            if accept.any():
                out[lane] = point[int(accept.argmax())]
                break
    return out


def grid_value(points: np.ndarray, step: Fraction) -> np.ndarray:
    """Grid points as floats (exact: they stay below 2**52 in magnitude)."""
    return np.ldexp(points.astype(np.float64), floor_log2(step))
