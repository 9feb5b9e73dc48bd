"""Differential privacy: exact-noise mechanisms, bounded queries and one privacy accountant.

* :mod:`sdckit.dp.samplers` -- exact samplers on the integers (Bernoulli(exp(-gamma)),
  geometric, discrete Laplace, discrete Gaussian; Canonne, Kamath & Steinke 2020), from a
  CSPRNG by default (:mod:`sdckit.dp.randomness`);
* :mod:`sdckit.dp.mechanisms` -- Laplace, discrete Laplace, Gaussian, discrete Gaussian
  (real-valued answers on a power-of-two grid, never floating-point noise);
* :mod:`sdckit.dp.selection` -- exponential mechanism, report-noisy-max;
* :mod:`sdckit.dp.randomized_response` -- k-ary randomized response (local DP);
* :mod:`sdckit.dp.sparse_vector` -- AboveThreshold;
* :mod:`sdckit.dp.partition_selection` -- which values of a column to release (Gaussian
  thresholding, approximate zCDP);
* :mod:`sdckit.dp.queries` -- COUNT, SUM, AVG, quantiles, histograms with clamping and
  per-person contribution bounds;
* :mod:`sdckit.dp.accountant` -- :class:`Accountant` (sequential composition, the privacy
  filter of Rogers et al. 2016, zCDP) charged by every mechanism before it draws noise.

Examples
--------
>>> from sdckit.dp import Accountant, dp_sum, sum_query
>>> query = sum_query([4, 2, 7, 1], lower=0, upper=7)
>>> query.exact_value, query.sensitivity_value
(Fraction(14, 1), Fraction(7, 1))
>>> budget = Accountant(epsilon=1.0)
>>> result = dp_sum([4, 2, 7, 1], 0, 7, epsilon=0.5, accountant=budget, seed=1)
>>> result.randomness, budget.spent().epsilon
('seeded', 0.5)
"""

from __future__ import annotations

from sdckit.dp.accountant import (
    Accountant,
    BudgetExhausted,
    PrivacyCost,
    Spent,
    advanced_composition,
    filter_epsilon,
    gaussian_rho,
    pure_to_zcdp,
    rho_for_approx_dp,
    zcdp_delta,
    zcdp_to_approx_dp,
)
from sdckit.dp.mechanisms import discrete_gaussian, discrete_laplace, gaussian, laplace
from sdckit.dp.queries import (
    BoundedQuery,
    count_query,
    dp_count,
    dp_histogram,
    dp_mean,
    dp_quantile,
    dp_sum,
    histogram_query,
    release,
    sum_query,
)
from sdckit.dp.randomized_response import estimate_frequencies, randomized_response
from sdckit.dp.randomness import Randomness
from sdckit.dp.release import Release
from sdckit.dp.selection import exponential, report_noisy_max
from sdckit.dp.sparse_vector import AboveThreshold, above_threshold

__all__ = [
    "Accountant",
    "BudgetExhausted",
    "PrivacyCost",
    "Spent",
    "Release",
    "Randomness",
    "advanced_composition",
    "filter_epsilon",
    "gaussian_rho",
    "pure_to_zcdp",
    "rho_for_approx_dp",
    "zcdp_delta",
    "zcdp_to_approx_dp",
    "laplace",
    "discrete_laplace",
    "gaussian",
    "discrete_gaussian",
    "exponential",
    "report_noisy_max",
    "randomized_response",
    "estimate_frequencies",
    "AboveThreshold",
    "above_threshold",
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
