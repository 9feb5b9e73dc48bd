"""Singling-out, linkability and inference attacks on synthetic data, with the residual risk
over a control set, as defined by Giomi, Boenisch, Wehmeyer & Tasnádi (2023), "A Unified
Framework for Quantifying Privacy Risk in Synthetic Data", *Proceedings on Privacy Enhancing
Technologies* 2023(2), 312-328 (the "Anonymeter" framework; reference implementation: the
``anonymeter`` package).

Setting (Giomi et al. 2023, threat model): the original records are split into a *training*
part, which the synthesizer saw, and a *control* part of the same population, which it did not.
The attacker holds the synthetic data. Each attack is run three times:

* the **main** attack, built from the synthetic data and scored on the training records;
* the **control** attack, the same attack scored on the control records: its success is what
  the synthetic data reveals about *any* member of the population (generalization, not a leak);
* the **baseline** attack, a naive attacker who guesses at random: when the main attack is not
  clearly better than the baseline the attack is too weak for its result to mean anything.

Each count of successes ``k`` out of ``n`` attacks is turned into a success rate with the
Wilson (1927) score interval (:func:`wilson_rate`), and the privacy risk is the *residual*
success of the main attack over the control attack (:func:`residual_risk`),
``R = (r_train - r_control) / (1 - r_control)``, its error propagated from the two rates to
first order and the value and interval clipped to [0, 1] (Giomi et al. 2023, risk estimation).

Randomness enters only through ``seed`` (an integer or a :class:`numpy.random.Generator`): the
same seed gives the same result. Distances for the linkability and inference attacks are
Gower's (1971) mixed-type distance (:mod:`sdckit.risk.synthetic`), searched with scikit-learn's
nearest neighbours (no n x n matrix); ties between equally close synthetic records are broken
by one random priority per synthetic record (the attacker fixes an arbitrary order of the
synthetic records), drawn from ``seed``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import pandas as pd
from numba import njit

from sdckit.core.encoding import as_text, is_numeric
from sdckit.errors import DataError, ParameterError, preview

__all__ = [
    "AttackResult",
    "Rate",
    "inference",
    "linkability",
    "residual_risk",
    "singling_out",
    "wilson_rate",
]

#: Width of the random tie-breaking priority added to synthetic distances (Gower units times
#: the number of columns): far below any distance difference that means anything.
_TIE_EPS = 1e-9
#: Elements (rows x predicates) evaluated at once when counting predicate matches.
_BLOCK = 1 << 22
#: Largest dense Gower-space matrix (elements, all frames together); wider ones go sparse.
_DENSE_LIMIT = 1 << 23


# --------------------------------------------------------------------------------------------
# statistics: Wilson rates and the residual risk
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Rate:
    """A success rate ``value`` with its symmetric error; ``ci`` is ``value +- error`` clipped
    to [0, 1] (see :func:`wilson_rate`)."""

    successes: float
    attacks: int
    value: float
    error: float

    @property
    def ci(self) -> tuple[float, float]:
        """The confidence interval, clipped to [0, 1]."""
        return (_clip(self.value - self.error), _clip(self.value + self.error))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready figures."""
        return {
            "successes": self.successes,
            "attacks": self.attacks,
            "rate": self.value,
            "error": self.error,
            "ci": list(self.ci),
        }


def _clip(x: float) -> float:
    return min(max(float(x), 0.0), 1.0)


def _z(confidence_level: float) -> float:
    from scipy.stats import norm

    return float(norm.ppf(0.5 * (1.0 + confidence_level)))


def wilson_rate(n_success: float, n_total: int, confidence_level: float = 0.95) -> Rate:
    """Success rate of ``n_success`` successes in ``n_total`` Bernoulli trials: the centre of
    the Wilson (1927) score interval and its half-width, as Giomi et al. (2023) estimate every
    attack's success rate,

        ``rate  = (k + z^2 / 2) / (n + z^2)``,
        ``error = z / (n + z^2) * sqrt(k (n - k) / n + z^2 / 4)``,

    with ``z`` the standard normal quantile of ``(1 + confidence_level) / 2`` (E. B. Wilson,
    "Probable inference, the law of succession, and statistical inference", *JASA* 22,
    209-212, 1927). ``n_success`` may be fractional (the size-corrected control count of the
    singling-out attack)."""
    _check_confidence(confidence_level)
    if n_total < 1:
        raise ParameterError(f"Wilson rate: parameter 'n_total' must be >= 1, got {n_total}")
    if not 0 <= n_success <= n_total:
        raise ParameterError(
            f"Wilson rate: parameter 'n_success' must be in [0, n_total={n_total}], got {n_success}"
        )
    z = _z(confidence_level)
    z2 = z * z
    den = n_total + z2
    value = (n_success + 0.5 * z2) / den
    error = z / den * math.sqrt(n_success * (n_total - n_success) / n_total + 0.25 * z2)
    return Rate(float(n_success), int(n_total), float(value), float(error))


def residual_risk(attack: Rate, control: Rate) -> tuple[float, float, tuple[float, float]]:
    """The residual risk of Giomi et al. (2023): ``R = (r_a - r_c) / (1 - r_c)`` for the
    main-attack rate ``r_a`` and the control rate ``r_c``, with the first-order propagated
    error ``dR = sqrt((e_a / (1 - r_c))^2 + (e_c (r_a - 1) / (1 - r_c)^2)^2)``.

    Returns ``(residual, risk, (low, high))``: the unclipped residual, and the risk and its
    interval ``R -+ dR`` clipped to [0, 1] (a negative residual -- the control set attacked
    more successfully than the training set -- is risk 0)."""
    margin = 1.0 - control.value
    if margin <= 0:  # a Wilson centre is < 1 for every confidence level in (0, 1)
        raise ParameterError("residual risk: the control success rate is 1; no risk is defined")
    residual = (attack.value - control.value) / margin
    error = math.hypot(attack.error / margin, control.error * (attack.value - 1.0) / margin**2)
    return residual, _clip(residual), (_clip(residual - error), _clip(residual + error))


@dataclass(frozen=True)
class AttackResult:
    """The outcome of one attack (main, baseline and control runs) and its residual risk
    (module docstring). ``details`` holds attack-specific figures (JSON-ready)."""

    attack: str
    attack_rate: Rate
    baseline_rate: Rate
    control_rate: Rate
    residual: float
    risk: float
    risk_ci: tuple[float, float]
    confidence_level: float
    details: dict[str, Any] = field(default_factory=dict, hash=False)

    @property
    def n_attacks(self) -> int:
        """Number of main attacks."""
        return self.attack_rate.attacks

    @property
    def n_success(self) -> float:
        """Successful main attacks."""
        return self.attack_rate.successes

    @property
    def n_baseline(self) -> float:
        """Successful baseline (random-guess) attacks."""
        return self.baseline_rate.successes

    @property
    def n_control(self) -> float:
        """Successful control attacks (size-corrected for singling out)."""
        return self.control_rate.successes

    @property
    def better_than_baseline(self) -> bool:
        """False when the main attack is no better than random guessing: Giomi et al. (2023)
        then consider the result untrustworthy (the attack, not the data, is weak)."""
        return self.attack_rate.value > self.baseline_rate.value

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready figures."""
        return {
            "attack": self.attack,
            "n_attacks": self.n_attacks,
            "n_success": self.n_success,
            "n_baseline": self.n_baseline,
            "n_control": self.n_control,
            "attack_rate": self.attack_rate.to_dict(),
            "baseline_rate": self.baseline_rate.to_dict(),
            "control_rate": self.control_rate.to_dict(),
            "residual": self.residual,
            "risk": self.risk,
            "risk_ci": list(self.risk_ci),
            "confidence_level": self.confidence_level,
            "better_than_baseline": self.better_than_baseline,
            **self.details,
        }


def _result(
    attack: str,
    counts: tuple[float, float, float],
    totals: tuple[int, int, int],
    confidence_level: float,
    details: dict[str, Any],
) -> AttackResult:
    main = wilson_rate(counts[0], totals[0], confidence_level)
    base = wilson_rate(counts[1], totals[1], confidence_level)
    ctrl = wilson_rate(counts[2], totals[2], confidence_level)
    residual, risk, ci = residual_risk(main, ctrl)
    return AttackResult(attack, main, base, ctrl, residual, risk, ci, confidence_level, details)


# --------------------------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------------------------
def _check_confidence(confidence_level: float) -> None:
    if not isinstance(confidence_level, int | float) or not 0 < confidence_level < 1:
        raise ParameterError(
            f"parameter 'confidence_level' must be strictly between 0 and 1, "
            f"got {confidence_level!r}"
        )


def _check_int(name: str, value: object, low: int, high: int | None = None, what: str = "") -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise ParameterError(f"{what}: parameter {name!r} must be an integer, got {value!r}")
    if value < low or (high is not None and value > high):
        bound = f">= {low}" if high is None else f"between {low} and {high}"
        raise ParameterError(f"{what}: parameter {name!r} must be {bound}, got {value}")
    return int(value)


def _check_frames(
    what: str, frames: dict[str, pd.DataFrame], columns: Sequence[str] | None
) -> list[str]:
    for name, f in frames.items():
        if not isinstance(f, pd.DataFrame):
            raise DataError(f"{what}: the {name} data must be a pandas DataFrame")
        if len(f) == 0:
            raise DataError(f"{what}: the {name} data has no rows")
    first = next(iter(frames.values()))
    cols = [str(c) for c in first.columns] if columns is None else list(columns)
    if not cols:
        raise DataError(f"{what}: no columns given; name at least one column")
    for name, f in frames.items():
        missing = [c for c in cols if c not in f.columns]
        if missing:
            raise DataError(
                f"{what}: column(s) {preview(missing)} not found in the {name} data "
                f"(its columns: {preview(list(f.columns), 10)})"
            )
    return cols


def _rng(seed: int | np.random.Generator) -> np.random.Generator:
    if isinstance(seed, np.random.Generator):
        return seed
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer):
        raise ParameterError(f"parameter 'seed' must be an integer or a Generator, got {seed!r}")
    return np.random.default_rng(int(seed))


# --------------------------------------------------------------------------------------------
# singling out
# --------------------------------------------------------------------------------------------
class _Predicates(NamedTuple):
    """Conjunctions of ``m`` conditions each, as (q, m) arrays. A condition on column ``col``
    holds for a non-missing value ``x`` when ``(lo <= x <= hi) != neg`` and for a missing one
    when ``nul``: equality is ``lo = hi = v``, inequality the same negated, ``<= v`` is
    ``(-inf, v]``, ``< v`` is ``(-inf, nextafter(v, -inf)]``, "is missing" is the empty
    interval with ``nul`` set."""

    col: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    neg: np.ndarray
    nul: np.ndarray

    @property
    def size(self) -> int:
        """Number of predicates."""
        return int(self.col.shape[0])

    def take(self, idx: np.ndarray) -> _Predicates:
        return _Predicates(*(a[idx] for a in self))

    def keys(self) -> np.ndarray:
        """One byte string per predicate (identical predicates, identical keys)."""
        order = np.argsort(self.col, axis=1, kind="stable")
        parts = [np.take_along_axis(a, order, axis=1).astype(np.float64) for a in self]
        flat = np.ascontiguousarray(np.concatenate(parts, axis=1))
        return flat.view(np.dtype((np.void, flat.dtype.itemsize * flat.shape[1]))).ravel()


_EQ, _NE, _LT, _LE, _GT, _GE = range(6)


def _conditions(col: np.ndarray, val: np.ndarray, op: np.ndarray) -> _Predicates:
    """Predicates from column indices, values and operator codes (all of one shape); a missing
    value makes the condition "is missing" for ``==`` and "is not missing" otherwise."""
    val = val.astype(np.float64)
    missing = np.isnan(val)
    lo = np.where(np.isin(op, (_EQ, _NE, _GE)), val, -np.inf)
    lo = np.where(op == _GT, np.nextafter(val, np.inf), lo)
    hi = np.where(np.isin(op, (_EQ, _NE, _LE)), val, np.inf)
    hi = np.where(op == _LT, np.nextafter(val, -np.inf), hi)
    neg = op == _NE
    nul = missing & (op == _EQ)
    lo = np.where(missing, np.where(nul, np.inf, -np.inf), lo)
    hi = np.where(missing, np.where(nul, -np.inf, np.inf), hi)
    neg = np.where(missing, False, neg)
    return _Predicates(col.astype(np.intp), lo, hi, neg, nul)


def _concat(preds: Sequence[_Predicates]) -> _Predicates:
    return _Predicates(*(np.concatenate(parts) for parts in zip(*preds, strict=True)))


def _matches(x: np.ndarray, preds: _Predicates):
    """Yield ``(start, mask)`` blocks: ``mask[i, j]`` whether row ``i`` of ``x`` satisfies
    predicate ``start + j`` (vectorized over rows and a block of predicates)."""
    n = max(x.shape[0], 1)
    step = max(1, _BLOCK // n)
    has_nan = np.isnan(x).any(axis=0)
    for start in range(0, preds.size, step):
        p = preds.take(np.arange(start, min(start + step, preds.size)))
        mask = np.ones((x.shape[0], p.size), dtype=bool)
        for s in range(p.col.shape[1]):
            c = p.col[:, s]
            xs = x[:, c]
            cond = ((xs >= p.lo[:, s]) & (xs <= p.hi[:, s])) != p.neg[:, s]
            if has_nan[c].any():
                cond = np.where(np.isnan(xs), p.nul[:, s], cond)
            mask &= cond
        yield start, mask


@njit(cache=True)
def _count_capped(x, col, lo, hi, neg, nul, cap):  # pragma: no cover - compiled
    """Rows of ``x`` matching each predicate (see :class:`_Predicates`), counting stopped at
    ``cap``: a predicate is dropped as soon as it matched ``cap`` rows, so screening many
    candidates for "matches exactly one row" costs little for the many that match several."""
    q, m = col.shape
    out = np.zeros(q, dtype=np.int64)
    for i in range(q):
        count = 0
        for r in range(x.shape[0]):
            ok = True
            for s in range(m):
                v = x[r, col[i, s]]
                if v != v:  # missing
                    ok = nul[i, s]
                else:
                    ok = ((v >= lo[i, s]) and (v <= hi[i, s])) != neg[i, s]
                if not ok:
                    break
            if ok:
                count += 1
                if count >= cap:
                    break
        out[i] = count
    return out


def _singles_out(x: np.ndarray, preds: _Predicates) -> np.ndarray:
    """Whether each predicate matches exactly one row of ``x``."""
    if preds.size == 0:
        return np.zeros(0, dtype=bool)
    col, lo, hi, neg, nul = (np.ascontiguousarray(a) for a in preds)
    x = np.ascontiguousarray(x, dtype=np.float64)
    return _count_capped(x, col, lo, hi, neg, nul, 2) == 1


def _encode(frames: Sequence[pd.DataFrame], cols: Sequence[str]) -> tuple[list[np.ndarray], list]:
    """Each frame as a float matrix: numbers as they are, other columns as category codes
    shared by the frames (compared as text), a missing value as NaN. Duplicate records are
    dropped from each frame (first occurrence kept), as anonymeter does."""
    numeric = []
    blocks: list[list[np.ndarray]] = [[] for _ in frames]
    for c in cols:
        if all(is_numeric(f[c]) for f in frames):
            numeric.append(True)
            for out, f in zip(blocks, frames, strict=True):
                out.append(f[c].to_numpy(dtype=np.float64, na_value=np.nan))
        else:
            numeric.append(False)
            codes, _ = pd.factorize(np.concatenate([as_text(f[c]) for f in frames]))
            codes = codes.astype(np.float64)
            start = 0
            for out, f in zip(blocks, frames, strict=True):
                part = codes[start : start + len(f)]
                start += len(f)
                out.append(np.where(pd.isna(f[c]).to_numpy(), np.nan, part))
    mats = []
    for b in blocks:
        m = pd.DataFrame(np.column_stack(b)).drop_duplicates()
        mats.append(m.to_numpy(dtype=np.float64))
    return mats, numeric


def _univariate_candidates(syn: np.ndarray, numeric: list[bool]) -> _Predicates:
    """Anonymeter's univariate queries from the synthetic data (Giomi et al. 2023, singling
    out): per column, "is missing" when exactly one value is missing, ``<= min`` and ``>= max``
    for numbers, and ``== v`` for every value ``v`` held by exactly one synthetic record."""
    cols, vals, ops = [], [], []
    for j, num in enumerate(numeric):
        v = syn[:, j]
        present = v[~np.isnan(v)]
        if len(present) == len(v) - 1:
            cols.append(j)
            vals.append(np.nan)
            ops.append(_EQ)
        if num and len(present):
            cols += [j, j]
            vals += [present.min(), present.max()]
            ops += [_LE, _GE]
        uniq, cnt = np.unique(present, return_counts=True)
        rare = uniq[cnt == 1]
        cols += [j] * len(rare)
        vals += rare.tolist()
        ops += [_EQ] * len(rare)
    return _conditions(
        np.asarray(cols, dtype=np.intp)[:, None],
        np.asarray(vals, dtype=np.float64)[:, None],
        np.asarray(ops, dtype=np.int64)[:, None],
    )


def _random_columns(rng: np.random.Generator, n: int, p: int, k: int) -> np.ndarray:
    """``n`` rows of ``k`` distinct column indices out of ``p``, sorted within each row."""
    return np.sort(np.argsort(rng.random((n, p)), axis=1)[:, :k], axis=1)


def _multivariate_candidates(
    rng: np.random.Generator,
    syn: np.ndarray,
    numeric: np.ndarray,
    medians: np.ndarray,
    b: int,
    k: int,
) -> _Predicates:
    """Anonymeter's multivariate queries (Giomi et al. 2023, singling out): a random synthetic
    record and ``k`` random columns; a category must equal the record's value, a number must
    be ``>=`` it when it is above the column's synthetic median and ``<=`` it otherwise (the
    more extreme side), a missing value must be missing."""
    rows = rng.integers(0, syn.shape[0], size=b)
    cols = _random_columns(rng, b, syn.shape[1], k)
    vals = syn[rows[:, None], cols]
    extreme = np.where(vals > medians[cols], _GE, _LE)
    ops = np.where(numeric[cols] & ~np.isnan(vals), extreme, _EQ)
    return _conditions(cols, vals, ops)


def _random_predicates(
    rng: np.random.Generator, syn: np.ndarray, numeric: np.ndarray, n: int, k: int
) -> _Predicates:
    """The baseline's random queries (anonymeter): ``k`` random columns, each with a value
    drawn uniformly from the column's distinct synthetic values (missing included) and an
    operator drawn uniformly from ``==, !=`` for categories and ``==, !=, <, <=, >, >=`` for
    numbers."""
    cols = _random_columns(rng, n, syn.shape[1], k)
    vals = np.empty(cols.shape)
    for j in range(syn.shape[1]):  # one pass per column, vectorized over the predicates
        at = cols == j
        if at.any():
            distinct = pd.unique(syn[:, j])  # NaN once, as a value of its own
            vals[at] = distinct[rng.integers(0, len(distinct), size=int(at.sum()))]
    n_ops = np.where(numeric[cols], 6, 2)
    ops = np.floor(rng.random(cols.shape) * n_ops).astype(np.int64)
    return _conditions(cols, vals, ops)


def _singling_out_probability_integral(n: np.ndarray | float, w: np.ndarray | float):
    """``int_0^w P(v, n) dv`` for the probability ``P(v, n) = n v (1 - v)^(n - 1)`` that a
    predicate of weight ``v`` isolates exactly one of ``n`` records (Cohen & Nissim 2020,
    "Towards formalizing the GDPR's notion of singling out", *PNAS* 117(15), 8344-8352):
    ``(1 - (n w + 1)(1 - w)^n) / (n + 1)``."""
    return (1.0 - (n * w + 1.0) * (1.0 - w) ** n) / (n + 1.0)


def _control_size_correction(
    rng: np.random.Generator, control: np.ndarray, preds: _Predicates, n_target: int
) -> float | None:
    """Factor scaling the control successes to a control set of the training set's size
    (Giomi et al. 2023 / anonymeter): count the predicates isolating one record in random
    subsets of the control set (10 sizes from ``min(1000, n)`` to ``n``, 5 draws each), fit
    ``N(n) = a * int_0^w P(v, n) dv`` over ``(w, a)`` and return ``N(n_train) / N(n_control)``
    (``None`` when the fit fails)."""
    from scipy.optimize import curve_fit

    n_c = control.shape[0]
    rows, which = [], []  # the (row, predicate) pairs that match: few, as the predicates are rare
    for start, mask in _matches(control, preds):
        r, q = np.nonzero(mask)
        rows.append(r)
        which.append(q + start)
    row, pred = np.concatenate(rows), np.concatenate(which)
    sizes = np.repeat(np.linspace(min(1000, n_c), n_c, 10).astype(int), 5)
    hits = np.empty(len(sizes), dtype=np.int64)
    for i, size in enumerate(sizes):
        chosen = np.zeros(n_c, dtype=bool)
        chosen[rng.choice(n_c, size, replace=False)] = True
        hits[i] = int((np.bincount(pred[chosen[row]], minlength=preds.size) == 1).sum())

    def model(x, w, a):
        return a * _singling_out_probability_integral(x, w)

    w0 = 1.0 / sizes.max()
    a0 = 1.0 / _singling_out_probability_integral(sizes.max(), w0)
    try:
        (w, a), _ = curve_fit(
            model, sizes.astype(np.float64), hits.astype(np.float64), p0=(w0, a0),
            bounds=(0, (1, np.inf)),
        )  # fmt: skip
    except (RuntimeError, ValueError):
        return None
    den = model(float(n_c), w, a)
    if not np.isfinite(den) or den <= 0:
        return None
    return float(model(float(n_target), w, a) / den)


def singling_out(
    original: pd.DataFrame,
    synthetic: pd.DataFrame,
    control: pd.DataFrame,
    n_attacks: int = 500,
    mode: str = "multivariate",
    n_cols: int = 3,
    seed: int | np.random.Generator = 0,
    *,
    columns: Sequence[str] | None = None,
    max_attempts: int = 100_000,
    confidence_level: float = 0.95,
) -> AttackResult:
    """The singling-out attack of Giomi et al. (2023) (anonymeter's ``SinglingOutEvaluator``).

    A predicate *singles out* in a data set when exactly one of its (distinct) records matches
    it. The attacker builds up to ``n_attacks`` distinct predicates that single out in the
    synthetic data -- ``mode="univariate"``: rare values and extremes of one column
    (:func:`_univariate_candidates`); ``"multivariate"``: conjunctions of conditions on
    ``n_cols`` columns taken from random synthetic records, numbers on their more extreme side
    (:func:`_multivariate_candidates`), drawn until ``n_attacks`` are found or
    ``max_attempts`` candidates are spent. The main successes are the predicates that single
    out in ``original`` (the training data), the control successes those that single out in
    ``control``, scaled to the training set's size by the fitted singling-out model of Cohen &
    Nissim (2020) when the two sizes differ (:func:`_control_size_correction`); the baseline
    draws ``n_attacks`` random predicates (:func:`_random_predicates`, one column in
    univariate mode) and counts those singling out in ``original``. Every rate is out of
    ``n_attacks``, as in anonymeter: a predicate the attacker could not build is a failed
    attack (``details["n_queries"]`` is the number built). Duplicate records are dropped
    from each data set first.

    Columns: all of ``original``'s (or ``columns``); a column numeric in every data set takes
    order comparisons, the others compare as text. Raises :class:`~sdckit.errors.DataError`
    for an empty data set or a missing column and :class:`~sdckit.errors.ParameterError` for a
    bad parameter.
    """
    what = "singling out"
    _check_confidence(confidence_level)
    if mode not in ("univariate", "multivariate"):
        raise ParameterError(
            f"{what}: parameter 'mode' must be 'univariate' or 'multivariate', got {mode!r}"
        )
    cols = _check_frames(
        what, {"original": original, "synthetic": synthetic, "control": control}, columns
    )
    n_attacks = _check_int("n_attacks", n_attacks, 1, what=what)
    n_cols = _check_int("n_cols", n_cols, 1, len(cols), what=what)
    max_attempts = _check_int("max_attempts", max_attempts, 1, what=what)
    rng = _rng(seed)
    (ori, syn, ctl), numeric_list = _encode([original, synthetic, control], cols)
    numeric = np.asarray(numeric_list, dtype=bool)
    # rows in random order: counting stops early on a predicate matching two rows
    ori, syn, ctl = (m[rng.permutation(m.shape[0])] for m in (ori, syn, ctl))

    if mode == "univariate":
        cand = _univariate_candidates(syn, numeric_list)
        cand = cand.take(rng.permutation(cand.size))
        keep = np.flatnonzero(_singles_out(syn, cand))
        _, first = np.unique(cand.take(keep).keys(), return_index=True)
        queries = cand.take(keep[np.sort(first)][:n_attacks])
        attempts = cand.size
    else:
        medians = np.full(len(cols), np.nan)
        if numeric.any():
            with np.errstate(all="ignore"):
                sub = syn[:, numeric]
                medians[numeric] = [
                    np.median(v[~np.isnan(v)]) if (~np.isnan(v)).any() else np.nan for v in sub.T
                ]
        found: list[_Predicates] = []
        seen: set[bytes] = set()
        n_found = attempts = 0
        batch = 1000
        while n_found < n_attacks and attempts < max_attempts:
            b = min(batch, max_attempts - attempts)
            cand = _multivariate_candidates(rng, syn, numeric, medians, b, n_cols)
            attempts += b
            single = np.flatnonzero(_singles_out(syn, cand))
            fresh = []
            for i, key in zip(single, cand.take(single).keys(), strict=True):
                k = key.tobytes()
                if k not in seen:
                    seen.add(k)
                    fresh.append(i)
                    if n_found + len(fresh) == n_attacks:
                        break
            found.append(cand.take(np.asarray(fresh, dtype=np.intp)))
            n_found += len(fresh)
        queries = _concat(found) if found else _conditions(*(np.empty((0, n_cols)),) * 3)

    n_success = int(_singles_out(ori, queries).sum())
    base = _random_predicates(rng, syn, numeric, n_attacks, 1 if mode == "univariate" else n_cols)
    n_baseline = int(_singles_out(ori, base).sum())
    n_control: float = int(_singles_out(ctl, queries).sum())
    n_control_raw, correction = int(n_control), None
    if n_control > 0 and ctl.shape[0] != ori.shape[0]:
        correction = _control_size_correction(rng, ctl, queries, ori.shape[0])
        if correction is not None:
            n_control = min(n_control * correction, float(n_attacks))
    return _result(
        f"singling_out ({mode})",
        (n_success, n_baseline, n_control),
        (n_attacks, n_attacks, n_attacks),
        confidence_level,
        {
            "mode": mode,
            "n_cols": 1 if mode == "univariate" else n_cols,
            "n_queries": queries.size,
            "attempts": attempts,
            "n_control_raw": n_control_raw,
            "control_correction": correction,
            "n_original_distinct": int(ori.shape[0]),
            "n_control_distinct": int(ctl.shape[0]),
        },
    )


# --------------------------------------------------------------------------------------------
# nearest neighbours in Gower space
# --------------------------------------------------------------------------------------------
def _space(frames: Sequence[pd.DataFrame], cols: Sequence[str], reference: pd.DataFrame):
    """``frames`` as matrices whose Manhattan distances are Gower distances times the number
    of columns (:func:`sdckit.risk.synthetic._gower_space`, numbers scaled by the
    ``reference`` range, a category mismatch 1). Wide one-hot blocks (many distinct categories)
    are built sparse instead of dense, with the same distances."""
    from scipy import sparse

    from sdckit.risk.synthetic import _gower_space

    rows = sum(len(f) for f in frames)
    width = sum(
        1
        if all(is_numeric(f[c]) for f in frames)
        else len(pd.unique(np.concatenate([as_text(f[c]) for f in frames])))
        for c in cols
    )
    if rows * width <= _DENSE_LIMIT:
        return _gower_space(frames, cols, reference)
    blocks: list[list[Any]] = [[] for _ in frames]
    for c in cols:
        if all(is_numeric(f[c]) for f in frames):
            for out, x in zip(blocks, _gower_space(frames, [c], reference), strict=True):
                out.append(sparse.csr_matrix(x))
        else:
            texts = [as_text(f[c]) for f in frames]
            codes, uniques = pd.factorize(np.concatenate(texts))
            start = 0
            for out, t in zip(blocks, texts, strict=True):
                part = codes[start : start + len(t)]
                start += len(t)
                out.append(
                    sparse.csr_matrix(
                        (np.full(len(t), 0.5), (np.arange(len(t)), part)),
                        shape=(len(t), len(uniques)),
                    )
                )
    return [sparse.hstack(b, format="csr") for b in blocks]


def _neighbours(syn: Any, queries: Sequence[Any], priority: np.ndarray, k: int) -> list[np.ndarray]:
    """Indices of the ``k`` synthetic records closest to each query row (Manhattan distance in
    Gower space), ties broken by ``priority`` (one small random offset per synthetic record,
    added as an extra coordinate the queries hold at 0)."""
    from scipy import sparse
    from sklearn.neighbors import NearestNeighbors

    if sparse.issparse(syn):
        fit = sparse.hstack([syn, sparse.csr_matrix(priority[:, None])], format="csr")
        qs = [sparse.hstack([q, sparse.csr_matrix((q.shape[0], 1))], format="csr") for q in queries]
    else:
        fit = np.hstack([syn, priority[:, None]])
        qs = [np.hstack([q, np.zeros((q.shape[0], 1))]) for q in queries]
    nn = NearestNeighbors(n_neighbors=k, metric="manhattan").fit(fit)
    return [nn.kneighbors(q, return_distance=False) for q in qs]


def _targets(rng: np.random.Generator, frame: pd.DataFrame, n: int) -> pd.DataFrame:
    """``n`` records drawn without replacement."""
    return frame.iloc[np.sort(rng.choice(len(frame), size=n, replace=False))]


def _random_sets(rng: np.random.Generator, n_pool: int, n: int, k: int) -> np.ndarray:
    """``n`` rows of ``k`` distinct indices out of ``n_pool`` (rows with a repeat redrawn)."""
    out = rng.integers(0, n_pool, size=(n, k))
    while k > 1:
        s = np.sort(out, axis=1)
        bad = np.flatnonzero((s[:, 1:] == s[:, :-1]).any(axis=1))
        if not len(bad):
            break
        out[bad] = rng.integers(0, n_pool, size=(len(bad), k))
    return out


def _shared(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Whether rows ``a[i]`` and ``b[i]`` share an index."""
    return (a[:, :, None] == b[:, None, :]).any(axis=(1, 2))


# --------------------------------------------------------------------------------------------
# linkability
# --------------------------------------------------------------------------------------------
def linkability(
    original: pd.DataFrame,
    synthetic: pd.DataFrame,
    control: pd.DataFrame,
    aux_columns: tuple[Sequence[str], Sequence[str]],
    n_attacks: int = 500,
    n_neighbors: int = 1,
    seed: int | np.random.Generator = 0,
    *,
    confidence_level: float = 0.95,
) -> AttackResult:
    """The linkability attack of Giomi et al. (2023) (anonymeter's ``LinkabilityEvaluator``).

    The attacker holds two data sets about the same people that share no column:
    ``aux_columns = (columns_a, columns_b)``. For each of ``n_attacks`` target records drawn
    from ``original`` (without replacement, at most all of them) it looks up the
    ``n_neighbors`` synthetic records closest to the target's ``columns_a`` values and those
    closest to its ``columns_b`` values (Gower distance); the two halves are *linked* when the
    two neighbour sets share a synthetic record. The control attack does the same for targets
    drawn from ``control``; the baseline attacker picks two random sets of ``n_neighbors``
    synthetic records. Raises :class:`~sdckit.errors.DataError` for an empty data set or a
    missing column, :class:`~sdckit.errors.ParameterError` for overlapping or empty column
    sets or a bad parameter.
    """
    what = "linkability"
    _check_confidence(confidence_level)
    if (
        not isinstance(aux_columns, tuple | list)
        or len(aux_columns) != 2
        or any(isinstance(s, str) or not isinstance(s, Sequence) for s in aux_columns)
    ):
        raise ParameterError(
            f"{what}: parameter 'aux_columns' must be two lists of column names, "
            f"got {aux_columns!r}"
        )
    cols_a, cols_b = list(aux_columns[0]), list(aux_columns[1])
    if not cols_a or not cols_b:
        raise ParameterError(f"{what}: parameter 'aux_columns' needs two non-empty column sets")
    overlap = sorted(set(cols_a) & set(cols_b), key=str)
    if overlap:
        raise ParameterError(
            f"{what}: parameter 'aux_columns': the two column sets must be disjoint, but "
            f"{preview(overlap)} appear in both"
        )
    frames = {"original": original, "synthetic": synthetic, "control": control}
    _check_frames(what, frames, cols_a + cols_b)
    n_attacks = _check_int("n_attacks", n_attacks, 1, what=what)
    k = _check_int("n_neighbors", n_neighbors, 1, len(synthetic), what=what)
    rng = _rng(seed)
    n_main, n_ctrl = min(n_attacks, len(original)), min(n_attacks, len(control))
    t_main, t_ctrl = _targets(rng, original, n_main), _targets(rng, control, n_ctrl)
    priority = rng.random(len(synthetic)) * _TIE_EPS
    found = []
    for cols in (cols_a, cols_b):
        syn_x, main_x, ctrl_x = _space([synthetic, t_main, t_ctrl], cols, synthetic)
        found.append(_neighbours(syn_x, [main_x, ctrl_x], priority, k))
    n_success = int(_shared(found[0][0], found[1][0]).sum())
    n_control = int(_shared(found[0][1], found[1][1]).sum())
    base = _shared(
        _random_sets(rng, len(synthetic), n_main, k), _random_sets(rng, len(synthetic), n_main, k)
    )
    return _result(
        what,
        (n_success, int(base.sum()), n_control),
        (n_main, n_main, n_ctrl),
        confidence_level,
        {"n_neighbors": k, "aux_columns": [cols_a, cols_b]},
    )


# --------------------------------------------------------------------------------------------
# inference
# --------------------------------------------------------------------------------------------
def _correct(guess: pd.Series, secret: pd.Series, regression: bool, tolerance: float):
    """Whether each guess is right (anonymeter): both missing, or for a categorical secret the
    same value (compared as text), for a numeric one ``|guess - secret| <= tolerance * |guess|``
    (a relative error, taken relative to the guess as anonymeter does)."""
    g_na, s_na = pd.isna(guess).to_numpy(), pd.isna(secret).to_numpy()
    if regression:
        g = guess.to_numpy(dtype=np.float64, na_value=np.nan)
        s = secret.to_numpy(dtype=np.float64, na_value=np.nan)
        with np.errstate(invalid="ignore"):
            hit = np.abs(g - s) <= tolerance * (np.abs(g) + 1e-12)
    else:
        hit = (as_text(guess) == as_text(secret)) & ~g_na & ~s_na
    return hit | (g_na & s_na)


def inference(
    original: pd.DataFrame,
    synthetic: pd.DataFrame,
    control: pd.DataFrame,
    aux_columns: Sequence[str],
    secret: str,
    n_attacks: int = 500,
    regression: bool | None = None,
    seed: int | np.random.Generator = 0,
    *,
    tolerance: float = 0.05,
    confidence_level: float = 0.95,
) -> AttackResult:
    """The inference attack of Giomi et al. (2023) (anonymeter's ``InferenceEvaluator`` with
    its default nearest-neighbour model).

    The attacker knows the ``aux_columns`` values of a target and guesses its ``secret`` as
    the secret of the closest synthetic record on those columns (Gower distance). Main attack:
    ``n_attacks`` targets drawn from ``original`` (without replacement, at most all of them);
    control attack: targets drawn from ``control``; baseline: as many targets from
    ``original`` guessed with the secrets of random synthetic records. A guess is right when
    it equals the secret (categorical; ``regression=False``) or lies within ``tolerance`` of
    it relative to the guess (numeric; ``regression=True``; ``None`` decides from the
    secret's dtype); two missing values agree. Raises :class:`~sdckit.errors.DataError` for an
    empty data set or a missing column, :class:`~sdckit.errors.ParameterError` when the secret
    is among the auxiliary columns or a parameter is bad.
    """
    what = "inference"
    _check_confidence(confidence_level)
    aux = [aux_columns] if isinstance(aux_columns, str) else list(aux_columns)
    if not aux:
        raise ParameterError(f"{what}: parameter 'aux_columns' needs at least one column")
    if not isinstance(secret, str):
        raise ParameterError(f"{what}: parameter 'secret' must be one column name, got {secret!r}")
    if secret in aux:
        raise ParameterError(
            f"{what}: parameter 'secret' ({secret!r}) must not be one of the 'aux_columns'"
        )
    if not isinstance(tolerance, int | float) or not tolerance >= 0:
        raise ParameterError(f"{what}: parameter 'tolerance' must be >= 0, got {tolerance!r}")
    frames = {"original": original, "synthetic": synthetic, "control": control}
    _check_frames(what, frames, [*aux, secret])
    n_attacks = _check_int("n_attacks", n_attacks, 1, what=what)
    if regression is None:
        regression = is_numeric(original[secret])
    elif regression and not all(is_numeric(f[secret]) for f in frames.values()):
        raise ParameterError(
            f"{what}: parameter 'regression' is true but the secret {secret!r} is not numeric "
            "in every data set"
        )
    rng = _rng(seed)
    n_main, n_ctrl = min(n_attacks, len(original)), min(n_attacks, len(control))
    n_base = min(n_main, len(synthetic))
    t_base = _targets(rng, original, n_base)
    guess_base = synthetic[secret].iloc[rng.choice(len(synthetic), size=n_base, replace=False)]
    t_main, t_ctrl = _targets(rng, original, n_main), _targets(rng, control, n_ctrl)
    priority = rng.random(len(synthetic)) * _TIE_EPS
    syn_x, main_x, ctrl_x = _space([synthetic, t_main, t_ctrl], aux, synthetic)
    idx_main, idx_ctrl = _neighbours(syn_x, [main_x, ctrl_x], priority, 1)
    syn_secret = synthetic[secret]

    def hits(idx: np.ndarray, targets: pd.DataFrame) -> int:
        guess = syn_secret.iloc[idx[:, 0]].reset_index(drop=True)
        truth = targets[secret].reset_index(drop=True)
        return int(_correct(guess, truth, bool(regression), float(tolerance)).sum())

    base_hits = _correct(
        guess_base.reset_index(drop=True),
        t_base[secret].reset_index(drop=True),
        bool(regression),
        float(tolerance),
    )
    return _result(
        what,
        (hits(idx_main, t_main), int(base_hits.sum()), hits(idx_ctrl, t_ctrl)),
        (n_main, n_base, n_ctrl),
        confidence_level,
        {"secret": secret, "aux_columns": aux, "regression": bool(regression)},
    )
