"""The (alpha, beta)-algorithm: publish true tuples with probability alpha + beta, every other
domain tuple with probability beta.

V. Rastogi, D. Suciu and S. Hong, "The boundary between privacy and utility in data
publishing", VLDB 2007, Section 4 (the "alpha-beta algorithm"). The instance ``I`` is a set
of tuples over a domain ``D = D_1 x ... x D_m`` (the product of the columns' public value
sets). The published view ``V`` contains

* each tuple of ``I`` independently with probability ``alpha + beta``;
* each tuple of ``D \\ I`` independently with probability ``beta``.

Privacy ((d, gamma)-privacy, Rastogi et al. 2007, Definitions 2.1-2.2): a d-bounded,
tuple-independent adversary has prior ``p = P[t in I] <= d`` for every tuple it is not
certain of; the release is (d, gamma)-private (``d < gamma``) when for every such tuple and
every view ``V``

    (a) P[t in I | V] <= gamma               (no positive disclosure), and
    (b) P[t in I | V] / P[t in I] >= d / gamma   (no negative disclosure).

The view includes each tuple independently, so the posterior of ``t`` depends only on
whether ``t`` is in ``V`` (Bayes' rule):

* ``t`` in ``V``: ``p (alpha + beta) / (p (alpha + beta) + (1 - p) beta)``, increasing in
  ``p``: (a) holds for every ``p <= d`` iff it holds at ``p = d``, i.e. iff

      beta / (alpha + beta) >= d (1 - gamma) / (gamma (1 - d))

  (the paper's privacy condition on beta for the alpha-beta algorithm); its ratio to the
  prior is >= 1 > d / gamma, so (b) holds;
* ``t`` not in ``V``: ``p (1 - alpha - beta) / (p (1 - alpha - beta) + (1 - p) (1 - beta))``
  lowers the belief, so (a) holds; its ratio to the prior decreases to
  ``(1 - alpha - beta) / (1 - beta)`` as ``p -> 0``, so (b) holds for every ``p <= d`` iff

      (1 - alpha - beta) / (1 - beta) >= d / gamma

  (the paper bounds ``alpha + beta`` for this; ``alpha + beta <= 1 - d / gamma`` implies it,
  since ``(1 - alpha - beta) / (1 - beta) >= 1 - alpha - beta``).

:func:`dgamma_privacy` checks both for stated ``d`` and ``gamma``; :attr:`AlphaBeta.details`
records the smallest ``gamma`` the algorithm guarantees for a given ``d``:
``max(d (alpha + beta) / (d (alpha + beta) + (1 - d) beta), d (1 - beta) / (1 - alpha - beta))``
and, with the domain size ``m = |D|`` and the instance size ``n = |I|``, the prior ``n / m``
of an adversary who knows only how many tuples are true and the paper's ``k = d m / n``
(the prior bound as a multiple of ``n / m``; useful releases need ``k`` small, Section 3).
As a randomized response on the membership bit of every domain tuple the view is also
``epsilon``-indistinguishable for instances differing in one tuple (Dwork et al. 2006) with
``epsilon = max(ln((alpha + beta) / beta), ln((1 - beta) / (1 - alpha - beta)))``.

Utility (the paper's estimator, Section 4): a counting query ``Q`` over ``I`` is estimated
from the view as ``(|Q(V)| - beta |Q(D)|) / alpha`` (:meth:`AlphaBeta.estimate_count`).

Efficient sampling: the number of fake tuples is ``Binomial(|D| - |I|, beta)``; they are drawn
uniformly without replacement from ``D \\ I`` on the mixed-radix codes of the domain (first
distinct draws that are not instance codes, i.e. rejection), never enumerating a large
domain (a domain of at most 2**22 tuples is enumerated, which is faster there).

Output size: the view's size is random (about ``(alpha + beta) |I| + beta (|D| - |I|)``), so
:meth:`AlphaBeta.sample` **ignores** ``n``: each call publishes one view of the algorithm
(distinct tuples, sorted by their domain code, so that the order tells nothing about which
tuples are true). Calls with the same seed give the same bytes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from sdckit.errors import DataError, ParameterError
from sdckit.synthesis.base import Synthesizer

__all__ = ["AlphaBeta", "dgamma_privacy"]

#: Domains up to this many tuples are enumerated to draw the fake tuples.
_ENUMERATE = 1 << 22
#: Largest domain (mixed-radix codes must fit 62 bits).
_MAX_DOMAIN = 1 << 62
#: Bytes of memory per cell of the published view at the peak of ``fit`` + ``sample`` (the
#: codes, the rejection draws, the value columns and the DataFrame built from them). Measured:
#: Adult (9 columns, a domain of 6.5e8 tuples), alpha = 0.5, beta = 0.001 and 0.01 (views of
#: 0.66 and 6.5 million tuples): peak resident memory 0.82 and 6.4 GB, i.e. about 950 bytes per
#: tuple, 105 per cell; rounded up.
BYTES_PER_CELL = 110
#: Default memory limit of one view (``max_memory_mb``).
DEFAULT_MAX_MEMORY_MB = 1024
#: Standard deviations above its mean of the view-size bound the memory check uses.
_SIZE_SDS = 6.0


def _probability(value: Any, name: str, *, open_low: bool = True) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ParameterError(f"alpha_beta: parameter {name!r} must be a number, got {value!r}")
    v = float(value)
    if not math.isfinite(v) or not ((0 < v) if open_low else (0 <= v)) or v >= 1:
        raise ParameterError(f"alpha_beta: parameter {name!r} must be in (0, 1), got {value!r}")
    return v


#: Relative slack of the (d, gamma) comparisons (a condition met with equality holds).
_SLACK = 1e-12


def dgamma_privacy(alpha: float, beta: float, d: float, gamma: float) -> dict[str, Any]:
    """Whether the (alpha, beta)-algorithm is (d, gamma)-private (Rastogi, Suciu & Hong 2007,
    Definition 2.2 and the alpha-beta privacy condition; derivation in the module docstring).

    ``0 < alpha``, ``0 < beta``, ``alpha + beta < 1``, ``0 < d < gamma < 1``. Returns
    ``dgamma_private`` (both conditions), ``positive_disclosure`` (the largest posterior,
    ``d (alpha + beta) / (d (alpha + beta) + (1 - d) beta)``, against ``gamma``: condition
    (a)), ``negative_disclosure`` (the smallest posterior-to-prior ratio,
    ``(1 - alpha - beta) / (1 - beta)``, against ``d / gamma``: condition (b)) and
    ``smallest_gamma`` (the least gamma both allow for this ``d``; None when no gamma < 1
    does, i.e. ``d (1 - beta) / (1 - alpha - beta) >= 1``). Raises
    :class:`ParameterError` for values out of range.
    """
    a = _probability(alpha, "alpha")
    b = _probability(beta, "beta")
    if a + b >= 1:
        raise ParameterError(f"alpha_beta: alpha + beta must be < 1, got {a:g} + {b:g}")
    dd = _probability(d, "d")
    g = _probability(gamma, "gamma")
    if not dd < g:
        raise ParameterError(
            f"alpha_beta: (d, gamma)-privacy needs d < gamma (a posterior bound below the "
            f"prior bound cannot hold), got d={dd:g}, gamma={g:g}"
        )
    posterior = dd * (a + b) / (dd * (a + b) + (1 - dd) * b)
    ratio = (1 - a - b) / (1 - b)
    smallest = max(posterior, dd * (1 - b) / (1 - a - b))
    upper_ok = posterior <= g * (1 + _SLACK)
    lower_ok = ratio >= (dd / g) * (1 - _SLACK)
    return {
        "d": dd,
        "gamma": g,
        "dgamma_private": bool(upper_ok and lower_ok),
        "positive_disclosure": {
            "condition": "beta / (alpha + beta) >= d (1 - gamma) / (gamma (1 - d))",
            "largest_posterior": posterior,
            "bound": g,
            "holds": bool(upper_ok),
        },
        "negative_disclosure": {
            "condition": "(1 - alpha - beta) / (1 - beta) >= d / gamma",
            "smallest_posterior_over_prior": ratio,
            "bound": dd / g,
            "holds": bool(lower_ok),
        },
        "smallest_gamma": smallest if smallest < 1 else None,
        "source": "Rastogi, Suciu & Hong 2007, Definition 2.2; alpha-beta privacy condition",
    }


class AlphaBeta(Synthesizer):
    """The (alpha, beta)-algorithm of Rastogi, Suciu & Hong (2007) (module docstring).

    Parameters
    ----------
    alpha, beta : float
        ``0 < alpha``, ``0 < beta``, ``alpha + beta < 1``: a true tuple is published with
        probability ``alpha + beta``, any other domain tuple with probability ``beta``.
    domain : mapping column -> values, optional
        The public value set of each column; the domain is their product. Columns not named
        take the values seen in the data (recorded in :attr:`details`).
    d : float, optional
        The adversary's prior bound for the (d, gamma)-privacy statement in :attr:`details`.
    gamma : float, optional
        The posterior bound to check with ``d`` (:func:`dgamma_privacy`): ``details``
        then say whether the release is (d, gamma)-private (``d`` is required with it).
    max_memory_mb : int, optional
        The memory one view may take (default :data:`DEFAULT_MAX_MEMORY_MB`). ``fit``
        computes the view's size from the domain before drawing anything
        (:meth:`memory_estimate`) and refuses parameters whose view would need more, with the
        estimate and the largest ``beta`` that fits.

    ``fit`` records the distinct tuples (the instance ``I``); ``sample`` publishes one view
    (``n`` is ignored: the algorithm's output size is random).
    """

    name = "alpha_beta"

    def __init__(
        self,
        alpha: float,
        beta: float,
        *,
        domain: Mapping[str, Sequence[Any]] | None = None,
        d: float | None = None,
        gamma: float | None = None,
        max_memory_mb: int = DEFAULT_MAX_MEMORY_MB,
    ) -> None:
        super().__init__()
        from sdckit.core.params import integer_at_least

        integer_at_least(max_memory_mb, 1, "alpha_beta", "max_memory_mb")
        self.max_memory_mb = int(max_memory_mb)
        self.alpha = _probability(alpha, "alpha")
        self.beta = _probability(beta, "beta")
        if self.alpha + self.beta >= 1:
            raise ParameterError(
                f"alpha_beta: alpha + beta must be < 1, got {self.alpha:g} + {self.beta:g}"
            )
        if domain is not None and not isinstance(domain, Mapping):
            raise ParameterError(
                f"alpha_beta: parameter 'domain' must map columns to value lists, got "
                f"{type(domain).__name__}"
            )
        self.domain_given = dict(domain) if domain is not None else {}
        self.d = None if d is None else _probability(d, "d")
        self.gamma = None if gamma is None else _probability(gamma, "gamma")
        if self.gamma is not None:
            if self.d is None:
                raise ParameterError(
                    "alpha_beta: parameter 'gamma' needs 'd', the adversary's prior bound "
                    "(e.g. options: {alpha: 0.5, beta: 0.01, d: 0.05, gamma: 0.5})"
                )
            dgamma_privacy(self.alpha, self.beta, self.d, self.gamma)  # validates d < gamma
        self._values: list[np.ndarray] = []
        self._radix: np.ndarray | None = None
        self._instance: np.ndarray | None = None  # sorted distinct codes of the instance
        self._size = 0

    # -- the guarantee -------------------------------------------------------------------
    def guarantee(self, d: float | None = None, gamma: float | None = None) -> dict[str, Any]:
        """The privacy statements (module docstring): the (d, gamma) conditions, the smallest
        gamma for ``d`` (default: the ``d`` given to the constructor), with ``gamma`` (default:
        the constructor's) the verdict of :func:`dgamma_privacy` (``dgamma``), after ``fit``
        the uniform prior ``n / m`` and the paper's ``k = d m / n``, and the epsilon of the
        membership randomized response."""
        a, b = self.alpha, self.beta
        out: dict[str, Any] = {
            "condition": "(d, gamma)-private iff beta / (alpha + beta) >= "
            "d (1 - gamma) / (gamma (1 - d)) and (1 - alpha - beta) / (1 - beta) >= d / gamma "
            "(Rastogi, Suciu & Hong 2007, Definition 2.2, Section 4)",
            "beta_over_alpha_plus_beta": b / (a + b),
            "epsilon": max(math.log((a + b) / b), math.log((1 - b) / (1 - a - b))),
        }
        d = self.d if d is None else _probability(d, "d")
        gamma = self.gamma if gamma is None else _probability(gamma, "gamma")
        if self._size and self._instance is not None:
            out["uniform_prior"] = len(self._instance) / self._size
        if d is not None:
            out["d"] = d
            least = max(d * (a + b) / (d * (a + b) + (1 - d) * b), d * (1 - b) / (1 - a - b))
            out["gamma"] = least if least < 1 else None
            if "uniform_prior" in out:
                out["k"] = d / out["uniform_prior"]
            if gamma is not None:
                out["dgamma"] = dgamma_privacy(a, b, d, gamma)
        elif gamma is not None:
            raise ParameterError("alpha_beta: checking gamma needs the prior bound d")
        return out

    def memory_estimate(self, domain_tuples: int, instance_tuples: int, columns: int) -> dict:
        """The view's size and memory, from the domain alone (nothing drawn): the expected
        size ``(alpha + beta) |I| + beta (|D| - |I|)``, a bound ``_SIZE_SDS`` binomial
        standard deviations above it (the fake tuples are ``Binomial(|D| - |I|, beta)``),
        the bound times ``columns`` times :data:`BYTES_PER_CELL`, and the largest ``beta``
        whose bound fits ``max_memory_mb``."""
        a, b = self.alpha, self.beta
        free = domain_tuples - instance_tuples
        expected = (a + b) * instance_tuples + b * free
        bound = expected + _SIZE_SDS * math.sqrt(free * b * (1 - b))
        per_tuple = BYTES_PER_CELL * max(columns, 1)
        limit = self.max_memory_mb * 2**20
        # largest beta with instance + beta free + sds sqrt(free beta) <= limit / per_tuple
        room = limit / per_tuple - instance_tuples
        if room <= 0 or free <= 0:
            beta_max = 0.0
        else:
            root = (-_SIZE_SDS + math.sqrt(_SIZE_SDS**2 + 4 * room)) / 2  # sqrt(free beta)
            beta_max = min(root * root / free, 1.0)
        return {
            "expected_view_size": expected,
            "view_size_bound": bound,
            "bytes": bound * per_tuple,
            "max_memory_mb": self.max_memory_mb,
            "beta_max": beta_max,
        }

    # -- fit / sample --------------------------------------------------------------------
    def _fit(self, data: pd.DataFrame, rng: np.random.Generator) -> None:
        del rng  # fitting is deterministic: the randomness is the published view's
        unknown = [c for c in self.domain_given if c not in data.columns]
        if unknown:
            raise ParameterError(
                f"alpha_beta: parameter 'domain' names column(s) {unknown} that the data lacks"
            )
        values, codes, source = [], [], {}
        for c in data.columns:
            col = data[c]
            if col.isna().any():
                raise DataError(
                    f"alpha_beta: column {c!r} has missing values; the domain is a product of "
                    "value sets: fill or drop them first"
                )
            if c in self.domain_given:
                vals = pd.Index(pd.unique(pd.Series(list(self.domain_given[c]), dtype=object)))
                source[c] = "given"
            else:
                vals = pd.Index(np.sort(pd.unique(col.to_numpy())))
                source[c] = "data"
            if len(vals) == 0:
                raise ParameterError(f"alpha_beta: the domain of column {c!r} is empty")
            code = vals.get_indexer(col.astype(object) if source[c] == "given" else col)
            if (code < 0).any():
                bad = col[code < 0].iloc[0]
                raise DataError(
                    f"alpha_beta: column {c!r} holds {bad!r}, which is not in its domain"
                )
            values.append(np.asarray(vals, dtype=object))
            codes.append(code.astype(np.int64))
        sizes = [len(v) for v in values]
        size = math.prod(sizes)
        if size >= _MAX_DOMAIN:
            raise ParameterError(
                f"alpha_beta: the domain has {size:.3g} tuples, more than 2**62; use fewer "
                "columns or coarser value sets"
            )
        radix = np.ones(len(sizes), dtype=np.int64)
        for i in range(len(sizes) - 2, -1, -1):
            radix[i] = radix[i + 1] * sizes[i + 1]
        instance = np.unique(np.stack(codes, axis=1) @ radix if codes else np.zeros(0))
        memory = self.memory_estimate(size, len(instance), len(sizes))
        expected = memory["expected_view_size"]
        if memory["bytes"] > self.max_memory_mb * 2**20:
            raise ParameterError(
                f"alpha_beta: the view would hold about {expected:,.0f} tuples (beta={self.beta:g}"
                f" times a domain of {size:,} tuples = "
                + " x ".join(f"{c} {n}" for c, n in zip(data.columns, sizes, strict=True))
                + f"), about {memory['bytes'] / 2**30:.2g} GB in memory, over the limit "
                f"max_memory_mb={self.max_memory_mb}; nothing was drawn. Lower beta to at most "
                f"{memory['beta_max']:.3g}, declare smaller value sets (`domain:`) or fewer "
                "columns (`columns:`), or raise max_memory_mb if the machine has the memory"
            )
        self._values, self._radix, self._instance, self._size = values, radix, instance, size
        self.details = {
            "alpha": self.alpha,
            "beta": self.beta,
            "domain_sizes": dict(zip(data.columns, sizes, strict=True)),
            "domain_source": source,
            "domain_tuples": size,
            "instance_tuples": int(len(instance)),
            "expected_view_size": expected,
            "memory_estimate_mb": memory["bytes"] / 2**20,
            "max_memory_mb": self.max_memory_mb,
            "guarantee": self.guarantee(),
            "sample_n": "ignored: each sample() publishes one view of random size",
        }

    def _fakes(self, count: int, rng: np.random.Generator) -> np.ndarray:
        """``count`` distinct codes drawn uniformly from the domain minus the instance."""
        assert self._instance is not None
        inst = self._instance
        if count == 0:
            return np.zeros(0, dtype=np.int64)
        if self._size <= _ENUMERATE:
            rest = np.setdiff1d(np.arange(self._size, dtype=np.int64), inst, assume_unique=True)
            return rng.choice(rest, size=count, replace=False)
        free = self._size - len(inst)
        seq = np.zeros(0, dtype=np.int64)
        while len(seq) < count:
            need = count - len(seq)
            batch = int(need * self._size / max(free - len(seq), 1) * 1.1) + 16
            draw = rng.integers(0, self._size, size=batch, dtype=np.int64)
            pos = np.searchsorted(inst, draw)
            hit = (pos < len(inst)) & (inst[np.minimum(pos, len(inst) - 1)] == draw)
            seq = np.concatenate([seq, draw[~hit]])
            _, first = np.unique(seq, return_index=True)  # first draws of each code, in order
            seq = seq[np.sort(first)]
        return seq[:count]

    def _sample(self, n: int, rng: np.random.Generator) -> pd.DataFrame:
        """One published view (``n`` is ignored: module docstring)."""
        del n
        assert self._instance is not None and self._radix is not None
        inst = self._instance
        keep = rng.random(len(inst)) < self.alpha + self.beta
        fakes = self._fakes(int(rng.binomial(self._size - len(inst), self.beta)), rng)
        codes = np.sort(np.concatenate([inst[keep], fakes]))
        self.details["last_view"] = {
            "instance_tuples_kept": int(keep.sum()),
            "fake_tuples": int(len(fakes)),
            "size": int(len(codes)),
        }
        assert self._original is not None
        out = {}
        for i, c in enumerate(self._original.columns):
            digit = (codes // self._radix[i]) % len(self._values[i])
            out[c] = self._values[i][digit]
        return pd.DataFrame(out, columns=self._original.columns)

    def estimate_count(self, view_count: float, domain_count: float) -> float:
        """The paper's unbiased estimate of a counting query over the instance:
        ``(|Q(V)| - beta |Q(D)|) / alpha`` (Rastogi et al. 2007, Section 4), from the query's
        count in the view and the number of domain tuples it selects."""
        return (float(view_count) - self.beta * float(domain_count)) / self.alpha
