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
record. All noise comes from :mod:`sdckit.dp` (exact discrete samplers) and from the
operating system's CSPRNG whatever ``fit(seed=...)`` says
(:func:`sdckit.dp.randomness.noise_source`): a seed sits in a job file that is shared, and
whoever holds it could regenerate the noise and subtract it. The seed fixes only the sampling
of records from the fitted model (post-processing). ``insecure_reproducible_noise=True``
(tests only) draws the noise from the seed too, and :attr:`~MarginalDP.details` then says the
release is not private. The default number of synthetic records is the noisy estimate of the
original's, never the exact count.

**The domain is declared, never read from the data.** The values a column may take are part
of the release (they are the synthetic data's support and are listed in the JSON), so they
must not depend on the records: MST takes the domain from a public schema (the NIST
challenge's ``specs``; McKenna et al. 2021, sec. 4), as do OpenDP and SmartNoise, whose
histogram and synthesizer transformers take declared categories and bounds. Every column is
declared, either in ``domain`` (its category list; a missing value is a category when the list
holds ``None`` or the column is in ``nullable``) or in ``bounds`` (a numeric ``(low, high)``
range cut into ``max_categories`` equal-width bins; integers: bins of whole numbers, one per
value if the range is small enough; a synthetic value is drawn uniformly inside its bin and
integers stay integers; a missing value has a bin of its own when the column is in
``nullable``). An undeclared column is refused before anything is read or drawn, with the
declaration to write. Instead of declaring it, a categorical column's values may be **found
with budget** (``discover: {column: label}``): DP partition selection by Gaussian thresholding
(:mod:`sdckit.dp.partition_selection`; Wilson et al. 2020, sec. 3) releases the values whose
noisy count clears a threshold, and the records of the values not found count as ``label``.
The discovered columns share ``discover_share`` (default 0.1) of ``rho`` and half of
``delta``: selection is ``delta``-approximately ``rho``-zCDP (Bun & Steinke 2016, Definition
8.1), so ``rho`` is then converted with the other half (``epsilon`` from ``rho`` and
``delta / 2``), and the accountant composes both parts to exactly ``(epsilon, delta)``.
:attr:`~MarginalDP.details` reports each discovery's threshold, noise and the number of values
found (all outputs of the mechanism). Values outside the declaration are handled as OpenDP does, by
transformations of one record at a time, so neighbouring datasets stay neighbours and the
guarantee holds: a number outside its bounds is clamped to them (OpenDP's ``make_clamp``); a
category outside the list is counted as the column's declared ``other`` value (OpenDP's
``count_by_categories`` puts such values in a trailing "unknown" bucket), and without one, as
a missing value outside ``nullable``, the record is left out (a row filter). How many records
were clamped, recoded or left out is computed from the data and not covered by the budget:
it is in :attr:`~MarginalDP.steward_details` (for the data steward), never in
:attr:`~MarginalDP.details`.
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
from sdckit.dp.partition_selection import select_partitions
from sdckit.dp.randomness import INSECURE_KIND, NOT_PRIVATE, noise_source
from sdckit.dp.selection import exponential
from sdckit.errors import ParameterError, short_repr
from sdckit.synthesis._graphical_model import (
    FittedForest,
    Measurement,
    estimate_total,
    fit_forest,
    project_to_simplex,
)
from sdckit.synthesis.base import Synthesizer, column_kinds

__all__ = ["DECLARATION_KEYS", "MarginalDP", "declaration_snippet"]

_NAME = "marginal_dp"
#: The parameters that declare the public domain (a compare grid gives them to this method
#: only, so one entry's options can serve ``[cart, marginal_dp]``).
DECLARATION_KEYS = (
    "domain",
    "bounds",
    "other",
    "nullable",
    "max_categories",
    "discover",
    "discover_share",
)
#: Share of ``delta`` a discovery keeps for its threshold failures (the rest converts zCDP).
DISCOVERY_DELTA_SHARE = 0.5
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
    other: int | None = None
    low: float = 0.0
    high: float = 0.0

    def encode(self, series: pd.Series) -> tuple[np.ndarray, np.ndarray, dict[str, int]]:
        """The codes of ``series``, which records stay (False: left out) and how many records
        were clamped / recoded to ``other`` / left out (module docstring; not private)."""
        if not self.binned:
            assert self.categories is not None
            values = series.to_numpy(dtype=object)
            missing = pd.isna(values)
            gaps = [j for j, v in enumerate(self.categories) if _is_missing(v)]
            present = [v if j not in gaps else object() for j, v in enumerate(self.categories)]
            codes = pd.Index(present, dtype=object).get_indexer(values)
            codes[missing] = gaps[0] if gaps else -1
            unknown = codes < 0
            keep = np.ones(len(codes), dtype=bool)
            facts = {"outside_domain": int(unknown.sum())}
            if self.other is not None:
                codes[unknown] = self.other
                facts["counted_as_other"] = facts["outside_domain"]
            else:
                codes[unknown] = 0
                keep[unknown] = False
                facts["left_out"] = facts["outside_domain"]
            return codes.astype(np.int64), keep, facts
        assert self.lows is not None and self.highs is not None
        values = series.to_numpy(dtype=np.float64, na_value=np.nan)
        missing = np.isnan(values)
        n_bins = len(self.lows)
        keep = np.ones(len(values), dtype=bool)
        facts = {"clamped": 0, "left_out": 0}
        if not self.missing:
            keep[missing] = False
            facts["left_out"] = int(missing.sum())
        present = values[~missing]
        facts["clamped"] = int(((present < self.low) | (present > self.high)).sum())
        present = np.clip(present, self.low, self.high)  # OpenDP make_clamp
        codes = np.full(len(values), n_bins, dtype=np.int64)
        codes[~missing] = np.clip(
            np.searchsorted(self.lows, present, side="right") - 1, 0, n_bins - 1
        )
        codes[~keep] = 0
        return codes, keep, facts

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
            info["bounds"] = [self.low, self.high]
            info["missing_category"] = self.missing
        else:
            assert self.categories is not None
            info["categories"] = [_json_value(v) for v in self.categories]
            info["other"] = None if self.other is None else _json_value(self.categories[self.other])
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


def declaration_snippet(columns: list[str], kinds: dict[str, str]) -> str:
    """The job-file declaration of ``columns`` to fill in (placeholders, never data values):
    numeric columns under ``bounds``, the others under ``domain``."""
    numeric = [c for c in columns if kinds.get(c) == "numeric"]
    other = [c for c in columns if kinds.get(c) != "numeric"]
    lines = ["options:"]
    if other:
        lines.append("  domain:       # every value the column may take (a codebook, not the data)")
        lines += [f"    {c}: [<value>, <value>, ...]" for c in other]
    if numeric:
        lines.append("  bounds:       # [low, high], cut into max_categories bins")
        lines += [f"    {c}: [<low>, <high>]" for c in numeric]
    lines.append("  # optional: other: {COLUMN: <a listed value>} (values outside the domain)")
    if other:
        lines.append(
            "  # or find a categorical column's values with budget (DP partition selection):"
        )
        lines.append(f"  # discover: {{{other[0]}: <label of the values not found>}}")
    lines.append("  # optional: nullable: [COLUMN, ...] (a missing value is a value)")
    return "\n".join(lines)


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
        Bins of a column declared in ``bounds`` (at most; integers: whole-number bins).
    bounds:
        Public ``(low, high)`` per numeric column; values outside are clamped.
    domain:
        Public category list per column. Every column is in ``bounds`` or ``domain``, or
        the fit is refused (:class:`~sdckit.errors.ParameterError` showing the declaration).
    other:
        Per ``domain`` column, the listed value that values outside the list count as
        (without one, such records are left out).
    nullable:
        Columns where a missing value is a value (its own category or bin); elsewhere a
        record with a missing value is left out.
    discover:
        Categorical columns whose values are found with budget (partition selection), each
        mapped to the label the values not found get (module docstring).
    discover_share:
        Share of ``rho`` the discovery spends (default 0.1; half of ``delta`` goes with it).
    insecure_reproducible_noise:
        Tests only: draw the privacy noise from ``fit``'s seed. The release is then not
        private, and :attr:`details` says so.
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
        other: dict[str, Any] | None = None,
        nullable: list[str] | None = None,
        discover: dict[str, Any] | None = None,
        discover_share: float = 0.1,
        accountant: Accountant | None = None,
        max_iterations: int = 500,
        insecure_reproducible_noise: bool = False,
    ) -> None:
        super().__init__()
        d = _check_number(delta, "delta")
        if not 0.0 < d < 1.0:
            raise ParameterError(
                f"{_NAME}: parameter 'delta' must be in (0, 1), e.g. 1e-6, got {short_repr(delta)}"
            )
        self.discover = self._check_discover(discover)
        share = _check_number(discover_share, "discover_share")
        if not 0.0 < share < 1.0:
            raise ParameterError(
                f"{_NAME}: parameter 'discover_share' must be in (0, 1), e.g. 0.1, got "
                f"{short_repr(discover_share)}"
            )
        self.discover_share = share
        # the delta of the zCDP conversion; discovery keeps the rest (module docstring)
        self.discovery_delta = d * DISCOVERY_DELTA_SHARE if self.discover else 0.0
        conversion_delta = d - self.discovery_delta
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
            self.epsilon = zcdp_to_approx_dp(r, conversion_delta)
        else:
            e = _check_number(epsilon, "epsilon")
            if e <= 0:
                raise ParameterError(
                    f"{_NAME}: parameter 'epsilon' must be > 0, got {short_repr(epsilon)}"
                )
            self.epsilon = e
            self.rho = rho_for_approx_dp(e, conversion_delta)
        self.delta = d
        self.max_categories = integer_at_least(
            max_categories, 2, _NAME, "parameter 'max_categories'"
        )
        self.bounds = self._check_bounds(bounds)
        self.domain = self._check_domain(domain)
        self.other = self._check_other(other, self.domain)
        self.nullable = self._check_nullable(nullable)
        if not isinstance(insecure_reproducible_noise, bool):
            raise ParameterError(
                f"{_NAME}: parameter 'insecure_reproducible_noise' must be true or false, got "
                f"{short_repr(insecure_reproducible_noise)}"
            )
        self.insecure_reproducible_noise = insecure_reproducible_noise
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
        self._seed_given = False

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

    @staticmethod
    def _check_other(other: Any, domain: dict[str, list[Any]]) -> dict[str, Any]:
        if other is None:
            return {}
        if not isinstance(other, dict):
            raise ParameterError(
                f"{_NAME}: parameter 'other' must map columns to one of their domain's values, "
                f"got {short_repr(other)}"
            )
        for column, value in other.items():
            if column not in domain:
                raise ParameterError(
                    f"{_NAME}: parameter 'other' names column {column!r}, which has no 'domain' "
                    "(numeric columns in 'bounds' are clamped instead)"
                )
            if not any(v == value for v in domain[column] if not _is_missing(v)):
                raise ParameterError(
                    f"{_NAME}: parameter 'other' for column {column!r} is {short_repr(value)}, "
                    f"which its domain does not list; add it to domain[{column!r}]"
                )
        return dict(other)

    @staticmethod
    def _check_discover(discover: Any) -> dict[str, Any]:
        if discover is None:
            return {}
        if not isinstance(discover, dict) or not discover:
            raise ParameterError(
                f"{_NAME}: parameter 'discover' must map columns to the label of the values not "
                f"found, e.g. {{native-country: Other}}, got {short_repr(discover)}"
            )
        for column, label in discover.items():
            if _is_missing(label) or not isinstance(label, (str, int, float)):
                raise ParameterError(
                    f"{_NAME}: parameter 'discover' for column {column!r} must be a label (the "
                    f"value the records of values not found get), got {short_repr(label)}"
                )
        return dict(discover)

    @staticmethod
    def _check_nullable(nullable: Any) -> list[str]:
        if nullable is None:
            return []
        if isinstance(nullable, (str, bytes)) or not isinstance(nullable, (list, tuple)):
            raise ParameterError(
                f"{_NAME}: parameter 'nullable' must be a list of column names, got "
                f"{short_repr(nullable)}"
            )
        return list(nullable)

    # -- schema ---------------------------------------------------------------------------

    def _check_columns(self, data: pd.DataFrame) -> dict[str, str]:
        """Refuse a declaration that does not fit the data's columns (before anything is
        drawn); the column kinds."""
        columns = [str(c) for c in data.columns]
        for key, label in (
            (self.bounds, "bounds"),
            (self.domain, "domain"),
            (self.discover, "discover"),
        ):
            unknown = [c for c in key if c not in data.columns]
            if unknown:
                raise ParameterError(
                    f"{_NAME}: parameter {label!r} names column {unknown[0]!r}, which the data "
                    f"does not have (columns: {', '.join(columns)})"
                )
        declared = [*self.bounds, *self.domain, *self.discover]
        both = [c for c in declared if declared.count(c) > 1]
        if both:
            raise ParameterError(
                f"{_NAME}: column {both[0]!r} is given more than one of 'bounds', 'domain' and "
                "'discover'; give one"
            )
        unknown = [c for c in self.nullable + list(self.other) if c not in data.columns]
        if unknown:
            raise ParameterError(
                f"{_NAME}: parameter 'nullable'/'other' names column {unknown[0]!r}, which the "
                f"data does not have (columns: {', '.join(columns)})"
            )
        kinds = column_kinds(data)
        wrong = [c for c in self.bounds if kinds[c] != "numeric"]
        if wrong:
            raise ParameterError(
                f"{_NAME}: parameter 'bounds' names column {wrong[0]!r}, which is not numeric "
                "(a job with `attributes:` reads a column as text unless its type is given: "
                f"`{wrong[0]}: {{role: ..., type: integer}}` or `type: decimal`); or give its "
                "categories in 'domain' instead"
            )
        wrong = [c for c in self.discover if kinds[c] == "numeric"]
        if wrong:
            raise ParameterError(
                f"{_NAME}: parameter 'discover' names column {wrong[0]!r}, which is numeric: "
                "declare its range in 'bounds' (only categories are discovered)"
            )
        undeclared = [str(c) for c in data.columns if c not in declared]
        if undeclared:
            raise ParameterError(
                f"{_NAME}: the domain of column(s) {', '.join(map(repr, undeclared))} is not "
                "declared. A differentially private synthesizer does not read it from the data "
                "(the values present, or a minimum and maximum, would be released without "
                "noise and without budget). Declare every column's public domain in the job's "
                "options, e.g.\n" + declaration_snippet(undeclared, dict(kinds))
            )
        return dict(kinds)

    def _schema(self, data: pd.DataFrame, found: dict[str, list[Any]]) -> list[_Column]:
        """How every column is coded: its declared domain or bounds, or the values ``found``
        by partition selection plus the column's ``discover`` label."""
        domain = {**self.domain, **found}
        labels = {**self.other, **self.discover}
        out = []
        for c in data.columns:
            if c in domain:
                categories = list(domain[c])
                if c in self.nullable and not any(_is_missing(v) for v in categories):
                    categories.append(None)
                other = None
                if c in labels:
                    other = next(
                        j for j, v in enumerate(categories) if not _is_missing(v) and v == labels[c]
                    )
                out.append(_Column(c, False, len(categories), categories=categories, other=other))
                continue
            integer = pd.api.types.is_integer_dtype(data[c].dtype)
            lo, hi = self.bounds[c]
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
            missing = c in self.nullable
            out.append(
                _Column(
                    c,
                    True,
                    len(lows) + int(missing),
                    lows=lows,
                    highs=highs,
                    integer=integer,
                    missing=missing,
                    low=float(lows[0]),
                    high=float(highs[-1]),
                )
            )
        return out

    # -- fitting ----------------------------------------------------------------------------

    def _discover(
        self, data: pd.DataFrame, accountant: Accountant, noise: Any
    ) -> tuple[dict[str, list[Any]], dict[str, Any]]:
        """The values of each ``discover`` column found by partition selection (module
        docstring), each column ``discover_share * rho / k`` and ``discovery_delta / k``; and
        what the report shows of it (noisy outcomes and parameters only)."""
        found: dict[str, list[Any]] = {}
        report: dict[str, Any] = {}
        k = len(self.discover)
        for c, label in self.discover.items():
            present = data[c].dropna()
            counts = present.value_counts(sort=False)
            candidates = list(counts.index)
            release = select_partitions(
                counts.to_numpy(dtype=np.int64),
                rho=self.rho * self.discover_share / k,
                delta=self.discovery_delta / k,
                accountant=accountant,
                seed=noise,
            )
            kept = [v for v, take in zip(candidates, release.value, strict=True) if take]
            try:
                kept = sorted(kept)
            except TypeError:
                kept = sorted(kept, key=lambda v: (type(v).__name__, str(v)))
            n_found = len(kept)
            if not any(v == label for v in kept):
                kept.append(label)
            found[c] = kept
            report[str(c)] = {
                "values_found": n_found,
                "other_label": _json_value(label),
                "threshold": release.parameters["threshold"],
                "sigma": release.parameters["sigma"],
                "rho": release.parameters["rho"],
                "delta": release.parameters["delta"],
            }
        return found, report

    def fit(self, data: pd.DataFrame, *, seed: int | np.random.Generator | None = None):
        """Fit on ``data`` and charge the whole budget (module docstring). The noise comes from
        the operating system's CSPRNG whatever ``seed`` is (only ``insecure_reproducible_noise``
        draws it from ``seed``); ``seed`` fixes the sampling of records (post-processing)."""
        self._seed_given = seed is not None
        if self.insecure_reproducible_noise and seed is None:
            raise ParameterError(
                f"{_NAME}: insecure_reproducible_noise needs a seed to reproduce the noise from"
            )
        return super().fit(data, seed=seed)

    def sample(
        self, n: int | None = None, *, seed: int | np.random.Generator | None = None
    ) -> pd.DataFrame:
        """``n`` synthetic records (default: the noisy estimate of the number of original
        records, since the exact count is not differentially private)."""
        self._require_fitted()
        return super().sample(self._n_estimate if n is None else n, seed=seed)

    def default_records(self, total: int, holdout: float) -> int:
        """The noisy estimate of the training records scaled by ``1 / (1 - holdout)`` (the
        public share held out): the input's size is not differentially private, so
        ``total`` is not read."""
        self._require_fitted()
        return max(1, int(round(self._n_estimate / (1.0 - float(holdout)))))

    def _fit(self, data: pd.DataFrame, rng: np.random.Generator) -> None:
        self._model = None
        self._check_columns(data)
        noise_seed = noise_source(rng, insecure_reproducible_noise=self.insecure_reproducible_noise)
        whole = (
            PrivacyCost.approximate_zcdp(self.rho, self.discovery_delta)
            if self.discover
            else PrivacyCost.zcdp(self.rho)
        )
        accountant = self._given_accountant
        if accountant is None:
            accountant = Accountant(self.epsilon, self.delta, composition="zcdp")
        elif not accountant.can_afford(whole):
            spent = accountant.spent()
            raise BudgetExhausted(
                f"{_NAME}: the accountant cannot afford {whole.describe()} (spent so far "
                f"epsilon={spent.epsilon:.6g}, rho={spent.rho}); nothing was released"
            )
        self.accountant = accountant
        rho = self.rho
        found, discovery = self._discover(data, accountant, noise_seed)
        if self.discover:
            rho = self.rho - self.rho * self.discover_share

        columns = self._schema(data, found)
        encoded = [col.encode(data[col.label]) for col in columns]
        rows = np.logical_and.reduce([keep for _, keep, _ in encoded])
        codes = np.column_stack([c[rows] for c, _, _ in encoded])
        sizes = [col.size for col in columns]
        d = len(columns)

        if d >= 3:
            shares = (rho / 3.0, rho / 3.0)
            rho_two = rho - shares[0] - shares[1]
            rho_one, rho_select = shares
        elif d == 2:
            rho_one, rho_select, rho_two = rho / 2.0, 0.0, rho - rho / 2.0
        else:
            rho_one, rho_select, rho_two = rho, 0.0, 0.0

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
        if self.discover:
            self.privacy["discovery_delta"] = self.discovery_delta
        names = [str(col.label) for col in columns]
        self.details = {
            "method": "MST (McKenna, Miklau & Sheldon 2021)",
            "randomness": noise_seed.kind,
            "privacy": NOT_PRIVATE if noise_seed.kind == INSECURE_KIND else "private",
            "domain": "declared (options domain/bounds); not read from the data",
            "budget_rho": {
                "discovery": self.rho - rho,
                "one_way": rho_one,
                "selection": rho_select,
                "two_way": rho_two,
            },
            "discovery": discovery,
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
        }
        self.steward_details = {  # computed from the records: not covered by the budget
            "records_fitted": int(rows.sum()),
            "records_left_out": int((~rows).sum()),
            "values_outside_declared_domain": {
                str(col.label): facts for col, (_, _, facts) in zip(columns, encoded, strict=True)
            },
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
