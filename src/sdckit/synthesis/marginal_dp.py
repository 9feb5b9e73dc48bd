"""Differentially private synthetic data from noisy marginals on a tree (MST).

:class:`MarginalDP` is MST (McKenna, Miklau & Sheldon 2021, "Winning the NIST Contest: A
scalable and general approach to differentially private synthetic data", *Journal of Privacy
and Confidentiality* 11(3), sec. 4): it measures low-order marginals with Gaussian noise,
estimates a distribution consistent with them, and samples records from it. Under
zero-concentrated DP (Bun & Steinke 2016, "Concentrated differential privacy:
simplifications, extensions, and lower bounds", TCC) the budget ``rho`` is split in three:

1. **1-way marginals.** The histogram of every attribute is released with discrete Gaussian
   noise (Canonne, Kamath & Steinke 2020, "The discrete Gaussian for differential privacy",
   NeurIPS, Theorem 4): adding or removing one record changes one count of a histogram by 1,
   so its L2 sensitivity is 1, and noise of variance ``sigma**2 = 1 / (2 rho_i)`` makes it
   ``rho_i``-zCDP; the ``d`` histograms share ``rho / 3`` equally and compose by adding rho
   (Bun & Steinke 2016, Lemma 1.7). Then, as in MST (sec. 4, "domain compression"), the values
   of an attribute whose noisy count is below ``3 sigma`` are merged into one value for the
   rest of the fit (post-processing: it reads noisy counts only).
2. **Selection of a spanning tree of 2-way marginals.** Each pair ``(a, b)`` is scored by the
   L1 distance between its true 2-way counts and their estimate from the noisy 1-way
   marginals alone (the product of the fitted 1-way marginals times the estimated number of
   records): the estimate is fixed by released values, so one record moves the score by at
   most 1. A maximum spanning tree is built as in Kruskal's algorithm, ``d - 1`` times picking,
   with the exponential mechanism (McSherry & Talwar 2007, "Mechanism design via differential
   privacy", FOCS) at sensitivity 1, one of the pairs that join two components. Each pick
   with ``P(i) ∝ exp(eps u_i / 2)`` is ``eps``-DP and, better, ``eps**2 / 8``-zCDP, because
   the exponential mechanism is eps-bounded-range (Durfee & Rogers 2019, "Practical
   differentially private top-k selection with pay-what-you-get composition", NeurIPS;
   Cesar & Rogers 2021, "Bounding, concentrating, and truncating: Unifying privacy loss
   composition for data analytics", ALT, Lemma 3.2); with ``rho / 3`` for ``d - 1`` picks,
   ``eps = sqrt(8 (rho / 3) / (d - 1))`` (MST, sec. 4).
3. **2-way marginals.** The ``d - 1`` selected pairs' contingency tables are released with
   discrete Gaussian noise, sensitivity 1 each, sharing ``rho / 3``.

With two attributes the only tree needs no selection (``rho`` is halved between steps 1 and
3); with one, ``rho`` goes to step 1. The distribution is then estimated from every noisy
measurement by Private-PGM's least-squares estimator on the tree (McKenna, Sheldon & Miklau
2019, "Graphical-model based estimation and inference for differential privacy", ICML; see
:mod:`sdckit.synthesis._graphical_model`) and records are sampled along the tree.

**Privacy.** ``epsilon`` and ``delta`` are turned into the largest ``rho`` whose zCDP guarantee
implies ``(epsilon, delta)``-DP, ``rho = (sqrt(ln(1/delta) + epsilon) - sqrt(ln(1/delta)))**2``
(Bun & Steinke 2016, Proposition 1.3; :func:`sdckit.dp.accountant.rho_for_approx_dp`), or
``rho`` is given directly. Every measurement and selection is charged to one zCDP
:class:`~sdckit.dp.accountant.Accountant` before its noise is drawn and the charges add up to
``rho`` (to floating-point rounding); neighbouring datasets differ by adding or removing one
record. All noise comes from :mod:`sdckit.dp` (exact discrete samplers): from the generator of
``fit(seed=...)`` when a seed is given -- reproducible, and then the release is only as
private as its seed is secret -- and from the operating system's CSPRNG when it is not.
The public parts of the schema are what the caller declares: ``domain`` (category lists) and
``bounds`` (numeric ranges). What is not declared is read from the data (the distinct values
of a categorical column, the minimum and maximum of a numeric one); that is not differentially
private, and :attr:`~MarginalDP.details` lists each such column under ``"data_dependent"``.
The default number of synthetic records is the noisy estimate of the original's, never the
exact count.

**Numeric columns.** A numeric column with at most ``max_categories`` distinct values (or a
declared ``domain``) is treated as categorical. Otherwise it is cut into ``max_categories``
equal-width bins over its ``bounds`` (integers: bins of whole numbers, one per value if the
range is small enough), and a synthetic value is drawn uniformly inside its bin (integers stay
integers). A missing value is a category of its own.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from numbers import Real
from typing import Any

import numpy as np
import pandas as pd

from sdckit.core.params import integer_at_least
from sdckit.dp.accountant import (
    Accountant,
    BudgetExhausted,
    PrivacyCost,
    rho_for_approx_dp,
    zcdp_to_approx_dp,
)
from sdckit.dp.mechanisms import discrete_gaussian
from sdckit.dp.selection import exponential
from sdckit.errors import DataError, ParameterError, short_repr
from sdckit.synthesis._graphical_model import (
    FittedForest,
    Measurement,
    estimate_total,
    fit_forest,
    project_to_simplex,
)
from sdckit.synthesis.base import Synthesizer, column_kinds

__all__ = ["MarginalDP"]

_NAME = "marginal_dp"
#: Values whose noisy 1-way count is below this many standard deviations are merged (MST).
_COMPRESSION_SIGMAS = 3.0


def _json_value(value: Any) -> Any:
    """``value`` as a JSON-ready scalar (numpy scalars unwrapped, NaN/NA as None)."""
    if value is None or value is pd.NA:
        return None
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and math.isnan(value):
        return None
    if isinstance(value, (str, bool, int, float)):
        return value
    return str(value)


def _is_missing(value: Any) -> bool:
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


@dataclass
class _Column:
    """How one column is coded: ``categories`` (value per code) or bins (``lows``/``highs``,
    integer bins inclusive), plus an optional missing-value code (the last one)."""

    label: Any
    binned: bool
    size: int
    categories: list[Any] | None = None
    lows: np.ndarray | None = None
    highs: np.ndarray | None = None
    integer: bool = False
    missing: bool = False
    domain_from_data: bool = False
    bounds_from_data: bool = False

    def encode(self, series: pd.Series) -> np.ndarray:
        if not self.binned:
            assert self.categories is not None
            values = series.to_numpy(dtype=object)
            missing = pd.isna(values)
            gaps = [j for j, v in enumerate(self.categories) if _is_missing(v)]
            present = [v if j not in gaps else object() for j, v in enumerate(self.categories)]
            codes = pd.Index(present, dtype=object).get_indexer(values)
            codes[missing] = gaps[0] if gaps else -1
            if (codes < 0).any():
                bad = values[codes < 0][0]
                raise DataError(
                    f"{_NAME}: column {self.label!r} holds {short_repr(bad)}, which is not in its "
                    f"declared public domain (domain[{self.label!r}], {len(self.categories)} "
                    "values); add the value to the domain or recode the column"
                )
            return codes.astype(np.int64)
        assert self.lows is not None and self.highs is not None
        values = series.to_numpy(dtype=np.float64, na_value=np.nan)
        missing = np.isnan(values)
        n_bins = len(self.lows)
        if missing.any() and not self.missing:
            raise DataError(f"{_NAME}: column {self.label!r} has missing values")
        present = values[~missing]
        lo, hi = float(self.lows[0]), float(self.highs[-1])
        outside = (present < lo) | (present > hi)
        if outside.any():
            raise DataError(
                f"{_NAME}: column {self.label!r} holds {short_repr(present[outside][0])}, outside "
                f"its declared public bounds [{lo:g}, {hi:g}] (bounds[{self.label!r}]); widen the "
                "bounds or clip the column first"
            )
        codes = np.full(len(values), n_bins, dtype=np.int64)
        codes[~missing] = np.clip(
            np.searchsorted(self.lows, present, side="right") - 1, 0, n_bins - 1
        )
        return codes

    def decode(self, codes: np.ndarray, rng: np.random.Generator) -> np.ndarray:
        if not self.binned:
            assert self.categories is not None
            return np.asarray(self.categories, dtype=object)[codes]
        assert self.lows is not None and self.highs is not None
        n_bins = len(self.lows)
        missing = codes >= n_bins
        bins = np.minimum(codes, n_bins - 1)
        if self.integer:
            drawn = rng.integers(self.lows[bins], self.highs[bins], endpoint=True)
            out = drawn.astype(np.float64)
        else:
            out = rng.uniform(self.lows[bins], self.highs[bins])
        out[missing] = np.nan
        return out

    def describe(self) -> dict[str, Any]:
        info: dict[str, Any] = {
            "encoding": "binned" if self.binned else "categorical",
            "size": self.size,
        }
        if self.binned:
            assert self.lows is not None and self.highs is not None
            info["integer"] = self.integer
            info["bins"] = [
                [_json_value(a), _json_value(b)] for a, b in zip(self.lows, self.highs, strict=True)
            ]
            info["bounds_from_data"] = self.bounds_from_data
            info["missing_category"] = self.missing
        else:
            assert self.categories is not None
            info["categories"] = [_json_value(v) for v in self.categories]
            info["domain_from_data"] = self.domain_from_data
        return info


def _check_number(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(float(value)):
        raise ParameterError(
            f"{_NAME}: parameter {name!r} must be a finite number, got {short_repr(value)}"
        )
    return float(value)


def _integer_bins(lo: float, hi: float, max_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """Whole-number bins covering ``ceil(lo)..floor(hi)``: ``min(max_bins, range)`` bins of
    (nearly) equal width; ``lows``/``highs`` inclusive."""
    first, last = math.ceil(lo), math.floor(hi)
    width = last - first + 1
    n_bins = min(max_bins, width)
    cuts = first + (np.arange(n_bins + 1, dtype=np.int64) * width) // n_bins
    return cuts[:-1].astype(np.float64), (cuts[1:] - 1).astype(np.float64)


def _sorted_unique(series: pd.Series, numeric: bool) -> tuple[list[Any], bool]:
    """The distinct non-missing values (sorted) and whether a missing value occurs."""
    missing = bool(series.isna().any())
    present = series.dropna()
    if numeric:
        values = [v.item() if isinstance(v, np.generic) else v for v in np.unique(present)]
    else:
        uniques = list(pd.unique(present.to_numpy(dtype=object)))
        try:
            values = sorted(uniques)
        except TypeError:
            values = sorted(uniques, key=lambda v: (type(v).__name__, str(v)))
    return values, missing


class MarginalDP(Synthesizer):
    """Differentially private synthesizer from noisy 1-way and tree-selected 2-way marginals
    (MST: McKenna, Miklau & Sheldon 2021; module docstring for the method and its privacy).

    Parameters
    ----------
    epsilon, delta:
        The ``(epsilon, delta)``-DP guarantee of the whole fit (``epsilon > 0``,
        ``0 < delta < 1``); converted to zCDP ``rho`` (Bun & Steinke 2016, Prop. 1.3).
    rho:
        Instead of ``epsilon``: the zCDP budget directly (``delta`` then only states the
        implied epsilon).
    max_categories:
        Numeric columns with more distinct values than this are cut into this many bins.
    bounds:
        Public ``(low, high)`` per numeric column (else the data's minimum and maximum,
        which is not private); values outside raise :class:`~sdckit.errors.DataError`.
    domain:
        Public category list per column (else the data's distinct values, not private);
        a value outside it raises :class:`~sdckit.errors.DataError`.
    accountant:
        A zCDP :class:`~sdckit.dp.accountant.Accountant` to charge (else a fresh one holding
        exactly this budget is created; either way it is :attr:`accountant` after the fit).
    max_iterations:
        Iterations of the estimator's mirror descent at most.
    """

    name = _NAME

    def __init__(
        self,
        epsilon: float | None = None,
        delta: float = 1e-6,
        *,
        rho: float | None = None,
        max_categories: int = 32,
        bounds: dict[str, tuple[float, float]] | None = None,
        domain: dict[str, list[Any]] | None = None,
        accountant: Accountant | None = None,
        max_iterations: int = 500,
    ) -> None:
        super().__init__()
        d = _check_number(delta, "delta")
        if not 0.0 < d < 1.0:
            raise ParameterError(
                f"{_NAME}: parameter 'delta' must be in (0, 1), e.g. 1e-6, got {short_repr(delta)}"
            )
        if rho is not None and epsilon is not None:
            raise ParameterError(f"{_NAME}: give parameter 'epsilon' or parameter 'rho', not both")
        if rho is None and epsilon is None:
            raise ParameterError(
                f"{_NAME}: parameter 'epsilon' is required (e.g. epsilon=1.0), or give 'rho'"
            )
        if rho is not None:
            r = _check_number(rho, "rho")
            if r <= 0:
                raise ParameterError(f"{_NAME}: parameter 'rho' must be > 0, got {short_repr(rho)}")
            self.rho = r
            self.epsilon = zcdp_to_approx_dp(r, d)
        else:
            e = _check_number(epsilon, "epsilon")
            if e <= 0:
                raise ParameterError(
                    f"{_NAME}: parameter 'epsilon' must be > 0, got {short_repr(epsilon)}"
                )
            self.epsilon = e
            self.rho = rho_for_approx_dp(e, d)
        self.delta = d
        self.max_categories = integer_at_least(
            max_categories, 2, _NAME, "parameter 'max_categories'"
        )
        self.bounds = self._check_bounds(bounds)
        self.domain = self._check_domain(domain)
        if accountant is not None:
            if not isinstance(accountant, Accountant):
                raise ParameterError(
                    f"{_NAME}: parameter 'accountant' must be an sdckit.dp.Accountant or None, "
                    f"got {short_repr(accountant)}"
                )
            if accountant.composition != "zcdp":
                raise ParameterError(
                    f"{_NAME}: parameter 'accountant' must use composition='zcdp' (this "
                    f"synthesizer charges zCDP costs), got {accountant.composition!r}"
                )
        self._given_accountant = accountant
        self.accountant: Accountant | None = accountant
        self.max_iterations = integer_at_least(
            max_iterations, 1, _NAME, "parameter 'max_iterations'"
        )
        self._columns: list[_Column] = []
        self._model: FittedForest | None = None
        self._compress: list[tuple[np.ndarray, list[np.ndarray]]] = []
        self._n_estimate = 1
        self._csprng = False

    # -- parameters ---------------------------------------------------------------------

    @staticmethod
    def _check_bounds(bounds: Any) -> dict[str, tuple[float, float]]:
        if bounds is None:
            return {}
        if not isinstance(bounds, dict):
            raise ParameterError(
                f"{_NAME}: parameter 'bounds' must map column names to (low, high), got "
                f"{short_repr(bounds)}"
            )
        out = {}
        for column, pair in bounds.items():
            if not isinstance(pair, (tuple, list)) or len(pair) != 2:
                raise ParameterError(
                    f"{_NAME}: parameter 'bounds' for column {column!r} must be (low, high), got "
                    f"{short_repr(pair)}"
                )
            lo = _check_number(pair[0], f"bounds[{column!r}]")
            hi = _check_number(pair[1], f"bounds[{column!r}]")
            if not lo < hi:
                raise ParameterError(
                    f"{_NAME}: parameter 'bounds' for column {column!r} needs low < high, got "
                    f"({lo:g}, {hi:g})"
                )
            out[column] = (lo, hi)
        return out

    @staticmethod
    def _check_domain(domain: Any) -> dict[str, list[Any]]:
        if domain is None:
            return {}
        if not isinstance(domain, dict):
            raise ParameterError(
                f"{_NAME}: parameter 'domain' must map column names to lists of values, got "
                f"{short_repr(domain)}"
            )
        out = {}
        for column, values in domain.items():
            if isinstance(values, (str, bytes)) or not hasattr(values, "__iter__"):
                raise ParameterError(
                    f"{_NAME}: parameter 'domain' for column {column!r} must be a list of "
                    f"values, got {short_repr(values)}"
                )
            listed = list(values)
            if not listed:
                raise ParameterError(f"{_NAME}: parameter 'domain' for column {column!r} is empty")
            index = pd.Index([v for v in listed if not _is_missing(v)], dtype=object)
            if len(listed) - len(index) > 1:
                raise ParameterError(
                    f"{_NAME}: parameter 'domain' for column {column!r} lists the missing "
                    "value more than once"
                )
            if index.has_duplicates:
                dup = index[index.duplicated()][0]
                raise ParameterError(
                    f"{_NAME}: parameter 'domain' for column {column!r} lists "
                    f"{short_repr(dup)} twice"
                )
            out[column] = listed
        return out

    # -- schema ---------------------------------------------------------------------------

    def _schema(self, data: pd.DataFrame) -> list[_Column]:
        columns = [str(c) for c in data.columns]
        for key, label in ((self.bounds, "bounds"), (self.domain, "domain")):
            unknown = [c for c in key if c not in data.columns]
            if unknown:
                raise ParameterError(
                    f"{_NAME}: parameter {label!r} names column {unknown[0]!r}, which the data "
                    f"does not have (columns: {', '.join(columns)})"
                )
        both = [c for c in self.bounds if c in self.domain]
        if both:
            raise ParameterError(
                f"{_NAME}: column {both[0]!r} is given both 'bounds' and 'domain'; give one"
            )
        kinds = column_kinds(data)
        out = []
        for c in data.columns:
            series = data[c]
            if c in self.bounds and kinds[c] != "numeric":
                raise ParameterError(
                    f"{_NAME}: parameter 'bounds' names column {c!r}, which is not numeric; "
                    "give its categories in 'domain' instead"
                )
            if c in self.domain:
                out.append(_Column(c, False, len(self.domain[c]), categories=list(self.domain[c])))
                continue
            numeric = kinds[c] == "numeric"
            values, missing = _sorted_unique(series, numeric)
            if c not in self.bounds and (not numeric or len(values) <= self.max_categories):
                categories = values + ([None] if missing else [])
                out.append(
                    _Column(
                        c,
                        False,
                        len(categories),
                        categories=categories,
                        domain_from_data=True,
                    )
                )
                continue
            integer = pd.api.types.is_integer_dtype(series.dtype)
            if c in self.bounds:
                lo, hi = self.bounds[c]
                from_data = False
            else:
                lo, hi = float(values[0]), float(values[-1])
                from_data = True
            if integer:
                if math.ceil(lo) > math.floor(hi):
                    raise ParameterError(
                        f"{_NAME}: parameter 'bounds' for integer column {c!r} holds no whole "
                        f"number: ({lo:g}, {hi:g})"
                    )
                lows, highs = _integer_bins(lo, hi, self.max_categories)
            else:
                edges = np.linspace(lo, hi, self.max_categories + 1)
                lows, highs = edges[:-1], edges[1:]
            out.append(
                _Column(
                    c,
                    True,
                    len(lows) + int(missing),
                    lows=lows,
                    highs=highs,
                    integer=integer,
                    missing=missing,
                    bounds_from_data=from_data,
                )
            )
        return out

    # -- fitting ----------------------------------------------------------------------------

    def fit(self, data: pd.DataFrame, *, seed: int | np.random.Generator | None = None):
        """Fit on ``data`` and charge the whole budget (module docstring). With ``seed`` (an
        int or a Generator) the noise is reproducible -- and only as private as the seed is
        secret; without it the noise comes from the operating system's CSPRNG."""
        self._csprng = seed is None
        return super().fit(data, seed=seed)

    def sample(
        self, n: int | None = None, *, seed: int | np.random.Generator | None = None
    ) -> pd.DataFrame:
        """``n`` synthetic records (default: the noisy estimate of the number of original
        records, since the exact count is not differentially private)."""
        self._require_fitted()
        return super().sample(self._n_estimate if n is None else n, seed=seed)

    def _fit(self, data: pd.DataFrame, rng: np.random.Generator) -> None:
        self._model = None
        columns = self._schema(data)
        codes = np.column_stack([col.encode(data[col.label]) for col in columns])
        sizes = [col.size for col in columns]
        d = len(columns)
        noise_seed = None if self._csprng else rng

        accountant = self._given_accountant
        if accountant is None:
            accountant = Accountant(self.epsilon, self.delta, composition="zcdp")
        elif not accountant.can_afford(PrivacyCost.zcdp(self.rho)):
            spent = accountant.spent()
            raise BudgetExhausted(
                f"{_NAME}: the accountant cannot afford rho={self.rho:.6g} (spent so far "
                f"epsilon={spent.epsilon:.6g}, rho={spent.rho}); nothing was released"
            )
        self.accountant = accountant

        if d >= 3:
            shares = (self.rho / 3.0, self.rho / 3.0)
            rho_two = self.rho - shares[0] - shares[1]
            rho_one, rho_select = shares
        elif d == 2:
            rho_one, rho_select, rho_two = self.rho / 2.0, 0.0, self.rho - self.rho / 2.0
        else:
            rho_one, rho_select, rho_two = self.rho, 0.0, 0.0

        # 1. every 1-way marginal, discrete Gaussian, sensitivity 1, rho_one / d each
        one_way: list[tuple[np.ndarray, float]] = []
        for i in range(d):
            counts = np.bincount(codes[:, i], minlength=sizes[i])
            release = discrete_gaussian(
                counts, 1, rho=rho_one / d, accountant=accountant, seed=noise_seed
            )
            one_way.append(
                (np.asarray(release.value, dtype=np.float64), release.parameters["sigma"])
            )

        # domain compression (MST sec. 4): values with noisy count < 3 sigma merged
        compress: list[tuple[np.ndarray, list[np.ndarray]]] = []
        small_codes = np.empty_like(codes)
        small_sizes: list[int] = []
        measurements: list[Measurement] = []
        for i, (y, sigma) in enumerate(one_way):
            keep = y >= _COMPRESSION_SIGMAS * sigma
            rare = np.flatnonzero(~keep)
            mapping = np.arange(sizes[i])
            members = [np.array([v]) for v in range(sizes[i])]
            if len(rare) >= 2:
                kept = np.flatnonzero(keep)
                mapping = np.empty(sizes[i], dtype=np.int64)
                mapping[kept] = np.arange(len(kept))
                mapping[rare] = len(kept)
                members = [np.array([v]) for v in kept] + [rare]
            compress.append((mapping, members))
            small_codes[:, i] = mapping[codes[:, i]]
            k = len(members)
            small_sizes.append(k)
            values = np.bincount(mapping, weights=y, minlength=k)
            var = np.bincount(mapping, minlength=k).astype(np.float64) * sigma**2
            measurements.append(Measurement((i,), values, np.sqrt(var)))
        total = estimate_total(measurements)

        # 2. a spanning tree of 2-way marginals, exponential mechanism per Kruskal step
        edges: list[tuple[int, int]] = []
        selection_epsilon = None
        if d == 2:
            edges = [(0, 1)]
        elif d >= 3:
            independent = [
                project_to_simplex(m.values / total, 1.0 / m.sigma**2) for m in measurements
            ]
            pairs = [(a, b) for a in range(d) for b in range(a + 1, d)]
            scores = np.empty(len(pairs))
            for j, (a, b) in enumerate(pairs):
                flat = small_codes[:, a] * small_sizes[b] + small_codes[:, b]
                true = np.bincount(flat, minlength=small_sizes[a] * small_sizes[b])
                guess = total * np.outer(independent[a], independent[b]).ravel()
                scores[j] = np.abs(true - guess).sum()
            picks = d - 1
            rho_pick = rho_select / picks
            selection_epsilon = math.sqrt(8.0 * rho_pick)
            component = list(range(d))

            def find(x: int) -> int:
                while component[x] != x:
                    component[x] = component[component[x]]
                    x = component[x]
                return x

            for _ in range(picks):
                open_pairs = [j for j, (a, b) in enumerate(pairs) if find(a) != find(b)]
                # charged before the mechanism draws: eps-bounded-range => eps**2/8-zCDP
                accountant.charge(
                    PrivacyCost.zcdp(rho_pick), f"{_NAME}: exponential mechanism (tree edge)"
                )
                chosen = exponential(
                    scores[open_pairs], 1, selection_epsilon, seed=noise_seed
                ).value
                a, b = pairs[open_pairs[int(chosen)]]
                edges.append((a, b))
                component[find(a)] = find(b)

        # 3. the selected 2-way marginals, discrete Gaussian, sensitivity 1
        sigma_two = None
        for a, b in edges:
            flat = small_codes[:, a] * small_sizes[b] + small_codes[:, b]
            true = np.bincount(flat, minlength=small_sizes[a] * small_sizes[b])
            release = discrete_gaussian(
                true, 1, rho=rho_two / len(edges), accountant=accountant, seed=noise_seed
            )
            sigma_two = release.parameters["sigma"]
            shape = (small_sizes[a], small_sizes[b])
            two_way = np.asarray(release.value, dtype=np.float64).reshape(shape)
            measurements.append(Measurement((a, b), two_way, np.full(shape, sigma_two)))
        total = estimate_total(measurements)

        model = fit_forest(
            small_sizes, edges, measurements, total, max_iterations=self.max_iterations
        )
        self._columns = columns
        self._compress = compress
        self._model = model
        self._n_estimate = max(1, int(round(total)))
        self.privacy = {"epsilon": self.epsilon, "delta": self.delta, "rho": self.rho}
        names = [str(col.label) for col in columns]
        data_dependent = [  # read from the data, not private (module docstring)
            str(col.label)
            for col in columns
            if col.domain_from_data or col.bounds_from_data or (col.binned and col.missing)
        ]
        self.details = {
            "method": "MST (McKenna, Miklau & Sheldon 2021)",
            "randomness": "csprng" if self._csprng else "seeded",
            "budget_rho": {"one_way": rho_one, "selection": rho_select, "two_way": rho_two},
            "sigma_one_way": float(one_way[0][1]),
            "sigma_two_way": None if sigma_two is None else float(sigma_two),
            "selection_epsilon": selection_epsilon,
            "selected_edges": [[names[a], names[b]] for a, b in edges],
            "estimated_records": float(total),
            "estimation": {"iterations": model.iterations, "loss": float(model.loss)},
            "columns": {
                str(col.label): {**col.describe(), "compressed_size": small_sizes[i]}
                for i, col in enumerate(columns)
            },
            "data_dependent": data_dependent,
        }

    # -- sampling ---------------------------------------------------------------------------

    def _sample(self, n: int, rng: np.random.Generator) -> pd.DataFrame:
        if self._model is None:  # the last fit raised before it finished
            raise ParameterError(f"{_NAME}: the last fit failed; call fit(data) again")
        small = self._model.sample(n, rng)
        out = {}
        for i, col in enumerate(self._columns):
            _, members = self._compress[i]
            codes = np.array([group[0] for group in members], dtype=np.int64)[small[:, i]]
            for j, group in enumerate(members):
                if len(group) > 1:  # merged rare values: uniform among them (MST)
                    rows = np.flatnonzero(small[:, i] == j)
                    codes[rows] = group[rng.integers(0, len(group), size=len(rows))]
            out[col.label] = col.decode(codes, rng)
        return pd.DataFrame(out, columns=[col.label for col in self._columns])
