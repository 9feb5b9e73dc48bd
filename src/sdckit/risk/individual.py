"""Individual (re-identification) risk and household risk, as sdcMicro's ``measure_risk``.

Individual risk
    Benedetti & Franconi (1998) model the population frequency ``F_k`` of a key combination
    given its sample frequency ``f_k`` with a negative binomial superpopulation model; the risk
    of a record in combination ``k`` is ``E[1/F_k | f_k]``. Franconi & Polettini (2004,
    *Individual risk estimation in mu-Argus: a review*, PSD 2004, LNCS 3050, 262-272) give the
    closed forms for ``f_k = 1, 2`` and an approximation for larger ``f_k``, all in terms of
    ``p_k = f_k / F^_k`` where ``F^_k`` is the sum of the sampling weights in the combination.
    sdcMicro's ``measure_risk`` (R/measure_risk.R) takes ``f_k``/``F^_k`` from ``freqCalc`` and
    the risk from ``indivRisk(method = "approx")`` (R/indivRisk.R):

    * ``f_k = 1``: ``r = p/(1-p) * log(1/p)``
    * ``f_k = 2``: ``r = p/(1-p) - (p/(1-p))^2 * log(1/p)``
    * ``f_k >= 3``: ``r = p / (f_k - (1-p))``
    * records whose combination has ``F^_k == f_k`` (all weights 1): ``r = 1/f_k``.

    ``global_risk_ER`` (expected re-identifications) is the sum of the risks and
    ``global_risk`` is that sum divided by the number of records.

    Missing values are an ordinary code here (sdcMicro instead lets NA match any category).

Household risk
    sdcMicro's hierarchical risk (``measure_risk(..., hid=)``, ``fast_hier = TRUE``): the risk
    that at least one member of a household is re-identified, ``1 - prod_i (1 - r_i)`` over the
    household's members, assigned to every member; ``hier_risk_ER`` is its sum over records and
    ``hier_risk`` that sum divided by the number of records.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from sdckit.core.frequency import group_keys
from sdckit.errors import DataError

# Below this |1 - p| the f_k = 2 formula is evaluated from its Taylor series (the closed form
# cancels catastrophically as p -> 1); the series is truncated after q**12 (< 3e-16 relative).
_SERIES_LIMIT = 0.05
_SERIES_TERMS = 14


@dataclass(frozen=True)
class IndividualRisk:
    """Per-record individual risk with the sample and estimated population frequencies."""

    risk: np.ndarray  # float64, one per record
    fk: np.ndarray  # int64, sample frequency of the record's key combination
    Fk: np.ndarray  # float64, sum of the weights in the record's key combination
    min: float
    median: float
    max: float
    global_risk: float  # mean risk (sdcMicro global_risk)
    expected_reidentifications: float  # sum of risks (sdcMicro global_risk_ER)

    def to_dict(self) -> dict[str, float]:
        """Summary numbers (``min, median, max, global_risk, expected_reidentifications``)."""
        return {
            "min": self.min,
            "median": self.median,
            "max": self.max,
            "global_risk": self.global_risk,
            "expected_reidentifications": self.expected_reidentifications,
        }


@dataclass(frozen=True)
class HouseholdRisk:
    """Per-record household (hierarchical) risk and its summaries."""

    risk: np.ndarray  # float64, the household's risk for every member
    n_households: int
    min: float
    median: float
    max: float
    global_risk: float  # mean over records (sdcMicro hier_risk)
    expected_reidentifications: float  # sum over records (sdcMicro hier_risk_ER)

    def to_dict(self) -> dict[str, float | int]:
        """Summary numbers, as :meth:`IndividualRisk.to_dict` plus ``n_households``."""
        return {
            "min": self.min,
            "median": self.median,
            "max": self.max,
            "global_risk": self.global_risk,
            "expected_reidentifications": self.expected_reidentifications,
            "n_households": self.n_households,
        }


def _check_key_codes(key_codes: np.ndarray) -> np.ndarray:
    codes = np.asarray(key_codes)
    if codes.ndim != 2:
        raise DataError(
            f"key codes must be a 2-D array (records x key variables), got shape {codes.shape}; "
            "pass one column of integer codes per key variable"
        )
    if codes.shape[1] == 0:
        raise DataError("no key variables given; name at least one categorical key variable")
    if codes.shape[0] == 0:
        raise DataError("the data has no records; risk cannot be measured on an empty table")
    if not np.issubdtype(codes.dtype, np.integer):
        raise DataError(
            f"key codes must be integers (dictionary codes), got dtype {codes.dtype}; "
            "encode the key variables first (sdckit.core.encoding.encode)"
        )
    if codes.min() < 0:
        col = int(np.flatnonzero((codes < 0).any(axis=0))[0])
        raise DataError(
            f"key variable number {col + 1} has a negative code; codes must be 0, 1, 2, ..."
        )
    return codes.astype(np.int64, copy=False)


def _check_weights(weights: np.ndarray, n: int, weight_column: str) -> np.ndarray:
    w_in = np.asarray(weights)
    if w_in.ndim != 1 or len(w_in) != n:
        raise DataError(
            f"weight column {weight_column!r} has {w_in.size} values but there are {n} records; "
            "give exactly one weight per record"
        )
    w = pd.to_numeric(pd.Series(w_in), errors="coerce").to_numpy(dtype=float, na_value=np.nan)
    bad = ~(np.isfinite(w) & (w > 0))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        value = w_in[row].item() if isinstance(w_in[row], np.generic) else w_in[row]
        raise DataError(
            f"weight column {weight_column!r} must hold positive finite numbers, but row "
            f"{row + 1} has {value!r}; fix or drop that row, or choose another weight column"
        )
    return w


def weighted_median(values: np.ndarray, counts: np.ndarray) -> float:
    """``np.median(np.repeat(values, counts))`` without repeating: the middle value of the
    sorted multiset (the mean of the two middle ones for an even total)."""
    order = np.argsort(values, kind="stable")
    v = np.asarray(values, dtype=float)[order]
    cum = np.cumsum(np.asarray(counts, dtype=np.int64)[order])
    total = int(cum[-1])
    upper = v[np.searchsorted(cum, total // 2, side="right")]
    if total % 2:
        return float(upper)
    lower = v[np.searchsorted(cum, total // 2 - 1, side="right")]
    return float((lower + upper) / 2)


def _summaries(
    risk: np.ndarray, counts: np.ndarray | None = None
) -> tuple[float, float, float, float, float]:
    if counts is None:
        total = float(risk.sum())
        return (
            float(risk.min()),
            float(np.median(risk)),
            float(risk.max()),
            total / len(risk),
            total,
        )
    c = np.asarray(counts, dtype=np.int64)
    present = c > 0
    total = float((risk * c).sum())
    return (
        float(risk[present].min()),
        weighted_median(risk, c),
        float(risk[present].max()),
        total / float(c.sum()),
        total,
    )


def benedetti_franconi_risk(fk: np.ndarray, Fk: np.ndarray) -> np.ndarray:
    """Risk ``E[1/F_k | f_k]`` of the negative-binomial model, sdcMicro's ``indivRisk`` approx.

    ``fk``: sample frequencies (>= 1); ``Fk``: estimated population frequencies (sums of the
    weights). Formulas of Franconi & Polettini (2004) as coded in sdcMicro R/indivRisk.R (see the
    module docstring), with ``1/f_k`` where ``F_k == f_k``. Evaluated in a numerically stable
    form: ``q = 1 - p`` is computed as ``(F - f)/F``, ``log(1/p)`` as ``-log1p(-q)``, and for
    ``f_k = 2`` with ``|q| < 0.05`` the series ``p * sum_{j>=2} q^(j-2) / (j (j-1))`` replaces
    the closed form (equal in exact arithmetic; the closed form loses all digits as q -> 0).
    """
    f = np.asarray(fk, dtype=float)
    F = np.asarray(Fk, dtype=float)
    p = f / F
    q = (F - f) / F
    risk = np.empty_like(p)
    exact = F == f  # sdcMicro: rk[fk == Fk] <- 1/fk
    with np.errstate(divide="ignore", invalid="ignore"):
        log_inv_p = -np.log1p(-q)
        one = (f == 1) & ~exact
        risk[one] = p[one] * log_inv_p[one] / q[one]
        two = (f == 2) & ~exact
        small = two & (np.abs(q) < _SERIES_LIMIT)
        large = two & ~small
        qs = q[small]
        series = np.zeros_like(qs)
        for j in range(_SERIES_TERMS, 1, -1):  # Horner: sum_{j>=2} q^(j-2) / (j (j-1))
            series = series * qs + 1.0 / (j * (j - 1))
        risk[small] = p[small] * series
        pl, ql = p[large], q[large]
        risk[large] = pl / ql**2 * (ql - pl * log_inv_p[large])
        more = (f > 2) & ~exact
        risk[more] = p[more] / (f[more] - q[more])
    risk[exact] = 1.0 / f[exact]
    return risk


def individual_risk(
    key_codes: np.ndarray, weights: np.ndarray, weight_column: str = "weight"
) -> IndividualRisk:
    """Individual re-identification risk of every record (sdcMicro ``measure_risk`` with ``w``).

    ``key_codes``: int array (records x key variables) of dictionary codes; ``weights``: the
    sampling weights (positive finite numbers; ``weight_column`` names them in error messages).
    ``f_k`` is the number of records sharing the record's key combination and ``F_k`` the sum of
    their weights; the risk is :func:`benedetti_franconi_risk`. Summaries: ``global_risk`` is
    the mean risk, ``expected_reidentifications`` the sum (sdcMicro ``global_risk_ER``).
    """
    codes = _check_key_codes(key_codes)
    w = _check_weights(weights, codes.shape[0], weight_column)
    cards = codes.max(axis=0) + 1
    group, n_groups, _ = group_keys([codes[:, j] for j in range(codes.shape[1])], cards)
    f_group = np.bincount(group, minlength=n_groups)
    F_group = np.bincount(group, weights=w, minlength=n_groups)
    return individual_risk_from_frequencies(f_group[group].astype(np.int64), F_group[group])


def individual_risk_from_frequencies(
    fk: np.ndarray, Fk: np.ndarray, counts: np.ndarray | None = None
) -> IndividualRisk:
    """:func:`individual_risk` from given per-record ``f_k`` and ``F_k`` (for instance the
    wildcard frequencies of :func:`sdckit.core.frequency.wildcard_frequencies`, as sdcMicro's
    ``measure_risk`` counts records with missing key values).

    With ``counts`` the arrays are per class (``counts`` records each): ``risk``, ``fk`` and
    ``Fk`` stay per class and the summaries are those of the records (the median of the
    records' risks, the mean and sum over records)."""
    fk = np.asarray(fk, dtype=np.int64)
    Fk = np.asarray(Fk, dtype=np.float64)
    risk = benedetti_franconi_risk(fk, Fk)
    lo, med, hi, mean, total = _summaries(risk, counts)
    return IndividualRisk(
        risk=risk,
        fk=fk,
        Fk=Fk,
        min=lo,
        median=med,
        max=hi,
        global_risk=mean,
        expected_reidentifications=total,
    )


def household_risk(
    individual: np.ndarray, household_ids: np.ndarray, household_column: str = "household"
) -> HouseholdRisk:
    """Household risk ``1 - prod(1 - r_i)`` over each household, given to every member.

    sdcMicro ``measure_risk(..., hid = household_column)`` (``fast_hier``): ``individual`` are
    the records' individual risks, ``household_ids`` any hashable ids (one per record; missing
    ids are an error). The product is taken as ``sign * exp(sum log|1 - r_i|)`` per household
    (``log1p`` for ``r_i < 1``; a member with ``r_i == 1`` makes the household risk 1), so it is
    vectorized and accurate for tiny risks. ``expected_reidentifications`` is the sum over
    records (sdcMicro ``hier_risk_ER``), ``global_risk`` that sum over the number of records.
    """
    r = np.asarray(individual, dtype=float)
    if r.ndim != 1 or r.size == 0:
        raise DataError("individual risks must be a non-empty 1-D array, one value per record")
    bad = ~(np.isfinite(r) & (r >= 0))
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise DataError(
            f"individual risk of row {row + 1} is {float(r[row])!r}; risks must be finite and >= 0"
        )
    hid = pd.Series(np.asarray(household_ids))
    if len(hid) != len(r):
        raise DataError(
            f"household column {household_column!r} has {len(hid)} values but there are "
            f"{len(r)} records; give exactly one household id per record"
        )
    missing = hid.isna().to_numpy()
    if missing.any():
        row = int(np.flatnonzero(missing)[0])
        raise DataError(
            f"household column {household_column!r} is missing at row {row + 1}; every record "
            "needs a household id (fill it in, or drop the row)"
        )
    hh, _ = pd.factorize(hid, sort=False)
    n_hh = int(hh.max()) + 1
    a = 1.0 - r
    zero = a == 0.0
    negative = a < 0.0
    with np.errstate(divide="ignore"):
        log_abs = np.where(r < 1.0, np.log1p(-np.minimum(r, 1.0)), np.log(np.abs(a)))
    log_abs[zero] = 0.0
    s = np.bincount(hh, weights=log_abs, minlength=n_hh)
    has_zero = np.bincount(hh, weights=zero, minlength=n_hh) > 0
    odd = (np.bincount(hh, weights=negative, minlength=n_hh).astype(np.int64) % 2) == 1
    # 1 - prod = 1 - sign * exp(s): -expm1(s) for a positive product keeps tiny risks exact.
    per_hh = np.where(odd, 1.0 + np.exp(s), -np.expm1(s))
    per_hh[has_zero] = 1.0
    risk = per_hh[hh]
    lo, med, hi, mean, total = _summaries(risk)
    return HouseholdRisk(
        risk=risk,
        n_households=n_hh,
        min=lo,
        median=med,
        max=hi,
        global_risk=mean,
        expected_reidentifications=total,
    )
