"""Exact samplers for the DP noise: no floating-point number is drawn or computed on the way.

Mironov (2012), "On significance of the least significant bits for differential privacy"
(ACM CCS), showed that textbook Laplace noise ``-b * sign(u) * log(1 - 2|u|)`` computed in
floating point leaks the input through the set of reachable doubles. The samplers here follow
Canonne, Kamath & Steinke (2020), "The discrete Gaussian for differential privacy" (NeurIPS),
sec. 5: everything is built on exact uniform integers (:mod:`sdckit.dp.randomness`) and exact
rational arithmetic, so each sampler draws *exactly* from its stated distribution:

* :func:`bernoulli_exp` -- ``Bernoulli(exp(-gamma))`` for a rational ``gamma >= 0``
  (their Algorithm 1 for ``gamma`` in [0, 1], and a product of ``floor(gamma)`` draws of
  ``Bernoulli(exp(-1))`` for the integer part);
* :func:`geometric` -- ``P(Y = y) = (1 - exp(-1/scale)) exp(-y/scale)``, ``y >= 0``;
* :func:`discrete_laplace` -- ``P(Z = z) ∝ exp(-|z| / scale)`` on the integers (their
  Algorithm 2, the two-sided geometric distribution);
* :func:`discrete_gaussian` -- ``P(Z = z) ∝ exp(-z**2 / (2 sigma**2))`` (their Algorithm 3);
* :func:`exp_weighted_index` -- an index ``i`` with probability ``∝ exp(-gamma_i)`` (rejection
  from the uniform proposal, accepted by :func:`bernoulli_exp`: the exact sampler behind the
  exponential mechanism).

Every sampler is vectorised: a batch of lanes runs the algorithm in lock-step on numpy arrays
(lanes that finish drop out), which is the same algorithm per lane, just many at once. Integers
stay in int64 while they fit below 2**62 and switch to Python integers (object arrays) beyond,
where a Bernoulli(p/q) draw compares 62 random bits with the binary expansion of ``p/q``
(continuing with fresh bits on the 2**-62 chance of a tie): exact for any size.

Parameters are exact rationals: an int, a :class:`fractions.Fraction` or a float (taken as the
exact binary value it holds).
"""

from __future__ import annotations

from fractions import Fraction
from math import isqrt, lcm
from typing import Any

import numpy as np

from sdckit.dp._numbers import exact, floor_log2, positive
from sdckit.dp.randomness import Randomness, as_randomness
from sdckit.errors import ParameterError

__all__ = [
    "bernoulli_exp",
    "geometric",
    "discrete_laplace",
    "discrete_gaussian",
    "exp_weighted_index",
]

_WORD = 1 << 63
_TOP = 1 << 62
#: Scales accepted by the samplers: outputs stay far inside int64.
_MAX_LOG2_SCALE = 40


# --- integer arrays that may outgrow int64 -------------------------------------------------


def _is_big(a: np.ndarray) -> bool:
    return a.dtype == object


def _times(a: np.ndarray, k: int) -> np.ndarray:
    """``a * k`` for a non-negative int array, promoted to Python ints when it would overflow."""
    if not _is_big(a) and (a.size == 0 or int(a.max()) * k < _WORD):
        return a * k
    return a.astype(object) * k


def _to_int64(a: np.ndarray) -> np.ndarray:
    """``a`` as int64 when every value fits, else unchanged (object)."""
    if not _is_big(a):
        return a
    if a.size == 0 or max(abs(int(v)) for v in a) < _WORD:
        return a.astype(np.int64)
    return a


# --- Bernoulli draws -------------------------------------------------------------------------


def _bernoulli_ratio(p: np.ndarray, q: np.ndarray, rnd: Randomness) -> np.ndarray:
    """Lane-wise ``Bernoulli(p_i / q_i)`` for integers ``0 <= p_i <= q_i``, ``q_i >= 1``."""
    n = p.shape[0]
    if n == 0:
        return np.zeros(0, dtype=bool)
    if not _is_big(p) and not _is_big(q):
        return rnd.below(q, n) < p
    # compare a uniform U in [0, 1) with p/q, 62 bits at a time: U = (u + U') / 2**62 and
    # p/q * 2**62 = c + f, so U < p/q  <=>  u < c, or u == c and U' < f
    scaled = p.astype(object) * _TOP
    big_q = q.astype(object)
    c = scaled // big_q
    c64 = c.astype(np.int64)  # c <= 2**62
    u = rnd.bits62(n)
    out = u < c64
    for i in np.flatnonzero(u == c64):
        q_i = int(big_q[i])
        out[i] = rnd.below_int(q_i) < int(scaled[i] - c[i] * q_i)
    return out


def _bernoulli_exp_unit(p: np.ndarray, q: np.ndarray, rnd: Randomness) -> np.ndarray:
    """``Bernoulli(exp(-p_i/q_i))`` for ``0 <= p_i/q_i <= 1``.

    Canonne, Kamath & Steinke (2020), Algorithm 1: draw ``A_k ~ Bernoulli(gamma / k)`` for
    ``k = 1, 2, ...`` until the first ``A_k = 0``; return 1 iff that ``k`` is odd. Then
    ``P(K > k) = gamma**k / k!`` and ``P(K odd) = sum_k (-gamma)**k / k! = exp(-gamma)``.
    All lanes are at the same ``k`` in each round.
    """
    n = p.shape[0]
    stop = np.zeros(n, dtype=np.int64)
    lanes = np.arange(n)
    k = 1
    while lanes.size:
        success = _bernoulli_ratio(p[lanes], _times(q[lanes], k), rnd)
        stop[lanes[~success]] = k
        lanes = lanes[success]
        k += 1
    return stop % 2 == 1


def _bernoulli_exp_minus_one(n: int, rnd: Randomness) -> np.ndarray:
    ones = np.ones(n, dtype=np.int64)
    return _bernoulli_exp_unit(ones, ones, rnd)


def _bernoulli_exp(num: np.ndarray, den: np.ndarray, rnd: Randomness) -> np.ndarray:
    """Lane-wise ``Bernoulli(exp(-num_i/den_i))`` for integers ``num_i >= 0``, ``den_i >= 1``.

    ``exp(-gamma) = exp(-1)**floor(gamma) * exp(-(gamma - floor(gamma)))``: the product of
    independent draws (Canonne, Kamath & Steinke 2020, Algorithm 1, the case gamma > 1).
    """
    whole = num // den
    fraction = num - whole * den
    result = _bernoulli_exp_unit(fraction, den, rnd)
    # a lane needing 2**62 consecutive successes of Bernoulli(1/e) never gets there: cap
    remaining = (
        np.array([min(int(w), _TOP) for w in whole], dtype=np.int64)
        if _is_big(whole)
        else whole.astype(np.int64)
    )
    lanes = np.flatnonzero(result & (remaining > 0))
    while lanes.size:
        success = _bernoulli_exp_minus_one(lanes.size, rnd)
        result[lanes[~success]] = False
        remaining[lanes] -= 1
        lanes = lanes[success & (remaining[lanes] > 0)]
    return result


def _count_exp_minus_one_successes(n: int, rnd: Randomness) -> np.ndarray:
    """Per lane, the number of ``Bernoulli(exp(-1))`` successes before the first failure."""
    count = np.zeros(n, dtype=np.int64)
    lanes = np.arange(n)
    while lanes.size:
        success = _bernoulli_exp_minus_one(lanes.size, rnd)
        count[lanes[success]] += 1
        lanes = lanes[success]
    return count


# --- one draw at a time, on Python integers (small batches: no numpy overhead) -------------

#: Batches up to this size are drawn one value at a time on Python integers: the same
#: algorithms without the fixed cost of the vectorised rounds (a single query's noise).
SCALAR_BATCH = 8


def _bernoulli_exp_unit_int(p: int, q: int, rnd: Randomness) -> bool:
    """``Bernoulli(exp(-p/q))`` for ``0 <= p/q <= 1``: Algorithm 1 of Canonne et al. (2020)."""
    k = 1
    while rnd.below_int(q * k) < p:  # A_k ~ Bernoulli(gamma / k)
        k += 1
    return k % 2 == 1


def _bernoulli_exp_int(num: int, den: int, rnd: Randomness) -> bool:
    """``Bernoulli(exp(-num/den))``: the fractional part, then ``floor`` draws of Bernoulli(1/e)."""
    whole, fraction = divmod(num, den)
    if not _bernoulli_exp_unit_int(fraction, den, rnd):
        return False
    return all(_bernoulli_exp_unit_int(1, 1, rnd) for _ in range(whole))


def _discrete_laplace_int(t: int, s: int, rnd: Randomness) -> int:
    """One discrete Laplace draw of scale ``t/s`` (Canonne et al. 2020, Algorithm 2)."""
    while True:
        u = rnd.below_int(t)
        if not _bernoulli_exp_int(u, t, rnd):
            continue
        v = 0
        while _bernoulli_exp_unit_int(1, 1, rnd):
            v += 1
        y = (u + t * v) // s
        negative = rnd.below_int(2) == 1
        if negative and y == 0:
            continue
        return -y if negative else y


def _discrete_gaussian_int(a: int, b: int, rnd: Randomness) -> int:
    """One discrete Gaussian draw with ``sigma² = a/b`` (Canonne et al. 2020, Algorithm 3)."""
    t = isqrt(a // b) + 1
    while True:
        y = _discrete_laplace_int(t, 1, rnd)
        if _bernoulli_exp_int((abs(y) * b * t - a) ** 2, 2 * a * b * t * t, rnd):
            return y


# --- geometric, discrete Laplace, discrete Gaussian -----------------------------------------


def _geometric_batch(t: int, s: int, m: int, rnd: Randomness) -> np.ndarray:
    """Up to ``m`` draws of ``Geometric(1 - exp(-s/t))`` (int64): the accepted ones of ``m`` tries.

    Canonne, Kamath & Steinke (2020), Algorithm 2, first steps: ``U`` uniform on
    ``{0..t-1}`` accepted with probability ``exp(-U/t)``, ``V`` = number of successes of
    ``Bernoulli(exp(-1))``; then ``X = U + t V ~ Geometric(1 - exp(-1/t))`` and
    ``floor(X / s) ~ Geometric(1 - exp(-s/t))``.
    """
    u = rnd.below(t, m)
    keep = _bernoulli_exp(u, np.full(m, t, dtype=object if t >= _WORD else np.int64), rnd)
    u = u[keep]
    v = _count_exp_minus_one_successes(u.size, rnd)
    if not _is_big(u) and t * (int(v.max(initial=0)) + 1) < _WORD:
        x = u + t * v
    else:
        x = u.astype(object) + t * v.astype(object)
    if not _is_big(x) and s < _WORD:
        return x // s
    return _to_int64(x.astype(object) // s)


def _discrete_laplace(t: int, s: int, size: int, rnd: Randomness) -> np.ndarray:
    """``size`` draws of the discrete Laplace with scale ``t/s``: ``P(z) ∝ exp(-|z| s / t)``.

    Canonne, Kamath & Steinke (2020), Algorithm 2: ``Y ~ Geometric(1 - exp(-s/t))``, a fair
    sign ``B``, reject ``(B = 1, Y = 0)`` (so that 0 is not counted twice), return
    ``(1 - 2B) Y``.
    """
    if size <= SCALAR_BATCH:
        return np.array([_discrete_laplace_int(t, s, rnd) for _ in range(size)], dtype=np.int64)
    out = np.empty(size, dtype=np.int64)
    filled = 0
    while filled < size:
        need = size - filled
        y = _geometric_batch(t, s, 2 * need + 16, rnd)
        negative = rnd.below(2, y.size) == 1
        z = np.where(negative, -y, y)[~(negative & (y == 0))]
        take = min(z.size, need)
        out[filled : filled + take] = z[:take]
        filled += take
    return out


def _discrete_gaussian(a: int, b: int, size: int, rnd: Randomness) -> np.ndarray:
    """``size`` draws of the discrete Gaussian with ``sigma**2 = a/b``: ``P(z) ∝ exp(-z²/(2σ²))``.

    Canonne, Kamath & Steinke (2020), Algorithm 3: ``t = floor(sigma) + 1``, ``Y`` discrete
    Laplace of scale ``t``, accepted with probability ``exp(-(|Y| - sigma²/t)² / (2 sigma²))``.
    The product ``exp(-|y|/t - (|y| - σ²/t)²/(2σ²)) = exp(-y²/(2σ²) - σ²/(2t²))`` is
    proportional to the target. With ``sigma² = a/b`` the acceptance exponent is the exact
    rational ``(|Y| b t - a)² / (2 a b t²)``.
    """
    if size <= SCALAR_BATCH:
        return np.array([_discrete_gaussian_int(a, b, rnd) for _ in range(size)], dtype=np.int64)
    t = isqrt(a // b) + 1
    bt, den = b * t, 2 * a * b * t * t
    out = np.empty(size, dtype=np.int64)
    filled = 0
    while filled < size:
        need = size - filled
        m = 2 * need + 16
        y = _discrete_laplace(t, 1, m, rnd)
        magnitude = np.abs(y)
        if int(magnitude.max(initial=0)) * bt + a < (1 << 31) and den < _WORD:
            num = (magnitude * bt - a) ** 2
            dens = np.full(m, den, dtype=np.int64)
        else:
            num = (magnitude.astype(object) * bt - a) ** 2
            dens = np.full(m, den, dtype=object)
        accepted = y[_bernoulli_exp(num, dens, rnd)]
        take = min(accepted.size, need)
        out[filled : filled + take] = accepted[:take]
        filled += take
    return out


def _exp_weighted_index(num: np.ndarray, den: int, size: int, rnd: Randomness) -> np.ndarray:
    """``size`` indices ``i`` drawn with probability ``∝ exp(-num_i / den)`` (``num_i >= 0``).

    Rejection sampling: propose ``i`` uniformly, accept with probability ``exp(-num_i/den)``
    (exact, :func:`_bernoulli_exp`); the accepted proposal has exactly the target distribution
    and, as some ``num_i`` is 0 when called from the mechanisms, a round accepts with probability
    at least ``1/n``. Each lane gets a row of proposals per round and keeps the first accepted
    one: the same sequence of trials as one proposal at a time.
    """
    n = num.shape[0]
    big = _is_big(num) or den >= _WORD
    # how many proposals a lane needs on average (a float estimate; only sets the batch size)
    if big:
        weights = np.exp(-np.array([float(Fraction(int(v), den)) for v in num]))
    else:
        weights = np.exp(-num.astype(np.float64) / float(den))
    rate = max(float(weights.mean()), 1e-12)
    out = np.empty(size, dtype=np.int64)
    lanes = np.arange(size)
    while lanes.size:
        per_lane = int(min(max(1.0, np.ceil(2.0 / rate)), max(1, (1 << 20) // lanes.size)))
        proposal = rnd.below(n, lanes.size * per_lane)
        dens = np.full(proposal.size, den, dtype=object if big else np.int64)
        accept = _bernoulli_exp(num[proposal], dens, rnd).reshape(lanes.size, per_lane)
        proposal = proposal.reshape(lanes.size, per_lane)
        hit = accept.any(axis=1)
        first = accept.argmax(axis=1)
        out[lanes[hit]] = proposal[hit, first[hit]]
        lanes = lanes[~hit]
    return out


# --- public API -------------------------------------------------------------------------------


def _size(size: Any) -> int:
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise ParameterError(f"size must be an integer >= 0, got {size!r}")
    return size


def _scale(value: Any, name: str) -> Fraction:
    scale = positive(value, name)
    if abs(floor_log2(scale)) > _MAX_LOG2_SCALE:
        raise ParameterError(
            f"{name} must lie between 2**-{_MAX_LOG2_SCALE} and 2**{_MAX_LOG2_SCALE}, got {value!r}"
        )
    return scale


def bernoulli_exp(gamma: Any, size: int = 1, seed: Any = None) -> np.ndarray:
    """``size`` exact draws of ``Bernoulli(exp(-gamma))``, rational ``gamma >= 0`` (bool array).

    Canonne, Kamath & Steinke (2020), "The discrete Gaussian for differential privacy",
    Algorithm 1 (with the integer part of ``gamma`` as a product of ``Bernoulli(exp(-1))``).
    ``seed``: None for the OS CSPRNG, an int or a ``numpy.random.Generator`` for reproducible
    draws.
    """
    g = exact(gamma, "gamma")
    if g < 0:
        raise ParameterError(f"gamma must be >= 0, got {gamma!r}")
    n = _size(size)
    rnd = as_randomness(seed)
    big = g.numerator >= _WORD or g.denominator >= _WORD
    kind = object if big else np.int64
    return _bernoulli_exp(
        np.full(n, g.numerator, dtype=kind), np.full(n, g.denominator, dtype=kind), rnd
    )


def geometric(scale: Any, size: int = 1, seed: Any = None) -> np.ndarray:
    """``size`` exact draws of ``P(Y = y) = (1 - exp(-1/scale)) exp(-y/scale)``, ``y = 0, 1, ...``.

    The number of failures before the first success when each trial succeeds with probability
    ``1 - exp(-1/scale)``; Canonne, Kamath & Steinke (2020), Algorithm 2 without the sign.
    ``scale`` is a rational in ``[2**-40, 2**40]``.
    """
    s = _scale(scale, "scale")
    n = _size(size)
    rnd = as_randomness(seed)
    out = np.empty(n, dtype=np.int64)
    filled = 0
    while filled < n:
        y = _geometric_batch(s.numerator, s.denominator, 2 * (n - filled) + 16, rnd)
        take = min(y.size, n - filled)
        out[filled : filled + take] = y[:take]
        filled += take
    return out


def discrete_laplace(scale: Any, size: int = 1, seed: Any = None) -> np.ndarray:
    """``size`` exact draws of the discrete Laplace, ``P(Z = z) ∝ exp(-|z| / scale)`` on Z.

    Also called the two-sided geometric distribution (Ghosh, Roughgarden & Sundararajan 2009);
    ``P(Z = z) = (1 - p) / (1 + p) * p**|z|`` with ``p = exp(-1/scale)``. Sampled by Canonne,
    Kamath & Steinke (2020), Algorithm 2. ``scale`` is a rational in ``[2**-40, 2**40]``.
    """
    s = _scale(scale, "scale")
    return _discrete_laplace(s.numerator, s.denominator, _size(size), as_randomness(seed))


def discrete_gaussian(sigma_squared: Any, size: int = 1, seed: Any = None) -> np.ndarray:
    """``size`` exact draws of the discrete Gaussian: ``P(Z = z) ∝ exp(-z**2 / (2 sigma_squared))``.

    Canonne, Kamath & Steinke (2020), Algorithm 3. ``sigma_squared`` (the parameter sigma²,
    not exactly the variance of the discrete distribution) is a rational in
    ``[2**-40, 2**40]``.
    """
    v = _scale(sigma_squared, "sigma_squared")
    return _discrete_gaussian(v.numerator, v.denominator, _size(size), as_randomness(seed))


def exp_weighted_index(gammas: Any, size: int = 1, seed: Any = None) -> np.ndarray:
    """``size`` exact draws of an index ``i`` with ``P(i) ∝ exp(-gammas[i])``, gammas >= 0.

    The selection step of the exponential mechanism (McSherry & Talwar 2007) with
    ``gamma_i = epsilon (max score - score_i) / (2 sensitivity)``; sampled by rejection from the
    uniform proposal with exact ``Bernoulli(exp(-gamma_i))`` acceptance.
    """
    values = [exact(g, "gammas") for g in np.atleast_1d(np.asarray(gammas, dtype=object))]
    if not values:
        raise ParameterError("gammas must hold at least one value")
    if min(values) < 0:
        raise ParameterError("gammas must be >= 0")
    shift = min(values)  # exp(-(g - min)) is proportional to exp(-g)
    den = 1
    for g in values:
        den = lcm(den, g.denominator)
    nums = [int((g - shift) * den) for g in values]
    num = np.array(nums, dtype=object if max(nums) >= _WORD or den >= _WORD else np.int64)
    return _exp_weighted_index(num, den, _size(size), as_randomness(seed))
