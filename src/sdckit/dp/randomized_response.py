"""k-ary randomized response: local differential privacy, each person randomizes their own value.

Warner (1965), "Randomized response: a survey technique for eliminating evasive answer bias"
(JASA 60), generalized to ``k`` categories ("direct encoding" / generalized randomized response,
Wang, Blocki, Li & Jha 2017, "Locally differentially private protocols for frequency
estimation", USENIX Security): a person with value ``v`` reports ``v`` with probability
``p = e**eps / (e**eps + k - 1)`` and each other category with probability
``q = 1 / (e**eps + k - 1)``. Since ``p / q = e**eps`` for any two inputs, each report is
epsilon-LDP. Every person reports once, about themselves only, so a whole batch costs epsilon
(parallel composition over disjoint people; McSherry 2009, PINQ).

Exact sampling, no floating point: propose a category uniformly; keep it if it is the true one,
else keep it with probability ``exp(-epsilon)`` (exact Bernoulli); repeat until kept. The kept
category has probability ``∝ 1`` for the truth and ``∝ exp(-epsilon)`` for each other one, which
is ``(p, q, ..., q)``. epsilon is rounded *down* to 32 significant bits first (a stronger
guarantee); ``parameters["epsilon_used"]`` gives the value used.

:func:`estimate_frequencies` is the unbiased estimator of the category shares from the reports
(Wang et al. 2017): ``(observed share - q) / (p - q)``, post-processing only.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from sdckit.dp._numbers import dyadic_at_most, positive
from sdckit.dp.accountant import Accountant, PrivacyCost
from sdckit.dp.randomness import Randomness, Seed
from sdckit.dp.release import Release, start
from sdckit.dp.samplers import _bernoulli_exp
from sdckit.errors import DataError, ParameterError, preview

__all__ = ["randomized_response", "estimate_frequencies"]


def _categories(categories: Sequence[Any], name: str) -> list[Any]:
    cats = list(categories)
    if len(cats) < 2:
        raise ParameterError(f"{name}: categories must list at least 2 values, got {cats!r}")
    if len(set(cats)) != len(cats):
        raise ParameterError(f"{name}: categories must be distinct, got {preview(cats)}")
    return cats


def _codes(values: Any, cats: list[Any], name: str) -> np.ndarray:
    series = pd.Series(values if np.ndim(values) else [values])
    codes = pd.Index(cats).get_indexer(series).astype(np.int64)
    unknown = np.flatnonzero(codes < 0)
    if unknown.size:
        raise DataError(
            f"{name}: value {series.iloc[int(unknown[0])]!r} (position {int(unknown[0])}) is not "
            f"one of the declared categories {preview(cats)}"
        )
    return codes


def randomized_response_codes(
    truth: np.ndarray, k: int, eps_num: int, eps_den: int, rnd: Randomness
) -> np.ndarray:
    """Randomized codes for the true codes ``truth`` (0..k-1), epsilon = eps_num / eps_den."""
    out = np.empty(truth.size, dtype=np.int64)
    lanes = np.arange(truth.size)
    while lanes.size:
        proposal = rnd.below(k, lanes.size)
        keep = proposal == truth[lanes]
        other = np.flatnonzero(~keep)
        keep[other] = _bernoulli_exp(
            np.full(other.size, eps_num, dtype=np.int64),
            np.full(other.size, eps_den, dtype=np.int64),
            rnd,
        )
        out[lanes[keep]] = proposal[keep]
        lanes = lanes[~keep]
    return out


def randomized_response(
    values: Any,
    categories: Sequence[Any],
    epsilon: Any,
    *,
    accountant: Accountant | None = None,
    seed: Seed = None,
) -> Release:
    """epsilon-LDP k-ary randomized response of each value (one report per person).

    Each value is kept with probability ``e**eps / (e**eps + k - 1)``, else replaced by one of
    the ``k - 1`` other declared ``categories`` uniformly (Warner 1965; Wang et al. 2017). The
    release's value is an array of reports (a single report for a single value); the batch
    costs epsilon once, each person answering for themselves.
    """
    cats = _categories(categories, "randomized_response")
    eps = positive(epsilon, "randomized_response: epsilon")
    truth = _codes(values, cats, "randomized_response")
    used = dyadic_at_most(eps)
    cost = PrivacyCost.pure(float(eps))
    rnd = start("randomized_response", cost, accountant, seed)
    codes = randomized_response_codes(truth, len(cats), used.numerator, used.denominator, rnd)
    reports = pd.Series(pd.Categorical.from_codes(codes, categories=cats)).to_numpy(dtype=object)
    return Release(
        value=reports[0] if np.ndim(values) == 0 else reports,
        mechanism="randomized_response",
        cost=cost,
        randomness=rnd.kind,
        parameters={
            "categories": cats,
            "epsilon_used": float(used),
            "keep_probability": math.exp(float(used)) / (math.exp(float(used)) + len(cats) - 1),
        },
    )


def estimate_frequencies(reports: Any, categories: Sequence[Any], epsilon: Any) -> pd.Series:
    """Unbiased estimates of each category's share from k-ary randomized response reports.

    Wang, Blocki, Li & Jha (2017), direct encoding: with ``p = e**eps / (e**eps + k - 1)`` and
    ``q = 1 / (e**eps + k - 1)``, ``E[observed share of c] = q + (p - q) * true share``, so
    ``(observed - q) / (p - q)`` is unbiased (estimates can fall outside [0, 1]). Pure
    post-processing: no privacy cost.
    """
    cats = _categories(categories, "estimate_frequencies")
    e = float(positive(epsilon, "estimate_frequencies: epsilon"))
    codes = _codes(reports, cats, "estimate_frequencies")
    if codes.size == 0:
        raise DataError("estimate_frequencies: no reports")
    k = len(cats)
    p = math.exp(e) / (math.exp(e) + k - 1)
    q = 1.0 / (math.exp(e) + k - 1)
    observed = np.bincount(codes, minlength=k) / codes.size
    return pd.Series((observed - q) / (p - q), index=cats, name="share")
