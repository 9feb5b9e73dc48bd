"""Bounded queries: COUNT, SUM, AVG, quantiles and histograms with sensitivity from declared bounds.

Neighbouring datasets differ by adding or removing **one person** (unbounded DP, Dwork & Roth
2014, sec. 2.3). What one person can change is bounded by declarations, never by the data:

* every value is **clamped** to the declared ``[lower, upper]``;
* a person contributes at most ``max_contributions`` records (``m``, default 1): with
  ``persons`` (one identifier per record) the records beyond a person's first ``m`` are
  dropped -- a transformation that touches only that person's records; without ``persons``
  each record is taken to be a different person, or the caller declares that nobody has more
  than ``m`` records.

Sensitivities under add/remove-one-person (L1 = L2 for a scalar):

* COUNT of records: ``m``;
* SUM of clamped values: ``m * max(|lower|, |upper|)``. Values are first rounded to a grid of
  step ``granularity`` (a power of two, default the largest ``<= max(|lower|, |upper|) / 2**20``);
  a clamped, rounded value lies in ``[round(lower), round(upper)]``, so the sum of grid values is
  an exact integer of sensitivity ``m * max(|round(lower)|, |round(upper)|)`` grid steps. No
  floating-point sum is involved (the floating-point sensitivity pitfall of Casacuberta,
  Shoemate, Vadhan & Wagaman 2022 cannot arise);
* HISTOGRAM over declared categories or bins: L1 ``m`` (each record lands in one cell), L2
  ``m`` (all of a person's records may land in the same cell); values outside the declared
  domain are not counted;
* AVG = noisy SUM / noisy COUNT with the budget split in halves (Li, Lyu, Su & Yang 2016,
  *Differential Privacy: From Theory to Practice*), the ratio clamped to
  ``[lower, upper]`` (post-processing);
* QUANTILE: the exponential mechanism over the intervals between the sorted data (Smith 2011,
  "Privacy-preserving statistical estimation with optimal convergence rates", STOC;
  :mod:`sdckit.dp.quantile`): score ``u(c) = -|b #{x <= c} - a n|`` for ``q = a/b``, whose
  sensitivity is ``m max(a, b - a)`` (a record moves the inner term by ``a - b`` or ``a``).

A :class:`BoundedQuery` holds the exact answer (never to be published) and its sensitivity;
:func:`release` adds noise to it. The ``dp_*`` functions do both. Laplace-type noise is the
discrete Laplace in grid units (:mod:`sdckit.dp.mechanisms`): on the integers for counts, on
the grid for sums -- the seed example's ``Lap(0, Δf/ε)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Literal

import numpy as np
import pandas as pd

from sdckit.core.encoding import MISSING_TEXT, as_text, encode
from sdckit.dp._numbers import (
    dyadic_at_most,
    exact,
    finite_array,
    floor_log2,
    grid_step,
    positive,
    positive_integer,
    power_of_two_at_most,
    round_to_grid,
)
from sdckit.dp.accountant import Accountant, PrivacyCost
from sdckit.dp.mechanisms import (
    gaussian_budget,
    gaussian_noise,
    gaussian_sigma2,
    laplace_noise,
    laplace_scale,
)
from sdckit.dp.quantile import grid_ends, grid_for, grid_value, intervals, sample_points, to_grid
from sdckit.dp.randomness import Randomness, Seed
from sdckit.dp.release import Release, start
from sdckit.errors import DataError, ParameterError, short_repr

__all__ = [
    "BoundedQuery",
    "count_query",
    "sum_query",
    "histogram_query",
    "release",
    "dp_count",
    "dp_sum",
    "dp_mean",
    "dp_histogram",
    "dp_quantile",
]

Mechanism = Literal["laplace", "gaussian"]
#: Default grid for sums: this many steps per unit of ``max(|lower|, |upper|)``.
SUM_STEPS = 1 << 20
_CHUNK = 1 << 20


@dataclass(frozen=True)
class BoundedQuery:
    """An exact query answer on a grid, with its sensitivity from declared bounds.

    ``grid_value``: the exact answer in grid units (int64 array; one value for COUNT/SUM, one
    per cell for a histogram, one per coordinate for a vector query without labels);
    ``granularity``: the grid step (1 for counts); ``sensitivity``: L1 sensitivity in grid units
    under add/remove one person; ``l2_sensitivity``: L2, in grid units; ``labels``: the cells of
    a histogram. :attr:`exact_value` is the unprotected answer: for tests and audits, **never
    publish it**.
    """

    kind: str
    grid_value: np.ndarray
    granularity: Fraction
    sensitivity: int
    l2_sensitivity: int
    labels: tuple[Any, ...] | None = None

    @property
    def exact_value(self) -> Any:
        """The unprotected answer (a Fraction; a float array for several cells): never publish."""
        if self.grid_value.size == 1 and self.labels is None:
            return int(self.grid_value[0]) * self.granularity
        return self.grid_value.astype(np.float64) * float(self.granularity)

    @property
    def sensitivity_value(self) -> Fraction:
        """The L1 sensitivity in the units of the answer (grid steps times the step)."""
        return self.sensitivity * self.granularity


# --- building queries ------------------------------------------------------------------------


def _kept(n: int, persons: Any, max_contributions: Any, name: str) -> tuple[np.ndarray, int]:
    """Mask of the records kept (a person's first ``m``) and ``m``."""
    m = positive_integer(max_contributions, f"{name}: max_contributions")
    if persons is None:
        return np.ones(n, dtype=bool), m
    ids = pd.Series(np.asarray(persons, dtype=object) if np.ndim(persons) else [persons])
    if len(ids) != n:
        raise DataError(f"{name}: persons has {len(ids)} identifiers for {n} records")
    if ids.isna().any():
        raise DataError(f"{name}: persons has missing identifiers; every record needs a person")
    return (ids.groupby(ids, sort=False).cumcount() < m).to_numpy(), m


def _length(values: Any, name: str) -> int:
    try:
        return len(values)
    except TypeError:
        raise DataError(
            f"{name}: values must be a sequence of records, got {short_repr(values)}"
        ) from None


def count_query(values: Any, *, persons: Any = None, max_contributions: int = 1) -> BoundedQuery:
    """COUNT of records (a sequence, Series or DataFrame), sensitivity ``max_contributions``."""
    n = _length(values, "count")
    keep, m = _kept(n, persons, max_contributions, "count")
    return BoundedQuery("count", np.array([int(keep.sum())], dtype=np.int64), Fraction(1), m, m)


def _bounds(lower: Any, upper: Any, name: str) -> tuple[Fraction, Fraction]:
    lo, hi = exact(lower, f"{name}: lower"), exact(upper, f"{name}: upper")
    if not lo < hi:
        raise ParameterError(f"{name}: lower ({lower!r}) must be smaller than upper ({upper!r})")
    return lo, hi


def _sum_grid(
    values: Any, lower: Any, upper: Any, granularity: Any, name: str
) -> tuple[np.ndarray, Fraction, int, int]:
    lo, hi = _bounds(lower, upper, name)
    if granularity is None:
        step = power_of_two_at_most(max(abs(lo), abs(hi)) / SUM_STEPS)
    else:
        step = grid_step(granularity, f"{name}: granularity")
    x = finite_array(values, f"{name}: values") if np.size(values) else np.zeros(0)
    bounds = round_to_grid(np.array([float(lo), float(hi)]), step, f"{name}: bounds")
    grid = np.clip(round_to_grid(np.clip(x, float(lo), float(hi)), step, name), *bounds)
    return grid, step, int(bounds[0]), int(bounds[1])


def _exact_sum(grid: np.ndarray) -> int:
    """Sum of int64 grid values without overflow (int64 chunks, added as Python ints)."""
    return sum(int(grid[i : i + _CHUNK].sum()) for i in range(0, grid.size, _CHUNK))


def sum_query(
    values: Any,
    lower: Any,
    upper: Any,
    *,
    persons: Any = None,
    max_contributions: int = 1,
    granularity: Any = None,
) -> BoundedQuery:
    """SUM of values clamped to ``[lower, upper]``, on a grid; sensitivity ``m max(|lo|, |hi|)``.

    See the module docstring for the grid and the sensitivity argument; ``granularity`` (a
    power of two) defaults to the largest ``<= max(|lower|, |upper|) / 2**20``.
    """
    grid, step, lo, hi = _sum_grid(values, lower, upper, granularity, "sum")
    keep, m = _kept(grid.size, persons, max_contributions, "sum")
    total = _exact_sum(grid[keep])
    sens = m * max(abs(lo), abs(hi))
    if abs(total) >= 1 << 62:
        raise DataError("sum: the sum is too large for the grid; choose a coarser granularity")
    return BoundedQuery("sum", np.array([total], dtype=np.int64), step, sens, sens)


def _category_codes(values: Any, categories: list[Any]) -> np.ndarray:
    """Per record, the index of its category in ``categories`` (-1: none, or missing).

    The column is dictionary-encoded once by the engine's encoder
    (:func:`sdckit.core.encoding.encode`: Arrow's ``dictionary_encode`` or ``pd.factorize``) and
    only its distinct values are looked up, matched to the categories by their text form
    (:func:`sdckit.core.encoding.as_text`: ``1``, ``1.0`` and ``"1"`` are the same category).
    """
    if isinstance(values, pd.DataFrame):
        raise DataError("histogram: values must be one column, got a DataFrame")
    series = values if isinstance(values, pd.Series) else pd.Series(values)
    texts = as_text(pd.Series(categories, dtype=object))
    if len(set(texts)) != len(texts):
        raise ParameterError(
            "histogram: categories must be distinct as text (e.g. 1 and '1' are the same)"
        )
    encoded = encode(series, sort=False)
    codes = pd.Index(texts).get_indexer(encoded.values)[encoded.codes]
    if MISSING_TEXT in set(texts):  # a missing value's text is "": it is in no category
        codes[series.isna().to_numpy()] = -1
    return codes


def histogram_query(
    values: Any,
    categories: Sequence[Any] | None = None,
    *,
    bins: Sequence[float] | None = None,
    persons: Any = None,
    max_contributions: int = 1,
) -> BoundedQuery:
    """Counts per declared category (or per bin of declared ``bins`` edges), sensitivity ``m``.

    Exactly one of ``categories`` and ``bins`` is given; both are part of the query, not taken
    from the data. Values outside them, and missing values, are not counted; a value is in a
    category when their text forms are equal (:func:`_category_codes`). Bins follow
    :func:`numpy.histogram` (the last bin includes its right edge).
    """
    if (categories is None) == (bins is None):
        raise ParameterError("histogram: give either categories or bins (edges)")
    n = _length(values, "histogram")
    keep, m = _kept(n, persons, max_contributions, "histogram")
    if categories is not None:
        cats = list(categories)
        if not cats or len(set(cats)) != len(cats):
            raise ParameterError(
                "histogram: categories must be a non-empty list of distinct values"
            )
        codes = _category_codes(values, cats)[keep]
        counts = np.bincount(codes[codes >= 0], minlength=len(cats)).astype(np.int64)
        labels: tuple[Any, ...] = tuple(cats)
    else:
        edges = finite_array(bins, "histogram: bins")
        if edges.size < 2 or np.any(np.diff(edges) <= 0):
            raise ParameterError("histogram: bins must be at least 2 strictly increasing edges")
        x = finite_array(values, "histogram: values") if n else np.zeros(0)
        counts = np.histogram(x[keep], bins=edges)[0].astype(np.int64)
        labels = tuple(
            f"[{a:g}, {b:g}{']' if i == edges.size - 2 else ')'}"
            for i, (a, b) in enumerate(zip(edges[:-1], edges[1:], strict=True))
        )
    return BoundedQuery("histogram", counts, Fraction(1), m, m, labels)


# --- releasing -------------------------------------------------------------------------------


def _plan(
    mechanism: Any, epsilon: Any, rho: Any, delta: Any, name: str
) -> tuple[str, Fraction, PrivacyCost]:
    """The mechanism, its budget parameter (epsilon, or rho) and its cost."""
    if mechanism == "laplace":
        if rho is not None or delta is not None:
            raise ParameterError(f"{name}: the Laplace mechanism takes epsilon only (pure DP)")
        if epsilon is None:
            raise ParameterError(f"{name}: give epsilon (e.g. epsilon=1.0)")
        eps = positive(epsilon, f"{name}: epsilon")
        return "laplace", eps, PrivacyCost.pure(float(eps))
    if mechanism == "gaussian":
        r, cost = gaussian_budget(rho, epsilon, delta, name=name)
        return "gaussian", r, cost
    raise ParameterError(f"{name}: mechanism must be 'laplace' or 'gaussian', got {mechanism!r}")


def _noisy(
    query: BoundedQuery, kind: str, budget: Fraction, rnd: Randomness
) -> tuple[np.ndarray, dict[str, Any]]:
    """The noisy grid answer of ``query`` with the whole ``budget`` (epsilon, or rho)."""
    size = query.grid_value.size
    step = query.granularity
    if kind == "laplace":
        scale = Fraction(query.sensitivity) / budget
        noise = laplace_noise(size, scale, rnd)
        info = {"scale": float(laplace_scale(scale) * step)}
    else:
        sigma2 = Fraction(query.l2_sensitivity) ** 2 / (2 * budget)
        noise = gaussian_noise(size, sigma2, rnd)
        info = {"sigma": float(gaussian_sigma2(sigma2)) ** 0.5 * float(step)}
    info.update(sensitivity=float(query.sensitivity_value), granularity=float(step))
    return query.grid_value + noise, info


def _publish(query: BoundedQuery, noisy: np.ndarray) -> Any:
    if query.granularity == 1:
        values: Any = noisy
    else:
        values = np.ldexp(noisy.astype(np.float64), floor_log2(query.granularity))
    if query.labels is not None:
        return pd.Series(values, index=list(query.labels), name=query.kind)
    return values[0].item() if values.size == 1 else values


def release(
    query: BoundedQuery,
    *,
    epsilon: Any = None,
    rho: Any = None,
    delta: Any = None,
    mechanism: Mechanism = "laplace",
    accountant: Accountant | None = None,
    seed: Seed = None,
) -> Release:
    """A DP release of a :class:`BoundedQuery`: its exact grid answer plus calibrated noise.

    ``mechanism="laplace"`` (epsilon-DP, discrete Laplace of scale ``sensitivity / epsilon``)
    or ``"gaussian"`` (rho-zCDP, discrete Gaussian with ``sigma² = l2_sensitivity² / (2 rho)``;
    give rho, or epsilon and delta). A histogram's value is a Series indexed by its cells.
    """
    if not isinstance(query, BoundedQuery):
        raise ParameterError(f"release: query must be a BoundedQuery, got {short_repr(query)}")
    kind, budget, cost = _plan(mechanism, epsilon, rho, delta, query.kind)
    rnd = start(query.kind, cost, accountant, seed)
    noisy, info = _noisy(query, kind, budget, rnd)
    return Release(_publish(query, noisy), f"{query.kind}/{kind}", cost, rnd.kind, info)


def dp_count(
    values: Any,
    epsilon: Any = None,
    *,
    persons: Any = None,
    max_contributions: int = 1,
    mechanism: Mechanism = "laplace",
    rho: Any = None,
    delta: Any = None,
    accountant: Accountant | None = None,
    seed: Seed = None,
) -> Release:
    """DP COUNT of records (:func:`count_query` then :func:`release`)."""
    query = count_query(values, persons=persons, max_contributions=max_contributions)
    return release(
        query,
        epsilon=epsilon,
        rho=rho,
        delta=delta,
        mechanism=mechanism,
        accountant=accountant,
        seed=seed,
    )


def dp_sum(
    values: Any,
    lower: Any,
    upper: Any,
    epsilon: Any = None,
    *,
    persons: Any = None,
    max_contributions: int = 1,
    granularity: Any = None,
    mechanism: Mechanism = "laplace",
    rho: Any = None,
    delta: Any = None,
    accountant: Accountant | None = None,
    seed: Seed = None,
) -> Release:
    """DP SUM of values clamped to ``[lower, upper]`` (:func:`sum_query` then :func:`release`)."""
    query = sum_query(
        values,
        lower,
        upper,
        persons=persons,
        max_contributions=max_contributions,
        granularity=granularity,
    )
    return release(
        query,
        epsilon=epsilon,
        rho=rho,
        delta=delta,
        mechanism=mechanism,
        accountant=accountant,
        seed=seed,
    )


def dp_histogram(
    values: Any,
    epsilon: Any = None,
    *,
    categories: Sequence[Any] | None = None,
    bins: Sequence[float] | None = None,
    persons: Any = None,
    max_contributions: int = 1,
    mechanism: Mechanism = "laplace",
    rho: Any = None,
    delta: Any = None,
    accountant: Accountant | None = None,
    seed: Seed = None,
) -> Release:
    """DP counts per declared category or bin (:func:`histogram_query` then :func:`release`)."""
    query = histogram_query(
        values, categories, bins=bins, persons=persons, max_contributions=max_contributions
    )
    return release(
        query,
        epsilon=epsilon,
        rho=rho,
        delta=delta,
        mechanism=mechanism,
        accountant=accountant,
        seed=seed,
    )


def dp_mean(
    values: Any,
    lower: Any,
    upper: Any,
    epsilon: Any = None,
    *,
    persons: Any = None,
    max_contributions: int = 1,
    granularity: Any = None,
    mechanism: Mechanism = "laplace",
    rho: Any = None,
    delta: Any = None,
    accountant: Accountant | None = None,
    seed: Seed = None,
) -> Release:
    """DP AVG of values clamped to ``[lower, upper]``: noisy SUM / noisy COUNT, clamped.

    The budget is split in halves between the two (epsilon/2 each for Laplace, rho/2 each for
    Gaussian, whose rho-zCDP totals compose to the whole); one charge covers both, made before
    either noise is drawn. The ratio is clamped to ``[lower, upper]``, and is the midpoint when
    the noisy count is below 1 (post-processing). ``parameters`` has the noisy sum and count.
    """
    total = sum_query(
        values,
        lower,
        upper,
        persons=persons,
        max_contributions=max_contributions,
        granularity=granularity,
    )
    count = count_query(values, persons=persons, max_contributions=max_contributions)
    kind, budget, cost = _plan(mechanism, epsilon, rho, delta, "mean")
    rnd = start("mean", cost, accountant, seed)
    noisy_sum, sum_info = _noisy(total, kind, budget / 2, rnd)
    noisy_count, count_info = _noisy(count, kind, budget / 2, rnd)
    s, c = _publish(total, noisy_sum), _publish(count, noisy_count)
    lo, hi = float(lower), float(upper)
    mean = (lo + hi) / 2 if c < 1 else min(max(s / c, lo), hi)
    return Release(
        mean,
        f"mean/{kind}",
        cost,
        rnd.kind,
        {"noisy_sum": s, "noisy_count": c, "sum": sum_info, "count": count_info},
    )


def dp_quantile(
    values: Any,
    q: Any,
    lower: Any,
    upper: Any,
    epsilon: Any,
    *,
    persons: Any = None,
    max_contributions: int = 1,
    granularity: Any = None,
    accountant: Accountant | None = None,
    seed: Seed = None,
) -> Release:
    """epsilon-DP ``q``-quantile (median: ``q=0.5``) of values clamped to ``[lower, upper]``.

    Smith's (2011) exponential mechanism over the intervals between the sorted data
    (:mod:`sdckit.dp.quantile`: interval ``i`` scores ``-|i - q n|``, weight its length times
    ``exp(epsilon score / (2 sensitivity))``, then a uniform point of it), sampled exactly on a
    grid of step ``granularity`` (a power of two; default about ``2**-32`` of the range).
    Sensitivity under add/remove one person: ``m max(a, b - a)`` for ``q = a/b``, the rational
    closest to ``q`` with ``b <= 2**16`` (``parameters["q_used"]``). One quantile per call: ``k``
    quantiles cost ``k`` times their epsilon (sequential composition).
    """
    lo, hi = _bounds(lower, upper, "quantile")
    qq = exact(q, "quantile: q")
    if not 0 <= qq <= 1:
        raise ParameterError(f"quantile: q must be between 0 and 1, got {q!r}")
    qq = qq.limit_denominator(1 << 16)
    eps = positive(epsilon, "quantile: epsilon")
    step = grid_for(lo, hi, None if granularity is None else grid_step(granularity))
    low, high = grid_ends(lo, hi, step)
    x = finite_array(values, "quantile: values") if np.size(values) else np.zeros(0)
    keep, m = _kept(x.size, persons, max_contributions, "quantile")
    a, b = qq.numerator, qq.denominator
    iv = intervals(to_grid(x[keep], low, high, step), low, high, a, b)
    sensitivity = m * max(a, b - a)
    cost = PrivacyCost.pure(float(eps))
    rnd = start("quantile", cost, accountant, seed)
    point = sample_points(iv, eps, sensitivity, 1, rnd)
    return Release(
        float(grid_value(point, step)[0]),
        "quantile/exponential",
        cost,
        rnd.kind,
        {
            "q_used": float(qq),
            "sensitivity": sensitivity,
            "granularity": float(step),
            "epsilon_used": float(dyadic_at_most(eps)),
        },
    )
