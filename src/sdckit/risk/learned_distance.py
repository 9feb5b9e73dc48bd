"""Worst-case record linkage with learned distances (supervised metric learning by MILP).

Abril, Navarro-Arribas & Torra (2012), "Improving record linkage with supervised learning
for disclosure risk assessment", *Information Fusion* 13(4):274-284, and Abril,
Navarro-Arribas & Torra (2012), "Choquet integral for record linkage", *Annals of Operations
Research* 195:97-110 (also Torra, *Data Privacy*, Springer 2017, sec. 6.1.3): the data
protector, knowing the true correspondence, chooses the parameters ``p`` of a parametric
distance ``d_p`` that maximize the number of correct links, giving an upper bound on what any
intruder using that family of distances can achieve. The problem is the MILP::

    minimize    sum_i K_i
    subject to  d_p(a_i, b_j) - d_p(a_i, b_i) + C_i K_i >= eps   for all i, j != i
                K_i in {0, 1},  p in the parameter set of the family,

where ``K_i = 0`` forces record ``i`` to be strictly nearest to its own protected record.
Every distance is linear in ``p`` on the per-attribute squared differences
``s_k = (a_k - b_k)^2`` of z-scored attributes (standardized with the original's mean/sd):

* weighted mean: ``d = sum_k p_k s_k`` with ``p >= 0, sum p = 1``;
* OWA (Yager 1988): ``d = sum_k p_k s_(k)`` with ``s_(1) >= s_(2) >= ...`` (descending);
* Choquet integral: ``d = sum_k (s_(k) - s_(k-1)) mu(A_(k))`` with ``s`` ascending,
  ``A_(k)`` the attributes of the ``d - k + 1`` largest differences, and ``mu`` a fuzzy
  measure: ``mu(empty) = 0``, ``mu(all) = 1``, ``mu(A) <= mu(A + {x})``.

Each of them is at most ``max_k s_k`` (a normalized aggregation), so ``C_i = max_k
s_k(a_i, b_i) + eps`` is a valid big-M. Solved with ``scipy.optimize.milp`` (HiGHS).
For large files only the ``n_candidates`` nearest protected records (Euclidean) of each
``a_i`` start as constraints; constraints violated by the solution are then added and the
MILP re-solved (constraint generation) until none is violated (then the restricted optimum
is optimal for the full problem) or ``max_rounds`` is reached.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy import sparse
from scipy.optimize import LinearConstraint
from scipy.spatial import cKDTree

from sdckit.core.solver import milp
from sdckit.errors import DataError, NoSolutionError, SdcInputError, VerificationError
from sdckit.risk.linkage import (
    align_pair,
    distance_linkage,
    numeric_block,
    original_scale,
    resolve_columns,
)

Family = Literal["weighted_mean", "owa", "choquet"]
#: Largest number of attributes for the Choquet integral (2^d - 1 measure values).
MAX_CHOQUET_ATTRIBUTES = 10


_EVAL_CHUNK = 2_000_000


@dataclass(frozen=True)
class LearnedDistanceResult:
    """Learned distance parameters and the linkage they achieve.

    ``linked_share``: share of records whose nearest protected record under the learned
    distance is their own (exact evaluation over all pairs, ties ``1/t``);
    ``milp_linked_share``: ``(n - sum K) / n`` from the MILP; ``euclidean_share`` and
    ``mahalanobis_share``: plain DBRL for comparison (None if the covariance is singular);
    Mahalanobis uses the covariance of the differences ``x - x'`` (Torra, Abowd &
    Domingo-Ferrer 2006), the Mahalanobis record linkage of the disclosure-risk literature.
    ``weights``: per column (weighted mean), per rank position (OWA, largest difference
    first) or per subset ``"a+b"`` (Choquet measure, all ``2^d - 1`` non-empty subsets).
    """

    family: str
    weights: dict[str, float]
    linked_share: float
    milp_linked_share: float
    euclidean_share: float
    mahalanobis_share: float | None
    optimal: bool
    exact: bool
    status: str
    n_records: int
    n_constraints: int
    rounds: int
    seconds: float
    epsilon: float
    columns: list[str]
    parameters: np.ndarray
    k: np.ndarray

    def to_dict(self) -> dict:
        """JSON-ready summary."""
        return {
            "family": self.family,
            "weights": {k: float(v) for k, v in self.weights.items()},
            "linked_share": float(self.linked_share),
            "milp_linked_share": float(self.milp_linked_share),
            "euclidean_share": float(self.euclidean_share),
            "mahalanobis_share": (
                None if self.mahalanobis_share is None else float(self.mahalanobis_share)
            ),
            "optimal": bool(self.optimal),
            "exact": bool(self.exact),
            "status": self.status,
            "n_records": int(self.n_records),
            "n_constraints": int(self.n_constraints),
            "rounds": int(self.rounds),
            "seconds": float(self.seconds),
            "epsilon": float(self.epsilon),
            "columns": list(self.columns),
        }


# --------------------------------------------------------------------------------------------
# distances linear in their parameters
# --------------------------------------------------------------------------------------------
def n_parameters(family: Family, d: int) -> int:
    """Number of parameters: ``d`` (weighted mean, OWA) or ``2^d - 1`` (Choquet)."""
    return (1 << d) - 1 if family == "choquet" else d


def feature_matrix(family: Family, s: np.ndarray) -> sparse.csr_matrix:
    """Rows ``phi(s)`` with ``d_p(s) = phi(s) @ p`` for squared differences ``s`` (m x d).

    Choquet columns are indexed by subset bitmask minus one (bit ``k`` = attribute ``k``).
    """
    m, d = s.shape
    if family == "weighted_mean":
        return sparse.csr_matrix(s)
    if family == "owa":
        return sparse.csr_matrix(-np.sort(-s, axis=1))
    order = np.argsort(s, axis=1, kind="stable")
    srt = np.take_along_axis(s, order, axis=1)
    inc = np.diff(srt, axis=1, prepend=0.0)
    bit = np.left_shift(np.int64(1), order.astype(np.int64))
    masks = np.bitwise_or.accumulate(bit[:, ::-1], axis=1)[:, ::-1]
    rows = np.repeat(np.arange(m), d)
    return sparse.csr_matrix(
        (inc.ravel(), (rows, masks.ravel() - 1)), shape=(m, n_parameters(family, d))
    )


def learned_distances(family: Family, s: np.ndarray, params: np.ndarray) -> np.ndarray:
    """``d_p`` of every row of squared differences ``s`` (see :func:`feature_matrix`)."""
    return np.asarray(feature_matrix(family, s) @ params).ravel()


def _check_params(family: Family, params: np.ndarray, d: int) -> None:
    """Sanity of the solver's parameters (independent re-check; tolerance 1e-6)."""
    if (params < -1e-6).any():
        raise VerificationError(f"learned {family} parameters are negative: {params.min()}")
    if family == "choquet":
        full = (1 << d) - 1
        if abs(params[full - 1] - 1.0) > 1e-6:
            raise VerificationError("learned fuzzy measure has mu(all) != 1")
        masks = np.arange(1, full + 1)
        for x in range(d):
            sub = masks[(masks >> x) & 1 == 0]
            if (params[sub - 1] - params[(sub | (1 << x)) - 1] > 1e-6).any():
                raise VerificationError("learned fuzzy measure is not monotone")
    elif abs(params.sum() - 1.0) > 1e-6:
        raise VerificationError(f"learned {family} weights sum to {params.sum()}, not 1")


def _pair_squares(x: np.ndarray, y: np.ndarray, ia: np.ndarray, ib: np.ndarray) -> np.ndarray:
    return (x[ia] - y[ib]) ** 2


def nearest_share(family: Family, x: np.ndarray, y: np.ndarray, params: np.ndarray) -> float:
    """Share of records ``i`` whose nearest ``y`` under ``d_p`` is ``y_i`` (ties ``1/t``)."""
    n, d = x.shape
    rows_per = max(1, _EVAL_CHUNK // max(1, n))
    credit = 0.0
    for start in range(0, n, rows_per):
        stop = min(n, start + rows_per)
        ia = np.repeat(np.arange(start, stop), n)
        ib = np.tile(np.arange(n), stop - start)
        dist = learned_distances(family, _pair_squares(x, y, ia, ib), params).reshape(-1, n)
        dmin = dist.min(axis=1)
        tied = dist <= (dmin + 1e-12 * (1.0 + dmin))[:, None]
        own = tied[np.arange(stop - start), np.arange(start, stop)]
        credit += float((own / tied.sum(axis=1)).sum())
    return credit / n


def _violations(family, x, y, params, k_vals, eps, known: np.ndarray, per_record: int):
    """Pairs ``(i, j)``, ``j != i``, not yet constrained (``known`` holds sorted codes
    ``i * n + j``), with ``K_i = 0`` and ``d(a_i, b_j) - d(a_i, b_i) < eps``; per record at
    most ``per_record``, most violating first. Returns two index arrays."""
    n = x.shape[0]
    rows_per = max(1, _EVAL_CHUNK // max(1, n))
    out_i: list[np.ndarray] = []
    out_j: list[np.ndarray] = []
    for start in range(0, n, rows_per):
        stop = min(n, start + rows_per)
        ia = np.repeat(np.arange(start, stop), n)
        ib = np.tile(np.arange(n), stop - start)
        dist = learned_distances(family, _pair_squares(x, y, ia, ib), params).reshape(-1, n)
        own = dist[np.arange(stop - start), np.arange(start, stop)]
        slack = (dist - own[:, None]).ravel()
        bad = (slack < eps * (1 - 1e-6)) & (ia != ib) & (k_vals[ia] < 0.5)
        bad &= ~np.isin(ia * n + ib, known, assume_unique=False)
        vi, vj, vs = ia[bad], ib[bad], slack[bad]
        order = np.lexsort((vs, vi))  # by record, most violating first
        vi, vj = vi[order], vj[order]
        first = np.searchsorted(vi, vi, side="left")
        keep = np.arange(vi.size) - first < per_record
        out_i.append(vi[keep])
        out_j.append(vj[keep])
    return np.concatenate(out_i), np.concatenate(out_j)


def _build_constraints(family, x, y, pairs_i, pairs_j, eps):
    """Sparse rows ``[phi(a_i,b_j) - phi(a_i,b_i), C_i e_i]`` with lower bound ``eps``."""
    n = x.shape[0]
    own_s = (x - y) ** 2
    c_big = own_s.max(axis=1) + eps
    f_other = feature_matrix(family, _pair_squares(x, y, pairs_i, pairs_j))
    f_own = feature_matrix(family, own_s)[pairs_i]
    m = pairs_i.size
    k_part = sparse.csr_matrix((c_big[pairs_i], (np.arange(m), pairs_i)), shape=(m, n))
    a = sparse.hstack([f_other - f_own, k_part], format="csr")
    return a, np.full(m, eps), np.full(m, np.inf)


def _structure_constraints(family, d, n):
    """Sum-to-one (weighted mean, OWA) or normalization + monotonicity (Choquet) rows."""
    q = n_parameters(family, d)
    if family != "choquet":
        a = sparse.csr_matrix(np.concatenate([np.ones(q), np.zeros(n)])[None, :])
        return [LinearConstraint(a, 1.0, 1.0)]
    full = (1 << d) - 1
    norm = sparse.csr_matrix(([1.0], ([0], [full - 1])), shape=(1, q + n))
    rows, cols, vals = [], [], []
    r = 0
    masks = np.arange(1, full)
    for x in range(d):
        sub = masks[(masks >> x) & 1 == 0]
        sup = sub | (1 << x)
        idx = np.arange(r, r + sub.size)
        rows += [idx, idx]
        cols += [sub - 1, sup - 1]
        vals += [np.ones(sub.size), -np.ones(sub.size)]
        r += sub.size
    mono = sparse.csr_matrix(
        (np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))), shape=(r, q + n)
    )
    return [LinearConstraint(norm, 1.0, 1.0), LinearConstraint(mono, -np.inf, 0.0)]


def _format_weights(family, params, cols):
    if family == "weighted_mean":
        return dict(zip(cols, params.tolist(), strict=True))
    if family == "owa":
        return {f"rank_{k + 1}": float(v) for k, v in enumerate(params)}
    d = len(cols)
    out = {}
    for mask in range(1, 1 << d):
        name = "+".join(cols[k] for k in range(d) if (mask >> k) & 1)
        out[name] = float(params[mask - 1])
    return out


def learned_distance_linkage(
    original: pd.DataFrame,
    protected: pd.DataFrame,
    columns: str | Sequence[str] | None = None,
    family: Family = "weighted_mean",
    time_limit: float = 60.0,
    epsilon: float = 1e-4,
    n_candidates: int | None = None,
    exact_limit: int = 300,
    max_rounds: int = 20,
) -> LearnedDistanceResult:
    """Learn the distance of ``family`` that links the most records (worst-case DBRL).

    Abril, Navarro-Arribas & Torra (2012); see the module docstring for the MILP. Files of
    up to ``exact_limit`` records get all ``n (n - 1)`` constraints; larger ones start with
    the ``n_candidates`` (default 30) Euclidean-nearest protected records of each record and
    add violated constraints round by round (``max_rounds``). ``time_limit`` (seconds) bounds
    the whole HiGHS effort; the best solution found is returned with ``optimal=False`` when
    it is hit. ``epsilon`` is the margin replacing the strict inequality.
    Returns the learned parameters, the exact share of correct links they give, and the
    plain Euclidean and Mahalanobis DBRL for comparison.
    """
    if family not in ("weighted_mean", "owa", "choquet"):
        raise SdcInputError(
            f"family={family!r} is unknown; use 'weighted_mean', 'owa' or 'choquet'"
        )
    for name, v in (("time_limit", time_limit), ("epsilon", epsilon)):
        if not (isinstance(v, int | float) and np.isfinite(v) and v > 0):
            raise SdcInputError(f"{name}={v!r} must be a positive number")
    cols = resolve_columns(original, columns)
    protected = align_pair(original, protected)
    xr = numeric_block(original, cols, "the original file")
    yr = numeric_block(protected, cols, "protected file")
    n, d = xr.shape
    if n < 2:
        raise DataError("learned-distance linkage needs at least 2 records")
    if family == "choquet" and d > MAX_CHOQUET_ATTRIBUTES:
        raise SdcInputError(
            f"the Choquet integral over {d} attributes needs {2**d - 1} measure values; use at "
            f"most {MAX_CHOQUET_ATTRIBUTES} columns or family='weighted_mean'/'owa'"
        )
    mean, sd = original_scale(xr, cols)
    x = (xr - mean) / sd
    y = (yr - mean) / sd
    q = n_parameters(family, d)

    complete = n <= exact_limit and n_candidates is None
    if complete:
        ia = np.repeat(np.arange(n), n)
        ib = np.tile(np.arange(n), n)
        keep = ia != ib
        pairs_i, pairs_j = ia[keep], ib[keep]
    else:
        k = min(n - 1, 30 if n_candidates is None else int(n_candidates))
        if k < 1:
            raise SdcInputError(f"n_candidates={n_candidates!r} must be >= 1")
        _, nn = cKDTree(y).query(x, k=k + 1, workers=-1)
        nn = np.atleast_2d(nn)
        ia = np.repeat(np.arange(n), nn.shape[1])
        ib = nn.ravel()
        keep = ia != ib
        pairs_i, pairs_j = ia[keep], ib[keep]
    known = np.unique(pairs_i * n + pairs_j)

    cost = np.concatenate([np.zeros(q), np.ones(n)])
    integrality = np.concatenate([np.zeros(q), np.ones(n)])
    bounds_lo = np.zeros(q + n)
    bounds_hi = np.ones(q + n)
    structure = _structure_constraints(family, d, n)
    t0 = time.perf_counter()
    rounds = 0
    optimal = False
    status = ""
    params = np.zeros(q)
    k_vals = np.ones(n)
    while True:
        rounds += 1
        remaining = time_limit - (time.perf_counter() - t0)
        if remaining <= 0 and rounds > 1:
            status = "time limit reached between constraint-generation rounds"
            optimal = False
            break
        a, lb, ub = _build_constraints(family, x, y, pairs_i, pairs_j, epsilon)
        res = milp(
            cost,
            integrality=integrality,
            bounds=(bounds_lo, bounds_hi),
            constraints=[LinearConstraint(a, lb, ub), *structure],
            options={"time_limit": max(remaining, 1.0), "disp": False, "mip_rel_gap": 0.0},
        )
        if res.x is None:
            raise NoSolutionError(
                f"HiGHS found no solution within time_limit={time_limit} s ({res.message}); "
                "raise time_limit or use fewer records"
            )
        params = np.clip(res.x[:q], 0.0, None)
        k_vals = np.round(res.x[q:])
        optimal = res.status == 0
        status = str(res.message)
        if complete or not optimal or rounds >= max_rounds:
            break
        ni, nj = _violations(family, x, y, params, k_vals, epsilon, known, per_record=10)
        if ni.size == 0:
            complete = True  # restricted optimum feasible for every constraint: optimal
            break
        known = np.union1d(known, ni * n + nj)
        pairs_i = np.concatenate([pairs_i, ni])
        pairs_j = np.concatenate([pairs_j, nj])
    _check_params(family, params, d)
    euclid = distance_linkage(original, protected, cols, metric="euclidean").dbrl
    try:
        mahal: float | None = distance_linkage(
            original, protected, cols, metric="mahalanobis", covariance="difference"
        ).dbrl
    except DataError:
        mahal = None
    return LearnedDistanceResult(
        family=family,
        weights=_format_weights(family, params, cols),
        linked_share=nearest_share(family, x, y, params),
        milp_linked_share=float((n - k_vals.sum()) / n),
        euclidean_share=float(euclid),
        mahalanobis_share=mahal,
        optimal=bool(optimal),
        exact=bool(complete and optimal),
        status=status,
        n_records=n,
        n_constraints=int(pairs_i.size),
        rounds=rounds,
        seconds=time.perf_counter() - t0,
        epsilon=float(epsilon),
        columns=cols,
        parameters=params,
        k=k_vals,
    )
