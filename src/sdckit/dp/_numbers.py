"""Exact numbers for the DP mechanisms: validation, dyadic rounding, rounding onto a grid.

Every privacy parameter enters the samplers as an exact rational (:class:`fractions.Fraction`;
a float converts exactly, ``Fraction(0.1)`` is the binary value the float holds). Rounding a
parameter is always done in the direction that keeps the guarantee: a noise scale is rounded
*up* (more noise), an epsilon used inside a sampler is rounded *down* (less privacy loss). The
rounded values are dyadic rationals ``m / 2**k`` with a numerator of about 32 bits, so that the
exact samplers stay on 64-bit integers.
"""

from __future__ import annotations

from fractions import Fraction
from numbers import Integral, Real
from typing import Any

import numpy as np

from sdckit.errors import DataError, ParameterError, short_repr

#: Significant bits kept when a parameter is rounded to a dyadic rational (relative error
#: below 2**-31).
DYADIC_BITS = 32
#: Largest grid value (in grid units) a released answer may have; keeps sums of grid values
#: and the samplers' arithmetic inside 64-bit integers.
GRID_LIMIT = 1 << 62


def exact(value: Any, name: str) -> Fraction:
    """``value`` (a finite real number: int, float, Fraction, numpy scalar) as an exact Fraction.

    Raises :class:`~sdckit.errors.ParameterError` naming ``name`` for booleans, text, NaN and
    infinities.
    """
    if isinstance(value, bool) or not isinstance(value, Real):
        raise ParameterError(f"{name} must be a real number, got {short_repr(value)}")
    if isinstance(value, Integral):
        return Fraction(int(value))
    if isinstance(value, Fraction):
        return value
    as_float = float(value)
    if not np.isfinite(as_float):
        raise ParameterError(f"{name} must be a finite number, got {short_repr(value)}")
    return Fraction(as_float)


def positive(value: Any, name: str) -> Fraction:
    """``value`` as an exact Fraction; it must be a finite number > 0."""
    number = exact(value, name)
    if number <= 0:
        raise ParameterError(f"{name} must be > 0, got {short_repr(value)}")
    return number


def positive_integer(value: Any, name: str) -> int:
    """``value`` as an int >= 1 (an integer type, not a float such as 2.0)."""
    if isinstance(value, bool) or not isinstance(value, Integral) or int(value) < 1:
        raise ParameterError(f"{name} must be an integer >= 1, got {short_repr(value)}")
    return int(value)


def open_probability(value: Any, name: str) -> float:
    """``value`` as a float strictly between 0 and 1 (a delta)."""
    number = exact(value, name)
    if not 0 < number < 1:
        raise ParameterError(f"{name} must be strictly between 0 and 1, got {short_repr(value)}")
    return float(number)


def floor_log2(x: Fraction) -> int:
    """``floor(log2(x))`` for a rational ``x > 0``, computed exactly on integers."""
    num, den = x.numerator, x.denominator
    e = num.bit_length() - den.bit_length()
    # x < 2**e  <=>  num < den * 2**e
    if (num << max(0, -e)) < (den << max(0, e)):
        e -= 1
    return e


def _dyadic(x: Fraction, bits: int, up: bool) -> Fraction:
    if x <= 0:
        raise ParameterError(f"internal: dyadic rounding of a non-positive number {x}")
    if x.denominator & (x.denominator - 1) == 0 and x.numerator < (1 << bits):
        return x  # already dyadic and short
    shift = bits - 1 - floor_log2(x)  # x * 2**shift lies in [2**(bits-1), 2**bits)
    scaled = x * Fraction(2) ** shift
    whole = (
        -(-scaled.numerator // scaled.denominator) if up else scaled.numerator // scaled.denominator
    )
    return Fraction(whole) / Fraction(2) ** shift


def dyadic_at_least(x: Fraction, bits: int = DYADIC_BITS) -> Fraction:
    """The smallest ``m / 2**k >= x`` with ``m < 2**bits`` at the scale of ``x`` (``x > 0``).

    Used for noise scales: rounding up only adds noise, so the guarantee computed for ``x``
    still holds; the relative change is below ``2**(1 - bits)``.
    """
    return _dyadic(x, bits, up=True)


def dyadic_at_most(x: Fraction, bits: int = DYADIC_BITS) -> Fraction:
    """The largest ``m / 2**k <= x`` with ``m < 2**bits`` at the scale of ``x`` (``x > 0``).

    Used for an epsilon inside an exact sampler: a smaller epsilon is a stronger guarantee.
    """
    return _dyadic(x, bits, up=False)


def power_of_two_at_most(x: Fraction) -> Fraction:
    """The largest power of two ``2**j <= x`` (``j`` may be negative), ``x > 0``."""
    return Fraction(2) ** floor_log2(x)


def grid_step(value: Any, name: str = "granularity") -> Fraction:
    """A grid step: a power of two ``2**j`` (``j`` any integer: 1, 0.5, 2**-20, 1024...).

    Powers of two make ``x / granularity`` exact in floating point, so rounding an answer onto
    the grid is exact.
    """
    step = positive(value, name)
    if step.numerator & (step.numerator - 1) or step.denominator & (step.denominator - 1):
        raise ParameterError(
            f"{name} must be a power of two such as 1, 0.5 or 2**-20, got {short_repr(value)}"
        )
    return step


def finite_array(values: Any, name: str) -> np.ndarray:
    """``values`` (a number or a 1-d sequence of numbers) as a 1-d array of finite floats."""
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise DataError(f"{name} must be numbers, got {short_repr(values)}") from None
    if array.ndim > 1:
        raise DataError(f"{name} must be a number or a 1-d sequence, got shape {array.shape}")
    array = np.atleast_1d(array)
    bad = np.flatnonzero(~np.isfinite(array))
    if bad.size:
        raise DataError(
            f"{name} must be finite numbers; position {int(bad[0])} is {array[bad[0]]!r}"
        )
    return array


def integer_array(values: Any, name: str) -> np.ndarray:
    """``values`` (an integer or a 1-d sequence of integers) as a 1-d int64 array.

    Integer-valued floats (``3.0``) are accepted; ``2.5``, NaN or values beyond 2**62 are not.
    """
    array = np.asarray(values)
    if array.dtype.kind in "iu":
        flat = np.atleast_1d(array).astype(np.int64)
        if array.ndim > 1:
            raise DataError(f"{name} must be an integer or a 1-d sequence, got shape {array.shape}")
        if flat.size and int(np.abs(flat).max()) >= GRID_LIMIT:
            raise DataError(f"{name}: values must stay below 2**62 in absolute value")
        return flat
    floats = finite_array(values, name)
    if not np.all(floats == np.round(floats)) or (
        floats.size and float(np.abs(floats).max()) >= float(GRID_LIMIT)
    ):
        raise DataError(
            f"{name} must be integers (a discrete mechanism releases integer answers); "
            f"got {short_repr(values)} -- use the continuous mechanism (laplace/gaussian) instead"
        )
    return floats.astype(np.int64)


def round_to_grid(values: np.ndarray, step: Fraction, name: str) -> np.ndarray:
    """Each value rounded to the nearest multiple of ``step`` (halves up), in grid units (int64).

    ``round(x) = floor(x / step + 1/2)``. ``step`` is a power of two, so ``x / step`` is exact in
    floating point, and the rounding is done on the exact fractional part (never on a rounded
    ``x / step + 0.5``). Because ``round(x + n) = round(x) + n`` for every integer ``n`` and the
    function is non-decreasing, two answers at most ``D`` apart round to grid values at most
    ``ceil(D / step)`` apart: the sensitivity argument of the grid mechanisms.
    """
    exponent = floor_log2(step)
    scaled = np.ldexp(values, -exponent)
    if not np.all(np.isfinite(scaled)) or (
        scaled.size and float(np.abs(scaled).max()) >= float(GRID_LIMIT) / 2
    ):
        raise DataError(
            f"{name}: values too large for the grid of step {float(step):g} (at most 2**61 "
            "steps); choose a coarser granularity"
        )
    whole = np.floor(scaled)
    return (whole + (scaled - whole >= 0.5)).astype(np.int64)


def ceil_fraction(x: Fraction) -> int:
    """``ceil(x)`` for a Fraction, on integers."""
    return -(-x.numerator // x.denominator)
