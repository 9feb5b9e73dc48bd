"""Where the random bits of the DP samplers come from.

By default a cryptographically secure generator: the operating system's CSPRNG read through
:func:`os.urandom` (the source behind :mod:`secrets`). A seeded ``numpy.random.Generator`` is used
only when the caller asks for one (``seed=`` an int or a Generator), for tests and reproducible
research; a release records which (``randomness`` is ``"csprng"`` or ``"seeded"``), since a
seeded release is only as private as its seed is secret.

The samplers need nothing but exact uniform integers: :meth:`Randomness.below` draws, for each
lane, an integer uniform on ``{0, ..., n-1}``. The CSPRNG path masks 64-bit words from
``os.urandom`` to the bit length of ``n - 1`` and rejects values ``>= n`` (exact; each round
accepts with probability above 1/2); the seeded path uses ``Generator.integers``, which is
unbiased. No floating-point number is ever drawn.

**Releases made from a job** (synthesis, anonymization) take their privacy noise from
:func:`noise_source`: the OS CSPRNG whatever the job's ``seed`` says, because a job file is
shared (the workbench exports it next to the release) and anyone holding a seed regenerates
the noise and subtracts it. The seed still fixes what is not privacy noise (e.g. sampling
records from a fitted DP model, which is post-processing). Only the switch
``insecure_reproducible_noise=True`` -- for tests -- draws the noise from the seed, and the
release then states that it is not private (:data:`INSECURE_KIND`).
"""

from __future__ import annotations

import os
import random
import secrets
from numbers import Integral
from typing import Any, TypeAlias

import numpy as np

from sdckit.errors import ParameterError, short_repr

#: The random source a call may be given: None (CSPRNG), an int seed, a numpy Generator, or a
#: :class:`Randomness` already made (e.g. by :func:`noise_source`), passed through unchanged.
Seed: TypeAlias = "int | np.random.Generator | Randomness | None"

_WORD = 1 << 63
#: :attr:`Randomness.kind` of noise drawn from a job's seed by ``insecure_reproducible_noise``.
INSECURE_KIND = "insecure_reproducible_noise"
#: What a release made with :data:`INSECURE_KIND` noise says about itself.
NOT_PRIVATE = (
    "NOT PRIVATE: the privacy noise was drawn from the seed (insecure_reproducible_noise: "
    "true); anyone holding the seed or the job file regenerates the noise and removes it"
)


def _bit_lengths(values: np.ndarray) -> np.ndarray:
    """Bit length of each non-negative int64 (0 for 0), exact."""
    _, exponent = np.frexp(values.astype(np.float64))
    exponent = exponent.astype(np.int64)
    # float64 may have rounded values up to the next power of two: correct by one there
    too_long = (exponent > 0) & ((values >> np.maximum(exponent - 1, 0)) == 0)
    return exponent - too_long


class Randomness:
    """A source of exact uniform integers: the OS CSPRNG, or a seeded numpy Generator.

    ``Randomness(None)`` reads ``os.urandom``; ``Randomness(7)`` or
    ``Randomness(numpy.random.default_rng(7))`` is seeded and reproducible. :attr:`kind` is
    ``"csprng"`` or ``"seeded"``.
    """

    __slots__ = ("_rng", "_scalar", "kind")

    def __init__(self, seed: int | np.random.Generator | None = None) -> None:
        self._rng: np.random.Generator | None
        self._scalar: random.Random | None = None
        if seed is None:
            self._rng, self.kind = None, "csprng"
        elif isinstance(seed, np.random.Generator):
            self._rng, self.kind = seed, "seeded"
        elif isinstance(seed, Integral) and not isinstance(seed, bool) and int(seed) >= 0:
            self._rng, self.kind = np.random.default_rng(int(seed)), "seeded"
        else:
            raise ParameterError(
                "seed must be None (cryptographically secure randomness, the default), an "
                f"int >= 0 or a numpy.random.Generator; got {short_repr(seed)}"
            )

    def below(self, n: int | np.ndarray, size: int) -> np.ndarray:
        """``size`` independent integers, lane ``i`` uniform on ``{0, ..., n_i - 1}`` (int64).

        ``n`` is one int or an int64 array of ``size`` values, each ``>= 1``. A Python int
        ``n >= 2**63`` is served one draw at a time (exact, slower).
        """
        if isinstance(n, int):
            if n >= _WORD:
                return np.array([self.below_int(n) for _ in range(size)], dtype=object)
            bound = np.full(size, n, dtype=np.int64)
        else:
            bound = np.asarray(n, dtype=np.int64)
        if size == 0:
            return np.zeros(0, dtype=np.int64)
        if self._rng is not None:
            return self._rng.integers(0, bound, dtype=np.int64)
        low, high = int(bound.min()), int(bound.max())
        if low == high:
            return self._urandom_below(low, size)
        out = np.empty(size, dtype=np.int64)
        shift = (64 - np.maximum(_bit_lengths(bound - 1), 1)).astype(np.uint64)
        pending = np.arange(size)
        while pending.size:
            words = np.frombuffer(os.urandom(8 * pending.size), dtype=np.uint64)
            candidate = (words >> shift[pending]).astype(np.int64)
            accepted = candidate < bound[pending]
            out[pending[accepted]] = candidate[accepted]
            pending = pending[~accepted]
        return out

    @staticmethod
    def _urandom_below(n: int, size: int) -> np.ndarray:
        """``size`` integers uniform on ``{0..n-1}`` from os.urandom (masked rejection, batched)."""
        bits = max((n - 1).bit_length(), 1)
        shift = np.uint64(64 - bits)
        acceptance = n / float(1 << bits)  # >= 1/2; only sizes the batch
        out = np.empty(size, dtype=np.int64)
        filled = 0
        while filled < size:
            need = size - filled
            batch = need if acceptance == 1.0 else int(need / acceptance * 1.05) + 16
            words = np.frombuffer(os.urandom(8 * batch), dtype=np.uint64)
            candidate = (words >> shift).astype(np.int64)
            candidate = candidate[candidate < n][:need]
            out[filled : filled + candidate.size] = candidate
            filled += candidate.size
        return out

    def bits62(self, size: int) -> np.ndarray:
        """``size`` integers uniform on ``{0, ..., 2**62 - 1}`` (int64)."""
        if self._rng is not None:
            return self._rng.integers(0, 1 << 62, size=size, dtype=np.int64)
        words = np.frombuffer(os.urandom(8 * size), dtype=np.uint64)
        return (words >> np.uint64(2)).astype(np.int64)

    def below_int(self, n: int) -> int:
        """One integer uniform on ``{0, ..., n - 1}`` for any Python int ``n >= 1``.

        CSPRNG: :func:`secrets.randbelow`. Seeded: :meth:`random.Random.randrange` of a
        generator seeded once from the numpy Generator (fast for one draw at a time).
        """
        if self._rng is None:
            return secrets.randbelow(n)
        if self._scalar is None:
            # one-at-a-time draws of the seeded case: a Mersenne Twister seeded from the numpy
            # generator (reproducible; randrange is exact: rejection on random bits)
            self._scalar = random.Random(int(self._rng.integers(0, 1 << 63)))
        return self._scalar.randrange(n)

    def __repr__(self) -> str:
        return f"Randomness({self.kind})"


def noise_source(seed: Seed, *, insecure_reproducible_noise: bool = False) -> Randomness:
    """The random source of the privacy noise of a release made from a job or an API call
    that also takes a ``seed`` for other purposes (module docstring).

    The OS CSPRNG whatever ``seed`` is. With ``insecure_reproducible_noise=True`` (tests
    only) the noise is drawn from ``seed`` (which must then be given) and the source's
    :attr:`~Randomness.kind` is :data:`INSECURE_KIND`, so the release can say it is not private.
    """
    if not isinstance(insecure_reproducible_noise, bool):
        raise ParameterError(
            "insecure_reproducible_noise must be true or false, got "
            f"{short_repr(insecure_reproducible_noise)}"
        )
    if not insecure_reproducible_noise:
        return Randomness(None)
    if seed is None or isinstance(seed, Randomness):
        raise ParameterError(
            "insecure_reproducible_noise: true needs a seed to reproduce the noise from; give "
            "`seed:` (or drop the switch: the noise then comes from the OS CSPRNG)"
        )
    rnd = Randomness(seed)
    rnd.kind = INSECURE_KIND
    return rnd


def as_randomness(seed: Any) -> Randomness:
    """``seed`` as a :class:`Randomness` (a Randomness is passed through unchanged)."""
    return seed if isinstance(seed, Randomness) else Randomness(seed)
